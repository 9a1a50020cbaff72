package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"bagen-data/internal/jsonlex"
)

type wireMessage struct {
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	Tokens    json.RawMessage `json:"tokens"`
	ToolCalls json.RawMessage `json:"tool_calls"`
	// text is Content's string when decodeWireFast decoded it (hasText),
	// as json.Unmarshal gives it; else text reads Content.
	text    string
	hasText bool
}

type wireAPI struct {
	Input     json.RawMessage `json:"input"`
	Output    json.RawMessage `json:"output"`
	Reasoning json.RawMessage `json:"reasoning"`
	Cached    json.RawMessage `json:"cached"`
	Retried   *struct {
		Calls  json.RawMessage `json:"calls"`
		Output json.RawMessage `json:"output"`
	} `json:"retried"`
}

type wireRollout struct {
	CustomID  *string                    `json:"custom_id"`
	Messages  []wireMessage              `json:"messages"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
	API       []wireAPI                  `json:"per_turn_api_tokens"`
	APIInputs *string                    `json:"api_inputs"`
	Budget    json.RawMessage            `json:"budget"`
}

// Decode turns a Record into a Trajectory, validating every field: the
// record's format reads it, then the outcome is joined from the results
// (Options.Results) and the id takes the source's run. Errors are
// *ParseError naming the record's position and the field.
func Decode(rec Record) (Trajectory, error) {
	f := rec.Format
	if f == nil {
		f = Rollout
	}
	var t Trajectory
	var err error
	if f == Rollout {
		// Its one-pass reader tells whether the record is valid UTF-8.
		t, err = decodeRolloutChecked(rec)
	} else {
		t, err = decodeChecked(rec, f)
	}
	if err != nil {
		return t, err
	}
	if t.Outcome == "" {
		t.Outcome = OutcomeNone
	}
	if rec.Options != nil && rec.Options.Results != nil {
		rec.Options.Results.join(&t)
	}
	if rec.Run != "" && !f.ownIDs {
		t.ID = rec.Run + "/" + t.ID
	}
	return t, nil
}

// decodeChecked is f.decode after checkUTF8, with t.Replaced set.
func decodeChecked(rec Record, f *Format) (Trajectory, error) {
	replaced, err := checkUTF8(rec)
	if err != nil {
		return Trajectory{Pos: rec.Pos}, err
	}
	t, err := f.decode(rec)
	if err != nil {
		return t, err
	}
	t.Replaced = replaced
	return t, nil
}

// decodeRolloutChecked is decodeChecked(rec, Rollout) without a pass of
// its own over a record that decodeWireFast reads and finds valid UTF-8.
func decodeRolloutChecked(rec Record) (Trajectory, error) {
	var w wireRollout
	fast, valid := decodeWireFast(rec.Data, &w)
	replaced := 0
	if !fast || !valid {
		var err error
		if replaced, err = checkUTF8(rec); err != nil {
			return Trajectory{Pos: rec.Pos}, err
		}
	}
	if !fast {
		w = wireRollout{}
		if err := json.Unmarshal(rec.Data, &w); err != nil {
			return Trajectory{}, wireError(rec, err)
		}
	}
	t, err := rolloutFromWire(rec, &w)
	if err != nil {
		return t, err
	}
	t.Replaced = replaced
	return t, nil
}

func decodeRollout(rec Record) (Trajectory, error) {
	return decodeRolloutWith(rec, decodeWire)
}

// decodeRolloutWith is decodeRollout reading the record's JSON with wire,
// which must fill w as json.Unmarshal does (tests pass json.Unmarshal
// itself to compare with decodeWire).
func decodeRolloutWith(rec Record, wire func(data []byte, w *wireRollout) error) (Trajectory, error) {
	var w wireRollout
	if err := wire(rec.Data, &w); err != nil {
		return Trajectory{}, wireError(rec, err)
	}
	return rolloutFromWire(rec, &w)
}

// wireError is json.Unmarshal's error on a record, at the field it names.
func wireError(rec Record, err error) error {
	return rec.Errorf(locate(rec.Data, err), "%w", JSONCause(err))
}

// rolloutFromWire checks and converts a read record.
func rolloutFromWire(rec Record, w *wireRollout) (Trajectory, error) {
	t := Trajectory{Pos: rec.Pos}
	switch {
	case w.CustomID == nil:
		return t, rec.Errorf("custom_id", "missing")
	case *w.CustomID == "":
		return t, rec.Errorf("custom_id", "empty")
	case len(w.Messages) == 0:
		return t, rec.Errorf("messages", "missing or empty")
	}
	t.ID = *w.CustomID
	var err error
	if t.Messages, err = chatMessages(rec, w.Messages); err != nil {
		return t, err
	}
	if v, ok := present(w.Budget); ok {
		b, err := parseWhole(v)
		if err != nil {
			return t, rec.Errorf("budget", "%w", err)
		}
		if b <= 0 {
			return t, rec.Errorf("budget", "want a positive integer, got %d", b)
		}
		t.Budget = b
	}
	if t.API, err = apiTokens(rec, w.API); err != nil {
		return t, err
	}
	if t.Inputs, err = inputKind(rec, w.APIInputs); err != nil {
		return t, err
	}
	t.Extra.BySuccessRule = metadataSuccesses(w.Metadata, rec.Data)
	t.Success = t.Extra.BySuccessRule[FirstPresentSuccess]
	t.Outcome, t.Extra.Instance = metadataOutcome(w.Metadata)
	json.Unmarshal(w.Metadata["task"], &t.Task) // a task that is not a string names none
	if v, ok := present(w.Metadata["guard"]); ok {
		t.Extra.Guard = new(GuardRun)
		if err := json.Unmarshal(v, t.Extra.Guard); err != nil {
			return t, rec.Errorf("metadata.guard", "%w", JSONCause(err))
		}
	}
	return t, nil
}

func apiTokens(rec Record, ws []wireAPI) ([]APITokens, error) {
	if ws == nil {
		return nil, nil
	}
	api := make([]APITokens, len(ws))
	for i, a := range ws {
		f := fmt.Sprintf("per_turn_api_tokens[%d].", i)
		var err error
		if api[i].Input, err = whole(rec, f+"input", a.Input); err != nil {
			return nil, err
		}
		if api[i].Output, err = whole(rec, f+"output", a.Output); err != nil {
			return nil, err
		}
		if api[i].Reasoning, err = optionalWhole(rec, f+"reasoning", a.Reasoning); err != nil {
			return nil, err
		}
		if api[i].Cached, err = wholeOr0(rec, f+"cached", a.Cached); err != nil {
			return nil, err
		}
		if r := a.Retried; r != nil {
			if api[i].Retried.Calls, err = wholeOr0(rec, f+"retried.calls", r.Calls); err != nil {
				return nil, err
			}
			if api[i].Retried.Output, err = wholeOr0(rec, f+"retried.output", r.Output); err != nil {
				return nil, err
			}
		}
		if err := checkBreakdown(rec, f, api[i]); err != nil {
			return nil, err
		}
	}
	return api, nil
}

// checkBreakdown: reasoning is part of output and cached part of input.
func checkBreakdown(rec Record, field string, a APITokens) error {
	if a.Output != Unrecorded && a.Reasoning != nil && *a.Reasoning > a.Output {
		return rec.Errorf(field+"reasoning", "%d reasoning tokens exceed the output's %d", *a.Reasoning, a.Output)
	}
	if a.Input != Unrecorded && a.Cached > a.Input {
		return rec.Errorf(field+"cached", "%d cached tokens exceed the input's %d", a.Cached, a.Input)
	}
	return nil
}

// inputKind reads api_inputs: "request" or "turn"; absent is unknown.
func inputKind(rec Record, v *string) (InputKind, error) {
	if v == nil {
		return InputsUnknown, nil
	}
	switch *v {
	case "request":
		return InputsRequest, nil
	case "turn":
		return InputsTurn, nil
	}
	return InputsUnknown, rec.Errorf("api_inputs", "want \"request\" or \"turn\", got %q", *v)
}

// metadataOutcome reads metadata.outcome_source (as convert writes it;
// else "score" when a success key is there) and metadata.instance_id.
func metadataOutcome(md map[string]json.RawMessage) (Outcome, string) {
	var src, inst string
	json.Unmarshal(md["outcome_source"], &src)
	json.Unmarshal(md["instance_id"], &inst)
	switch o := Outcome(src); o {
	case OutcomeNone, OutcomeResults, OutcomeScore, OutcomeExitStatus:
		return o, inst
	}
	for _, k := range []string{"success", "rollout_success", "rollout_resolved"} {
		if _, ok := present(md[k]); ok {
			return OutcomeScore, inst
		}
	}
	return OutcomeNone, inst
}

// chatMessages reads OpenAI-style chat messages into the trajectory's
// shape: a system message may come first; a tool message's output joins
// the user side it belongs to (everything the agent saw before its next
// call), and an assistant's tool calls are rendered after its text.
func chatMessages(rec Record, ws []wireMessage) ([]Message, error) {
	out := make([]Message, 0, len(ws))
	prevTool := false
	for i, m := range ws {
		field := messageField(i)
		if m.Role == nil {
			return nil, rec.Errorf(field.role, "missing")
		}
		role := *m.Role
		switch {
		case role == "system" && i == 0:
		case role == "user", role == "assistant", role == "tool":
		default:
			return nil, rec.Errorf(field.role, "want \"user\", \"assistant\" or \"tool\", got %q", role)
		}
		var content string
		var ok bool
		var err error
		if m.hasText {
			content, ok, err = m.text, true, checkSize(rec, field.content, m.text)
		} else {
			content, ok, err = text(rec, field.content, m.Content)
		}
		if err != nil {
			return nil, err
		}
		calls := ""
		if role == "assistant" {
			if calls, err = renderToolCalls(rec, field.toolCalls, m.ToolCalls); err != nil {
				return nil, err
			}
		}
		if !ok && calls == "" {
			return nil, rec.Errorf(field.content, "missing")
		}
		tokens, err := whole(rec, field.tokens, m.Tokens)
		if err != nil {
			return nil, err
		}
		msg := Message{Role: role, Content: joinText(content, calls), Tokens: tokens}
		if calls != "" {
			msg.Tokens = Unrecorded
		}
		isTool := role == "tool"
		if isTool {
			msg.Role = "user"
		}
		if n := len(out); n > 0 && msg.Role == "user" && out[n-1].Role == "user" && (isTool || prevTool) {
			out[n-1] = mergeUser(out[n-1], msg)
		} else {
			out = append(out, msg)
		}
		prevTool = isTool
	}
	return out, nil
}

// messageFields are the names errors give the fields of messages[i].
type messageFields struct{ role, content, tokens, toolCalls string }

// messageFieldNames are the first messages' field names, made once rather
// than for every message of every record.
var messageFieldNames = sync.OnceValue(func() []messageFields {
	names := make([]messageFields, 256)
	for i := range names {
		names[i] = makeMessageFields(i)
	}
	return names
})

func messageField(i int) messageFields {
	if names := messageFieldNames(); i < len(names) {
		return names[i]
	}
	return makeMessageFields(i)
}

func makeMessageFields(i int) messageFields {
	f := "messages[" + strconv.Itoa(i) + "]."
	return messageFields{role: f + "role", content: f + "content", tokens: f + "tokens", toolCalls: f + "tool_calls"}
}

// mergeUser joins two parts of one user side.
func mergeUser(a, b Message) Message {
	tokens := int64(Unrecorded)
	if a.Tokens != Unrecorded && b.Tokens != Unrecorded {
		tokens = a.Tokens + b.Tokens
	}
	return Message{Role: "user", Content: joinText(a.Content, b.Content), Tokens: tokens}
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

type wireToolCall struct {
	Function *struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// renderToolCalls renders Chat Completions tool_calls as the text a
// Hermes-style chat template gives them.
func renderToolCalls(rec Record, field string, raw json.RawMessage) (string, error) {
	v, ok := present(raw)
	if !ok {
		return "", nil
	}
	var calls []wireToolCall
	if err := json.Unmarshal(v, &calls); err != nil {
		return "", rec.Errorf(field, "want an array of tool calls, got %s", clipJSON(v))
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		f := fmt.Sprintf("%s[%d].function", field, i)
		if c.Function == nil || c.Function.Name == nil {
			return "", rec.Errorf(f+".name", "missing")
		}
		parts[i] = renderCall(*c.Function.Name, c.Function.Arguments)
	}
	return strings.Join(parts, "\n"), checkSize(rec, field, strings.Join(parts, "\n"))
}

// renderCall is one tool call: <tool_call>{"name": …, "arguments": …}</tool_call>.
// Arguments recorded as a JSON string holding JSON are shown as that JSON.
func renderCall(name string, args json.RawMessage) string {
	a, ok := present(args)
	if !ok {
		a = json.RawMessage("{}")
	}
	var s string
	if json.Unmarshal(a, &s) == nil && json.Valid([]byte(s)) {
		a = json.RawMessage(s)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, a) != nil {
		buf.Reset()
		buf.Write(a)
	}
	n, _ := json.Marshal(name)
	return "<tool_call>\n{\"name\": " + string(n) + ", \"arguments\": " + buf.String() + "}\n</tool_call>"
}

// metadataSuccess applies the success rule: the first present of success,
// rollout_success, rollout_resolved (by Python truthiness), else any key
// ending in "/success" whose value equals 1.0, else false.
func metadataSuccess(md map[string]json.RawMessage) bool {
	for _, k := range []string{"success", "rollout_success", "rollout_resolved"} {
		if v, ok := present(md[k]); ok {
			return truthy(v)
		}
	}
	for k, v := range md {
		if strings.HasSuffix(k, "/success") && equalsOne(v) {
			return true
		}
	}
	return false
}

// present reports whether a raw JSON value is there and not null.
func present(v json.RawMessage) (json.RawMessage, bool) {
	v = bytes.TrimSpace(v)
	return v, len(v) > 0 && string(v) != "null"
}

// truthy is Python's truthiness of a JSON value: false, 0, "", [] and {}
// are false; everything else is true.
func truthy(v json.RawMessage) bool {
	switch v[0] {
	case 't':
		return true
	case 'f', 'n':
		return false
	case '"':
		return len(v) > 2
	case '[', '{':
		return len(bytes.TrimSpace(v[1:len(v)-1])) > 0
	}
	var f float64
	return json.Unmarshal(v, &f) == nil && f != 0
}

// equalsOne is Python's value == 1.0 (True == 1.0 holds there too).
func equalsOne(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if string(v) == "true" {
		return true
	}
	var f float64
	return json.Unmarshal(v, &f) == nil && f == 1
}

// Errorf is a *ParseError at rec's position naming field.
func (rec Record) Errorf(field, format string, args ...any) error {
	return &ParseError{File: rec.Pos.File, Line: rec.Pos.Line, Index: rec.Pos.Index, Field: field, Err: fmt.Errorf(format, args...)}
}

// JSONCause rewords encoding/json errors without their Go type names, and
// gives jsonlex's syntax errors the same shape.
func JSONCause(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("want %s, got JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	var le *jsonlex.Error
	if errors.As(err, &le) {
		return fmt.Errorf("invalid JSON at byte %d: %s", le.Offset, le.Msg)
	}
	return err
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int64", "int":
		return "a whole number"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	}
	return goKind
}

// locate finds the indexed path of a type error, which encoding/json
// reports without array indices ("messages.role"): it decodes the array
// element by element. It runs only on records that already failed.
func locate(data []byte, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return ""
	}
	head, rest, _ := strings.Cut(te.Field, ".")
	var fields map[string]json.RawMessage
	var elems []json.RawMessage
	if rest == "" || json.Unmarshal(data, &fields) != nil || json.Unmarshal(fields[head], &elems) != nil {
		return te.Field
	}
	for i, e := range elems {
		var err error
		switch head {
		case "messages":
			err = json.Unmarshal(e, new(wireMessage))
		case "per_turn_api_tokens":
			err = json.Unmarshal(e, new(wireAPI))
		case "turns":
			err = json.Unmarshal(e, new(wireTurn))
		}
		if err != nil {
			return fmt.Sprintf("%s[%d].%s", head, i, rest)
		}
	}
	return te.Field
}
