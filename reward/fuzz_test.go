package reward

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The reference rules written as the regular expressions of a Python
// implementation; FuzzParse checks Parse against them. (Go's \s lacks \v,
// so the white space class is spelled out.)
var (
	refAnswer   = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)
	refInterval = regexp.MustCompile(`\[[ \t\n\r\f\v]*([0-9]+)[ \t\n\r\f\v]*,[ \t\n\r\f\v]*([0-9]+)[ \t\n\r\f\v]*\]`)
	refScalar   = regexp.MustCompile(`^[0-9]+$`)
)

func refParse(s string) Prediction {
	m := refAnswer.FindStringSubmatch(s)
	if m == nil {
		return Prediction{}
	}
	ans := strings.TrimSpace(m[1])
	if strings.EqualFold(ans, "impossible") {
		return Prediction{Kind: Impossible}
	}
	if m := refInterval.FindStringSubmatch(ans); m != nil {
		return Prediction{Kind: Interval, Low: refInt(m[1]), High: refInt(m[2])}
	}
	if refScalar.MatchString(ans) {
		v := refInt(ans)
		return Prediction{Kind: Scalar, Low: v, High: v}
	}
	return Prediction{}
}

func refInt(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return math.MaxInt64 // only range errors remain: saturate
	}
	return v
}

func FuzzParse(f *testing.F) {
	f.Add("<answer>[1, 2]</answer>")
	f.Fuzz(func(t *testing.T, s string) {
		got := Parse(s)
		if want := refParse(s); got != want {
			t.Fatalf("Parse(%q) = %+v, reference %+v", s, got, want)
		}
		if allocs := testing.AllocsPerRun(5, func() { Parse(s) }); allocs != 0 {
			t.Fatalf("Parse(%q) allocates %v times, want 0", s, allocs)
		}
		for _, truth := range []Truth{{Remaining: 150, Possible: true}, {Remaining: 0, Possible: true}, {}} {
			r := Train.Score(got, truth)
			if r < 0 || r > 1.8 || !truth.Possible && r != 0 && r != 0.2 {
				t.Fatalf("Train.Score(%+v, %+v) = %v, out of range", got, truth, r)
			}
			d := Train.Detail(got, truth)
			if d.Reward != r || d.Covered && !d.Interval || d.Class != got.Class() {
				t.Fatalf("Train.Detail(%+v, %+v) = %+v, inconsistent with score %v", got, truth, d, r)
			}
		}
	})
}

func FuzzParseWarehouse(f *testing.F) {
	f.Add("<answer>time_weeks:[2, 4]</answer>")
	f.Fuzz(func(t *testing.T, s string) {
		w := ParseWarehouse(s)
		set := false
		for _, g := range w.Dims {
			set = set || g.Set
			if g.Set && (g.Low < 0 || g.High < 0 || math.IsNaN(g.Low) || math.IsNaN(g.High)) {
				t.Fatalf("ParseWarehouse(%q) = %+v: bad bound", s, w)
			}
		}
		if set != (w.Kind == Interval) || w.Kind == Scalar {
			t.Fatalf("ParseWarehouse(%q) = %+v: kind does not match dimensions", s, w)
		}
		if w.Kind == Impossible && Parse(s).Kind != Impossible {
			t.Fatalf("ParseWarehouse(%q) is impossible but Parse is %+v", s, Parse(s))
		}
		if allocs := testing.AllocsPerRun(5, func() { ParseWarehouse(s) }); allocs != 0 {
			t.Fatalf("ParseWarehouse(%q) allocates %v times, want 0", s, allocs)
		}
		truth := WarehouseTruth{Remaining: [3]float64{3, 120, 1500}, Possible: true}
		if r := Train.ScoreWarehouse(w, truth); r < 0 || r > 1.8 || math.IsNaN(r) {
			t.Fatalf("Train.ScoreWarehouse(%+v) = %v, out of range", w, r)
		}
	})
}
