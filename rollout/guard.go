package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// GuardLedger is one session file of a `bagen-data guard --ledger DIR`
// directory: JSONL events of one agent run, a "session" event first, then
// "call", "estimate" and "stop" events in the order they happened. The
// whole file is one trajectory: one turn per call the upstream answered,
// its per_turn_api_tokens the upstream's counts, metadata.guard what the
// guard estimated and decided.
var GuardLedger = &Format{Name: "guard-ledger", Doc: "bagen-data guard ledger session file (<ledger>/<session>.jsonl)", layout: session, ownIDs: true,
	match: func(k map[string]json.RawMessage) bool { return has(k, "bagen_guard", "event") }}

func init() { GuardLedger.decode = decodeGuardLedger }

// GuardVersion is the ledger format version in each session event.
const GuardVersion = 1

// GuardItems are the messages of an agent's request or of a reply, as
// the guard normalizes every wire format (see Message), on one side of a
// ledger call event. They differ from Message only in the ledger's JSON:
// each is {"role":…,"text":…}, the spelling version 1 of the ledger was
// written in, which the recorded sessions keep.
type GuardItems []Message

// guardItem is a Message as the ledger spells it; its fields match
// Message's, so each converts to the other.
type guardItem struct {
	Role    string `json:"role"`
	Content string `json:"text"`
	Tokens  int64  `json:"-"`
}

// MarshalJSON writes the items in the ledger's spelling.
func (g GuardItems) MarshalJSON() ([]byte, error) {
	return marshalAs(g, func(m Message) guardItem { return guardItem(m) })
}

// UnmarshalJSON reads items in the ledger's spelling.
func (g *GuardItems) UnmarshalJSON(data []byte) error {
	return unmarshalAs((*[]Message)(g), data, func(w guardItem) Message { return Message(w) })
}

// GuardUsage is the usage an upstream reported for one call, with the
// meaning of APITokens: Input is the whole request (cached included),
// Output includes reasoning. Unreported counts are Unrecorded; Reasoning
// is null when the upstream did not break it out.
type GuardUsage struct {
	Input     int64  `json:"input"`
	Output    int64  `json:"output"`
	Reasoning *int64 `json:"reasoning"`
	Cached    int64  `json:"cached"`
}

// API is u as APITokens.
func (u GuardUsage) API() APITokens {
	return APITokens{Input: u.Input, Output: u.Output, Reasoning: u.Reasoning, Cached: max(u.Cached, 0)}
}

// GuardSession is the first event of a session file.
type GuardSession struct {
	Version int    `json:"bagen_guard"`
	Event   string `json:"event"` // "session"
	Session string `json:"session"`
	Time    string `json:"time"`
	Policy  string `json:"policy"`
	Budget  int64  `json:"budget"`
	Task    string `json:"task,omitempty"`
	Format  string `json:"format"`
	// Client is the agent's User-Agent; Key says how the session was
	// identified (header, metadata, chain, reply, prefix or new).
	Client string `json:"client,omitempty"`
	Key    string `json:"key,omitempty"`
	// BudgetUSD is the session's dollar budget (--budget-usd); 0: none.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// Parent is the session this one is a child of (a Claude Code
	// subagent's); its tokens and dollars count toward the parent's
	// budget.
	Parent string `json:"parent,omitempty"`
}

// GuardCall is one call relayed (or answered) by the guard.
type GuardCall struct {
	Event   string `json:"event"` // "call"
	Session string `json:"session"`
	Time    string `json:"time"`
	// Call counts the session's calls from 1; Turn is the turn the call
	// made (1-based), 0 when it made none (an error, a guard answer).
	Call   int    `json:"call"`
	Turn   int    `json:"turn"`
	Format string `json:"format"`
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream"`
	Status int    `json:"status"`
	// Tools: the request offered tools. Side is a call outside the run's
	// thread: no tools offered in a session whose requests offer them.
	Tools bool `json:"tools"`
	Side  bool `json:"side,omitempty"`
	// System is the request's system prompt, on the first turn only.
	System string `json:"system,omitempty"`
	// Input is what the request added after the history's last assistant
	// message (the whole request on the first turn); Output the reply.
	Input  GuardItems `json:"input"`
	Output GuardItems `json:"output"`
	// Usage is nil when the upstream reported none.
	Usage *GuardUsage `json:"usage"`
	// Complete is false for a stream cut before its end: its counts are
	// what was relayed.
	Complete  bool    `json:"complete"`
	Answered  string  `json:"answered_by_guard,omitempty"` // "message" or "context-limit"
	LatencyMS float64 `json:"latency_ms"`
	// USD is the call's dollars by the guard's prices file (--prices);
	// omitted when the call is not priced.
	USD float64 `json:"usd,omitempty"`
}

