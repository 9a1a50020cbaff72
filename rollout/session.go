package rollout

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
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

// unmarshalLine decodes one session line, naming the line and field of
// what is wrong.
func unmarshalLine(line Record, v any) error {
	if err := json.Unmarshal(line.Data, v); err != nil {
		return line.Errorf(err2field(err), "%w", JSONCause(err))
	}
	return nil
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
