package rollout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// DefaultMaxMessageBytes is the default limit on one message's text: far
// above real SWE-bench observations (mini-swe-agent truncates command
// output to 10,000 characters; whole-file dumps stay under 1 MiB).
const DefaultMaxMessageBytes = 8 << 20

// maxRecordFactor bounds a whole record (a JSONL line, a trajectory file)
// at this many times the message limit, so that no input is read into
// memory without bound.
const maxRecordFactor = 32

// Options say how inputs are read. The zero value detects formats by
// content, applies DefaultMaxMessageBytes, rejects invalid UTF-8 and joins
// no results. Options are read-only once reading starts and are then safe
// for concurrent use.
type Options struct {
	// Format forces a format; nil detects it from each file's content.
	Format *Format
	// Results are joined on each trajectory's instance id (--results); nil
	// for none.
	Results *Results
	// MaxMessageBytes limits one message's text; 0 means
	// DefaultMaxMessageBytes. A record may be at most 32 times as long.
	MaxMessageBytes int64
	// ReplaceInvalidUTF8 replaces invalid UTF-8 with U+FFFD and counts it
	// in Trajectory.Replaced, instead of failing.
	ReplaceInvalidUTF8 bool
	// Skipped, when not nil, records the files of input directories that
	// were skipped because they hold no trajectory.
	Skipped *Skips
}

// Skips is the set of files skipped in input directories because they hold
// no trajectory (results, configs, a previous build's manifest), each with
// what it is. It is safe for concurrent use.
type Skips struct {
	mu    sync.Mutex
	files map[string]string
}

func (s *Skips) add(name, what string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]string{}
	}
	s.files[name] = what
}

// Files are the skipped files' names, sorted.
func (s *Skips) Files() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (o *Options) skips() *Skips {
	if o == nil {
		return nil
	}
	return o.Skipped
}

func (o *Options) maxMessage() int64 {
	if o == nil || o.MaxMessageBytes <= 0 {
		return DefaultMaxMessageBytes
	}
	return o.MaxMessageBytes
}

func (o *Options) maxRecord() int64 { return maxRecordFactor * o.maxMessage() }

// Source is one input file: a name for messages and a way to open it.
type Source struct {
	Name string // shown in errors and the manifest
	Open func() (io.ReadCloser, error)
	Size int64 // bytes as stored, for progress; 0 when unknown
	// Options say how to read it; nil is the zero Options.
	Options *Options
	// Run prefixes ids (Run + "/" + id) when one directory holds the same
	// instance more than once (runs of several models or seeds).
	Run string
	// InDir is set for files found in a directory: side files (results,
	// predictions) there are skipped instead of rejected.
	InDir bool
}

// FileSource is a Source for a file on disk.
func FileSource(path string) Source {
	src := Source{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
	if st, err := os.Stat(path); err == nil {
		src.Size = st.Size()
	}
	return src
}

// FSSource is a Source for a file inside fsys (the embedded fixtures).
func FSSource(fsys fs.FS, name string) Source {
	src := Source{Name: name, Open: func() (io.ReadCloser, error) { return fsys.Open(name) }}
	if st, err := fs.Stat(fsys, name); err == nil {
		src.Size = st.Size()
	}
	return src
}

// Expand turns files and directories into Sources with the zero Options.
func Expand(paths []string) ([]Source, error) { return (*Options)(nil).Expand(paths) }

// Expand turns files and directories into Sources read with o: a directory
// contributes every *.jsonl and *.json file below it (each optionally .gz
// or .zst), in lexical order. Where two files in one directory have the
// same base name (one instance run twice), each gets its directory as Run.
func (o *Options) Expand(paths []string) ([]Source, error) {
	var out []Source
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			src := FileSource(p)
			src.Options = o
			out = append(out, src)
			continue
		}
		srcs, err := o.expandDir(p)
		if err != nil {
			return nil, err
		}
		out = append(out, srcs...)
	}
	return out, nil
}

func (o *Options) expandDir(dir string) ([]Source, error) {
	var files []string
	for _, root := range sessionRoots(dir) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isLogName(path) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	files = harborTrajectories(files)
	files = withoutEvalCopies(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .jsonl, .json, .traj (optionally .gz or .zst) or .eval files in directory", dir)
	}
	sort.Strings(files)
	seen := map[string]int{}
	for _, f := range files {
		seen[BaseID(f)]++
	}
	out := make([]Source, len(files))
	for i, f := range files {
		out[i] = FileSource(f)
		out[i].Options, out[i].InDir = o, true
		if seen[BaseID(f)] > 1 {
			out[i].Run = runOf(dir, f)
		}
	}
	return out, nil
}