// GuardEstimate is one estimate of the remaining tokens after a turn.
type GuardEstimate struct {
	Event     string `json:"event,omitempty"` // "estimate" in the ledger
	Session   string `json:"session,omitempty"`
	Time      string `json:"time,omitempty"`
	AfterTurn int    `json:"after_turn"`
	Response  string `json:"response"`
	// Verdict is impossible, interval, scalar, unparseable, or
	// unestimated when the estimator failed (Error says why).
	Verdict  string    `json:"verdict"`
	Interval *[2]int64 `json:"interval"`
	// Reason says why an unestimated turn has no estimate: estimator (it
	// failed), no_tokenizer (the usage needs a count the upstream did not
	// give and the guard has no tokenizer), bad_usage or accounting.
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// EstimatorInput and EstimatorOutput are the tokens the estimator
	// spent on this estimate, as it reported them (0 when it did not);
	// EstimatorCached is the part of EstimatorInput it served from its
	// prompt cache.
	EstimatorInput  int64   `json:"estimator_input_tokens,omitempty"`
	EstimatorOutput int64   `json:"estimator_output_tokens,omitempty"`
	EstimatorCached int64   `json:"estimator_cached_tokens,omitempty"`
	LatencyMS       float64 `json:"latency_ms,omitempty"`
}

// GuardStop is the guard's decision to end a session, written when it is
// made. It ends the run only once it refuses a request, a later call
// event answered by the guard (answered_by_guard): a stop decided after
// a run's last turn refuses nothing, is not counted as a stop
// (metadata.guard.stopped_after_turn stays null) and stays in the
// ledger as the decision, beside the estimate that made it.
type GuardStop struct {
	Event     string `json:"event"` // "stop"
	Session   string `json:"session"`
	Time      string `json:"time"`
	AfterTurn int    `json:"after_turn"`
	Reason    string `json:"reason"` // "impossible", "budget", "budget_usd" or "loop"
	Spent     int64  `json:"spent"`
	// Saved is the guard's live estimate of the tokens the stop saves:
	// max(0, budget − spent), the budget the session had left.
	// EstimatorTokens is what the session's estimates cost until then
	// (input + output), and Net = Saved − EstimatorTokens, the session's
	// net saving once the stop refuses a request.
	Saved           int64 `json:"saved,omitempty"`
	EstimatorTokens int64 `json:"estimator_tokens,omitempty"`
	Net             int64 `json:"net"`
}

// GuardForecast is the guard's forecast of a whole session: the tokens
// spent after a turn (AfterTurn 0: when the session starts, before its
// first turn) plus the estimate's interval of the remaining tokens,
// Low = Spent + low and High = Spent + high. The dollar fields are
// omitted without a prices file: USDSpent is what the priced calls cost,
// USDLow and USDHigh add the remaining tokens priced at the session's
// dollars per token so far (before any priced call, the model's input
// price).
type GuardForecast struct {
	Event     string  `json:"event"` // "forecast"
	Session   string  `json:"session"`
	Time      string  `json:"time"`
	AfterTurn int     `json:"after_turn"`
	Spent     int64   `json:"spent"`
	Low       int64   `json:"low"`
	High      int64   `json:"high"`
	Budget    int64   `json:"budget,omitempty"`
	USDSpent  float64 `json:"usd_spent,omitempty"`
	USDLow    float64 `json:"usd_low,omitempty"`
	USDHigh   float64 `json:"usd_high,omitempty"`
	BudgetUSD float64 `json:"budget_usd,omitempty"`
}

