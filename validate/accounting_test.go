package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// agentBuild builds the agent logs of rollout/testdata, every trajectory
// in eval, with the given accounting and the word counter.
func agentBuild(t *testing.T, kind probes.AccountingKind) string {
	t.Helper()
	task, err := probes.LookupTask("swebench")
	if err != nil {
		t.Fatal(err)
	}
	width, _ := probes.ParseWidth("pct30")
	var paths []string
	for _, d := range []string{"mini0", "mini1", "mini2", "openhands", "inspect", "harbor"} {
		paths = append(paths, filepath.Join("..", "rollout", "testdata", d))
	}
	srcs, err := rollout.Expand(paths)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dataset.Config{Task: task, Width: width, Budget: 5000, Ratio: dataset.Ratio{Eval: 100},
		Seed: 42, Counter: words{}, Accounting: kind, PrefixIDs: true, Version: "test"}
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := dataset.Build(context.Background(), srcs, dir, cfg); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAccountingBuildsPass: a build of agent logs passes under either
// accounting, the replay's per-rollout system share and request-delta
// inputs included; under the message rule the same relations that flag a
// replay build's rows hold.
func TestAccountingBuildsPass(t *testing.T) {
	for _, kind := range probes.AccountingKinds {
		t.Run(string(kind), func(t *testing.T) {
			r := run(t, Config{Counter: words{}}, agentBuild(t, kind))
			// Every trajectory is in eval: the SFT and RL files are empty.
			if diff := cmp.Diff(map[string]int{"empty-file": 2}, problems(r)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if n := r.Files[2].Possible + r.Files[2].Impossible; n < 10 {
				t.Errorf("%d eval rows checked, want the logs' probes", n)
			}
		})
	}
}

// TestAccountingFindings: rows of another accounting than the manifest's,
// rows of two accountings, a probe set by the message rule, and files
// written before the column.
func TestAccountingFindings(t *testing.T) {
	t.Run("not the manifest's", func(t *testing.T) {
		dir := buildDataset(t, nil)
		path := filepath.Join(dir, dataset.ManifestFile)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(b), `"accounting": "message"`, `"accounting": "replay"`, 1)
		if edited == string(b) {
			t.Fatal("the manifest records no accounting")
		}
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, Config{}, dir)
		if diff := cmp.Diff(map[string]int{"accounting": 3}, problems(r)); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		if ex := exampleOf(r, "accounting"); !strings.Contains(ex, "the rows record message, the manifest says replay") {
			t.Errorf("example %q", ex)
		}
	})
	t.Run("mixed rows", func(t *testing.T) {
		dir := buildDataset(t, nil)
		eval := filepath.Join(dir, filepath.FromSlash(dataset.EvalFile))
		rows := readRows[dataset.RLRow](t, eval)
		rows[len(rows)-1].ExtraInfo.Accounting = probes.AccountingReplay
		writeRows(t, eval, rows)
		r := run(t, Config{}, dir)
		if got := problems(r)["accounting"]; got != 1 {
			t.Errorf("%d accounting findings, want 1 (%v)", got, problems(r))
		}
		if ex := exampleOf(r, "accounting"); !strings.Contains(ex, "rows of different token accountings: replay, row 0 message") {
			t.Errorf("example %q", ex)
		}
	})
	t.Run("probe set by the message rule", func(t *testing.T) {
		path := probeCopy(t, swebenchProbes, func(rows []dataset.RLRow) []dataset.RLRow {
			for i := range rows {
				rows[i].ExtraInfo.Accounting = probes.AccountingMessage
			}
			return rows
		})
		r := run(t, Config{}, path)
		if got := problems(r)["accounting"]; got != 1 {
			t.Errorf("%d accounting findings, want 1 (%v)", got, problems(r))
		}
	})
	t.Run("written before the column", func(t *testing.T) {
		r := run(t, Config{}, swebenchProbes)
		if got := problems(r); len(got) != 0 {
			t.Errorf("findings %v, want none", got)
		}
		if ex := exampleOf(r, "accounting-unknown"); ex != "no accounting recorded" {
			t.Errorf("accounting-unknown example %q", ex)
		}
	})
}

// exampleOf is the first example message of the findings with code.
func exampleOf(r *Report, code string) string {
	for _, f := range r.Findings {
		if f.Code == code && len(f.Examples) > 0 {
			return f.Examples[0].Message
		}
	}
	return ""
}
