// Command testsum runs `go test -json` with its arguments and prints what a
// plain `go test` prints — a line per package, the output of every failing
// test — then every skipped test grouped by its reason, and a closing count:
//
//	go run ./tools/testsum -race -count=1 ./...
//	...
//	skipped: 2 × missing ollama: ... (TestA, TestB)
//	tests: 1512 passed, 0 failed, 2 skipped
//
// A test counts once: subtests count, a parent that only holds subtests
// does not. The exit status is go test's, and 1 when a test failed although
// go test exited 0.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsum: %v\n", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testsum: %v\n", err)
		os.Exit(2)
	}
	// An interrupt reaches go test through the process group; wait for it.
	signal.Ignore(syscall.SIGINT)
	s := newSummary(os.Stdout)
	if err := s.read(out); err != nil {
		fmt.Fprintf(os.Stderr, "testsum: %v\n", err)
	}
	werr := cmd.Wait()
	code := s.finish()
	if ee, ok := werr.(*exec.ExitError); ok {
		code = max(code, ee.ExitCode())
	} else if werr != nil {
		fmt.Fprintf(os.Stderr, "testsum: %v\n", werr)
		code = max(code, 2)
	}
	os.Exit(code)
}

// event is one line of test2json's output.
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

// result is one finished test.
type result struct {
	name, action string
	output       []string
}

// pkg is a package's tests while it runs.
type pkg struct {
	output  map[string][]string // by test; "" is the package's own
	results []result
}

type summary struct {
	w        io.Writer
	pkgs     map[string]*pkg
	passed   int
	failed   int
	skipped  map[string][]string // reason → tests
	nskipped int
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, pkgs: map[string]*pkg{}, skipped: map[string][]string{}}
}

func (s *summary) pkg(name string) *pkg {
	p := s.pkgs[name]
	if p == nil {
		p = &pkg{output: map[string][]string{}}
		s.pkgs[name] = p
	}
	return p
}

// read consumes test2json events; a line that is not one is printed as is.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(s.w, "%s\n", line)
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
		return
	case "build-fail":
		return
	}
	p := s.pkg(e.Package)
	switch e.Action {
	case "output":
		p.output[e.Test] = append(p.output[e.Test], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			s.endPackage(e, p)
			return
		}
		p.results = append(p.results, result{name: e.Test, action: e.Action, output: p.output[e.Test]})
		delete(p.output, e.Test)
	}
}

// endPackage counts a package's leaf tests and prints its line, with the
// output of what failed.
func (s *summary) endPackage(e event, p *pkg) {
	parents := map[string]bool{}
	for _, r := range p.results {
		if i := strings.LastIndexByte(r.name, '/'); i > 0 {
			parents[r.name[:i]] = true
		}
	}
	failedTests := false
	for _, r := range p.results {
		switch {
		case r.action == "fail":
			failedTests = true
			fmt.Fprint(s.w, strings.Join(r.output, ""))
			if !parents[r.name] {
				s.failed++
			}
		case parents[r.name]:
		case r.action == "pass":
			s.passed++
		case r.action == "skip":
			s.nskipped++
			reason := skipReason(r.output)
			s.skipped[reason] = append(s.skipped[reason], e.Package+"."+r.name)
		}
	}
	var own strings.Builder
	for _, l := range p.output[""] {
		// go test's own closing lines; this prints its own.
		if !goTestEnd.MatchString(l) {
			own.WriteString(l)
		}
	}
	switch e.Action {
	case "fail":
		if !failedTests {
			// A panic, a timeout or a failing TestMain: the package's
			// own output says which.
			fmt.Fprint(s.w, own.String())
			s.failed++
		}
		fmt.Fprintf(s.w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(s.w, "?   \t%s\t[no test files]\n", e.Package)
	default:
		fmt.Fprintf(s.w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
	delete(s.pkgs, e.Package)
}

var (
	goTestEnd = regexp.MustCompile(`^(ok  |FAIL|\?   )\t|^FAIL\n$|^exit status \d+\n$`)
	fileLine  = regexp.MustCompile(`^[^\s:]+\.go:\d+:\s*`)
)

// skipReason is the message a skipped test gave: its log lines without
// the file:line prefix, or "no reason given".
func skipReason(output []string) string {
	var msg []string
	for _, l := range output {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if t = fileLine.ReplaceAllString(t, ""); t != "" {
			msg = append(msg, t)
		}
	}
	if len(msg) == 0 {
		return "no reason given"
	}
	return strings.Join(msg, " ")
}

// finish prints the skips by reason and the closing count; it returns 1
// when a test failed.
func (s *summary) finish() int {
	reasons := make([]string, 0, len(s.skipped))
	for r := range s.skipped {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := s.skipped[reasons[i]], s.skipped[reasons[j]]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		tests := s.skipped[r]
		sort.Strings(tests)
		fmt.Fprintf(s.w, "skipped: %d × %s (%s)\n", len(tests), r, strings.Join(tests, ", "))
	}
	fmt.Fprintf(s.w, "tests: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.nskipped)
	if s.failed > 0 {
		return 1
	}
	return 0
}
