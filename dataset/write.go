package dataset

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"bagen-data/internal/atomicfile"
	"bagen-data/internal/pagecodec"
)

// rowGroupBytes bounds the content buffered before a row group is flushed,
// which bounds the writer's memory.
const rowGroupBytes = 64 << 20

// A worker renders at most chunkRows rows at a time, and stops adding rows
// to a chunk once their estimated size reaches chunkBytes: rows of long
// trajectories come in small chunks. The chunks in flight (queued,
// rendering or being written) are bounded twice: at most 2 × workers + 1
// of them, and their estimated bytes at most inflightBytes(workers) — a
// chunk estimated above that waits until it is alone in flight. So the
// rendered rows held at once are at most max(inflightBytes, one chunk),
// and one chunk is at most chunkBytes plus its largest row.
const (
	chunkRows  = 256
	chunkBytes = 4 << 20
)

// inflightBytes is the estimated size of the chunks in flight: as many
// full chunks as the queue holds, so a build of ordinary rows never waits
// on it.
func inflightBytes(workers int) int64 { return int64(2*workers+1) * chunkBytes }

// contentColumns are the message texts, the only columns whose values may
// be megabytes long.
var contentColumns = [][]string{
	{"messages", "list", "element", "content"},
	{"prompt", "list", "element", "content"},
}

// writerOptions are shared by every parquet file: pages compressed by
// codec, and a fixed created_by so the bytes do not depend on the
// library's version string.
// The message texts get no page statistics and no page bounds: the writer
// would keep a full copy of each page's smallest and largest text for the
// column index until the row group is flushed, and of the chunk's for the
// footer until the file is closed, and write two more copies into every
// page header — for an 8 MB message, three uncompressed copies per page in
// the file and hundreds of MB on the heap. Nobody filters on prose.
func writerOptions(codec *pagecodec.Codec) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.CreatedBy("bagen-data", "1", ""),
		parquet.PageBufferSize(1 << 20),
	}
	for _, c := range contentColumns {
		opts = append(opts, parquet.SkipPageStatistics(c...), parquet.SkipPageBounds(c...))
	}
	return opts
}

// render renders row i, taking the memory its strings share from the
// chunk's arena, and returns the row and its approximate size in bytes.
type render[T any] func(i int, a *arena) (T, int, error)

// load, when not nil, prepares the rendering of rows start to end (one
// chunk) in the chunk's arena before any of them is rendered.
type load func(start, end int, a *arena) error

// writeParquet renders n rows with render (in parallel, in chunks) and
// writes them in order to path, atomically, its pages compressed by
// codec. weight, when not nil,
// estimates row i's size before it is rendered, to cut chunks by bytes.
func writeParquet[T any](ctx context.Context, path string, codec *pagecodec.Codec, n, workers int, load load, render render[T], weight func(i int) int, progress func(done int64)) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		w := parquet.NewGenericWriter[T](bw, writerOptions(codec)...)
		if err := writeRows(ctx, w, n, workers, load, render, weight, progress); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// chunk is a run of consecutive rows rendered by one worker; done carries
// the render error, or nil once rows is filled. The rows' texts live in
// the chunk's arena until the writer has copied them.
type chunk[T any] struct {
	rows   []T
	arena  arena
	bytes  int
	weight int64 // what the chunk holds of the in-flight budget
	done   chan error
}

// writeRows renders rows on workers goroutines in chunks and writes them
// to w in order.
func writeRows[T any](ctx context.Context, w *parquet.GenericWriter[T], n, workers int, load load, render render[T], weight func(i int) int, progress func(done int64)) error {
	g, ctx := errgroup.WithContext(ctx)
	queue := make(chan *chunk[T], 2*workers)
	work := make(chan func(), 2*workers)
	budget := semaphore.NewWeighted(inflightBytes(workers))
	for range workers {
		g.Go(func() error {
			for fn := range work {
				fn()
			}
			return nil
		})
	}
	g.Go(func() error {
		return produceChunks(ctx, n, load, render, weight, budget, inflightBytes(workers), queue, work)
	})
	g.Go(func() error { return consumeChunks(w, queue, budget, progress) })
	return g.Wait()
}

// produceChunks queues the chunks in order and hands their rendering to the
// workers.
func produceChunks[T any](ctx context.Context, n int, load load, render render[T], weight func(i int) int, budget *semaphore.Weighted, limit int64, queue chan<- *chunk[T], work chan<- func()) error {
	defer close(queue)
	defer close(work)
	for start, end := 0, 0; start < n; start = end {
		var bytes int
		end, bytes = chunkEnd(start, n, weight)
		c := &chunk[T]{rows: make([]T, end-start), weight: min(int64(bytes), limit), done: make(chan error, 1)}
		if err := budget.Acquire(ctx, c.weight); err != nil {
			return err
		}
		fn := func() {
			if load != nil {
				if err := load(start, end, &c.arena); err != nil {
					c.done <- err
					return
				}
			}
			for i := start; i < end; i++ {
				row, size, err := render(i, &c.arena)
				if err != nil {
					c.done <- err
					return
				}
				c.rows[i-start], c.bytes = row, c.bytes+size
			}
			c.done <- nil
		}
		select {
		case queue <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case work <- fn:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// chunkEnd is the end of the chunk that starts at row start, and its
// weight: at most chunkRows rows, and no more once their weight reaches
// chunkBytes.
func chunkEnd(start, n int, weight func(i int) int) (int, int) {
	end, bytes := start, 0
	for end < n && end-start < chunkRows && bytes < chunkBytes {
		if weight != nil {
			bytes += weight(end)
		}
		end++
	}
	return end, bytes
}

// consumeChunks writes chunks as they complete, in queue order, ending a
// row group every rowGroupBytes of content.
func consumeChunks[T any](w *parquet.GenericWriter[T], queue <-chan *chunk[T], budget *semaphore.Weighted, progress func(done int64)) error {
	buffered, written := 0, 0
	for c := range queue {
		if err := <-c.done; err != nil {
			return err
		}
		if _, err := w.Write(c.rows); err != nil {
			return err
		}
		written += len(c.rows)
		c.rows = nil // the writer holds its own copy of the values
		c.arena.release()
		budget.Release(c.weight)
		if buffered += c.bytes; buffered >= rowGroupBytes {
			if err := w.Flush(); err != nil {
				return err
			}
			buffered = 0
		}
		if progress != nil {
			progress(int64(written))
		}
	}
	return nil
}

// digest hashes a written file for the manifest.
func digest(path, name string) (FileDigest, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileDigest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileDigest{}, err
	}
	return FileDigest{Path: name, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// checkOwned vets an existing output directory before a build replaces
// it: empty, or holding only what its manifest.json lists (and the
// manifest), as regular files in directories. Anything else may be a
// user's file, which replacing the directory would delete.
func checkOwned(dir string) error {
	files, dirs := map[string]bool{ManifestFile: true}, map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, ManifestFile)); err == nil {
		if m, err := ReadManifest(b); err == nil {
			for _, o := range m.Outputs {
				name := filepath.Clean(filepath.FromSlash(o.Path))
				files[name] = true
				for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
					dirs[d] = true
				}
			}
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		ok := (d.IsDir() && dirs[rel]) || (d.Type().IsRegular() && files[rel])
		if !ok {
			return &OutputError{Dir: dir, Entry: filepath.ToSlash(rel), Err: ErrNotOutput}
		}
		return nil
	})
}
