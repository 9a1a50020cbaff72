package grpo

import (
	"context"
	"fmt"
	"time"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/probes"
)

// TrainDir trains a head on the dataset that build wrote to dir: it reads
// the SFT, RL and eval files (ReadDir), embeds every prompt with enc
// (Featurize) and trains (Train). It writes the probe counts and the
// embedding summary to o.Progress before training.
func TrainDir(ctx context.Context, enc *Encoder, dir string, cfg Config, o Options) (*Result, Stats, error) {
	// Before reading or embedding anything:
	if err := cfg.Validate(); err != nil {
		return nil, Stats{}, err
	}
	if err := o.Check(); err != nil {
		return nil, Stats{}, err
	}
	src, err := ReadDir(dir)
	if err != nil {
		return nil, Stats{}, err
	}
	d, st, err := Featurize(ctx, enc, src, cfg.Space)
	if err != nil {
		return nil, st, err
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "grpo: %d SFT, %d RL, %d eval probes; %s\n", len(d.SFT), len(d.RL), len(d.Eval), st)
	}
	if o.Model == "" {
		o.Model = enc.Model
	}
	res, err := Train(ctx, cfg, d, o)
	return res, st, err
}

// Evaluation is what EvaluateFile makes of a file.
type Evaluation struct {
	Metrics eval.Metrics
	// Predictions are the answers as predictions JSONL.
	Predictions []byte
	// Accounting is the token accounting the file records; Mismatch, when
	// not nil, says that it is not the one the head learned on
	// (probes.CheckAccounting): the metrics are then those of a head asked
	// with numbers it was not calibrated on.
	Accounting probes.AccountingKind
	Mismatch   error
}

// EvaluateFile answers the probes of an RL or eval parquet file with the head
// of st, embedding them with enc: read (schema-checked), featurise,
// evaluate. It returns the paper's metrics and the answers as predictions
// JSONL, and compares the file's accounting with the head's.
func EvaluateFile(ctx context.Context, enc *Encoder, st *State, path string) (Evaluation, error) {
	rows, err := dataset.ReadRL(path)
	if err != nil {
		return Evaluation{}, err
	}
	kind, err := dataset.AccountingOf(path, rows)
	if err != nil {
		return Evaluation{}, fmt.Errorf("%w: %w", ErrData, err)
	}
	ps, err := ProbesFromRL(path, rows)
	if err != nil {
		return Evaluation{}, err
	}
	d, _, err := Featurize(ctx, enc, Sources{Eval: ps, EvalRows: rows}, st.Config.Space)
	if err != nil {
		return Evaluation{}, err
	}
	if len(d.Eval) > 0 && len(d.Eval[0].X) != st.Policy.In {
		return Evaluation{}, fmt.Errorf("%w: the head takes %d features, %s gives %d (another model than %q?)", ErrData, st.Policy.In, enc.Model, len(d.Eval[0].X), st.Model)
	}
	m, answers := Evaluate(st.Policy, st.Config.Space, d.Eval, rows)
	return Evaluation{Metrics: m, Predictions: Predictions(d.Eval, answers), Accounting: kind,
		Mismatch: probes.CheckAccounting(kind, st.Accounting)}, nil
}

// String summarises an embedding pass: "embedded 245 distinct prompts (0
// cached, 245 requests) in 1.234s".
func (s Stats) String() string {
	return fmt.Sprintf("embedded %d distinct prompts (%d cached, %d requests) in %s", s.Prompts, s.Cached, s.Requests, s.Elapsed.Round(time.Millisecond))
}
