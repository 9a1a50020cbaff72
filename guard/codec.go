package guard

import (
	"encoding/json"

	"bagen-data/rollout"
)

// Codec is one wire format: how to read a request's messages, a reply's
// (or a stream's) messages, ids and usage, and how to write a final
// answer or a context-window error in that format. Adding an API is one
// new Codec. Codecs hold no state and are safe for concurrent use.
type Codec interface {
	// Name is the format's name in the ledger and /metrics.
	Name() string
	// Request reads what the guard needs from a request body; an error
	// means the body is not this format's (it is then forwarded as it is).
	Request(body []byte) (*Request, error)
	// Outgoing is the body sent upstream: body itself when nothing
	// changes, else with usage reporting asked for on a stream and note
	// (when not empty) added as a message the model reads.
	Outgoing(body []byte, req *Request, note string) ([]byte, error)
	// Reply reads a whole (non-streaming) answer.
	Reply(body []byte) Reply
	// Stream observes one streamed answer, event by event.
	Stream(req *Request) Stream
	// Answer is a final assistant message saying text, with no tool
	// call, streamed when req asked for a stream.
	Answer(req *Request, text string) (contentType string, body []byte)
	// ContextError is the body of the API's 400 context-window error
	// saying text.
	ContextError(text string) []byte
}

// Stream observes the events of one streamed answer.
type Stream interface {
	// Event observes one server-sent event and says whether the agent
	// sees it.
	Event(e Event) (relay bool)
	// Done reports whether the stream's final event has been seen.
	Done() bool
	// Reply is what the events so far said; Complete only after the
	// stream's final event.
	Reply() Reply
}

// Request is what the guard reads of an agent's request.
type Request struct {
	Model  string
	Stream bool
	// AgentUsage: the agent asked for usage on its stream itself (Chat
	// Completions' stream_options.include_usage).
	AgentUsage bool
	// Items are the request's messages, normalized.
	Items []rollout.Message
	// Echoed are the ids in the request's last assistant message (tool
	// call ids, message ids): a reply the guard relayed, echoed back.
	Echoed []string
	// SessionID is a session id the body carries (metadata).
	SessionID string
	// Previous is the Responses API's previous_response_id; Chainable
	// says the answer is stored (Responses without "store": false), so
	// that a later request may send only its new turn after it.
	Previous  string
	Chainable bool
	// Tools: the request offers the model tools. In a session whose
	// requests offer tools, one that offers none is a side call (a title,
	// a topic or next-speaker check), not a turn of the run.
	Tools bool
}

// Reply is what the guard reads of an answer.
type Reply struct {
	// IDs are the reply's ids a later request echoes (response, message
	// and tool call ids).
	IDs   []string
	Items []rollout.Message
	// Usage is nil when the upstream reported none.
	Usage *rollout.GuardUsage
	// Complete: the answer ended as its format ends one.
	Complete bool
}

// maxBlocks bounds the index of a streamed content block or tool call the
// guard rebuilds; events past it are relayed unread.
const maxBlocks = 1024

// Codecs are the wire formats, by the path suffix they serve.
var Codecs = map[string]Codec{
	"/chat/completions": Chat{},
	"/responses":        Responses{},
	"/messages":         Anthropic{},
}

// jsonText is a JSON string, or the JSON text of any other value.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// appendID adds a non-empty id.
func appendID(ids []string, id string) []string {
	if id == "" {
		return ids
	}
	return append(ids, id)
}

// mustJSON marshals values the guard builds itself, which always marshal.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("guard: " + err.Error())
	}
	return b
}
