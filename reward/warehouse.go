package reward

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Dim is one of the Warehouse task's three budget dimensions.
type Dim uint8

// The Warehouse dimensions, in the order of the paper's output format.
const (
	TimeWeeks Dim = iota
	WarehouseItemWeeks
	CumulativeCostUSD
	// NumDims is the number of dimensions.
	NumDims = 3
)

var dimNames = [NumDims]string{"time_weeks", "warehouse_item_weeks", "cumulative_cost_usd"}

// String returns the dimension's label in the paper's output format.
func (d Dim) String() string {
	if int(d) < NumDims {
		return dimNames[d]
	}
	return "dim(" + itoa(int64(d)) + ")"
}

// dimAliases are the labels ParseWarehouse accepts, compared ignoring case.
var dimAliases = [...]struct {
	name string
	dim  Dim
}{
	{"time_weeks", TimeWeeks}, {"time", TimeWeeks},
	{"warehouse_item_weeks", WarehouseItemWeeks}, {"warehouse", WarehouseItemWeeks},
	{"cumulative_cost_usd", CumulativeCostUSD}, {"cumulative_cost", CumulativeCostUSD}, {"cost", CumulativeCostUSD},
}

// Range is one predicted interval of a Warehouse answer. Set reports that
// the answer held this dimension; Low > High is kept as read.
type Range struct {
	Low, High float64
	Set       bool
}

// Warehouse is a parsed Warehouse answer. Kind is Impossible, Interval
// (at least one dimension was read) or Unparseable; Dims is indexed by Dim.
type Warehouse struct {
	Kind Kind
	Dims [NumDims]Range
}

// ParseWarehouse reads a Warehouse answer. The answer is found and
// trimmed as in Parse, and "impossible" (any case) is Impossible. Else
// every "label:[lo, hi]" in the answer is read, where label is one of
// time_weeks/time, warehouse_item_weeks/warehouse,
// cumulative_cost_usd/cumulative_cost/cost (any case, optionally quoted),
// the colon is ':' or the full-width '：', and lo, hi are non-negative
// decimals (digits with an optional fraction) with optional white space
// around the colon, brackets and comma. The first occurrence of each
// dimension counts. No dimension read → Unparseable. It does not allocate.
func ParseWarehouse(response string) Warehouse {
	ans, ok := Answer(response)
	if !ok {
		return Warehouse{}
	}
	if asciiEqualFold(ans, "impossible") {
		return Warehouse{Kind: Impossible}
	}
	var w Warehouse
	for i := 0; i < len(ans); i++ {
		width := colonAt(ans, i)
		if width == 0 {
			continue
		}
		dim, ok := labelBefore(ans, i)
		if !ok || w.Dims[dim].Set {
			continue
		}
		if lo, hi, ok := decimalIntervalAt(ans, i+width); ok {
			w.Dims[dim] = Range{Low: lo, High: hi, Set: true}
			w.Kind = Interval
		}
	}
	return w
}

const fullWidthColon = "："

// colonAt returns the byte length of a colon at s[i:], or 0.
func colonAt(s string, i int) int {
	if s[i] == ':' {
		return 1
	}
	if strings.HasPrefix(s[i:], fullWidthColon) {
		return len(fullWidthColon)
	}
	return 0
}

