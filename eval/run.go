package eval

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/internal/atomicfile"
)

// WriteRun saves r as ReadRun reads it: indented JSON, one newline at the
// end, written atomically; path "-" is standard output.
func WriteRun(path string, r Run) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	})
}

// ReadRun reads a Run saved as JSON (eval --json, grpo's eval.json). A file
// with no scored probe is not a run; a run without a name is named after
// the file.
func ReadRun(path string) (Run, error) {
	var r Run
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Metrics.Probes == 0 {
		return r, fmt.Errorf("%s: not a saved eval run (no probes scored)", path)
	}
	if r.Name == "" {
		r.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return r, nil
}

// RunOptions says how ScoreRun scores and names a run.
type RunOptions struct {
	// Data, Predictions and Model are recorded in the Run.
	Data, Predictions, Model string
	// Name labels the run; "" means Model, else the predictions file's
	// base name without its extension.
	Name string
	// Bootstrap is the number of resamples of the intervals; nil means
	// DefaultBootstrap and a zero no intervals. Seed seeds them.
	Bootstrap *int
	Seed      uint64
	// BagenV1 adds the authors' summary (ComputeBagenV1).
	BagenV1 bool
	// Strict fails a join that is not one to one.
	Strict bool
}

// DefaultBootstrap is RunOptions.Bootstrap's default.
const DefaultBootstrap = 1000

// JoinError is a join ScoreRun refuses: one in which no probe has a
// prediction or, under RunOptions.Strict, one that is not one to one.
type JoinError struct {
	Data, Predictions string
	Matched           Matched
	Strict            bool // refused for not being one to one
}

func (e *JoinError) Error() string {
	if e.Strict {
		return fmt.Sprintf("%s and %s do not match one to one: %s", e.Data, e.Predictions, e.Matched.Summary())
	}
	return fmt.Sprintf("no probe of %s has a prediction in %s: %s", e.Data, e.Predictions, e.Matched.Summary())
}

// ScoreRun joins preds to rows, computes the metrics with their intervals
// and names the run. It fails when no probe has a prediction (unless some
// were asked and failed to answer: the caller reports those) or, under
// Strict, when a probe or a prediction is unmatched; the Scores say how the
// join went for a caller to report one that is not one to one.
func ScoreRun(rows []dataset.RLRow, preds *prediction.Set, opt RunOptions) (Run, Scores, error) {
	resamples := DefaultBootstrap
	if opt.Bootstrap != nil {
		resamples = *opt.Bootstrap
	}
	m, s, err := Evaluate(rows, preds, resamples, opt.Seed)
	if err != nil {
		return Run{}, s, fmt.Errorf("%s: %w", opt.Data, err)
	}
	j := s.Matched
	switch {
	case len(j.Missing) == len(j.Probes) && len(j.Failed) == 0:
		return Run{}, s, &JoinError{Data: opt.Data, Predictions: opt.Predictions, Matched: j}
	case opt.Strict && (len(j.Missing) > 0 || len(j.Unknown) > 0):
		return Run{}, s, &JoinError{Data: opt.Data, Predictions: opt.Predictions, Matched: j, Strict: true}
	}
	if opt.BagenV1 {
		b := ComputeBagenV1(s.Rows)
		m.BagenV1 = &b
	}
	name := cmp.Or(opt.Name, opt.Model, strings.TrimSuffix(filepath.Base(opt.Predictions), filepath.Ext(opt.Predictions)))
	return Run{Name: name, Data: opt.Data, Predictions: opt.Predictions, Model: opt.Model, Metrics: m}, s, nil
}

// OneToOne reports whether every probe has one prediction and every
// prediction a probe, each probe in one data row.
func (m Matched) OneToOne() bool {
	return len(m.Missing) == 0 && len(m.Unknown) == 0 && m.DataRows == len(m.Probes)
}