// harborTrajectories keeps, of a Harbor trial directory (one with
// agent/trajectory.json), only that trajectory: the trial's result.json is
// read beside it, and the agent's own logs there (session JSONL) are what
// the trajectory was converted from.
func harborTrajectories(files []string) []string {
	trials := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "trajectory.json" && filepath.Base(filepath.Dir(f)) == "agent" {
			trials[filepath.Dir(filepath.Dir(f))] = true
		}
	}
	if len(trials) == 0 {
		return files
	}
	kept := files[:0]
	for _, f := range files {
		isTrajectory := filepath.Base(f) == "trajectory.json" && trials[filepath.Dir(filepath.Dir(f))]
		if isTrajectory || !underAny(f, trials) {
			kept = append(kept, f)
		}
	}
	return kept
}

// withoutEvalCopies drops OpenHands' X.swebench_eval.jsonl when X.jsonl is
// there too: it repeats X's instances with their verdicts, which are read
// beside X.
func withoutEvalCopies(files []string) []string {
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	kept := files[:0]
	for _, f := range files {
		base, ok := strings.CutSuffix(f, ".swebench_eval.jsonl")
		if !ok || !have[base+".jsonl"] {
			kept = append(kept, f)
		}
	}
	return kept
}

// underAny reports whether path is inside one of dirs.
func underAny(path string, dirs map[string]bool) bool {
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if dirs[d] {
			return true
		}
		if next := filepath.Dir(d); next == d {
			return false
		}
	}
}

// runOf names the run a file belongs to: its directory relative to the
// input directory, without a last element that is the instance's own
// directory (mini-swe-agent writes <run>/<instance>/<instance>.traj.json).
func runOf(dir, file string) string {
	rel, err := filepath.Rel(dir, filepath.Dir(file))
	if err != nil || rel == "." {
		return ""
	}
	if filepath.Base(rel) == BaseID(file) {
		rel = filepath.Dir(rel)
	}
	if rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

func isLogName(path string) bool {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".zst")
	return strings.HasSuffix(base, ".jsonl") || strings.HasSuffix(base, ".json") || strings.HasSuffix(path, ".eval") || strings.HasSuffix(base, ".traj")
}

// BaseID is the file's base name without compression and format
// extensions, used by --prefix-ids.
func BaseID(name string) string {
	b := filepath.Base(name)
	for _, ext := range []string{".gz", ".zst", ".jsonl", ".json", ".traj", ".eval"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// Record is one undecoded trajectory record and where it came from.
type Record struct {
	Pos  Position
	Data []byte
	// Format is the record's format; nil is Rollout.
	Format *Format
	// Options and Run are the Source's.
	Options *Options
	Run     string
	// beside are outcomes found beside the source (OpenHands'
	// swebench_eval.jsonl); nil for none.
	beside *Results
	// producer is the version of the program that wrote the log, where the
	// format's meaning depends on it (Inspect AI).
	producer string
}

// FormatName is the name of the record's format.
func (rec Record) FormatName() string {
	if rec.Format == nil {
		return Rollout.Name
	}
	return rec.Format.Name
}

// Scan reads src, decompressing gzip or zstd (detected from the content),
// detects its format and calls fn with each record in order. Blank JSONL
// lines are skipped.
func Scan(ctx context.Context, src Source, fn func(Record) error) error {
	rc, err := src.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	return ScanFrom(ctx, src, rc, fn)
}

// ScanReader is Scan over an open reader with the zero Options; name is
// used in errors.
func ScanReader(ctx context.Context, name string, raw io.Reader, fn func(Record) error) error {
	return ScanFrom(ctx, Source{Name: name}, raw, fn)
}

// ScanFrom is Scan over raw, an open reader of src's bytes.
func ScanFrom(ctx context.Context, src Source, raw io.Reader, fn func(Record) error) error {
	name := src.Name
	br := bufio.NewReaderSize(raw, bufferSize(src.Size))
	if magic, _ := br.Peek(4); bytes.Equal(magic, []byte("PK\x03\x04")) {
		s := scanner{ctx: ctx, src: src, fn: fn, limit: src.Options.maxRecord(), format: Inspect}
		data, err := io.ReadAll(io.LimitReader(br, s.limit+1))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if int64(len(data)) > s.limit {
			return &ParseError{File: name, Index: -1, Err: fmt.Errorf("%w: zip longer than %d bytes (32 × the message limit)", ErrTooLarge, s.limit)}
		}
		return s.inspectZip(data)
	}
	r, closeDec, err := decompress(br)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer closeDec()
	if bom, _ := r.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		r.Discard(3)
	}
	first, err := firstByte(r)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty input", name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s := scanner{ctx: ctx, src: src, r: r, fn: fn, limit: src.Options.maxRecord()}
	if f := src.Options.forced(); f != nil && f.layout == array && first != '[' {
		return s.errorf(1, "format %s: want a JSON array, got %q", f.Name, first)
	}
	switch first {
	case '[':
		return s.array()
	case '{':
		return s.objects()
	}
	if magic, _ := r.Peek(4); string(magic) == "PAR1" {
		return s.errorf(1, "this is a parquet file, not a log: give build's outputs to validate, eval or reward; build reads agent logs (JSON lines, JSON documents or arrays)")
	}
	return s.errorf(1, "want a JSON object per line, a JSON document or a JSON array, got %q", first)
}

func (o *Options) forced() *Format {
	if o == nil {
		return nil
	}
	return o.Format
}

// bufferSize is the read buffer for a file of size bytes (0 when
// unknown): 1 MiB, or less for a smaller file, so that a directory of many
// small session logs does not allocate and clear 1 MiB for each.
func bufferSize(size int64) int {
	if size <= 0 || size >= 1<<20 {
		return 1 << 20
	}
	return max(int(size)+1, 4096)
}

// scanner reads one source's records.
type scanner struct {
	ctx    context.Context
	src    Source
	r      *bufio.Reader
	fn     func(Record) error
	limit  int64
	format *Format
	beside *Results
}

func (s *scanner) errorf(line int, format string, args ...any) error {
	return &ParseError{File: s.src.Name, Line: line, Index: -1, Err: fmt.Errorf(format, args...)}
}

func (s *scanner) emit(pos Position, data []byte) error {
	return s.deliver(s.record(pos, data))
}

// record is a Record of s's source in s's format.
func (s *scanner) record(pos Position, data []byte) Record {
	return Record{Pos: pos, Data: data, Format: s.format, Options: s.src.Options, Run: s.src.Run, beside: s.beside}
}

// deliver hands rec on, after the checks of its format: side files are
// skipped in directories and rejected when named.
func (s *scanner) deliver(rec Record) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.format.Side {
		if s.src.InDir {
			s.src.Options.skips().add(s.src.Name, s.format.Doc)
			return nil
		}
		return &ParseError{File: rec.Pos.File, Line: rec.Pos.Line, Index: rec.Pos.Index, Err: fmt.Errorf("%w: %s", ErrNotTrajectory, s.format.Doc)}
	}
	if s.format == OpenHandsOutput && s.beside == nil {
		var err error
		if s.beside, err = loadSWEBenchEval(strings.TrimSuffix(s.src.Name, ".jsonl") + ".swebench_eval.jsonl"); err != nil {
			return err
		}
		rec.beside = s.beside
	}
	return s.fn(rec)
}

