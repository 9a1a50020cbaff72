package guard

import (
	"bytes"
	"io"
	"testing"
)

// FuzzCodecs feeds arbitrary bytes to every codec's request, reply and
// stream readers and to the SSE splitter: none may panic, and the stream
// relays every event it does not drop byte for byte.
func FuzzCodecs(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","stream":true,"input":[{"type":"function_call","call_id":"c","name":"shell","arguments":"{}"}]}`,
		`{"model":"m","system":[{"type":"text","text":"s"}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}]}`,
		chatReply,
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"x\"}}]}}]}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":null}}\n\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []Codec{Chat{}, Responses{}, Anthropic{}} {
			if req, err := c.Request(data); err == nil {
				c.Outgoing(data, req, "note")
				prefixHashes(req.Items)
			}
			c.Reply(data)
			st := c.Stream(&Request{Stream: true})
			r := &sseReader{src: bytes.NewReader(data), obs: st, closer: io.NopCloser(nil)}
			if _, err := io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
			st.Reply()
		}
	})
}
