package rollout

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SWEAgent is a SWE-agent trajectory (<instance>.traj): trajectory steps,
// one per LLM call, and the message history (which may omit the last
// step). It records no per-call usage (info.model_stats holds totals only).
var SWEAgent = &Format{Name: "swe-agent", Doc: "SWE-agent trajectory (<instance>.traj: trajectory steps, history, info)", layout: document,
	match: func(k map[string]json.RawMessage) bool { return has(k, "trajectory", "info") && !has(k, "messages") }}

func init() { SWEAgent.decode = decodeSWEAgent }

type wireSWEAgent struct {
	Trajectory []struct {
		Response    *string         `json:"response"`
		Observation json.RawMessage `json:"observation"`
	} `json:"trajectory"`
	History []wireSWEHistory `json:"history"`
	Info    *struct {
		ExitStatus *string `json:"exit_status"`
	} `json:"info"`
}

type wireSWEHistory struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	IsDemo    bool            `json:"is_demo"`
	ToolCalls json.RawMessage `json:"tool_calls"`
}

// decodeSWEAgent: the first call's user side is the history before the
// first assistant message (demonstrations included: the model saw them);
// each step's response is a call (with the tool calls of the matching
// history message), and its observation is what the next call sees.
func decodeSWEAgent(rec Record) (Trajectory, error) {
	var w wireSWEAgent
	if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Trajectory{Pos: rec.Pos}, rec.Errorf(err2field(err), "%w", JSONCause(err))
	}
	id := BaseID(rec.Pos.File)
	b := turnBuilder{t: Trajectory{ID: id, Extra: Extra{Instance: id}, Pos: rec.Pos}}
	if len(w.Trajectory) == 0 {
		return b.t, rec.Errorf("trajectory", "missing or empty")
	}
	calls, err := sweAgentHistory(rec, &b, w.History)
	if err != nil {
		return b.t, err
	}
	for k, step := range w.Trajectory {
		field := fmt.Sprintf("trajectory[%d]", k)
		if step.Response == nil {
			return b.t, rec.Errorf(field+".response", "missing")
		}
		if err := checkSize(rec, field+".response", *step.Response); err != nil {
			return b.t, err
		}
		out := *step.Response
		if k < len(calls) {
			out = joinText(out, calls[k])
		}
		b.call(out, APITokens{Input: Unrecorded, Output: Unrecorded})
		obs, _, err := text(rec, field+".observation", step.Observation)
		if err != nil {
			return b.t, err
		}
		b.see(obs)
	}
	b.finish()
	if w.Info != nil && w.Info.ExitStatus != nil && *w.Info.ExitStatus != "" {
		b.t.Success = strings.HasPrefix(*w.Info.ExitStatus, "submitted")
		b.t.Outcome = OutcomeExitStatus
	}
	return b.t, nil
}

// sweAgentHistory reads the history: the messages before its first
// assistant message become b's system message and first user side, and
// calls are the tool calls of each of its assistant messages, in order.
func sweAgentHistory(rec Record, b *turnBuilder, history []wireSWEHistory) (calls []string, err error) {
	started := false // past the first (non-demonstration) assistant message
	for i, h := range history {
		field := fmt.Sprintf("history[%d]", i)
		if h.Role == "assistant" && !h.IsDemo {
			c, err := renderToolCalls(rec, field+".tool_calls", h.ToolCalls)
			if err != nil {
				return nil, err
			}
			calls, started = append(calls, c), true
			continue
		}
		if started {
			continue
		}
		s, _, err := text(rec, field+".content", h.Content)
		if err != nil {
			return nil, err
		}
		if h.Role == "system" && i == 0 {
			b.t.Messages = append(b.t.Messages, Message{Role: "system", Content: s, Tokens: Unrecorded})
		} else {
			b.see(s)
		}
	}
	return calls, nil
}
