package rollout

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Inspect is an Inspect AI eval log, as .json (one document) or .eval (a
// zip of header.json and samples/*.json; members deflate or, from 0.3.206,
// zstd). Each sample is one trajectory.
var Inspect = &Format{Name: "inspect", Doc: "Inspect AI eval log (.json, or .eval zip with deflate or zstd members)", layout: document, ownIDs: true,
	match: func(k map[string]json.RawMessage) bool { return has(k, "eval", "samples") }}

func init() { Inspect.decode = decodeInspectSample }

// zipMethodZstd is the zip compression method number of zstd.
const zipMethodZstd = 93

type wireInspectHeader struct {
	Eval *struct {
		Packages map[string]string `json:"packages"`
	} `json:"eval"`
}

type wireInspectLog struct {
	wireInspectHeader
	Samples []json.RawMessage `json:"samples"`
}

// inspectVersion is the inspect_ai version that wrote a log header.
func inspectVersion(header []byte) string {
	var h wireInspectHeader
	if json.Unmarshal(header, &h) != nil || h.Eval == nil {
		return ""
	}
	return h.Eval.Packages["inspect_ai"]
}

// inspectJSON emits each sample of an Inspect .json log as a record.
func (s *scanner) inspectJSON(doc []byte) error {
	var w wireInspectLog
	if err := json.Unmarshal(doc, &w); err != nil {
		return &ParseError{File: s.src.Name, Index: -1, Err: JSONCause(err)}
	}
	version := inspectVersion(doc)
	for i, sample := range w.Samples {
		rec := s.record(Position{File: s.src.Name, Index: i}, sample)
		rec.producer = version
		if err := s.deliver(rec); err != nil {
			return err
		}
	}
	return nil
}

// inspectZip emits each samples/*.json member of an .eval zip.
func (s *scanner) inspectZip(data []byte) error {
	name := s.src.Name
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return &ParseError{File: name, Index: -1, Err: fmt.Errorf("want an Inspect .eval zip: %w", err)}
	}
	zr.RegisterDecompressor(zipMethodZstd, func(r io.Reader) io.ReadCloser {
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return io.NopCloser(errReader{err})
		}
		return d.IOReadCloser()
	})
	version := ""
	var samples []*zip.File
	for _, f := range zr.File {
		switch {
		case f.Name == "header.json" || f.Name == "_journal/start.json":
			b, err := s.member(f)
			if err != nil {
				return err
			}
			if v := inspectVersion(b); v != "" && (version == "" || f.Name == "header.json") {
				version = v
			}
		case strings.HasPrefix(f.Name, "samples/") && strings.HasSuffix(f.Name, ".json"):
			samples = append(samples, f)
		}
	}
	s.format = Inspect
	for _, f := range samples {
		b, err := s.member(f)
		if err != nil {
			return err
		}
		rec := s.record(Position{File: name + ":" + f.Name, Index: -1}, b)
		rec.producer = version
		if err := s.deliver(rec); err != nil {
			return err
		}
	}
	return nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// member reads a zip member of at most s.limit bytes.
func (s *scanner) member(f *zip.File) ([]byte, error) {
	at := s.src.Name + ":" + f.Name
	rc, err := f.Open()
	if err != nil {
		return nil, &ParseError{File: at, Index: -1, Err: err}
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, s.limit+1))
	if err != nil {
		return nil, &ParseError{File: at, Index: -1, Err: err}
	}
	if int64(len(b)) > s.limit {
		return nil, &ParseError{File: at, Index: -1, Err: fmt.Errorf("%w: member longer than %d bytes (32 × the message limit)", ErrTooLarge, s.limit)}
	}
	return b, nil
}

type wireInspectSample struct {
	ID          json.RawMessage            `json:"id"`
	Epoch       int                        `json:"epoch"`
	Messages    []json.RawMessage          `json:"messages"`
	Events      []json.RawMessage          `json:"events"`
	Scores      map[string]json.RawMessage `json:"scores"`
	Attachments map[string]string          `json:"attachments"`
}

type wireInspectMessage struct {
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function  *string         `json:"function"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
}

type wireModelEvent struct {
	Event  string `json:"event"`
	Output *struct {
		Choices []struct {
			Message struct {
				ID string `json:"id"`
			} `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	} `json:"output"`
}

