package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/fixtures"
	"bagen-data/probes"
	"bagen-data/reward"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

// problems sums the counts of error and warning findings by code.
func problems(r *Report) map[string]int {
	out := map[string]int{}
	for _, f := range r.Findings {
		if f.Level != Info {
			out[f.Code] += f.Count
		}
	}
	return out
}

func TestCleanBuildPasses(t *testing.T) {
	for _, labels := range []string{"paper", "no manifest"} {
		t.Run(labels, func(t *testing.T) {
			dir := buildDataset(t, nil)
			if labels == "no manifest" {
				os.Remove(filepath.Join(dir, dataset.ManifestFile))
			}
			r := run(t, Config{Counter: words{}}, dir)
			if got := problems(r); len(got) != 0 {
				var b bytes.Buffer
				r.WriteText(&b)
				t.Errorf("build output: got problems %v, want none\n%s", got, b.String())
			}
			if r.Width != "pct30" || len(r.Files) != 3 {
				t.Errorf("got width %q and %d files, want pct30 and 3", r.Width, len(r.Files))
			}
		})
	}
}

// index returns the first row index where ok holds, or fails the test.
func index[T any](t *testing.T, rows []T, ok func(T) bool) int {
	t.Helper()
	for i, r := range rows {
		if ok(r) {
			return i
		}
	}
	t.Fatal("no row matches")
	return -1
}

func possible(r dataset.RLRow) bool   { return r.ExtraInfo.IsPossible }
func impossible(r dataset.RLRow) bool { return !r.ExtraInfo.IsPossible }
func later(r dataset.RLRow) bool      { return r.ExtraInfo.ProbeAfterTurn >= 1 }

// rlNoRewardModel is an RL row without reward_model, as a hand-made
// dataset often is.
type rlNoRewardModel struct {
	DataSource string            `parquet:"data_source"`
	Prompt     []rollout.Message `parquet:"prompt,list"`
	Ability    string            `parquet:"ability"`
	ExtraInfo  dataset.ExtraInfo `parquet:"extra_info"`
	Label      string            `parquet:"label"`
}

// rlNoPrompt names the chat "messages" instead of "prompt".
type rlNoPrompt struct {
	DataSource  string              `parquet:"data_source"`
	Messages    []rollout.Message   `parquet:"messages,list"`
	Ability     string              `parquet:"ability"`
	RewardModel dataset.RewardModel `parquet:"reward_model"`
	ExtraInfo   dataset.ExtraInfo   `parquet:"extra_info"`
	Label       string              `parquet:"label"`
}

// rlWrongTypes stores the prompt as a JSON string and remaining_tokens as
// int32.
type rlWrongTypes struct {
	DataSource  string              `parquet:"data_source"`
	Prompt      string              `parquet:"prompt"`
	Ability     string              `parquet:"ability"`
	RewardModel dataset.RewardModel `parquet:"reward_model"`
	ExtraInfo   extraInt32          `parquet:"extra_info"`
	Label       string              `parquet:"label"`
}

// extraInt32 is extra_info with remaining_tokens as int32.
type extraInt32 struct {
	CustomID        string               `parquet:"custom_id"`
	TrajectoryID    string               `parquet:"trajectory_id"`
	Split           string               `parquet:"split"`
	Index           int64                `parquet:"index"`
	ProbeAfterTurn  int64                `parquet:"probe_after_turn"`
	TotalTurns      int64                `parquet:"total_turns"`
	TokensUsed      int64                `parquet:"tokens_used"`
	RemainingTokens int32                `parquet:"remaining_tokens"`
	IsPossible      bool                 `parquet:"is_possible"`
	Budget          int64                `parquet:"budget"`
	PerTurnTokens   []dataset.TurnTokens `parquet:"per_turn_tokens,list"`
	Margin          float64              `parquet:"margin"`
}

