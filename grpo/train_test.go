package grpo

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/probes"
)

// smallConfig trains quickly on synthData: 2 SFT + 2 GRPO epochs.
var smallConfig = Config{SFTEpochs: new(2), Epochs: new(2), Group: 8, Batch: 24, Seed: 7}

// outputs are the files a run's result is judged by.
var outputs = []string{LogFile, PlotFile, EvalFile, PredsFile, filepath.Join(CheckpointDir, LatestFile), filepath.Join(CheckpointDir, "grpo-02", StateFile)}

func readOut(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameOutputs(t *testing.T, a, b string) {
	t.Helper()
	for _, name := range outputs {
		if !bytes.Equal(readOut(t, a, name), readOut(t, b, name)) {
			t.Errorf("%s differs between %s and %s", name, a, b)
		}
	}
}

var errStop = errors.New("stop")

func TestResumeBitIdentical(t *testing.T) {
	data := synthData()
	full := t.TempDir()
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: full, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []string{"sft-01", "sft-02", "grpo-01"} {
		t.Run("stop after "+stopAt, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Out: dir, Name: "test", afterEpoch: func(st *State) error {
				if st.name() == stopAt {
					return errStop
				}
				return nil
			}}
			if _, err := Train(context.Background(), smallConfig, data, o); !errors.Is(err, errStop) {
				t.Fatalf("first leg: got %v, want errStop", err)
			}
			o = Options{Out: dir, Name: "test", Resume: true}
			res, err := Train(context.Background(), smallConfig, data, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.State.name() != "grpo-02" {
				t.Errorf("resumed run ended at %s, want grpo-02", res.State.name())
			}
			sameOutputs(t, full, dir)
		})
	}
}

// TestResumeMidEpoch cancels inside a GRPO epoch, after some steps were
// logged past the checkpoint: resuming drops them and redoes the epoch.
func TestResumeMidEpoch(t *testing.T) {
	data := synthData()
	full := t.TempDir()
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: full, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := Options{Out: dir, Name: "test", afterStep: func(st *State) {
		// 2 × 15 SFT steps, then 10 GRPO steps an epoch: step 43 is the
		// third of grpo-02.
		if st.Step == 43 {
			cancel()
		}
	}}
	_, err := Train(ctx, smallConfig, data, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	st, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if logged := int64(len(readOut(t, dir, LogFile))); st.name() != "grpo-01" || logged <= st.LogSize {
		t.Fatalf("after the cancel: checkpoint %s, log %d bytes (checkpoint's %d); want grpo-01 and steps past it", st.name(), logged, st.LogSize)
	}
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: dir, Name: "test", Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, full, dir)
}

// TestResumeMoreEpochs: a finished run resumed with more epochs equals a
// run that asked for them from the start.
func TestResumeMoreEpochs(t *testing.T) {
	data := synthData()
	three := smallConfig
	three.Epochs = new(3)
	full := t.TempDir()
	if _, err := Train(context.Background(), three, data, Options{Out: full, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: dir, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Train(context.Background(), three, data, Options{Out: dir, Name: "test", Resume: true}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{LogFile, filepath.Join(CheckpointDir, "grpo-03", StateFile)} {
		if !bytes.Equal(readOut(t, full, name), readOut(t, dir, name)) {
			t.Errorf("%s differs", name)
		}
	}
}

func TestResumeRefusals(t *testing.T) {
	data := synthData()
	data.Accounting = probes.AccountingReplay
	dir := t.TempDir()
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: dir, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	if st, err := LoadState(dir); err != nil || st.Accounting != probes.AccountingReplay {
		t.Fatalf("the checkpoint keeps accounting %q (%v), want replay", st.Accounting, err)
	}
	other := smallConfig
	other.KL = new(float64(0.1))
	fewer := smallConfig
	fewer.Epochs = new(1)
	for _, tc := range []struct {
		name string
		cfg  Config
		o    Options
		want string
	}{
		{"other config", other, Options{Out: dir, Name: "test", Resume: true}, "config differs from the checkpoint's (only epochs may grow)"},
		{"fewer epochs", fewer, Options{Out: dir, Name: "test", Resume: true}, "config differs from the checkpoint's (only epochs may grow)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(context.Background(), tc.cfg, data, tc.o)
			if !errors.Is(err, ErrCheckpoint) || !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrCheckpoint ending %q", err, tc.want)
			}
		})
	}
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: dir, Name: "test"}); !errors.Is(err, ErrRunExists) ||
		err.Error() != dir+": holds the checkpoints of an earlier run" {
		t.Errorf("without Resume: got %v, want ErrRunExists", err)
	}
	counted := synthData()
	counted.Accounting = probes.AccountingMessage
	_, err := Train(context.Background(), smallConfig, counted, Options{Out: dir, Name: "test", Resume: true})
	if !errors.Is(err, ErrCheckpoint) || !strings.HasSuffix(err.Error(), "the checkpoint learned on replay numbers, the data records message") {
		t.Errorf("other accounting: got %v", err)
	}
	changed := synthData()
	changed.Accounting = probes.AccountingReplay
	changed.RL = changed.RL[1:]
	_, err = Train(context.Background(), smallConfig, changed, Options{Out: dir, Name: "test", Resume: true})
	if !errors.Is(err, ErrCheckpoint) || !strings.HasSuffix(err.Error(), "data differs from the checkpoint's") {
		t.Errorf("other data: got %v", err)
	}
}