type wireInspectUsage struct {
	InputTokens     json.RawMessage `json:"input_tokens"`
	OutputTokens    json.RawMessage `json:"output_tokens"`
	CacheRead       json.RawMessage `json:"input_tokens_cache_read"`
	CacheWrite      json.RawMessage `json:"input_tokens_cache_write"`
	ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
}

func decodeInspectSample(rec Record) (Trajectory, error) {
	var w wireInspectSample
	if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Trajectory{Pos: rec.Pos}, rec.Errorf(err2field(err), "%w", JSONCause(err))
	}
	inst := jsonText(w.ID)
	if inst == "" {
		return Trajectory{Pos: rec.Pos}, rec.Errorf("id", "missing")
	}
	id := BaseID(strings.SplitN(rec.Pos.File, ".eval:", 2)[0]) + "/" + inst
	if w.Epoch > 1 {
		id += "/epoch-" + strconv.Itoa(w.Epoch)
	}
	usage, err := inspectUsages(rec, w.Events, atLeast(rec.producer, 0, 3, 184), assistantIDs(w.Messages))
	if err != nil {
		return Trajectory{Pos: rec.Pos}, err
	}
	b := turnBuilder{t: Trajectory{ID: id, Extra: Extra{Instance: inst}, Pos: rec.Pos, Inputs: InputsRequest}}
	for i, raw := range w.Messages {
		if err := b.inspectMessage(rec, i, raw, w.Attachments, usage); err != nil {
			return b.t, err
		}
	}
	b.finish()
	if len(b.t.API) == 0 {
		return b.t, rec.Errorf("messages", "no assistant message (no LLM call)")
	}
	return b.t, inspectOutcome(rec, &b.t, w.Scores)
}

func (b *turnBuilder) inspectMessage(rec Record, i int, raw json.RawMessage, att map[string]string, usage map[string]APITokens) error {
	field := fmt.Sprintf("messages[%d]", i)
	var m wireInspectMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return rec.Errorf(field, "want a message object, got %s", clipJSON(raw))
	}
	s, _, err := text(rec, field+".content", m.Content)
	if err != nil {
		return err
	}
	s = resolveAttachment(s, att)
	switch {
	case m.Role == "system" && i == 0:
		b.t.Messages = append(b.t.Messages, Message{Role: "system", Content: s, Tokens: Unrecorded})
	case m.Role == "system", m.Role == "user", m.Role == "tool":
		b.see(s)
	case m.Role == "assistant":
		parts := []string{}
		for j, c := range m.ToolCalls {
			if c.Function == nil {
				return rec.Errorf(fmt.Sprintf("%s.tool_calls[%d].function", field, j), "missing")
			}
			parts = append(parts, renderCall(*c.Function, c.Arguments))
		}
		api, ok := usage[m.ID]
		if !ok || m.ID == "" {
			api = APITokens{Input: Unrecorded, Output: Unrecorded}
		}
		b.call(joinText(s, strings.Join(parts, "\n")), api)
	default:
		return rec.Errorf(field+".role", "want system, user, assistant or tool, got %q", m.Role)
	}
	return nil
}

// resolveAttachment replaces an attachment://<hash> reference with the
// sample's attachment.
func resolveAttachment(s string, att map[string]string) string {
	if h, ok := strings.CutPrefix(s, "attachment://"); ok {
		if v, ok := att[h]; ok {
			return v
		}
	}
	return s
}

