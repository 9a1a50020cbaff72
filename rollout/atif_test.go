package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestATIF(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/harbor")
	want := []Trajectory{{
		ID: "job-1/astropy__astropy-12907__Lm3nB8c", Extra: Extra{Instance: "astropy__astropy-12907"},
		Pos: Position{File: "testdata/harbor/job-1/astropy__astropy-12907__Lm3nB8c/agent/trajectory.json", Index: -1},
		Messages: []Message{
			user("Continue from the summary: fix _cstack."),
			assistant(`{"commands": [{"keystrokes": "grep -n _cstack astropy/modeling/separable.py\n"}]}`),
			user("219:def _cstack(left, right):"),
		},
		API:     []APITokens{{Input: 800, Output: 40}},
		Inputs:  InputsRequest,
		Outcome: OutcomeNone, // the verifier did not run
	}, {
		ID: "job-1/django__django-11099__x7Kp2Qa", Extra: Extra{Instance: "django__django-11099"},
		Pos: Position{File: "testdata/harbor/job-1/django__django-11099__x7Kp2Qa/agent/trajectory.json", Index: -1},
		Messages: []Message{
			system("You are Claude Code."),
			user("UsernameValidator allows trailing newline in usernames."),
			assistant("I'll look at the validators.\n\n<tool_call>\n{\"name\": \"Grep\", \"arguments\": {\"pattern\":\"regex\",\"path\":\"django/contrib/auth/validators.py\"}}\n</tool_call>"),
			user(`10:    regex = r'^[\w.@+-]+$'`),
			assistant("<tool_call>\n{\"name\": \"Edit\", \"arguments\": {\"file_path\":\"django/contrib/auth/validators.py\",\"old_string\":\"r'^[\\\\w.@+-]+$'\",\"new_string\":\"r'\\\\A[\\\\w.@+-]+\\\\Z'\"}}\n</tool_call>"),
			user("The file has been updated."),
			assistant(`Fixed: the validators now use \A and \Z.`),
		},
		API:     []APITokens{{Input: 3500, Output: 250, Cached: 3000}, {Input: 3790, Output: 300, Reasoning: Tokens(120), Cached: 3300}, {Input: 100, Output: 60}},
		Inputs:  InputsRequest,
		Success: true, Outcome: OutcomeResults,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ATIF (-want +got):\n%s", diff)
	}
}
