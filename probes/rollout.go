package probes

import (
	"regexp"
	"strconv"
	"strings"
)

// Unrecorded marks a token count that the log does not carry.
const Unrecorded = -1

// Message is one logged chat message.
type Message struct {
	Role    string // system, user or assistant
	Content string
	Tokens  int64 // recorded count (canonical logs), or Unrecorded
}

// APITokens is the usage an API reported for one turn; either may be
// Unrecorded.
type APITokens struct {
	Input, Output int64
}

// Trajectory is one logged rollout, in the shape all input formats are
// converted to.
type Trajectory struct {
	ID       string
	Messages []Message
	Success  bool
	Budget   int64       // per-trajectory budget (canonical logs); 0 when unset
	API      []APITokens // per-turn API usage, indexed by turn; may be nil
	Pos      Position    // where the record starts
}

// Position is where a record sits in its input.
type Position struct {
	File  string
	Line  int // 1-based line for JSONL, 0 for a JSON array element
	Index int // 0-based element for a JSON array, -1 for JSONL
}

func (p Position) String() string {
	if p.Index >= 0 {
		return p.File + "[" + strconv.Itoa(p.Index) + "]"
	}
	return p.File + ":" + strconv.Itoa(p.Line)
}

// rewardNote matches the reward annotation RAGEN appends to observations,
// e.g. " (reward: -0.1)".
var rewardNote = regexp.MustCompile(`\s*\(reward:\s*[\-\d.]+\)\s*$`)

// StripReward removes a trailing reward annotation from a user message.
func StripReward(s string) string {
	// The annotation always contains "(reward:"; skip the regexp otherwise.
	if !strings.Contains(s, "(reward:") {
		return s
	}
	return rewardNote.ReplaceAllString(s, "")
}