// objects reads a file that starts with '{': JSONL when its first line is
// a whole JSON value, else one JSON document, or several (pretty-printed
// trajectories, one after another). In a directory, objects that no format
// recognises and that have neither custom_id nor messages are no
// trajectory: the file is skipped.
func (s *scanner) objects() error {
	first, err := s.line(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if s.format = s.src.Options.forced(); json.Valid(first) {
		if s.format == nil {
			s.format = detectObject(first)
			if s.src.InDir && s.format == Rollout && !rolloutKeys(first) {
				s.src.Options.skips().add(s.src.Name, "JSON without custom_id or messages")
				return nil
			}
		}
		if s.format.layout == session {
			return s.session(first)
		}
		return s.lines(first, errors.Is(err, io.EOF))
	}
	rest, rerr := s.readAll(int64(len(first)))
	if rerr != nil {
		return rerr
	}
	doc := append(first, rest...)
	if s.format == nil {
		s.format = detectObject(doc)
	}
	if s.format == Inspect {
		return s.inspectJSON(doc)
	}
	if s.format.layout == lines {
		return s.documents(first, doc)
	}
	return s.emit(Position{File: s.src.Name, Index: -1}, doc)
}

// documents emits each JSON value of doc, one or more objects over several
// lines, at the line it starts on. When doc is not such a sequence, the
// decoder names what is wrong with the first line.
func (s *scanner) documents(first, doc []byte) error {
	type value struct {
		line int
		raw  json.RawMessage
	}
	var values []value
	dec := json.NewDecoder(bytes.NewReader(doc))
	for {
		start := int(dec.InputOffset())
		for start < len(doc) && strings.IndexByte(" \t\r\n", doc[start]) >= 0 {
			start++
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		line := 1 + bytes.Count(doc[:start], []byte("\n"))
		if err != nil || len(raw) == 0 || raw[0] != '{' {
			if len(values) == 0 {
				return s.emit(Position{File: s.src.Name, Line: 1, Index: -1}, first)
			}
			if err == nil {
				err = errors.New("want a JSON object")
			}
			return &ParseError{File: s.src.Name, Line: line, Index: -1, Err: JSONCause(err)}
		}
		values = append(values, value{line, raw})
	}
	if s.src.InDir && s.src.Options.forced() == nil && !rolloutKeys(values[0].raw) {
		s.src.Options.skips().add(s.src.Name, "JSON without custom_id or messages")
		return nil
	}
	for _, v := range values {
		if err := s.emit(Position{File: s.src.Name, Line: v.line, Index: -1}, v.raw); err != nil {
			return err
		}
	}
	return nil
}

// rolloutKeys reports whether a JSON object has custom_id or messages, the
// keys of a rollout record.
func rolloutKeys(data []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil {
		return true // not an object: the decoder says what is wrong
	}
	return has(keys, "custom_id") || has(keys, "messages")
}

func (s *scanner) lines(first []byte, eof bool) error {
	data := first
	for line := 1; ; line++ {
		if line > 1 {
			var err error
			data, err = s.line(line)
			eof = errors.Is(err, io.EOF)
			if err != nil && !eof {
				return err
			}
		}
		if len(bytes.TrimSpace(data)) > 0 {
			var err error
			if s.format == Inspect {
				err = s.inspectJSON(data)
			} else {
				err = s.emit(Position{File: s.src.Name, Line: line, Index: -1}, data)
			}
			if err != nil {
				return err
			}
		}
		if eof {
			return nil
		}
	}
}

// session reads the rest of a session log and emits the whole file as one
// record; a session without any LLM call is skipped inside a directory.
func (s *scanner) session(first []byte) error {
	data := make([]byte, len(first), max(s.src.Size+1, int64(len(first)))) // a size too small only costs a copy
	copy(data, first)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := s.r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > s.limit {
			return &ParseError{File: s.src.Name, Index: -1, Err: fmt.Errorf("%w: session log longer than %d bytes (32 × the message limit)", ErrTooLarge, s.limit)}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.src.Name, err)
		}
	}
	if s.src.InDir && s.format.calls != nil && !s.format.calls(data) {
		return nil
	}
	return s.emit(Position{File: s.src.Name, Index: -1}, data)
}

