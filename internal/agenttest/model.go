// Package agenttest runs the coding-agent CLIs (Claude Code, Codex, Qwen
// Code) for tests against a scripted stand-in for their model, so that
// tests can make real session logs and check what the CLIs send.
//
// The stand-in (Model) serves, on a loopback port, the three wire formats
// the CLIs speak: OpenAI Chat Completions (POST /v1/chat/completions),
// OpenAI Responses (POST /v1/responses) and Anthropic Messages (POST
// /v1/messages), each streamed as server-sent events exactly as the real
// APIs frame them or answered whole, plus GET /v1/models. Its answers come
// from a Script: each answer is either a call of the client's own shell tool
// (found by name and argument schema in the request's tools) or a final
// text, with usage reported in each format's own fields, cached and
// reasoning parts included.
//
// The stand-in keeps no conversation state: the step of a request is the
// number of tool results its history holds, so concurrent sessions work.
// Requests that offer no shell tool (title generation, next-speaker
// checks, quota probes) are auxiliary and get a short text answer of their
// own. Every request is recorded (Calls) for assertions.
package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bagen-data/internal/openai"
)

// Usage is what the stand-in reports for one call, in one convention for
// every format: Input is the whole request, cache reads and writes
// included; Output is every generated token, reasoning included. Each
// format splits it its own way (see the wire files).
type Usage struct {
	Input      int `json:"input"`       // prompt tokens, Cached and CacheWrite included
	Cached     int `json:"cached"`      // prompt tokens read from the cache
	CacheWrite int `json:"cache_write"` // prompt tokens written to the cache (Anthropic only)
	Output     int `json:"output"`      // generated tokens, Reasoning included
	Reasoning  int `json:"reasoning"`   // generated reasoning tokens
	// Unsplit reports the reasoning inside Output without breaking it out
	// (as vLLM and Ollama's Chat Completions do); Omitted reports no usage
	// at all (as a proxy that drops it does).
	Unsplit bool `json:"unsplit,omitempty"`
	Omitted bool `json:"omitted,omitempty"`
}

// Answer is one scripted model response. With Command set it is a call of
// the client's shell tool running Command (Text, when set, is said before
// the call); otherwise it is the final answer Text.
type Answer struct {
	Command string
	// Tool, when set, makes the answer a call of the request's tool of
	// that name with Input as its arguments (Claude Code's Agent tool, to
	// start a subagent); Command is then not used.
	Tool      string
	Input     map[string]any
	Text      string
	Reasoning string // reasoning text (a thinking block, a reasoning item, reasoning_content); may be empty
	Usage     Usage
}

// Script is what the stand-in answers. Its zero value answers every main
// request with the final text "done".
type Script struct {
	// Model is the model name reported in answers; zero means the name the
	// request asked for, else "agenttest".
	Model string
	// Answers are the responses to the main requests, by step: a request
	// whose history holds k tool results gets Answers[k]; past the end, the
	// last answer that is not a command, else "done".
	Answers []Answer
	// Aux is the usage reported for auxiliary requests (no shell tool
	// offered); zero reports Input 10, Output 2.
	Aux Usage
	// Sub are the answers to a subagent's requests (those carrying
	// Claude Code's X-Claude-Code-Agent-Id header), by step as Answers;
	// nil answers them as main requests.
	Sub []Answer
}

// Call is one request the stand-in served.
type Call struct {
	Method string
	Path   string      // URL path, without the query
	Query  string      // raw query
	Header http.Header // request headers
	Format string      // "chat", "responses", "messages", "models", "count_tokens" or "" (unknown path)
	Model  string      // the model the request named
	Stream bool        // whether the answer was streamed
	Aux    bool        // an auxiliary request (no shell tool offered)
	Step   int         // tool results in the request's history
	Tool   string      // the shell tool called, when the answer was a call
	Answer Answer      // what was answered (Usage as reported)
	Status int         // HTTP status answered
	Body   []byte      // the request body
	Time   time.Time   // when the request arrived
}

// Model is a running stand-in. It is safe for concurrent use.
type Model struct {
	// URL is the server's base URL, http://127.0.0.1:PORT (no /v1).
	URL string

	script Script
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}

	seq   atomic.Int64 // numbers the answers' ids
	mu    sync.Mutex
	calls []Call
}

// StartModel starts a stand-in serving script on a free loopback port and
// stops it when tb ends.
func StartModel(tb testing.TB, script Script) *Model {
	tb.Helper()
	m, err := NewModel(script)
	if err != nil {
		tb.Fatalf("agenttest: %v", err)
	}
	tb.Cleanup(m.Close)
	return m
}

// NewModel starts a stand-in serving script on a free loopback port; Close
// stops it.
func NewModel(script Script) (*Model, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	m := &Model{URL: "http://" + ln.Addr().String(), script: script, ln: ln, done: make(chan struct{})}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve)}
	go func() {
		defer close(m.done)
		_ = m.srv.Serve(ln)
	}()
	return m, nil
}

// Close stops the server and waits for it.
func (m *Model) Close() {
	_ = m.srv.Close()
	<-m.done
}

// Calls returns a copy of the requests served so far, in arrival order.
func (m *Model) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Call(nil), m.calls...)
}

// MainCalls returns the served requests that were not auxiliary and went
// to one of the three completion routes.
func (m *Model) MainCalls() []Call {
	var out []Call
	for _, c := range m.Calls() {
		if !c.Aux && (c.Format == "chat" || c.Format == "responses" || c.Format == "messages") {
			out = append(out, c)
		}
	}
	return out
}

func (m *Model) record(c Call) {
	m.mu.Lock()
	m.calls = append(m.calls, c)
	m.mu.Unlock()
}

