package rollout

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// ClaudeCode is a Claude Code session log,
// ~/.claude/projects/<cwd-slug>/<session-id>.jsonl: one record a line
// (user, assistant, attachment, system, summary, …). Claude Code writes
// one assistant line per content block of an API response; lines of one
// call share message.id and each repeats the call's usage, which is
// counted once. Usage is Anthropic's: input_tokens excludes
// cache_read_input_tokens and cache_creation_input_tokens, so the whole
// request is their sum. Sub-agent (sidechain) calls in the file are turns
// of the session, in file order; a sub-agent transcript of its own
// (<session>/subagents/agent-<id>.jsonl) is a trajectory of its own, with
// id <session>/agent-<id>.
var ClaudeCode = &Format{Name: "claude-code", Doc: "Claude Code session log (~/.claude/projects/<cwd>/<session>.jsonl)", layout: session, ownIDs: true,
	match: isClaudeCode,
	calls: func(data []byte) bool { return containsAny(data, `"type":"assistant"`, `"type": "assistant"`) }}

// ClaudeTodos is a Claude Code todo list (~/.claude/todos/*.json): no
// trajectory.
var ClaudeTodos = &Format{Name: "claude-code-todos", Doc: "Claude Code todo list (~/.claude/todos)", Side: true, layout: document}

func init() { ClaudeCode.decode = decodeClaudeCode }

// isClaudeCode: a record with a type and the session id, or the summary
// and file-history-snapshot lines older versions start files with.
func isClaudeCode(k map[string]json.RawMessage) bool {
	switch t := typeOf(k); {
	case t == "":
		return false
	case has(k, "sessionId"):
		return true
	case t == "summary":
		return has(k, "leafUuid")
	case t == "file-history-snapshot":
		return has(k, "messageId")
	}
	return false
}

// wireClaudeLine is what a line holds that the reader uses.
type wireClaudeLine struct {
	Type     string
	Message  *wireClaudeMessage
	Rendered []struct {
		Content json.RawMessage `json:"content"`
	}
}

type wireClaudeMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   json.RawMessage `json:"usage"`
}

