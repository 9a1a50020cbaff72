package validate

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Level is how serious a finding is.
type Level string

// Levels of finding.
const (
	// Error fails validation (exit status 1).
	Error Level = "error"
	// Warning is reported but does not fail validation, unless
	// Config.Strict.
	Warning Level = "warning"
	// Info is context, such as an inferred width.
	Info Level = "info"
)

// Check names the family a finding belongs to.
type Check string

// Checks, in report order.
const (
	CheckSchema  Check = "schema"
	CheckLabels  Check = "labels"
	CheckLeakage Check = "leakage"
	CheckShape   Check = "shape"
	CheckBalance Check = "balance"
	CheckSize    Check = "size"
)

// Example is one offending row.
type Example struct {
	File string `json:"file"`
	// Row is the 0-based row index in File, -1 when the finding is about
	// the whole file.
	Row      int    `json:"row"`
	CustomID string `json:"custom_id,omitempty"`
	Message  string `json:"message"`
}

// Finding is one problem (or note) and its first offenders.
type Finding struct {
	Check Check  `json:"check"`
	Level Level  `json:"level"`
	Code  string `json:"code"`
	// Summary says what is wrong in general; Examples say where.
	Summary string `json:"summary"`
	// Count is how many rows (or files, or trajectories) offend.
	Count int `json:"count"`
	// Strict marks a warning made an error by Config.Strict.
	Strict   bool      `json:"strict,omitempty"`
	Examples []Example `json:"examples"`
}

// FileSummary describes one validated file.
type FileSummary struct {
	Path string `json:"path"`
	// Kind is "sft" or "rl" (RL, eval and probe-set files share a schema);
	// Split is sft, rl, eval or probes (a benchmark probe set).
	Kind       string `json:"kind"`
	Split      string `json:"split"`
	Rows       int    `json:"rows"`
	Possible   int    `json:"possible"`
	Impossible int    `json:"impossible"`
	// Checked says the rows were read and checked; false when the schema
	// is too broken to read them.
	Checked bool `json:"checked"`
}

// Report is the outcome of Run.
type Report struct {
	Files []FileSummary `json:"files"`
	// Manifest is the manifest.json used, if any.
	Manifest string `json:"manifest,omitempty"`
	// Width is the target width the labels were checked against and
	// WidthSource where it came from: "manifest", "inferred" or "" (none).
	Width       string    `json:"width,omitempty"`
	WidthSource string    `json:"width_source,omitempty"`
	Findings    []Finding `json:"findings"`
	// Errors and Warnings count the findings (not the rows) of each level.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

// OK reports whether no error-level finding was made.
func (r *Report) OK() bool { return r.Errors == 0 }

// Find returns the findings with the given code.
func (r *Report) Find(code string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// WriteText prints the report for people: one block per file, then every
// finding with its examples, then the verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Files {
		if !f.Checked {
			fmt.Fprintf(&b, "%s: %s, %d rows (not checked: see the schema findings)\n", f.Path, f.Split, f.Rows)
			continue
		}
		fmt.Fprintf(&b, "%s: %s, %d rows (%d possible, %d impossible)\n", f.Path, f.Split, f.Rows, f.Possible, f.Impossible)
	}
	if r.Width != "" {
		fmt.Fprintf(&b, "width: %s (%s)\n", r.Width, r.WidthSource)
	}
	for _, f := range r.Findings {
		level := strings.ToUpper(string(f.Level))
		if f.Strict {
			level += " (a warning; --strict)"
		}
		fmt.Fprintf(&b, "\n%s [%s/%s] %s (%d)\n", level, f.Check, f.Code, f.Summary, f.Count)
		for _, e := range f.Examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
		if more := f.Count - len(f.Examples); more > 0 && len(f.Examples) > 0 {
			fmt.Fprintf(&b, "  … and %d more\n", more)
		}
	}
	fmt.Fprintf(&b, "\n%s, %s\n", Plural(r.Errors, "error"), Plural(r.Warnings, "warning"))
	_, err := io.WriteString(w, b.String())
	return err
}

// String formats e as "file:row: custom_id: message".
func (e Example) String() string {
	if e.File == "" {
		return e.Message
	}
	pos := e.File
	if e.Row >= 0 {
		pos = fmt.Sprintf("%s: row %d", e.File, e.Row)
	}
	if e.CustomID != "" {
		pos += " (" + e.CustomID + ")"
	}
	return pos + ": " + e.Message
}

// findings collects findings keyed by check, code and file, keeping the
// first max examples of each.
type findings struct {
	max   int
	list  []*Finding
	index map[string]*Finding
}

func newFindings(max int) *findings {
	return &findings{max: max, index: map[string]*Finding{}}
}

// add records one offender. key separates findings of the same code (for
// example per file); summary is used when the finding is new.
func (fs *findings) add(check Check, level Level, code, key, summary string, e Example) {
	k := string(check) + "\x00" + code + "\x00" + key
	f, ok := fs.index[k]
	if !ok {
		f = &Finding{Check: check, Level: level, Code: code, Summary: summary, Examples: []Example{}}
		fs.index[k] = f
		fs.list = append(fs.list, f)
	}
	f.Count++
	if len(f.Examples) < fs.max {
		f.Examples = append(f.Examples, e)
	}
}

var checkOrder = map[Check]int{CheckSchema: 0, CheckLabels: 1, CheckLeakage: 2, CheckShape: 3, CheckBalance: 4, CheckSize: 5}
var levelOrder = map[Level]int{Error: 0, Warning: 1, Info: 2}

// report orders the findings (by level, then check, then first seen) into
// r; strict makes every warning an error.
func (fs *findings) report(r *Report, strict bool) {
	for _, f := range fs.list {
		if strict && f.Level == Warning {
			f.Level, f.Strict = Error, true
		}
		r.Findings = append(r.Findings, *f)
		switch f.Level {
		case Error:
			r.Errors++
		case Warning:
			r.Warnings++
		}
	}
	sortStable(r.Findings, func(a, b Finding) bool {
		if levelOrder[a.Level] != levelOrder[b.Level] {
			return levelOrder[a.Level] < levelOrder[b.Level]
		}
		return checkOrder[a.Check] < checkOrder[b.Check]
	})
}

func sortStable(fs []Finding, less func(a, b Finding) bool) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}

// Plural formats a count with its noun: "1 error", "2 errors".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
