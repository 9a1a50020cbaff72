package server

import (
	"errors"
	"fmt"
	"strconv"

	"bagen-data/internal/jsonlex"
	"bagen-data/reward"
)

// native answers the batch API:
//
//	{"items": [{"response": str, "remaining_tokens": int, "is_possible": bool}]}
//	→ {"rewards": [float], "details": [{…}]}
//
// An item gives its truth as remaining_tokens and is_possible, as the
// three Warehouse dimensions (time_weeks, warehouse_item_weeks,
// cumulative_cost_usd) and is_possible, or as a label string in the label
// column's format. Details are reward.Detail or reward.WarehouseDetail as
// JSON.
func (h *handler) native(st *state) (int, error) {
	d := &st.dec
	d.Reset(st.body)
	seen := false
	if !d.Begin('{') {
		return 0, bodyError(st.body, d.Err())
	}
	for i := 0; d.Next(i, '}'); i++ {
		if key := d.Key(); string(key) != "items" {
			d.Skip()
			continue
		}
		seen = true
		if err := h.items(st); err != nil {
			return 0, err
		}
	}
	d.Finish()
	switch {
	case d.Err() != nil:
		return 0, bodyError(st.body, d.Err())
	case !seen:
		return 0, &FieldError{Path: "items", Err: errMissing}
	case len(st.results) == 0:
		return 0, &FieldError{Path: "items", Err: errors.New("empty batch")}
	}
	st.out = appendNative(st.out[:0], st.results)
	return len(st.results), nil
}

// items decodes and scores the items array.
func (h *handler) items(st *state) error {
	d := &st.dec
	st.results = st.results[:0]
	if !d.Begin('[') {
		return &FieldError{Path: "items", Err: d.Err()}
	}
	for i := 0; d.Next(i, ']'); i++ {
		var f itemFields
		if err := f.decode(d); err != nil {
			return &FieldError{Path: "items[" + strconv.Itoa(i) + "]" + err.Path, Err: err.Err}
		}
		t, err := f.target()
		if err != nil {
			return &FieldError{Path: "items[" + strconv.Itoa(i) + "]" + err.Path, Err: err.Err}
		}
		st.results = append(st.results, h.judge(st, f.response, t))
	}
	if d.Err() != nil {
		return &FieldError{Path: "items", Err: d.Err()}
	}
	return nil
}

// itemFields collects one item's keys.
type itemFields struct {
	response, label       []byte
	hasResponse, hasLabel bool
	remaining             int64
	hasRemaining          bool
	possible, hasPossible bool
	dims                  [reward.NumDims]float64
	hasDim                [reward.NumDims]bool
}

// decode reads one item object. Errors carry the key as ".key".
func (f *itemFields) decode(d *jsonlex.Decoder) *FieldError {
	if !d.Begin('{') {
		return &FieldError{Err: d.Err()}
	}
	for j := 0; d.Next(j, '}'); j++ {
		key := d.Key()
		if d.Err() != nil {
			break
		}
		f.read(d, key)
		if d.Err() != nil {
			return &FieldError{Path: "." + string(key), Err: d.Err()}
		}
	}
	if d.Err() != nil {
		return &FieldError{Err: d.Err()}
	}
	return nil
}

func (f *itemFields) read(d *jsonlex.Decoder, key []byte) {
	switch string(key) {
	case "response":
		f.response, f.hasResponse = d.Str(), true
	case "label":
		f.label, f.hasLabel = d.Str(), true
	case "remaining_tokens":
		f.remaining, f.hasRemaining = d.Int(), true
	case "is_possible":
		f.possible, f.hasPossible = d.Bool(), true
	case "time_weeks":
		f.dims[reward.TimeWeeks], f.hasDim[reward.TimeWeeks] = d.Float(), true
	case "warehouse_item_weeks":
		f.dims[reward.WarehouseItemWeeks], f.hasDim[reward.WarehouseItemWeeks] = d.Float(), true
	case "cumulative_cost_usd":
		f.dims[reward.CumulativeCostUSD], f.hasDim[reward.CumulativeCostUSD] = d.Float(), true
	default:
		d.Skip()
	}
}

// target builds the item's truth; errors carry the key as ".key".
func (f *itemFields) target() (reward.Target, *FieldError) {
	if !f.hasResponse {
		return reward.Target{}, &FieldError{Path: ".response", Err: errMissing}
	}
	if f.hasLabel {
		t, err := reward.ParseTarget(view(f.label))
		if err != nil {
			return t, &FieldError{Path: ".label", Err: err}
		}
		return t, nil
	}
	if !f.hasPossible {
		return reward.Target{}, &FieldError{Path: ".is_possible", Err: errMissing}
	}
	if f.hasDim != [reward.NumDims]bool{} {
		return f.warehouse()
	}
	switch {
	case !f.possible:
		return reward.Target{}, nil
	case !f.hasRemaining:
		return reward.Target{}, &FieldError{Path: ".remaining_tokens", Err: errMissing}
	case f.remaining < 0:
		return reward.Target{}, &FieldError{Path: ".remaining_tokens", Err: fmt.Errorf("want a non-negative integer, got %d", f.remaining)}
	}
	return reward.TokenTarget(reward.Truth{Remaining: f.remaining, Possible: true}, ""), nil
}

func (f *itemFields) warehouse() (reward.Target, *FieldError) {
	if !f.possible {
		return reward.WarehouseTarget(reward.WarehouseTruth{}), nil
	}
	for d, ok := range f.hasDim {
		name := "." + reward.Dim(d).String()
		if !ok {
			return reward.Target{}, &FieldError{Path: name, Err: errMissing}
		}
		if f.dims[d] < 0 {
			return reward.Target{}, &FieldError{Path: name, Err: fmt.Errorf("want a non-negative number, got %v", f.dims[d])}
		}
	}
	return reward.WarehouseTarget(reward.WarehouseTruth{Remaining: f.dims, Possible: true}), nil
}

func appendNative(b []byte, rs []result) []byte {
	b = append(b, `{"rewards":`...)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return reward.AppendFloat(b, r.Reward) })
	b = append(b, `,"details":`...)
	b = appendList(b, rs, func(b []byte, r *result) []byte { return r.AppendJSON(b) })
	return append(b, '}')
}