// labelBefore reads the identifier ending before s[end], skipping white
// space and quotes, and maps it to a dimension.
func labelBefore(s string, end int) (Dim, bool) {
	for end > 0 {
		if c := s[end-1]; c == '"' || c == '\'' {
			end--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[:end])
		if !(r < utf8.RuneSelf && isSpace(byte(r)) || r >= utf8.RuneSelf && unicode.IsSpace(r)) {
			break
		}
		end -= n
	}
	start := end
	for start > 0 && isIdent(s[start-1]) {
		start--
	}
	word := s[start:end]
	for _, a := range dimAliases {
		if strings.EqualFold(word, a.name) {
			return a.dim, true
		}
	}
	return 0, false
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// decimalIntervalAt matches `\s*\[\s*D\s*,\s*D\s*\]` at s[p:], D a decimal.
func decimalIntervalAt(s string, p int) (lo, hi float64, ok bool) {
	p = skipSpace(s, p)
	if p >= len(s) || s[p] != '[' {
		return 0, 0, false
	}
	p = skipSpace(s, p+1)
	lo, n := readDecimal(s, p)
	if n == 0 {
		return 0, 0, false
	}
	p = skipSpace(s, p+n)
	if p >= len(s) || s[p] != ',' {
		return 0, 0, false
	}
	p = skipSpace(s, p+1)
	hi, n = readDecimal(s, p)
	if n == 0 {
		return 0, 0, false
	}
	p = skipSpace(s, p+n)
	if p >= len(s) || s[p] != ']' {
		return 0, 0, false
	}
	return lo, hi, true
}

// readDecimal reads `\d+(\.\d+)?` at s[p:] (decimal digits as in Parse,
// full-width ones included), returning its value and byte length. Integer
// parts too long for a float64 read as +Inf. It does not allocate for
// numbers of up to 32 digits.
func readDecimal(s string, p int) (float64, int) {
	_, n := readDigits(s, p)
	if n == 0 {
		return 0, 0
	}
	intEnd := p + n
	if intEnd+1 < len(s) && s[intEnd] == '.' {
		if _, m := readDigits(s, intEnd+1); m > 0 {
			n += 1 + m
		}
	}
	num := s[p : p+n]
	if asciiDigits(s[p:intEnd]) == intEnd-p && (n == intEnd-p || asciiDigits(s[intEnd+1:p+n]) == p+n-intEnd-1) {
		return parseASCII(num), n
	}
	var buf [32]byte
	b := buf[:0]
	digits, lead, frac := 0, true, false // integer digits after leading zeros
	for i := 0; i < len(num); {
		d, w := digitAt(num, i)
		if w == 0 { // the '.'
			b = append(b, '.')
			frac = true
			i++
			continue
		}
		if lead = lead && d == 0; !lead && !frac {
			digits++
		}
		b = append(b, byte('0'+d))
		i += w
	}
	if digits > 308 {
		return math.Inf(1), n
	}
	// This conversion does not escape: it stays on the stack while it
	// fits buf.
	return parseASCII(string(b)), n
}

// parseASCII reads num, `[0-9]+(\.[0-9]+)?`; integer parts too long for a
// float64 read as +Inf.
func parseASCII(num string) float64 {
	lead := 0
	for lead < len(num)-1 && num[lead] == '0' && num[lead+1] != '.' {
		lead++
	}
	if dot := strings.IndexByte(num, '.'); dot-lead > 308 || dot < 0 && len(num)-lead > 308 {
		return math.Inf(1)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return math.Inf(1)
	}
	return v
}

// WarehouseTruth is a Warehouse probe's label: the true remaining usage
// per dimension and whether the rollout still meets the target within all
// three budgets. Remaining is ignored when Possible is false.
type WarehouseTruth struct {
	Remaining [NumDims]float64
	Possible  bool
}

// ScoreWarehouse scores a Warehouse answer:
//
//   - truth impossible: r.Impossible iff p is Impossible, else 0;
//   - truth possible: r.Possible × the mean over the three dimensions of
//     coverage × tightness, 1[lo ≤ v ≤ hi] · max(0, 1 − (hi − lo)/v), where
//     v is the true remaining usage; a missing or reversed dimension scores
//     0, and at v = 0 only [0, 0] scores 1. Impossible and unparseable
//     answers score 0.
func (r Rule) ScoreWarehouse(p Warehouse, t WarehouseTruth) float64 {
	if !t.Possible {
		if p.Kind == Impossible {
			return r.Impossible
		}
		return 0
	}
	if p.Kind != Interval {
		return 0
	}
	var sum float64
	for d := range NumDims {
		sum += dimScore(p.Dims[d], t.Remaining[d])
	}
	return r.Possible * (sum / NumDims)
}

func dimScore(g Range, v float64) float64 {
	if !g.Set || g.Low > g.High || g.Low > v || v > g.High {
		return 0
	}
	if v == 0 {
		if g.High == 0 {
			return 1
		}
		return 0
	}
	return math.Max(0, 1-(g.High-g.Low)/v)
}

// ScoreWarehouse parses response and scores it with the Train rule.
func ScoreWarehouse(response string, t WarehouseTruth) float64 {
	return Train.ScoreWarehouse(ParseWarehouse(response), t)
}

// DimDetail describes one dimension of a Warehouse answer, with the
// conventions of Detail: the interval fields are zero or NaN unless
// Interval (the dimension was read and lo ≤ hi) is true, and RelWidth and
// MidRelErr are NaN when the truth is impossible or v ≤ 0.
type DimDetail struct {
	Score     float64
	Interval  bool
	Covered   bool
	Width     float64
	RelWidth  float64
	MidRelErr float64
}

// WarehouseDetail is the per-sample breakdown of a Warehouse score.
// Class is ClassPossible when any dimension was read.
type WarehouseDetail struct {
	Reward float64
	Class  Class
	Dims   [NumDims]DimDetail
}

// DetailWarehouse scores p against t and describes every dimension.
func (r Rule) DetailWarehouse(p Warehouse, t WarehouseTruth) WarehouseDetail {
	w := WarehouseDetail{Reward: r.ScoreWarehouse(p, t), Class: Prediction{Kind: p.Kind}.Class()}
	for d := range NumDims {
		w.Dims[d] = dimDetail(p.Kind, p.Dims[d], t, Dim(d))
	}
	return w
}

func dimDetail(k Kind, g Range, t WarehouseTruth, d Dim) DimDetail {
	dd := DimDetail{RelWidth: math.NaN(), MidRelErr: math.NaN()}
	if k != Interval || !g.Set || g.Low > g.High {
		return dd
	}
	dd.Interval, dd.Width = true, g.High-g.Low
	if !t.Possible {
		return dd
	}
	v := t.Remaining[d]
	dd.Score = dimScore(g, v)
	dd.Covered = g.Low <= v && v <= g.High
	if v > 0 {
		dd.RelWidth = dd.Width / v
		dd.MidRelErr = math.Abs((g.Low+g.High)/2-v) / v
	}
	return dd
}

// AppendJSON appends w as a JSON object: reward, class, and dims, an
// object keyed by dimension name holding score, interval, covered, width,
// rel_width and mid_rel_err (NaN as null).
func (w WarehouseDetail) AppendJSON(b []byte) []byte {
	b = append(b, `{"reward":`...)
	b = AppendFloat(b, w.Reward)
	b = append(b, `,"class":"`...)
	b = append(b, w.Class.String()...)
	b = append(b, `","dims":{`...)
	for d, dd := range w.Dims {
		if d > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, dimNames[d]...)
		b = append(b, `":{"score":`...)
		b = AppendFloat(b, dd.Score)
		b = append(b, `,"interval":`...)
		b = strconv.AppendBool(b, dd.Interval)
		b = append(b, `,"covered":`...)
		b = strconv.AppendBool(b, dd.Covered)
		b = append(b, `,"width":`...)
		b = AppendFloat(b, dd.Width)
		b = append(b, `,"rel_width":`...)
		b = AppendFloat(b, dd.RelWidth)
		b = append(b, `,"mid_rel_err":`...)
		b = AppendFloat(b, dd.MidRelErr)
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// MarshalJSON encodes w as AppendJSON does.
func (w WarehouseDetail) MarshalJSON() ([]byte, error) { return w.AppendJSON(nil), nil }