// assistantIDs is the set of the sample's assistant message ids.
func assistantIDs(msgs []json.RawMessage) map[string]bool {
	ids := map[string]bool{}
	for _, raw := range msgs {
		var m struct {
			ID   string `json:"id"`
			Role string `json:"role"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Role == "assistant" && m.ID != "" {
			ids[m.ID] = true
		}
	}
	return ids
}

// inspectUsages maps an assistant message id to the usage of the model
// event that produced it. From inspect_ai 0.3.184 input_tokens excludes
// cache reads and writes; they are added back so that input is the whole
// prompt. Every model event is a paid call: one whose output is not the
// message kept — an earlier event for the same message id, or one whose
// message is not in the sample, before the last event that produced one —
// was retried, and is added to the next kept call's Retried. Model events
// after the last kept call (a scorer's) produce no message of the sample
// and are not turns.
func inspectUsages(rec Record, events []json.RawMessage, excludesCache bool, ids map[string]bool) (map[string]APITokens, error) {
	type call struct {
		id string
		a  APITokens
	}
	var calls []call
	for i, raw := range events {
		var e wireModelEvent
		if json.Unmarshal(raw, &e) != nil || e.Event != "model" || e.Output == nil || len(e.Output.Choices) == 0 {
			continue
		}
		v, ok := present(e.Output.Usage)
		if !ok {
			continue
		}
		field := fmt.Sprintf("events[%d].output.usage", i)
		var u wireInspectUsage
		if err := json.Unmarshal(v, &u); err != nil {
			return nil, rec.Errorf(field, "want a usage object, got %s", clipJSON(v))
		}
		a, err := inspectUsage(rec, field, u, excludesCache)
		if err != nil {
			return nil, err
		}
		calls = append(calls, call{e.Output.Choices[0].Message.ID, a})
	}
	lastOf := map[string]int{}
	for i, c := range calls {
		if ids[c.id] {
			lastOf[c.id] = i
		}
	}
	out := map[string]APITokens{}
	var retried Retry
	for i, c := range calls {
		if j, kept := lastOf[c.id]; kept && j == i {
			c.a.Retried = retried
			out[c.id], retried = c.a, Retry{}
			continue
		}
		retried.Calls++
		retried.Output += max(0, c.a.Output)
	}
	return out, nil
}

func inspectUsage(rec Record, field string, u wireInspectUsage, excludesCache bool) (APITokens, error) {
	var a APITokens
	var write int64
	var err error
	if a.Input, err = whole(rec, field+".input_tokens", u.InputTokens); err != nil {
		return a, err
	}
	if a.Output, err = whole(rec, field+".output_tokens", u.OutputTokens); err != nil {
		return a, err
	}
	if a.Cached, err = wholeOr0(rec, field+".input_tokens_cache_read", u.CacheRead); err != nil {
		return a, err
	}
	if write, err = wholeOr0(rec, field+".input_tokens_cache_write", u.CacheWrite); err != nil {
		return a, err
	}
	if a.Reasoning, err = optionalWhole(rec, field+".reasoning_tokens", u.ReasoningTokens); err != nil {
		return a, err
	}
	if excludesCache && a.Input != Unrecorded {
		a.Input += a.Cached + write
	}
	return a, checkBreakdown(rec, field+".", a)
}

// inspectOutcome: the score of the first scorer by name; C is 1, I is 0,
// P is 0.5, numbers and booleans as they are; 1 is success.
func inspectOutcome(rec Record, t *Trajectory, scores map[string]json.RawMessage) error {
	names := make([]string, 0, len(scores))
	for n := range scores {
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	field := "scores." + names[0] + ".value"
	var sc struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(scores[names[0]], &sc); err != nil {
		return rec.Errorf("scores."+names[0], "want a score object, got %s", clipJSON(scores[names[0]]))
	}
	v, ok := present(sc.Value)
	if !ok {
		return nil
	}
	var f float64
	switch string(v) {
	case `"C"`, "true":
		f = 1
	case `"I"`, `"N"`, "false":
		f = 0
	case `"P"`:
		f = 0.5
	default:
		if err := json.Unmarshal(v, &f); err != nil {
			return rec.Errorf(field, `want C, I, P, N, a number or a boolean, got %s`, clipJSON(v))
		}
	}
	t.Success, t.Outcome = f == 1, OutcomeScore
	return nil
}

// atLeast reports whether version (e.g. "0.3.95.dev16+g6527d08") is at
// least major.minor.patch; an unknown version is not.
func atLeast(version string, major, minor, patch int) bool {
	parts := strings.SplitN(version, ".", 4)
	if len(parts) < 3 {
		return false
	}
	var v [3]int
	for i := range 3 {
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return false
		}
		v[i] = n
	}
	want := [3]int{major, minor, patch}
	for i := range 3 {
		if v[i] != want[i] {
			return v[i] > want[i]
		}
	}
	return true
}
