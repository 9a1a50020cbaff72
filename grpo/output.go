package grpo

import (
	"path/filepath"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/eval/prediction"
	"bagen-data/internal/atomicfile"
)

// writeEval writes eval.json (an eval.Run, readable by `bagen-data eval
// --compare`) and preds.jsonl (the answers, in eval-row order).
func (t *trainer) writeEval(m eval.Metrics, preds map[string]string) error {
	name := t.opt.Name
	if name == "" {
		name = filepath.Base(t.opt.Out)
	}
	run := eval.Run{Name: name, Data: dataset.EvalFile, Model: t.opt.Model, Metrics: m}
	if err := eval.WriteRun(filepath.Join(t.opt.Out, EvalFile), run); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(t.opt.Out, PredsFile), Predictions(t.data.Eval, preds))
}

// Predictions encodes answers as a predictions file (prediction.Marshal
// lines), once per id in exs order.
func Predictions(exs []Example, answers map[string]string) []byte {
	var out []byte
	seen := make(map[string]bool, len(exs))
	for _, e := range exs {
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		out = append(out, prediction.Marshal(prediction.Prediction{CustomID: e.ID, Response: answers[e.ID]})...)
	}
	return out
}
