package grpo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/eval/prediction"
	"bagen-data/reward"
)

// Options say how a run is carried out, not what it computes.
type Options struct {
	// Out is the output directory: checkpoints, train.jsonl, plot.html,
	// eval.json. Required.
	Out string
	// Resume continues from Out's latest checkpoint (the run's Config is
	// the checkpoint's; only Epochs may grow). Without a checkpoint the
	// run starts afresh. Without Resume, a directory that already holds a
	// checkpoint is an error.
	Resume bool
	// Progress receives one line per epoch; nil means silent.
	Progress io.Writer
	// Name labels the run in eval.json; empty means the output directory.
	Name string
	// Model is the Ollama model that embedded the data, recorded in the
	// checkpoints and eval.json.
	Model string

	afterEpoch func(*State) error // test hook, called after each checkpoint
	afterStep  func(*State)       // test hook, called after each logged GRPO step
}

// Result is a finished run.
type Result struct {
	State *State
	Eval  eval.Metrics // the final head on the eval probes
	// Train is the final greedy head's reward on the RL training probes;
	// Initial the untrained head's (the log's "init" record).
	Train, Initial TrainReward
	Steps          int           // optimiser steps taken by this call
	Policy         time.Duration // wall time spent in the head (sampling, gradients, evaluation)
}

// trainer carries one run.
type trainer struct {
	cfg   Config
	data  *Data
	opt   Options
	st    *State
	rng   *rand.Rand
	pcg   *rand.PCG
	log   *os.File
	res   Result
	space Space
}

// HasRun reports whether dir holds the checkpoints of a run.
func HasRun(dir string) bool {
	return exists(filepath.Join(dir, CheckpointDir, LatestFile))
}

// Check refuses an Out that holds a run without Resume; TrainDir calls it
// before reading or embedding anything.
func (o Options) Check() error {
	if !o.Resume && HasRun(o.Out) {
		return fmt.Errorf("%s: %w", o.Out, ErrRunExists)
	}
	return nil
}

// Train runs SFT (unless cfg.Init is InitRandom) and then GRPO on data,
// evaluating, logging and checkpointing after every epoch.
func Train(ctx context.Context, cfg Config, data *Data, o Options) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if o.Out == "" {
		return nil, fmt.Errorf("%w: out: required", ErrConfig)
	}
	if len(data.RL) == 0 {
		return nil, fmt.Errorf("%w: no RL probes", ErrData)
	}
	if cfg.Init == InitSFT && len(data.SFT) == 0 {
		return nil, fmt.Errorf("%w: init %q needs SFT probes (sft/train.parquet)", ErrData, InitSFT)
	}
	t := &trainer{cfg: cfg, data: data, opt: o, space: cfg.Space}
	start := time.Now()
	if err := t.open(); err != nil {
		return nil, err
	}
	defer t.log.Close()
	if err := t.loop(ctx); err != nil {
		return nil, err
	}
	if err := t.log.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", LogFile, err)
	}
	t.res.State = t.st
	t.res.Policy = time.Since(start)
	return &t.res, nil
}

// open starts a new state or loads the latest checkpoint, and opens the
// log at the state's length.
func (t *trainer) open() error {
	if err := os.MkdirAll(t.opt.Out, 0o755); err != nil {
		return err
	}
	if err := t.opt.Check(); err != nil {
		return err
	}
	if HasRun(t.opt.Out) {
		return t.resume()
	}
	t.pcg = rand.NewPCG(t.cfg.Seed, 0x6772706f) // "grpo"
	t.rng = rand.New(t.pcg)
	t.st = &State{Version: stateVersion, Config: t.cfg, Model: t.opt.Model, Data: t.data.Digest(), Accounting: t.data.Accounting, Phase: "sft"}
	t.st.Policy = NewHead(len(t.data.RL[0].X), t.cfg.Hidden, t.space.bins(), len(t.space.widths()), t.rng)
	t.st.Opt = NewAdam(t.cfg.SFTLR, t.st.Policy.Params())
	var err error
	if t.log, err = os.Create(filepath.Join(t.opt.Out, LogFile)); err != nil {
		return err
	}
	return t.epochEnd("init")
}

