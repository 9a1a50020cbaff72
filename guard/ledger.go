package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"bagen-data/rollout"
)

// ledger appends events to one file per session in a directory: JSONL,
// each line written before the call that wrote it returns, so that a
// killed guard loses no completed call (what was written is the
// kernel's) and a restarted one appends to the same files; each file is
// synced to the disk right after, off the calls' path (syncer). The
// files hold whole conversations: they are created 0600 in a 0700
// directory. No header is ever written to them. Safe for concurrent use.
//
// Several guards may share the directory (replicas behind a load
// balancer): each append is one write to a file opened O_APPEND, under an
// exclusive flock(2) where the system has it, and each guard knows how
// many bytes of a file it has seen, so that it can tell when another has
// written to it (changed) and read the session back (read).
type ledger struct {
	dir   string
	mu    sync.Mutex
	files map[string]*ledgerFile
	syncs syncer
}

// ledgerFile is what one guard knows of a session's file.
type ledgerFile struct {
	mu sync.Mutex
	// size is the file's length after this guard's last read or append;
	// foreign: another writer appended before this guard's last append.
	size    int64
	foreign bool
}

// openLedger makes dir (0700) if needed and checks it is writable.
func openLedger(dir string) (*ledger, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return &ledger{dir: dir, files: map[string]*ledgerFile{}}, nil
}

// path is the session's file.
func (l *ledger) path(session string) string {
	return filepath.Join(l.dir, session+".jsonl")
}

func (l *ledger) file(session string) *ledgerFile {
	l.mu.Lock()
	defer l.mu.Unlock()
	lf := l.files[session]
	if lf == nil {
		lf = &ledgerFile{}
		l.files[session] = lf
	}
	return lf
}

// append writes events as lines of the session's file, and has it
// synced.
func (l *ledger) append(session string, events ...any) error {
	var buf []byte
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		buf = append(append(buf, line...), '\n')
	}
	lf := l.file(session)
	lf.mu.Lock()
	defer lf.mu.Unlock()
	path := l.path(session)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := lockFile(f, true); err != nil {
		f.Close()
		return fmt.Errorf("ledger: %s: %w", path, err)
	}
	size, err := l.writeLocked(f, lf, buf)
	if err != nil {
		f.Close()
		return fmt.Errorf("ledger: %s: %w", path, err)
	}
	if err := f.Close(); err != nil { // releases the lock
		return fmt.Errorf("ledger: %s: %w", path, err)
	}
	lf.size = size
	l.syncs.mark(path)
	return nil
}

// writeLocked appends buf to f, locked; it returns the file's new
// length. A file another writer changed since this guard last saw it is
// checked first for a line cut by a crash, which is dropped: its call
// never completed, and the next line must start a line.
func (l *ledger) writeLocked(f *os.File, lf *ledgerFile, buf []byte) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size != lf.size {
		lf.foreign = true
		if size, err = dropCutLine(f, size); err != nil {
			return 0, err
		}
	}
	if _, err := f.Write(buf); err != nil {
		return 0, err
	}
	return size + int64(len(buf)), nil
}

// syncer syncs the files the ledger appends to, in the background: an
// append's write is in the kernel before the call that made it is
// answered, which a killed guard cannot lose, and the fsync, which only a
// machine that loses power needs, follows at once off the call's path (it
// costs about 0.2 ms, more than the rest of a guarded call). A file
// appended to several times before its sync is synced once. Errors go to
// failed.
type syncer struct {
	mu     sync.Mutex
	dirty  map[string]bool
	done   chan struct{} // open while a run syncs
	failed func(error)
}

// mark has path synced.
func (s *syncer) mark(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirty == nil {
		s.dirty = map[string]bool{}
	}
	s.dirty[path] = true
	if s.done == nil {
		s.done = make(chan struct{})
		go s.run(s.done)
	}
}

// run syncs the marked files until none is left, then closes done.
func (s *syncer) run(done chan struct{}) {
	s.mu.Lock()
	for len(s.dirty) > 0 {
		paths := slices.Sorted(maps.Keys(s.dirty))
		clear(s.dirty)
		s.mu.Unlock()
		for _, p := range paths {
			if err := syncFile(p); err != nil && s.failed != nil {
				s.failed(fmt.Errorf("ledger: %w", err))
			}
		}
		s.mu.Lock()
	}
	s.done = nil
	close(done)
	s.mu.Unlock()
}

// wait returns once every file marked before it is synced.
func (s *syncer) wait() {
	s.waitFor(-1)
}

