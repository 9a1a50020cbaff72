package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenHandsEventArray(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/openhands/trajectory.json")
	want := []Trajectory{{
		ID: "trajectory", Pos: Position{File: "testdata/openhands/trajectory.json", Index: -1},
		Messages: []Message{
			system("You are OpenHands agent."),
			user("Create hello.txt with 'Hello, world!'."),
			assistant("<tool_call>\n{\"name\": \"execute_bash\", \"arguments\": {\"command\":\"echo 'Hello, world!' > hello.txt\"}}\n</tool_call>"),
			user(""),
			assistant("Let me verify.\n\n<tool_call>\n{\"name\": \"str_replace_editor\", \"arguments\": {\"command\":\"view\",\"path\":\"/workspace/hello.txt\"}}\n</tool_call>"),
			user("Here's the result of running `cat -n` on /workspace/hello.txt:\n     1\tHello, world!\n"),
			assistant("<tool_call>\n{\"name\": \"finish\", \"arguments\": {\"message\":\"The file hello.txt contains 'Hello, world!'.\"}}\n</tool_call>"),
		},
		// One call per response id: the observation that repeats call 1's
		// metadata is not a second call.
		API: []APITokens{
			{Input: 5000, Output: 1200, Reasoning: Tokens(960), Cached: 4096},
			{Input: 5300, Output: 80, Cached: 4992},
			{Input: 5420, Output: 45, Cached: 5248},
		},
		Inputs:  InputsRequest,
		Outcome: OutcomeNone,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OpenHands events (-want +got):\n%s", diff)
	}
}

func TestOpenHandsOutput(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/openhands/eval")
	file := "testdata/openhands/eval/output.jsonl"
	want := []Trajectory{{
		ID: "django__django-11099", Extra: Extra{Instance: "django__django-11099"}, Pos: Position{File: file, Line: 1, Index: -1},
		Messages: []Message{
			system("You are OpenHands agent."),
			user("Fix UsernameValidator."),
			assistant("<tool_call>\n{\"name\": \"execute_bash\", \"arguments\": {\"command\":\"grep -n regex django/contrib/auth/validators.py\"}}\n</tool_call>"),
			user("10: regex"),
			assistant("<tool_call>\n{\"name\": \"execute_bash\", \"arguments\": {\"command\":\"sed -i s/x/y/ django/contrib/auth/validators.py\"}}\n</tool_call>"),
		},
		API:     []APITokens{{Input: 4000, Output: 150}, {Input: 4100, Output: 180, Cached: 3900}},
		Inputs:  InputsRequest,
		Success: true, Outcome: OutcomeResults,
	}, {
		ID: "sympy__sympy-20590", Extra: Extra{Instance: "sympy__sympy-20590"}, Pos: Position{File: file, Line: 2, Index: -1},
		Messages: []Message{
			system("You are OpenHands agent."),
			user("Symbol has __dict__."),
			assistant("<tool_call>\n{\"name\": \"execute_bash\", \"arguments\": {\"command\":\"grep -rn __slots__ sympy/core\"}}\n</tool_call>"),
			user("32: __slots__"),
		},
		API:     []APITokens{{Input: 3000, Output: 90}},
		Inputs:  InputsRequest,
		Success: false, Outcome: OutcomeResults,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OpenHands output.jsonl (-want +got):\n%s", diff)
	}
}
