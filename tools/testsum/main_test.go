package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestSummary reads the real `go test -json` of testdata/sample: a
// package with a failure, skips with and without a reason and subtests, a
// package whose TestMain panics, and one without tests.
func TestSummary(t *testing.T) {
	cmd := exec.Command("go", "test", "-json", "-count=1", "-p=1", "./...")
	cmd.Dir = "testdata/sample"
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, _ := cmd.Output()
	var buf bytes.Buffer
	s := newSummary(&buf)
	if err := s.read(bytes.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	code := s.finish()
	got := regexp.MustCompile(`\d+\.\d+s`).ReplaceAllString(buf.String(), "T")
	want := strings.Join([]string{
		"=== RUN   TestFail",
		"    a_test.go:7: boom",
		"--- FAIL: TestFail (T)",
		"FAIL\tsample/a\tT",
		"setup failed",
		"FAIL\tsample/b\tT",
		"?   \tsample/c\t[no test files]",
		"skipped: 2 × missing widget: gone (sample/a.TestSkip, sample/a.TestSub/y)",
		"skipped: 1 × no reason given (sample/a.TestSub/z)",
		"tests: 2 passed, 2 failed, 3 skipped",
		"",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

// TestSkipReason takes a skip's message without its file:line prefix.
func TestSkipReason(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []string
		want string
	}{
		{"message", []string{"=== RUN   TestX\n", "    x_test.go:3: missing ollama: not built\n", "--- SKIP: TestX (0.00s)\n"}, "missing ollama: not built"},
		{"none", []string{"=== RUN   TestX\n", "--- SKIP: TestX (0.00s)\n"}, "no reason given"},
		{"two lines", []string{"    x_test.go:3: a\n", "    x_test.go:4: b: c\n"}, "a b: c"},
	} {
		if got := skipReason(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
