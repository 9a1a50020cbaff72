package server

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"unsafe"

	"bagen-data/internal/httpd"
	"bagen-data/internal/jsonlex"
	"bagen-data/reward"
)

// state is the per-request scratch space, pooled so that a request in
// the steady state allocates little beyond what net/http does.
type state struct {
	dec     jsonlex.Decoder
	body    []byte
	out     []byte
	strs    [3][]jstr
	results []result
	tally   tally
}

// jstr is a JSON string's content as written, and whether it holds
// escapes.
type jstr struct {
	raw     []byte
	escaped bool
}

// str decodes s, aliasing the body when it holds no escapes.
func (st *state) str(s jstr) []byte {
	if !s.escaped {
		return s.raw
	}
	return st.dec.Unescape(s.raw)
}

// result is one scored item.
type result = reward.Judgement

// maxPooled is the largest buffer kept in the pool; bigger ones are left
// to the garbage collector so one huge request does not pin memory.
const maxPooled = 4 << 20

var statePool = sync.Pool{New: func() any { return new(state) }}

func getState() *state { return statePool.Get().(*state) }

func putState(st *state) {
	if cap(st.body) > maxPooled || cap(st.out) > maxPooled {
		return
	}
	st.dec.Reset(nil)
	st.dec.Trim(maxPooled)
	for i := range st.strs {
		clear(st.strs[i])
		st.strs[i] = st.strs[i][:0]
	}
	st.results = st.results[:0]
	st.tally = tally{}
	statePool.Put(st)
}

// readBody reads the request body into st.body, at most limit bytes
// (httpd.ReadBody: the buffer grows with the bytes that arrive, never to
// a declared Content-Length).
func (st *state) readBody(w http.ResponseWriter, r *http.Request, limit int64) error {
	var err error
	st.body, err = httpd.ReadBody(w, r, st.body, limit)
	return err
}

// judge scores one response against its target with the server's rule.
func (h *handler) judge(st *state, response []byte, t reward.Target) result {
	res := t.Judge(h.cfg.Rule, view(response))
	st.tally.add(res.Possible, res.Reward)
	return res
}

// view returns b as a string without copying; b must not change while
// the string is in use.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// appendError appends {"error":"…"}.
func appendError(b []byte, err error) []byte { return httpd.AppendError(b, err.Error()) }

func itoa(n int) string { return strconv.Itoa(n) }

// Chat-template markers used to find the response inside an OpenRLHF
// query.
var (
	assistantMarker = []byte("<|im_start|>assistant")
	endMarkers      = [][]byte{[]byte("<|im_end|>"), []byte("<|endoftext|>")}
)

// response extracts the response of an OpenRLHF query as responseOf
// does, without decoding the prompt part when the prompt is a prefix of
// the query as written: then it is also one once decoded. (A prompt
// ending in a high surrogate escape takes the decoding path, as the pair
// may be completed in the query.)
func (st *state) response(q, p jstr, hasPrompt bool) []byte {
	if hasPrompt && len(p.raw) > 0 && bytes.HasPrefix(q.raw, p.raw) && !endsInHighSurrogate(p.raw) {
		return stripEnd(st.str(jstr{q.raw[len(p.raw):], q.escaped}))
	}
	var prompt []byte
	if hasPrompt {
		prompt = st.str(p)
	}
	return responseOf(st.str(q), prompt, hasPrompt)
}

// endsInHighSurrogate reports whether raw may end with a \uD800–\uDBFF
// escape.
func endsInHighSurrogate(raw []byte) bool {
	n := len(raw)
	if n < 6 || raw[n-6] != '\\' || raw[n-5] != 'u' || raw[n-4]|0x20 != 'd' {
		return false
	}
	switch raw[n-3] | 0x20 {
	case '8', '9', 'a', 'b':
		return true
	}
	return false
}

// responseOf extracts the model's response from an OpenRLHF query: the
// query minus prompt when prompt is a prefix of it, else the text after
// the last "<|im_start|>assistant", else the whole query; trailing
// <|im_end|> and <|endoftext|> tokens (and white space between them) are
// stripped.
func responseOf(query, prompt []byte, hasPrompt bool) []byte {
	resp := query
	if hasPrompt && len(prompt) > 0 && bytes.HasPrefix(query, prompt) {
		resp = query[len(prompt):]
	} else if i := bytes.LastIndex(query, assistantMarker); i >= 0 {
		resp = query[i+len(assistantMarker):]
	}
	return stripEnd(resp)
}

// stripEnd strips trailing end-of-turn tokens and the white space around
// them.
func stripEnd(resp []byte) []byte {
	for {
		trimmed := bytes.TrimRight(resp, " \t\r\n")
		for _, m := range endMarkers {
			trimmed = bytes.TrimSuffix(trimmed, m)
		}
		if len(trimmed) == len(resp) {
			return resp
		}
		resp = trimmed
	}
}
