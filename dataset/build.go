package dataset

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"bagen-data/internal/atomicfile"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// maxInvalidExamples is how many skipped trajectories the manifest lists.
const maxInvalidExamples = 10

// Build reads srcs, labels their probes, splits them by trajectory,
// balances the training splits and writes DIR/sft/train.parquet,
// DIR/rl/train.parquet, DIR/eval/test.parquet and DIR/manifest.json.
//
// It works in two passes so that memory holds ids, counts and classes, not
// texts: the first reads, tokenizes and labels every trajectory (on all
// cores), spilling its text to a temporary file; the plan (split, balance,
// shuffle) is made from the counts; the second renders and writes the rows.
// The whole tree is staged in a hidden sibling of dir and swapped in with
// one rename (atomicfile.Dir) only when everything succeeded: readers of
// dir see the previous build or this one, never a mixture, and on failure
// dir is left byte for byte as it was. An existing dir must hold only a
// previous build's outputs (else an *OutputError wrapping ErrNotOutput,
// before any work).
func Build(ctx context.Context, srcs []rollout.Source, dir string, cfg Config) (*Manifest, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(srcs) == 0 {
		return nil, errors.New("no input files")
	}
	cfg = cfg.withDefaults()
	cfg.Task = cfg.Compat.Task(cfg.Task).ForWidth(cfg.Width) // a point target asks for a number
	cfg.Accounting = cfg.accounting()
	cfg.Probes = cfg.Compat.Options(cfg.Probes)
	if !plannerFor(cfg.Compat).grouped() {
		cfg.SplitByTrajectory = true
	}
	st, err := atomicfile.NewDir(dir, checkOwned)
	if err != nil {
		return nil, err
	}
	m, err := build(ctx, srcs, st, &cfg)
	if err != nil {
		st.Abort()
		return nil, err
	}
	if err := st.Commit(); err != nil {
		return nil, err
	}
	return m, nil
}

// systemCounter is a Counter that counts the system prompt once: every
// trajectory's accounting asks for it.
type systemCounter struct {
	probes.Counter
	system string
	n      int
}

func (c systemCounter) Count(s string) int {
	if s == c.system {
		return c.n
	}
	return c.Counter.Count(s)
}

// stagedPath is where name goes in the staged tree; its directory is
// created.
func stagedPath(st *atomicfile.Dir, name string) (string, error) {
	p := filepath.Join(st.Path(), filepath.FromSlash(name))
	return p, os.MkdirAll(filepath.Dir(p), 0o755)
}

func build(ctx context.Context, srcs []rollout.Source, st *atomicfile.Dir, cfg *Config) (*Manifest, error) {
	sp, err := newSpill(st.Scratch(), cfg.preadOnly)
	if err != nil {
		return nil, err
	}
	defer sp.close()
	counter := cfg.Counter
	if counter != nil {
		counter = systemCounter{Counter: counter, system: cfg.Task.System, n: counter.Count(cfg.Task.System)}
	}
	sc, err := scan(ctx, srcs, cfg, counter, sp)
	if err != nil {
		return nil, err
	}
	if err := sp.finish(); err != nil {
		return nil, err
	}
	if err := checkUnique(sc.trajs); err != nil {
		return nil, err
	}
	if len(sc.trajs) == 0 {
		return nil, errors.New("no valid trajectories in the input")
	}
	m := newManifest(cfg, sc)
	m.Results = resultsOf(srcs)
	m.Codec = cfg.pageCodec().Name
	plan := makePlan(sc.trajs, cfg, m)
	if err := checkSplits(cfg, m); err != nil {
		return nil, err
	}
	w := &rowWriter{cfg: cfg, trajs: sc.trajs, sp: sp}
	outs, err := writeSplits(ctx, st, w, plan)
	if err != nil {
		return nil, err
	}
	m.Outputs = append(m.Outputs, outs...)
	if err := writeManifest(st, m); err != nil {
		return nil, err
	}
	return m, nil
}

