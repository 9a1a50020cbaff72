// Package testenv decides what a test does when a program or file it needs
// from outside the module (Ollama, a browser, the agent CLIs, Qwen's
// tokenizer, DuckDB, a kernel feature) is missing.
//
// Outside CI such a test skips and says which component is missing, so a
// developer can run the tests on any machine; `make test` lists the skips
// by reason. In CI (CI=true, as CI services set it) it fails instead: CI is
// where a skip would hide a missing install step.
package testenv

import (
	"os"
	"strconv"
	"testing"
)

// InCI reports whether the tests run in CI: CI is set to a true value.
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Need ends tb when err is not nil, saying that component is missing and
// why: a skip outside CI, a failure in CI. It returns when err is nil.
func Need(tb testing.TB, component string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if InCI() {
		tb.Fatalf("missing %s: %v (CI=true: a missing component fails the test)", component, err)
	}
	tb.Skipf("missing %s: %v", component, err)
}
