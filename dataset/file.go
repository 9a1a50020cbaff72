package dataset

import (
	"context"
	"os"
	"path/filepath"
)

// WriteFile writes rows to a parquet file at path atomically (a temporary
// file in the same directory, synced, then renamed), with the compression
// and settings of build's outputs. On error nothing is left at path.
func WriteFile[T any](ctx context.Context, path string, rows []T) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	err = writeParquet(ctx, tmp, len(rows), 1, func(i int) (T, int, error) { return rows[i], 0, nil }, nil)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