type wireClaudeBlock struct {
	Type    string          `json:"type"`
	Text    json.RawMessage `json:"text"`
	Name    *string         `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
}

type wireClaudeUsage struct {
	Input       json.RawMessage `json:"input_tokens"`
	CacheRead   json.RawMessage `json:"cache_read_input_tokens"`
	CacheCreate json.RawMessage `json:"cache_creation_input_tokens"`
	Output      json.RawMessage `json:"output_tokens"`
	Details     *struct {
		Thinking json.RawMessage `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// claudeSession is the state of one Claude Code file being read.
type claudeSession struct {
	turns   sessionTurns
	callID  string          // message.id of the open call
	counted map[string]bool // message ids already counted
	prompt  string          // the first user text, the instance key without a cwd
}

func decodeClaudeCode(rec Record) (Trajectory, error) {
	s := claudeSession{counted: map[string]bool{}}
	s.turns.b.t = Trajectory{ID: BaseID(rec.Pos.File), Pos: rec.Pos, Inputs: InputsRequest}
	t := &s.turns.b.t
	err := eachLine(rec, func(line Record) error {
		v, err := topKeys(line, "type", "sessionId", "cwd", "message", "rendered")
		if err != nil {
			return err
		}
		if id := stringValue(v[1]); id != "" && t.ID == BaseID(rec.Pos.File) {
			t.ID = id
		}
		if cwd := stringValue(v[2]); cwd != "" && t.Extra.Instance == "" {
			t.Extra.Instance = cwd
		}
		w := wireClaudeLine{Type: stringValue(v[0])}
		switch {
		case (w.Type == "user" || w.Type == "assistant") && v[3] != nil:
			if err := json.Unmarshal(v[3], &w.Message); err != nil {
				return line.Errorf(subField("message", err2field(err)), "%w", JSONCause(err))
			}
		case w.Type == "attachment" && v[4] != nil:
			if err := json.Unmarshal(v[4], &w.Rendered); err != nil {
				return line.Errorf("rendered", "%w", JSONCause(err))
			}
		}
		return s.line(line, w)
	})
	if err != nil {
		return *t, err
	}
	if t.Extra.Instance == "" {
		t.Extra.Instance = s.prompt
	}
	if filepath.Base(filepath.Dir(rec.Pos.File)) == "subagents" {
		// <session>/subagents/agent-<id>.jsonl: a sub-agent's transcript,
		// which carries its parent's session id.
		t.ID += "/" + BaseID(rec.Pos.File)
	}
	return s.turns.finish(rec, "assistant message")
}

func (s *claudeSession) line(line Record, w wireClaudeLine) error {
	switch w.Type {
	case "user":
		if w.Message == nil {
			return line.Errorf("message", "missing")
		}
		txt, err := claudeUserContent(line, w.Message.Content)
		if s.prompt == "" {
			s.prompt = txt
		}
		s.turns.see(txt)
		return err
	case "attachment":
		for i, r := range w.Rendered {
			txt, _, err := text(line, fmt.Sprintf("rendered[%d].content", i), r.Content)
			if err != nil {
				return err
			}
			s.turns.see(txt)
		}
	case "assistant":
		if w.Message == nil {
			return line.Errorf("message", "missing")
		}
		return s.assistant(line, w)
	}
	return nil
}

// assistant adds one content-block line of an API response: a new
// message.id opens a call with the line's usage, a repeated one adds to it.
func (s *claudeSession) assistant(line Record, w wireClaudeLine) error {
	m := w.Message
	if m.Model == "<synthetic>" {
		return nil // written by Claude Code itself (an API error shown as a message), not a call
	}
	if m.ID == "" || m.ID != s.callID || !s.turns.open {
		if m.ID != "" && s.counted[m.ID] {
			return nil // a later copy of a call already read
		}
		api, err := claudeUsage(line, "message.usage", m.Usage)
		if err != nil {
			return err
		}
		s.turns.start(api)
		s.callID, s.counted[m.ID] = m.ID, true
	}
	return claudeAssistantContent(line, &s.turns, m.Content)
}

// claudeAssistantContent adds an assistant line's blocks to the open call:
// text and tool_use are visible output; thinking is hidden reasoning,
// counted only in the usage.
func claudeAssistantContent(line Record, t *sessionTurns, raw json.RawMessage) error {
	v, ok := present(raw)
	if !ok {
		return nil
	}
	if v[0] == '"' {
		txt, _, err := text(line, "message.content", v)
		t.output(txt, "")
		return err
	}
	var bs []wireClaudeBlock
	if err := json.Unmarshal(v, &bs); err != nil {
		return line.Errorf("message.content", "want a string or an array of content blocks, got %s", clipJSON(v))
	}
	for i, b := range bs {
		f := fmt.Sprintf("message.content[%d]", i)
		switch b.Type {
		case "text":
			txt, _, err := text(line, f+".text", b.Text)
			if err != nil {
				return err
			}
			t.output(txt, "")
		case "tool_use", "server_tool_use":
			if b.Name == nil {
				return line.Errorf(f+".name", "missing")
			}
			t.output("", renderCall(*b.Name, b.Input))
		}
	}
	return nil
}

// claudeUserContent is what a user line shows the model: its text and
// its tool results' content.
func claudeUserContent(line Record, raw json.RawMessage) (string, error) {
	v, ok := present(raw)
	if !ok {
		return "", nil
	}
	if v[0] == '"' {
		txt, _, err := text(line, "message.content", v)
		return txt, err
	}
	var bs []wireClaudeBlock
	if err := json.Unmarshal(v, &bs); err != nil {
		return "", line.Errorf("message.content", "want a string or an array of content blocks, got %s", clipJSON(v))
	}
	var parts []string
	for i, b := range bs {
		f := fmt.Sprintf("message.content[%d]", i)
		var txt string
		var err error
		switch b.Type {
		case "text":
			txt, _, err = text(line, f+".text", b.Text)
		case "tool_result":
			txt, _, err = text(line, f+".content", b.Content)
		}
		if err != nil {
			return "", err
		}
		if txt != "" {
			parts = append(parts, txt)
		}
	}
	s := strings.Join(parts, "\n\n")
	return s, checkSize(line, "message.content", s)
}

// claudeUsage reads Anthropic usage: the whole request is input_tokens +
// cache_read_input_tokens + cache_creation_input_tokens; the cached part
// is the cache reads; output_tokens holds the thinking, which
// output_tokens_details.thinking_tokens breaks out where Claude Code
// records it.
func claudeUsage(line Record, field string, raw json.RawMessage) (APITokens, error) {
	a := APITokens{Input: Unrecorded, Output: Unrecorded}
	v, ok := present(raw)
	if !ok {
		return a, nil
	}
	var u wireClaudeUsage
	if err := json.Unmarshal(v, &u); err != nil {
		return a, line.Errorf(field, "want a usage object, got %s", clipJSON(v))
	}
	in, err := whole(line, field+".input_tokens", u.Input)
	if err != nil {
		return a, err
	}
	read, err := wholeOr0(line, field+".cache_read_input_tokens", u.CacheRead)
	if err != nil {
		return a, err
	}
	create, err := wholeOr0(line, field+".cache_creation_input_tokens", u.CacheCreate)
	if err != nil {
		return a, err
	}
	if a.Output, err = whole(line, field+".output_tokens", u.Output); err != nil {
		return a, err
	}
	if u.Details != nil {
		if a.Reasoning, err = optionalWhole(line, field+".output_tokens_details.thinking_tokens", u.Details.Thinking); err != nil {
			return a, err
		}
	}
	if a.Input, err = sumTokens(line, field+".input_tokens", in, read, create); err != nil {
		return a, err
	}
	a.Cached = read
	return a, checkBreakdown(line, field+".", a)
}