func TestSeeds(t *testing.T) {
	data := synthData()
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	other := smallConfig
	other.Seed = 8
	for _, run := range []struct {
		dir string
		cfg Config
	}{{a, smallConfig}, {b, smallConfig}, {c, other}} {
		if _, err := Train(context.Background(), run.cfg, data, Options{Out: run.dir, Name: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	sameOutputs(t, a, b)
	if bytes.Equal(readOut(t, a, LogFile), readOut(t, c, LogFile)) {
		t.Error("seeds 7 and 8 wrote the same log")
	}
}

// TestZeroRLCollapses reproduces the paper's "RL without SFT" row: from a
// random head, GRPO settles on answering impossible everywhere (reward 0.2
// on impossible probes beats almost-never-covering random intervals).
func TestZeroRLCollapses(t *testing.T) {
	cfg := smallConfig
	cfg.Init = InitRandom
	cfg.Epochs = new(3)
	res, err := Train(context.Background(), cfg, synthData(), Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Eval
	if m.RecallImpossible != 1 || m.RecallPossible != 0 {
		t.Errorf("zero-RL recall imp %v pos %v, want 1 and 0", m.RecallImpossible, m.RecallPossible)
	}
	if res.Train.ImpossibleRate != 1 {
		t.Errorf("greedy impossible rate on training probes %v, want 1", res.Train.ImpossibleRate)
	}
}

// TestSFTThenGRPOBeatsUntrained: the trained head's greedy reward on the
// RL probes exceeds the untrained head's, and GRPO after SFT does not
// lose what SFT learnt.
func TestSFTThenGRPOBeatsUntrained(t *testing.T) {
	dir := t.TempDir()
	res, err := Train(context.Background(), smallConfig, synthData(), Options{Out: dir, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Train.Reward > res.Initial.Reward+0.03) {
		t.Errorf("greedy train reward %v, untrained %v: want an improvement of at least 0.03", res.Train.Reward, res.Initial.Reward)
	}
	if !(res.Train.Expected > 2*res.Initial.Expected) {
		t.Errorf("expected train reward %v, untrained %v: want it at least doubled", res.Train.Expected, res.Initial.Expected)
	}
	recs, err := ReadLog(filepath.Join(dir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var epochs, sftSteps, grpoSteps int
	for _, r := range recs {
		switch r.Type {
		case "epoch":
			epochs++
		case "sft_step":
			sftSteps++
		case "grpo_step":
			grpoSteps++
			if r.GRPO.Groups != 24 || r.GRPO.ZeroVarGroups > r.GRPO.Groups {
				t.Errorf("step %d: groups %d zero-variance %d", r.Step, r.GRPO.Groups, r.GRPO.ZeroVarGroups)
			}
		}
	}
	// 240 SFT rows / 16 = 15 steps an epoch; 240 RL prompts / 24 = 10.
	if epochs != 5 || sftSteps != 30 || grpoSteps != 20 {
		t.Errorf("log: %d epochs, %d sft steps, %d grpo steps; want 5, 30, 20", epochs, sftSteps, grpoSteps)
	}
}

func TestConfigErrors(t *testing.T) {
	err := Config{Init: "warm", Group: 1, Epochs: new(-1), Clip: new(float64(1)), LR: -1}.Validate()
	want := `invalid config: Init: got "warm", want "sft" or "random"
invalid config: Epochs: got -1, want 0 (SFT only) to 10000
invalid config: Group: got 1, want at least 2 (advantages need a group)
invalid config: LR: got -1, want 0 (the default) to 10
invalid config: Clip: got 1, want in [0, 1)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	err = Config{SFTEpochs: new(1 << 40), Batch: 1 << 20, Hidden: 1 << 30, SFTLR: math.Inf(1), KL: new(float64(math.NaN())), Clip: new(float64(math.NaN()))}.Validate()
	want = `invalid config: SFTEpochs: got 1099511627776, want 1 to 10000
invalid config: Batch: got 1048576, want 0 (the default) to 65536
invalid config: Hidden: got 1073741824, want 0 (the default) to 4096
invalid config: SFTLR: got +Inf, want 0 (the default) to 10
invalid config: KL: got NaN, want 0 (no KL term) to 1000
invalid config: Clip: got NaN, want in [0, 1)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = Train(context.Background(), Config{Init: InitSFT}, &Data{RL: synthData().RL}, Options{Out: t.TempDir()})
	if !errors.Is(err, ErrData) {
		t.Errorf("sft without SFT rows: got %v, want ErrData", err)
	}
}
