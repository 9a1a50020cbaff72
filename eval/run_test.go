package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteRunReadRun pins the saved form's start (two-space indent, names
// unescaped) and end (one newline) and reads it back.
func TestWriteRunReadRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	run := Run{Name: "a<b>&c", Data: "eval/test.parquet", Model: "m", Metrics: Metrics{Probes: 3, Accuracy: 0.5, Coverage: NaN}}
	if err := WriteRun(path, run); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"name\": \"a<b>&c\",\n  \"data\": \"eval/test.parquet\",\n  \"model\": \"m\",\n  \"metrics\": {\n    \"probes\": 3,"
	if got := string(b); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "}\n}\n") {
		t.Errorf("got\n%s\nwant it to start\n%s\nand end with }\\n}\\n", got, want)
	}
	back, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(run, back, cmp.Comparer(func(a, b Num) bool { return a == b || !a.Defined() && !b.Defined() })); d != "" {
		t.Errorf("read back (-wrote +read):\n%s", d)
	}
}
