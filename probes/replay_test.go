package probes

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"bagen-data/rollout"

	"github.com/google/go-cmp/cmp"
)

func TestHistoryIncluded(t *testing.T) {
	tests := []struct {
		name        string
		input, outs []int64
		want        bool
	}{
		{"every request carries the history", []int64{100, 250, 420}, []int64{50, 60, 9}, true},
		{"equality counts", []int64{100, 150, 210}, []int64{50, 60, 9}, true},
		{"per-turn counts", []int64{100, 30, 40}, []int64{50, 60, 9}, false},
		{"exactly half of the turns", []int64{100, 150, 100}, []int64{50, 60, 9}, true},
		{"one of three turns", []int64{100, 150, 100, 100}, []int64{50, 60, 9, 9}, false},
		{"two of three turns", []int64{100, 150, 100, 109}, []int64{50, 60, 9, 9}, true},
		{"one turn is never cumulative", []int64{500}, []int64{50}, false},
		{"no turns", nil, nil, false},
		{"shorter outputs bound the turns", []int64{100, 150, 10, 10}, []int64{50}, false},
		// 190 is compared with 100, the last recorded input, + 60, the
		// output of the turn before it.
		{"an unrecorded input is skipped", []int64{100, rollout.Unrecorded, 190}, []int64{50, 60, 9}, true},
		{"only unrecorded neighbours", []int64{rollout.Unrecorded, 100, rollout.Unrecorded}, []int64{50, 60, 9}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HistoryIncluded(tt.input, tt.outs); got != tt.want {
				t.Errorf("HistoryIncluded(%v, %v) = %v, want %v", tt.input, tt.outs, got, tt.want)
			}
		})
	}
}

// apiTrajectory has three turns whose user messages count 2, 3 and 4
// words, a 5-word system prompt and the given API usage.
func apiTrajectory(api []rollout.APITokens) rollout.Trajectory {
	return rollout.Trajectory{
		Pos: rollout.Position{File: "swe.jsonl", Line: 2, Index: -1},
		Messages: []rollout.Message{
			{Role: "system", Content: "one two three four five", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "u1 u1", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "a", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "u2 u2 u2 (reward: 0.5)", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "a a", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "u3 u3 u3 u3", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "a a a", Tokens: rollout.Unrecorded},
		},
		Success: true,
		API:     api,
	}
}

