package eval

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
)

// costTable is two build-style trajectories (a probe before each turn)
// with budgets, per-turn usage and the estimator's usage:
//
//   - F fails (budget 800, 900 tokens): system prompt 100, turns
//     (in, out) = (200, 100), (50, 150), (60, 240), so the context after
//     turn k is U = 100, 400, 600, 900; answered [100, 300], [300, 700],
//     impossible;
//   - S succeeds (budget 1000, 700 tokens): system prompt 100, turns
//     (200, 100), (100, 200), U = 100, 400, 700; answered [300, 500],
//     [200, 700].
func costTable() []Scored {
	t1, t2 := dataset.TurnTokens{Turn: 1, InputTokens: 200, OutputTokens: 100}, dataset.TurnTokens{Turn: 2, InputTokens: 50, OutputTokens: 150}
	row := func(traj string, p, T, budget, used, r int64, turns []dataset.TurnTokens, answer string, u prediction.Usage) Scored {
		t := Truth{CustomID: traj + dataset.ProbeSuffix + string(rune('0'+p)), TrajectoryID: traj, ProbeAfterTurn: p, TotalTurns: T,
			TokensUsed: used, Budget: budget, Turns: turns, Target: Tokens(r, used+r <= budget)}
		s := NewScored(t, "<answer>"+answer+"</answer>")
		s.Usage = &u
		return s
	}
	return []Scored{
		row("F", 0, 3, 800, 300, 600, nil, "[100, 300]", prediction.Usage{PromptTokens: 500, CompletionTokens: 10}),
		row("F", 1, 3, 800, 400, 500, []dataset.TurnTokens{t1}, "[300, 700]", prediction.Usage{PromptTokens: 700, CachedTokens: 450, CompletionTokens: 12}),
		row("F", 2, 3, 800, 600, 300, []dataset.TurnTokens{t1, t2}, "impossible", prediction.Usage{PromptTokens: 900, CachedTokens: 650, CompletionTokens: 8}),
		row("S", 0, 2, 1000, 300, 400, nil, "[300, 500]", prediction.Usage{PromptTokens: 400, CompletionTokens: 10}),
		row("S", 1, 2, 1000, 400, 300, []dataset.TurnTokens{t1}, "[200, 700]", prediction.Usage{PromptTokens: 600, CachedTokens: 350, CompletionTokens: 10}),
	}
}

func i64(v int64) *int64 { return &v }

func TestEarlyStopNet(t *testing.T) {
	got := Compute(costTable()).EarlyStop
	// F stops at its impossible p2 and saves its 300 remaining tokens; the
	// refused call 3 comes after the last probe: its 300 tokens are billed
	// as new input with U(2) = 600 re-read. The estimator answered all
	// five probes (S never stops): prompt 500+700+900+400+600 = 3100, of
	// them cached 450+650+350 = 1450, completion 10+12+8+10+10 = 50.
	want := Net{
		EstimatorProbes: 5, EstimatorPromptTokens: 3100, EstimatorCachedTokens: 1450, EstimatorCompletionTokens: 50,
		EstimatorTokens: i64(3150), Tokens: i64(300 - 3150), Share: Num(-2850.0 / 900),
		SavedInput: 300, SavedCached: 600,
	}
	if d := cmp.Diff(want, got.Net, approx); d != "" {
		t.Errorf("net (-want +got):\n%s", d)
	}
	if got.SavedTokens != 300 || got.FailedTokens != 900 || got.AbortedSuccessful != 0 || got.AbortedSuccessfulShare != 0 {
		t.Errorf("gross: got saved %d of %d, %d successful aborted (%v), want 300 of 900, 0 (0)",
			got.SavedTokens, got.FailedTokens, got.AbortedSuccessful, got.AbortedSuccessfulShare)
	}
}

func TestEarlyStopLive(t *testing.T) {
	live := Compute(costTable()).EarlyStop.Live
	// Without F0 and S0: F stops at p2 as before; the estimator answered
	// F1, F2 and S1: prompt 700+900+600, cached 450+650+350, completion
	// 12+8+10.
	want := EarlyStop{
		Trajectories: 2, Successful: 1, Failed: 1, SuccessProbes: 1, FalseAbortRate: 0, SuccessDrop: 0,
		StoppedFailed: 1, StoppedFailedShare: 1, FailedTokens: 900, SavedTokens: 300, SavedShare: Num(300.0 / 900),
		AbortedSuccessfulShare: 0, NotAsked: 2,
		Net: Net{
			EstimatorProbes: 3, EstimatorPromptTokens: 2200, EstimatorCachedTokens: 1450, EstimatorCompletionTokens: 30,
			EstimatorTokens: i64(2230), Tokens: i64(300 - 2230), Share: Num(-1930.0 / 900), SavedInput: 300, SavedCached: 600,
		},
	}
	if live == nil {
		t.Fatal("no live replay")
	}
	if d := cmp.Diff(want, *live, approx); d != "" {
		t.Errorf("live (-want +got):\n%s", d)
	}
}

