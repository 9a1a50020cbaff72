package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MiniSWEAgent is a mini-swe-agent trajectory (<instance>.traj.json), in
// both of its formats: "mini-swe-agent-1" (1.x: chat messages, observations
// as user messages, usage in messages[k].extra.response.usage) and
// "mini-swe-agent-1.1" (2.x: Chat Completions messages with tool_calls and
// role "tool" outputs, or Responses API objects with function_call_output
// items, ending in a role "exit" message).
var MiniSWEAgent = &Format{Name: "mini-swe-agent", Doc: "mini-swe-agent trajectory (<instance>.traj.json, 1.x and 2.x)", layout: document,
	match: func(k map[string]json.RawMessage) bool {
		var tf string
		json.Unmarshal(k["trajectory_format"], &tf)
		return strings.HasPrefix(tf, "mini-swe-agent") || (has(k, "messages", "info") && !has(k, "custom_id"))
	}}

func init() { MiniSWEAgent.decode = decodeMiniSWE }

type wireMini struct {
	Format     string            `json:"trajectory_format"`
	InstanceID *string           `json:"instance_id"`
	Reward     json.RawMessage   `json:"reward"`
	Info       *wireMiniInfo     `json:"info"`
	Messages   []json.RawMessage `json:"messages"`
}

type wireMiniInfo struct {
	ExitStatus *string `json:"exit_status"`
}

// wireMiniMessage holds every shape a mini-swe-agent message takes: a chat
// message (role, content, tool_calls), a Responses API object (object
// "response", output, usage) or a Responses input item (type
// function_call_output with output, or type message).
type wireMiniMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls json.RawMessage `json:"tool_calls"`
	Object    string          `json:"object"`
	Type      string          `json:"type"`
	Output    json.RawMessage `json:"output"`
	Usage     json.RawMessage `json:"usage"`
	Extra     *struct {
		Response   json.RawMessage `json:"response"`
		ExitStatus *string         `json:"exit_status"`
	} `json:"extra"`
}

// turnBuilder collects a trajectory turn by turn: the user side is
// everything seen since the previous call.
type turnBuilder struct {
	t    Trajectory
	seen []string
}

func (b *turnBuilder) see(s string) { b.seen = append(b.seen, s) }

func (b *turnBuilder) call(text string, api APITokens) {
	b.t.Messages = append(b.t.Messages,
		Message{Role: "user", Content: strings.Join(b.seen, "\n\n"), Tokens: Unrecorded},
		Message{Role: "assistant", Content: text, Tokens: Unrecorded})
	b.t.API = append(b.t.API, api)
	b.seen = b.seen[:0]
}

// finish adds what was seen after the last call as a trailing user message.
func (b *turnBuilder) finish() {
	if len(b.seen) > 0 {
		b.t.Messages = append(b.t.Messages, Message{Role: "user", Content: strings.Join(b.seen, "\n\n"), Tokens: Unrecorded})
	}
}

func decodeMiniSWE(rec Record) (Trajectory, error) {
	var w wireMini
	if bytes.HasPrefix(bytes.TrimLeft(rec.Data, " \t\r\n"), []byte("[")) {
		// A bare message list: the messages without info.
		if err := json.Unmarshal(rec.Data, &w.Messages); err != nil {
			return Trajectory{Pos: rec.Pos}, rec.Errorf("", "%w", JSONCause(err))
		}
	} else if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Trajectory{Pos: rec.Pos}, rec.Errorf(err2field(err), "%w", JSONCause(err))
	}
	if len(w.Messages) == 0 {
		return Trajectory{Pos: rec.Pos}, rec.Errorf("messages", "missing or empty")
	}
	b := turnBuilder{t: Trajectory{ID: BaseID(rec.Pos.File), Pos: rec.Pos, Inputs: InputsRequest}}
	if w.InstanceID != nil && *w.InstanceID != "" {
		b.t.ID = *w.InstanceID
	}
	b.t.Extra.Instance = b.t.ID
	exit := ""
	if w.Info != nil && w.Info.ExitStatus != nil {
		exit = *w.Info.ExitStatus
	}
	for i, raw := range w.Messages {
		status, err := b.miniMessage(rec, i, raw)
		if err != nil {
			return b.t, err
		}
		if exit == "" {
			exit = status
		}
	}
	b.finish()
	if len(b.t.API) == 0 {
		return b.t, rec.Errorf("messages", "no assistant message (no LLM call)")
	}
	return b.t, miniOutcome(rec, &b.t, w.Reward, exit)
}

// miniMessage adds one message; it returns the exit status of an exit
// message.
func (b *turnBuilder) miniMessage(rec Record, i int, raw json.RawMessage) (string, error) {
	field := fmt.Sprintf("messages[%d]", i)
	var m wireMiniMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", rec.Errorf(field, "%w", JSONCause(err))
	}
	switch {
	case m.Object == "response":
		return "", b.responsesCall(rec, field, m)
	case m.Type == "function_call_output":
		s, _, err := text(rec, field+".output", m.Output)
		b.see(s)
		return "", err
	case m.Role == "system" && i == 0:
		s, _, err := text(rec, field+".content", m.Content)
		b.t.Messages = append(b.t.Messages, Message{Role: "system", Content: s, Tokens: Unrecorded})
		return "", err
	case m.Role == "user", m.Role == "tool":
		s, _, err := text(rec, field+".content", m.Content)
		b.see(s)
		return "", err
	case m.Role == "assistant":
		return "", b.chatCall(rec, field, m)
	case m.Role == "exit":
		if m.Extra != nil && m.Extra.ExitStatus != nil {
			return *m.Extra.ExitStatus, nil
		}
		return "", nil
	}
	return "", rec.Errorf(field+".role", "want system (first), user, assistant, tool or exit, or a Responses item, got role %q type %q", m.Role, m.Type)
}

