package prediction

import (
	"os"
)

// Set is a predictions file after its rules, indexed by custom_id:
//
//   - an answer line answers its probe;
//   - a repeated answer line with the same response is the same answer
//     (kept once, the first line's metadata wins); with a different
//     response it is a *DuplicateError naming both lines — a file must not
//     say two things about one probe — unless the two lines answer
//     different requests (their request_sha256 keys differ: a ledger
//     reused on data built otherwise): then the later line is the answer,
//     and Only picks the answer to a given request;
//   - a failure line ("error", no "response") records a probe that got no
//     answer; an answer line for the same id, before or after, supersedes
//     it (a rerun appends the answer after the failure);
//   - a line without "response" and without "error" is malformed (Read
//     rejects it); "response": "" is an answer, scored as unparseable.
//
// Which ids match no probe is the join's business (eval.Join). A Set is
// not modified after NewSet and is safe for concurrent reads.
type Set struct {
	answers map[string]Prediction
	byKey   map[string]Prediction // custom_id + "\x00" + key → first answer
	failed  map[string]Prediction
	order   []string // ids in first-seen order, answered or failed
	lines   int
	spend   Stats
}

// NewSet applies the rules above to preds, read from file name (for
// messages).
func NewSet(preds []Prediction, name string) (*Set, error) {
	s := &Set{answers: make(map[string]Prediction, len(preds)), byKey: map[string]Prediction{}, failed: map[string]Prediction{}, lines: len(preds)}
	for _, p := range preds {
		s.spend.Requests += p.Attempts
		_, a := s.answers[p.CustomID]
		_, f := s.failed[p.CustomID]
		if !a && !f {
			s.order = append(s.order, p.CustomID)
		}
		switch {
		case p.Failed():
			if !a && !f {
				s.failed[p.CustomID] = p
			}
		case a && s.answers[p.CustomID].Key == p.Key:
			if prev := s.answers[p.CustomID]; prev.Response != p.Response {
				return nil, &DuplicateError{File: name, CustomID: p.CustomID, First: prev.Line, Second: p.Line}
			}
		default:
			k := p.CustomID + "\x00" + p.Key
			if prev, seen := s.byKey[k]; seen && prev.Response != p.Response {
				return nil, &DuplicateError{File: name, CustomID: p.CustomID, First: prev.Line, Second: p.Line}
			} else if !seen {
				s.byKey[k] = p
			}
			delete(s.failed, p.CustomID)
			s.answers[p.CustomID] = p
		}
	}
	for _, p := range s.answers {
		if u := p.Usage; u != nil {
			s.spend.PromptTokens += u.PromptTokens
			s.spend.CompletionTokens += u.CompletionTokens
			s.spend.ReasoningTokens += u.ReasoningTokens
			s.spend.CachedTokens += u.CachedTokens
		}
	}
	s.spend.Probes, s.spend.Answered, s.spend.Failed = len(s.order), len(s.answers), len(s.failed)
	return s, nil
}

// Spend is what the file's lines say the answers cost over every run that
// wrote them: requests (each line's attempts, failure lines included) and
// the kept answers' tokens. Wall is zero: lines do not say it.
func (s *Set) Spend() Stats { return s.spend }

// ReadFile reads the predictions file at path into a Set. A directory is
// a guard's ledger: its live estimates are the predictions (ReadLedger).
func ReadFile(path string) (*Set, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		preds, err := ReadLedger(path)
		if err != nil {
			return nil, err
		}
		return NewSet(preds, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	preds, err := Read(f, path)
	if err != nil {
		return nil, err
	}
	return NewSet(preds, path)
}

// FromResponses makes a Set of answers from custom_id → response (answers
// a program computed, as grpo's head does).
func FromResponses(responses map[string]string) *Set {
	s := &Set{answers: make(map[string]Prediction, len(responses)), byKey: map[string]Prediction{}, failed: map[string]Prediction{}, lines: len(responses)}
	for id, r := range responses {
		s.answers[id] = Prediction{CustomID: id, Response: r}
		s.byKey[id+"\x00"] = s.answers[id]
		s.order = append(s.order, id)
	}
	return s
}

// Only returns the set restricted to the requests keys names (custom_id →
// RequestKey): an id of keys keeps only its answer to that request, and
// has none (its failure line, if any, stays) when the file holds answers
// to other requests only. Ids not in keys are dropped. Spend is the whole
// file's.
func (s *Set) Only(keys map[string]string) *Set {
	o := &Set{answers: map[string]Prediction{}, byKey: map[string]Prediction{}, failed: map[string]Prediction{}, lines: s.lines, spend: s.spend}
	for _, id := range s.order {
		key, ok := keys[id]
		if !ok {
			continue
		}
		o.order = append(o.order, id)
		if p, ok := s.byKey[id+"\x00"+key]; ok {
			o.answers[id], o.byKey[id+"\x00"+key] = p, p
		} else if f, ok := s.failed[id]; ok {
			o.failed[id] = f
		}
	}
	return o
}

// Answer returns the answer for id.
func (s *Set) Answer(id string) (Prediction, bool) {
	p, ok := s.answers[id]
	return p, ok
}

// Failure returns the failure line of an id that has no answer.
func (s *Set) Failure(id string) (Prediction, bool) {
	p, ok := s.failed[id]
	return p, ok
}

// IDs returns every id the file mentions, answered or failed, in
// first-seen order.
func (s *Set) IDs() []string { return s.order }

// Answers counts the answered ids.
func (s *Set) Answers() int { return len(s.answers) }

// Failures counts the ids with only failure lines.
func (s *Set) Failures() int { return len(s.failed) }

// Lines counts the lines read.
func (s *Set) Lines() int { return s.lines }

// Cut counts the answers that were cut off (Prediction.Cut).
func (s *Set) Cut() int {
	n := 0
	for _, p := range s.answers {
		if p.Cut() {
			n++
		}
	}
	return n
}
