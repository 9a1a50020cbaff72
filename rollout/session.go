package rollout

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"

	"bagen-data/internal/jsonlex"
)

// The coding-agent CLIs (Claude Code, Codex, Qwen Code) keep each session
// as a JSONL file, one event a line; the whole file is one trajectory. The
// helpers here are what their three readers share.

// eachLine calls fn with every non-blank line of a session record, as a
// Record positioned at that line (so that errors name it).
func eachLine(rec Record, fn func(line Record) error) error {
	data := rec.Data
	for n := 1; len(data) > 0; n++ {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		line := rec
		line.Pos.Line, line.Data = n, l
		if err := fn(line); err != nil {
			return err
		}
	}
	return nil
}

// subField names field inside prefix ("" is prefix itself).
func subField(prefix, field string) string {
	if field == "" {
		return prefix
	}
	return prefix + "." + field
}

// sessionTurns collects a session's turns: an LLM call's visible output is
// held open until the call is closed (its usage may come later in the
// file), and what the agent sees meanwhile (tool output) goes to the next
// turn's user side.
type sessionTurns struct {
	b       turnBuilder
	open    bool     // a call is being collected
	texts   []string // its text parts
	calls   []string // its rendered tool calls
	api     APITokens
	pending []string // seen while the call was open: the next user side
}

// see adds what the agent saw.
func (s *sessionTurns) see(text string) {
	if text == "" {
		return
	}
	if s.open {
		s.pending = append(s.pending, text)
		return
	}
	s.b.see(text)
}

// start opens a call (closing the open one first) with its usage.
func (s *sessionTurns) start(api APITokens) {
	s.close()
	s.open, s.api = true, api
}

// output adds text or a rendered tool call to the open call, opening one
// with unrecorded usage if there is none.
func (s *sessionTurns) output(text, call string) {
	if !s.open {
		s.start(APITokens{Input: Unrecorded, Output: Unrecorded})
	}
	if text != "" {
		s.texts = append(s.texts, text)
	}
	if call != "" {
		s.calls = append(s.calls, call)
	}
}

// close ends the open call: its text, then its tool calls, are one
// assistant message.
func (s *sessionTurns) close() {
	if !s.open {
		return
	}
	s.b.call(joinText(strings.Join(s.texts, "\n\n"), strings.Join(s.calls, "\n")), s.api)
	for _, p := range s.pending {
		s.b.see(p)
	}
	s.open, s.texts, s.calls, s.pending = false, s.texts[:0], s.calls[:0], s.pending[:0]
}

// finish closes the open call and returns the trajectory, an error when it
// has no call at all.
func (s *sessionTurns) finish(rec Record, what string) (Trajectory, error) {
	s.close()
	s.b.finish()
	if len(s.b.t.API) == 0 {
		return s.b.t, rec.Errorf("", "no %s (no LLM call in the session)", what)
	}
	return s.b.t, nil
}

// containsAny reports whether data holds one of the byte strings.
func containsAny(data []byte, subs ...string) bool {
	for _, s := range subs {
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}

// typeOf is the string value of a top-level "type" key, "" when absent.
func typeOf(k map[string]json.RawMessage) string {
	var t string
	json.Unmarshal(k["type"], &t)
	return t
}

// sumTokens adds token counts that one log splits apart (Anthropic's
// input, cache reads and cache writes), failing on overflow.
func sumTokens(line Record, field string, ns ...int64) (int64, error) {
	var s int64
	for _, n := range ns {
		if n > math.MaxInt64-s {
			return 0, line.Errorf(field, "token counts overflow a 64-bit sum")
		}
		s += n
	}
	return s, nil
}

// topKeys returns the raw JSON values of the wanted top-level keys of a
// session line (nil where absent) in one pass that skips every other value
// without decoding it: the lines the readers need little of (Claude Code's
// request snapshots and tool results, Codex's session metadata) are most
// of a session's bytes. The values returned are decoded, and so checked,
// by encoding/json; the rest of the line is only checked to be a
// well-formed object (what follows its closing brace is not read).
func topKeys(line Record, keys ...string) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(keys))
	data := bytes.TrimSpace(line.Data)
	if len(data) == 0 || data[0] != '{' {
		return nil, line.Errorf("", "want a JSON object, got %s", clipJSON(data))
	}
	var d jsonlex.Decoder
	d.Reset(line.Data)
	d.Begin('{')
	for i := 0; d.Next(i, '}'); i++ {
		key := d.Key()
		value := d.Raw()
		for j, k := range keys {
			if string(key) == k {
				out[j] = value
			}
		}
	}
	if err := d.Err(); err != nil {
		return nil, line.Errorf("", "%w", JSONCause(err))
	}
	return out, nil
}

// stringValue decodes a raw JSON string ("" when absent or not a string).
func stringValue(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// cliHomes are the session directories inside each CLI's own directory:
// reading ~/.claude, ~/.codex or ~/.qwen reads its sessions, not its
// settings, plugin stores and caches.
var cliHomes = map[string][]string{
	".claude": {"projects"},
	".codex":  {"sessions", "archived_sessions"},
	".qwen":   {"projects"},
}

// sessionRoots are the directories to walk for dir: its session
// directories when it is a CLI's own directory that has them, else dir.
func sessionRoots(dir string) []string {
	subs, ok := cliHomes[filepath.Base(filepath.Clean(dir))]
	if !ok {
		return []string{dir}
	}
	var roots []string
	for _, sub := range subs {
		p := filepath.Join(dir, sub)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			roots = append(roots, p)
		}
	}
	if len(roots) == 0 {
		return []string{dir}
	}
	return roots
}
