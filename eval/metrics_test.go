package eval

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"bagen-data/reward"
)

// Hand-computed table used by the metric tests. Four trajectories, the
// answers read by reward.Parse and scored by reward.Train (R) and
// reward.Paper (S):
//
//	traj  T  probe  used    r     truth       answer       class   cov  MRE    R     S
//	A     4  p0     200   800     possible    [600, 1000]  pos     yes  0      0.90  0.5
//	A     4  p1     400   600     possible    [300, 500]   pos     no   1/3    0     0     (optimistic)
//	A     4  p2     700   300     possible    impossible   imp     -    -      0     0     (false abort)
//	A     4  p3     900   100     possible    [80, 120]    pos     yes  0      1.08  0.6
//	B     2  p0     100   400     possible    garbage      inv     -    -      0     0
//	B     2  p1     300   200     possible    [250, 350]   pos     no   1/2    0     0     (conservative)
//	C     5  p0     150  1850     impossible  [500, 900]   pos     -    -      0     -
//	C     5  p1     500  1500     impossible  impossible   imp     -    -      0.2   -     (stop: saves 1500)
//	C     5  p3    1400   600     impossible  impossible   imp     -    -      0.2   -
//	D     3  p0     300  2700     impossible  [100, 200]   pos     -    -      0     -
//	D     3  p2    2000  1000     impossible  (missing)    inv     -    -      0     -
//
// Confusion (truth × predicted possible / impossible / invalid):
//
//	possible    4  1  1
//	impossible  2  2  1
func handTable() []Scored {
	row := func(id string, p, T, used, r int64, ok bool, answer string) Scored {
		t := Truth{CustomID: id, TrajectoryID: id[:1], ProbeAfterTurn: p, TotalTurns: T, TokensUsed: used, Target: Tokens(r, ok)}
		return NewScored(t, "<answer>"+answer+"</answer>")
	}
	missing := NewScored(Truth{CustomID: "D2", TrajectoryID: "D", ProbeAfterTurn: 2, TotalTurns: 3, TokensUsed: 2000, Target: Tokens(1000, false)}, "")
	missing.Missing = true
	return []Scored{
		row("A0", 0, 4, 200, 800, true, "[600, 1000]"),
		row("A1", 1, 4, 400, 600, true, "[300, 500]"),
		row("A2", 2, 4, 700, 300, true, "impossible"),
		row("A3", 3, 4, 900, 100, true, "[80, 120]"),
		row("B0", 0, 2, 100, 400, true, "about four hundred"),
		row("B1", 1, 2, 300, 200, true, "[250, 350]"),
		row("C0", 0, 5, 150, 1850, false, "[500, 900]"),
		row("C1", 1, 5, 500, 1500, false, "Impossible"),
		row("C3", 3, 5, 1400, 600, false, "impossible"),
		row("D0", 0, 3, 300, 2700, false, "[100,200]"),
		missing,
	}
}

// approx compares Nums to 1e-12 and treats two NaNs as equal.
var approx = cmp.Options{
	cmp.Comparer(func(a, b Num) bool {
		if !a.Defined() || !b.Defined() {
			return a.Defined() == b.Defined()
		}
		return math.Abs(float64(a-b)) < 1e-12
	}),
	cmpopts.EquateNaNs(),
}

func TestCompute(t *testing.T) {
	got := Compute(handTable())
	got.Bins, got.EarlyStop = nil, EarlyStop{} // pinned by their own tests
	want := Metrics{
		Probes: 11, TruePossible: 6, TrueImpossible: 5, Missing: 1,
		Confusion: Confusion{
			Possible:   Counts{Possible: 4, Impossible: 1, Invalid: 1},
			Impossible: Counts{Possible: 2, Impossible: 2, Invalid: 1},
		},
		Accuracy:            6.0 / 11,
		RecallPossible:      4.0 / 6,
		RecallImpossible:    2.0 / 5,
		PrecisionImpossible: 2.0 / 3,
		FormatValid:         9.0 / 11,
		// F1 possible = 2·4 / (8 + 2 FP + 2 FN) = 2/3; F1 impossible =
		// 2·2 / (4 + 1 FP + 3 FN) = 1/2.
		F1All: (2.0/3 + 0.5) / 2,
		// First turn A0 pos→pos, B0 pos→inv, C0 imp→pos, D0 imp→pos:
		// F1 possible = 2/(2+2+1) = 0.4, F1 impossible = 0/(0+0+2) = 0.
		F1First: 0.2, FirstTurnProbes: 4,
		FailF1:    0.5,
		Intervals: 4, Covered: 2, Coverage: 0.5, HitRate: 2.0 / 6,
		// MRE sorted [0, 0, 1/3, 1/2]: P50 at h = 1.5 → 1/6; P90 at h = 2.7
		// → 1/3 + 0.7·(1/2 − 1/3) = 0.45.
		MREP50: 1.0 / 6, MREP90: 0.45,
		MREMean:  (1.0/3 + 0.5) / 4, // 5/24
		MRECount: 4,
		Reward:   2.38 / 11, Score: 1.1 / 6,
		// R on possible: (0.90 + 1.08) / 6; on impossible: (0.2 + 0.2) / 5.
		RewardPossible: 0.33, RewardImpossible: 0.08,
		// S of the intervals A0 A1 A3 B1: 0.5 + 0 + 0.6 + 0; A0 and A3 cover.
		ScoreIntervals: 1.1 / 4, ScoreCovered: 1.1 / 2,
		Misses: 2, Optimistic: 1, Conservative: 1, OptimisticShare: 0.5, ConservativeShare: 0.5,
		TaskSuccess: 0.5, MeanTurns: 3.5, // A and B of four succeed; (4+2+5+3)/4 turns
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("Compute mismatch (-want +got):\n%s", d)
	}
}

