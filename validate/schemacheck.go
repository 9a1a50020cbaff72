package validate

import (
	"fmt"

	"bagen-data/dataset"
)

// missingWhy explains a missing top-level column the way a verl user meets
// it.
var missingWhy = map[string]string{
	"reward_model": "missing column reward_model: verl's RLHFDataset and reward manager read the ground truth from reward_model.ground_truth, so training fails (KeyError 'reward_model') — the common verl failure",
	"prompt":       "missing column prompt: verl's RLHFDataset reads the chat from the prompt column (data.prompt_key=prompt), so loading fails — the common verl failure",
	"messages":     "missing column messages: verl's multi-turn SFT reads the conversation from data.messages_key=messages",
	"extra_info":   "missing column extra_info: remaining_tokens, is_possible and the probe position live there; eval and the reward cannot score without them",
}

// checkSchema compares a file's schema with the one build writes and
// reports whether the rows can be read.
func (v *validator) checkSchema(f *file) bool {
	want := dataset.RLSchema
	if f.kind == kindSFT {
		want = dataset.SFTSchema
	}
	ok := true
	for _, m := range dataset.Compare(want, f.schema) {
		switch {
		case m.Missing && m.Optional:
			// A file written before the column: checkAccounting notes it.
		case m.Extra:
			v.fs.add(CheckSchema, Warning, "extra-column", f.path, "columns the schema does not have (readers ignore them)",
				Example{File: f.path, Row: -1, Message: fmt.Sprintf("%s %s", m.Path, m.Got)})
		case m.Missing:
			ok = false
			summary := missingWhy[m.Path]
			if summary == "" {
				summary = fmt.Sprintf("missing column %s (want %s)", m.Path, m.Want)
			}
			v.fs.add(CheckSchema, Error, "missing-column", f.path+"\x00"+m.Path, summary,
				Example{File: f.path, Row: -1, Message: fmt.Sprintf("%s file has no %s column (want %s)", f.kind, m.Path, m.Want)})
		default:
			ok = false
			v.fs.add(CheckSchema, Error, "column-type", f.path, "columns with the wrong type",
				Example{File: f.path, Row: -1, Message: fmt.Sprintf("%s: want %s, got %s", m.Path, m.Want, m.Got)})
		}
	}
	return ok
}
