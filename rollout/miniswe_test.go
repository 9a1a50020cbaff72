package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMiniSWEAgent1(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/mini1")
	file := "testdata/mini1/django__django-11099/django__django-11099.traj.json"
	want := []Trajectory{{
		ID: "django__django-11099", Extra: Extra{Instance: "django__django-11099"}, Pos: Position{File: file, Index: -1},
		Messages: []Message{
			system("You are a helpful assistant that can interact with a computer."),
			user("<pr_description>\nUsernameValidator allows trailing newline in usernames\n</pr_description>"),
			assistant("THOUGHT: Find the validators.\n\n```bash\ngrep -n regex django/contrib/auth/validators.py\n```"),
			user("<returncode>0</returncode>\n<output>\n10:    regex = r'^[\\w.@+-]+$'\n</output>"),
			assistant("THOUGHT: Use \\A and \\Z.\n\n```bash\nsed -i 's/\\^/\\\\A/' django/contrib/auth/validators.py && echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"),
			user("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a/django/contrib/auth/validators.py b/django/contrib/auth/validators.py\n"),
		},
		API:     []APITokens{{Input: 1200, Output: 180, Reasoning: Tokens(128)}, {Input: 1290, Output: 95, Reasoning: Tokens(40), Cached: 1152}},
		Inputs:  InputsRequest,
		Success: true, Outcome: OutcomeExitStatus,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mini-swe-agent 1.x (-want +got):\n%s", diff)
	}
}

func TestMiniSWEAgent2(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/mini2")
	want := []Trajectory{{
		ID: "astropy__astropy-12907", Extra: Extra{Instance: "astropy__astropy-12907"},
		Pos: Position{File: "testdata/mini2/astropy__astropy-12907/astropy__astropy-12907.traj.json", Index: -1},
		Messages: []Message{
			system("You are a helpful assistant that can interact with a computer shell to solve programming tasks."),
			user("Fix separability_matrix for nested CompoundModels."),
			assistant("Let me look at the code.\n\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"grep -n _cstack astropy/modeling/separable.py\"}}\n</tool_call>"),
			user("<returncode>0</returncode>\n<output>\n219:def _cstack(left, right):\n</output>"),
			assistant("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"sed -i 's/= 1$/= right/' astropy/modeling/separable.py\"}}\n</tool_call>\n" +
				"<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\"}}\n</tool_call>"),
			user("<returncode>0</returncode>\n<output>\n</output>"),
		},
		API:     []APITokens{{Input: 900, Output: 60}, {Input: 1010, Output: 75, Reasoning: Tokens(20), Cached: 896}},
		Inputs:  InputsRequest,
		Success: true, Outcome: OutcomeExitStatus,
	}, {
		ID: "sympy__sympy-20590", Extra: Extra{Instance: "sympy__sympy-20590"},
		Pos: Position{File: "testdata/mini2/sympy__sympy-20590/sympy__sympy-20590.traj.json", Index: -1},
		Messages: []Message{
			system("You are a helpful assistant."),
			user("Symbol instances have __dict__ since 1.7?"),
			assistant("Check __slots__.\n\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"grep -rn __slots__ sympy/core/basic.py\"}}\n</tool_call>"),
			user("<returncode>0</returncode>\n<output>\n32:    __slots__ = ('_mhash', '_args', '_assumptions')\n</output>"),
			assistant("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"grep -rn __slots__ sympy/core/_print_helpers.py\"}}\n</tool_call>"),
			user("<returncode>1</returncode>\n<output>\n</output>"),
		},
		API:     []APITokens{{Input: 700, Output: 300, Reasoning: Tokens(256)}, {Input: 1050, Output: 90, Reasoning: Tokens(64), Cached: 640}},
		Inputs:  InputsRequest,
		Success: false, Outcome: OutcomeExitStatus,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mini-swe-agent 2.x (-want +got):\n%s", diff)
	}
}

func TestResultsJoin(t *testing.T) {
	res, err := LoadResults([]string{"testdata/report.json"})
	if err != nil {
		t.Fatal(err)
	}
	got := mustReadAll(t, &Options{Results: res}, "testdata/mini2", "testdata/mini1")
	var outcomes []string
	for _, tr := range got {
		s := "fail"
		if tr.Success {
			s = "pass"
		}
		outcomes = append(outcomes, tr.ID+" "+s+" "+string(tr.Outcome))
	}
	want := []string{
		"astropy__astropy-12907 fail results", // submitted, but not resolved
		"sympy__sympy-20590 fail results",
		"django__django-11099 pass results",
	}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// TestMiniSWEAgentMessageList: the bare message list of mini-swe-agent's own
// test data (no info, no usage, no outcome).
func TestMiniSWEAgentMessageList(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/mini0")
	want := []Trajectory{{
		ID: "sympy__sympy-11400", Extra: Extra{Instance: "sympy__sympy-11400"},
		Pos: Position{File: "testdata/mini0/sympy__sympy-11400.traj.json", Index: -1},
		Messages: []Message{
			system("You are a helpful assistant that can interact with a computer."),
			user("Please solve this issue: ccode(sinc(x)) doesn't work."),
			assistant("THOUGHT: Look at the printer.\n\n```bash\ngrep -n sinc sympy/printing/ccode.py\n```"),
			user("<returncode>1</returncode>\n<output>\n</output>"),
			assistant("THOUGHT: Done.\n\n```bash\necho MINI_SWE_AGENT_FINAL_OUTPUT\n```"),
			user("MINI_SWE_AGENT_FINAL_OUTPUT"),
		},
		API:     []APITokens{{Input: Unrecorded, Output: Unrecorded}, {Input: Unrecorded, Output: Unrecorded}},
		Inputs:  InputsRequest,
		Outcome: OutcomeNone,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("message list (-want +got):\n%s", diff)
	}
}
