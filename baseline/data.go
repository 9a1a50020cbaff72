package baseline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/probes"
	"bagen-data/reward"
)

// example is one training probe: its trajectory, its view and its truth.
type example struct {
	id, traj  string
	view      *View
	possible  bool
	remaining float64 // possible probes: the true remaining tokens
	failed    bool    // the run failed (any of its probes is impossible)
}

// dirData is what one build directory gives: its examples and identity.
type dirData struct {
	examples   []example
	source     Source
	task       string
	accounting string
}

// readDir reads the sft and rl splits of a build directory (never the
// eval split) and its manifest.
func readDir(ctx context.Context, dir string, index int) (*dirData, error) {
	mpath := filepath.Join(dir, dataset.ManifestFile)
	raw, err := os.ReadFile(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w: no %s (want a directory bagen-data build wrote)", dir, ErrNoSplits, dataset.ManifestFile)
	}
	if err != nil {
		return nil, err
	}
	man, err := dataset.ReadManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	sum := sha256.Sum256(raw)
	d := &dirData{task: man.Config.Task, accounting: accountingOf(man),
		source: Source{Dir: dir, ManifestSHA256: hex.EncodeToString(sum[:])}}
	for _, o := range man.Outputs {
		if o.Path == dataset.SFTFile || o.Path == dataset.RLFile {
			d.source.Files = append(d.source.Files, o)
		}
	}
	for _, f := range []string{dataset.SFTFile, dataset.RLFile} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return nil, fmt.Errorf("%s: %w: %s missing", dir, ErrNoSplits, f)
		}
	}
	prefix := fmt.Sprintf("%d/", index)
	seen := map[string]bool{}
	if err := readSFT(ctx, filepath.Join(dir, filepath.FromSlash(dataset.SFTFile)), prefix, seen, d); err != nil {
		return nil, err
	}
	if err := readRL(ctx, filepath.Join(dir, filepath.FromSlash(dataset.RLFile)), prefix, seen, d); err != nil {
		return nil, err
	}
	return d, nil
}

// accountingOf is the manifest's token accounting, "default" for a build
// made before builds recorded it.
func accountingOf(m *dataset.Manifest) string {
	if m.Config.Accounting == probes.AccountingUnknown {
		return "default"
	}
	return string(m.Config.Accounting)
}

// readSFT adds the SFT rows: the prompt is every message but the target
// answer, whose interval's midpoint is the remaining tokens (exact for
// point targets, within a token for build's symmetric widths).
func readSFT(ctx context.Context, path, prefix string, seen map[string]bool, d *dirData) error {
	rows, err := dataset.ReadSFT(path)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if seen[r.CustomID] {
			continue // the oversampled copies of a probe
		}
		seen[r.CustomID] = true
		n := len(r.Messages)
		if n < 2 || r.Messages[n-1].Role != "assistant" {
			return fmt.Errorf("%s: row %d (%s): messages: want the prompt and the assistant's target answer", path, i, r.CustomID)
		}
		e := example{id: prefix + r.CustomID, traj: prefix + dataset.TrajectoryOf(r.CustomID)}
		p := reward.Parse(r.Messages[n-1].Content)
		switch p.Kind {
		case reward.Impossible:
		case reward.Interval, reward.Scalar:
			e.possible, e.remaining = true, math.Round(float64(p.Low+p.High)/2)
		default:
			return fmt.Errorf("%s: row %d (%s): target answer %q is neither an interval nor impossible", path, i, r.CustomID, r.Messages[n-1].Content)
		}
		if e.view, err = NewView(r.Messages[:n-1]); err != nil {
			return fmt.Errorf("%s: row %d (%s): %w", path, i, r.CustomID, err)
		}
		d.examples = append(d.examples, e)
	}
	return nil
}

// readRL adds the RL rows, their truth as eval reads it.
func readRL(ctx context.Context, path, prefix string, seen map[string]bool, d *dirData) error {
	rows, err := dataset.ReadRL(path)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		id := r.ExtraInfo.CustomID
		if seen[id] {
			continue
		}
		seen[id] = true
		t, err := eval.TruthOf(r)
		if err != nil {
			return fmt.Errorf("%s: row %d (%s): label: %w", path, i, id, err)
		}
		tr, ok := t.Target.Tokens()
		if !ok {
			return fmt.Errorf("%s: row %d (%s): %w: not a token probe", path, i, id, ErrData)
		}
		e := example{id: prefix + id, traj: prefix + t.TrajectoryID, possible: tr.Possible, remaining: float64(tr.Remaining)}
		if e.view, err = NewView(r.Prompt); err != nil {
			return fmt.Errorf("%s: row %d (%s): %w", path, i, id, err)
		}
		d.examples = append(d.examples, e)
	}
	return nil
}
