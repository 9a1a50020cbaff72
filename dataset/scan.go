package dataset

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"runtime"
	"slices"
	"sync"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// traj is what the build keeps in memory of one trajectory: its id, where
// its text is in the spill, and its labelled probes.
type traj struct {
	id      string
	seq     int64
	pos     rollout.Position
	off     int64
	n       int32
	ends    []int32 // where each turn ends in the spilled record
	budget  int64
	success bool
	total   int64
	turns   int
	group   uint64 // hash of the first user message
	probes  []probes.Probe
	dropped int
	outcome rollout.Outcome
	// replaced counts invalid UTF-8 sequences replaced in the trajectory.
	replaced int
}

// Invalid is a trajectory skipped by --skip-invalid.
type Invalid struct {
	seq int64
	Err string `json:"error"`
}

type scanned struct {
	trajs   []traj
	invalid []Invalid
	inputs  []FileDigest
}

type job struct {
	seq    int64
	rec    rollout.Record
	prefix string
}

type result struct {
	seq   int64
	t     traj
	spill *[]byte // from records, returned once appended
	err   error
}

// scan reads every source once: it decodes, counts and labels each
// trajectory on all cores and appends its text to sp. Trajectories come
// back in input order.
func scan(ctx context.Context, srcs []rollout.Source, cfg *Config, counter probes.Counter, sp *spill) (*scanned, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan job, 4*workers)
	results := make(chan result, 4*workers)
	out := &scanned{}
	var readErr error
	go func() {
		defer close(jobs)
		out.inputs, readErr = readSources(ctx, srcs, cfg, jobs)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- process(j, cfg, counter)
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	firstErr := collect(results, cfg, sp, out, cancel)
	if firstErr != nil {
		return nil, firstErr
	}
	if readErr != nil {
		return nil, readErr
	}
	slices.SortFunc(out.trajs, func(a, b traj) int { return int(a.seq - b.seq) })
	slices.SortFunc(out.invalid, func(a, b Invalid) int { return int(a.seq - b.seq) })
	return out, nil
}

// collect stores results as they arrive. Without SkipInvalid the first bad
// record (in input order among those read) is the error.
func collect(results <-chan result, cfg *Config, sp *spill, out *scanned, cancel func()) error {
	var first *result
	var n int64
	for r := range results {
		if r.err != nil {
			if cfg.SkipInvalid && isRecordError(r.err) {
				out.invalid = append(out.invalid, Invalid{seq: r.seq, Err: r.err.Error()})
				continue
			}
			if first == nil || r.seq < first.seq {
				first = &r
			}
			cancel()
			continue
		}
		if first != nil {
			continue
		}
		off, size, err := sp.add(*r.spill)
		if cap(*r.spill) <= maxPooledRecord {
			records.Put(r.spill)
		}
		if err != nil {
			first = &result{seq: -1, err: fmt.Errorf("spill: %w", err)}
			cancel()
			continue
		}
		r.t.off, r.t.n = off, size
		out.trajs = append(out.trajs, r.t)
		n++
	}
	if first != nil {
		return first.err
	}
	return nil
}

func isRecordError(err error) bool {
	var pe *probes.ParseError
	return errors.As(err, &pe) || errors.Is(err, probes.ErrNoTokenizer)
}

// readSources feeds records of every source to jobs and returns the
// digest of each source's bytes.
func readSources(ctx context.Context, srcs []rollout.Source, cfg *Config, jobs chan<- job) ([]FileDigest, error) {
	var seq, total, before int64
	for _, src := range srcs {
		total += src.Size
	}
	// progress reports input read so far, in MB of the files as stored.
	progress := func(n int64) {
		if cfg.Progress != nil {
			cfg.Progress("read MB", (before+n)>>20, total>>20)
		}
	}
	digests := make([]FileDigest, 0, len(srcs))
	for _, src := range srcs {
		prefix := ""
		if cfg.PrefixIDs {
			prefix = rollout.BaseID(src.Name) + ":"
		}
		d, err := readSource(ctx, src, progress, func(rec rollout.Record) error {
			select {
			case jobs <- job{seq: seq, rec: rec, prefix: prefix}:
				seq++
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil {
			return nil, err
		}
		digests = append(digests, d)
		before += d.Bytes
	}
	return digests, nil
}

func readSource(ctx context.Context, src rollout.Source, progress func(int64), fn func(rollout.Record) error) (FileDigest, error) {
	rc, err := src.Open()
	if err != nil {
		return FileDigest{}, err
	}
	defer rc.Close()
	h := newAsyncHash(rc, src.Size)
	defer h.close()
	cr := &countingReader{r: h, progress: progress}
	if err := rollout.ScanFrom(ctx, src, cr, fn); err != nil {
		return FileDigest{}, err
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return FileDigest{}, fmt.Errorf("%s: %w", src.Name, err)
	}
	return FileDigest{Path: src.Name, Bytes: cr.n, SHA256: hex.EncodeToString(h.Sum())}, nil
}

// countingReader counts the bytes read and reports them every MiB.
type countingReader struct {
	r        io.Reader
	n        int64
	progress func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n>>20 != (c.n+int64(n))>>20 {
		c.progress(c.n + int64(n))
	}
	c.n += int64(n)
	return n, err
}

// process decodes, counts (by cfg.Accounting, with counter) and labels
// one record.
func process(j job, cfg *Config, counter probes.Counter) result {
	t, err := cfg.Compat.Decode(j.rec)
	if err != nil {
		return result{seq: j.seq, err: err}
	}
	t.ID = j.prefix + t.ID
	acc, sys, err := cfg.Accounting.Account(t, counter, cfg.Task.System, cfg.Compat)
	if err != nil {
		return result{seq: j.seq, err: err}
	}
	budget, err := probes.ResolveBudget(cfg.Budget, t, cfg.Task.Budget, cfg.Task.Name)
	if err != nil {
		return result{seq: j.seq, err: err}
	}
	ps, dropped := probes.Probes(acc, sys, budget, t.Success, cfg.Probes)
	rec := records.Get().(*[]byte)
	var ends []int32
	*rec, ends = appendTurns(*rec, t, acc)
	return result{seq: j.seq, spill: rec, t: traj{
		id: t.ID, seq: j.seq, pos: t.Pos, ends: ends, budget: budget, success: t.Success,
		total: acc.Total(sys), turns: len(acc.Turns), group: groupKey(t, acc), probes: ps, dropped: dropped,
		outcome: t.Outcome, replaced: t.Replaced,
	}}
}

// groupKey identifies the task instance a trajectory starts from: a hash of
// its first user message without the reward annotation (of its id when it
// has no turn).
func groupKey(t rollout.Trajectory, a probes.Accounting) uint64 {
	h := fnv.New64a()
	if len(a.Pairs) > 0 {
		h.Write([]byte("u:" + rollout.StripReward(t.Messages[a.Pairs[0][0]].Content)))
	} else {
		h.Write([]byte("id:" + t.ID))
	}
	return h.Sum64()
}
