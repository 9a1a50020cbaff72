package rollout

import (
	"bytes"
	"encoding/json"
	"sort"
)

// LoadSuccessFiles adds to r (nil for none yet) the verdicts of success
// files (--success-file), for teams that label their sessions themselves:
// each file is one JSON object mapping trajectory ids (a session's id, a
// rollout's custom_id) to true or false. A verdict joins on the
// trajectory's id as read, before any run or --prefix-ids prefix; an id
// that two files judge differently is an error.
func LoadSuccessFiles(r *Results, paths []string) (*Results, error) {
	if r == nil {
		r = &Results{resolved: map[string]bool{}, from: map[string]string{}}
	}
	if r.byID == nil {
		r.byID, r.byIDFrom = map[string]bool{}, map[string]string{}
	}
	for _, p := range paths {
		if err := r.loadSuccess(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Results) loadSuccess(path string) error {
	rec, err := r.readFile(path)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rec.Data, &m); err != nil {
		return rec.Errorf("", "want a JSON object mapping ids to true or false: %w", JSONCause(err))
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		var v bool
		if err := json.Unmarshal(m[id], &v); err != nil || bytes.Equal(bytes.TrimSpace(m[id]), []byte("null")) {
			return rec.Errorf(id, "want true or false, got %s", clipJSON(m[id]))
		}
		if prev, ok := r.byID[id]; ok && prev != v {
			return rec.Errorf(id, "%v here, %v in %s", v, prev, r.byIDFrom[id])
		}
		r.byID[id], r.byIDFrom[id] = v, path
	}
	return nil
}

// LenSuccess is the number of ids the success files judge.
func (r *Results) LenSuccess() int {
	if r == nil {
		return 0
	}
	return len(r.byID)
}

// joinID sets t's outcome from the success files when they judge its id.
func (r *Results) joinID(t *Trajectory) bool {
	v, ok := r.byID[t.ID]
	if ok {
		t.Success, t.Outcome, t.Extra.BySuccessRule = v, OutcomeResults, nil
	}
	return ok
}
