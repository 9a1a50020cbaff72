package probes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

func jsonl(data string) rollout.Record {
	return rollout.Record{Pos: rollout.Position{File: "w.jsonl", Line: 3, Index: -1}, Data: []byte(data)}
}

const okStep = `{"time_weeks":2,"warehouse_item_weeks":0,"cumulative_cost_usd":1,"cash_usd":5}`

func TestDecodeLedger(t *testing.T) {
	rs := readWarehouse(t)
	want := Ledger{
		Steps: []Step{
			{Usage{2, 0, 80926.6}, 319073.4},
			{Usage{4, 1800, 160200}, 239800},
			{Usage{6, 5200, 231400.25}, 198000},
			{Usage{8, 7400, 300100.75}, 120000},
		},
		FinalCashUSD: 120000,
	}
	if diff := cmp.Diff(want, rs[0].Ledger); diff != "" {
		t.Errorf("wh_a (-want +got):\n%s", diff)
	}
}

func TestDecodeLedgerErrors(t *testing.T) {
	tests := []struct {
		name string
		rec  rollout.Record
		want string
	}{
		{"no metadata", jsonl(`{"custom_id":"x"}`), "w.jsonl:3: metadata: missing"},
		{"no steps", jsonl(`{"metadata":{"final_cash_usd":1}}`), "w.jsonl:3: metadata.steps: missing or empty"},
		{"empty steps", jsonl(`{"metadata":{"steps":[],"final_cash_usd":1}}`), "w.jsonl:3: metadata.steps: missing or empty"},
		{"no final cash", jsonl(`{"metadata":{"steps":[` + okStep + `]}}`), "w.jsonl:3: metadata.final_cash_usd: missing"},
		{"null final cash", jsonl(`{"metadata":{"steps":[` + okStep + `],"final_cash_usd":null}}`), "w.jsonl:3: metadata.final_cash_usd: missing"},
		{"missing key", jsonl(`{"metadata":{"final_cash_usd":1,"steps":[{"time_weeks":2,"warehouse_item_weeks":0,"cumulative_cost_usd":1}]}}`),
			"w.jsonl:3: metadata.steps[0].cash_usd: missing"},
		{"quoted number", jsonl(`{"metadata":{"final_cash_usd":1,"steps":[{"time_weeks":"2","warehouse_item_weeks":0,"cumulative_cost_usd":1,"cash_usd":5}]}}`),
			`w.jsonl:3: metadata.steps[0].time_weeks: want a number, got "2"`},
		{"out of range", jsonl(`{"metadata":{"final_cash_usd":1e400,"steps":[` + okStep + `]}}`),
			"w.jsonl:3: metadata.final_cash_usd: want a number, got 1e400"},
		{"negative usage", jsonl(`{"metadata":{"final_cash_usd":-7,"steps":[{"time_weeks":2,"warehouse_item_weeks":-1,"cumulative_cost_usd":1,"cash_usd":-7}]}}`),
			"w.jsonl:3: metadata.steps[0].warehouse_item_weeks: want a non-negative number, got -1"},
		{"decreasing usage", jsonl(`{"metadata":{"final_cash_usd":1,"steps":[` + okStep + `,{"time_weeks":4,"warehouse_item_weeks":0,"cumulative_cost_usd":0.5,"cash_usd":5}]}}`),
			"w.jsonl:3: metadata.steps[1].cumulative_cost_usd: cumulative usage decreases from 1 to 0.5"},
		{"step not an object", jsonl(`{"metadata":{"final_cash_usd":1,"steps":[` + okStep + `,5]}}`),
			"w.jsonl:3: metadata.steps[1]: want an object, got JSON number"},
		{"metadata not an object", jsonl(`{"metadata":"x"}`), "w.jsonl:3: metadata: want an object, got JSON string"},
		{"steps not an array", jsonl(`{"metadata":{"steps":{}}}`), "w.jsonl:3: metadata.steps: want an array, got JSON object"},
		{"dialogue", rollout.Record{Pos: rollout.Position{File: "d.json", Index: 2}, Data: []byte(`{"turns":[]}`), Format: rollout.Dialogue},
			"d.json[2]: metadata.steps: estimation dialogues carry no warehouse usage; want canonical JSONL rollouts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeLedger(tt.rec)
			var pe *ParseError
			if err == nil || err.Error() != tt.want || !errors.As(err, &pe) {
				t.Errorf("got %v, want *ParseError %q", err, tt.want)
			}
		})
	}
}

