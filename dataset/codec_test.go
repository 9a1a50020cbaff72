package dataset

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/pagecodec"
	"bagen-data/internal/testenv"
	"bagen-data/rollout"
)

// Both page codecs write the same rows: a build with libzstd and one with
// the pure-Go encoder read back equal, row for row, and each manifest
// names its codec. Only the outputs' bytes (and digests) may differ.
func TestCodecsWriteSameRows(t *testing.T) {
	if pagecodec.LibZstd == nil {
		testenv.Need(t, "cgo", errors.New("built without cgo, so without libzstd"))
	}
	dir := t.TempDir()
	in := writeInput(t, dir, "in.jsonl", canonical(60, 0))
	builds := map[string]*Manifest{}
	for _, c := range []*pagecodec.Codec{pagecodec.LibZstd, pagecodec.Go} {
		cfg := testConfig()
		cfg.codec = c
		m, err := Build(context.Background(), []rollout.Source{in}, filepath.Join(dir, c.Name), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if m.Codec != c.Name {
			t.Errorf("manifest codec %q, want %q", m.Codec, c.Name)
		}
		builds[c.Name] = m
	}
	read := func(c *pagecodec.Codec) (sft []SFTRow, rl, eval []RLRow) {
		t.Helper()
		out := filepath.Join(dir, c.Name)
		var errs [3]error
		sft, errs[0] = ReadSFT(filepath.Join(out, SFTFile))
		rl, errs[1] = ReadRL(filepath.Join(out, RLFile))
		eval, errs[2] = ReadRL(filepath.Join(out, EvalFile))
		if err := errors.Join(errs[:]...); err != nil {
			t.Fatal(err)
		}
		return sft, rl, eval
	}
	sftC, rlC, evalC := read(pagecodec.LibZstd)
	sftG, rlG, evalG := read(pagecodec.Go)
	if len(sftC) == 0 || len(rlC) == 0 || len(evalC) == 0 {
		t.Fatalf("rows: %d SFT, %d RL, %d eval; want some of each", len(sftC), len(rlC), len(evalC))
	}
	for name, diff := range map[string]string{
		"SFT": cmp.Diff(sftC, sftG), "RL": cmp.Diff(rlC, rlG), "eval": cmp.Diff(evalC, evalG),
	} {
		if diff != "" {
			t.Errorf("%s rows differ between libzstd and Go (-libzstd +Go):\n%s", name, diff)
		}
	}
	mc, mg := *builds[pagecodec.LibZstd.Name], *builds[pagecodec.Go.Name]
	// The two encoders choose other matches: equal digests would mean
	// the build ignored its codec.
	if cmp.Equal(mc.Outputs, mg.Outputs) {
		t.Errorf("outputs are byte for byte the same with either codec: %+v", mc.Outputs)
	}
	mc.Codec, mg.Codec, mc.Outputs, mg.Outputs = "", "", nil, nil
	if diff := cmp.Diff(mc, mg); diff != "" {
		t.Errorf("manifests differ beyond codec and outputs (-libzstd +Go):\n%s", diff)
	}
}