func TestComputeBins(t *testing.T) {
	got := Compute(handTable()).Bins
	want := []Bin{
		// A0 B0 C0 D0
		{Lo: 0, Hi: 0.2, Probes: 4, Intervals: 1, Covered: 1, Coverage: 1, MREP50: 0,
			OptimisticShare: NaN, ConservativeShare: NaN, FailedProbes: 2, FailedCaught: 0, FailedAccuracy: 0},
		// A1 C1
		{Lo: 0.2, Hi: 0.4, Probes: 2, Intervals: 1, Coverage: 0, MREP50: 1.0 / 3, Misses: 1, Optimistic: 1,
			OptimisticShare: 1, ConservativeShare: 0, FailedProbes: 1, FailedCaught: 1, FailedAccuracy: 1},
		// A2 B1 (B1 is p1 of T2: ⌊5·1/2⌋ = 2)
		{Lo: 0.4, Hi: 0.6, Probes: 2, Intervals: 1, Coverage: 0, MREP50: 0.5, Misses: 1, Conservative: 1,
			OptimisticShare: 0, ConservativeShare: 1, FailedAccuracy: NaN},
		// A3 C3 D2
		{Lo: 0.6, Hi: 0.8, Probes: 3, Intervals: 1, Covered: 1, Coverage: 1, MREP50: 0,
			OptimisticShare: NaN, ConservativeShare: NaN, FailedProbes: 2, FailedCaught: 1, FailedAccuracy: 0.5},
		{Lo: 0.8, Hi: 1, Coverage: NaN, MREP50: NaN, OptimisticShare: NaN, ConservativeShare: NaN, FailedAccuracy: NaN},
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("bins mismatch (-want +got):\n%s", d)
	}
}

func TestEarlyStop(t *testing.T) {
	got := Compute(handTable()).EarlyStop
	got.Live, got.Curve = nil, nil // pinned by TestEarlyStopLive and TestEarlyStopCurve
	want := EarlyStop{
		Trajectories: 4, Successful: 2, Failed: 2,
		SuccessProbes: 6, FalseAborts: 1, FalseAbortRate: 1.0 / 6, // A2
		AbortedSuccessful: 1, SuccessDrop: 0.25, // A of 4 trajectories
		StoppedFailed: 1, StoppedFailedShare: 0.5, // C, not D
		// C costs 150+1850, D 300+2700; C stops at p1 and saves 1500.
		FailedTokens: 5000, SavedTokens: 1500, SavedShare: 0.3,
		AbortedSuccessfulShare: 0.5, // A of A and B
		// The estimator answered A0–A2 (A stops at A2), B0 B1, C0 C1 (C
		// stops at C1) and D0 (D2 has no answer); no usage is known, so
		// neither is the net. C's probes list no turns: its 1500 saved
		// tokens are billed as new input.
		Net: Net{EstimatorProbes: 8, WithoutUsage: 8, Share: NaN, SavedInput: 1500, WithoutTurns: 1},
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("early stop mismatch (-want +got):\n%s", d)
	}
}

func TestComputeDoesNotModifyInput(t *testing.T) {
	rows := handTable()
	Compute(rows)
	Bootstrap(rows, 20, 1)
	if d := cmp.Diff(handTable(), rows, cmpopts.EquateNaNs(), cmp.AllowUnexported(reward.Target{})); d != "" {
		t.Errorf("input modified (-before +after):\n%s", d)
	}
}

