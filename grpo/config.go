package grpo

import (
	"errors"
	"fmt"
)

// Init names how the policy starts.
const (
	InitSFT    = "sft"    // supervised warm start, then GRPO
	InitRandom = "random" // GRPO from a random head (the paper's zero-RL)
)

// Config is what a training run computes. Every zero field takes the
// default noted beside it; the defaults follow the paper's appendix where
// it applies to a head (group size, KL, clipping, epochs) and are tuned for
// a small head elsewhere (learning rates, batch sizes).
type Config struct {
	Init string `json:"init"` // InitSFT or InitRandom; "" means InitSFT
	// SFTEpochs is the number of SFT epochs; nil means 5. With InitSFT an
	// explicit 0 is an error (InitRandom is GRPO without SFT); InitRandom
	// ignores it.
	SFTEpochs *int    `json:"sft_epochs"`
	SFTBatch  int     `json:"sft_batch"` // SFT rows per step; 0 means 16
	SFTLR     float64 `json:"sft_lr"`    // SFT Adam learning rate; 0 means 1e-2
	// Epochs is the number of GRPO epochs over the RL prompts; nil means 5
	// and 0 means none: an SFT-only run (an error with InitRandom, which
	// would train nothing).
	Epochs *int `json:"epochs"`
	Batch  int  `json:"batch"` // prompts per GRPO step; 0 means 16
	Group  int  `json:"group"` // sampled actions per prompt G; 0 means 16
	// Updates splits each GRPO step's groups into this many mini-batches,
	// one Adam update each (verl's ppo_mini_batch); 0 means 2.
	Updates int     `json:"updates"`
	LR      float64 `json:"lr"` // GRPO Adam learning rate; 0 means 3e-3
	// KL is the KL coefficient β and Clip the surrogate clip ε; nil means
	// 0.05 and 0.2, and a zero turns the term or the clipping off.
	KL   *float64 `json:"kl"`
	Clip *float64 `json:"clip"`
	// DropUniformGroups leaves the groups whose rewards are all equal out
	// of the objective, KL term included (DAPO-style filtering); false,
	// verl's GRPO, keeps them with advantage 0.
	DropUniformGroups bool `json:"drop_uniform_groups,omitempty"`
	// CenterOnly uses advantages r − mean without dividing by the group's
	// std (verl's norm_adv_by_std_in_grpo=false, Dr. GRPO); false divides,
	// verl's default.
	CenterOnly bool   `json:"center_only,omitempty"`
	Hidden     int    `json:"hidden"` // MLP width; 0 means 64
	Space      Space  `json:"space"`  // action space; zero means the default
	Seed       uint64 `json:"seed"`   // seeds the weights, shuffles and sampling
}

// Defaults of the Config fields, the command line's too (see Config).
const (
	DefaultSFTEpochs = 5
	DefaultSFTBatch  = 16
	DefaultSFTLR     = 1e-2
	DefaultEpochs    = 5
	DefaultBatch     = 16
	DefaultGroup     = 16
	DefaultUpdates   = 2
	DefaultLR        = 3e-3
	DefaultKL        = 0.05
	DefaultClip      = 0.2
	DefaultHidden    = 64
)

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.Init == "" {
		c.Init = InitSFT
	}
	switch {
	case c.Init == InitRandom:
		c.SFTEpochs = new(0)
	case c.SFTEpochs == nil:
		c.SFTEpochs = new(DefaultSFTEpochs)
	}
	if c.Epochs == nil {
		c.Epochs = new(DefaultEpochs)
	}
	c.SFTBatch = positive(c.SFTBatch, DefaultSFTBatch)
	c.Batch = positive(c.Batch, DefaultBatch)
	c.Group = positive(c.Group, DefaultGroup)
	c.Updates = positive(c.Updates, DefaultUpdates)
	c.Hidden = positive(c.Hidden, DefaultHidden)
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.SFTLR, DefaultSFTLR)
	def(&c.LR, DefaultLR)
	if c.KL == nil {
		c.KL = new(float64(DefaultKL))
	}
	if c.Clip == nil {
		c.Clip = new(float64(DefaultClip))
	}
	if c.Space.Bins == 0 {
		c.Space.Bins = DefaultBins
	}
	if c.Space.Widths == nil {
		c.Space.Widths = append([]float64(nil), DefaultWidths...)
	}
	return c
}

// Bounds of the numeric fields: far beyond useful values, they keep the
// head, the batches and the schedule small enough to allocate and every
// rate finite.
const (
	MaxEpochs  = 10000   // SFTEpochs, Epochs
	MaxBatch   = 1 << 16 // SFTBatch, Batch
	MaxGroup   = 1024    // Group
	MaxUpdates = 1024    // Updates
	MaxHidden  = 4096    // Hidden
	MaxBins    = 10000   // Space.Bins
	MaxWidths  = 64      // len(Space.Widths)
	MaxLR      = 10.0    // SFTLR, LR
	MaxKL      = 1000.0  // KL
)

// Validate reports every field out of range at once, as *FieldError
// values joined with errors.Join; each wraps ErrConfig. It does no I/O,
// so callers check a Config before any work.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if c.Init != "" && c.Init != InitSFT && c.Init != InitRandom {
		bad("Init", "got %q, want %q or %q", c.Init, InitSFT, InitRandom)
	}
	c.validateEpochs(bad)
	for _, f := range []struct {
		name   string
		v, max int
	}{{"SFTBatch", c.SFTBatch, MaxBatch}, {"Batch", c.Batch, MaxBatch}, {"Group", c.Group, MaxGroup},
		{"Updates", c.Updates, MaxUpdates}, {"Hidden", c.Hidden, MaxHidden}} {
		if f.v < 0 || f.v > f.max {
			bad(f.name, "got %d, want 0 (the default) to %d", f.v, f.max)
		}
	}
	if c.Group == 1 {
		bad("Group", "got 1, want at least 2 (advantages need a group)")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"SFTLR", c.SFTLR}, {"LR", c.LR}} {
		if !(f.v >= 0 && f.v <= MaxLR) { // also NaN
			bad(f.name, "got %v, want 0 (the default) to %v", f.v, MaxLR)
		}
	}
	if c.KL != nil && !(*c.KL >= 0 && *c.KL <= MaxKL) {
		bad("KL", "got %v, want 0 (no KL term) to %v", *c.KL, MaxKL)
	}
	if c.Clip != nil && !(*c.Clip >= 0 && *c.Clip < 1) {
		bad("Clip", "got %v, want in [0, 1)", *c.Clip)
	}
	errs = append(errs, c.Space.validate()...)
	return errors.Join(errs...)
}

// validateEpochs checks the epoch counts, where zero is a value.
func (c Config) validateEpochs(bad func(field, format string, args ...any)) {
	random := c.Init == InitRandom
	if e := c.SFTEpochs; e != nil && !random {
		switch {
		case *e == 0:
			bad("SFTEpochs", "got 0 with init %q, want 1 to %d (init %q is GRPO without SFT)", InitSFT, MaxEpochs, InitRandom)
		case *e < 0 || *e > MaxEpochs:
			bad("SFTEpochs", "got %d, want 1 to %d", *e, MaxEpochs)
		}
	}
	if e := c.Epochs; e != nil {
		switch {
		case *e < 0 || *e > MaxEpochs:
			bad("Epochs", "got %d, want 0 (SFT only) to %d", *e, MaxEpochs)
		case *e == 0 && random:
			bad("Epochs", "got 0 with init %q, which would train nothing; want 1 to %d", InitRandom, MaxEpochs)
		}
	}
}