func TestNewReplayInputs(t *testing.T) {
	const sys = "one two three four five"
	// The assistant texts count 1, 2 and 3 words, the user messages 2, 3
	// and 4: what the fallbacks and the estimate count.
	L, E, N, G, C, M := BasisLog, BasisEstimated, BasisNoUsage, BasisAfterGap, BasisHistoryCut, BasisMessages
	tests := []struct {
		name   string
		api    []rollout.APITokens
		kind   rollout.InputKind
		turns  []TurnTokens
		bases  []Basis
		inputs InputSource
		sys    int64
		total  int64
	}{
		{
			// 150 − 100 − 20 and 190 − 150 − 30: no tokenizer count of the
			// replayed text replaces the log's numbers.
			name:   "cumulative inputs become deltas against the recorded output",
			api:    []rollout.APITokens{{Input: 100, Output: 20}, {Input: 150, Output: 30}, {Input: 190, Output: 10}},
			turns:  []TurnTokens{{100, 20}, {30, 30}, {10, 10}},
			bases:  []Basis{L, L, L},
			inputs: InputAPIDeltas, total: 200,
		},
		{
			// 150 < 100+500 and 200 < 150+600: the requests grew by less
			// than the outputs, which then held reasoning the log does not
			// break out; the visible outputs are estimated as the replayed
			// texts' counts, 1 and 2.
			name:   "unrecorded hidden reasoning is estimated",
			api:    []rollout.APITokens{{Input: 100, Output: 500}, {Input: 150, Output: 600}, {Input: 200, Output: 50}},
			turns:  []TurnTokens{{100, 500}, {49, 600}, {48, 50}},
			bases:  []Basis{L, E, E},
			inputs: InputAPIDeltas, total: 1347,
		},
		{
			name: "recorded reasoning is subtracted",
			api: []rollout.APITokens{{Input: 100, Output: 500, Reasoning: tokens(480)}, {Input: 150, Output: 600, Reasoning: tokens(590)},
				{Input: 200, Output: 50}},
			turns:  []TurnTokens{{100, 500}, {30, 600}, {40, 50}},
			bases:  []Basis{L, L, L},
			inputs: InputAPIDeltas, total: 1320,
		},
		{
			// Turn 1 says it had no reasoning: 50 < 500 is a cut history,
			// not hidden reasoning; turn 2 says nothing, so 50 < 600 is.
			name:   "a recorded 0 is a 0",
			api:    []rollout.APITokens{{Input: 100, Output: 500, Reasoning: tokens(0)}, {Input: 150, Output: 600}, {Input: 200, Output: 50}},
			turns:  []TurnTokens{{100, 500}, {3, 600}, {48, 50}},
			bases:  []Basis{L, C, E},
			inputs: InputAPIDeltas, total: 1301,
		},
		{
			name: "a cut history falls back to the user message",
			// 150 ≥ 100+1 but 90 < 150+2: one of two turns, half.
			api:    []rollout.APITokens{{Input: 100, Output: 20}, {Input: 150, Output: 30}, {Input: 90, Output: 10}},
			turns:  []TurnTokens{{100, 20}, {30, 30}, {4, 10}},
			bases:  []Basis{L, L, C},
			inputs: InputAPIDeltas, total: 194,
		},
		{
			name:   "per-turn inputs are used as they are",
			api:    []rollout.APITokens{{Input: 100, Output: 20}, {Input: 30, Output: 30}, {Input: 25, Output: 10}},
			turns:  []TurnTokens{{100, 20}, {30, 30}, {25, 10}},
			bases:  []Basis{L, L, L},
			inputs: InputAPI, total: 215,
		},
		{
			name:   "a log that says its inputs are per turn is not put to the vote",
			api:    []rollout.APITokens{{Input: 100, Output: 20}, {Input: 150, Output: 30}, {Input: 190, Output: 10}},
			kind:   rollout.InputsTurn,
			turns:  []TurnTokens{{100, 20}, {150, 30}, {190, 10}},
			bases:  []Basis{L, L, L},
			inputs: InputAPI, total: 500,
		},
		{
			name:   "a log that says its inputs are request totals is not put to the vote",
			api:    []rollout.APITokens{{Input: 100, Output: 20}, {Input: 50, Output: 30}, {Input: 40, Output: 10}},
			kind:   rollout.InputsRequest,
			turns:  []TurnTokens{{100, 20}, {3, 30}, {4, 10}},
			bases:  []Basis{L, C, C},
			inputs: InputAPIDeltas, total: 167,
		},
		{
			// The vote compares 190 with the last recorded input, 100.
			// 190 − 100 − 20 − 30 = 40 is split 3 : 4 between the two
			// inputs, as their user messages count: 17 and 23.
			name:   "a missing input shares the known growth with the next",
			api:    []rollout.APITokens{{Input: 100, Output: 20}, {Input: rollout.Unrecorded, Output: 30}, {Input: 190, Output: 10}},
			turns:  []TurnTokens{{100, 20}, {17, 30}, {23, 10}},
			bases:  []Basis{L, N, G},
			inputs: InputAPIDeltas, total: 200,
		},
		{
			// The first request holds the log's system message (5 words):
			// 150 − 20 is split 7 : 3, and the total is 190 + 10.
			name:   "a missing first input counts the log's system message",
			api:    []rollout.APITokens{{Input: rollout.Unrecorded, Output: 20}, {Input: 150, Output: 30}, {Input: 190, Output: 10}},
			turns:  []TurnTokens{{91, 20}, {39, 30}, {10, 10}},
			bases:  []Basis{N, G, L},
			inputs: InputAPIDeltas, total: 200,
		},
		{
			name:   "no API usage",
			turns:  []TurnTokens{{2, 1}, {3, 2}, {4, 3}},
			bases:  []Basis{M, M, M},
			inputs: InputMessages, sys: 5, total: 20,
		},
		{
			// The outputs are the texts' counts (1, 2, 3), so no delta is
			// the log's alone; each request still fixes the input before
			// it: 101 − 100 − 1 and 104 − 101 − 2. The total is 104 + 3.
			name:   "unrecorded outputs leave the next inputs to the growth",
			api:    []rollout.APITokens{{Input: 100, Output: rollout.Unrecorded}, {Input: 101, Output: rollout.Unrecorded}, {Input: 104, Output: rollout.Unrecorded}},
			turns:  []TurnTokens{{100, 1}, {0, 2}, {1, 3}},
			bases:  []Basis{L, G, G},
			inputs: InputAPIDeltas, total: 107,
		},
		{
			// Both calls of turn 1 were paid; the history replays the kept
			// one's 20 tokens.
			name:   "a retried call's output counts",
			api:    []rollout.APITokens{{Input: 100, Output: 20, Retried: rollout.Retry{Calls: 1, Output: 15}}, {Input: 150, Output: 30}, {Input: 190, Output: 10}},
			turns:  []TurnTokens{{100, 35}, {30, 30}, {10, 10}},
			bases:  []Basis{L, L, L},
			inputs: InputAPIDeltas, total: 215,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traj := apiTrajectory(tt.api)
			traj.Inputs = tt.kind
			r, err := NewReplay(traj, words{}, sys)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.turns, r.Acc.Turns); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bases, r.Acc.Basis); diff != "" {
				t.Errorf("bases (-want +got):\n%s", diff)
			}
			if r.Inputs != tt.inputs || r.Sys != tt.sys || r.Total() != tt.total {
				t.Errorf("inputs %v, sys %d, total %d; want %v, %d, %d", r.Inputs, r.Sys, r.Total(), tt.inputs, tt.sys, tt.total)
			}
		})
	}
}

