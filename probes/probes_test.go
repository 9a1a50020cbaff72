package probes

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/reward"
	"bagen-data/rollout"
)

// words counts whitespace-separated words: a stand-in tokenizer for the
// accounting rules, which do not depend on how tokens are counted.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

func TestStripReward(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"negative", "Grid here (reward: -0.1)", "Grid here"},
		{"trailing space and newline", "Grid (reward: 1.0) \n", "Grid"},
		{"no space before", "Grid(reward:0)", "Grid"},
		{"not at the end", "Grid (reward: -0.1) more", "Grid (reward: -0.1) more"},
		{"only the last", "a (reward: 1) (reward: 2)", "a (reward: 1)"},
		{"not a number", "Grid (reward: high)", "Grid (reward: high)"},
		{"none", "Grid", "Grid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rollout.StripReward(tt.in); got != tt.want {
				t.Errorf("StripReward(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func msgs(roles string) []rollout.Message {
	var out []rollout.Message
	for i, r := range strings.Split(roles, " ") {
		role := map[string]string{"s": "system", "u": "user", "a": "assistant"}[r]
		out = append(out, rollout.Message{Role: role, Content: role + string(rune('0'+i)), Tokens: rollout.Unrecorded})
	}
	return out
}

func TestPair(t *testing.T) {
	tests := []struct {
		name     string
		roles    string
		pairs    [][2]int
		trailing int
	}{
		{"system then turns and trailing user", "s u a u a u", [][2]int{{1, 2}, {3, 4}}, 5},
		{"no trailing", "u a u a", [][2]int{{0, 1}, {2, 3}}, -1},
		{"unpaired user in the middle is skipped", "u u a", [][2]int{{1, 2}}, -1},
		{"leading assistant is skipped", "a u a", [][2]int{{1, 2}}, -1},
		{"two assistants in a row", "u a a u", [][2]int{{0, 1}}, 3},
		{"only a user", "u", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pairs, trailing := Pair(msgs(tt.roles))
			if diff := cmp.Diff(tt.pairs, pairs); diff != "" || trailing != tt.trailing {
				t.Errorf("Pair(%s) = %v, %d; want %v, %d", tt.roles, pairs, trailing, tt.pairs, tt.trailing)
			}
		})
	}
}

func TestAccount(t *testing.T) {
	traj := rollout.Trajectory{
		Pos: rollout.Position{File: "r.jsonl", Line: 4, Index: -1},
		Messages: []rollout.Message{
			{Role: "system", Content: "ignored system prompt", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "one two three", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "a b", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "four five (reward: -0.1)", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "c d e", Tokens: 9},
			{Role: "user", Content: "x y", Tokens: 4},
			{Role: "assistant", Content: "f", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "last words here (reward: 1.0)", Tokens: rollout.Unrecorded},
		},
		// Turn 0's API output count wins over the text; turn 1 has no API
		// output recorded, so the message's own count is used.
		API: []rollout.APITokens{{Input: 100, Output: 40}, {Input: 120, Output: rollout.Unrecorded}},
	}
	a, err := Account(traj, words{})
	if err != nil {
		t.Fatal(err)
	}
	want := []TurnTokens{{In: 3, Out: 40}, {In: 2, Out: 9}, {In: 4, Out: 1}}
	if diff := cmp.Diff(want, a.Turns); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	if a.Trailing != 3 || a.TrailingAt != 7 {
		t.Errorf("trailing = %d at %d, want 3 at 7", a.Trailing, a.TrailingAt)
	}
	if got := a.Total(10); got != 10+3+40+2+9+4+1 {
		t.Errorf("Total(10) = %d, want 69", got)
	}

	_, err = Account(traj, nil)
	if !errors.Is(err, ErrNoTokenizer) {
		t.Fatalf("Account without a tokenizer: got %v, want ErrNoTokenizer", err)
	}
	if want := "r.jsonl:4: messages[1].tokens: a token count is not recorded"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want prefix %q", err, want)
	}
}

