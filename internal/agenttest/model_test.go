package agenttest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"bagen-data/internal/agenttest"
)

func post(t *testing.T, url, body string) (string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type"), string(b)
}

// TestUsageFields pins where each format puts the usage of one answer:
// Anthropic's input_tokens excludes the cache, the OpenAI formats count
// cached and reasoning tokens inside their totals.
func TestUsageFields(t *testing.T) {
	u := agenttest.Usage{Input: 1300, Cached: 1000, CacheWrite: 100, Output: 40, Reasoning: 15}
	m := agenttest.StartModel(t, agenttest.Script{Model: "m", Answers: []agenttest.Answer{{Command: "ls", Usage: u}}})
	cases := []struct {
		path, body string
		want       map[string]any
		usageAt    func(map[string]any) any
	}{
		{"/v1/messages", `{"model":"x","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}}]}`,
			map[string]any{"input_tokens": 200.0, "cache_read_input_tokens": 1000.0, "cache_creation_input_tokens": 100.0, "cache_creation": map[string]any{"ephemeral_1h_input_tokens": 0.0, "ephemeral_5m_input_tokens": 100.0}, "output_tokens": 40.0, "output_tokens_details": map[string]any{"thinking_tokens": 15.0}, "service_tier": "standard"},
			func(r map[string]any) any { return r["usage"] }},
		{"/v1/chat/completions", `{"model":"x","messages":[],"tools":[{"type":"function","function":{"name":"run_shell_command","parameters":{"type":"object","properties":{"command":{"type":"string"},"is_background":{"type":"boolean"}},"required":["command","is_background"]}}}]}`,
			map[string]any{"prompt_tokens": 1300.0, "completion_tokens": 40.0, "total_tokens": 1340.0,
				"prompt_tokens_details": map[string]any{"cached_tokens": 1000.0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 15.0}},
			func(r map[string]any) any { return r["usage"] }},
		{"/v1/responses", `{"model":"x","input":[],"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}]}`,
			map[string]any{"input_tokens": 1300.0, "input_tokens_details": map[string]any{"cached_tokens": 1000.0}, "output_tokens": 40.0,
				"output_tokens_details": map[string]any{"reasoning_tokens": 15.0}, "total_tokens": 1340.0},
			func(r map[string]any) any { return r["usage"] }},
	}
	for _, tc := range cases {
		_, body := post(t, m.URL+tc.path, tc.body)
		var r map[string]any
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %v: %s", tc.path, err, body)
		}
		got, _ := json.Marshal(tc.usageAt(r))
		want, _ := json.Marshal(tc.want)
		if string(got) != string(want) {
			t.Errorf("%s usage = %s, want %s", tc.path, got, want)
		}
	}
	// The tool arguments follow each schema: a string, required fields
	// filled, an argv where the schema wants an array.
	_, body := post(t, m.URL+"/v1/chat/completions", cases[1].body)
	if !strings.Contains(body, `"arguments":"{\"command\":\"ls\",\"is_background\":false}"`) {
		t.Errorf("chat tool call: %s", body)
	}
	_, body = post(t, m.URL+"/v1/responses", cases[2].body)
	if !strings.Contains(body, `"arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}"`) {
		t.Errorf("responses tool call: %s", body)
	}
}