func TestEarlyStopCurve(t *testing.T) {
	got := Compute(costTable()).EarlyStop.Curve
	// H / (budget − tokens_used): F0 300/500 = 0.6, F1 700/400 = 1.75,
	// S0 500/700 ≈ 0.714, S1 700/600 ≈ 1.167; F2 is impossible.
	//   θ ≥ 2: F stops at F2 only: saves 300, spends 3150.
	//   θ 1.5, 1.25: F stops at F1 (saves 500); S runs on: the estimator
	//     read F0 F1 S0 S1: 500+700+400+600 + 10+12+10+10 = 2242.
	//   θ 1, 0.75: S stops at S1 too (1 of 1 aborted; S1 of S's 2 probes).
	//   θ 0.5: F and S stop at their first probes: saves 600, spends
	//     500+10+400+10 = 920; both of S's probes would stop.
	//   θ 0.25: the same.
	type pt struct {
		saved            int64
		aborted          int
		falseAbort       Num
		net              int64
		savedShare, harm Num
	}
	late := pt{300, 0, 0, 300 - 3150, Num(300.0 / 900), 0}
	mid := pt{500, 0, 0, 500 - 2242, Num(500.0 / 900), 0}
	midAbort := pt{500, 1, 0.5, 500 - 2242, Num(500.0 / 900), 1}
	early := pt{600, 1, 1, 600 - 920, Num(600.0 / 900), 1}
	want := []pt{late, late, late, mid, mid, midAbort, midAbort, early, early}
	if len(got) != len(want) {
		t.Fatalf("got %d points, want %d", len(got), len(want))
	}
	for i, p := range got {
		w := want[i]
		if p.SavedTokens != w.saved || p.AbortedSuccessful != w.aborted || p.NetTokens == nil || *p.NetTokens != w.net ||
			!cmp.Equal(p.FalseAbortRate, w.falseAbort, approx) || !cmp.Equal(p.SavedShare, w.savedShare, approx) ||
			!cmp.Equal(p.AbortedSuccessfulShare, w.harm, approx) {
			t.Errorf("θ %v: got %+v (net %v), want %+v", CurveThresholds[i], p, p.NetTokens, w)
		}
		if th := CurveThresholds[i]; (math.IsInf(th, 1) && p.Upper.Defined()) || (!math.IsInf(th, 1) && float64(p.Upper) != th) {
			t.Errorf("point %d: upper %v, want %v", i, p.Upper, th)
		}
	}
}

func TestBilled(t *testing.T) {
	rows := costTable()
	f0, f1, f2 := rows[0], rows[1], rows[2]
	tests := []struct {
		name                  string
		stop, last            Scored
		input, cached, output int64
		ok                    bool
	}{
		// Calls 1 and 2 from the per-turn usage (in 200+50, history
		// U(0)+U(1) = 100+400, out 100+150), call 3 after the last probe
		// as 300 new tokens re-reading U(2) = 600.
		{"stop before turn 1", f0, f2, 250 + 300, 500 + 600, 250, true},
		{"stop after turn 1", f1, f2, 50 + 300, 400 + 600, 150, true},
		{"stop at the last probe", f2, f2, 300, 600, 0, true},
		{"no per-turn usage", f2, func() Scored { s := f2; s.Turns = nil; return s }(), 300, 0, 0, false},
		{"turns contradict tokens_used", f1, func() Scored { s := f2; s.TokensUsed = 100; return s }(), 500, 0, 0, false},
	}
	for _, tt := range tests {
		in, cached, out, ok := Billed(tt.stop, tt.last)
		if in != tt.input || cached != tt.cached || out != tt.output || ok != tt.ok {
			t.Errorf("%s: got (%d, %d, %d, %v), want (%d, %d, %d, %v)", tt.name, in, cached, out, ok, tt.input, tt.cached, tt.output, tt.ok)
		}
	}
}

func TestEarlyStopPrice(t *testing.T) {
	e := Compute(costTable()).EarlyStop
	e.Price(prediction.Prices{In: 2, Cached: 0.5, Out: 8}, prediction.Prices{In: 1, Cached: 0.25, Out: 4})
	d := e.Net.Dollars
	// Saved: 300 new × $2 + 600 re-read × $0.5 = $900 per million.
	// Estimator: (3100 − 1450) × $1 + 1450 × $0.25 + 50 × $4 = $2212.5
	// per million.
	if d == nil || math.Abs(d.Saved-900e-6) > 1e-15 || !cmp.Equal(d.Estimator, Num(2212.5e-6), approx) ||
		!cmp.Equal(d.Net, Num(900e-6-2212.5e-6), approx) {
		t.Errorf("dollars: got %+v, want saved 0.0009, estimator 0.0022125", d)
	}
	if e.Live == nil || e.Live.Net.Dollars == nil {
		t.Errorf("live replay not priced")
	}
	// Unknown usage leaves the estimator's dollars unknown, not zero.
	rows := costTable()
	rows[3].Usage = nil
	u := Compute(rows).EarlyStop
	u.Price(prediction.Prices{In: 2, Out: 8}, prediction.Prices{In: 1, Out: 4})
	if u.Net.Tokens != nil || u.Net.WithoutUsage != 1 || u.Net.Dollars.Estimator.Defined() || u.Net.Dollars.Net.Defined() {
		t.Errorf("one probe without usage: got net %v, %+v, want unknown", u.Net.Tokens, u.Net.Dollars)
	}
}