// threeTurns has sys = 10 and turns (in, out) = (5,3), (4,2), (2,1), so
// the whole rollout costs 27 tokens; the trailing message costs 7.
var threeTurns = Accounting{Turns: []TurnTokens{{5, 3}, {4, 2}, {2, 1}}, Trailing: 7, TrailingAt: 6}

func TestProbesPaper(t *testing.T) {
	tests := []struct {
		name    string
		budget  int64
		success bool
		opts    Options
		want    []Probe
		dropped int
	}{
		{"fits the budget exactly", 27, true, Options{}, []Probe{
			{After: 0, Used: 15, Remaining: 12, Possible: true},
			{After: 1, Used: 18, Remaining: 9, Possible: true},
			{After: 2, Used: 24, Remaining: 3, Possible: true},
		}, 0},
		{"one token over the budget", 26, true, Options{}, []Probe{
			{After: 0, Used: 15, Remaining: 12}, {After: 1, Used: 18, Remaining: 9}, {After: 2, Used: 24, Remaining: 3},
		}, 0},
		{"failed rollout", 1000, false, Options{}, []Probe{
			{After: 0, Used: 15, Remaining: 12}, {After: 1, Used: 18, Remaining: 9}, {After: 2, Used: 24, Remaining: 3},
		}, 0},
		{"every second turn", 100, true, Options{Every: 2}, []Probe{
			{After: 0, Used: 15, Remaining: 12, Possible: true}, {After: 2, Used: 24, Remaining: 3, Possible: true},
		}, 0},
		{"min remaining drops small r", 100, true, Options{MinRemaining: new(int64(4))}, []Probe{
			{After: 0, Used: 15, Remaining: 12, Possible: true}, {After: 1, Used: 18, Remaining: 9, Possible: true},
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := Probes(threeTurns, 10, tt.budget, tt.success, tt.opts)
			if diff := cmp.Diff(tt.want, got); diff != "" || dropped != tt.dropped {
				t.Errorf("Probes (-want +got):\n%s\ndropped = %d, want %d", diff, dropped, tt.dropped)
			}
			for _, p := range got {
				if p.Used+p.Remaining != 27 {
					t.Errorf("p=%d: used + r = %d, want 27 at every probe", p.After, p.Used+p.Remaining)
				}
			}
		})
	}
}

func TestProbesBagenV1(t *testing.T) {
	// The trailing message (7 tokens) is added to r_0 and r_T, and each
	// probe is labelled by its own used + r: 34, 27, 27, 34.
	got, dropped := Probes(threeTurns, 10, 30, true, Options{Labels: LabelsBagenV1})
	want := []Probe{
		{After: 0, Used: 15, Remaining: 19, Possible: false},
		{After: 1, Used: 18, Remaining: 9, Possible: true},
		{After: 2, Used: 24, Remaining: 3, Possible: true},
		{After: 3, Used: 27, Remaining: 7, Possible: false},
	}
	if diff := cmp.Diff(want, got); diff != "" || dropped != 0 {
		t.Errorf("Probes bagen-v1 (-want +got):\n%s dropped %d", diff, dropped)
	}
	// Without a trailing message r_T = 0, which the default min-remaining
	// drops, as the reference script's "trivial samples with r=0".
	noTrail := Accounting{Turns: threeTurns.Turns, TrailingAt: -1}
	got, dropped = Probes(noTrail, 10, 30, true, Options{Labels: LabelsBagenV1})
	if len(got) != 3 || dropped != 1 || got[0].Remaining != 12 {
		t.Errorf("without trailing: %+v dropped %d; want 3 probes with r_0 = 12 and 1 dropped", got, dropped)
	}
	// A MinRemaining of 0, unlike nil, keeps the r = 0 probe.
	got, dropped = Probes(noTrail, 10, 30, true, Options{Labels: LabelsBagenV1, MinRemaining: new(int64(0))})
	if len(got) != 4 || dropped != 0 || got[3].After != 3 || got[3].Remaining != 0 {
		t.Errorf("MinRemaining 0 without trailing: %+v dropped %d; want 4 probes, the last after turn 3 with r = 0", got, dropped)
	}
}

