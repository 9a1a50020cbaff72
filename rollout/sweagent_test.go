package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSWEAgent(t *testing.T) {
	got := mustReadAll(t, nil, "testdata/sweagent")
	want := []Trajectory{{
		ID: "pydicom__pydicom-1458", Extra: Extra{Instance: "pydicom__pydicom-1458"},
		Pos: Position{File: "testdata/sweagent/pydicom__pydicom-1458.traj", Index: -1},
		Messages: []Message{
			system("SETTING: You are an autonomous programmer."),
			user("Here is a demonstration of how to correctly accomplish this task.\n\nWe're currently solving the following issue within our repository.\nISSUE:\nPixel Representation attribute should be optional"),
			assistant("Let's find the dataset module first.\n\n```\nfind_file \"dataset.py\"\n```"),
			user("Found 1 matches for \"dataset.py\" in /pydicom__pydicom:\n/pydicom__pydicom/pydicom/dataset.py"),
			assistant("The fix is in place.\n\n<tool_call>\n{\"name\": \"submit\", \"arguments\": {}}\n</tool_call>"),
			user("\ndiff --git a/pydicom/dataset.py b/pydicom/dataset.py\n"),
		},
		API:     []APITokens{{Input: Unrecorded, Output: Unrecorded}, {Input: Unrecorded, Output: Unrecorded}},
		Success: true, Outcome: OutcomeExitStatus,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SWE-agent .traj (-want +got):\n%s", diff)
	}
}
