package grpo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/eval"
)

// TestEpochRecordJSON pins an epoch line of the training log: the eval
// metrics in the sweep's column order, then the format-valid rate, an
// undefined one as null; and reads it back.
func TestEpochRecordJSON(t *testing.T) {
	m := eval.Metrics{Accuracy: 0.5, RecallPossible: 0.25, RecallImpossible: 1, Coverage: eval.NaN,
		MREP50: 0.125, MREP90: 2, Reward: -0.375, FormatValid: 0.75, Score: 9, F1All: 9}
	r := Record{Type: "epoch", Phase: "grpo", Epoch: 1, Step: 4, Eval: &EpochEval{Eval: headlineOf(m)}}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"epoch","phase":"grpo","epoch":1,"step":4,"eval":{"train":{"reward":0,"reward_possible":0,"reward_impossible":0,"impossible_rate":0,"expected_reward":0},` +
		`"eval":{"accuracy":0.5,"recall_possible":0.25,"recall_impossible":1,"coverage":null,"mre_p50":0.125,"mre_p90":2,"reward":-0.375,"format_valid":0.75}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	back, err := decodeLog(strings.NewReader(string(got)+"\n"), "train.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Record{r}, back, cmp.Comparer(func(a, b eval.Num) bool { return a == b || !a.Defined() && !b.Defined() })); d != "" {
		t.Errorf("read back (-wrote +read):\n%s", d)
	}
}