func (t *trainer) resume() error {
	st, err := LoadState(t.opt.Out)
	if err != nil {
		return err
	}
	want := st.Config
	want.Epochs = t.cfg.Epochs
	if !sameConfig(want, t.cfg) || *t.cfg.Epochs < *st.Config.Epochs {
		return fmt.Errorf("%s: %w: config differs from the checkpoint's (only epochs may grow)", t.opt.Out, ErrCheckpoint)
	}
	if st.Accounting != t.data.Accounting {
		return fmt.Errorf("%s: %w: the checkpoint learned on %s numbers, the data records %s", t.opt.Out, ErrCheckpoint, st.Accounting, t.data.Accounting)
	}
	if st.Data != t.data.Digest() {
		return fmt.Errorf("%s: %w: data differs from the checkpoint's", t.opt.Out, ErrCheckpoint)
	}
	st.Config.Epochs = t.cfg.Epochs
	t.pcg = &rand.PCG{}
	if err := t.pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%w: rng: %w", ErrCheckpoint, err)
	}
	t.rng = rand.New(t.pcg)
	t.st = st
	// Verify the log before touching it: truncating a short file would
	// pad it with zero bytes.
	path := filepath.Join(t.opt.Out, LogFile)
	recs, err := verifyLog(path, st.LogSize)
	if err != nil {
		return err
	}
	if t.log, err = os.OpenFile(path, os.O_RDWR, 0o644); err != nil {
		return err
	}
	if err := t.log.Truncate(st.LogSize); err != nil {
		return err
	}
	if _, err = t.log.Seek(st.LogSize, io.SeekStart); err != nil {
		return err
	}
	for _, r := range recs {
		if r.Phase == "init" && r.Eval != nil {
			t.res.Initial = r.Eval.Train
		}
	}
	return nil
}

func sameConfig(a, b Config) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// loop runs the remaining epochs of both phases.
func (t *trainer) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := t.st
		switch {
		case st.Phase == "sft" && st.Epoch < *t.cfg.SFTEpochs:
			if err := t.sftEpoch(); err != nil {
				return err
			}
		case st.Phase == "sft":
			st.Phase, st.Epoch = "grpo", 0
			st.Ref = st.Policy.Clone()
			st.Opt = NewAdam(t.cfg.LR, st.Policy.Params())
			continue
		case st.Epoch < *t.cfg.Epochs:
			if err := t.grpoEpoch(ctx); err != nil {
				return err
			}
		default:
			return nil
		}
		st.Epoch++
		if err := t.epochEnd(st.Phase); err != nil {
			return err
		}
	}
}

// epochEnd evaluates the head, logs the epoch, writes eval.json, the plot
// and a checkpoint (none for "init": a fresh run is its own checkpoint).
func (t *trainer) epochEnd(phase string) error {
	tr := t.trainReward()
	m, preds := t.evaluate()
	if phase == "init" {
		t.res.Initial = tr
	}
	t.res.Train, t.res.Eval = tr, m
	epoch := t.st.Epoch
	if err := t.write(Record{Type: "epoch", Phase: phase, Epoch: epoch, Step: t.st.Step,
		Eval: &EpochEval{Train: tr, Eval: headlineOf(m)}}); err != nil {
		return err
	}
	if err := t.writeEval(m, preds); err != nil {
		return err
	}
	if err := WritePlot(filepath.Join(t.opt.Out, PlotFile), filepath.Join(t.opt.Out, LogFile)); err != nil {
		return err
	}
	if t.opt.Progress != nil {
		fmt.Fprintf(t.opt.Progress, "%s epoch %d: step %d, train reward greedy %s expected %s; eval R %s Acc %s Cover %s MRE P50 %s\n",
			phase, epoch, t.st.Step, tr.Reward.Fixed(3), tr.Expected.Fixed(3), m.Reward.Fixed(3), m.Accuracy.Pct(), m.Coverage.Pct(), m.MREP50.Pct())
	}
	if phase == "init" {
		return nil
	}
	if err := t.checkpoint(); err != nil {
		return err
	}
	if t.opt.afterEpoch != nil {
		return t.opt.afterEpoch(t.st)
	}
	return nil
}