// rlPyarrow has every column optional and the fields in another order,
// as pyarrow writes a pandas frame: still the right schema.
type rlPyarrow struct {
	Label       *string `parquet:"label,optional" json:"label"`
	RewardModel *struct {
		GroundTruth *string `parquet:"ground_truth,optional" json:"ground_truth"`
		Style       *string `parquet:"style,optional" json:"style"`
	} `parquet:"reward_model,optional" json:"reward_model"`
	ExtraInfo  *dataset.ExtraInfo `parquet:"extra_info,optional" json:"extra_info"`
	Ability    *string            `parquet:"ability,optional" json:"ability"`
	Prompt     []rollout.Message  `parquet:"prompt,list,optional" json:"prompt"`
	DataSource *string            `parquet:"data_source,optional" json:"data_source"`
}

func convert[From, To any](t *testing.T, rows []From) []To {
	t.Helper()
	out := make([]To, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestBroken(t *testing.T) {
	type broken struct {
		name string
		cfg  Config
		// edit breaks the dataset in dir and returns the message the first
		// example of finding code must carry.
		edit func(t *testing.T, dir string) string
		code string
		want map[string]int
	}
	evalPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(dataset.EvalFile)) }
	rlPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(dataset.RLFile)) }
	sftPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(dataset.SFTFile)) }
	tests := []broken{
		{
			name: "ground truth off the width",
			code: "ground-truth",
			edit: func(t *testing.T, dir string) string {
				var msg string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					i := index(t, rows, possible)
					x := &rows[i]
					want := x.RewardModel.GroundTruth
					x.RewardModel.GroundTruth = "[1, 2]"
					x.Label = reward.TokenTarget(reward.Truth{Remaining: x.ExtraInfo.RemainingTokens, Possible: true}, "[1, 2]").Label()
					msg = fmt.Sprintf("ground_truth \"[1, 2]\", want %q for remaining_tokens %d", want, x.ExtraInfo.RemainingTokens)
					return rows
				})
				return msg
			},
			want: map[string]int{"ground-truth": 1},
		},
		{
			name: "impossible row with an interval",
			code: "impossible-ground-truth",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					rows[index(t, rows, impossible)].RewardModel.GroundTruth = "[10, 20]"
					return rows
				})
				return `ground_truth "[10, 20]"`
			},
			// the label column still says "impossible"
			want: map[string]int{"impossible-ground-truth": 1, "label-column": 1},
		},
		{
			name: "label column disagrees",
			code: "label-column",
			edit: func(t *testing.T, dir string) string {
				var msg string
				editRL(t, rlPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					i := index(t, rows, possible)
					x := rows[i].ExtraInfo
					rows[i].Label = reward.TokenTarget(reward.Truth{Remaining: x.RemainingTokens + 1, Possible: true}, rows[i].RewardModel.GroundTruth).Label()
					msg = fmt.Sprintf("label reads as remaining %d, possible true; extra_info has %d, true", x.RemainingTokens+1, x.RemainingTokens)
					// duplicated possible probes: edit every copy alike
					for j := range rows {
						if rows[j].ExtraInfo.CustomID == x.CustomID {
							rows[j].Label = rows[i].Label
						}
					}
					return rows
				})
				return msg
			},
			want: map[string]int{"label-column": 2},
		},
		{
			name: "impossible label's remaining tokens disagree",
			code: "label-remaining",
			edit: func(t *testing.T, dir string) string {
				var msg string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					i := index(t, rows, impossible)
					x := rows[i].ExtraInfo
					rows[i].Label = reward.TokenTarget(reward.Truth{Remaining: x.RemainingTokens + 7}, "impossible").Label()
					msg = fmt.Sprintf("label remaining_tokens %d, extra_info %d", x.RemainingTokens+7, x.RemainingTokens)
					return rows
				})
				return msg
			},
			want: map[string]int{"label-remaining": 1},
		},
		{
			name: "possible over budget",
			code: "budget-rule",
			edit: func(t *testing.T, dir string) string {
				var msg string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					for i := range rows {
						x := &rows[i].ExtraInfo
						if !x.IsPossible {
							continue
						}
						x.Budget = 100
						x.Margin = float64(x.Budget-x.TokensUsed-x.RemainingTokens) / float64(x.Budget)
						if msg == "" {
							msg = fmt.Sprintf("tokens_used %d + remaining_tokens %d = %d > budget 100", x.TokensUsed, x.RemainingTokens, x.TokensUsed+x.RemainingTokens)
						}
					}
					return rows
				})
				return msg
			},
			// The prompts still say 2500.
			want: map[string]int{"budget-rule": 14, "prompt-budget": 14},
		},
		{
			name: "margin",
			code: "margin",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					rows[0].ExtraInfo.Margin = 0.5
					return rows
				})
				return "" // checked by count only
			},
			want: map[string]int{"margin": 1},
		},
		{
			name: "per_turn_tokens short",
			code: "per-turn-tokens",
			edit: func(t *testing.T, dir string) string {
				var msg string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					x := &rows[index(t, rows, later)].ExtraInfo
					x.PerTurnTokens = x.PerTurnTokens[:len(x.PerTurnTokens)-1]
					msg = fmt.Sprintf("%d entries for probe_after_turn %d", len(x.PerTurnTokens), x.ProbeAfterTurn)
					return rows
				})
				return msg
			},
			want: map[string]int{"per-turn-tokens": 1},
		},
		{
			name: "per_turn_tokens not the probe text",
			code: "per-turn-tokens",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					rows[index(t, rows, later)].ExtraInfo.PerTurnTokens[0].OutputTokens--
					return rows
				})
				return ""
			},
			// Σ falls by one: the system prompt's share looks one larger
			want: map[string]int{"per-turn-tokens": 1},
		},
		{
			name: "trajectory total",
			code: "trajectory-total",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					x := &rows[index(t, rows, func(r dataset.RLRow) bool { return r.ExtraInfo.ProbeAfterTurn == 1 })].ExtraInfo
					x.TokensUsed += 5
					x.Margin = float64(x.Budget-x.TokensUsed-x.RemainingTokens) / float64(x.Budget)
					return rows
				})
				return ""
			},
			want: map[string]int{"trajectory-total": 1, "system-tokens": 1},
		},
		{
			name: "roles",
			code: "roles",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					rows[index(t, rows, later)].Prompt[1].Role = "assistant"
					return rows
				})
				return `prompt[1].role: want "user", got "assistant"`
			},
			want: map[string]int{"roles": 1},
		},
		{
			name: "empty content",
			code: "empty-content",
			edit: func(t *testing.T, dir string) string {
				var probe string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					// An empty history message is as a log records a command
					// without output: no finding. An empty probe is.
					rows[index(t, rows, later)].Prompt[2].Content = " \n"
					p := rows[len(rows)-1].Prompt
					p[len(p)-1].Content = ""
					probe = fmt.Sprintf("prompt[%d].content is empty (user)", len(p)-1)
					return rows
				})
				return probe
			},
			// The probe's usage and budget are gone with its text.
			want: map[string]int{"empty-content": 1, "per-turn-tokens": 1, "budget-unstated": 1},
		},
		{
			name: "prompt without the probe",
			code: "last-role",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					i := index(t, rows, later)
					rows[i].Prompt = rows[i].Prompt[:len(rows[i].Prompt)-1]
					return rows
				})
				return `prompt ends with "assistant"`
			},
			want: map[string]int{"last-role": 1, "turn-count": 1, "per-turn-tokens": 1},
		},
		{
			name: "SFT answer unreadable",
			code: "sft-answer",
			edit: func(t *testing.T, dir string) string {
				editSFT(t, sftPath(dir), func(rows []dataset.SFTRow) []dataset.SFTRow {
					last := &rows[0].Messages[len(rows[0].Messages)-1]
					last.Content = "about 300 tokens"
					return rows
				})
				return `answer "about 300 tokens" has no <answer>[L, H]</answer> or <answer>impossible</answer>`
			},
			want: map[string]int{"sft-answer": 1, "manifest-counts": 1},
		},
		{
			name: "SFT answer not a width target",
			code: "sft-answer",
			edit: func(t *testing.T, dir string) string {
				editSFT(t, sftPath(dir), func(rows []dataset.SFTRow) []dataset.SFTRow {
					for i, r := range rows {
						if p, _ := sftClass(r); p {
							rows[i].Messages[len(r.Messages)-1].Content = "<answer>[100, 900]</answer>"
							break
						}
					}
					return rows
				})
				return "answer [100, 900] is not the pct30 target of any remaining_tokens"
			},
			want: map[string]int{"sft-answer": 1},
		},
		{
			name: "custom_id",
			code: "custom-id",
			edit: func(t *testing.T, dir string) string {
				var msg string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					x := &rows[0].ExtraInfo
					msg = fmt.Sprintf("want %q", x.CustomID)
					x.CustomID += "0"
					return rows
				})
				return msg
			},
			want: map[string]int{"custom-id": 1},
		},
		{
			name: "split field",
			code: "split-field",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					rows[3].ExtraInfo.Split = "rl"
					return rows
				})
				return `split "rl" in the eval file`
			},
			want: map[string]int{"split-field": 1},
		},
		{
			name: "eval trajectory also in rl",
			code: "trajectory-leak",
			edit: func(t *testing.T, dir string) string {
				eval := readRows[dataset.RLRow](t, evalPath(dir))
				var msg string
				editRL(t, rlPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					leaked := eval[0]
					leaked.ExtraInfo.Split = "rl"
					msg = fmt.Sprintf("trajectory %q is also in rl at %s row %d", leaked.ExtraInfo.TrajectoryID, rlPath(dir), len(rows))
					return append(rows, leaked)
				})
				return msg
			},
			want: map[string]int{"trajectory-leak": 1, "prompt-leak": 1, "manifest-counts": 1},
		},
		{
			name: "eval start state also in training",
			code: "prompt-repeat",
			edit: func(t *testing.T, dir string) string {
				first := func(r dataset.RLRow) bool { return r.ExtraInfo.ProbeAfterTurn == 0 }
				train := readRows[dataset.RLRow](t, rlPath(dir))
				i := index(t, train, first)
				var msg string
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					j := index(t, rows, first)
					rows[j].Prompt = train[i].Prompt
					msg = fmt.Sprintf("same prompt as %s row %d (%s), a start state", rlPath(dir), i, train[i].ExtraInfo.CustomID)
					return rows
				})
				return msg
			},
			want: map[string]int{"prompt-repeat": 1},
		},
		{
			name: "eval prefix in training under another id with another answer",
			code: "prefix-repeat",
			edit: func(t *testing.T, dir string) string {
				// Two rollouts that began alike, the training one failing:
				// the same prompt teaches another answer, not a copy.
				eval := readRows[dataset.RLRow](t, evalPath(dir))
				k := index(t, eval, func(r dataset.RLRow) bool { return r.ExtraInfo.ProbeAfterTurn >= 1 && r.ExtraInfo.IsPossible })
				var msg string
				editRL(t, rlPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					c := eval[k]
					c.ExtraInfo.CustomID, c.ExtraInfo.TrajectoryID, c.ExtraInfo.Split = "copy_"+c.ExtraInfo.CustomID, "copy_"+c.ExtraInfo.TrajectoryID, dataset.SplitRL
					c.ExtraInfo.IsPossible, c.RewardModel.GroundTruth = false, "impossible"
					c.Label = fmt.Sprintf(`{"remaining_tokens":%d,"is_possible":false,"ground_truth":"impossible"}`, c.ExtraInfo.RemainingTokens)
					msg = fmt.Sprintf("same prompt as %s row %d (%s), completed turns included, another answer", rlPath(dir), len(rows), c.ExtraInfo.CustomID)
					return append(rows, c)
				})
				return msg
			},
			want: map[string]int{"prefix-repeat": 1, "manifest-counts": 1},
		},
		{
			name: "duplicate eval row",
			code: "duplicates",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					return append(rows, rows[5])
				})
				return "1 duplicate rows (0 possible, 1 impossible)"
			},
			want: map[string]int{"duplicates": 1, "manifest-counts": 1},
		},
		{
			name: "eval without impossible probes",
			code: "class-missing",
			edit: func(t *testing.T, dir string) string {
				editRL(t, evalPath(dir), func(rows []dataset.RLRow) []dataset.RLRow {
					var keep []dataset.RLRow
					for _, r := range rows {
						if r.ExtraInfo.IsPossible {
							keep = append(keep, r)
						}
					}
					return keep
				})
				return "14 possible, 0 impossible"
			},
			want: map[string]int{"class-missing": 1, "manifest-counts": 1},
		},
		{
			name: "missing reward_model",
			code: "missing-column",
			edit: func(t *testing.T, dir string) string {
				writeRows(t, rlPath(dir), convert[dataset.RLRow, rlNoRewardModel](t, readRows[dataset.RLRow](t, rlPath(dir))))
				return "rl file has no reward_model column (want struct<style string, ground_truth string>)"
			},
			want: map[string]int{"missing-column": 1},
		},
		{
			name: "missing prompt",
			code: "missing-column",
			edit: func(t *testing.T, dir string) string {
				writeRows(t, evalPath(dir), convert[dataset.RLRow, rlNoPrompt](t, readRows[dataset.RLRow](t, evalPath(dir))))
				return "rl file has no prompt column (want list<struct<role string, content string>>)"
			},
			want: map[string]int{"missing-column": 1, "extra-column": 1},
		},
		{
			name: "wrong types",
			code: "column-type",
			edit: func(t *testing.T, dir string) string {
				rows := readRows[dataset.RLRow](t, evalPath(dir))
				bad := make([]rlWrongTypes, len(rows))
				for i, r := range rows {
					b, _ := json.Marshal(r.Prompt)
					bad[i] = rlWrongTypes{DataSource: r.DataSource, Prompt: string(b), Ability: r.Ability, RewardModel: r.RewardModel, Label: r.Label}
					x := r.ExtraInfo
					bad[i].ExtraInfo = extraInt32{CustomID: x.CustomID, TrajectoryID: x.TrajectoryID, Split: x.Split, Index: x.Index,
						ProbeAfterTurn: x.ProbeAfterTurn, TotalTurns: x.TotalTurns, TokensUsed: x.TokensUsed,
						RemainingTokens: int32(x.RemainingTokens), IsPossible: x.IsPossible, Budget: x.Budget,
						PerTurnTokens: x.PerTurnTokens, Margin: x.Margin}
				}
				writeRows(t, evalPath(dir), bad)
				return "prompt: want list<struct<role string, content string>>, got string"
			},
			want: map[string]int{"column-type": 2},
		},
		{
			name: "SFT rows in the rl file",
			code: "missing-column",
			edit: func(t *testing.T, dir string) string {
				writeRows(t, rlPath(dir), readRows[dataset.SFTRow](t, sftPath(dir)))
				return "rl file has no data_source column (want string)"
			},
			want: map[string]int{"missing-column": 6, "extra-column": 5}, // messages, per_turn_tokens, custom_id, budget, accounting
		},
		{
			name: "not parquet",
			code: "not-parquet",
			edit: func(t *testing.T, dir string) string {
				os.WriteFile(evalPath(dir), []byte(`{"custom_id": "x"}`+"\n"), 0o644)
				return ""
			},
			want: map[string]int{"not-parquet": 1},
		},
		{
			name: "prompts over the limit",
			cfg:  Config{Counter: words{}, MaxPromptTokens: 400},
			code: "prompt-too-long",
			edit: func(t *testing.T, dir string) string { return "" },
			want: map[string]int{"prompt-too-long": longPrompts(t, 400)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := buildDataset(t, nil)
			msg := tt.edit(t, dir)
			r := run(t, tt.cfg, dir)
			var text bytes.Buffer
			r.WriteText(&text)
			if d := cmp.Diff(tt.want, problems(r)); d != "" {
				t.Errorf("problems (-want +got):\n%s\n%s", d, text.String())
			}
			found := r.Find(tt.code)
			if len(found) == 0 {
				t.Fatalf("no %s finding", tt.code)
			}
			if msg != "" && found[0].Examples[0].Message != msg {
				t.Errorf("%s: got message %q, want %q", tt.code, found[0].Examples[0].Message, msg)
			}
			if r.OK() != (tt.want == nil || onlyWarnings(r)) {
				t.Errorf("OK() = %t with %d errors", r.OK(), r.Errors)
			}
		})
	}
}

