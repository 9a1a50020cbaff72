package rollout

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// SuccessRule is a way to read a rollout's success from its metadata. The
// readers' rule is the zero value; a compat picks another once, where it
// decodes (Trajectory.WithSuccessRule).
type SuccessRule uint8

const (
	// FirstPresentSuccess is the readers' rule: the first non-null of
	// success, rollout_success, rollout_resolved (Python truthiness), else
	// any key ending in "/success" whose value equals 1, else false.
	FirstPresentSuccess SuccessRule = iota
	// BagenV1Success is infer_task_success of the authors'
	// scripts/budget-rl/prepare_budget_probe.py (mll-lab-nu/BAGEN
	// 58bef4c): the first of success, rollout_success, rollout_resolved
	// that is there decides, even when null (false); else the first key in
	// file order ending in "/success" decides, float(v) == 1.0, or Python
	// truthiness where float(v) fails; else false. For an estimation
	// dialogue it is bool(rollout_success), to which the authors'
	// TokenEstimationEnv adds the success of the turns it keeps.
	BagenV1Success
	successRules
)

// SuccessByRule is the success a rollout's metadata gives under each
// SuccessRule, indexed by the rule.
type SuccessByRule [successRules]bool

// WithSuccessRule returns t with Success read by rule r when t's metadata
// decides it (t.BySuccessRule is set: rollout JSONL and estimation
// dialogues); any other t is returned as it is.
func (t Trajectory) WithSuccessRule(r SuccessRule) Trajectory {
	if t.Extra.BySuccessRule != nil && r < successRules {
		t.Success = t.Extra.BySuccessRule[r]
	}
	return t
}

// metadataSuccesses applies every rule to a rollout's metadata; data is
// the record, read again for the metadata's key order only when that
// order decides.
func metadataSuccesses(md map[string]json.RawMessage, data []byte) *SuccessByRule {
	return &SuccessByRule{
		FirstPresentSuccess: metadataSuccess(md),
		BagenV1Success:      bagenV1Success(md, data),
	}
}

// bagenV1Success is infer_task_success (see BagenV1Success).
func bagenV1Success(md map[string]json.RawMessage, data []byte) bool {
	for _, k := range []string{"success", "rollout_success", "rollout_resolved"} {
		if v, ok := md[k]; ok {
			v = bytes.TrimSpace(v)
			return len(v) > 0 && truthy(v)
		}
	}
	var first string
	n := 0
	for k := range md {
		if strings.HasSuffix(k, "/success") {
			first, n = k, n+1
		}
	}
	switch {
	case n == 0:
		return false
	case n > 1:
		first = firstSuffixKey(data, "/success")
	}
	return pyFloatIsOne(bytes.TrimSpace(md[first]))
}

// firstSuffixKey is the first key of data's metadata object, in file
// order, that ends in suffix.
func firstSuffixKey(data []byte, suffix string) string {
	var w struct {
		Metadata orderedKeys `json:"metadata"`
	}
	json.Unmarshal(data, &w) // data decoded once already: it is valid
	for _, k := range w.Metadata {
		if strings.HasSuffix(k, suffix) {
			return k
		}
	}
	return ""
}

// orderedKeys are a JSON object's keys in file order (a key that repeats
// keeps its first place, as in a Python dict).
type orderedKeys []string

func (o *orderedKeys) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
		if !seen[k] {
			seen[k] = true
			*o = append(*o, k)
		}
	}
	return nil
}

// pyFloatIsOne is Python's float(v) == 1.0 for a JSON value v, falling
// back to bool(v) where float(v) raises (null, arrays, objects, strings
// that are not numbers).
func pyFloatIsOne(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case 't':
		return true
	case 'f', 'n', '[', '{':
		return truthy(v)
	case '"':
		var s string
		json.Unmarshal(v, &s)
		if f, ok := pyFloat(s); ok {
			return f == 1
		}
		return s != ""
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return (err == nil || isRange(err)) && f == 1
}

// pyFloat is Python's float(s) for a string: white space around it
// ignored, decimal digits with single underscores between them, an
// optional exponent, inf, infinity and nan in any case.
func pyFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	var b strings.Builder
	for i, r := range body {
		switch {
		case r >= '0' && r <= '9', r == '.', r == 'e', r == 'E', r == '+', r == '-':
			b.WriteRune(r)
		case r == '_' && i > 0 && i+1 < len(body) && isDigit(body[i-1]) && isDigit(body[i+1]):
		default:
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s[:len(s)-len(body)]+b.String(), 64)
	return f, err == nil || isRange(err)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
