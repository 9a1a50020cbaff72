package baseline

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"bagen-data/fixtures/sokoban"
	"bagen-data/probes"
	"bagen-data/rollout"
)

func TestCalibrateGate(t *testing.T) {
	succ := func(p ...float64) []run {
		var out []run
		for _, x := range p {
			out = append(out, run{peak: x})
		}
		return out
	}
	fail := func(p ...float64) []run {
		var out []run
		for _, x := range p {
			out = append(out, run{failed: true, peak: x})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		runs     []run
		maxAbort float64
		want     Gate
	}{
		// k = ⌊0.25·4⌋ = 1: the threshold is the second highest successful
		// peak, 0.3; 0.9 of the successful runs passes it, and all three
		// failed ones. P(Bin(3, 2/5) ≥ 3) = 0.064 > 0.05: off.
		{"too few failed", append(succ(0.1, 0.2, 0.3, 0.9), fail(0.95, 0.5, 0.99)...), 0.25,
			Gate{Threshold: 0.3, SuccessfulRuns: 4, FailedRuns: 3, StoppedSuccessful: 1, StoppedFailed: 3,
				AbortBound: 0.4, PValue: 0.064, Why: "held-out failed runs are not stopped significantly more often than successful ones"}},
		// Eight failed runs all stopped: P = 0.4^8.
		{"signal", append(succ(0.1, 0.2, 0.3, 0.9), fail(0.95, 0.5, 0.99, 0.4, 0.6, 0.7, 0.8, 0.31)...), 0.25,
			Gate{On: true, Threshold: 0.3, SuccessfulRuns: 4, FailedRuns: 8, StoppedSuccessful: 1, StoppedFailed: 8,
				AbortBound: 0.4, PValue: math.Pow(0.4, 8)}},
		// k = 0: the threshold is the highest successful peak, which no
		// failed run passes.
		{"no signal", append(succ(0.5, 0.6), fail(0.6, 0.2)...), 0.02,
			Gate{Threshold: 0.6, SuccessfulRuns: 2, FailedRuns: 2, AbortBound: 1.0 / 3, PValue: 1,
				Why: "the threshold stops no held-out failed run"}},
		{"no failed run", succ(0.5), 0.02, Gate{SuccessfulRuns: 1, Why: "the held-out runs are not both successful and failed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.runs)
			got := calibrateGate(c.runs, c.maxAbort)
			if math.Abs(got.PValue-c.want.PValue) > 1e-12 {
				t.Errorf("p-value %v, want %v", got.PValue, c.want.PValue)
			}
			got.PValue = c.want.PValue
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if !slices.Equal(in, c.runs) {
				t.Errorf("calibrateGate modified its input")
			}
		})
	}
}

func TestBinomialTail(t *testing.T) {
	for _, c := range []struct {
		n, x int
		p    float64
		want float64
	}{
		{3, 2, 0.5, 0.5},                      // (3 + 1) / 8
		{4, 1, 0.25, 1 - math.Pow(0.75, 4)},   // 1 − P(0)
		{5, 0, 0.3, 1},                        // always
		{10, 10, 0.1, 1e-10},                  // all of them
		{6, 3, 0.5, (20.0 + 15 + 6 + 1) / 64}, // C(6,3..6) / 2^6
	} {
		if got := binomialTail(c.n, c.x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("binomialTail(%d, %d, %v) = %v, want %v", c.n, c.x, c.p, got, c.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	scores := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	for _, c := range []struct{ coverage, want float64 }{
		{0.9, 10},  // P(Bin(10, .9) ≥ 10) = .349 > .05: no rank, the largest
		{0.5, 9},   // P(Bin(10, .5) ≥ 9) = 11/1024 ≤ .05 < P(≥ 8) = 56/1024
		{0.05, 3},  // P(Bin(10, .05) ≥ 3) = .0115 ≤ .05 < P(≥ 2) = .0861
		{0.01, 2},  // P(Bin(10, .01) ≥ 2) = .0043 ≤ .05 < P(≥ 1) = .0956
		{0.001, 1}, // P(Bin(10, .001) ≥ 1) = .00996 ≤ .05
	} {
		if got := quantile(slices.Clone(scores), c.coverage); got != c.want {
			t.Errorf("quantile at %v = %v, want %v", c.coverage, got, c.want)
		}
	}
}

// TestConformalRank: the rank is the smallest k whose binomial tail
// P(Bin(n, coverage) ≥ k) is at most delta, checked against binomialTail
// (summed from its own definition) on both sides of k.
func TestConformalRank(t *testing.T) {
	for _, c := range []struct {
		n               int
		coverage, delta float64
	}{
		{50, 0.9, 0.05}, {158, 0.9, 0.05}, {158, 0.7, 0.05}, {1000, 0.9, 0.05}, {300, 0.9, 0.5}, {29, 0.9, 0.05},
	} {
		k := conformalRank(c.n, c.coverage, c.delta)
		if k <= c.n && binomialTail(c.n, k, c.coverage) > c.delta {
			t.Errorf("conformalRank(%d, %v, %v) = %d: tail %v > delta", c.n, c.coverage, c.delta, k, binomialTail(c.n, k, c.coverage))
		}
		if k > 1 && binomialTail(c.n, k-1, c.coverage) <= c.delta {
			t.Errorf("conformalRank(%d, %v, %v) = %d: %d would do", c.n, c.coverage, c.delta, k, k-1)
		}
	}
	// 0.9^28 = .0523 > .05 ≥ 0.9^29 = .0471: 28 scores give no rank, 29
	// give the largest.
	if k := conformalRank(28, 0.9, 0.05); k != 29 {
		t.Errorf("conformalRank(28, .9, .05) = %d, want 29 (none)", k)
	}
	if k := conformalRank(29, 0.9, 0.05); k != 29 {
		t.Errorf("conformalRank(29, .9, .05) = %d, want 29", k)
	}
	// At delta = 1/2 the rank is about the plain ⌈(n+1)·coverage⌉, the
	// median of the coverage given the held-out set; at 0.05 it is above.
	if k := conformalRank(1000, 0.9, 0.5); k < 900 || k > 902 {
		t.Errorf("conformalRank(1000, .9, .5) = %d, want 900–902", k)
	}
	if k := conformalRank(1000, 0.9, 0.05); k <= 910 {
		t.Errorf("conformalRank(1000, .9, .05) = %d, want above 910", k)
	}
}

func TestTurnBucket(t *testing.T) {
	want := map[int]int{0: 0, 1: 1, 2: 2, 3: 3, 4: 3, 5: 4, 7: 4, 8: 5, 100: 5}
	for k, b := range want {
		if got := turnBucket(k); got != b {
			t.Errorf("turnBucket(%d) = %d, want %d", k, got, b)
		}
	}
}

// sokobanObs is an observation as the fixtures render it.
const sokobanObs = "Turn 2 (9 left). Boxes on targets: 0/2.\nState:\n######\n#_O__#\n#_X_X#\n#__P_#\n#O___#\n######\nPlayer: (3, 3)\nBoxes: (2, 2), (2, 4)\nTargets: (1, 2), (4, 1)"

func TestRoomPlay(t *testing.T) {
	r, ok := parseRoom(sokobanObs)
	if !ok {
		t.Fatal("the room does not parse")
	}
	// Box (2, 2) is 1 from target (1, 2); box (2, 4) is 3 from (1, 2) and
	// 5 from (4, 1); the player is 2 from either box; (2, 4) touches the
	// right wall only.
	if off, dist, player, cornered := measure(r); off != 2 || dist != 4 || player != 2 || cornered != 0 {
		t.Errorf("before: %d off, distance %d, player %d, cornered %d; want 2, 4, 2, 0", off, dist, player, cornered)
	}
	// Left to (3, 2), Up pushes the box at (2, 2) onto (1, 2), Up again
	// is blocked by the box on the target against the wall, Right walks;
	// Jump is no move.
	played, blocked, pushed := play(r, "<think>x</think><answer>Left || Up || Up || Right || Jump</answer>")
	if played != 4 || blocked != 1 || !pushed {
		t.Errorf("played %d, blocked %d, pushed %v; want 4, 1, true", played, blocked, pushed)
	}
	if !r.Box(sokoban.Pos{Row: 1, Col: 2}) || r.Player() != (sokoban.Pos{Row: 2, Col: 3}) {
		t.Errorf("boxes %v, player %v; want a box on (1, 2) and the player at (2, 3)", r.Boxes(), r.Player())
	}
	// The other box (2, 4) now goes to the free target (4, 1): 5; the
	// player is 1 from it.
	if off, dist, player, cornered := measure(r); off != 1 || dist != 5 || player != 1 || cornered != 0 {
		t.Errorf("after: %d off, distance %d, player %d, cornered %d; want 1, 5, 1, 0", off, dist, player, cornered)
	}
	// Pushing (2, 4) right is blocked by the wall; the player then goes up
	// to (1, 3) and right to (1, 4).
	if _, blocked, pushed := play(r, "Right || Up || Right"); blocked != 1 || pushed ||
		!r.Box(sokoban.Pos{Row: 2, Col: 4}) || r.Player() != (sokoban.Pos{Row: 1, Col: 4}) {
		t.Errorf("blocked %d, pushed %v, boxes %v, player %v; want 1, false, (2, 4) unmoved, (1, 4)", blocked, pushed, r.Boxes(), r.Player())
	}
	if _, ok := parseRoom("no room here"); ok {
		t.Error("a text without a room parsed")
	}
}

// probeChat renders a Sokoban probe after the given answers (each
// followed by the same observation but the last).
func probeChat(t *testing.T, answers []string) []rollout.Message {
	t.Helper()
	task, err := probes.LookupTask("sokoban")
	if err != nil {
		t.Fatal(err)
	}
	turns := make([]probes.TurnTokens, len(answers))
	for i := range turns {
		turns[i] = probes.TurnTokens{In: 80, Out: 40 + int64(i)}
	}
	prompt := task.ProbeText(turns, len(turns), 2500, false)
	first := "You are solving the Sokoban puzzle. You have 10 turns and may take at most 3 actions per turn.\n" + sokobanObs
	msgs := []rollout.Message{{Role: "system", Content: task.System}}
	if len(answers) == 0 {
		return append(msgs, rollout.Message{Role: "user", Content: first + "\n\n" + prompt})
	}
	msgs = append(msgs, rollout.Message{Role: "user", Content: first})
	for i, a := range answers {
		msgs = append(msgs, rollout.Message{Role: "assistant", Content: a})
		if i < len(answers)-1 {
			msgs = append(msgs, rollout.Message{Role: "user", Content: sokobanObs})
		}
	}
	return append(msgs, rollout.Message{Role: "user", Content: prompt})
}

func TestNewView(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		answers := slices.Repeat([]string{"<answer>Left</answer>"}, n)
		v, err := NewView(probeChat(t, answers))
		if err != nil {
			t.Fatalf("%d answers: %v", n, err)
		}
		if v.Turns() != n || len(v.Answers) != n || len(v.Observations) != max(n, 1) || v.Stated.Task != "sokoban" || v.Stated.Budget != 2500 {
			t.Errorf("%d answers: turns %d, answers %d, observations %d, task %q, budget %d", n, v.Turns(), len(v.Answers), len(v.Observations), v.Stated.Task, v.Stated.Budget)
		}
		if !strings.HasSuffix(v.LastObservation(), "Targets: (1, 2), (4, 1)") {
			t.Errorf("%d answers: last observation %q", n, v.LastObservation())
		}
		if want := int64(n*120 + n*(n-1)/2); v.Used() != want {
			t.Errorf("%d answers: used %d, want %d", n, v.Used(), want)
		}
	}
	_, err := NewView([]rollout.Message{{Role: "user", Content: "hello"}})
	if !errors.Is(err, probes.ErrNotProbe) {
		t.Errorf("a chat that is no probe: %v, want ErrNotProbe", err)
	}
}

// TestFeatures pins the generic and Sokoban features of a probe whose
// observations all repeat and whose answers are "Left" then twice "Up".
func TestFeatures(t *testing.T) {
	v, err := NewView(probeChat(t, []string{"<answer>Left</answer>", "<answer>Up</answer>", "<answer>Up</answer>"}))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(repeatGroup.features))
	repeatGroup.fill(v, out)
	// Observations: the first (with the task's words) and two copies of
	// the room, whose 14 lines the first shares (14/15 ≥ 0.75): both later
	// ones repeat, the last two share every line, two newest repeat the
	// one before; answers Up, Up repeat once in two; no errors.
	want := []float64{1, 1, 2, 0.5, 1, 0}
	if !slices.Equal(out, want) {
		t.Errorf("repeat features %v, want %v", out, want)
	}
	sk := make([]float64, len(sokobanGroup.features))
	sokobanGroup.fill(v, sk)
	// The last answer "Up" from (3, 3) walks to (2, 3); nothing is pushed.
	// Turns left: "(9 left)" minus the last answer's turn = 8.
	if sk[0] != 2 || sk[2] != 4 || sk[3] != 1 || sk[5] != 8 || sk[7] != 0 || sk[10] != 0 || sk[11] != 0 {
		t.Errorf("sokoban features %v: want 2 boxes off, distance 4, player 1, 8 turns left, feasible, nothing blocked, parsed", sk)
	}
}