// TestProbesBagenV1Positions pins the reference script's positions
// [0] + range(n, T+1, n): p = T only when n divides T (kept here with
// MinRemaining 0 though r_T = 0 without a trailing message).
func TestProbesBagenV1Positions(t *testing.T) {
	five := Accounting{Turns: []TurnTokens{{5, 3}, {4, 2}, {2, 1}, {3, 3}, {1, 1}}, TrailingAt: -1}
	tests := []struct {
		name  string
		acc   Accounting
		every int
		want  []int
	}{
		{"n=2 T=3", threeTurns, 2, []int{0, 2}},
		{"n=3 T=3", threeTurns, 3, []int{0, 3}},
		{"n=2 T=5", five, 2, []int{0, 2, 4}},
		{"n=3 T=5", five, 3, []int{0, 3}},
		{"n=1 T=5", five, 1, []int{0, 1, 2, 3, 4, 5}},
		{"n=7 T=5", five, 7, []int{0}},
		{"no complete turn", Accounting{Trailing: 4, TrailingAt: 0}, 1, nil},
	}
	for _, tt := range tests {
		got, _ := Probes(tt.acc, 10, 100, true, Options{Labels: LabelsBagenV1, Every: tt.every, MinRemaining: new(int64(0))})
		var at []int
		for _, p := range got {
			at = append(at, p.After)
		}
		if diff := cmp.Diff(tt.want, at); diff != "" {
			t.Errorf("%s: positions (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestWidth(t *testing.T) {
	tests := []struct {
		width    string
		r        int64
		possible bool
		want     string
	}{
		{"pct30", 90, true, "[62, 117]"}, // 90·0.7 = 62.999… truncates to 62, not 63
		{"pct30", 1000, true, "[700, 1300]"},
		{"pct10", 7, true, "[6, 7]"},
		{"pct50", 1, true, "[1, 1]"}, // L = max(1, 0)
		{"pct12.5", 80, true, "[70, 90]"},
		{"fix100", 50, true, "[1, 150]"},
		{"fix500", 1200, true, "[700, 1700]"},
		{"point", 321, true, "321"},
		{"pct30", 90, false, "impossible"},
		{"point", 5, false, "impossible"},
		// Nothing left: the reference script's _make_target writes [0, 0]
		// (0 for point), never [max(1, …), 0].
		{"pct30", 0, true, "[0, 0]"},
		{"fix100", 0, true, "[0, 0]"},
		{"point", 0, true, "0"},
		{"pct30", 0, false, "impossible"},
	}
	for _, tt := range tests {
		w, err := ParseWidth(tt.width)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.GroundTruth(Probe{Remaining: tt.r, Possible: tt.possible}); got != tt.want {
			t.Errorf("%s r=%d possible=%v: got %s, want %s", tt.width, tt.r, tt.possible, got, tt.want)
		}
	}
}

func TestParseWidthErrors(t *testing.T) {
	tests := map[string]string{
		"pct":    `width "pct": the percentage must be a number in [0, 100) (want pctN such as pct30, fixN such as fix100, or point)`,
		"pctNaN": `width "pctNaN": the percentage must be a number in [0, 100) (want pctN such as pct30, fixN such as fix100, or point)`,
		"pct100": `width "pct100": the percentage must be a number in [0, 100) (want pctN such as pct30, fixN such as fix100, or point)`,
		"fix-1":  `width "fix-1": the half-width must be a non-negative integer (want pctN such as pct30, fixN such as fix100, or point)`,
		"30%":    `width "30%": unknown kind (want pctN such as pct30, fixN such as fix100, or point)`,
	}
	for in, want := range tests {
		if _, err := ParseWidth(in); err == nil || err.Error() != want {
			t.Errorf("ParseWidth(%q) error = %v, want %s", in, err, want)
		}
	}
}

func TestUsageText(t *testing.T) {
	if got := UsageText(threeTurns.Turns, 0); got != "(no turns completed yet)" {
		t.Errorf("p=0: got %q", got)
	}
	want := "Turn 1: input 5 tokens, output 3 tokens, total 8 tokens; Turn 2: input 4 tokens, output 2 tokens, total 6 tokens"
	if got := UsageText(threeTurns.Turns, 2); got != want {
		t.Errorf("p=2: got %q, want %q", got, want)
	}
	// Written without fmt, each turn is still usageFormat's, which
	// ParseProbe reads back; counts up to MaxTokens.
	turns := []TurnTokens{{0, 0}, {MaxTokens / 2, MaxTokens / 2}, {1234567, 89}}
	var parts []string
	for k, tt := range turns {
		parts = append(parts, fmt.Sprintf(usageFormat, k+1, tt.In, tt.Out, tt.In+tt.Out))
	}
	if got, want := UsageText(turns, 3), strings.Join(parts, "; "); got != want {
		t.Errorf("large counts: got %q, want %q", got, want)
	}
}

// FuzzStripReward checks the scanner against the regular expression it
// replaces (Go's \s and \d are ASCII, so the reference skips non-ASCII).
func FuzzStripReward(f *testing.F) {
	for _, s := range []string{"Grid (reward: -0.1)", "a(reward:1)\n", "(reward: )", "x (reward:-.-)  ", "(reward: 1) (reward: 2)", "a\t(reward:\t3)"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`[\t\n\v\f\r ]*\(reward:[\t\n\v\f\r ]*[\-\d.]+\)[\t\n\v\f\r ]*$`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range s {
			if r >= 0x80 || (r >= 0x1c && r <= 0x1f) {
				return
			}
		}
		if got, want := rollout.StripReward(s), re.ReplaceAllString(s, ""); got != want {
			t.Errorf("StripReward(%q) = %q, regexp gives %q", s, got, want)
		}
	})
}

// FuzzParseWidth checks that any --width text either fails with the
// documented message or gives a width whose intervals contain r's bounds in
// order for every small r.
func FuzzParseWidth(f *testing.F) {
	for _, s := range []string{"pct30", "fix100", "point", "pct12.5", "pct", "fix-1", "pctNaN", "pct1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWidth(s)
		if err != nil {
			if !strings.HasSuffix(err.Error(), "(want pctN such as pct30, fixN such as fix100, or point)") {
				t.Fatalf("ParseWidth(%q): undocumented error %q", s, err)
			}
			return
		}
		for r := int64(1); r < 50; r++ {
			lo, hi := w.Interval(r)
			if lo < 1 || lo > r || hi < r {
				t.Fatalf("ParseWidth(%q).Interval(%d) = [%d, %d], want lo ≥ 1 and lo ≤ r ≤ hi", s, r, lo, hi)
			}
		}
	})
}

// TestNothingLeftScoresFull checks that the r = 0 target is one the
// training reward gives full marks (1.8), as the reference reward does for
// [0, 0] at remaining_tokens = 0.
func TestNothingLeftScoresFull(t *testing.T) {
	for _, s := range []string{"pct30", "pct10", "fix100"} {
		w, _ := ParseWidth(s)
		gt := w.GroundTruth(Probe{After: 3, Used: 27, Remaining: 0, Possible: true})
		if got := reward.Score(reward.Tag(gt), reward.Truth{Remaining: 0, Possible: true}); got != 1.8 {
			t.Errorf("%s: %s scores %g, want 1.8", s, gt, got)
		}
	}
}