// TestStreams pins the event sequence of each streamed format.
func TestStreams(t *testing.T) {
	m := agenttest.StartModel(t, agenttest.Script{Model: "m", Answers: []agenttest.Answer{
		{Text: "ok", Reasoning: "think", Usage: agenttest.Usage{Input: 10, Cached: 4, Output: 3, Reasoning: 1}}}})
	tools := map[string]string{
		"/v1/messages":         `"tools":[{"name":"Bash","input_schema":{}}],"messages":[]`,
		"/v1/chat/completions": `"tools":[{"type":"function","function":{"name":"run_shell_command"}}],"messages":[],"stream_options":{"include_usage":true}`,
		"/v1/responses":        `"tools":[{"type":"function","name":"exec_command"}],"input":[]`,
	}
	want := map[string]string{
		"/v1/messages": "message_start ping content_block_start content_block_delta content_block_delta content_block_stop " +
			"content_block_start content_block_delta content_block_stop message_delta message_stop",
		"/v1/chat/completions": "chat.completion.chunk chat.completion.chunk chat.completion.chunk chat.completion.chunk usage [DONE]",
		"/v1/responses": "response.created response.in_progress response.output_item.added response.reasoning_summary_part.added " +
			"response.reasoning_summary_text.delta response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done " +
			"response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.content_part.done " +
			"response.output_item.done response.completed",
	}
	for path, extra := range tools {
		ctype, body := post(t, m.URL+path, `{"model":"x","stream":true,`+extra+`}`)
		if ctype != "text/event-stream" {
			t.Errorf("%s: content type %q", path, ctype)
		}
		var names []string
		sc := bufio.NewScanner(strings.NewReader(body))
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") {
				continue
			}
			data := strings.TrimPrefix(line, "data: ")
			var ev map[string]any
			if json.Unmarshal([]byte(data), &ev) != nil {
				names = append(names, data)
				continue
			}
			switch {
			case ev["type"] != nil:
				names = append(names, ev["type"].(string))
			case ev["usage"] != nil:
				names = append(names, "usage")
			default:
				names = append(names, ev["object"].(string))
			}
		}
		if got := strings.Join(names, " "); got != want[path] {
			t.Errorf("%s events:\n got %s\nwant %s", path, got, want[path])
		}
	}
	for _, c := range m.Calls() {
		if !c.Stream || c.Aux || c.Step != 0 {
			t.Errorf("%s recorded stream %v aux %v step %d", c.Path, c.Stream, c.Aux, c.Step)
		}
	}
}

// TestAux answers requests without a shell tool from their own words and
// counts steps from the tool results in the history.
func TestAux(t *testing.T) {
	m := agenttest.StartModel(t, agenttest.Script{})
	_, body := post(t, m.URL+"/v1/chat/completions", `{"model":"x","messages":[{"role":"user","content":"Reply as JSON with next_speaker"}]}`)
	if !strings.Contains(body, `next_speaker\": \"user\"`) {
		t.Errorf("next-speaker answer: %s", body)
	}
	_, body = post(t, m.URL+"/v1/messages", `{"model":"x","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b"}]}],"tools":[{"name":"Bash"}]}`)
	if !strings.Contains(body, `"text":"done"`) {
		t.Errorf("past-the-script answer: %s", body)
	}
	resp, err := http.Get(m.URL + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %v %v", resp, err)
	}
	resp.Body.Close()
	calls := m.Calls()
	if len(calls) != 3 || !calls[0].Aux || calls[1].Aux || calls[1].Step != 2 || calls[2].Format != "models" {
		t.Errorf("calls: %+v", calls)
	}
}

// TestConcurrentSteps: the stand-in answers each request from its own
// history, so interleaved sessions at different steps get their own
// answers.
func TestConcurrentSteps(t *testing.T) {
	script := agenttest.Scripts["three-calls"]
	m := agenttest.StartModel(t, script)
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(step int) {
			defer wg.Done()
			var results []string
			for k := 0; k < step; k++ {
				results = append(results, `{"role":"tool","tool_call_id":"c","content":"x"}`)
			}
			body := `{"model":"x","tools":[{"type":"function","function":{"name":"run_shell_command","parameters":{"properties":{"command":{"type":"string"}}}}}],"messages":[` + strings.Join(results, ",") + `]}`
			resp, err := http.Post(m.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			a := script.Answers[step]
			want := fmt.Sprintf(`"prompt_tokens":%d,`, a.Usage.Input)
			if !strings.Contains(string(b), want) {
				errs <- fmt.Sprintf("step %d: %s lacks %q", step, b, want)
			}
		}(i % len(script.Answers))
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
