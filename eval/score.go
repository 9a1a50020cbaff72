package eval

import (
	"fmt"
	"slices"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
)

// Matched is data rows joined to predictions by custom_id, under the join
// rules (the file's own rules are prediction.Set's):
//
//   - data rows sharing a custom_id (a probe repeated by oversampling)
//     are one probe: it is scored once, at its first row; DataRows counts
//     the rows, len(Probes) the unique probes;
//   - a probe without an answer is scored as an unparseable answer and
//     listed in Missing; Failed lists those of them whose requests failed
//     (a failure line: a rerun of `eval --endpoint/--ollama` asks them);
//   - an answer whose custom_id matches no data row is listed in Unknown
//     and not scored.
type Matched struct {
	Probes   []Match
	DataRows int
	Missing  []string
	Failed   []string
	Unknown  []string
}

// Match is one probe of a join: its first data row and its answer.
type Match struct {
	Row dataset.RLRow
	// Index is the 0-based position of the probe's first row in the data;
	// Copies counts its rows.
	Index, Copies int
	// Response is the answer; Answered is false for a probe without one
	// (Response is then ""). Usage is what answering it cost, when the
	// file says.
	Response string
	Answered bool
	Usage    *prediction.Usage
}

// Join matches predictions to rows by custom_id under the rules of
// Matched. Neither input is modified.
func Join(rows []dataset.RLRow, preds *prediction.Set) Matched {
	m := Matched{DataRows: len(rows)}
	at := make(map[string]int, len(rows))
	for i, row := range rows {
		id := row.ExtraInfo.CustomID
		if k, dup := at[id]; dup {
			m.Probes[k].Copies++
			continue
		}
		at[id] = len(m.Probes)
		p, ok := preds.Answer(id)
		m.Probes = append(m.Probes, Match{Row: row, Index: i, Copies: 1, Response: p.Response, Answered: ok, Usage: p.Usage})
		if ok {
			continue
		}
		m.Missing = append(m.Missing, id)
		if _, failed := preds.Failure(id); failed {
			m.Failed = append(m.Failed, id)
		}
	}
	for _, id := range preds.IDs() {
		if _, known := at[id]; !known {
			if _, ok := preds.Answer(id); ok {
				m.Unknown = append(m.Unknown, id)
			}
		}
	}
	slices.Sort(m.Unknown)
	return m
}

// Scores is the scored table of a join.
type Scores struct {
	Matched
	// Rows is the scored table, one row per probe in data order.
	Rows []Scored
	// LabelErrors lists the rows whose label column cannot be read; they
	// are scored from extra_info's token truth.
	LabelErrors []*LabelError
}

// Score joins preds to rows (Join) and scores each probe once, reading its
// truth with TruthOf. Neither input is modified.
func Score(rows []dataset.RLRow, preds *prediction.Set) Scores {
	s := Scores{Matched: Join(rows, preds)}
	for _, p := range s.Probes {
		t, err := TruthOf(p.Row)
		if err != nil {
			s.LabelErrors = append(s.LabelErrors, &LabelError{Row: p.Index, CustomID: t.CustomID, Err: err})
		}
		r := NewScored(t, p.Response)
		r.Missing = !p.Answered
		r.Usage = p.Usage
		s.Rows = append(s.Rows, r)
	}
	return s
}

// Evaluate joins preds to rows, scores every probe once and computes the
// metrics with bootstrap 95% intervals (resamples, seed; 0 resamples: none).
// A row whose label cannot be read is an error — its truth is unknown —
// naming the first such row and how many more there are.
// It returns the scored table too.
func Evaluate(rows []dataset.RLRow, preds *prediction.Set, resamples int, seed uint64) (Metrics, Scores, error) {
	s := Score(rows, preds)
	if n := len(s.LabelErrors); n > 0 {
		more := ""
		if n > 1 {
			more = fmt.Sprintf(" (and %d more rows)", n-1)
		}
		return Metrics{}, s, fmt.Errorf("%w%s", s.LabelErrors[0], more)
	}
	m := Compute(s.Rows)
	m.CI = Bootstrap(s.Rows, resamples, seed)
	return m, s, nil
}

// Summary says how the join went, e.g. "380 probes (412 data rows), 0
// without a prediction, 2 predictions for unknown ids
// (x_probe_after_turn_9, …)". Data rows are named only when probes repeat.
func (m Matched) Summary() string {
	s := fmt.Sprintf("%d probes", len(m.Probes))
	if m.DataRows != len(m.Probes) {
		s += fmt.Sprintf(" (%d data rows)", m.DataRows)
	}
	s += fmt.Sprintf(", %d without a prediction", len(m.Missing))
	s += examples(m.Missing)
	if len(m.Failed) > 0 {
		s += fmt.Sprintf(" of which %d failed to answer", len(m.Failed))
	}
	s += fmt.Sprintf(", %d predictions for unknown ids", len(m.Unknown))
	return s + examples(m.Unknown)
}

func examples(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return " (" + prediction.Examples(ids) + ")"
}
