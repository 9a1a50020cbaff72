package dataset

import (
	"context"
	"os"
	"path/filepath"

	"bagen-data/internal/pagecodec"
)

// WriteFile writes rows to a parquet file at path atomically (a temporary
// file in the same directory, synced, then renamed), with the compression
// and settings of build's outputs. On error nothing is left at path.
func WriteFile[T any](ctx context.Context, path string, rows []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeParquet(ctx, path, pagecodec.Default, len(rows), 1, nil, func(i int, _ *arena) (T, int, error) { return rows[i], 0, nil }, nil, nil)
}