func FuzzDecodeLedger(f *testing.F) {
	file, err := os.ReadFile(filepath.Join("testdata", "replay", "warehouse.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(file)), "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"metadata":{"final_cash_usd":1,"steps":[` + okStep + `,{"time_weeks":1}]}}`))
	f.Add([]byte(`{"metadata":{"final_cash_usd":-1e308,"steps":[{"time_weeks":0,"warehouse_item_weeks":0,"cumulative_cost_usd":0,"cash_usd":null}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeLedger(jsonl(string(data)))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if len(l.Steps) == 0 || math.IsInf(l.FinalCashUSD, 0) || math.IsNaN(l.FinalCashUSD) {
			t.Fatalf("accepted %+v", l)
		}
		var prev Usage
		for i, s := range l.Steps {
			if !s.Usage.Within(Usage{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64}) || !prev.Within(s.Usage) {
				t.Fatalf("step %d: %+v after %+v", i, s.Usage, prev)
			}
			prev = s.Usage
		}
	})
}

func readWarehouse(t *testing.T) []Replay {
	t.Helper()
	rs, err := ReadReplays(context.Background(), []rollout.Source{rollout.FileSource(filepath.Join("testdata", "replay", "warehouse.jsonl"))}, ReplayOptions{Ledger: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestReadReplaysLedgerSteps(t *testing.T) {
	data := `{"custom_id":"x","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],` +
		`"metadata":{"success":true,"final_cash_usd":1,"steps":[` + okStep + `,` + okStep + `]}}` + "\n"
	src := rollout.Source{Name: "two.jsonl", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil }}
	_, err := ReadReplays(context.Background(), []rollout.Source{src}, ReplayOptions{Ledger: true})
	if want := "two.jsonl:1: metadata.steps: 2 steps for 1 turns, want one step per turn"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestFeasible(t *testing.T) {
	l := Ledger{Steps: []Step{{Usage{2, 10, 100}, 50}, {Usage{4, 30, 250.5}, 80}}, FinalCashUSD: 80}
	c := Challenge{TargetCashUSD: 80, Budget: Usage{4, 30, 250.5}}
	tests := []struct {
		name    string
		edit    func(*Challenge)
		success bool
		want    bool
	}{
		{"every total exactly at its budget", func(*Challenge) {}, true, true},
		{"failed rollout", func(*Challenge) {}, false, false},
		{"target one dollar higher", func(c *Challenge) { c.TargetCashUSD = 81 }, true, false},
		{"time budget short", func(c *Challenge) { c.Budget.TimeWeeks = 3.99 }, true, false},
		{"warehouse budget short", func(c *Challenge) { c.Budget.WarehouseItemWeeks = 29 }, true, false},
		{"cost budget short by a cent", func(c *Challenge) { c.Budget.CostUSD = 250.49 }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := c
			tt.edit(&cc)
			if got := cc.Feasible(l, tt.success); got != tt.want {
				t.Errorf("Feasible(%+v, success %v) = %v, want %v", cc, tt.success, got, tt.want)
			}
		})
	}
}

// tenRollouts are successful three-turn rollouts r0 … r9; r_i uses
// 6 weeks, 1000·(i+1) item-weeks and $10,000·(i+1), and ends with
// final·(i+1) cash.
func tenRollouts(final float64) []ChallengeInput {
	var rs []ChallengeInput
	for i := range 10 {
		f := float64(i + 1)
		rs = append(rs, ChallengeInput{ID: fmt.Sprintf("r%d", i), Success: true, Ledger: Ledger{
			Steps:        []Step{{Usage{2, 100 * f, 2000 * f}, 0}, {Usage{4, 400 * f, 5000 * f}, 0}, {Usage{6, 1000 * f, 10000 * f}, 0}},
			FinalCashUSD: final * f,
		}})
	}
	return rs
}

func TestChallengesHalfReachable(t *testing.T) {
	rs := tenRollouts(50000)
	chs, err := Challenges(rs, HalfReachable, 42)
	if err != nil {
		t.Fatal(err)
	}
	reachable, feasible := 0, 0
	for i, c := range chs {
		l, total := rs[i].Ledger, rs[i].Ledger.Total()
		if c.Feasible(l, true) {
			feasible++
		}
		if c.Reachable {
			reachable++
			checkReachable(t, rs[i], c)
			continue
		}
		if c.Feasible(l, true) {
			t.Errorf("%s: unreachable challenge %+v is met", rs[i].ID, c)
		}
		for _, d := range []struct {
			name        string
			budget, tot float64
		}{
			{"target", c.TargetCashUSD, l.FinalCashUSD}, {"time", c.Budget.TimeWeeks, total.TimeWeeks},
			{"warehouse", c.Budget.WarehouseItemWeeks, total.WarehouseItemWeeks}, {"cost", c.Budget.CostUSD, total.CostUSD},
		} {
			if r := d.budget / d.tot; r < 0.5-1e-3 || r > 2+1e-3 {
				t.Errorf("%s: %s ratio %v outside [0.5, 2]", rs[i].ID, d.name, r)
			}
		}
	}
	if reachable != 5 || feasible != 5 {
		t.Errorf("%d reachable, %d feasible; want 5 and 5", reachable, feasible)
	}
	// Pinned for seed 42: r0 is unreachable by its time budget (0.68 × 6
	// weeks), r2 reachable (target 0.658 × $150,000; 1.165 × 3,000
	// item-weeks; 1.173 × $30,000).
	want := []Challenge{
		{TargetCashUSD: 49382, Budget: Usage{TimeWeeks: 4.08, WarehouseItemWeeks: 1314, CostUSD: 7136.72}},
		{TargetCashUSD: 98679, Budget: Usage{TimeWeeks: 6, WarehouseItemWeeks: 3494, CostUSD: 35176.57}, Reachable: true},
	}
	if diff := cmp.Diff(want, []Challenge{chs[0], chs[2]}); diff != "" {
		t.Errorf("r0, r2 (-want +got):\n%s", diff)
	}
}

func checkReachable(t *testing.T, r ChallengeInput, c Challenge) {
	t.Helper()
	l, total := r.Ledger, r.Ledger.Total()
	switch {
	case c.TargetCashUSD > l.FinalCashUSD || c.TargetCashUSD < math.Round(l.FinalCashUSD*0.5):
		t.Errorf("%s: target %v outside [final/2, final] = [%v, %v]", r.ID, c.TargetCashUSD, l.FinalCashUSD/2, l.FinalCashUSD)
	case c.Budget.TimeWeeks != total.TimeWeeks:
		t.Errorf("%s: time budget %v, want the realized %v", r.ID, c.Budget.TimeWeeks, total.TimeWeeks)
	case c.Budget.WarehouseItemWeeks < total.WarehouseItemWeeks || c.Budget.WarehouseItemWeeks > math.Round(total.WarehouseItemWeeks*1.2):
		t.Errorf("%s: warehouse budget %v outside [%v, 1.2×]", r.ID, c.Budget.WarehouseItemWeeks, total.WarehouseItemWeeks)
	case c.Budget.CostUSD < total.CostUSD || c.Budget.CostUSD > cents(total.CostUSD*1.2):
		t.Errorf("%s: cost budget %v outside [%v, 1.2×]", r.ID, c.Budget.CostUSD, total.CostUSD)
	case !c.Feasible(l, r.Success) && r.Success:
		t.Errorf("%s: reachable challenge %+v not met by a successful rollout", r.ID, c)
	}
}

func TestChallengesBagenV1(t *testing.T) {
	rs := tenRollouts(50000)
	chs, err := Challenges(rs, BagenV1, 42)
	if err != nil {
		t.Fatal(err)
	}
	reachable, feasible := 0, 0
	for i, c := range chs {
		if c.Feasible(rs[i].Ledger, true) {
			feasible++
		}
		if c.Reachable {
			reachable++
			checkReachable(t, rs[i], c)
			continue
		}
		final := rs[i].Ledger.FinalCashUSD
		if c.TargetCashUSD < math.Round(final*1.01) || c.TargetCashUSD > final*2 {
			t.Errorf("%s: target %v outside final × [1.01, 2] = [%v, %v]", rs[i].ID, c.TargetCashUSD, final*1.01, final*2)
		}
		// Budgets as for a reachable challenge: only the target is out of reach.
		checkReachable(t, ChallengeInput{ID: rs[i].ID, Ledger: rs[i].Ledger}, Challenge{TargetCashUSD: final, Budget: c.Budget})
	}
	if reachable != 5 || feasible != 5 {
		t.Errorf("%d reachable, %d feasible; want 5 and 5", reachable, feasible)
	}
	// Python's random.Random(42).shuffle of the input order picks the
	// unreachable half: sorted(x[:5]) is [2, 3, 5, 7, 8].
	var unreachable []int
	for i, c := range chs {
		if !c.Reachable {
			unreachable = append(unreachable, i)
		}
	}
	if diff := cmp.Diff([]int{2, 3, 5, 7, 8}, unreachable); diff != "" {
		t.Errorf("unreachable rollouts (-python +go):\n%s", diff)
	}
}

// With a negative final cash, bagen-v1 bumps the unreachable target above
// it (final −1000 gives −950, final −2000 gives −1900, as the authors' env), so both schemes fail
// the five unreachable rollouts.
func TestChallengesNegativeFinalCash(t *testing.T) {
	rs := tenRollouts(-1000)
	chs, err := Challenges(rs, BagenV1, 42)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chs {
		final := rs[i].Ledger.FinalCashUSD // −1000, −2000, …
		if want := final * 0.95; !c.Reachable && c.TargetCashUSD != want {
			t.Errorf("%s: unreachable target %v for final %v, want %v", rs[i].ID, c.TargetCashUSD, final, want)
		}
	}
	for _, tt := range []struct {
		p    Preset
		want int
	}{{HalfReachable, 5}, {BagenV1, 5}} {
		chs, err := Challenges(rs, tt.p, 42)
		if err != nil {
			t.Fatal(err)
		}
		feasible := 0
		for i, c := range chs {
			if c.Feasible(rs[i].Ledger, true) {
				feasible++
			}
		}
		if feasible != tt.want {
			t.Errorf("%v: %d feasible, want %d", tt.p, feasible, tt.want)
		}
	}
}

// TestAboveFinal pins the authors' _sample_half_reachable_target_cash
// for unreachable challenges: python3 -c 'f=…; t=int(round(f*u));
// print(f + max(1, int(round(abs(f)*0.05))) if t <= f else t)'.
func TestAboveFinal(t *testing.T) {
	tests := []struct{ final, u, want float64 }{
		{-1000, 1.5, -950},
		{-1000, 1.01, -950},
		{0, 1.7, 1},
		{10, 1.01, 11},       // round(10.1) = 10 ≤ 10: bumped by max(1, round(0.5)) = 1
		{50000, 1.25, 62500}, // above already
		{-30, 2.0, -28},      // round(1.5) = 2, half to even
	}
	for _, tt := range tests {
		if got := aboveFinal(tt.final, tt.u); got != tt.want {
			t.Errorf("aboveFinal(%v, %v) = %v, want %v", tt.final, tt.u, got, tt.want)
		}
	}
}

func TestChallengesOrderAndBalance(t *testing.T) {
	rs := tenRollouts(50000)[:7]
	chs, err := Challenges(rs, HalfReachable, 42)
	if err != nil {
		t.Fatal(err)
	}
	reversed := slices.Clone(rs)
	slices.Reverse(reversed)
	rev, err := Challenges(reversed, HalfReachable, 42)
	if err != nil {
		t.Fatal(err)
	}
	reachable := 0
	for i, c := range chs {
		if c != rev[len(rs)-1-i] {
			t.Errorf("%s: %+v in input order, %+v reversed", rs[i].ID, c, rev[len(rs)-1-i])
		}
		if c.Reachable {
			reachable++
		}
	}
	if reachable != 4 {
		t.Errorf("7 rollouts: %d reachable, want 4 (⌊7/2⌋ = 3 unreachable)", reachable)
	}
	other, _ := Challenges(rs, HalfReachable, 43)
	if cmp.Equal(chs, other) {
		t.Error("seeds 42 and 43 gave the same challenges")
	}
}

func TestChallengesCannotFail(t *testing.T) {
	zero := Ledger{Steps: []Step{{}}, FinalCashUSD: 0}
	rs := []ChallengeInput{{ID: "z0", Ledger: zero, Success: true}, {ID: "z1", Ledger: zero, Success: true}}
	_, err := Challenges(rs, HalfReachable, 42)
	const suffix = ": no unreachable challenge in 1000 draws (a rollout whose usage and final cash are all zero meets every ratio challenge)"
	if err == nil || !strings.HasPrefix(err.Error(), "rollout z") || !strings.HasSuffix(err.Error(), suffix) {
		t.Errorf("got %v, want rollout z0 or z1%s", err, suffix)
	}
}

func TestParsePreset(t *testing.T) {
	for in, want := range map[string]Preset{"": HalfReachable, "half_reachable": HalfReachable, "bagen-v1": BagenV1} {
		if got, err := ParsePreset(in); err != nil || got != want {
			t.Errorf("ParsePreset(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	_, err := ParsePreset("balanced")
	if want := `preset "balanced": want half_reachable (the paper's text) or bagen-v1 (the authors' shipped variant)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// whA is wh_a's challenge in the probe tests: met (target $100,000 ≤
// $120,000 final; 8 weeks, 7,400 item-weeks and $300,100.75 within budget).
var whA = Challenge{TargetCashUSD: 100000, Budget: Usage{8, 8000, 310000}, Reachable: true}

func TestWarehouseProbes(t *testing.T) {
	l := readWarehouse(t)[0].Ledger
	got := WarehouseProbes(l, whA, true)
	want := []struct {
		after     int
		remaining Usage
	}{{1, Usage{6, 7400, 219174.15}}, {2, Usage{4, 5600, 139900.75}}, {3, Usage{2, 2200, 68700.5}}}
	if len(got) != len(want) {
		t.Fatalf("%d probes, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].After != w.after || got[i].Remaining != w.remaining || !got[i].Possible || got[i].Current != l.Steps[i] {
			t.Errorf("probe %d: %+v, want after %d, remaining %+v, possible, current %+v", i, got[i], w.after, w.remaining, l.Steps[i])
		}
	}
	wantGT := "time_weeks:[6, 6], warehouse_item_weeks:[7400, 7400], cumulative_cost_usd:[219174.15, 219174.15]"
	if gt := got[0].Target().GroundTruth(); gt != wantGT {
		t.Errorf("ground truth %q, want %q", gt, wantGT)
	}
	wantLabel := `{"time_weeks":6,"warehouse_item_weeks":7400,"cumulative_cost_usd":219174.15,"is_possible":true,"ground_truth":"` + wantGT + `"}`
	if label := got[0].Target().Label(); label != wantLabel {
		t.Errorf("label %s, want %s", label, wantLabel)
	}
	failed := WarehouseProbes(l, whA, false)[2]
	if failed.Target().GroundTruth() != "impossible" || failed.Target().Label() != `{"time_weeks":2,"warehouse_item_weeks":2200,"cumulative_cost_usd":68700.5,"is_possible":false,"ground_truth":"impossible"}` {
		t.Errorf("failed rollout: %s, %s", failed.Target().GroundTruth(), failed.Target().Label())
	}
	if ps := WarehouseProbes(Ledger{Steps: l.Steps[:1]}, whA, true); ps != nil {
		t.Errorf("one step: %v, want no probes", ps)
	}
}

func TestRenderWarehouse(t *testing.T) {
	r := readWarehouse(t)[0]
	w := WarehouseProbes(r.Ledger, whA, true)[1]
	got := RenderWarehouse(r.Traj, r.Acc, r.Ledger, w)
	var roles []string
	for _, m := range got {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "user", "assistant", "user"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if got[0].Content != WarehouseEstimatorSystem || got[3].Content != r.Traj.Messages[3].Content {
		t.Errorf("system %q, user_2 %q; want the estimator's system prompt and the logged turn", got[0].Content, got[3].Content)
	}
	golden(t, "replay/warehouse_k2.golden", got[5].Content)
}

func TestRenderSWEBenchReplay(t *testing.T) {
	srcs := []rollout.Source{rollout.FileSource(filepath.Join("testdata", "replay", "swebench.jsonl"))}
	rs, err := ReadReplays(context.Background(), srcs, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bench, n := TokenBench(rs[:1], Tasks["swebench"], []int64{17523}, Sampling{})
	if n != rs[0].Turns()-1 || len(bench) != n {
		t.Fatalf("%d probes of %d candidates, want %d", len(bench), n, rs[0].Turns()-1)
	}
	b := bench[1]
	if b.After != 2 || len(b.Prompt) != 6 || len(b.TurnUsage) != 2 {
		t.Fatalf("second probe: after %d, %d messages, %d turns; want 2, 6, 2", b.After, len(b.Prompt), len(b.TurnUsage))
	}
	golden(t, "replay/swebench_k2.golden", b.Prompt[5].Content)
}

// TestChallengesBagenV1MatchesReference compares the BagenV1 challenges
// with the authors' _build_half_reachable_constraints_map on the rollouts
// of testdata/bagen-v1/challenges.py, which wrote challenges.json.
func TestChallengesBagenV1MatchesReference(t *testing.T) {
	var ref struct {
		Rollouts []struct {
			Turns           int
			Final           float64 `json:"final_cash_usd"`
			Time, Warehouse float64
			Cost            float64
			Success         bool
		}
		Challenges map[string]struct {
			Target    float64 `json:"target_cash_usd"`
			Time      float64 `json:"budget_time_weeks"`
			Warehouse float64 `json:"budget_warehouse_item_weeks"`
			Cost      float64 `json:"budget_cost_usd"`
		}
	}
	readJSON(t, "testdata/bagen-v1/challenges.json", &ref)
	var rs []ChallengeInput
	for i, r := range ref.Rollouts {
		l := Ledger{FinalCashUSD: r.Final}
		for k := 1; k <= r.Turns; k++ {
			f := float64(k) / float64(r.Turns)
			l.Steps = append(l.Steps, Step{Usage: Usage{r.Time * f, r.Warehouse * f, r.Cost * f}})
		}
		rs = append(rs, ChallengeInput{ID: fmt.Sprint("z", i), Ledger: l, Success: r.Success})
	}
	chs, err := Challenges(rs, BagenV1, 42)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chs {
		want, ok := ref.Challenges[fmt.Sprint(i)]
		if !ok {
			if ref.Rollouts[i].Turns >= 2 {
				t.Errorf("rollout %d: no reference challenge", i)
			}
			continue
		}
		got := [4]float64{c.TargetCashUSD, c.Budget.TimeWeeks, c.Budget.WarehouseItemWeeks, c.Budget.CostUSD}
		if got != [4]float64{want.Target, want.Time, want.Warehouse, want.Cost} {
			t.Errorf("rollout %d: target, time, warehouse, cost %v; reference %v", i, got, want)
		}
	}
}
