package reward

import (
	"math"
	"strconv"
)

// Detail is the per-sample breakdown of a score, for logs and metrics
// (the paper's Cover and MRE columns).
//
// The interval fields describe the predicted interval only when Interval
// is true. A scalar or a reversed interval claims feasibility (Class is
// ClassPossible) but is not an interval the rule can score: Interval is
// false, Covered false, Width 0, RelWidth and MidRelErr NaN; the point is
// in Prediction.Low. The same zero/NaN values are reported for impossible
// and unparseable answers.
//
//   - Covered: the truth is possible and L ≤ r ≤ H.
//   - Width: H − L.
//   - RelWidth: (H − L)/r.
//   - MidRelErr: |(L + H)/2 − r| / r, the midpoint relative error.
//
// RelWidth and MidRelErr are NaN when the truth is impossible or r ≤ 0
// (there is no r to divide by). JSON encodes NaN as null.
type Detail struct {
	Reward    float64
	Class     Class
	Interval  bool
	Covered   bool
	Width     int64
	RelWidth  float64
	MidRelErr float64
}

// Detail scores p against t and describes the prediction.
func (r Rule) Detail(p Prediction, t Truth) Detail {
	d := Detail{Reward: r.Score(p, t), Class: p.Class(), RelWidth: math.NaN(), MidRelErr: math.NaN()}
	if !p.Valid() {
		return d
	}
	d.Interval = true
	d.Width = p.High - p.Low
	if !t.Possible {
		return d
	}
	rem := t.Remaining
	d.Covered = p.Low <= rem && rem <= p.High
	if rem > 0 {
		fr := float64(rem)
		d.RelWidth = float64(d.Width) / fr
		d.MidRelErr = math.Abs(p.Mid()-fr) / fr
	}
	return d
}

// AppendJSON appends d as a JSON object with the keys reward, class,
// interval, covered, width, rel_width and mid_rel_err (NaN as null).
func (d Detail) AppendJSON(b []byte) []byte {
	b = append(b, `{"reward":`...)
	b = AppendFloat(b, d.Reward)
	b = append(b, `,"class":"`...)
	b = append(b, d.Class.String()...)
	b = append(b, `","interval":`...)
	b = strconv.AppendBool(b, d.Interval)
	b = append(b, `,"covered":`...)
	b = strconv.AppendBool(b, d.Covered)
	b = append(b, `,"width":`...)
	b = strconv.AppendInt(b, d.Width, 10)
	b = append(b, `,"rel_width":`...)
	b = AppendFloat(b, d.RelWidth)
	b = append(b, `,"mid_rel_err":`...)
	b = AppendFloat(b, d.MidRelErr)
	return append(b, '}')
}

// MarshalJSON encodes d as AppendJSON does.
func (d Detail) MarshalJSON() ([]byte, error) { return d.AppendJSON(nil), nil }

// AppendFloat appends f as encoding/json would, and NaN or ±Inf as null.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if i := int64(f); float64(i) == f && i > -1<<53 && i < 1<<53 && (i != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, i, 10) // whole numbers, 0 above all, skip the float formatter
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
