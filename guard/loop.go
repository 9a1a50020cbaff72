package guard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"bagen-data/rollout"
)

// The loop gate (Config.Loop) reads a request's history, as every codec
// normalizes it: a turn's tool calls are the <tool_call> blocks of its
// assistant messages (rollout.RenderToolCall), a turn's tool results the
// tool messages that follow it. A session loops when its last Loop turns
// made the same tool calls with the same arguments, or received the same
// tool results — Gemini CLI's and OpenHands' doom-loop rule — and the
// gate acts on the request that carries them, before the next call is
// paid for.

// loopOf is the longest run, at the end of a request's history, of turns
// making the same tool calls and of turns receiving the same tool
// results, and a key naming the longer one (its kind and content hash).
func loopOf(items []rollout.Message) (calls, results int, detail, key string) {
	_, turns, tail := rollout.SplitGuardHistory(items)
	callSigs := make([]string, len(turns))
	resultSigs := make([]string, len(turns))
	for i, t := range turns {
		callSigs[i] = toolCalls(t.Output)
		next := tail
		if i+1 < len(turns) {
			next = turns[i+1].Input
		}
		resultSigs[i] = toolResults(next)
	}
	calls, cs := trailingRun(callSigs)
	results, rs := trailingRun(resultSigs)
	if calls >= results {
		return calls, results, "made the same tool call", "call:" + hashText(cs)
	}
	return calls, results, "received the same tool result", "result:" + hashText(rs)
}

// trailingRun is the length of the run of equal non-empty strings at the
// end of sigs, and that string.
func trailingRun(sigs []string) (int, string) {
	n := 0
	last := ""
	for i := len(sigs) - 1; i >= 0; i-- {
		if sigs[i] == "" || (n > 0 && sigs[i] != last) {
			break
		}
		last = sigs[i]
		n++
	}
	return n, last
}

// toolCalls are the <tool_call> blocks of items, joined; "" when none.
func toolCalls(items []rollout.Message) string {
	var calls []string
	for _, it := range items {
		text := it.Content
		for {
			i := strings.Index(text, "<tool_call>")
			if i < 0 {
				break
			}
			j := strings.Index(text[i:], "</tool_call>")
			if j < 0 {
				break
			}
			calls = append(calls, text[i:i+j])
			text = text[i+j:]
		}
	}
	return strings.Join(calls, "\x00")
}

// toolResults are the texts of the tool messages of items, joined; ""
// when none.
func toolResults(items []rollout.Message) string {
	var out []string
	for _, it := range items {
		if it.Role == "tool" {
			out = append(out, it.Content)
		}
	}
	return strings.Join(out, "\x00")
}

func hashText(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 16)
}

// loopGate applies the loop gate to a session's request: once per loop,
// a warn event (and a note under policy warn), or under policy stop the
// decision to stop, which then refuses the request. It returns the
// events to record.
func (g *Guard) loopGate(c *call) []any {
	if g.cfg.Loop <= 0 || c.side {
		return nil
	}
	calls, results, detail, key := loopOf(c.req.Items)
	n := max(calls, results)
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < g.cfg.Loop || s.stop != nil || key == s.pol.loopKey {
		return nil
	}
	s.pol.loopKey, s.pol.loopDetail = key, detail
	if g.cfg.Policy == Stop {
		s.stop = g.decideStop(s, s.turns, "loop", s.spent)
		g.logf("session %s: stop decided after turn %d: it %s %d times in a row", s.ID, s.turns, detail, n)
		return []any{*s.stop}
	}
	ev := rollout.GuardWarn{Event: "warn", Session: s.ID, Time: g.stamp(), AfterTurn: s.turns, Reason: "loop",
		Repeats: n, Spent: s.spent, USD: s.pol.usd}
	if g.cfg.Policy == Warn {
		ev.Note = fmt.Sprintf("[loop alert] You have %s %d times in a row. Doing it again will not give a different result: change your approach or stop.", detail, n)
		s.note = joinNotes(s.note, ev.Note)
	}
	g.metrics.warnings.WithLabelValues("loop", "").Inc()
	g.logf("session %s: after turn %d it %s %d times in a row", s.ID, s.turns, detail, n)
	return []any{ev}
}