func (b *turnBuilder) chatCall(rec Record, field string, m wireMiniMessage) error {
	s, _, err := text(rec, field+".content", m.Content)
	if err != nil {
		return err
	}
	calls, err := renderToolCalls(rec, field+".tool_calls", m.ToolCalls)
	if err != nil {
		return err
	}
	api := APITokens{Input: Unrecorded, Output: Unrecorded}
	if m.Extra != nil {
		var resp struct {
			Usage json.RawMessage `json:"usage"`
		}
		if v, ok := present(m.Extra.Response); ok && json.Unmarshal(v, &resp) == nil {
			if api, err = usage(rec, field+".extra.response.usage", resp.Usage); err != nil {
				return err
			}
		}
	}
	b.call(joinText(s, calls), api)
	return nil
}

type wireOutputItem struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// responsesCall reads a Responses API object: its message items' text and
// its function calls; reasoning items are hidden output (counted in usage).
func (b *turnBuilder) responsesCall(rec Record, field string, m wireMiniMessage) error {
	var items []wireOutputItem
	if err := json.Unmarshal(m.Output, &items); err != nil {
		return rec.Errorf(field+".output", "want an array of output items, got %s", clipJSON(m.Output))
	}
	var parts []string
	for j, it := range items {
		f := fmt.Sprintf("%s.output[%d]", field, j)
		switch it.Type {
		case "message":
			s, _, err := text(rec, f+".content", it.Content)
			if err != nil {
				return err
			}
			parts = append(parts, s)
		case "function_call":
			if it.Name == nil {
				return rec.Errorf(f+".name", "missing")
			}
			parts = append(parts, renderCall(*it.Name, it.Arguments))
		}
	}
	api, err := usage(rec, field+".usage", m.Usage)
	if err != nil {
		return err
	}
	out := strings.Join(parts, "\n\n")
	if err := checkSize(rec, field+".output", out); err != nil {
		return err
	}
	b.call(out, api)
	return nil
}

// wireUsage is a usage object in either API's names: Chat Completions
// (prompt_tokens, completion_tokens, *_tokens_details) or Responses
// (input_tokens, output_tokens, *_tokens_details).
type wireUsage struct {
	PromptTokens     json.RawMessage `json:"prompt_tokens"`
	CompletionTokens json.RawMessage `json:"completion_tokens"`
	InputTokens      json.RawMessage `json:"input_tokens"`
	OutputTokens     json.RawMessage `json:"output_tokens"`
	PromptDetails    *wireDetails    `json:"prompt_tokens_details"`
	CompletionDetail *wireDetails    `json:"completion_tokens_details"`
	InputDetails     *wireDetails    `json:"input_tokens_details"`
	OutputDetails    *wireDetails    `json:"output_tokens_details"`
}

type wireDetails struct {
	Cached    json.RawMessage `json:"cached_tokens"`
	Reasoning json.RawMessage `json:"reasoning_tokens"`
}

// usage reads one call's usage; absent is Unrecorded.
func usage(rec Record, field string, raw json.RawMessage) (APITokens, error) {
	a := APITokens{Input: Unrecorded, Output: Unrecorded}
	v, ok := present(raw)
	if !ok {
		return a, nil
	}
	var u wireUsage
	if err := json.Unmarshal(v, &u); err != nil {
		return a, rec.Errorf(field, "want a usage object, got %s", clipJSON(v))
	}
	inName, in, outName, out := "prompt_tokens", u.PromptTokens, "completion_tokens", u.CompletionTokens
	inDet, outDet := u.PromptDetails, u.CompletionDetail
	if _, ok := present(in); !ok {
		inName, in, outName, out = "input_tokens", u.InputTokens, "output_tokens", u.OutputTokens
		inDet, outDet = u.InputDetails, u.OutputDetails
	}
	var err error
	if a.Input, err = whole(rec, field+"."+inName, in); err != nil {
		return a, err
	}
	if a.Output, err = whole(rec, field+"."+outName, out); err != nil {
		return a, err
	}
	if inDet != nil {
		if a.Cached, err = wholeOr0(rec, field+"."+inName+"_details.cached_tokens", inDet.Cached); err != nil {
			return a, err
		}
	}
	if outDet != nil {
		if a.Reasoning, err = optionalWhole(rec, field+"."+outName+"_details.reasoning_tokens", outDet.Reasoning); err != nil {
			return a, err
		}
	}
	return a, checkBreakdown(rec, field+".", a)
}

// miniOutcome: an inline reward (SkyRL writes one) is the score, else the
// exit status: "Submitted" is success (the agent submitted a patch; not a
// verified resolution, which only a results file gives).
func miniOutcome(rec Record, t *Trajectory, reward json.RawMessage, exit string) error {
	if v, ok := present(reward); ok {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return rec.Errorf("reward", "want a number, got %s", clipJSON(v))
		}
		t.Success, t.Outcome = f == 1, OutcomeScore
		return nil
	}
	if exit != "" {
		t.Success, t.Outcome = strings.EqualFold(exit, "submitted"), OutcomeExitStatus
	}
	return nil
}

// err2field names the top-level field of a type error.
func err2field(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}
