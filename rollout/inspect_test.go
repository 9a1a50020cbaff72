package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInspectJSON(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/inspect/ctf_2025-07-05.json")
	file := "testdata/inspect/ctf_2025-07-05.json"
	want := []Trajectory{{
		ID: "ctf_2025-07-05/ctf-1", Extra: Extra{Instance: "ctf-1"}, Pos: Position{File: file, Index: 0},
		Messages: []Message{
			system("You are a CTF agent. Use bash."),
			user("Find the flag in /challenge."), // resolved from attachment://a1b2
			assistant("Let me list the files.\n\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"cmd\":\"ls /challenge\"}}\n</tool_call>"),
			user("flag.txt\n"),
			assistant("<tool_call>\n{\"name\": \"submit\", \"arguments\": {\"answer\":\"picoCTF{abc}\"}}\n</tool_call>"),
			user("picoCTF{abc}"),
		},
		// Before 0.3.184 input_tokens is taken as recorded; the scorer's
		// model call (90 in, 2 out) is not a turn.
		API:     []APITokens{{Input: 420, Output: 35, Reasoning: Tokens(12)}, {Input: 480, Output: 20, Cached: 384}},
		Inputs:  InputsRequest,
		Success: false, Outcome: OutcomeScore, // "includes" (first by name) is I
	}, {
		ID: "ctf_2025-07-05/7/epoch-2", Extra: Extra{Instance: "7"}, Pos: Position{File: file, Index: 1},
		Messages: []Message{user("What is 2+2?"), assistant("4")},
		API:      []APITokens{{Input: 12, Output: 1}},
		Inputs:   InputsRequest,
		Success:  false, Outcome: OutcomeScore, // P-like 0.5
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Inspect .json (-want +got):\n%s", diff)
	}
}

func TestInspectEvalZstd(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/inspect/ctf_2026-05-01.eval")
	want := []Trajectory{{
		ID: "ctf_2026-05-01/ctf-1", Extra: Extra{Instance: "ctf-1"},
		Pos: Position{File: "testdata/inspect/ctf_2026-05-01.eval:samples/ctf-1_epoch_1.json", Index: -1},
		Messages: []Message{
			user("Find the flag in /challenge."),
			assistant("Looking.\n\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"cmd\":\"cat /challenge/flag.txt\"}}\n</tool_call>"),
			user("picoCTF{abc}"),
			assistant("The flag is picoCTF{abc}."),
		},
		// From 0.3.184 input_tokens excludes cache reads and writes:
		// 50 + 1000 + 200 and 30 + 1300.
		API:     []APITokens{{Input: 1250, Output: 40, Reasoning: Tokens(10), Cached: 1000}, {Input: 1330, Output: 12, Cached: 1300}},
		Inputs:  InputsRequest,
		Success: true, Outcome: OutcomeScore,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Inspect .eval (-want +got):\n%s", diff)
	}
}

func TestAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"0.3.184": true, "0.3.183": false, "0.3.95.dev16+g6527d0861": false, "0.3.210": true, "0.4.0": true, "1.0": false, "": false, "0.3.184rc1": true} {
		if got := atLeast(v, 0, 3, 184); got != want {
			t.Errorf("atLeast(%q, 0.3.184) = %v, want %v", v, got, want)
		}
	}
}
