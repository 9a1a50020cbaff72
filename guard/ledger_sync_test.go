package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLedgerSyncsAfterTheAnswer: a call's ledger line is in the file
// when its answer arrives, and the file's fsync runs after, off the
// call's path: the calls are answered while a sync is held; the appends
// made meanwhile are synced once more, together; Close waits for that.
func TestLedgerSyncsAfterTheAnswer(t *testing.T) {
	release := make(chan struct{})
	var let sync.Once
	letGo := func() { let.Do(func() { close(release) }) }
	var mu sync.Mutex
	var synced []string
	started := make(chan struct{}, 16)
	defer func(f func(string) error) { syncFile = f }(syncFile)
	syncFile = func(path string) error {
		mu.Lock()
		synced = append(synced, filepath.Base(path))
		mu.Unlock()
		started <- struct{}{}
		<-release
		return nil
	}
	dir := t.TempDir()
	g, url := startGuard(t, Config{Ledger: dir}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, chatReply)
	}))
	// On a failure too: let the syncs go, and see them end, before
	// syncFile is put back.
	defer func() { letGo(); g.ledger.syncs.wait() }()
	h := map[string]string{"X-Bagen-Session": "held"}
	body := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
	post(t, url+"/v1/chat/completions", body, h)
	<-started // the first sync runs, and is held
	for range 2 {
		post(t, url+"/v1/chat/completions", body, h)
	}
	evs := readLedger(t, dir)
	if len(evs) != 1 {
		t.Fatalf("%d session files, want 1", len(evs))
	}
	var file string
	for f, e := range evs {
		if n := len(callUsages(e)); n != 3 {
			t.Fatalf("with the first sync held: %d calls in the ledger, want 3", n)
		}
		file = f
	}
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a sync was held")
	case <-time.After(50 * time.Millisecond):
	}
	letGo()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the syncs were let go")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{file, file}; fmt.Sprint(synced) != fmt.Sprint(want) {
		t.Errorf("synced %v, want %v: the first call's append, then the two made while it ran, together", synced, want)
	}
}

// TestLedgerSyncErrorCounted: a sync that fails is counted in /metrics
// and logged, and the call it followed was answered.
func TestLedgerSyncErrorCounted(t *testing.T) {
	defer func(f func(string) error) { syncFile = f }(syncFile)
	syncFile = func(string) error { return errors.New("disk gone") }
	log := &logLines{}
	g, url := startGuard(t, Config{Ledger: t.TempDir(), Logf: log.logf}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, chatReply)
	}))
	resp, got := post(t, url+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, map[string]string{"X-Bagen-Session": "s"})
	if resp.StatusCode != http.StatusOK || string(got) != chatReply {
		t.Fatalf("answer %d %s, want 200 and the upstream's", resp.StatusCode, got)
	}
	g.ledger.syncs.wait()
	if m := metricsText(t, url); !bytes.Contains(m, []byte("\nbagen_guard_ledger_errors_total 1\n")) {
		t.Errorf("/metrics lacks bagen_guard_ledger_errors_total 1:\n%s", m)
	}
	if want := "ledger: disk gone\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
}

// TestCloseBoundsTheSyncWait: a sync that does not return holds Close
// for DrainTimeout at most, and says so.
func TestCloseBoundsTheSyncWait(t *testing.T) {
	release := make(chan struct{})
	defer func(f func(string) error) { syncFile = f }(syncFile)
	syncFile = func(string) error { <-release; return nil }
	log := &logLines{}
	cfg := Config{Ledger: t.TempDir(), Logf: log.logf}
	cfg.DrainTimeout = 50 * time.Millisecond
	g, url := startGuard(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, chatReply)
	}))
	// Let the sync go, and see it end, before syncFile is put back.
	defer func() { close(release); g.ledger.syncs.wait() }()
	post(t, url+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, map[string]string{"X-Bagen-Session": "s"})
	start := time.Now()
	g.Close()
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("Close took %v, want DrainTimeout (50ms)", d)
	}
	if want := "ledger: files appended to are not synced after 50ms; closing without them\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
}

// logLines keeps what a guard logs, a line each; safe for concurrent use.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, format+"\n", args...)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