// writeSplits writes the three files, two at a time when every trajectory's text
// is small: a file's encoding and compression run on one goroutine, so
// writing them one after the other leaves cores idle. Each file buffers a
// row group of up to rowGroupBytes of content, so when a trajectory's text
// exceeds overlapMaxText the files are written one after the other, to keep
// a build of huge messages within one file's memory. The digests come back
// in file order; of several failures, the first file's is reported, not a
// cancellation it caused in the others.
func writeSplits(ctx context.Context, st *atomicfile.Dir, w *rowWriter, plan [numSplits][]Entry) ([]FileDigest, error) {
	names := []string{SFTFile, RLFile, EvalFile}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		errs    [numSplits]error
		digests [numSplits]FileDigest
	)
	one := func(i int) {
		digests[i], errs[i] = writeSplit(ctx, st, w, names[i], i, plan[i])
		if errs[i] != nil {
			cancel(errSiblingFailed)
		}
	}
	overlap := true
	for _, t := range w.trajs {
		overlap = overlap && t.n <= overlapMaxText
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, overlapFiles)
	for i := range names {
		if !overlap {
			if one(i); errs[i] != nil {
				break
			}
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			one(i)
		})
	}
	wg.Wait()
	if err := firstFailure(ctx, errs[:]); err != nil {
		return nil, err
	}
	return digests[:], nil
}