func TestNewReplayNeedsTokenizer(t *testing.T) {
	tests := []struct {
		name string
		api  []rollout.APITokens
		want string
	}{
		{"user message of a cut turn", []rollout.APITokens{{Input: 100, Output: 20}, {Input: 150, Output: 30}, {Input: 90, Output: 10}}, "swe.jsonl:2: messages[5].tokens: " + ErrNoTokenizer.Error()},
		{"system prompt with message counts", nil, "swe.jsonl:2: messages[2].tokens: " + ErrNoTokenizer.Error()},
		{"estimate of hidden reasoning", []rollout.APITokens{{Input: 100, Output: 500}, {Input: 150, Output: 600}, {Input: 200, Output: 50}},
			"swe.jsonl:2: messages[2].tokens: " + ErrNoTokenizer.Error() + " (estimating the visible output: the request of turn 2 grew by 50 tokens, less than turn 1's output of 500, and the log records no reasoning)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := apiTrajectory(tt.api)
			tr.Inputs = rollout.InputsRequest
			_, err := NewReplay(tr, nil, "sys")
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrNoTokenizer) {
				t.Errorf("got %v, want %q wrapping ErrNoTokenizer", err, tt.want)
			}
		})
	}
	// Complete API usage needs no tokenizer at all.
	r, err := NewReplay(apiTrajectory([]rollout.APITokens{{Input: 100, Output: 20}, {Input: 150, Output: 30}, {Input: 190, Output: 10}}), nil, "sys")
	if err != nil || r.Total() != 200 {
		t.Errorf("complete API usage: total %d, err %v; want 200, nil", r.Total(), err)
	}
}

func TestReplayProbes(t *testing.T) {
	r := Replay{Sys: 10, Traj: rollout.Trajectory{Success: true}, Acc: Accounting{
		Pairs: [][2]int{{0, 1}, {2, 3}, {4, 5}},
		Turns: []TurnTokens{{5, 3}, {4, 2}, {6, 1}},
	}}
	tests := []struct {
		name    string
		budget  int64
		success bool
		want    []Probe
	}{
		{"fits exactly", 31, true, []Probe{{After: 1, Used: 18, Remaining: 13, Possible: true}, {After: 2, Used: 24, Remaining: 7, Possible: true}}},
		{"one token over", 30, true, []Probe{{After: 1, Used: 18, Remaining: 13}, {After: 2, Used: 24, Remaining: 7}}},
		{"failed rollout", 1000, false, []Probe{{After: 1, Used: 18, Remaining: 13}, {After: 2, Used: 24, Remaining: 7}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.Traj.Success = tt.success
			if diff := cmp.Diff(tt.want, r.Probes(tt.budget)); diff != "" {
				t.Errorf("Probes(%d) (-want +got):\n%s", tt.budget, diff)
			}
		})
	}
	one := Replay{Acc: Accounting{Pairs: [][2]int{{0, 1}}, Turns: []TurnTokens{{5, 3}}}}
	if got := one.Probes(100); got != nil {
		t.Errorf("one turn: got %v, want no probes", got)
	}
}

func TestParseBudget(t *testing.T) {
	tests := []struct {
		in      string
		want    Budget
		wantErr string
	}{
		{"", Budget{}, ""},
		{"median", Budget{Median: true}, ""},
		{"2500", Budget{Tokens: 2500}, ""},
		{"0", Budget{}, `budget "0": want a positive number of tokens or median`},
		{"-5", Budget{}, `budget "-5": want a positive number of tokens or median`},
		{"Median", Budget{}, `budget "Median": want a positive number of tokens or median`},
		{"2.5k", Budget{}, `budget "2.5k": want a positive number of tokens or median`},
	}
	for _, tt := range tests {
		got, err := ParseBudget(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseBudget(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"", "median", "2500", "0", "-1", "9223372036854775808", " 12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBudget(s)
		if err != nil {
			return
		}
		if b.Tokens < 0 || b.Median && b.Tokens != 0 {
			t.Fatalf("ParseBudget(%q) = %+v", s, b)
		}
		if s != "" {
			again, err := ParseBudget(b.String())
			if err != nil || again != b {
				t.Fatalf("ParseBudget(%q) = %+v; its String %q reads back as %+v, %v", s, b, b.String(), again, err)
			}
		}
	})
}

func TestLowerMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []int64
		want int64
	}{
		{"empty", nil, 0},
		{"one", []int64{7}, 7},
		{"odd", []int64{30, 10, 20}, 20},
		{"even takes the lower middle", []int64{40, 10, 30, 20}, 20},
		{"ties", []int64{5, 5, 9, 1}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			if got := LowerMedian(in); got != tt.want {
				t.Errorf("LowerMedian(%v) = %d, want %d", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("LowerMedian modified its input: %v, was %v", in, tt.in)
			}
		})
	}
}

