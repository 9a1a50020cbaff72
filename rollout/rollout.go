// Package rollout reads agent logs into the one trajectory type that the
// rest of bagen-data works on: RAGEN's rollout JSONL and estimation
// dialogues, the canonical JSONL, and the logs agent frameworks write. A
// registry detects each file's format by its content; outcomes are joined
// from results files (--results). Token counts are handed on raw, as the
// log records them; turning history-inclusive inputs into per-turn deltas
// is the accounting step's job (package probes).
package rollout

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unrecorded marks a token count that the log does not carry.
const Unrecorded = -1

// Message is one chat message: of a logged trajectory, a rendered probe
// prompt, a dataset row (its parquet and JSON columns role and content),
// a chat request, or a request the guard relays (normalized from its wire
// format; role tool for tool results, tool calls rendered into Content by
// RenderToolCall).
//
// Tokens is the count a log records for the message; it belongs to the
// trajectory, not to the message's wire forms, so neither parquet nor JSON
// carries it (the canonical JSONL spells it in CanonicalMessages).
type Message struct {
	Role    string `parquet:"role" json:"role"` // system, user, assistant (or tool, in the guard)
	Content string `parquet:"content" json:"content"`
	Tokens  int64  `parquet:"-" json:"-"` // recorded count (canonical logs), or Unrecorded; 0 outside trajectories
}

// APITokens is the usage an API reported for one turn (one LLM call).
// Input and Output may be Unrecorded. Input includes cached prompt tokens;
// Output includes hidden reasoning.
type APITokens struct {
	Input, Output int64
	// Reasoning is the part of Output that was hidden reasoning, as the
	// log records it; nil when the log does not say. A recorded 0 is a
	// log saying there was none, and differs from nil: the accounting step
	// trusts the one and checks the other against the next input.
	Reasoning *int64
	// Cached is the part of Input served from a prompt cache, 0 when the
	// log does not break it out.
	Cached int64
	// Retried is the usage of earlier calls for the same turn whose output
	// was not kept (a retried call): each was paid for, so their outputs
	// count towards the turn's output; their requests repeat this turn's
	// and add no new input. Zero when there were none.
	Retried Retry
}

// Retry sums the calls of a turn that were made again.
type Retry struct {
	Calls  int64 `json:"calls"`  // how many calls were retried
	Output int64 `json:"output"` // their output tokens, reasoning included
}

// Tokens returns a pointer to n: a recorded count for APITokens.Reasoning.
func Tokens(n int64) *int64 { return &n }

// Visible is the part of the output the next request's history replays,
// Output − Reasoning, and whether the log's numbers say it: false when the
// output or the reasoning is not recorded.
func (a APITokens) Visible() (int64, bool) {
	if a.Output == Unrecorded || a.Reasoning == nil {
		return 0, false
	}
	return max(0, a.Output-*a.Reasoning), true
}

// InputKind says what a log's per-call input counts measure.
type InputKind uint8

const (
	// InputsUnknown: the format does not say; the numbers decide.
	InputsUnknown InputKind = iota
	// InputsRequest: each input is the whole request, history included.
	InputsRequest
	// InputsTurn: each input is only what the turn added.
	InputsTurn
)

// Outcome says where a trajectory's Success comes from, in the order the
// readers look: a results file (--results or one found beside the run),
// the log's own score or reward, the agent's exit status, or nothing.
type Outcome string

// Where a trajectory's Success comes from.
const (
	OutcomeNone       Outcome = "none"
	OutcomeResults    Outcome = "results"
	OutcomeScore      Outcome = "score"
	OutcomeExitStatus Outcome = "exit_status"
)

// Trajectory is one logged rollout, in the shape all input formats are
// converted to: an optional system message, then user and assistant
// messages that alternate, one assistant message per LLM call, and maybe a
// trailing user message.
type Trajectory struct {
	ID       string
	Messages []Message
	Success  bool
	Budget   int64       // per-trajectory budget (canonical logs); 0 when unset
	API      []APITokens // per-turn API usage, indexed by turn; may be nil
	// Inputs says whether API[k].Input counts the whole request (history
	// included) or only the turn's new text; InputsUnknown leaves it to
	// the accounting step to decide from the numbers.
	Inputs InputKind
	Pos    Position // where the record starts
	// Outcome says where Success comes from; "" is OutcomeNone.
	Outcome Outcome
	// Extra is what only some formats record.
	Extra Extra
	// Replaced counts invalid UTF-8 sequences replaced by U+FFFD (only when
	// Options.ReplaceInvalidUTF8 allows it; otherwise they are an error).
	Replaced int
	// Task is the task the log says it is from (metadata.task: sokoban,
	// searchr1, …); "" when it does not say.
	Task string
}

// Extra is what a trajectory carries beyond the messages, the usage and
// the outcome when its format records it; each field is zero for the
// formats that do not.
type Extra struct {
	// Instance is the task instance (a SWE-bench instance id) that results
	// files are joined on; "" when the log does not name one.
	Instance string
	// BySuccessRule is the success the metadata gives under each
	// SuccessRule where the log's own fields decide it (rollout JSONL,
	// estimation dialogues); nil for formats that decide success
	// otherwise. Success is its FirstPresentSuccess until WithSuccessRule
	// picks another.
	BySuccessRule *SuccessByRule
	// Dialogue is every turn of an estimation dialogue as logged, in file
	// order, for readers that select and replay turns their own way (the
	// authors' TokenEstimationEnv; see package probes); nil for other
	// formats.
	Dialogue []DialogueTurn
	// Guard is what bagen-data guard estimated and decided during the run
	// (metadata.guard); nil for logs the guard did not write.
	Guard *GuardRun
}

// Position is where a record sits in its input.
type Position struct {
	File  string
	Line  int // 1-based line for JSONL; 0 for a whole-file document or an array element
	Index int // 0-based element for a JSON array, -1 otherwise
}

func (p Position) String() string {
	switch {
	case p.Index >= 0:
		return p.File + "[" + strconv.Itoa(p.Index) + "]"
	case p.Line == 0:
		return p.File
	}
	return p.File + ":" + strconv.Itoa(p.Line)
}

// StripReward removes a trailing reward annotation, such as " (reward:
// -0.1)", that RAGEN appends to observations. It does what Python's
// re.sub(r"\s*\(reward:\s*[\-\d.]+\)\s*$", "", s) does, with Python's
// Unicode \s and \d, by scanning from the end (the regexp engine was the
// build's hottest spot).
func StripReward(s string) string {
	end := trimSpaceRight(s, len(s))
	if end == 0 || s[end-1] != ')' {
		return s
	}
	num := end - 1
	for num > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:num])
		if r != '-' && r != '.' && !unicode.IsDigit(r) {
			break
		}
		num -= size
	}
	if num == end-1 {
		return s
	}
	tag := trimSpaceRight(s, num)
	const open = "(reward:"
	if !strings.HasSuffix(s[:tag], open) {
		return s
	}
	return s[:trimSpaceRight(s, tag-len(open))]
}

// trimSpaceRight returns the end of s[:end] without trailing whitespace,
// whitespace being what Python's str.isspace accepts.
func trimSpaceRight(s string, end int) int {
	for end > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if !unicode.IsSpace(r) && (r < 0x1c || r > 0x1f) {
			break
		}
		end -= size
	}
	return end
}
