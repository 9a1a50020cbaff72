package rollout

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// OpenHands is an OpenHands event array: the trajectory file that
// save_trajectory_path writes (and the UI downloads), one JSON array of
// action and observation events.
var OpenHands = &Format{Name: "openhands", Doc: "OpenHands event-array trajectory (save_trajectory_path)", layout: document}

// OpenHandsOutput is OpenHands' evaluation output.jsonl: one instance per
// line with its event history and metrics.token_usages; outcomes come
// from output.swebench_eval.jsonl beside it.
var OpenHandsOutput = &Format{Name: "openhands-output", Doc: "OpenHands evaluation output.jsonl (instance_id, history, metrics)", layout: lines,
	match: func(k map[string]json.RawMessage) bool { return has(k, "instance_id", "history") }}

// OpenHandsMetadata is an evaluation run's metadata.json: no trajectory.
var OpenHandsMetadata = &Format{Name: "openhands-metadata", Doc: "OpenHands evaluation metadata.json", Side: true, layout: document,
	match: func(k map[string]json.RawMessage) bool { return has(k, "agent_class", "llm_config") }}

func init() {
	OpenHands.decode = decodeOpenHands
	OpenHandsOutput.decode = decodeOpenHandsOutput
}

// isOpenHandsEvent: the first element of an event array.
func isOpenHandsEvent(k map[string]json.RawMessage) bool {
	return has(k, "source") && (has(k, "action") || has(k, "observation"))
}

type wireEvent struct {
	Source      string          `json:"source"`
	Action      string          `json:"action"`
	Observation string          `json:"observation"`
	Message     json.RawMessage `json:"message"`
	Content     json.RawMessage `json:"content"`
	Args        *struct {
		Content json.RawMessage `json:"content"`
	} `json:"args"`
	ToolCallMetadata *struct {
		ModelResponse *struct {
			ID      string `json:"id"`
			Choices []struct {
				Message struct {
					Content   json.RawMessage `json:"content"`
					ToolCalls json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		} `json:"model_response"`
	} `json:"tool_call_metadata"`
}

type wireTokenUsage struct {
	PromptTokens     json.RawMessage `json:"prompt_tokens"`
	CompletionTokens json.RawMessage `json:"completion_tokens"`
	CacheReadTokens  json.RawMessage `json:"cache_read_tokens"`
	ResponseID       string          `json:"response_id"`
}

func decodeOpenHands(rec Record) (Trajectory, error) {
	var events []json.RawMessage
	if err := json.Unmarshal(rec.Data, &events); err != nil {
		return Trajectory{Pos: rec.Pos}, rec.Errorf("", "%w", JSONCause(err))
	}
	id := BaseID(rec.Pos.File)
	return openHandsEvents(rec, "", events, nil, Trajectory{ID: id, Pos: rec.Pos, Inputs: InputsRequest})
}

type wireOutput struct {
	InstanceID *string           `json:"instance_id"`
	History    []json.RawMessage `json:"history"`
	Metrics    *struct {
		TokenUsages []wireTokenUsage `json:"token_usages"`
	} `json:"metrics"`
	TestResult *struct {
		Report *struct {
			Resolved *bool `json:"resolved"`
		} `json:"report"`
	} `json:"test_result"`
}

func decodeOpenHandsOutput(rec Record) (Trajectory, error) {
	var w wireOutput
	if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Trajectory{Pos: rec.Pos}, rec.Errorf(err2field(err), "%w", JSONCause(err))
	}
	if w.InstanceID == nil || *w.InstanceID == "" {
		return Trajectory{Pos: rec.Pos}, rec.Errorf("instance_id", "missing or empty")
	}
	usages := map[string]wireTokenUsage{}
	if w.Metrics != nil {
		for _, u := range w.Metrics.TokenUsages {
			usages[u.ResponseID] = u
		}
	}
	t := Trajectory{ID: *w.InstanceID, Extra: Extra{Instance: *w.InstanceID}, Pos: rec.Pos, Inputs: InputsRequest}
	t, err := openHandsEvents(rec, "history", w.History, usages, t)
	if err != nil {
		return t, err
	}
	if w.TestResult != nil && w.TestResult.Report != nil && w.TestResult.Report.Resolved != nil {
		t.Success, t.Outcome = *w.TestResult.Report.Resolved, OutcomeResults
	}
	if rec.beside != nil {
		rec.beside.join(&t)
	}
	return t, nil
}

// openHandsEvents builds the turns: an LLM call is an agent action with a
// model response id not seen before (an observation repeats its action's
// tool_call_metadata, and one response may yield several actions), or an
// agent message or finish without one; what the agent sees are user
// messages and observation contents.
func openHandsEvents(rec Record, prefix string, events []json.RawMessage, usages map[string]wireTokenUsage, t Trajectory) (Trajectory, error) {
	if len(events) == 0 {
		return t, rec.Errorf(join(prefix, ""), "no events")
	}
	b := turnBuilder{t: t}
	seen := map[string]bool{}
	for i, raw := range events {
		field := join(prefix, fmt.Sprintf("[%d]", i))
		var e wireEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return b.t, rec.Errorf(field, "want an event object, got %s", clipJSON(raw))
		}
		if err := b.openHandsEvent(rec, field, e, seen, usages); err != nil {
			return b.t, err
		}
	}
	b.finish()
	if len(b.t.API) == 0 {
		return b.t, rec.Errorf(join(prefix, ""), "no agent action with an LLM response")
	}
	return b.t, nil
}