// family has rollouts of totals 100, 400, 300 and 200 (sys 0); the third
// records its own budget of 350.
func family() []Replay {
	var rs []Replay
	for i, total := range []int64{100, 400, 300, 200} {
		r := Replay{Traj: rollout.Trajectory{ID: string(rune('a' + i)), Pos: rollout.Position{File: "f.jsonl", Line: i + 1, Index: -1}},
			Acc: Accounting{Turns: []TurnTokens{{total / 2, total / 2}}}}
		if i == 2 {
			r.Traj.Budget = 350
		}
		rs = append(rs, r)
	}
	return rs
}

func TestBudgets(t *testing.T) {
	tests := []struct {
		name     string
		b        Budget
		fallback int64
		want     []int64
	}{
		{"median of 100, 200, 300, 400 is the lower 200", Budget{Median: true}, 0, []int64{200, 200, 200, 200}},
		{"fixed", Budget{Tokens: 250}, 2500, []int64{250, 250, 250, 250}},
		{"own budget, else the task's", Budget{}, 2500, []int64{2500, 2500, 350, 2500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Budgets(family(), tt.b, tt.fallback, "sokoban")
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("Budgets = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	_, err := Budgets(family(), Budget{}, 0, "swebench")
	want := "f.jsonl:1: budget: no budget: task swebench has no default and the trajectory sets none"
	if err == nil || err.Error() != want {
		t.Errorf("no budget: got %v, want %q", err, want)
	}
}

func TestReadReplaysSWEBench(t *testing.T) {
	srcs := []rollout.Source{rollout.FileSource(filepath.Join("testdata", "replay", "swebench.jsonl"))}
	rs, err := ReadReplays(context.Background(), srcs, ReplayOptions{System: Tasks["swebench"].System})
	if err != nil {
		t.Fatal(err)
	}
	totals := make([]int64, len(rs))
	candidates, resolved := 0, 0
	for i, r := range rs {
		if r.Inputs != InputAPIDeltas || r.Sys != 0 {
			t.Errorf("%s: inputs %v, sys %d; want api-deltas, 0", r.Traj.ID, r.Inputs, r.Sys)
		}
		totals[i] = r.Total()
		candidates += r.Turns() - 1
		if r.Traj.Success {
			resolved++
		}
	}
	if len(rs) != 24 || candidates != 378 || resolved != 13 || LowerMedian(totals) != 17523 {
		t.Errorf("%d rollouts, %d candidates, %d resolved, median total %d; want 24, 378, 13, 17523",
			len(rs), candidates, resolved, LowerMedian(totals))
	}
	// swe_0000: the API's first input, then each request's growth beyond
	// the previous request and its answer.
	first := rs[0]
	want := []TurnTokens{{1233, 84}, {228, 334}, {272, 247}}
	if diff := cmp.Diff(want, first.Acc.Turns[:3]); diff != "" {
		t.Errorf("swe_0000 turns (-want +got):\n%s", diff)
	}
}

func TestReadReplaysIDs(t *testing.T) {
	path := filepath.Join("testdata", "replay", "warehouse.jsonl")
	srcs := []rollout.Source{rollout.FileSource(path), rollout.FileSource(path)}
	_, err := ReadReplays(context.Background(), srcs, ReplayOptions{Ledger: true})
	want := path + `:1: custom_id "wh_a" already used at ` + path + ":1"
	var dup *DuplicateError
	if !errors.As(err, &dup) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	rs, err := ReadReplays(context.Background(), srcs[:1], ReplayOptions{Ledger: true, PrefixIDs: true})
	if err != nil || rs[0].Traj.ID != "warehouse:wh_a" || len(rs) != 6 {
		t.Errorf("prefixed: %d rollouts, first %q, %v; want 6, warehouse:wh_a", len(rs), rs[0].Traj.ID, err)
	}
}
