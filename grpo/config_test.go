package grpo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestConfigZeroIsAValue(t *testing.T) {
	d := Config{}.withDefaults()
	if *d.KL != 0.05 || *d.Clip != 0.2 || *d.Epochs != 5 || *d.SFTEpochs != 5 || d.DropUniformGroups {
		t.Errorf("defaults: kl %v clip %v epochs %d sft epochs %d drop %v, want 0.05 0.2 5 5 false", *d.KL, *d.Clip, *d.Epochs, *d.SFTEpochs, d.DropUniformGroups)
	}
	z := Config{KL: new(float64(0)), Clip: new(float64(0)), Epochs: new(0)}.withDefaults()
	if *z.KL != 0 || *z.Clip != 0 || *z.Epochs != 0 {
		t.Errorf("explicit zeros: kl %v clip %v epochs %d, want 0 0 0", *z.KL, *z.Clip, *z.Epochs)
	}
	if r := (Config{Init: InitRandom, SFTEpochs: new(3)}).withDefaults(); *r.SFTEpochs != 0 {
		t.Errorf("init random: sft epochs %d, want 0", *r.SFTEpochs)
	}
}

func TestConfigZeroErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"kl and clip off", Config{KL: new(float64(0)), Clip: new(float64(0))}, ""},
		{"negative kl and clip", Config{KL: new(float64(-1)), Clip: new(float64(-0.5))},
			"invalid config: KL: got -1, want 0 (no KL term) to 1000\ninvalid config: Clip: got -0.5, want in [0, 1)"},
		{"sft only", Config{Epochs: new(0)}, ""},
		{"zero-rl with no GRPO", Config{Init: InitRandom, Epochs: new(0)},
			`invalid config: Epochs: got 0 with init "random", which would train nothing; want 1 to 10000`},
		{"sft with no SFT epochs", Config{Init: InitSFT, SFTEpochs: new(0)},
			`invalid config: SFTEpochs: got 0 with init "sft", want 1 to 10000 (init "random" is GRPO without SFT)`},
		{"default init with no SFT epochs", Config{SFTEpochs: new(0)},
			`invalid config: SFTEpochs: got 0 with init "sft", want 1 to 10000 (init "random" is GRPO without SFT)`},
		{"zero-rl ignores SFT epochs", Config{Init: InitRandom, SFTEpochs: new(0)}, ""},
		{"negative sft epochs", Config{SFTEpochs: new(-2)}, "invalid config: SFTEpochs: got -2, want 1 to 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if got := errText(err); got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSFTOnly: Epochs 0 stops after SFT — no GRPO step, no grpo
// checkpoint, the head the 2-epoch run had after SFT — and resuming it
// with Epochs 2 ends byte-identical to the run that never stopped.
func TestSFTOnly(t *testing.T) {
	data := synthData()
	full := t.TempDir()
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: full, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := smallConfig
	cfg.Epochs = new(0)
	res, err := Train(context.Background(), cfg, data, Options{Out: dir, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 30 { // 2 × 15 SFT steps
		t.Errorf("SFT-only run took %d steps, want 30", res.Steps)
	}
	entries, err := os.ReadDir(filepath.Join(dir, CheckpointDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{LatestFile, "sft-01", "sft-02"}; !slices.Equal(names, want) {
		t.Errorf("checkpoints %v, want %v", names, want)
	}
	sft, err := LoadState(filepath.Join(full, CheckpointDir, "sft-02"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got.Policy.Params() {
		if !slices.Equal(p, sft.Policy.Params()[i]) {
			t.Fatalf("SFT-only head's param %d differs from the full run's sft-02", i)
		}
	}
	if *got.Config.Epochs != 0 {
		t.Errorf("checkpoint config epochs %d, want 0", *got.Config.Epochs)
	}
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: dir, Name: "test", Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, full, dir)
}

// TestResumeZeroKLClip: a run with --kl 0 --clip 0 resumes (gob drops
// pointers to zero; LoadState restores them) and ends byte-identical.
func TestResumeZeroKLClip(t *testing.T) {
	data := synthData()
	cfg := smallConfig
	cfg.KL, cfg.Clip = new(float64(0)), new(float64(0))
	full := t.TempDir()
	if _, err := Train(context.Background(), cfg, data, Options{Out: full, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	short := cfg
	short.Epochs = new(1)
	if _, err := Train(context.Background(), short, data, Options{Out: dir, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if *st.Config.KL != 0 || *st.Config.Clip != 0 {
		t.Fatalf("checkpoint kl %v clip %v, want 0 0", *st.Config.KL, *st.Config.Clip)
	}
	if _, err := Train(context.Background(), cfg, data, Options{Out: dir, Name: "test", Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, full, dir)
}