// line reads one line of at most s.limit bytes.
func (s *scanner) line(n int) ([]byte, error) {
	var buf []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		buf = append(buf, frag...)
		if int64(len(buf)) > s.limit {
			return nil, s.errorf(n, "%w: line longer than %d bytes (32 × the message limit)", ErrTooLarge, s.limit)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, s.errorf(n, "%w", err)
		}
		return buf, err
	}
}

// readAll reads the rest of a document that has n bytes already.
func (s *scanner) readAll(n int64) ([]byte, error) {
	rest, err := io.ReadAll(io.LimitReader(s.r, s.limit-n+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.src.Name, err)
	}
	if n+int64(len(rest)) > s.limit {
		return nil, &ParseError{File: s.src.Name, Index: -1, Err: fmt.Errorf("%w: document longer than %d bytes (32 × the message limit)", ErrTooLarge, s.limit)}
	}
	return rest, nil
}

func (s *scanner) array() error {
	name := s.src.Name
	if s.format = s.src.Options.forced(); s.format == nil {
		s.format = s.detectArray()
	}
	if s.format.layout == document {
		rest, err := s.readAll(0)
		if err != nil {
			return err
		}
		return s.emit(Position{File: name, Index: -1}, rest)
	}
	dec := json.NewDecoder(io.LimitReader(s.r, 1<<62))
	if _, err := dec.Token(); err != nil {
		return &ParseError{File: name, Index: 0, Err: err}
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return &ParseError{File: name, Index: i, Err: err}
		}
		if err := s.emit(Position{File: name, Index: i}, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return &ParseError{File: name, Index: -1, Line: 0, Err: fmt.Errorf("after the array: %w", err)}
	}
	return nil
}

// detectArray tells an OpenHands event array and a bare chat message list
// from an estimation-dialogue array by the first element, when it fits in
// the read buffer.
func (s *scanner) detectArray() *Format {
	head, _ := s.r.Peek(s.r.Buffered())
	dec := json.NewDecoder(bytes.NewReader(head))
	var first map[string]json.RawMessage
	if _, err := dec.Token(); err != nil || dec.Decode(&first) != nil {
		return Dialogue
	}
	switch {
	case isOpenHandsEvent(first):
		return OpenHands
	case has(first, "content", "status") && !has(first, "role"):
		return ClaudeTodos
	case has(first, "role", "content"):
		return MiniSWEAgent // a bare message list, as mini-swe-agent's own test data
	}
	return Dialogue
}

func decompress(br *bufio.Reader) (*bufio.Reader, func(), error) {
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return bufio.NewReaderSize(zr, 1<<20), func() { zr.Close() }, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: %w", err)
		}
		return bufio.NewReaderSize(zr, 1<<20), zr.Close, nil
	}
	return br, func() {}, nil
}

func firstByte(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if !isSpace(b) {
			return b, r.UnreadByte()
		}
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
