package server

import (
	"errors"
	"fmt"
	"strconv"

	"bagen-data/internal/jsonlex"
	"bagen-data/reward"
)

var errMissing = errors.New("missing")

// openRLHF answers OpenRLHF's remote reward protocol:
//
//	{"query": [str], "prompts": [str], "labels": [str]}
//	→ {"rewards": [float], "scores": [float], "extra_logs": {…}}
//
// query[i] is prompt + response as decoded by the trainer; prompts is
// optional. extra_logs holds numeric lists (trainers turn them into
// tensors): covered (1 if the interval covers r; for Warehouse the
// fraction of dimensions covered), interval (1 for a well-formed interval;
// Warehouse: fraction of dimensions), pred_class (reward.Class: 0 invalid,
// 1 possible, 2 impossible) and truth_possible (0 or 1).
func (h *handler) openRLHF(st *state) (int, error) {
	query, prompts, labels, hasPrompts, err := st.decodeOpenRLHF()
	if err != nil {
		return 0, err
	}
	for i := range query {
		t, err := reward.ParseTarget(view(st.str(labels[i])))
		if err != nil {
			return 0, labelError(i, labels[i], err)
		}
		var prompt jstr
		if hasPrompts {
			prompt = prompts[i]
		}
		st.results = append(st.results, h.judge(st, st.response(query[i], prompt, hasPrompts), t))
	}
	st.out = appendOpenRLHF(st.out[:0], st.results)
	return len(st.results), nil
}

// labelError is the error for labels[i]: OpenRLHF sends "" for every
// label when it was not told the label column.
func labelError(i int, label jstr, err error) error {
	if len(label.raw) == 0 {
		err = errNoLabel{"empty", openRLHFLabelHint}
	}
	return &FieldError{Path: "labels[" + strconv.Itoa(i) + "]", Err: err}
}

// decodeOpenRLHF reads the request's three string lists.
func (st *state) decodeOpenRLHF() (query, prompts, labels []jstr, hasPrompts bool, err error) {
	d := &st.dec
	d.Reset(st.body)
	var seen [3]bool
	if !d.Begin('{') {
		return nil, nil, nil, false, bodyError(st.body, d.Err())
	}
	for i := 0; d.Next(i, '}'); i++ {
		key := d.Key()
		k := -1
		switch string(key) {
		case "query":
			k = 0
		case "prompts":
			k = 1
		case "labels":
			k = 2
		}
		if k < 0 {
			d.Skip()
			continue
		}
		if k == 1 && d.Null() {
			continue
		}
		seen[k] = true
		// A prompt is sent again as the start of its query: whichever
		// list comes second is scanned only where it differs.
		var known []jstr
		if k < 2 && seen[1-k] {
			known = st.strs[1-k]
		}
		if st.strs[k], err = readStrings(d, openRLHFFields[k], st.strs[k][:0], known); err != nil {
			return nil, nil, nil, false, err
		}
	}
	d.Finish()
	if err := d.Err(); err != nil {
		return nil, nil, nil, false, bodyError(st.body, err)
	}
	query, prompts, labels = st.strs[0], st.strs[1], st.strs[2]
	switch {
	case !seen[0]:
		return nil, nil, nil, false, &FieldError{Path: "query", Err: errMissing}
	case !seen[2]:
		return nil, nil, nil, false, &FieldError{Path: "labels", Err: errNoLabel{"missing", openRLHFLabelHint}}
	case len(query) == 0:
		return nil, nil, nil, false, &FieldError{Path: "query", Err: errors.New("empty batch")}
	case len(labels) != len(query):
		return nil, nil, nil, false, &FieldError{Path: "labels", Err: fmt.Errorf("has %d items, query has %d", len(labels), len(query))}
	case seen[1] && len(prompts) != len(query):
		return nil, nil, nil, false, &FieldError{Path: "prompts", Err: fmt.Errorf("has %d items, query has %d", len(prompts), len(query))}
	}
	return query, prompts, labels, seen[1], nil
}

// openRLHFFields names the request's lists, indexed as in decodeOpenRLHF.
var openRLHFFields = [3]string{"query", "prompts", "labels"}

// readStrings reads a JSON array of strings into dst, validated but not
// unescaped; known[i], where present, likely shares a prefix with item i
// (jsonlex.Decoder.RawStrPrefix).
func readStrings(d *jsonlex.Decoder, field string, dst, known []jstr) ([]jstr, error) {
	if !d.Begin('[') {
		return dst, &FieldError{Path: field, Err: d.Err()}
	}
	for i := 0; d.Next(i, ']'); i++ {
		var raw []byte
		var esc bool
		if i < len(known) {
			raw, esc = d.RawStrPrefix(known[i].raw)
		} else {
			raw, esc = d.RawStr()
		}
		if d.Err() != nil {
			return dst, &FieldError{Path: field + "[" + strconv.Itoa(i) + "]", Err: d.Err()}
		}
		dst = append(dst, jstr{raw, esc})
	}
	if d.Err() != nil {
		return dst, &FieldError{Path: field, Err: d.Err()}
	}
	return dst, nil
}

func appendOpenRLHF(b []byte, rs []result) []byte {
	b = append(b, `{"rewards":`...)
	from := len(b)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return reward.AppendFloat(b, r.Reward) })
	to := len(b)
	b = append(b, `,"scores":`...)
	b = append(b, b[from:to]...) // the same list
	b = append(b, `,"extra_logs":{"covered":`...)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return reward.AppendFloat(b, r.Covered()) })
	b = append(b, `,"interval":`...)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return reward.AppendFloat(b, r.Intervals()) })
	b = append(b, `,"pred_class":`...)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return strconv.AppendInt(b, int64(r.Class), 10) })
	b = append(b, `,"truth_possible":`...)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return strconv.AppendInt(b, int64(b2i(r.Possible)), 10) })
	return append(b, "}}"...)
}

func appendList(b []byte, rs []result, f func([]byte, *result) []byte) []byte {
	b = append(b, '[')
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = f(b, &rs[i])
	}
	return append(b, ']')
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
