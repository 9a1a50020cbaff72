package guard

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestForwardsBeforeReading: a request whose session a header names
// reaches the upstream before the agent has sent all of it, and is
// recorded as a request read first is.
func TestForwardsBeforeReading(t *testing.T) {
	first := make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := make([]byte, 16)
		io.ReadFull(r.Body, head)
		close(first)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatReply)
	})
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir}, up)
	body := chatBody([]json.RawMessage{json.RawMessage(`{"role":"user","content":"` + strings.Repeat("fix it ", 4000) + `"}`)})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", pr)
	req.ContentLength = int64(len(body))
	req.Header.Set("X-Bagen-Session", "along")
	sent := make(chan string, 1)
	go func() {
		pw.Write([]byte(body[:len(body)/2]))
		select {
		case <-first:
			sent <- ""
		case <-time.After(5 * time.Second):
			sent <- "the upstream saw nothing of a request until its end"
		}
		pw.Write([]byte(body[len(body)/2:]))
		pw.Close()
	}()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if msg := <-sent; msg != "" {
		t.Error(msg)
	}
	if resp.StatusCode != 200 || string(got) != chatReply || resp.Header.Get("X-Bagen-Guard") != "pass" {
		t.Errorf("got %d %s %q, want 200 pass %s", resp.StatusCode, resp.Header.Get("X-Bagen-Guard"), got, chatReply)
	}
	evs := readLedger(t, dir)[keyID("along")+".jsonl"]
	if len(evs) != 2 || evs[1]["turn"] != 1.0 || evs[1]["usage"].(map[string]any)["input"] != 120.0 {
		t.Errorf("ledger %v, want the session and its first turn with 120 input tokens", evs)
	}
}

// TestAlongsideLedgerIsReadFirstLedger: the same traffic through a guard
// that forwards at once and one that reads each request first (Wait
// turns the first off) leaves the same ledger, latencies aside; and a
// session stopped on its budget is refused at once either way.
func TestAlongsideLedgerIsReadFirstLedger(t *testing.T) {
	latency := regexp.MustCompile(`"latency_ms":[0-9.e+-]+`)
	var ledgers [2]string
	for i, wait := range []bool{false, true} {
		var log upstreamLog
		dir := t.TempDir()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		_, url := startGuard(t, Config{Ledger: dir, Budget: 250, Policy: Stop, StopAs: Message, Wait: wait,
			Now: func() time.Time { return now }}, toolTurnUpstream(&log))
		// Long enough to be forwarded before it is read (alongsideMin).
		history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it` + strings.Repeat(" ", alongsideMin) + `"}`)}
		for turn := 1; turn <= 3; turn++ {
			resp, got := post(t, url+"/v1/chat/completions", chatBody(history), map[string]string{"X-Bagen-Session": "same"})
			if turn == 3 {
				if resp.Header.Get("X-Bagen-Guard") != "stop" {
					t.Errorf("wait=%v: turn 3: %s %s, want refused", wait, resp.Header.Get("X-Bagen-Guard"), got)
				}
				break
			}
			history = agentNext(t, history, got)
		}
		if log.n() != 2 {
			t.Errorf("wait=%v: upstream saw %d calls, want 2", wait, log.n())
		}
		b, err := os.ReadFile(filepath.Join(dir, keyID("same")+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		ledgers[i] = latency.ReplaceAllString(string(b), `"latency_ms":0`)
	}
	if ledgers[0] != ledgers[1] || !strings.Contains(ledgers[0], `"event":"stop"`) {
		t.Errorf("forwarded at once:\n%s\nread first:\n%s\nwant the same, with the stop", ledgers[0], ledgers[1])
	}
}

// TestLateCopyLeavesNoTrace: an answer that stops waiting for its
// request's copy leaves the call unobserved, and a reading of the copy
// that ends after that records nothing: no session, no ledger file; a
// reading that ends first is waited for past copyWait.
func TestLateCopyLeavesNoTrace(t *testing.T) {
	defer func(d time.Duration) { copyWait = d }(copyWait)
	copyWait = 10 * time.Millisecond
	dir := t.TempDir()
	g, _ := startGuard(t, Config{Ledger: dir}, http.NotFoundHandler())
	body := []byte(chatBody([]json.RawMessage{json.RawMessage(`{"role":"user","content":"` + strings.Repeat("fix it ", 4000) + `"}`)}))
	r, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.Header.Set("X-Bagen-Session", "late")
	late := &call{codec: Chat{}, ready: make(chan struct{})}
	if late.wait() {
		t.Fatal("a copy never read: the call observed")
	}
	g.readCopy(late, r, slices.Clone(body), nil)
	if n := g.sessions.count(); n != 0 || late.observed {
		t.Errorf("after a late reading: %d sessions, observed %v; want none, false", n, late.observed)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(files) != 0 {
		t.Errorf("ledger files %v, want none", files)
	}
	// A reading that took the call before the wait ran out is waited for.
	first := &call{codec: Chat{}, ready: make(chan struct{})}
	first.claim.Store(claimRead)
	go func() {
		time.Sleep(3 * copyWait)
		first.observed = true
		close(first.ready)
	}()
	if !first.wait() {
		t.Error("a reading that took the call first: the call unobserved")
	}
}
