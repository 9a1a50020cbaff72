package guard

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/maphash"
	"net/http"
	"strconv"
	"sync"
	"time"

	"bagen-data/rollout"
)

// Session is one agent run as the guard tracks it. It keeps ids, hashes
// and counts, not the conversation: each request carries its own history
// (a Responses chain, which sends only its new turn, is the exception:
// its history is kept up to Config.MaxChainBytes).
type Session struct {
	ID string
	// Key is how the session was first identified: "header", "metadata"
	// or "new".
	Key string

	mu    sync.Mutex
	calls int
	turns int
	usage []*rollout.GuardUsage // per turn
	spent int64
	stop  *rollout.GuardStop
	// stopActed: the stop has refused a request, and is counted.
	stopActed bool
	// estimatorTokens is what the session's estimates cost (input +
	// output).
	estimatorTokens int64
	note            string
	logged          bool // the session event was made
	// written: the session's ledger file exists; until then its events
	// wait in held.
	written bool
	held    []any
	// pending is closed when the estimate started after the last turn
	// is recorded; nil when none is running.
	pending chan struct{}
	// chain is a Responses chain's history.
	chain []rollout.Message
	// page is what the live page shows beyond the counts.
	page pageState
	// pol is the budget policies' state (budget.go).
	pol policyState
	// Parent is the id of the session this one is a child of (a
	// subagent's: family.go), "" for none; root is the top session of its
	// family, nil for a session that is its own; both are set when the
	// session is made, then fixed.
	Parent string
	root   *Session

	// Guarded by sessions.mu.
	explicit  string
	tools     bool      // a request of the session offered tools
	ids       []string  // ids of the last reply, in sessions.byID
	expect    prefixKey // the last answered request, in sessions.byPrefix
	expecting bool
	retry     prefixKey // the last failed request, in sessions.byRetry
	retrying  bool
	elem      *list.Element
}

// keyID is the session id of an explicit key: a hash, so that a name is
// never written as a file name.
func keyID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "s-" + hex.EncodeToString(sum[:8])
}

// prefixKey names a list of items: how many and their hash.
type prefixKey struct {
	n int
	h uint64
}

// prefixSeed seeds the prefix hashes; they live in memory only.
var prefixSeed = maphash.MakeSeed()

// prefixHashes are the hashes of items[:i] for i = 0 … len(items), each
// chained from the one before (the hash of the one before, the item's
// role and content), so that hashing can go on from any of them
// (prefixHashesFrom). (maphash rather than FNV: a long history's hashing
// took a fifth of its reading.)
func prefixHashes(items []rollout.Message) []uint64 {
	return prefixHashesFrom(nil, nil, items)
}

// prefixHashesFrom is prefixHashes(items), taking from prevHashes, the
// prefix hashes of prev, those of the items items begins with as prev
// does.
func prefixHashesFrom(prev []rollout.Message, prevHashes []uint64, items []rollout.Message) []uint64 {
	out := make([]uint64, len(items)+1)
	var h maphash.Hash
	h.SetSeed(prefixSeed)
	out[0] = h.Sum64()
	i := 0
	for i < len(items) && i < len(prev) && items[i].Role == prev[i].Role && items[i].Content == prev[i].Content {
		out[i+1] = prevHashes[i+1]
		i++
	}
	var chain [8]byte
	for ; i < len(items); i++ {
		h.Reset()
		binary.LittleEndian.PutUint64(chain[:], out[i])
		h.Write(chain[:])
		h.WriteString(items[i].Role)
		h.WriteByte(0)
		h.WriteString(items[i].Content)
		out[i+1] = h.Sum64()
	}
	return out
}

// sessions finds the session of each request. Safe for concurrent use.
type sessions struct {
	mu       sync.Mutex
	max      int
	byKey    map[string]*Session
	byID     map[string]*Session // nil value: an id two sessions relayed
	byPrefix map[prefixKey][]*Session
	byRetry  map[prefixKey]*Session
	lru      list.List // front: most recently used
	start    string
	seq      uint64
	// onEvict, when set, is told of each session forgotten.
	onEvict func(*Session)
}

func newSessions(max int) *sessions {
	return &sessions{max: max, byKey: map[string]*Session{}, byID: map[string]*Session{},
		byPrefix: map[prefixKey][]*Session{}, byRetry: map[prefixKey]*Session{},
		start: strconv.FormatInt(time.Now().UnixMilli(), 36)}
}

// explicitID is the session id a client sends, in the order the package
// doc lists them.
func explicitID(h http.Header, req *Request) (string, string) {
	for _, name := range []string{"X-Bagen-Session", "X-Claude-Code-Session-Id", "Session_id", "Session-Id", "X-Litellm-Session-Id"} {
		if v := h.Get(name); v != "" {
			return v, "header"
		}
	}
	if v := h.Get("X-Codex-Turn-Metadata"); v != "" {
		var md struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(v), &md) == nil && md.SessionID != "" {
			return md.SessionID, "header"
		}
	}
	if req.SessionID != "" {
		return req.SessionID, "metadata"
	}
	return "", ""
}

