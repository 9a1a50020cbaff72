package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Num is a metric value. NaN means undefined (a ratio over an empty set, such
// as coverage when the model gave no interval); it is encoded as JSON null
// and printed as "-".
type Num float64

// NaN is the undefined Num.
var NaN = Num(math.NaN())

// Defined reports whether n is a number rather than undefined.
func (n Num) Defined() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// MarshalJSON encodes n as a JSON number, or null when undefined.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Defined() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON decodes a JSON number, or null as undefined.
func (n *Num) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = NaN
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Pct formats n as a percentage with one decimal ("91.1%"), or "-".
func (n Num) Pct() string {
	if !n.Defined() {
		return "-"
	}
	return strconv.FormatFloat(100*float64(n), 'f', 1, 64) + "%"
}

// Fixed formats n with prec decimals, or "-".
func (n Num) Fixed(prec int) string {
	if !n.Defined() {
		return "-"
	}
	return strconv.FormatFloat(float64(n), 'f', prec, 64)
}

// ratio is a/b, undefined when b is 0.
func ratio(a, b int) Num {
	if b == 0 {
		return NaN
	}
	return Num(float64(a) / float64(b))
}
