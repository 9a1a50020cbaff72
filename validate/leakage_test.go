package validate

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"bagen-data/dataset"
)

// TestReferenceSplitLeaks splits probes the way the reference pipeline
// does — duplicate every possible probe, shuffle, then cut the probes 90/10
// into train and test — and checks validation catches every trajectory and
// every prompt that lands on both sides.
func TestReferenceSplitLeaks(t *testing.T) {
	dir := buildDataset(t, nil)
	rlPath := filepath.Join(dir, filepath.FromSlash(dataset.RLFile))
	evalPath := filepath.Join(dir, filepath.FromSlash(dataset.EvalFile))

	// The distinct probes of the RL and eval splits.
	var probes []dataset.RLRow
	seen := map[string]bool{}
	for _, p := range []string{rlPath, evalPath} {
		for _, r := range readRows[dataset.RLRow](t, p) {
			if !seen[r.ExtraInfo.CustomID] {
				seen[r.ExtraInfo.CustomID] = true
				probes = append(probes, r)
			}
		}
	}
	var all []dataset.RLRow
	for _, r := range probes {
		all = append(all, r)
		if r.ExtraInfo.IsPossible {
			all = append(all, r) // the reference duplicates possible probes
		}
	}
	rng := rand.New(rand.NewPCG(42, 0))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	cut := len(all) * 9 / 10
	train, test := all[:cut], all[cut:]
	for i := range train {
		train[i].ExtraInfo.Split = dataset.SplitRL
	}
	for i := range test {
		test[i].ExtraInfo.Split = dataset.SplitEval
	}
	writeRows(t, rlPath, train)
	writeRows(t, evalPath, test)
	os.Remove(filepath.Join(dir, dataset.ManifestFile)) // its counts no longer hold

	// What leaks, counted independently of the validator.
	trainTraj, trainID := map[string]bool{}, map[string]bool{}
	for _, r := range train {
		trainTraj[r.ExtraInfo.TrajectoryID] = true
		trainID[r.ExtraInfo.CustomID] = true
	}
	sharedTraj, leakedRows := map[string]bool{}, 0
	for _, r := range test {
		if trainTraj[r.ExtraInfo.TrajectoryID] {
			sharedTraj[r.ExtraInfo.TrajectoryID] = true
		}
		if trainID[r.ExtraInfo.CustomID] {
			leakedRows++ // a copy of this very probe is in train
		}
	}
	// SFT trajectories are disjoint from both, so only rl/eval leaks.
	if len(sharedTraj) == 0 || leakedRows == 0 {
		t.Fatalf("the reference split leaked nothing (%d trajectories, %d rows): the test proves nothing", len(sharedTraj), leakedRows)
	}

	r := run(t, Config{}, dir)
	got := map[string]int{}
	for _, f := range r.Findings {
		if f.Check == CheckLeakage {
			got[f.Code] += f.Count
		}
	}
	if got["trajectory-leak"] != len(sharedTraj) || got["prompt-leak"] != leakedRows {
		t.Errorf("got %d trajectory leaks and %d prompt leaks, want %d and %d", got["trajectory-leak"], got["prompt-leak"], len(sharedTraj), leakedRows)
	}
	if r.OK() {
		t.Errorf("a leaking dataset passed validation")
	}
	t.Logf("reference split: %d of %d test rows repeat a train probe; %d trajectories on both sides", leakedRows, len(test), len(sharedTraj))
}