func (t *trainer) checkpoint() error {
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	t.st.RNG = rng
	if err := t.log.Sync(); err != nil {
		return err
	}
	off, err := t.log.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	t.st.LogSize = off
	return t.st.save(t.opt.Out)
}

// write appends one record to the log.
func (t *trainer) write(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%s: %w", LogFile, err)
	}
	if _, err := t.log.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %w", LogFile, err)
	}
	return nil
}

// trainReward scores the head on the RL training probes.
func (t *trainer) trainReward() TrainReward {
	var m meanBy
	var imp int
	var expected float64
	for _, e := range t.data.RL {
		d := t.st.Policy.Forward(e.X)
		a := d.Greedy()
		if a.Impossible {
			imp++
		}
		m.add(reward.Score(t.space.Answer(a, e.Budget), e.Truth), e.Truth.Possible)
		expected += ExpectedReward(d, t.space, e.Budget, e.Truth)
	}
	r, pos, neg := m.means()
	n := float64(len(t.data.RL))
	return TrainReward{Reward: r, RewardPossible: pos, RewardImpossible: neg,
		ImpossibleRate: eval.Num(float64(imp) / n), Expected: eval.Num(expected / n)}
}

// ExpectedReward is E_{a∼d}[R(answer(a))], summed exactly over the action
// space with the rule reward.
func ExpectedReward(d Dist, space Space, budget int64, truth reward.Truth) float64 {
	e := math.Exp(d.Kind[kindImpossible]) * reward.Score(space.Answer(Action{Impossible: true}, budget), truth)
	if !truth.Possible {
		return e // no interval scores on an impossible probe
	}
	pInt := math.Exp(d.Kind[kindInterval])
	for c, lc := range d.Centre {
		for w, lw := range d.Width {
			if r := reward.Score(space.Answer(Action{Center: c, Width: w}, budget), truth); r != 0 {
				e += pInt * math.Exp(lc+lw) * r
			}
		}
	}
	return e
}

// evaluate scores the greedy head on the eval probes.
func (t *trainer) evaluate() (eval.Metrics, map[string]string) {
	return Evaluate(t.st.Policy, t.space, t.data.Eval, t.data.EvalRows)
}

// Evaluate answers every example with h's greedy action and computes the
// eval package's metrics against rows (the examples' parquet rows); it
// returns the answers by custom_id too.
func Evaluate(h *Head, space Space, exs []Example, rows []dataset.RLRow) (eval.Metrics, map[string]string) {
	preds := Answers(h, space, exs)
	return eval.Compute(eval.Score(rows, prediction.FromResponses(preds)).Rows), preds
}

// Answers returns the greedy head's answer text for each example, by id.
func Answers(h *Head, space Space, exs []Example) map[string]string {
	out := make(map[string]string, len(exs))
	for _, e := range exs {
		out[e.ID] = space.Answer(h.Forward(e.X).Greedy(), e.Budget)
	}
	return out
}

// meanBy accumulates rewards overall and by truth class.
type meanBy struct {
	sum, pos, neg float64
	n, npos, nneg int
}

func (m *meanBy) add(r float64, possible bool) {
	m.sum += r
	m.n++
	if possible {
		m.pos += r
		m.npos++
	} else {
		m.neg += r
		m.nneg++
	}
}

func (m *meanBy) means() (all, pos, neg eval.Num) {
	div := func(s float64, n int) eval.Num {
		if n == 0 {
			return eval.NaN
		}
		return eval.Num(s / float64(n))
	}
	return div(m.sum, m.n), div(m.pos, m.npos), div(m.neg, m.nneg)
}

// shuffled returns a permutation of 0..n-1 drawn from the run's stream.
func (t *trainer) shuffled(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := t.rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
