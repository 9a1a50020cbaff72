package guard

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestCodecsReadRealRequests reads the second request each real CLI sent
// (testdata/requests, captured by TestCaptureRequests): a history with
// the first answer's tool call and its result.
func TestCodecsReadRealRequests(t *testing.T) {
	tests := []realRequest{
		{"claude", Anthropic{}, []string{"system", "user", "user", "user", "assistant", "tool"}, []string{"toolu_1"}, "e8a31adb-2382-4da3-9846-a63ec7069c87", false,
			[]rollout.Message{{Role: "assistant", Content: "Writing one.\n<tool_call>\n{\"name\": \"Bash\", \"arguments\": {\"command\":\"echo one > one.txt\"}}\n</tool_call>"}},
			"(Bash completed with no output)"},
		{"codex", Responses{}, []string{"system", "system", "user", "user", "assistant", "assistant", "tool"}, []string{"msg_1", "fc_1", "call_1"}, "", false,
			[]rollout.Message{{Role: "assistant", Content: "Writing one."}, {Role: "assistant", Content: "<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"echo one \\u003e one.txt\"}}\n</tool_call>"}},
			"Chunk ID: f398aa\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\n"},
		{"qwen", Chat{}, []string{"system", "user", "assistant", "tool"}, []string{"call_1"}, "", true,
			[]rollout.Message{{Role: "assistant", Content: "Writing one.\n<tool_call>\n{\"name\": \"run_shell_command\", \"arguments\": {\"command\":\"echo one > one.txt\"}}\n</tool_call>"}},
			"Command: echo one > one.txt\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) { checkRealRequest(t, tt) })
	}
}

// realRequest is a captured request and what its codec must read from it.
type realRequest struct {
	file       string
	codec      Codec
	roles      []string
	echoed     []string
	session    string
	agentUsage bool
	assistant  []rollout.Message
	tool       string
}

func checkRealRequest(t *testing.T, tt realRequest) {
	body, err := os.ReadFile("testdata/requests/" + tt.file + ".json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := tt.codec.Request(body)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	var asst []rollout.Message
	for _, it := range r.Items {
		roles = append(roles, it.Role)
		if it.Role == "assistant" {
			asst = append(asst, it)
		}
	}
	if !slices.Equal(roles, tt.roles) || !slices.Equal(r.Echoed, tt.echoed) || r.SessionID != tt.session ||
		r.AgentUsage != tt.agentUsage || !r.Tools || !r.Stream || r.Model != "agenttest-model" {
		t.Errorf("roles %v echoed %v session %q agent usage %v tools %v stream %v model %q\nwant roles %v echoed %v session %q agent usage %v",
			roles, r.Echoed, r.SessionID, r.AgentUsage, r.Tools, r.Stream, r.Model, tt.roles, tt.echoed, tt.session, tt.agentUsage)
	}
	if diff := cmp.Diff(tt.assistant, asst); diff != "" {
		t.Errorf("assistant items (-want +got):\n%s", diff)
	}
	if last := r.Items[len(r.Items)-1]; last.Role != "tool" || last.Content != tt.tool {
		t.Errorf("last item %+v, want the tool result %q", last, tt.tool)
	}
	_, turns, tail := rollout.SplitGuardHistory(r.Items)
	if len(turns) != 1 || len(tail) != 1 {
		t.Errorf("history splits into %d turns and a tail of %d, want 1 and 1", len(turns), len(tail))
	}
	// Without a note, the body goes out as it came (Qwen Code
	// asks for stream usage itself).
	out, err := tt.codec.Outgoing(body, r, "")
	if err != nil || string(out) != string(body) {
		t.Errorf("outgoing body changed (%v)", err)
	}
}
