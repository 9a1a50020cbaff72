package agenttest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"bagen-data/internal/agenttest"
)

// The stand-in answers a Chat Completions request that offers Qwen Code's
// shell tool with the script's first answer: a call of that tool, with the
// script's usage in the format's own fields.
func ExampleNewModel() {
	m, err := agenttest.NewModel(agenttest.Script{Answers: []agenttest.Answer{
		{Command: "ls", Usage: agenttest.Usage{Input: 100, Cached: 60, Output: 12, Reasoning: 4}},
		{Text: "done"},
	}})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"list"}],
	  "tools":[{"type":"function","function":{"name":"run_shell_command","parameters":{"properties":{"command":{"type":"string"}}}}}]}`
	resp, err := http.Post(m.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var r struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
		Usage json.RawMessage
	}
	json.NewDecoder(resp.Body).Decode(&r)
	call := r.Choices[0].Message.ToolCalls[0].Function
	fmt.Println(call.Name, call.Arguments)
	fmt.Println(string(r.Usage))
	c := m.Calls()[0]
	fmt.Println(c.Format, c.Step, c.Tool, c.Stream)
	// Output:
	// run_shell_command {"command":"ls"}
	// {"prompt_tokens":100,"completion_tokens":12,"total_tokens":112,"prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":4}}
	// chat 0 run_shell_command false
}