func onlyWarnings(r *Report) bool {
	for _, f := range r.Findings {
		if f.Level == Error {
			return false
		}
	}
	return true
}

// longPrompts counts the prompts of the test build longer than limit words
// with ChatML framing: 5 per message and 3.
func longPrompts(t *testing.T, limit int) int {
	dir := buildDataset(t, nil)
	n := 0
	count := func(msgs []rollout.Message) {
		total := 3
		for _, m := range msgs {
			total += len(strings.Fields(m.Content)) + 5
		}
		if total > limit {
			n++
		}
	}
	for _, r := range readRows[dataset.SFTRow](t, filepath.Join(dir, filepath.FromSlash(dataset.SFTFile))) {
		count(r.Messages[:len(r.Messages)-1])
	}
	for _, name := range []string{dataset.RLFile, dataset.EvalFile} {
		for _, r := range readRows[dataset.RLRow](t, filepath.Join(dir, filepath.FromSlash(name))) {
			count(r.Prompt)
		}
	}
	if n == 0 {
		t.Fatalf("no prompt over %d tokens: the test proves nothing", limit)
	}
	return n
}

// TestPyarrowLayout accepts what pandas + pyarrow write: every column
// optional and the fields in another order.
func TestPyarrowLayout(t *testing.T) {
	dir := buildDataset(t, nil)
	path := filepath.Join(dir, filepath.FromSlash(dataset.EvalFile))
	writeRows(t, path, convert[dataset.RLRow, rlPyarrow](t, readRows[dataset.RLRow](t, path)))
	r := run(t, Config{}, dir)
	if got := problems(r); len(got) != 0 {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Errorf("got problems %v, want none\n%s", got, b.String())
	}
	if !r.Files[2].Checked || r.Files[2].Rows != 26 {
		t.Errorf("eval file: got %+v, want 26 checked rows", r.Files[2])
	}
}

