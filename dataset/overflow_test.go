package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// Token counts whose sum passes 2^53 (and, three times larger, would wrap
// an int64) fail the build naming the trajectory, or are skipped and
// counted with SkipInvalid; they never become a label.
func TestBuildTokenSumOverflow(t *testing.T) {
	dir := t.TempDir()
	big := `{"custom_id":"huge","budget":2500,"messages":[` +
		`{"role":"user","content":"a","tokens":4503599627370496},{"role":"assistant","content":"b","tokens":4503599627370496},` +
		`{"role":"user","content":"c","tokens":4503599627370496},{"role":"assistant","content":"d","tokens":1}],"metadata":{"success":true}}` + "\n"
	src := writeInput(t, dir, "r.jsonl", append(canonical(10, 0), big...))
	out := filepath.Join(dir, "out")
	_, err := Build(context.Background(), []rollout.Source{src}, out, testConfig())
	want := src.Name + `:11: messages[2]: token counts sum to more than 2^53 = 9007199254740992 (custom_id "huge")`
	if err == nil || err.Error() != want || !errors.Is(err, probes.ErrTokenOverflow) {
		t.Fatalf("got error %v, want %s wrapping ErrTokenOverflow", err, want)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed build created %s (stat: %v)", out, err)
	}
	cfg := testConfig()
	cfg.SkipInvalid = true
	m, err := Build(context.Background(), []rollout.Source{src}, out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trajectories != 10 || m.Invalid.Count != 1 || m.Invalid.Examples[0].Err != want {
		t.Errorf("skip-invalid: %d trajectories, invalid %+v; want 10 and the overflow", m.Trajectories, m.Invalid)
	}
}