// writeSplit writes split i's rows to the staged file name and digests it.
func writeSplit(ctx context.Context, st *atomicfile.Dir, w *rowWriter, name string, i int, entries []Entry) (FileDigest, error) {
	path, err := stagedPath(st, name)
	if err != nil {
		return FileDigest{}, err
	}
	if err := w.write(ctx, path, i, entries); err != nil {
		return FileDigest{}, fmt.Errorf("write %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return FileDigest{}, err // a cancelled build publishes nothing
	}
	return digest(path, name)
}

// firstFailure is the first file's own error among errs, in file order;
// a cancellation that another file's failure caused (ctx's cause is
// errSiblingFailed) is reported only when no file failed by itself.
func firstFailure(ctx context.Context, errs []error) error {
	var sibling error
	for _, err := range errs {
		switch {
		case err == nil:
		case context.Cause(ctx) == errSiblingFailed && errors.Is(err, context.Canceled):
			sibling = cmp.Or(sibling, err)
		default:
			return err
		}
	}
	return sibling
}

// overlapFiles is how many files are written at once: two keep both
// cores of a small machine compressing, and hold two row groups, not three.
const overlapFiles = 2

// overlapMaxText is the largest spilled trajectory text (bytes) with which
// the output files are written at once.
const overlapMaxText = 1 << 20

// errSiblingFailed cancels the other files' writers when one fails.
var errSiblingFailed = errors.New("another output file failed")

// checkUnique fails on the first id seen twice, naming both places.
func checkUnique(trajs []traj) error {
	seen := make(map[string]int, len(trajs))
	for i, t := range trajs {
		if j, ok := seen[t.id]; ok {
			return &probes.DuplicateError{ID: t.id, First: trajs[j].pos.String(), Then: t.pos.String()}
		}
		seen[t.id] = i
	}
	return nil
}

func newManifest(cfg *Config, sc *scanned) *Manifest {
	sum := sha256.Sum256([]byte(cfg.Task.System))
	m := &Manifest{
		Tool:    "bagen-data",
		Version: cfg.Version,
		Config: ManifestConfig{
			Task: cfg.Task.Name, Compat: cfg.Compat.Name, SystemPromptSHA256: hex.EncodeToString(sum[:]),
			Budget: cfg.Budget, TaskBudget: cfg.Task.Budget, Width: cfg.Width.Text,
			Labels: cfg.Probes.Labels.String(), ProbeEvery: max(cfg.Probes.Every, 1),
			MinRemaining: cfg.Probes.Minimum(), Think: cfg.Think, Split: cfg.ratio().String(),
			Seed: cfg.Seed, OversamplePossible: cfg.Balance.Oversample, BalanceRatio: *cfg.Balance.Ratio,
			BalanceEval: cfg.BalanceEval, SplitByTrajectory: cfg.SplitByTrajectory, PrefixIDs: cfg.PrefixIDs, SkipInvalid: cfg.SkipInvalid, Tokenizer: cfg.Tokenizer,
			Accounting: cfg.Accounting,
		},
		Inputs:       sc.inputs,
		Trajectories: len(sc.trajs),
		Invalid:      InvalidSummary{Count: len(sc.invalid), Examples: sc.invalid[:min(len(sc.invalid), maxInvalidExamples)]},
	}
	if m.Invalid.Examples == nil {
		m.Invalid.Examples = []Invalid{}
	}
	m.Outcomes = map[string]int{}
	for _, t := range sc.trajs {
		m.Outcomes[string(t.outcome)]++
		m.ReplacedUTF8 += t.replaced
	}
	return m
}

// makePlan assigns trajectories to splits and returns each split's rows in
// write order, filling the manifest's counts.
func makePlan(trajs []traj, cfg *Config, m *Manifest) [numSplits][]Entry {
	pl := plannerFor(cfg.Compat)
	ids := make([]string, len(trajs))
	var groups []uint64
	if !cfg.SplitByTrajectory {
		groups = make([]uint64, len(trajs))
	}
	for i, t := range trajs {
		ids[i] = t.id
		if groups != nil {
			groups[i] = t.group
		}
	}
	m.Groups = groupStats(groups, len(trajs))
	assign := pl.assign(ids, groups, cfg.ratio(), cfg.Seed)
	var plan [numSplits][]Entry
	for _, i := range pl.order(ids) {
		t, s := &trajs[i], assign[i]
		stats := m.Splits.at(s)
		stats.Trajectories.add(t.success && t.total <= t.budget)
		stats.DroppedMinRemaining += t.dropped
		for k, p := range t.probes {
			plan[s] = append(plan[s], Entry{Traj: int32(i), Probe: int32(k)})
			stats.Probes.add(p.Possible)
		}
	}
	possible := func(e Entry) bool { return trajs[e.Traj].probes[e.Probe].Possible }
	for s := range numSplits {
		stats := m.Splits.at(s)
		stats.File = [...]string{SFTFile, RLFile, EvalFile}[s]
		if s != evalIdx || cfg.BalanceEval {
			var bs BalanceStats
			plan[s], bs = pl.balance(plan[s], possible, cfg.Balance, cfg.Seed, splitNames[s])
			stats.Duplicates, stats.Downsampled = bs.Duplicates, bs.Downsampled
		}
		for _, e := range plan[s] {
			stats.Rows.add(possible(e))
		}
	}
	return plan
}

func writeManifest(st *atomicfile.Dir, m *Manifest) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	path, err := stagedPath(st, ManifestFile)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// groupStats counts the split groups and the largest one.
func groupStats(groups []uint64, n int) GroupStats {
	if groups == nil {
		return GroupStats{By: "trajectory", Count: n, Largest: min(n, 1)}
	}
	size := map[uint64]int{}
	st := GroupStats{By: "first-user-message"}
	for _, g := range groups {
		size[g]++
		st.Largest = max(st.Largest, size[g])
	}
	st.Count = len(size)
	return st
}

// resultsOf lists the outcome files the sources were read with, each once.
func resultsOf(srcs []rollout.Source) []FileDigest {
	var out []FileDigest
	seen := map[string]bool{}
	for _, src := range srcs {
		if src.Options == nil {
			continue
		}
		for _, f := range src.Options.Results.Files() {
			if !seen[f.Path] {
				seen[f.Path] = true
				out = append(out, FileDigest{Path: f.Path, Bytes: f.Bytes, SHA256: f.SHA256})
			}
		}
	}
	return out
}
