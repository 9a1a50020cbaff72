package reward

import (
	"fmt"
	"math"
	"strings"

	"bagen-data/internal/jsonlex"
)

// ParseLabel reads a token-budget label: the label column's JSON
// {"remaining_tokens":N,"is_possible":B,"ground_truth":"…"}, the bare
// string "impossible" (any case of its ASCII letters), or a bare non-negative integer, which is
// the r of a possible probe. White space around the label is ignored.
// A Warehouse label is an error here; use ParseTarget. Errors wrap
// ErrLabel and name the field.
func ParseLabel(label string) (Truth, error) {
	t, err := ParseTarget(label)
	if err != nil {
		return Truth{}, err
	}
	tr, ok := t.Tokens()
	if !ok {
		return Truth{}, fmt.Errorf("%w: holds warehouse dimensions, want remaining_tokens", ErrLabel)
	}
	return tr, nil
}

// ParseTarget reads a label column of either kind into a Target (the
// ground_truth key is not read: a parsed token target's GroundTruth is "").
// Besides the forms ParseLabel accepts, a JSON object with any of
// time_weeks, warehouse_item_weeks and cumulative_cost_usd (non-negative
// numbers, the true remaining usage) is a Warehouse label; a possible one
// needs all three. In JSON labels is_possible is required,
// remaining_tokens is required when is_possible is true and kept when it
// is false (the tokens the failed rollout went on to spend; Truth), null
// counts as absent, unknown keys are ignored and the last of duplicate
// keys wins. An impossible label without remaining_tokens, or the bare
// "impossible", has Remaining 0. Successful parses of labels without
// escapes in their keys do not allocate.
func ParseTarget(label string) (Target, error) {
	s := strings.TrimSpace(label)
	switch {
	case asciiEqualFold(s, "impossible"):
		return Target{}, nil
	case len(s) > 0 && s[0] == '{':
		return parseObject(s)
	}
	if n := asciiDigits(s); n == len(s) && n > 0 {
		v, _ := readDigits(s, 0)
		if v == math.MaxInt64 && !fitsInt64(s) {
			return Target{}, fmt.Errorf("%w: remaining tokens %s out of range", ErrLabel, s)
		}
		return TokenTarget(Truth{Remaining: v, Possible: true}, ""), nil
	}
	return Target{}, fmt.Errorf("%w: want a JSON object, \"impossible\" or a non-negative integer, got %q", ErrLabel, clip(s, 40))
}

// asciiDigits returns the length of the run of ASCII digits that starts s
// (a label is written by a program, in ASCII).
func asciiDigits(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// fitsInt64 reports whether the digit string s is at most math.MaxInt64.
func fitsInt64(s string) bool {
	s = strings.TrimLeft(s, "0")
	const max = "9223372036854775807"
	return len(s) < len(max) || len(s) == len(max) && s <= max
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// labelFields collects the keys of a JSON label.
type labelFields struct {
	remaining             int64
	possible              bool
	hasRemaining, hasPoss bool
	dims                  [NumDims]float64
	hasDim                [NumDims]bool
	// anyDim: a warehouse key appeared, even as null.
	anyDim bool
}

func parseObject(s string) (Target, error) {
	var d jsonlex.Decoder
	d.ResetString(s)
	var f labelFields
	d.Begin('{')
	for i := 0; d.Next(i, '}'); i++ {
		key := d.Key()
		if d.Err() != nil {
			break
		}
		if err := f.read(&d, key); err != nil {
			return Target{}, err
		}
	}
	d.Finish()
	if err := d.Err(); err != nil {
		return Target{}, fmt.Errorf("%w: %w", ErrLabel, err)
	}
	return f.target()
}

// read decodes the value of key into f.
func (f *labelFields) read(d *jsonlex.Decoder, key []byte) error {
	if d.Null() {
		f.clear(key)
		return nil
	}
	if _, ok := dimIndex(key); ok {
		f.anyDim = true
	}
	switch string(key) {
	case "remaining_tokens":
		f.remaining, f.hasRemaining = d.Int(), true
		if d.Err() == nil && f.remaining < 0 {
			return fmt.Errorf("%w: remaining_tokens: want a non-negative integer, got %d", ErrLabel, f.remaining)
		}
	case "is_possible":
		f.possible, f.hasPoss = d.Bool(), true
	default:
		dim, ok := dimIndex(key)
		if !ok {
			d.Skip()
			break
		}
		v := d.Float()
		if d.Err() == nil && v < 0 {
			return fmt.Errorf("%w: %s: want a non-negative number, got %v", ErrLabel, string(key), v)
		}
		f.dims[dim], f.hasDim[dim] = v, true
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLabel, string(key), err)
	}
	return nil
}

func (f *labelFields) clear(key []byte) {
	switch string(key) {
	case "remaining_tokens":
		f.hasRemaining = false
	case "is_possible":
		f.hasPoss = false
	default:
		if dim, ok := dimIndex(key); ok {
			f.hasDim[dim], f.anyDim = false, true
		}
	}
}

func dimIndex(key []byte) (Dim, bool) {
	for d, name := range dimNames {
		if string(key) == name {
			return Dim(d), true
		}
	}
	return 0, false
}

func (f *labelFields) target() (Target, error) {
	if !f.hasPoss {
		return Target{}, fmt.Errorf("%w: is_possible: missing", ErrLabel)
	}
	if f.anyDim {
		if !f.possible {
			return WarehouseTarget(WarehouseTruth{}), nil
		}
		for d, ok := range f.hasDim {
			if !ok {
				return Target{}, fmt.Errorf("%w: %s: missing", ErrLabel, Dim(d))
			}
		}
		return WarehouseTarget(WarehouseTruth{Remaining: f.dims, Possible: true}), nil
	}
	if !f.possible {
		if !f.hasRemaining {
			return Target{}, nil
		}
		return TokenTarget(Truth{Remaining: f.remaining}, ""), nil
	}
	if !f.hasRemaining {
		return Target{}, fmt.Errorf("%w: remaining_tokens: missing", ErrLabel)
	}
	return TokenTarget(Truth{Remaining: f.remaining, Possible: true}, ""), nil
}
