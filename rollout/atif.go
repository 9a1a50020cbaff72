package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ATIF is a Harbor trial's agent trajectory (Agent Trajectory Interchange
// Format, schema_version "ATIF-v1.x"), which Harbor writes for every agent
// it runs (Claude Code, Codex, OpenHands, mini-swe-agent, Terminus, …):
// <job>/<trial>/agent/trajectory.json, with the verifier's verdict in
// <trial>/result.json.
var ATIF = &Format{Name: "atif", Doc: "Harbor ATIF trajectory (<job>/<trial>/agent/trajectory.json + <trial>/result.json)", layout: document, ownIDs: true,
	match: func(k map[string]json.RawMessage) bool {
		var v string
		json.Unmarshal(k["schema_version"], &v)
		return strings.HasPrefix(v, "ATIF-")
	}}

// HarborSide is a Harbor job or trial result.json or config.json: read
// beside a trajectory, never as one.
var HarborSide = &Format{Name: "harbor-side", Doc: "Harbor job or trial result.json / config.json", Side: true, layout: document,
	match: func(k map[string]json.RawMessage) bool {
		for _, name := range []string{"verifier_result", "trial_name", "job_name", "n_total_trials"} {
			if has(k, name) {
				return true
			}
		}
		return false
	}}

func init() { ATIF.decode = decodeATIF }

type wireATIF struct {
	SchemaVersion string     `json:"schema_version"`
	SessionID     string     `json:"session_id"`
	Steps         []wireStep `json:"steps"`
}

type wireStep struct {
	Source    *string         `json:"source"`
	Message   json.RawMessage `json:"message"`
	ToolCalls []struct {
		FunctionName *string         `json:"function_name"`
		Arguments    json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
	Observation *struct {
		Results []struct {
			Content json.RawMessage `json:"content"`
		} `json:"results"`
	} `json:"observation"`
	Metrics *struct {
		PromptTokens     json.RawMessage `json:"prompt_tokens"`
		CompletionTokens json.RawMessage `json:"completion_tokens"`
		CachedTokens     json.RawMessage `json:"cached_tokens"`
		Extra            *struct {
			ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
		} `json:"extra"`
	} `json:"metrics"`
	IsCopiedContext bool `json:"is_copied_context"`
}

// decodeATIF: each agent step is one LLM call; its observation results are
// what the agent sees before the next call; user and later system steps
// are seen too. Steps copied from an earlier context (is_copied_context)
// were not calls of this run and are skipped.
func decodeATIF(rec Record) (Trajectory, error) {
	var w wireATIF
	if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Trajectory{Pos: rec.Pos}, rec.Errorf(err2field(err), "%w", JSONCause(err))
	}
	trial := filepath.Dir(filepath.Dir(rec.Pos.File)) // <trial>/agent/trajectory.json
	b := turnBuilder{t: Trajectory{ID: trialID(rec.Pos.File, w.SessionID), Pos: rec.Pos, Inputs: InputsRequest}}
	if len(w.Steps) == 0 {
		return b.t, rec.Errorf("steps", "missing or empty")
	}
	for i, s := range w.Steps {
		if err := b.atifStep(rec, i, s); err != nil {
			return b.t, err
		}
	}
	b.finish()
	if len(b.t.API) == 0 {
		return b.t, rec.Errorf("steps", "no agent step (no LLM call)")
	}
	return b.t, harborOutcome(&b.t, filepath.Join(trial, "result.json"))
}