// GuardWarn is a warning the guard gave a session: Reason "threshold"
// when its spending crossed Threshold percent of a budget (of the token
// budget or of the dollar budget, whichever is crossed first), "loop"
// when it repeated a tool call or received the same tool result Repeats
// times in a row. Under policy warn the warning is added to the session's
// next request; under policy log it is only recorded.
type GuardWarn struct {
	Event     string  `json:"event"` // "warn"
	Session   string  `json:"session"`
	Time      string  `json:"time"`
	AfterTurn int     `json:"after_turn"`
	Reason    string  `json:"reason"`
	Threshold float64 `json:"threshold,omitempty"`
	Repeats   int     `json:"repeats,omitempty"`
	Spent     int64   `json:"spent"`
	USD       float64 `json:"usd,omitempty"`
	Note      string  `json:"note,omitempty"`
}

// GuardRun is what the guard saw of a trajectory, carried as
// metadata.guard of the canonical JSONL.
type GuardRun struct {
	Policy    string          `json:"policy"`
	Budget    int64           `json:"budget"`
	Estimates []GuardEstimate `json:"estimates"`
	// StoppedAfterTurn is the turn after which the guard ended the
	// session by refusing a request; nil when it did not (a stop decided
	// after the run's last turn refused nothing).
	StoppedAfterTurn *int `json:"stopped_after_turn"`
}

// GuardTurn is one turn of a guarded session: what the agent sent since
// its previous call, the reply, and the upstream's usage.
type GuardTurn struct {
	Input  []Message
	Output []Message
	Usage  *GuardUsage
}

// SplitGuardHistory splits a request's messages at its assistant
// messages: the leading system messages (joined), one turn per run of
// consecutive assistant messages (what one call answered) with the
// messages before it, and the messages after the last one (tail).
func SplitGuardHistory(items []Message) (system string, turns []GuardTurn, tail []Message) {
	i := 0
	var sys []string
	for ; i < len(items) && items[i].Role == "system"; i++ {
		sys = append(sys, items[i].Content)
	}
	start := i // the messages since the last assistant run
	for i < len(items) {
		if items[i].Role != "assistant" {
			i++
			continue
		}
		j := i + 1
		for j < len(items) && items[j].Role == "assistant" {
			j++
		}
		turns = append(turns, GuardTurn{Input: span(items, start, i), Output: span(items, i, j)})
		start, i = j, j
	}
	return strings.Join(sys, "\n\n"), turns, span(items, start, len(items))
}

// span is items[a:b], nil when empty, capped so that an append to it
// copies.
func span(items []Message, a, b int) []Message {
	if a == b {
		return nil
	}
	return items[a:b:b]
}

// JoinGuardItems is the text of one side of a turn: the messages'
// non-empty contents joined by a blank line.
func JoinGuardItems(items []Message) string {
	if len(items) == 1 {
		return items[0].Content
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		if it.Content != "" {
			parts = append(parts, it.Content)
		}
	}
	return strings.Join(parts, "\n\n")
}

// GuardTrajectory is the trajectory of a guarded session: the system
// prompt, then one user and one assistant message per turn, with the
// upstream's per-call usage (history-inclusive inputs, InputsRequest).
// A turn without usage is Unrecorded.
func GuardTrajectory(id, system string, turns []GuardTurn) Trajectory {
	t := Trajectory{ID: id, Inputs: InputsRequest, Outcome: OutcomeNone, Pos: Position{File: id, Index: -1},
		Messages: make([]Message, 0, 1+2*len(turns)), API: make([]APITokens, 0, len(turns))}
	if system != "" {
		t.Messages = append(t.Messages, Message{Role: "system", Content: system, Tokens: Unrecorded})
	}
	for _, turn := range turns {
		t.Messages = append(t.Messages,
			Message{Role: "user", Content: JoinGuardItems(turn.Input), Tokens: Unrecorded},
			Message{Role: "assistant", Content: JoinGuardItems(turn.Output), Tokens: Unrecorded})
		api := APITokens{Input: Unrecorded, Output: Unrecorded}
		if turn.Usage != nil {
			api = turn.Usage.API()
		}
		t.API = append(t.API, api)
	}
	return t
}

// badGuardUsage names a count of u out of range.
func badGuardUsage(u GuardUsage) (string, bool) {
	switch {
	case u.Input < Unrecorded:
		return "input", true
	case u.Output < Unrecorded:
		return "output", true
	case u.Reasoning != nil && *u.Reasoning < 0:
		return "reasoning", true
	case u.Cached < 0:
		return "cached", true
	}
	return "", false
}

// RenderToolCall is one tool call as the trajectories show it (a
// Hermes-style <tool_call> block), the one rendering every reader uses.
func RenderToolCall(name string, args json.RawMessage) string { return renderCall(name, args) }

