package grpo

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
)

func TestRender(t *testing.T) {
	got := Render([]rollout.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U1"}, {Role: "assistant", Content: "A"}, {Role: "user", Content: "U2"}})
	want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestNumeric(t *testing.T) {
	p := Probe{Budget: 2500, Turns: []dataset.TurnTokens{{Turn: 1, InputTokens: 300, OutputTokens: 100}, {Turn: 2, InputTokens: 150, OutputTokens: 50}}}
	got := p.Numeric()
	want := [NumNumeric]float64{math.Log1p(600) / 10, math.Log1p(2500) / 10, 0.2, 0.24, math.Log1p(300) / 10, math.Log1p(200) / 10}
	if got != want {
		t.Errorf("Numeric = %v, want %v", got, want)
	}
	first := Probe{Budget: 2500}.Numeric()
	if want := [NumNumeric]float64{0, math.Log1p(2500) / 10}; first != want {
		t.Errorf("first-turn Numeric = %v, want %v", first, want)
	}
}

func TestFeatures(t *testing.T) {
	x := Features([]float32{3, 4}, Probe{Budget: 1})
	want := []float64{0.6, 0.8, 0, math.Log(2) / 10, 0, 0, 0, 0}
	if len(x) != len(want) {
		t.Fatalf("len %d, want %d", len(x), len(want))
	}
	for i := range want {
		if math.Abs(x[i]-want[i]) > 1e-15 {
			t.Errorf("x[%d] = %v, want %v", i, x[i], want[i])
		}
	}
	if z := Features([]float32{0, 0}, Probe{Budget: 1}); z[0] != 0 || z[1] != 0 {
		t.Errorf("zero embedding: %v, want zeros", z[:2])
	}
}

func TestProbesFromRows(t *testing.T) {
	msgs := []rollout.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "finish within 2500 tokens"}}
	sft, err := ProbesFromSFT("sft.parquet", []dataset.SFTRow{{CustomID: "a", Budget: 2500, Messages: append(msgs, rollout.Message{Role: "assistant", Content: "<answer>impossible</answer>"})}})
	if err != nil || len(sft) != 1 || sft[0].Budget != 2500 || sft[0].Target != "<answer>impossible</answer>" || sft[0].Prompt != Render(msgs) {
		t.Errorf("ProbesFromSFT = %+v, %v", sft, err)
	}
	_, err = ProbesFromSFT("sft.parquet", []dataset.SFTRow{{CustomID: "b", Messages: msgs}})
	if want := "sft.parquet: row 0 (b): messages: invalid data row: want a prompt and a final assistant answer"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = ProbesFromSFT("sft.parquet", []dataset.SFTRow{{CustomID: "d", Messages: append(msgs, rollout.Message{Role: "assistant", Content: "x"})}})
	if want := "sft.parquet: row 0 (d): budget: invalid data row: want > 0, got 0"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = ProbesFromRL("rl.parquet", []dataset.RLRow{{Prompt: msgs, ExtraInfo: dataset.ExtraInfo{CustomID: "w", Budget: 10},
		Label: `{"time_weeks":1,"warehouse_item_weeks":2,"cumulative_cost_usd":3,"is_possible":true}`}})
	if want := "rl.parquet: row 0 (w): label: invalid data row: a Warehouse probe; the head estimates tokens"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = ProbesFromRL("rl.parquet", []dataset.RLRow{{Prompt: msgs, ExtraInfo: dataset.ExtraInfo{CustomID: "c"}}})
	if want := "rl.parquet: row 0 (c): extra_info.budget: invalid data row: want > 0, got 0"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestReadDirAccounting: ReadDir reads the accounting the three files
// share and refuses files of two.
func TestReadDirAccounting(t *testing.T) {
	msgs := []rollout.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "finish within 2500 tokens"}}
	write := func(dir string, sft, rl, ev probes.AccountingKind) {
		t.Helper()
		ctx := context.Background()
		sftRows := []dataset.SFTRow{{CustomID: "a_probe_after_turn_0", Budget: 2500, Accounting: sft,
			Messages: append(msgs, rollout.Message{Role: "assistant", Content: "<answer>impossible</answer>"})}}
		row := func(k probes.AccountingKind) []dataset.RLRow {
			if k == "none" {
				return []dataset.RLRow{} // an empty split
			}
			return []dataset.RLRow{{Prompt: msgs, ExtraInfo: dataset.ExtraInfo{CustomID: "b_probe_after_turn_0", Budget: 2500, Accounting: k},
				Label: `{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`}}
		}
		for _, err := range []error{
			dataset.WriteFile(ctx, filepath.Join(dir, dataset.SFTFile), sftRows),
			dataset.WriteFile(ctx, filepath.Join(dir, dataset.RLFile), row(rl)),
			dataset.WriteFile(ctx, filepath.Join(dir, dataset.EvalFile), row(ev)),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	msg, rep := probes.AccountingMessage, probes.AccountingReplay
	dir := t.TempDir()
	write(dir, rep, rep, rep)
	if s, err := ReadDir(dir); err != nil || s.Accounting != rep {
		t.Errorf("one accounting: %q, %v; want replay", s.Accounting, err)
	}
	write(dir, msg, msg, "none")
	if s, err := ReadDir(dir); err != nil || s.Accounting != msg {
		t.Errorf("an empty eval split: %q, %v; want message", s.Accounting, err)
	}
	write(dir, msg, msg, rep)
	_, err := ReadDir(dir)
	if want := "invalid data row: rows of different token accountings: sft/train.parquet message, rl/train.parquet message, eval/test.parquet replay; a head learns one calibration"; err == nil || err.Error() != want || !errors.Is(err, dataset.ErrMixedAccounting) {
		t.Errorf("mixed: %v, want %s", err, want)
	}
}
