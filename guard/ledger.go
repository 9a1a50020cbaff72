package guard

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// ledger appends events to one file per session in a directory: JSONL,
// each line synced before the call that wrote it returns, so that a
// killed guard loses no completed call and a restarted one appends to
// the same files. The files hold whole conversations: they are created
// 0600 in a 0700 directory. No header is ever written to them. Safe for
// concurrent use.
type ledger struct {
	dir   string
	mu    sync.Mutex
	locks map[string]*sync.Mutex
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
	return &ledger{dir: dir, locks: map[string]*sync.Mutex{}}, nil
}

// path is the session's file.
func (l *ledger) path(session string) string {
	return filepath.Join(l.dir, session+".jsonl")
}

func (l *ledger) lock(session string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.locks[session]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[session] = m
	}
	return m
}

// append writes events as lines of the session's file and syncs it.
func (l *ledger) append(session string, events ...any) error {
	var buf []byte
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		buf = append(append(buf, line...), '\n')
	}
	m := l.lock(session)
	m.Lock()
	defer m.Unlock()
	f, err := os.OpenFile(l.path(session), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("ledger: %s: %w", l.path(session), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("ledger: %s: %w", l.path(session), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("ledger: %s: %w", l.path(session), err)
	}
	return nil
}

// forget drops the lock of an evicted session.
func (l *ledger) forget(session string) {
	l.mu.Lock()
	delete(l.locks, session)
	l.mu.Unlock()
}
