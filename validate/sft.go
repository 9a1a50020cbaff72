package validate

import (
	"fmt"
	"strconv"
	"strings"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/reward"
)

// probeAfter reads p from a custom_id ending in "_probe_after_turn_<p>".
func probeAfter(customID string) (int64, bool) {
	i := strings.LastIndex(customID, dataset.ProbeSuffix)
	if i < 0 {
		return 0, false
	}
	digits := customID[i+len(dataset.ProbeSuffix):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	p, err := strconv.ParseInt(digits, 10, 64)
	return p, err == nil
}

// sftAnswer is the final assistant message of an SFT row, read by the
// reward parser; ok is false when the row does not end with one.
func sftAnswer(row dataset.SFTRow) (reward.Prediction, bool) {
	n := len(row.Messages)
	if n == 0 || row.Messages[n-1].Role != "assistant" {
		return reward.Prediction{}, false
	}
	return reward.Parse(row.Messages[n-1].Content), true
}

// sftClass is the class an SFT row teaches: possible (an estimate) or not;
// ok is false when the answer cannot be read.
func sftClass(row dataset.SFTRow) (possible, ok bool) {
	p, ok := sftAnswer(row)
	switch {
	case !ok:
		return false, false
	case p.Kind == reward.Impossible:
		return false, true
	case p.Kind == reward.Interval || p.Kind == reward.Scalar:
		return true, true
	}
	return false, false
}

// checkSFTLabels checks an SFT row's answer and per_turn_tokens. SFT rows
// carry no remaining_tokens, so an interval answer is checked to be the
// width's target for some r.
func (v *validator) checkSFTLabels(f *file, i int, row dataset.SFTRow) (p int64, pOK bool) {
	at := loc{file: f.path, row: i, id: row.CustomID}
	p, pOK = probeAfter(row.CustomID)
	if !pOK {
		v.fs.add(CheckLabels, Error, "custom-id", f.path, "rows whose custom_id is not <trajectory_id>_probe_after_turn_<p>",
			at.example("no _probe_after_turn_<p> suffix"))
	}
	if msg := v.answerProblem(row); msg != "" {
		v.fs.add(CheckLabels, Error, "sft-answer", f.path,
			"SFT answers the reward parser does not read back as a ground truth of the width", at.example(msg))
	}
	if pOK {
		n := len(row.Messages)
		probeText := ""
		if n >= 2 {
			probeText = row.Messages[n-2].Content
		}
		v.checkTurnTokens(f, at, "", p, -1, row.PerTurnTokens, probeText)
	}
	return p, pOK
}

func (v *validator) answerProblem(row dataset.SFTRow) string {
	p, ok := sftAnswer(row)
	if !ok {
		return "" // reported by the shape check
	}
	answer := row.Messages[len(row.Messages)-1].Content
	w := v.width
	switch p.Kind {
	case reward.Impossible:
		return ""
	case reward.Unparseable:
		return fmt.Sprintf("answer %q has no <answer>[L, H]</answer> or <answer>impossible</answer>", clip(answer, 80))
	case reward.Scalar:
		if w != nil && w.Kind != probes.Point {
			return fmt.Sprintf("answer %q is a single number; width %s wants an interval", clip(answer, 80), w.Text)
		}
		return ""
	}
	switch {
	case p.Low > p.High:
		return fmt.Sprintf("answer [%d, %d] is reversed", p.Low, p.High)
	case w == nil:
		return ""
	case w.Kind == probes.Point:
		return fmt.Sprintf("answer [%d, %d] is an interval; width point wants a number", p.Low, p.High)
	}
	if _, ok := remainingFor(*w, p.Low, p.High); !ok {
		return fmt.Sprintf("answer [%d, %d] is not the %s target of any remaining_tokens", p.Low, p.High, w.Text)
	}
	return ""
}
