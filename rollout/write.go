package rollout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"

	"bagen-data/internal/atomicfile"
)

// CanonicalMessages are the messages of a canonical JSONL line. They
// differ from Message only in their JSON: a message's recorded count is
// its "tokens" field, left out when Unrecorded.
type CanonicalMessages []Message

// canonMessage is a Message as the canonical JSONL spells it.
type canonMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Tokens  *int64 `json:"tokens,omitempty"`
}

// MarshalJSON writes the messages in the canonical spelling.
func (c CanonicalMessages) MarshalJSON() ([]byte, error) {
	return marshalAs(c, func(m Message) canonMessage {
		return canonMessage{Role: m.Role, Content: m.Content, Tokens: recorded(m.Tokens)}
	})
}

// UnmarshalJSON reads messages in the canonical spelling; a message
// without tokens is Unrecorded.
func (c *CanonicalMessages) UnmarshalJSON(data []byte) error {
	return unmarshalAs((*[]Message)(c), data, func(w canonMessage) Message {
		m := Message{Role: w.Role, Content: w.Content, Tokens: Unrecorded}
		if w.Tokens != nil {
			m.Tokens = *w.Tokens
		}
		return m
	})
}

// marshalAs writes msgs as a JSON array of their wire spelling W, null
// when nil.
func marshalAs[W any](msgs []Message, spell func(Message) W) ([]byte, error) {
	if msgs == nil {
		return []byte("null"), nil
	}
	wire := make([]W, len(msgs))
	for i, m := range msgs {
		wire[i] = spell(m)
	}
	return marshalRaw(wire)
}

// unmarshalAs reads a JSON array of messages spelled W into *msgs; null
// leaves it nil.
func unmarshalAs[W any](msgs *[]Message, data []byte, read func(W) Message) error {
	if string(data) == "null" {
		*msgs = nil
		return nil
	}
	var wire []W
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	*msgs = make([]Message, len(wire))
	for i, w := range wire {
		(*msgs)[i] = read(w)
	}
	return nil
}

type canonAPI struct {
	Input     *int64 `json:"input,omitempty"`
	Output    *int64 `json:"output,omitempty"`
	Reasoning *int64 `json:"reasoning"` // null: not recorded; 0: recorded as none
	Cached    int64  `json:"cached"`
	Retried   *Retry `json:"retried,omitempty"`
}

type canonMetadata struct {
	Success       bool      `json:"success"`
	OutcomeSource Outcome   `json:"outcome_source"`
	InstanceID    string    `json:"instance_id,omitempty"`
	Task          string    `json:"task,omitempty"`
	Guard         *GuardRun `json:"guard,omitempty"`
}

type canonRollout struct {
	CustomID  string            `json:"custom_id"`
	Budget    int64             `json:"budget,omitempty"`
	Messages  CanonicalMessages `json:"messages"`
	API       []canonAPI        `json:"per_turn_api_tokens,omitempty"`
	APIInputs string            `json:"api_inputs,omitempty"`
	Metadata  canonMetadata     `json:"metadata"`
}

func recorded(n int64) *int64 {
	if n == Unrecorded {
		return nil
	}
	return &n
}

// MarshalCanonical is t as one line of the canonical JSONL (without the
// newline): what Decode reads back as the same Trajectory, apart from its
// position and Replaced.
func MarshalCanonical(t Trajectory) ([]byte, error) {
	c := canonRollout{CustomID: t.ID, Budget: t.Budget, Messages: CanonicalMessages(t.Messages),
		Metadata: canonMetadata{Success: t.Success, OutcomeSource: t.Outcome, InstanceID: t.Extra.Instance, Task: t.Task, Guard: t.Extra.Guard}}
	if c.Messages == nil {
		c.Messages = CanonicalMessages{} // [], not null
	}
	if c.Metadata.OutcomeSource == "" {
		c.Metadata.OutcomeSource = OutcomeNone
	}
	if hasUsage(t.API) {
		for _, a := range t.API {
			api := canonAPI{Input: recorded(a.Input), Output: recorded(a.Output), Reasoning: a.Reasoning, Cached: a.Cached}
			if a.Retried.Calls > 0 {
				api.Retried = &a.Retried
			}
			c.API = append(c.API, api)
		}
	}
	switch t.Inputs {
	case InputsRequest:
		c.APIInputs = "request"
	case InputsTurn:
		c.APIInputs = "turn"
	}
	return marshalRaw(c)
}

