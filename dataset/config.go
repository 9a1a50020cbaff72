package dataset

import (
	"errors"
	"fmt"
	"runtime"

	"bagen-data/internal/pagecodec"
	"bagen-data/probes"
)

// Config is everything a build needs besides its inputs. Every zero field
// means the default noted beside it, the command line's default too; a
// zero Config builds the paper's sokoban set. Build works on its own copy,
// so one Config may serve several builds at once.
type Config struct {
	// Task is the preset: system prompt, probe text, default budget; the
	// zero value means Compat's preset of DefaultTask.
	Task probes.Task
	// Compat is whose behaviour the build reproduces; the zero value is
	// probes.Native. probes.BagenV1Compat implies bagen-v1 labels, its
	// split, balancing and row order (AssignBagenV1, BalancedBagenV1), its
	// p = 0 join and <think> texts, and splits trajectory by trajectory.
	// Task is used as given: take it from Compat.Preset for the compat's
	// system prompt and estimation template.
	Compat probes.Compat
	// Budget overrides every trajectory's budget; zero means the
	// trajectory's own "budget", else Task.Budget.
	Budget int64
	// Width shapes the target interval (pctN, fixN, point); the zero value
	// means DefaultWidth.
	Width probes.Width
	// Probes places and labels probes.
	Probes probes.Options
	// Think adds the templated <think> to SFT answers and asks for it in
	// the probe text.
	Think bool
	// Ratio is the trajectory split; the zero value means 40/50/10.
	Ratio Ratio
	// Seed drives the split, the balancing and the shuffles.
	Seed uint64
	// SplitByTrajectory splits trajectory by trajectory. By default
	// trajectories that start from the same first user message (the same
	// room, question or issue) share a split, so no eval prompt repeats a
	// training prompt.
	SplitByTrajectory bool
	// Balance applies to the SFT and RL splits; its zero fields mean
	// DefaultOversample and DefaultBalanceRatio.
	Balance Balance
	// BalanceEval balances the eval split too; by default it keeps its
	// natural class ratio and trajectory order.
	BalanceEval bool
	// PrefixIDs prefixes every trajectory id with its file's base name.
	PrefixIDs bool
	// SkipInvalid skips malformed trajectories instead of failing.
	SkipInvalid bool
	// Accounting is how the build counts a trajectory's tokens
	// (probes.AccountingKind.Account); the zero value means
	// probes.AccountingMessage, the paper's rule. The manifest
	// (config.accounting) and every row (accounting) record it.
	Accounting probes.AccountingKind
	// Counter counts tokens that logs do not record; nil is allowed when
	// every count is recorded.
	Counter probes.Counter
	// Tokenizer names Counter in the manifest.
	Tokenizer string
	// Workers bounds parallelism; zero means GOMAXPROCS.
	Workers int
	// Version is the tool version recorded in the manifest.
	Version string
	// Progress, when set, is told how far each stage has got.
	Progress func(stage string, done, total int64)

	// codec compresses the outputs' pages; nil is pagecodec.Default.
	codec *pagecodec.Codec
	// preadOnly reads the spill with pread, never io_uring.
	preadOnly bool
}

// Defaults of the Config fields whose zero value stands for them.
const (
	DefaultTask  = "sokoban" // Task
	DefaultWidth = "pct30"   // Width: ±30% of the remaining tokens
)

// withDefaults is c with its zero fields set to their defaults, except
// Ratio and Accounting, read through ratio and accounting.
func (c Config) withDefaults() Config {
	if c.Task.Name == "" {
		c.Task, _ = c.Compat.Preset(DefaultTask) // every compat has the default task
	}
	if c.Width.Text == "" {
		c.Width, _ = probes.ParseWidth(DefaultWidth)
	}
	c.Balance = c.Balance.withDefaults()
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// pageCodec compresses the outputs' pages.
func (c *Config) pageCodec() *pagecodec.Codec {
	if c.codec == nil {
		return pagecodec.Default
	}
	return c.codec
}

// accounting is Accounting with its default applied.
func (c *Config) accounting() probes.AccountingKind {
	if c.Accounting == probes.AccountingUnknown {
		return probes.AccountingMessage
	}
	return c.Accounting
}

func (c *Config) ratio() Ratio {
	if c.Ratio == (Ratio{}) {
		return Ratio{SFT: 40, RL: 50, Eval: 10}
	}
	return c.Ratio
}

// Bounds of the numeric fields. They are far beyond useful values and
// keep every derived quantity (rows after oversampling, worker buffers,
// interval ends) finite and small enough to allocate.
const (
	MaxOversample   = 100              // Balance.Oversample
	MaxBalanceRatio = 1e6              // Balance.Ratio
	MaxProbeEvery   = 1 << 20          // Probes.Every
	MaxWorkers      = 1024             // Workers
	MaxTokens       = probes.MaxTokens // Budget, Probes.MinRemaining, a fixN width
)

// Validate reports every invalid field at once, as *FieldError values
// joined with errors.Join, in field order.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if c.Budget < 0 || c.Budget > MaxTokens {
		bad("Budget", "got %d, want 0 (the trajectory's or the task's) to %d tokens", c.Budget, int64(MaxTokens))
	}
	switch w := c.Width; {
	case w.Kind == probes.Pct && !(w.N >= 0 && w.N < 100):
		bad("Width", "got pct%g, want a percentage in [0, 100)", w.N)
	case w.Kind == probes.Fix && !(w.N >= 0 && w.N <= MaxTokens):
		bad("Width", "got fix%.0f, want a half-width of 0 to %d tokens", w.N, int64(MaxTokens))
	}
	if c.Probes.Every < 0 || c.Probes.Every > MaxProbeEvery {
		bad("Probes.Every", "got %d, want 0 (every turn) to %d turns", c.Probes.Every, MaxProbeEvery)
	}
	if m := c.Probes.Minimum(); m < 0 || m > MaxTokens {
		bad("Probes.MinRemaining", "got %d, want 0 to %d tokens", m, int64(MaxTokens))
	}
	if r := c.Ratio; r != (Ratio{}) && (!r.valid()) {
		bad("Ratio", "got %s, want three percentages 0 to 100 that sum to 100", r)
	}
	if c.Balance.Oversample < 0 || c.Balance.Oversample > MaxOversample {
		bad("Balance.Oversample", "got %d, want 1 to %d copies", c.Balance.Oversample, MaxOversample)
	}
	if r := c.Balance.ratio(); !(r >= 0 && r <= MaxBalanceRatio) { // also NaN
		bad("Balance.Ratio", "got %g, want 0 (no cap) to %g", r, float64(MaxBalanceRatio))
	}
	if c.Accounting != probes.AccountingUnknown && !c.Accounting.Known() {
		bad("Accounting", "got %q, want %s or %s", string(c.Accounting), probes.AccountingMessage, probes.AccountingReplay)
	}
	if c.Workers < 0 || c.Workers > MaxWorkers {
		bad("Workers", "got %d, want 0 (all cores) to %d", c.Workers, MaxWorkers)
	}
	return errors.Join(errs...)
}
