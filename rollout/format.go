package rollout

import (
	"encoding/json"
	"fmt"
	"strings"

	"bagen-data/internal/jsonlex"
)

// layout is how a format's records sit in a file.
type layout uint8

const (
	// lines: one JSON object per line (JSONL).
	lines layout = iota
	// array: a JSON array, one record per element.
	array
	// document: the whole file is one JSON object, one record (a compact
	// one-line document may also be one of several lines).
	document
	// session: a JSONL file whose lines together are one record (a coding
	// agent's session log, one event a line).
	session
)

// Format is one log format: how its records sit in a file, how to know it
// from its content, and how to turn a record into a Trajectory. Formats are
// values of this one type, listed in Formats; the zero Format is not
// usable.
type Format struct {
	Name string // the --format name
	Doc  string // one line for --help
	// Side marks a file that is not a trajectory log (a results file, a
	// predictions file): skipped in a directory, an error when named.
	Side   bool
	layout layout
	// ownIDs: the format's ids already name the run (no Run prefix).
	ownIDs bool
	// match reports whether a top-level object with these keys is in this
	// format; nil for formats that are only chosen by layout.
	match  func(keys map[string]json.RawMessage) bool
	decode func(rec Record) (Trajectory, error)
	// calls reports whether a session file holds an LLM call at all; a
	// session without one (aborted before the first answer, a summary-only
	// file) is skipped inside a directory. nil for other layouts.
	calls func(data []byte) bool
}

// Rollout is RAGEN's rollout JSONL and the canonical JSONL that convert
// writes: one trajectory per line, with custom_id and messages (OpenAI-style
// tool messages included).
var Rollout = &Format{Name: "rollout", Doc: "rollout JSONL and the canonical JSONL (custom_id, messages; tool messages allowed)", layout: lines}

// Dialogue is an estimation-dialogue JSON array, as API-model evaluation
// writes.
var Dialogue = &Format{Name: "dialogue", Doc: "estimation-dialogue JSON array (turns with user_prompt/raw_response)", layout: array}

// SWEBenchReport is a SWE-bench harness report; it is read with --results.
var SWEBenchReport = &Format{Name: "swebench-report", Doc: "SWE-bench harness report (resolved_ids): pass it with --results", Side: true, layout: document,
	match: func(k map[string]json.RawMessage) bool { return has(k, "resolved_ids") }}

// Predictions is a SWE-bench predictions file (mini-swe-agent's preds.json);
// it carries no trajectory and no outcome.
var Predictions = &Format{Name: "swebench-preds", Doc: "SWE-bench predictions (preds.json): no trajectory, skipped in directories", Side: true, layout: document,
	match: isPredictions}

// Formats lists every format the readers know, in detection order.
var Formats = []*Format{MiniSWEAgent, ATIF, Inspect, SWEAgent, HarborSide, OpenHandsOutput, OpenHandsMetadata, OpenHands, SWEBenchReport, Predictions,
	CodexHistory, QwenUsage, ClaudeTodos, Codex, QwenCode, ClaudeCode, GuardLedger, Rollout, Dialogue}

func init() {
	Rollout.decode = decodeRollout
	Dialogue.decode = decodeDialogue
}

// LookupFormat finds a format by name.
func LookupFormat(name string) (*Format, error) {
	for _, f := range Formats {
		if f.Name == name && !f.Side {
			return f, nil
		}
	}
	return nil, fmt.Errorf("format: want one of %s, got %q", strings.Join(FormatNames(), ", "), name)
}

// FormatNames are the names --format takes, in detection order.
func FormatNames() []string {
	var names []string
	for _, f := range Formats {
		if !f.Side {
			names = append(names, f.Name)
		}
	}
	return names
}

// FormatHelp is one line per readable format, for --help.
func FormatHelp() string {
	var b strings.Builder
	for _, f := range Formats {
		if !f.Side {
			fmt.Fprintf(&b, "  %-16s %s\n", f.Name, f.Doc)
		}
	}
	return b.String()
}

// detectObject picks the format of a file whose first record is the JSON
// object data: the first format whose signature matches, else Rollout
// (whose decoder then says what is missing).
func detectObject(data []byte) *Format {
	keys, ok := objectKeys(data)
	if !ok {
		return Rollout
	}
	for _, f := range Formats {
		if f.match != nil && f.match(keys) {
			return f
		}
	}
	return Rollout
}

func has(keys map[string]json.RawMessage, names ...string) bool {
	for _, n := range names {
		if _, ok := keys[n]; !ok {
			return false
		}
	}
	return true
}

// isPredictions: every value is an object with a model_patch.
func isPredictions(keys map[string]json.RawMessage) bool {
	if len(keys) == 0 {
		return false
	}
	for _, v := range keys {
		var p struct {
			Patch *json.RawMessage `json:"model_patch"`
		}
		if json.Unmarshal(v, &p) != nil || p.Patch == nil {
			return false
		}
	}
	return true
}

// objectKeys are the top-level keys of a JSON object with their raw
// values, read in one pass that skips over the values (a session log's
// first line can be most of the file); ok is false when data is not an
// object. What follows its closing brace is not read.
func objectKeys(data []byte) (map[string]json.RawMessage, bool) {
	keys := map[string]json.RawMessage{}
	var d jsonlex.Decoder
	d.Reset(data)
	d.Begin('{')
	for i := 0; d.Next(i, '}'); i++ {
		key := d.Key()
		keys[string(key)] = d.Raw()
	}
	return keys, d.Err() == nil
}
