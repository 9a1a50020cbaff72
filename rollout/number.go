package rollout

import (
	"encoding/json"
	"math"
	"strconv"
)

// whole reads an optional token count: absent or null is Unrecorded;
// otherwise it must be a non-negative whole number. Python writers often
// write integral counts as floats (96.0, 1e2); those are accepted.
func whole(rec Record, field string, raw json.RawMessage) (int64, error) {
	v, ok := present(raw)
	if !ok {
		return Unrecorded, nil
	}
	n, err := parseWhole(v)
	if err != nil {
		return 0, rec.Errorf(field, "%w", err)
	}
	if n < 0 {
		return 0, rec.Errorf(field, "want a non-negative count, got %d", n)
	}
	return n, nil
}

// wholeOr0 is whole with absent meaning 0 (breakdowns such as reasoning
// and cached tokens, which are 0 when not recorded).
func wholeOr0(rec Record, field string, raw json.RawMessage) (int64, error) {
	n, err := whole(rec, field, raw)
	if n == Unrecorded {
		n = 0
	}
	return n, err
}

// optionalWhole is whole as a pointer: nil when absent or null, so that a
// recorded 0 stays apart from a missing count.
func optionalWhole(rec Record, field string, raw json.RawMessage) (*int64, error) {
	n, err := whole(rec, field, raw)
	if err != nil || n == Unrecorded {
		return nil, err
	}
	return &n, nil
}

type wholeError struct{ got string }

func (e wholeError) Error() string { return "want a whole number, got " + e.got }

// parseWhole parses a JSON value that must be a whole number in int64.
func parseWhole(v json.RawMessage) (int64, error) {
	s := string(v)
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, wholeError{clipJSON(v)}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRange(err) || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, wholeError{s}
	}
	return int64(f), nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// clipJSON shows a JSON value in a message, shortened when long.
func clipJSON(v json.RawMessage) string {
	const max = 40
	if len(v) > max {
		return string(v[:max]) + "…"
	}
	return string(v)
}