// resolve finds or starts the session of a request with the given item
// hashes: by the id the client sends; by the Responses chain; by the ids
// of a reply the request echoes as its last assistant turn; by the
// answered request it extends, each answered request being extended by at
// most one later request (so that identical parallel runs never merge);
// by the failed request it repeats; else a new session.
//
// A request that offers no tools in a session whose requests offer them
// is a side call: it changes none of the session's links. The first
// request offering tools in a session reports firstTools: the calls
// before it were side calls.
func (ss *sessions) resolve(h http.Header, req *Request, hashes []uint64) (s *Session, how string, side, firstTools bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, how = ss.find(h, req, hashes)
	if s == nil {
		s = ss.create(h, req)
		how = s.Key
	}
	side = !req.Tools && s.tools
	firstTools = req.Tools && !s.tools
	s.tools = s.tools || req.Tools
	if !side {
		ss.unexpect(s)
	}
	ss.touch(s)
	return s, how, side, firstTools
}

func (ss *sessions) find(h http.Header, req *Request, hashes []uint64) (*Session, string) {
	if id, _ := explicitID(h, req); id != "" {
		return ss.byKey[childKey(h, id)], "explicit"
	}
	if req.Previous != "" {
		if s := ss.byID[req.Previous]; s != nil {
			return s, "chain"
		}
	}
	for _, id := range req.Echoed {
		if s := ss.byID[id]; s != nil {
			return s, "reply"
		}
	}
	for n := len(req.Items) - 1; n >= 1; n-- {
		if req.Items[n].Role != "assistant" {
			continue
		}
		if list := ss.byPrefix[prefixKey{n, hashes[n]}]; len(list) > 0 {
			return list[0], "prefix"
		}
	}
	if s := ss.byRetry[prefixKey{len(req.Items), hashes[len(req.Items)]}]; s != nil {
		return s, "retry"
	}
	return nil, ""
}

// create starts a session; an explicit id always maps to the same ledger
// file (keyID), so that a restarted guard, or another replica sharing the
// ledger directory, continues it.
func (ss *sessions) create(h http.Header, req *Request) *Session {
	id, how := explicitID(h, req)
	s := &Session{Key: how}
	if id != "" {
		s.explicit = childKey(h, id)
		s.ID = keyID(s.explicit)
		ss.byKey[s.explicit] = s
		ss.adopt(s, parentKey(h, id))
	} else {
		ss.seq++
		s.ID = "s-" + ss.start + "-" + strconv.FormatUint(ss.seq, 10)
		s.Key = "new"
	}
	s.elem = ss.lru.PushFront(s)
	for ss.lru.Len() > ss.max {
		ss.evict(ss.lru.Back().Value.(*Session))
	}
	return s
}

func (ss *sessions) touch(s *Session) { ss.lru.MoveToFront(s.elem) }

// evict forgets s and every index entry pointing to it.
func (ss *sessions) evict(s *Session) {
	ss.lru.Remove(s.elem)
	if s.explicit != "" {
		delete(ss.byKey, s.explicit)
	}
	ss.dropIDs(s)
	ss.unexpect(s)
	if s.retrying {
		delete(ss.byRetry, s.retry)
	}
	if ss.onEvict != nil {
		ss.onEvict(s)
	}
}

func (ss *sessions) dropIDs(s *Session) {
	for _, id := range s.ids {
		if ss.byID[id] == s {
			delete(ss.byID, id)
		}
	}
	s.ids = nil
}

// unexpect removes s's answered request from the index: one request
// has extended it.
func (ss *sessions) unexpect(s *Session) {
	if !s.expecting {
		return
	}
	s.expecting = false
	list := ss.byPrefix[s.expect]
	for i, o := range list {
		if o == s {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(ss.byPrefix, s.expect)
	} else {
		ss.byPrefix[s.expect] = list
	}
}

// answered records that s answered a request of n items with hash h
// with a reply carrying ids.
func (ss *sessions) answered(s *Session, n int, h uint64, ids []string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.elem == nil || ss.lru.Len() == 0 {
		return
	}
	ss.dropIDs(s)
	for _, id := range ids {
		if o, seen := ss.byID[id]; seen && o != s {
			ss.byID[id] = nil // relayed twice: says nothing
			continue
		}
		ss.byID[id] = s
		s.ids = append(s.ids, id)
	}
	ss.unexpect(s)
	s.expect, s.expecting = prefixKey{n, h}, true
	ss.byPrefix[s.expect] = append(ss.byPrefix[s.expect], s)
	if s.retrying {
		delete(ss.byRetry, s.retry)
		s.retrying = false
	}
}

// failed records that s's request of n items with hash h got no answer:
// the client may send it again.
func (ss *sessions) failed(s *Session, n int, h uint64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.retrying {
		delete(ss.byRetry, s.retry)
	}
	s.retry, s.retrying = prefixKey{n, h}, true
	ss.byRetry[s.retry] = s
}

// count is the number of sessions held.
func (ss *sessions) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.lru.Len()
}