func TestComputeEmpty(t *testing.T) {
	m := Compute(nil)
	for _, name := range Headline {
		if v := m.Value(name); v.Defined() {
			t.Errorf("%s on no rows: got %v, want undefined", name, float64(v))
		}
	}
	if m.EarlyStop.Trajectories != 0 || len(m.Bins) != ProgressBins {
		t.Errorf("empty: got %d trajectories and %d bins, want 0 and %d", m.EarlyStop.Trajectories, len(m.Bins), ProgressBins)
	}
}

func TestMacroF1(t *testing.T) {
	tests := []struct {
		name string
		c    Confusion
		want Num
	}{
		// Paper appendix "Zero RL no think": all impossible on a balanced set.
		{"all impossible", Confusion{Possible: Counts{Impossible: 190}, Impossible: Counts{Impossible: 190}}, (0 + 2.0/3) / 2},
		// Only one class present anywhere: the absent class is left out.
		{"one class", Confusion{Possible: Counts{Possible: 3}}, 1},
		{"invalid only", Confusion{Possible: Counts{Invalid: 2}}, 0},
		{"empty", Confusion{}, NaN},
		// TP 5, FP 1, FN 2+1 → 10/14; impossible TP 3, FP 2, FN 1 → 6/9.
		{"mixed", Confusion{Possible: Counts{Possible: 5, Impossible: 2, Invalid: 1}, Impossible: Counts{Possible: 1, Impossible: 3}}, (10.0/14 + 6.0/9) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.MacroF1(); !cmp.Equal(got, tt.want, approx) {
				t.Errorf("MacroF1(%+v): got %v, want %v", tt.c, float64(got), float64(tt.want))
			}
		})
	}
}

func TestPercentileLinear(t *testing.T) {
	xs := []float64{0.5, 0, 1.0 / 3, 0, math.NaN()}
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"median of four", xs, 50, 1.0 / 6},
		{"p90 of four", xs, 90, 0.45},
		{"p0", xs, 0, 0},
		{"p100", xs, 100, 0.5},
		// numpy.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) = 9.1
		{"numpy p90", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90, 9.1},
		{"one value", []float64{7}, 90, 7},
		{"empty", nil, 50, math.NaN()},
		{"all NaN", []float64{math.NaN()}, 50, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]float64(nil), tt.xs...)
			got := PercentileLinear(tt.xs, tt.q)
			if !cmp.Equal(got, tt.want, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-12)) {
				t.Errorf("PercentileLinear(%v, %v): got %v, want %v", tt.xs, tt.q, got, tt.want)
			}
			if !cmp.Equal(before, tt.xs, cmpopts.EquateNaNs()) {
				t.Errorf("PercentileLinear modified its input: got %v, want %v", tt.xs, before)
			}
		})
	}
}

func TestProgressBin(t *testing.T) {
	tests := []struct {
		p, T int64
		want int
	}{
		{0, 4, 0}, {1, 4, 1}, {2, 4, 2}, {3, 4, 3}, {1, 5, 1}, {4, 5, 4}, {5, 5, 4},
		{1, 10, 0}, {2, 10, 1}, {9, 10, 4}, {7, 0, 0}, {3, 3, 4},
	}
	for _, tt := range tests {
		if got := ProgressBin(tt.p, tt.T); got != tt.want {
			t.Errorf("ProgressBin(%d, %d): got %d, want %d", tt.p, tt.T, got, tt.want)
		}
	}
}

// TestComputeMalformed pins how scalars and reversed intervals count: both
// claim feasibility, neither is a well-formed interval for Cover and MRE
// nor has the required format (the paper gives both zero reward).
func TestComputeMalformed(t *testing.T) {
	truth := func(id string) Truth {
		return Truth{CustomID: id, TrajectoryID: id, TotalTurns: 2, Target: Tokens(500, true)}
	}
	rows := []Scored{
		NewScored(truth("scalar"), "<answer>500</answer>"),
		NewScored(truth("reversed"), "<answer>[900, 100]</answer>"),
		NewScored(truth("good"), "<answer>[400, 500]</answer>"),
	}
	m := Compute(rows)
	if m.RecallPossible != 1 || m.Intervals != 1 || m.Covered != 1 || m.FormatValid != Num(1.0/3) {
		t.Errorf("got recall %v, intervals %d, covered %d, format-valid %v; want 1, 1, 1, 1/3",
			float64(m.RecallPossible), m.Intervals, m.Covered, float64(m.FormatValid))
	}
	// Only [400, 500] scores: 1.8·(1 − 100/500) = 1.44, mean 0.48; S 0.8/3.
	if !cmp.Equal(m.Reward, Num(0.48), approx) || !cmp.Equal(m.Score, Num(0.8/3), approx) {
		t.Errorf("got R %v, S %v; want 0.48, 0.2667", float64(m.Reward), float64(m.Score))
	}
	if !cmp.Equal(m.MREP50, Num(0.1), approx) {
		t.Errorf("got MRE P50 %v, want 0.1 (midpoint 450 vs 500)", float64(m.MREP50))
	}
}