// wireGuardEvent holds every field an event's decoder needs first.
type wireGuardEvent struct {
	Event string `json:"event"`
}

// decodeGuardLedger reads one session file (the whole file is the
// record): its lines are events.
func decodeGuardLedger(rec Record) (Trajectory, error) {
	l := guardLedger{run: &GuardRun{Estimates: []GuardEstimate{}}}
	lines := bytes.Split(rec.Data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		lerr := func(field string, err error) error {
			return &ParseError{File: rec.Pos.File, Line: i + 1, Index: -1, Field: field, Err: err}
		}
		var ev wireGuardEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			if i == len(lines)-1 {
				break // a last line cut by a crash: every completed call is before it
			}
			return Trajectory{Pos: rec.Pos}, lerr("", JSONCause(err))
		}
		if i == 0 && ev.Event != "session" {
			return Trajectory{Pos: rec.Pos}, lerr("event", fmt.Errorf("want \"session\" first, got %q", ev.Event))
		}
		if field, err := l.event(i, ev.Event, line); err != nil {
			return Trajectory{Pos: rec.Pos}, lerr(field, err)
		}
	}
	if len(l.turns) == 0 {
		return Trajectory{Pos: rec.Pos}, rec.Errorf("", "session %q has no answered call", l.head.Session)
	}
	t := GuardTrajectory(l.head.Session, l.system, l.turns)
	t.Pos = rec.Pos
	t.Budget = l.head.Budget
	l.run.Policy, l.run.Budget = l.head.Policy, l.head.Budget
	t.Extra.Guard = l.run
	if t.ID == "" {
		t.ID = BaseID(filepath.Base(rec.Pos.File))
	}
	return t, nil
}

// guardLedger is what decodeGuardLedger has read of a session file.
type guardLedger struct {
	head   GuardSession
	system string
	turns  []GuardTurn
	run    *GuardRun
	tools  bool
	// decided is the turn after which a stop was decided; the run is
	// stopped there once a call answered by the guard follows.
	decided *int
}

// event reads line i, an event of the given kind; an error comes with
// the field it is about.
func (l *guardLedger) event(i int, kind string, line []byte) (string, error) {
	var err error
	switch kind {
	case "session":
		if i > 0 {
			return "", nil // a restarted guard reopened the session
		}
		err = json.Unmarshal(line, &l.head)
		if err == nil && l.head.Session == "" {
			return "session", errors.New("missing or empty")
		}
	case "call":
		return l.call(line)
	case "estimate":
		var e GuardEstimate
		if err = json.Unmarshal(line, &e); err == nil {
			e.Event, e.Session, e.Time = "", "", ""
			l.run.Estimates = append(l.run.Estimates, e)
		}
	case "forecast", "warn":
		// What the guard told the session; the trajectory does not
		// carry it.
	case "stop":
		var s GuardStop
		if err = json.Unmarshal(line, &s); err == nil && l.decided == nil {
			l.decided = &s.AfterTurn
		}
	default:
		return "event", fmt.Errorf("want session, call, estimate, forecast, warn or stop, got %q", kind)
	}
	if err != nil {
		return err2field(err), JSONCause(err)
	}
	return "", nil
}

// call reads a call event: a turn when the call made one.
func (l *guardLedger) call(line []byte) (string, error) {
	var c GuardCall
	if err := json.Unmarshal(line, &c); err != nil {
		return err2field(err), JSONCause(err)
	}
	if c.Answered != "" && l.decided != nil && l.run.StoppedAfterTurn == nil {
		l.run.StoppedAfterTurn = l.decided // the stop refused this call
	}
	if c.Usage != nil {
		if field, bad := badGuardUsage(*c.Usage); bad {
			return "usage." + field, errors.New("want a count ≥ 0 (input and output may be -1, unrecorded)")
		}
	}
	if c.Turn == 0 {
		return "", nil
	}
	if c.Tools && !l.tools {
		// The calls before the first that offered tools were side
		// calls, as the guard found out live.
		l.tools, l.turns = true, nil
	}
	if len(l.turns) == 0 {
		l.system = c.System
	}
	l.turns = append(l.turns, GuardTurn{Input: c.Input, Output: c.Output, Usage: c.Usage})
	return "", nil
}