// serve routes a request by path; /v1 is optional so that base URLs with
// and without it both work.
func (m *Model) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	c := Call{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodGet && (path == "/models" || strings.HasPrefix(path, "/models/")):
		c.Format = "models"
		c.Status = m.models(w, strings.TrimPrefix(path, "/models"))
	case r.Method == http.MethodPost && path == "/messages/count_tokens":
		c.Format = "count_tokens"
		c.Status = writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
	case r.Method == http.MethodPost && (path == "/chat/completions" || path == "/responses" || path == "/messages"):
		c.Format = map[string]string{"/chat/completions": "chat", "/responses": "responses", "/messages": "messages"}[path]
		m.complete(w, &c)
	default:
		c.Status = writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"type": "not_found_error", "message": "agenttest: no route " + r.Method + " " + r.URL.Path}})
	}
	m.record(c)
}

func (m *Model) models(w http.ResponseWriter, id string) int {
	name := m.script.Model
	if name == "" {
		name = "agenttest"
	}
	entry := map[string]any{"id": name, "object": "model", "type": "model", "created": 0, "owned_by": "agenttest",
		"display_name": name, "created_at": "2025-01-01T00:00:00Z"}
	if id != "" {
		entry["id"] = strings.TrimPrefix(id, "/")
		return writeJSON(w, http.StatusOK, entry)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{entry},
		"has_more": false, "first_id": name, "last_id": name})
}

// request is what the stand-in needs from a completion request, whatever
// its format.
type request struct {
	model  string
	stream bool
	usage  bool // chat: stream_options.include_usage
	step   int  // tool results in the history
	tool   *shellTool
	text   string // all the request's text, for recognising auxiliary requests
}

// complete decodes a completion request, picks the answer and writes it.
func (m *Model) complete(w http.ResponseWriter, c *Call) {
	var raw map[string]any
	if err := json.Unmarshal(c.Body, &raw); err != nil {
		c.Status = writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "agenttest: body: " + err.Error()}})
		return
	}
	req := decode(c.Format, raw, c.Body)
	c.Model, c.Stream, c.Step = req.model, req.stream, req.step
	answers := m.script.Answers
	if m.script.Sub != nil && c.Header.Get("X-Claude-Code-Agent-Id") != "" {
		answers = m.script.Sub
	}
	a := m.answer(req, answers)
	c.Aux = req.tool == nil
	c.Answer = a
	if a.Tool != "" && req.tool != nil {
		req.tool = &shellTool{name: a.Tool, fixed: a.Input}
		a.Command = a.Tool // the wires write a call for a Command
	}
	if a.Command != "" {
		c.Tool = req.tool.name
	}
	model := m.script.Model
	if model == "" {
		model = req.model
	}
	if model == "" {
		model = "agenttest"
	}
	r := reply{model: model, answer: a, tool: req.tool, id: fmt.Sprintf("%d", m.seq.Add(1)), usage: req.usage}
	switch c.Format {
	case "chat":
		c.Status = writeChat(w, r, req.stream)
	case "responses":
		c.Status = writeResponses(w, r, req.stream)
	default:
		c.Status = writeMessages(w, r, req.stream)
	}
}

// WriteAnswer writes a final text answer a (a.Command must be empty) in
// format (chat, responses or messages), streamed or whole, as the
// stand-in answers: for a replay of recorded runs, whose upstream answers
// each turn with the run's recorded message and usage. includeUsage is a
// Chat Completions stream's stream_options.include_usage; id numbers the
// answer's ids. It returns the HTTP status written.
func WriteAnswer(w http.ResponseWriter, format string, stream, includeUsage bool, model, id string, a Answer) int {
	if a.Command != "" {
		panic("agenttest: WriteAnswer answers text, not a tool call")
	}
	r := reply{model: model, answer: a, id: id, usage: includeUsage}
	switch format {
	case "chat":
		return writeChat(w, r, stream)
	case "responses":
		return writeResponses(w, r, stream)
	}
	return writeMessages(w, r, stream)
}

// answer picks the scripted answer for a request from answers.
func (m *Model) answer(req request, answers []Answer) Answer {
	if req.tool == nil {
		return auxAnswer(req.text, m.script.Aux)
	}
	if req.step < len(answers) {
		return answers[req.step]
	}
	for i := len(answers) - 1; i >= 0; i-- {
		if answers[i].Command == "" && answers[i].Tool == "" {
			return answers[i]
		}
	}
	return Answer{Text: "done", Usage: Usage{Input: 10, Output: 1}}
}

// auxAnswer answers a request that offers no shell tool: the CLIs' title
// generation, topic detection and next-speaker checks ask for JSON, the
// rest for a short text.
func auxAnswer(text string, u Usage) Answer {
	if u == (Usage{}) {
		u = Usage{Input: 10, Output: 2}
	}
	a := Answer{Text: "Scripted session", Usage: u}
	switch {
	case strings.Contains(text, "next_speaker"):
		a.Text = `{"reasoning": "The model gave its final answer.", "next_speaker": "user"}`
	case strings.Contains(text, "isNewTopic"):
		a.Text = `{"isNewTopic": false, "title": null}`
	case strings.Contains(strings.ToLower(text), "json") && strings.Contains(strings.ToLower(text), "title"):
		a.Text = `{"title": "Scripted session"}`
	}
	return a
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return status
}

// sse writes server-sent events and flushes each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; an empty name writes a data-only event, as Chat
// Completions does.
func (s *sse) event(name string, v any) {
	var data []byte
	if b, ok := v.([]byte); ok {
		data = b
	} else {
		data = openai.Marshal(v)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.f != nil {
		s.f.Flush()
	}
}

// reply is one answer to write in some format.
type reply struct {
	model  string
	answer Answer
	tool   *shellTool
	id     string
	usage  bool
}