func (b *turnBuilder) atifStep(rec Record, i int, s wireStep) error {
	field := fmt.Sprintf("steps[%d]", i)
	if s.IsCopiedContext {
		return nil
	}
	if s.Source == nil {
		return rec.Errorf(field+".source", "missing")
	}
	msg, _, err := text(rec, field+".message", s.Message)
	if err != nil {
		return err
	}
	switch *s.Source {
	case "system":
		if len(b.t.Messages) == 0 && len(b.seen) == 0 {
			b.t.Messages = append(b.t.Messages, Message{Role: "system", Content: msg, Tokens: Unrecorded})
		} else if msg != "" {
			b.see(msg)
		}
	case "user":
		b.see(msg)
	case "agent":
		parts := []string{msg}
		for j, c := range s.ToolCalls {
			if c.FunctionName == nil {
				return rec.Errorf(fmt.Sprintf("%s.tool_calls[%d].function_name", field, j), "missing")
			}
			parts = append(parts, renderCall(*c.FunctionName, c.Arguments))
		}
		api, err := atifMetrics(rec, field+".metrics", s)
		if err != nil {
			return err
		}
		b.call(joinText(parts[0], strings.Join(parts[1:], "\n")), api)
	default:
		return rec.Errorf(field+".source", "want \"system\", \"user\" or \"agent\", got %q", *s.Source)
	}
	if s.Observation != nil {
		for j, r := range s.Observation.Results {
			c, ok, err := text(rec, fmt.Sprintf("%s.observation.results[%d].content", field, j), r.Content)
			if err != nil {
				return err
			}
			if ok {
				b.see(c)
			}
		}
	}
	return nil
}

// atifMetrics: prompt_tokens is the whole prompt, cached included;
// completion_tokens includes reasoning, which metrics.extra may break out.
func atifMetrics(rec Record, field string, s wireStep) (APITokens, error) {
	a := APITokens{Input: Unrecorded, Output: Unrecorded}
	m := s.Metrics
	if m == nil {
		return a, nil
	}
	var err error
	if a.Input, err = whole(rec, field+".prompt_tokens", m.PromptTokens); err != nil {
		return a, err
	}
	if a.Output, err = whole(rec, field+".completion_tokens", m.CompletionTokens); err != nil {
		return a, err
	}
	if a.Cached, err = wholeOr0(rec, field+".cached_tokens", m.CachedTokens); err != nil {
		return a, err
	}
	if m.Extra != nil {
		if a.Reasoning, err = optionalWhole(rec, field+".extra.reasoning_tokens", m.Extra.ReasoningTokens); err != nil {
			return a, err
		}
	}
	return a, checkBreakdown(rec, field+".", a)
}

// trialID is <job>/<trial> for <job>/<trial>/agent/trajectory.json (unique
// across the jobs of a directory), else the session id.
func trialID(file, session string) string {
	agent := filepath.Dir(file)
	if filepath.Base(agent) != "agent" {
		if session != "" {
			return session
		}
		return BaseID(file)
	}
	trial := filepath.Dir(agent)
	return filepath.Base(filepath.Dir(trial)) + "/" + filepath.Base(trial)
}

type wireTrialResult struct {
	TaskName       string `json:"task_name"`
	VerifierResult *struct {
		Rewards map[string]json.RawMessage `json:"rewards"`
	} `json:"verifier_result"`
}

// harborOutcome joins the trial's result.json when there is one: the
// instance is its task_name and the outcome verifier_result.rewards.reward
// (1 is success); no verdict (the verifier did not run) leaves none.
func harborOutcome(t *Trajectory, path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	rec := Record{Pos: Position{File: path, Index: -1}, Data: data}
	var w wireTrialResult
	if err := json.Unmarshal(data, &w); err != nil {
		return rec.Errorf(err2field(err), "%w", JSONCause(err))
	}
	t.Extra.Instance = w.TaskName
	if w.VerifierResult == nil {
		return nil
	}
	v, ok := present(w.VerifierResult.Rewards["reward"])
	if !ok {
		return nil
	}
	var reward float64
	if err := json.Unmarshal(v, &reward); err != nil {
		return rec.Errorf("verifier_result.rewards.reward", "want a number, got %s", clipJSON(v))
	}
	t.Success, t.Outcome = reward == 1, OutcomeResults
	return nil
}
