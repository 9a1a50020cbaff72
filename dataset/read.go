package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// ReadRL reads every row of an RL or eval parquet file.
func ReadRL(path string) ([]RLRow, error) { return readAll[RLRow](path) }

// ReadSFT reads every row of an SFT parquet file.
func ReadSFT(path string) ([]SFTRow, error) { return readAll[SFTRow](path) }

func readAll[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	rows := make([]T, 0, pf.NumRows())
	buf := make([]T, 256)
	for {
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", path, len(rows), err)
		}
		clear(buf)
	}
}
