package eval

import (
	"fmt"
	"slices"

	"bagen-data/dataset"
)

// Join is the result of matching predictions to probes by custom_id.
type Join struct {
	// Rows is the scored table, one row per probe in data order.
	Rows []Scored
	// Missing lists custom_ids of probes without a prediction (each once),
	// scored as unparseable answers.
	Missing []string
	// Unknown lists custom_ids of predictions that match no probe.
	Unknown []string
	// LabelErrors lists the rows whose label column cannot be read; they
	// are scored from extra_info's token truth.
	LabelErrors []*LabelError
}

// Score joins responses (custom_id → response) to rows and scores each
// probe, reading each row's truth with TruthOf. Rows sharing a custom_id
// (duplicated probes) share its response. Neither input is modified.
func Score(rows []dataset.RLRow, responses map[string]string) Join {
	var j Join
	seen := make(map[string]bool, len(rows))
	for i, row := range rows {
		t, err := TruthOf(row)
		if err != nil {
			j.LabelErrors = append(j.LabelErrors, &LabelError{Row: i, CustomID: t.CustomID, Err: err})
		}
		resp, ok := responses[t.CustomID]
		s := NewScored(t, resp)
		s.Missing = !ok
		j.Rows = append(j.Rows, s)
		if !ok && !seen[t.CustomID] {
			j.Missing = append(j.Missing, t.CustomID)
		}
		seen[t.CustomID] = true
	}
	for id := range responses {
		if !seen[id] {
			j.Unknown = append(j.Unknown, id)
		}
	}
	slices.Sort(j.Unknown)
	return j
}

// Summary says how the join went, e.g. "380 probes, 0 without a prediction,
// 2 predictions for unknown ids (x_probe_after_turn_9, …)".
func (j Join) Summary() string {
	s := fmt.Sprintf("%d probes, %d without a prediction", len(j.Rows), len(j.Missing))
	s += examples(j.Missing)
	s += fmt.Sprintf(", %d predictions for unknown ids", len(j.Unknown))
	return s + examples(j.Unknown)
}

func examples(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	const show = 3
	s := " ("
	for i, id := range ids[:min(show, len(ids))] {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	if len(ids) > show {
		s += ", …"
	}
	return s + ")"
}