// TestFirstTurn pins which probes F1@1 scores: the probes at the set's
// first position (p = 0 in build's sets, k = 1 in replay sets); a rollout
// without a probe there is left out, not scored at a later probe.
func TestFirstTurn(t *testing.T) {
	probe := func(traj string, p int64) Scored {
		return Scored{CustomID: fmt.Sprintf("%s%d", traj, p), TrajectoryID: traj, ProbeAfterTurn: p}
	}
	tests := []struct {
		name string
		rows []Scored
		want []string
	}{
		{"build: p = 0", []Scored{probe("a", 0), probe("a", 1), probe("b", 1), probe("b", 0)}, []string{"a0", "b0"}},
		{"replay: k = 1", []Scored{probe("a", 1), probe("a", 2), probe("b", 1), probe("a", 3)}, []string{"a1", "b1"}},
		// SWE-bench subsampling keeps some prefixes only: e's first probe,
		// after turn 10, is not a first-turn probe; duplicated rows of a
		// first probe all count.
		{"subsampled", []Scored{probe("c", 5), probe("c", 1), probe("d", 2), probe("e", 10), probe("c", 1), probe("d", 1)}, []string{"c1", "c1", "d1"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range probesAt(tt.rows, FirstTurn(tt.rows)) {
				got = append(got, r.CustomID)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("firstTurn (-want +got):\n%s", d)
			}
		})
	}
}

// TestF1FirstReplay: on a replay set (first probe after turn 1) F1@1 is
// the macro-F1 of the first probes, no longer undefined.
func TestF1FirstReplay(t *testing.T) {
	row := func(id string, p int64, ok bool, answer string) Scored {
		return NewScored(Truth{CustomID: id, TrajectoryID: id[:1], ProbeAfterTurn: p, TotalTurns: 4, Target: Tokens(100, ok)}, "<answer>"+answer+"</answer>")
	}
	m := Compute([]Scored{
		row("a1", 1, true, "[50, 150]"), row("a2", 2, true, "impossible"),
		row("b1", 1, false, "[50, 150]"), row("b2", 2, false, "impossible"),
		row("c1", 1, false, "impossible"),
	})
	// First probes a1 pos→pos, b1 imp→pos, c1 imp→imp: F1 possible
	// 2/(2+1) = 2/3, F1 impossible 2/(2+1) = 2/3.
	if m.FirstTurnProbes != 3 || !cmp.Equal(m.F1First, Num(2.0/3), approx) {
		t.Errorf("got F1@1 %v over %d probes, want 2/3 over 3", float64(m.F1First), m.FirstTurnProbes)
	}
}

// TestMRECount pins the n of MRE P50/P90: the intervals whose relative
// error is defined (r > 0), not every interval.
func TestMRECount(t *testing.T) {
	truth := func(id string, r int64) Truth {
		return Truth{CustomID: id, TrajectoryID: id, TotalTurns: 2, Target: Tokens(r, true)}
	}
	rows := []Scored{
		NewScored(truth("zero", 0), "<answer>[0, 0]</answer>"),
		NewScored(truth("zero-wide", 0), "<answer>[0, 10]</answer>"),
		NewScored(truth("half", 200), "<answer>[100, 200]</answer>"),
	}
	m := Compute(rows)
	if m.Intervals != 3 || m.Covered != 3 || m.MRECount != 1 || m.MREP50 != 0.25 {
		t.Fatalf("got %d intervals (%d covered), MRE n %d, P50 %v; want 3 (3), 1, 0.25", m.Intervals, m.Covered, m.MRECount, float64(m.MREP50))
	}
	var b strings.Builder
	if err := WriteText(&b, m); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "MRE" {
			n++
			if len(f) != 4 || f[3] != "1" {
				t.Errorf("%q: want n 1", line)
			}
		}
	}
	if n != 2 {
		t.Errorf("got %d MRE lines, want 2:\n%s", n, b.String())
	}
}
