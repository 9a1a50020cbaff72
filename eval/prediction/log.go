package prediction

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Log is a predictions file opened for appending: the ledger of a run.
// Unlike the rest of bagen-data's outputs it is written in place, not
// atomically: each line is handed to the kernel with one write as its
// probe finishes, so a killed process (SIGKILL included) loses nothing it
// was told, and a rerun asks only the probes without an answer line (never
// asked, or failed). Lines are synced to disk in batches (SyncEvery lines
// or SyncInterval, whichever comes first, and on Close): a power cut can
// lose the last unsynced batch, which a rerun asks again. A torn last line
// is cut off when the log is reopened. Log is safe for concurrent use.
type Log struct {
	mu       sync.Mutex
	f        *os.File
	path     string
	model    string
	have     map[string]map[string]bool // custom_id → request keys answered
	unsynced int
	synced   time.Time
}

// Batching of Log's syncs.
const (
	SyncEvery    = 64
	SyncInterval = time.Second
)

// OpenLog opens the log at path, creating it, for answers from model. It
// returns the predictions already in it. A line from another model is an
// error wrapping ErrModel: resuming must not mix models (lines without a
// model, or model "", match any).
func OpenLog(path, model string) (*Log, []Prediction, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	preds, err := reopen(f, path)
	if err == nil {
		err = checkModel(preds, path, model)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	l := &Log{f: f, path: path, model: model, have: make(map[string]map[string]bool, len(preds)), synced: time.Now()}
	for _, p := range preds {
		l.add(p)
	}
	return l, preds, nil
}

// reopen reads the log and leaves f positioned at its end, after cutting
// a torn last line.
func reopen(f *os.File, path string) ([]Prediction, error) {
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n := len(data); n > 0 && data[n-1] != '\n' {
		cut := bytes.LastIndexByte(data, '\n') + 1
		if _, perr := parseLine(data[cut:]); perr == nil {
			// A complete line without its newline: finish it.
			if _, err := f.Write([]byte{'\n'}); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			data = append(data, '\n')
		} else {
			if err := f.Truncate(int64(cut)); err != nil {
				return nil, fmt.Errorf("%s: cut torn last line: %w", path, err)
			}
			data = data[:cut]
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Read(bytes.NewReader(data), path)
}

func checkModel(preds []Prediction, path, model string) error {
	for i, p := range preds {
		if model != "" && p.Model != "" && p.Model != model {
			return fmt.Errorf("%s: prediction %d (%s) is from model %q, not %q: %w",
				path, i+1, p.CustomID, p.Model, model, ErrModel)
		}
	}
	return nil
}

// add records an answer line (a failure line is not one).
func (l *Log) add(p Prediction) {
	if p.Failed() {
		return
	}
	if l.have[p.CustomID] == nil {
		l.have[p.CustomID] = map[string]bool{}
	}
	l.have[p.CustomID][p.Key] = true
}

// Has reports whether the log holds an answer for id, to any request (a
// failure line is not one).
func (l *Log) Has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.have[id]) > 0
}

// HasKey reports whether the log holds an answer for id to the request
// key (RequestKey).
func (l *Log) HasKey(id, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.have[id][key]
}

// Append writes p as one line, an answer or a failure, and syncs the log
// when a batch is due. The log's model is recorded when p names none.
func (l *Log) Append(p Prediction) error {
	if p.Model == "" {
		p.Model = l.model
	}
	line := Marshal(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("%s: %w", l.path, os.ErrClosed)
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.add(p)
	l.unsynced++
	if l.unsynced >= SyncEvery || time.Since(l.synced) >= SyncInterval {
		return l.sync()
	}
	return nil
}

func (l *Log) sync() error {
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.unsynced, l.synced = 0, time.Now()
	return nil
}

// Close syncs and closes the log file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	serr := l.sync()
	err := l.f.Close()
	l.f = nil
	if serr != nil {
		return serr
	}
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	return nil
}

// Answers counts the ids the log holds an answer for.
func (l *Log) Answers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.have)
}
