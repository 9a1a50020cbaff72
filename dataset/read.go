package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// ReadRL reads every row of an RL or eval parquet file. A file whose
// columns are not RLSchema's (an SFT file, a foreign parquet, a column of
// another type) is a *SchemaError naming the file and the columns.
func ReadRL(path string) ([]RLRow, error) { return readAll[RLRow](path, RLSchema, "RL or eval") }

// ReadSFT reads every row of an SFT parquet file, checking its columns
// against SFTSchema as ReadRL does.
func ReadSFT(path string) ([]SFTRow, error) { return readAll[SFTRow](path, SFTSchema, "SFT") }

// CheckSchema compares the columns of a file with want and returns a
// *SchemaError when a column want has is missing (and not one of
// OptionalColumns) or of another type (extra columns are fine: readers
// ignore them).
func CheckSchema(path string, got, want Type, wantKind string) error {
	var bad []Mismatch
	for _, m := range Compare(want, got) {
		if m.Fatal() {
			bad = append(bad, m)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &SchemaError{File: path, Want: wantKind, Is: kindByColumns(got, wantKind), Mismatches: bad}
}

// kindByColumns names the other dataset kind when got has that kind's
// columns: an SFT file read as RL or the reverse.
func kindByColumns(got Type, wantKind string) string {
	switch {
	case wantKind != "SFT" && !hasMismatch(Compare(SFTSchema, got)):
		return "an SFT file (messages column)"
	case wantKind == "SFT" && !hasMismatch(Compare(RLSchema, got)):
		return "an RL or eval file (prompt column)"
	}
	return ""
}

func hasMismatch(ms []Mismatch) bool {
	for _, m := range ms {
		if m.Fatal() {
			return true
		}
	}
	return false
}

func readAll[T any](path string, want Type, wantKind string) ([]T, error) {
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
	if err := CheckSchema(path, TypeOf(pf.Schema()), want, wantKind); err != nil {
		return nil, err
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