// waitFor is wait for at most d (no bound when negative); false when d
// ran out first.
func (s *syncer) waitFor(d time.Duration) bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return true
	}
	if d < 0 {
		<-done
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// syncFile syncs the file at path to the disk.
var syncFile = func(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dropCutLine truncates f (size bytes) after its last newline.
func dropCutLine(f *os.File, size int64) (int64, error) {
	const chunk = 64 << 10
	end := size
	for end > 0 {
		start := max(0, end-chunk)
		b := make([]byte, end-start)
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	if end == size {
		return size, nil
	}
	return end, f.Truncate(end)
}

// changed reports whether the session's file is not as this guard last
// saw it: another guard wrote to it (or this guard never read it and it
// is not empty).
func (l *ledger) changed(session string) bool {
	lf := l.file(session)
	lf.mu.Lock()
	defer lf.mu.Unlock()
	st, err := os.Stat(l.path(session))
	if err != nil {
		return lf.size != 0
	}
	return lf.foreign || st.Size() != lf.size
}

// read is the session's file as it is now (nil when there is none), read
// under a shared lock; this guard has seen it all after.
func (l *ledger) read(session string) ([]byte, error) {
	lf := l.file(session)
	lf.mu.Lock()
	defer lf.mu.Unlock()
	path := l.path(session)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		lf.size, lf.foreign = 0, false
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	if err := lockFile(f, false); err != nil {
		return nil, fmt.Errorf("ledger: %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("ledger: %s: %w", path, err)
	}
	lf.size, lf.foreign = int64(len(data)), false
	return data, nil
}

// forget drops what the guard knows of an evicted session's file.
func (l *ledger) forget(session string) {
	l.mu.Lock()
	delete(l.files, session)
	l.mu.Unlock()
}

// ledgerState is a session as its ledger file tells it: what a guard
// that has not seen the session needs to continue it.
type ledgerState struct {
	// written: the file has events (a session event and a turn).
	written bool
	// calls is the highest call number, turns the last turn, usage the
	// usage of turns 1 … turns.
	calls, turns int
	usage        []*rollout.GuardUsage
	tools        bool
	// estimated is the last turn with an estimate event; estimatorTokens
	// what the estimates cost (input + output).
	estimated       int
	estimatorTokens int64
	// stop is the first stop decided; stopActed: a call answered by the
	// guard followed it.
	stop      *rollout.GuardStop
	stopActed bool
	// warned counts the threshold warnings given; usd what the priced
	// calls cost.
	warned   int
	usd      float64
	forecast *rollout.GuardForecast // the latest
	// note is the warnings' notes recorded after the last call: due on
	// the session's next request.
	note string
}

// readLedgerState folds a session file's events into its state, as
// rollout's guard-ledger reader reads them: a last line cut by a crash
// is skipped (its call never completed); any other bad line is an error
// naming it.
func readLedgerState(name string, data []byte) (ledgerState, error) {
	var st ledgerState
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := st.add(line); err != nil {
			if i == len(lines)-1 {
				break
			}
			return st, fmt.Errorf("ledger: %s:%d: %w", name, i+1, err)
		}
	}
	return st, nil
}

// add folds one event into st.
func (st *ledgerState) add(line []byte) error {
	var ev struct {
		Event string `json:"event"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return err
	}
	st.written = true
	switch ev.Event {
	case "call":
		var c rollout.GuardCall
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		st.addCall(c)
	case "estimate":
		var e rollout.GuardEstimate
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		st.estimated = max(st.estimated, e.AfterTurn)
		st.estimatorTokens += e.EstimatorInput + e.EstimatorOutput
	case "stop":
		var s rollout.GuardStop
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		if st.stop == nil {
			st.stop = &s
		}
	case "warn":
		var w rollout.GuardWarn
		if err := json.Unmarshal(line, &w); err != nil {
			return err
		}
		if w.Reason == "threshold" {
			st.warned++
		}
		if w.Note != "" {
			st.note = joinNotes(st.note, w.Note)
		}
	case "forecast":
		var f rollout.GuardForecast
		if err := json.Unmarshal(line, &f); err != nil {
			return err
		}
		st.forecast = &f
	}
	return nil
}

// addCall folds a call event: a turn numbered 1 starts the run's usage
// again (the first, or the first that offered tools after side calls).
func (st *ledgerState) addCall(c rollout.GuardCall) {
	st.calls = max(st.calls, c.Call)
	st.tools = st.tools || c.Tools
	st.usd += c.USD
	st.note = ""
	if c.Answered != "" && st.stop != nil {
		st.stopActed = true
	}
	if c.Turn == 0 {
		return
	}
	if c.Turn == 1 {
		st.usage = st.usage[:0]
	}
	st.usage = append(st.usage, c.Usage)
	st.turns = c.Turn
}

// spent is the tokens spent after the last turn as far as the file
// tells: the stop's count when the stop was decided then, else the
// largest recorded request and reply, the floor spentOf keeps when the
// usage cannot be accounted. A guard that continues the session counts
// the next turn from the request's history and the recovered usage, as
// the first guard would.
func (st *ledgerState) spent() int64 {
	if st.stop != nil && st.stop.AfterTurn == st.turns {
		return st.stop.Spent
	}
	var n int64
	for _, u := range st.usage {
		if u != nil && u.Input >= 0 && u.Output >= 0 {
			n = max(n, u.Input+u.Output)
		}
	}
	return n
}

// record shows events on the live page and appends them to the
// session's ledger file; a failure is counted and logged, never passed to
// the agent.
//
// A session's file starts with its first answered turn: the events
// before it (the session event, failed and side calls) wait in memory,
// at most maxHeld of them, so that every file in a ledger reads as a
// trajectory.
func (g *Guard) record(s *Session, events ...any) {
	s.mu.Lock()
	s.page.see(events)
	s.mu.Unlock()
	if g.ledger == nil {
		return
	}
	s.mu.Lock()
	if !s.written {
		turn := false
		for _, e := range events {
			if c, ok := e.(rollout.GuardCall); ok && c.Turn > 0 {
				turn = true
			}
		}
		if !turn {
			s.held = append(s.held, events...)
			if n := len(s.held); n > maxHeld {
				s.held = append(s.held[:1:1], s.held[n-maxHeld+1:]...) // keep the session event
			}
			s.mu.Unlock()
			return
		}
		events = append(s.held, events...)
		s.held, s.written = nil, true
	}
	s.mu.Unlock()
	if err := g.ledger.append(s.ID, events...); err != nil {
		g.metrics.ledgerErrors.Inc()
		g.logf("%v", err)
	}
}

// maxHeld bounds the events held for a session without a turn yet.
const maxHeld = 16

func (g *Guard) stamp() string { return g.cfg.Now().UTC().Format(time.RFC3339Nano) }
