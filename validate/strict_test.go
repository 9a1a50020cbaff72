package validate

import (
	"os"
	"path/filepath"
	"testing"

	"bagen-data/dataset"
)

// TestStrictAndLabelRule: the same flipped SFT answer is an error under
// the manifest's paper labels and a warning without a manifest, which
// Strict makes an error again.
func TestStrictAndLabelRule(t *testing.T) {
	dir := buildDataset(t, nil)
	sft := filepath.Join(dir, filepath.FromSlash(dataset.SFTFile))
	// Flip the first impossible answer of a trajectory with at least three
	// impossible probes.
	rows := readRows[dataset.SFTRow](t, sft)
	count := map[string]map[string]bool{}
	for _, r := range rows {
		if r.Messages[len(r.Messages)-1].Content == "<answer>impossible</answer>" {
			traj := dataset.TrajectoryOf(r.CustomID)
			if count[traj] == nil {
				count[traj] = map[string]bool{}
			}
			count[traj][r.CustomID] = true
		}
	}
	flipped := -1
	for i, r := range rows {
		if len(count[dataset.TrajectoryOf(r.CustomID)]) >= 3 {
			flipped = i
			break
		}
	}
	if flipped < 0 {
		t.Fatal("no SFT trajectory with three impossible probes")
	}
	rows[flipped].Messages[len(rows[flipped].Messages)-1].Content = "<answer>[70, 130]</answer>"
	writeRows(t, sft, rows)

	level := func(r *Report) (Level, bool) {
		f := r.Find("sft-trajectory-label")
		if len(f) != 1 || f[0].Count != 1 || f[0].Examples[0].Row != flipped {
			t.Fatalf("sft-trajectory-label findings %+v, want one at row %d", f, flipped)
		}
		return f[0].Level, f[0].Strict
	}
	if l, strict := level(run(t, Config{}, dir)); l != Error || strict {
		t.Errorf("paper labels: got %s (strict %t), want error", l, strict)
	}
	os.Remove(filepath.Join(dir, dataset.ManifestFile))
	r := run(t, Config{}, dir)
	if l, _ := level(r); l != Warning || !r.OK() {
		t.Errorf("no manifest: got %s, OK %t, want a warning and OK", l, r.OK())
	}
	r = run(t, Config{Strict: true}, dir)
	if l, strict := level(r); l != Error || !strict || r.OK() || r.Warnings != 0 {
		t.Errorf("no manifest, strict: got %s (strict %t), OK %t, %d warnings; want a strict error, not OK, no warnings", l, strict, r.OK(), r.Warnings)
	}
}