// marshalRaw is json.Marshal without HTML escaping: the canonical JSONL
// keeps <, > and & as they are, and an enclosing encoder escapes them
// if it is asked to.
func marshalRaw(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// hasUsage reports whether a log recorded any usage at all: a log without
// (SWE-agent's .traj, an Inspect log without model usage) gets no
// per_turn_api_tokens rather than entries that say nothing.
func hasUsage(api []APITokens) bool {
	for _, a := range api {
		if a != (APITokens{Input: Unrecorded, Output: Unrecorded}) {
			return true
		}
	}
	return false
}

// Summary counts what Convert read.
type Summary struct {
	Files        int             `json:"files"`
	Trajectories int             `json:"trajectories"`
	Formats      map[string]int  `json:"formats"`  // trajectories per format
	Outcomes     map[Outcome]int `json:"outcomes"` // trajectories per outcome source
	Submitted    int             `json:"submitted"`
	Replaced     int             `json:"replaced_utf8"` // invalid UTF-8 sequences replaced
	// Turns counts assistant turns (LLM calls); Usage sums the usage
	// recorded for them, over the turns that record it (UsageTurns).
	Turns      int      `json:"turns"`
	UsageTurns int      `json:"usage_turns"`
	Usage      UsageSum `json:"usage"`
	// ReasoningTurns counts the turns whose reasoning count the log
	// records, ZeroReasoning those of them where it is 0 (the accounting
	// step trusts both and checks the others against the next request);
	// Retried counts calls made again (each paid, see APITokens.Retried).
	ReasoningTurns int `json:"reasoning_turns"`
	ZeroReasoning  int `json:"reasoning_zero_turns"`
	Retried        int `json:"retried_calls"`
}

// UsageSum adds up recorded usage: input and output over the turns that
// record both, cached and reasoning where recorded (an unrecorded
// reasoning count adds nothing).
type UsageSum struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cached    int64 `json:"cached"`
}

func newSummary() Summary {
	return Summary{Formats: map[string]int{}, Outcomes: map[Outcome]int{}}
}

func (s *Summary) add(rec Record, t Trajectory) {
	s.Trajectories++
	s.Formats[rec.FormatName()]++
	s.Outcomes[t.Outcome]++
	s.Replaced += t.Replaced
	if t.Outcome == OutcomeExitStatus && t.Success {
		s.Submitted++
	}
	for _, m := range t.Messages {
		if m.Role == "assistant" {
			s.Turns++
		}
	}
	for _, a := range t.API {
		if a.Reasoning != nil {
			s.ReasoningTurns++
			if *a.Reasoning == 0 {
				s.ZeroReasoning++
			}
		}
		s.Retried += int(a.Retried.Calls)
		if a.Input == Unrecorded || a.Output == Unrecorded {
			continue
		}
		s.UsageTurns++
		s.Usage.Input += a.Input
		s.Usage.Output += a.Output
		if a.Reasoning != nil {
			s.Usage.Reasoning += *a.Reasoning
		}
		s.Usage.Cached += a.Cached
	}
}

// ConvertOptions say how Convert names trajectories. The zero value keeps
// every id as read.
type ConvertOptions struct {
	// PrefixIDs prefixes every id with its file's base name and ":", as
	// build --prefix-ids does, so that files reusing ids can be converted
	// together.
	PrefixIDs bool
}

// Convert reads every trajectory of srcs and writes them to out as
// canonical JSONL, atomically: out is replaced only when everything was
// read. It holds one trajectory in memory at a time. Ids must be unique
// (the error is a *DuplicateError).
func Convert(ctx context.Context, srcs []Source, out string, o ConvertOptions) (Summary, error) {
	sum := newSummary()
	var readErr error // reported as it is, not as a failed write
	err := atomicfile.Write(out, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		seen := map[string]Position{}
		for _, src := range srcs {
			sum.Files++
			prefix := ""
			if o.PrefixIDs {
				prefix = BaseID(src.Name) + ":"
			}
			err := Scan(ctx, src, func(rec Record) error {
				t, err := Decode(rec)
				if err != nil {
					return err
				}
				t.ID = prefix + t.ID
				if first, dup := seen[t.ID]; dup {
					return &DuplicateError{ID: t.ID, First: first.String(), Then: t.Pos.String()}
				}
				seen[t.ID] = t.Pos
				line, err := MarshalCanonical(t)
				if err != nil {
					return err
				}
				sum.add(rec, t)
				bw.Write(line)
				return bw.WriteByte('\n')
			})
			if err != nil {
				readErr = err
				return err
			}
		}
		if sum.Trajectories == 0 {
			readErr = errNoTrajectories
			return readErr
		}
		return bw.Flush()
	})
	if readErr != nil {
		return sum, readErr
	}
	return sum, err
}
