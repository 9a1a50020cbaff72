package server

import (
	"bagen-data/reward"
)

// slime answers slime's --rm-url protocol:
//
//	{"prompt": str, "response": str, "label": str} → a bare JSON number.
//
// The prompt is not needed: slime sends the response on its own.
func (h *handler) slime(st *state) (int, error) {
	response, label, err := st.decodeSlime()
	if err != nil {
		return 0, err
	}
	t, err := reward.ParseTarget(view(label))
	if err != nil {
		return 0, &FieldError{Path: "label", Err: err}
	}
	res := h.judge(st, stripEnd(response), t)
	st.out = reward.AppendFloat(st.out[:0], res.Reward)
	return 1, nil
}

func (st *state) decodeSlime() (response, label []byte, err error) {
	d := &st.dec
	d.Reset(st.body)
	var hasResponse, hasLabel bool
	if !d.Begin('{') {
		return nil, nil, bodyError(st.body, d.Err())
	}
	for i := 0; d.Next(i, '}'); i++ {
		key := d.Key()
		switch string(key) {
		case "response":
			response, hasResponse = d.Str(), true
		case "label":
			// slime sends null when it was not told the label column.
			if !d.Null() {
				label, hasLabel = d.Str(), true
			}
		default:
			d.Skip()
		}
		if d.Err() != nil && len(key) > 0 {
			return nil, nil, &FieldError{Path: string(key), Err: d.Err()}
		}
	}
	d.Finish()
	switch {
	case d.Err() != nil:
		return nil, nil, bodyError(st.body, d.Err())
	case !hasResponse:
		return nil, nil, &FieldError{Path: "response", Err: errMissing}
	case !hasLabel || len(label) == 0:
		return nil, nil, &FieldError{Path: "label", Err: errNoLabel{"missing, null or empty", slimeLabelHint}}
	}
	return response, label, nil
}