func TestJSONReport(t *testing.T) {
	dir := buildDataset(t, nil)
	editRL(t, filepath.Join(dir, filepath.FromSlash(dataset.EvalFile)), func(rows []dataset.RLRow) []dataset.RLRow {
		for i := range rows {
			rows[i].ExtraInfo.Margin = 2
		}
		return rows
	})
	r := run(t, Config{MaxExamples: 2}, dir)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Errors   int `json:"errors"`
		Findings []struct {
			Code     string `json:"code"`
			Level    string `json:"level"`
			Count    int    `json:"count"`
			Examples []struct {
				File     string `json:"file"`
				Row      int    `json:"row"`
				CustomID string `json:"custom_id"`
			} `json:"examples"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	f := back.Findings[0]
	if back.Errors != 1 || f.Code != "margin" || f.Level != "error" || f.Count != 26 || len(f.Examples) != 2 ||
		f.Examples[1].Row != 1 || f.Examples[1].CustomID == "" {
		t.Errorf("got %s", b)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(t.Context(), []string{"/no/such/dir"}, Config{}); err == nil || !strings.Contains(err.Error(), "/no/such/dir") {
		t.Errorf("missing path: got %v, want an error naming it", err)
	}
	empty := t.TempDir()
	if _, err := Run(t.Context(), []string{empty}, Config{}); !errors.Is(err, ErrNoFiles) {
		t.Errorf("empty directory: got %v, want ErrNoFiles", err)
	}
}

// TestEmbeddedFixturesPass builds the embedded Sokoban rollouts the way
// `bagen-data build` does with Qwen's tokenizer and validates the output:
// no error-level finding.
func TestEmbeddedFixturesPass(t *testing.T) {
	names, err := fixtures.Files("sokoban")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded sokoban fixtures (%v)", err)
	}
	tok, err := tokenizer.Load(tokenizer.DefaultPath())
	if err != nil {
		t.Skipf("no Qwen tokenizer (%v): run `make tokenizer`", err)
	}
	srcs := make([]rollout.Source, len(names))
	for i, n := range names {
		srcs[i] = rollout.FSSource(fixtures.Rollouts, n)
	}
	task, _ := probes.LookupTask("sokoban")
	width, _ := probes.ParseWidth("pct30")
	dir := filepath.Join(t.TempDir(), "out")
	cfg := dataset.Config{Task: task, Width: width, Seed: 42,
		Balance: dataset.Balance{Oversample: 2, Ratio: new(1.0)}, Counter: tok, Tokenizer: "qwen", Version: "test"}
	if _, err := dataset.Build(t.Context(), srcs, dir, cfg); err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Counter: tok}, dir)
	if !r.OK() {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Errorf("embedded fixtures: %d errors\n%s", r.Errors, b.String())
	}
	t.Logf("%d files, %d warnings", len(r.Files), r.Warnings)
}