func join(prefix, field string) string {
	if prefix == "" {
		return strings.TrimPrefix(field, ".")
	}
	return prefix + field
}

func (b *turnBuilder) openHandsEvent(rec Record, field string, e wireEvent, seen map[string]bool, usages map[string]wireTokenUsage) error {
	switch {
	case e.Observation != "":
		c, _, err := text(rec, field+".content", e.Content)
		if c != "" {
			b.see(c)
		}
		return err
	case e.Action == "system" && len(b.t.Messages) == 0 && len(b.seen) == 0:
		c, err := argsContent(rec, field, e)
		b.t.Messages = append(b.t.Messages, Message{Role: "system", Content: c, Tokens: Unrecorded})
		return err
	case e.Source == "user" && e.Action == "message":
		c, err := argsContent(rec, field, e)
		b.see(c)
		return err
	case e.Source != "agent":
		return nil
	case e.ToolCallMetadata != nil && e.ToolCallMetadata.ModelResponse != nil:
		r := e.ToolCallMetadata.ModelResponse
		if seen[r.ID] && r.ID != "" {
			return nil
		}
		seen[r.ID] = true
		return b.openHandsCall(rec, field+".tool_call_metadata.model_response", r.ID, r.Choices, r.Usage, usages)
	case e.Action == "message" || e.Action == "finish":
		c, _, err := text(rec, field+".message", e.Message)
		if err != nil {
			return err
		}
		b.call(c, APITokens{Input: Unrecorded, Output: Unrecorded})
	}
	return nil
}

func argsContent(rec Record, field string, e wireEvent) (string, error) {
	if e.Args == nil {
		return "", rec.Errorf(field+".args", "missing")
	}
	c, _, err := text(rec, field+".args.content", e.Args.Content)
	return c, err
}

func (b *turnBuilder) openHandsCall(rec Record, field, id string, choices []struct {
	Message struct {
		Content   json.RawMessage `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	} `json:"message"`
}, rawUsage json.RawMessage, usages map[string]wireTokenUsage) error {
	if len(choices) == 0 {
		return rec.Errorf(field+".choices", "missing or empty")
	}
	m := choices[0].Message
	s, _, err := text(rec, field+".choices[0].message.content", m.Content)
	if err != nil {
		return err
	}
	calls, err := renderToolCalls(rec, field+".choices[0].message.tool_calls", m.ToolCalls)
	if err != nil {
		return err
	}
	api, err := usage(rec, field+".usage", rawUsage)
	if err != nil {
		return err
	}
	if u, ok := usages[id]; ok && api.Input == Unrecorded && id != "" {
		if api, err = tokenUsage(rec, field, u); err != nil {
			return err
		}
	}
	b.call(joinText(s, calls), api)
	return nil
}

// tokenUsage reads an entry of metrics.token_usages (per call, unlike the
// running sum in llm_metrics.accumulated_token_usage).
func tokenUsage(rec Record, field string, u wireTokenUsage) (APITokens, error) {
	a := APITokens{}
	var err error
	f := "metrics.token_usages[response_id=" + u.ResponseID + "]."
	if a.Input, err = whole(rec, f+"prompt_tokens", u.PromptTokens); err != nil {
		return a, err
	}
	if a.Output, err = whole(rec, f+"completion_tokens", u.CompletionTokens); err != nil {
		return a, err
	}
	if a.Cached, err = wholeOr0(rec, f+"cache_read_tokens", u.CacheReadTokens); err != nil {
		return a, err
	}
	return a, checkBreakdown(rec, f, a)
}

// loadSWEBenchEval reads OpenHands' <output>.swebench_eval.jsonl (each line
// an instance with test_result.report.resolved); nil when there is none.
func loadSWEBenchEval(path string) (*Results, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Results{resolved: map[string]bool{}, from: map[string]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var w wireOutput
		rec := Record{Pos: Position{File: path, Line: line, Index: -1}, Data: sc.Bytes()}
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			return nil, rec.Errorf(err2field(err), "%w", JSONCause(err))
		}
		if w.InstanceID == nil || w.TestResult == nil || w.TestResult.Report == nil || w.TestResult.Report.Resolved == nil {
			return nil, rec.Errorf("test_result.report.resolved", "missing: want an evaluated instance")
		}
		r.resolved[*w.InstanceID], r.from[*w.InstanceID] = *w.TestResult.Report.Resolved, path
	}
	return r, sc.Err()
}
