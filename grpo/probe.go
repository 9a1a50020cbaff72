package grpo

import (
	"fmt"
	"math"
	"strings"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// Probe is one example as the head sees it: the rendered prompt the
// encoder embeds, the numbers the numeric features come from, and the
// truth (RL and eval rows) or the target answer (SFT rows).
type Probe struct {
	ID     string
	Prompt string // the chat prompt in Qwen's <|im_start|> format
	Budget int64
	Turns  []dataset.TurnTokens // completed turns only
	Truth  reward.Truth         // RL and eval rows
	Target string               // SFT rows: the assistant's answer
}

// Render writes msgs in Qwen's chat format, ending with the opening of the
// assistant's turn — the text the LLM would continue from:
//
//	<|im_start|>system\n…<|im_end|>\n<|im_start|>user\n…<|im_end|>\n<|im_start|>assistant\n
func Render(msgs []rollout.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>")
		b.WriteString(m.Role)
		b.WriteByte('\n')
		b.WriteString(m.Content)
		b.WriteString("<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// ProbesFromRL turns RL or eval rows into probes; file names the rows'
// file in errors.
func ProbesFromRL(file string, rows []dataset.RLRow) ([]Probe, error) {
	out := make([]Probe, len(rows))
	for i, r := range rows {
		x := r.ExtraInfo
		if len(r.Prompt) == 0 {
			return nil, fmt.Errorf("%s: row %d (%s): prompt: %w: empty", file, i, x.CustomID, ErrData)
		}
		if x.Budget <= 0 {
			return nil, fmt.Errorf("%s: row %d (%s): extra_info.budget: %w: want > 0, got %d", file, i, x.CustomID, ErrData, x.Budget)
		}
		truth, err := eval.TruthOf(r)
		tr, tokens := truth.Target.Tokens()
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: row %d (%s): label: %w", file, i, x.CustomID, err)
		case !tokens:
			return nil, fmt.Errorf("%s: row %d (%s): label: %w: a Warehouse probe; the head estimates tokens", file, i, x.CustomID, ErrData)
		}
		out[i] = Probe{ID: x.CustomID, Prompt: Render(r.Prompt), Budget: x.Budget, Turns: x.PerTurnTokens, Truth: tr}
	}
	return out, nil
}

// ProbesFromSFT turns SFT rows into probes: the prompt is every message
// but the last, which must be the assistant's answer; the budget is the
// row's budget column.
func ProbesFromSFT(file string, rows []dataset.SFTRow) ([]Probe, error) {
	out := make([]Probe, len(rows))
	for i, r := range rows {
		n := len(r.Messages)
		if n < 2 || r.Messages[n-1].Role != "assistant" {
			return nil, fmt.Errorf("%s: row %d (%s): messages: %w: want a prompt and a final assistant answer", file, i, r.CustomID, ErrData)
		}
		if r.Budget <= 0 {
			return nil, fmt.Errorf("%s: row %d (%s): budget: %w: want > 0, got %d", file, i, r.CustomID, ErrData, r.Budget)
		}
		out[i] = Probe{
			ID: r.CustomID, Prompt: Render(r.Messages[:n-1]), Budget: r.Budget,
			Turns: r.PerTurnTokens, Target: r.Messages[n-1].Content,
		}
	}
	return out, nil
}

// NumNumeric is the number of numeric features.
const NumNumeric = 6

// Numeric returns the probe's numeric features, from what the probe text
// shows the model (completed turns and their tokens, the budget), scaled to
// order one. With p completed turns, U = Σ (input + output) tokens over
// them, B the budget and t_p the last turn's tokens:
//
//	0  log tokens used       ln(1+U) / 10
//	1  log budget            ln(1+B) / 10
//	2  completed turns       p / 10
//	3  share of budget used  U / B
//	4  mean per-turn tokens  ln(1+U/p) / 10   (0 when p = 0)
//	5  last turn's tokens    ln(1+t_p) / 10   (0 when p = 0)
//
// U counts the turns' tokens only (not the system prompt or the first
// observation) so that SFT rows, which carry no extra_info.tokens_used,
// get the same features as RL rows.
func (p Probe) Numeric() [NumNumeric]float64 {
	var used, last float64
	for _, t := range p.Turns {
		last = float64(t.InputTokens + t.OutputTokens)
		used += last
	}
	n := float64(len(p.Turns))
	f := [NumNumeric]float64{
		math.Log1p(used) / 10,
		math.Log1p(float64(p.Budget)) / 10,
		n / 10,
		used / float64(max(p.Budget, 1)),
	}
	if n > 0 {
		f[4] = math.Log1p(used/n) / 10
		f[5] = math.Log1p(last) / 10
	}
	return f
}

// Features is the head's input: the L2-normalised embedding followed by
// the numeric features.
func Features(embedding []float32, p Probe) []float64 {
	var ss float64
	for _, v := range embedding {
		ss += float64(v) * float64(v)
	}
	inv := 0.0
	if ss > 0 {
		inv = 1 / math.Sqrt(ss)
	}
	x := make([]float64, 0, len(embedding)+NumNumeric)
	for _, v := range embedding {
		x = append(x, float64(v)*inv)
	}
	num := p.Numeric()
	return append(x, num[:]...)
}
