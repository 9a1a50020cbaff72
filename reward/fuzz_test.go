package reward

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The reference rules written as the regular expressions of the authors'
// budget_probe_reward.py (parse_answer), with Python's classes spelled out
// from testdata/python-unicode.txt, which Python wrote: \s is its
// str.isspace() characters (Go's \s has only ASCII ones and no \v) and \d
// its decimal digits, read by int() as their digit values. FuzzParse
// checks Parse against them.
var (
	pySpaces, pyZeros = pythonUnicode()
	pyS               = "[" + classOf(pySpaces) + "]"
	pyD               = "[" + digitClass(pyZeros) + "]"
	refAnswer         = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)
	refInterval       = regexp.MustCompile(`\[` + pyS + `*(` + pyD + `+)` + pyS + `*,` + pyS + `*(` + pyD + `+)` + pyS + `*\]`)
	refScalar         = regexp.MustCompile(`^` + pyD + `+$`)
)

// pythonUnicode reads the white space and the zeros of the digit runs.
func pythonUnicode() (spaces, zeros []rune) {
	b, err := os.ReadFile("testdata/python-unicode.txt")
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "#" {
			continue
		}
		for _, h := range f[1:] {
			v, err := strconv.ParseInt(h, 16, 32)
			if err != nil {
				panic(err)
			}
			if f[0] == "space" {
				spaces = append(spaces, rune(v))
			} else {
				zeros = append(zeros, rune(v))
			}
		}
	}
	return spaces, zeros
}

func classOf(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, `\x{%x}`, r)
	}
	return b.String()
}

func digitClass(zeros []rune) string {
	var b strings.Builder
	for _, z := range zeros {
		fmt.Fprintf(&b, `\x{%x}-\x{%x}`, z, z+9)
	}
	return b.String()
}

func pyIsSpace(r rune) bool { return slices.Contains(pySpaces, r) }

// pyDigits spells a run of Python decimal digits in ASCII.
func pyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		for _, z := range pyZeros {
			if z <= r && r <= z+9 {
				b.WriteByte(byte('0' + r - z))
			}
		}
	}
	return b.String()
}

func refParse(s string) Prediction {
	m := refAnswer.FindStringSubmatch(s)
	if m == nil {
		return Prediction{}
	}
	ans := strings.TrimFunc(m[1], pyIsSpace)
	if strings.ToLower(ans) == "impossible" && !strings.ContainsFunc(ans, func(r rune) bool { return r >= utf8.RuneSelf }) {
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
	v, err := strconv.ParseInt(pyDigits(s), 10, 64)
	if err != nil {
		return math.MaxInt64 // only range errors remain: saturate
	}
	return v
}

// newerDigits reports a digit Go's Unicode tables have and the Python that
// wrote the reference classes does not (its Unicode is older).
func newerDigits(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.Is(unicode.Nd, r) && pyDigits(string(r)) == ""
	})
}

func FuzzParse(f *testing.F) {
	f.Add("<answer>[1, 2]</answer>")
	f.Add("<answer>\x1c[１００, ２００]\u3000</answer>")
	f.Add("<answer>\u0663\U0001D7D7</answer>")
	f.Fuzz(func(t *testing.T, s string) {
		got := Parse(s)
		if want := refParse(s); got != want && !newerDigits(s) {
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
	f.Add("<answer>time:[２.５, ４], cost:[\u0661\u0660.\u0665, 99999999999999999999999999999999999.5]</answer>")
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
		// Only a number of more than 32 digits some of which are not ASCII
		// is spelled in ASCII on the heap (readDecimal).
		if allocs := testing.AllocsPerRun(5, func() { ParseWarehouse(s) }); allocs != 0 && !longUnicodeNumber(s) {
			t.Fatalf("ParseWarehouse(%q) allocates %v times, want 0", s, allocs)
		}
		truth := WarehouseTruth{Remaining: [3]float64{3, 120, 1500}, Possible: true}
		if r := Train.ScoreWarehouse(w, truth); r < 0 || r > 1.8 || math.IsNaN(r) {
			t.Fatalf("Train.ScoreWarehouse(%+v) = %v, out of range", w, r)
		}
	})
}

// longUnicodeNumber reports a run of more than 32 decimal digits and dots
// with a non-ASCII digit in it.
func longUnicodeNumber(s string) bool {
	run, wide := 0, false
	for _, r := range s {
		switch {
		case r == '.' || '0' <= r && r <= '9':
			run++
		case unicode.Is(unicode.Nd, r):
			run++
			wide = true
		default:
			run, wide = 0, false
		}
		if run > 32 && wide {
			return true
		}
	}
	return false
}
