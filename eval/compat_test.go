package eval

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"bagen-data/reward"
)

// TestComputeBagenV1MatchesReference compares the summary with the one the
// authors' eval_checkpoint.py aggregation gives for the same probes
// (testdata/bagen-v1/summary.py wrote summary.json).
func TestComputeBagenV1MatchesReference(t *testing.T) {
	b, err := os.ReadFile("testdata/bagen-v1/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Probes []struct {
			GroundTruth string `json:"ground_truth"`
			Remaining   int64  `json:"remaining_tokens"`
			Response    string `json:"response"`
		} `json:"probes"`
		Summary BagenV1 `json:"summary"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var rows []Scored
	for i, p := range ref.Probes {
		rows = append(rows, NewScored(Truth{CustomID: string(rune('a' + i)), TrajectoryID: "t", Target: Tokens(p.Remaining, p.GroundTruth != "impossible")}, p.Response))
	}
	// A Warehouse probe is not theirs to count.
	rows = append(rows, Scored{Judgement: reward.Judgement{Warehouse: true, Possible: true}})
	got := ComputeBagenV1(rows)
	want := ref.Summary
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if got.Samples != want.Samples || got.Possible != want.Possible || got.Impossible != want.Impossible ||
		!close(got.MeanReward, want.MeanReward) || !close(got.FormatValidRate, want.FormatValidRate) ||
		!close(got.ClassAccuracy, want.ClassAccuracy) || !close(got.PredHitPossible, want.PredHitPossible) ||
		!close(got.PredHitImpossible, want.PredHitImpossible) || !close(got.CoverRatePossible, want.CoverRatePossible) ||
		!close(got.MeanRelativeError, want.MeanRelativeError) || !close(got.MedianRelativeError, want.MedianRelativeError) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// This tool's own numbers on the same probes differ where the
	// definitions do: scalars are not format-valid intervals here.
	m := Compute(rows[:len(rows)-1])
	if float64(m.HitRate) == got.CoverRatePossible {
		t.Errorf("hit rate %v equals cover_rate_possible: the scalar hit should count only there", m.HitRate)
	}
}

// TestBagenV1HugeBounds pins the relative errors on bounds near 2^63 to
// the authors' Python, which adds the bounds as exact integers: mid =
// (L + H) / 2.0 (values printed by budget_probe_reward.py's parse_answer
// and main()'s aggregation).
func TestBagenV1HugeBounds(t *testing.T) {
	probes := []struct {
		response string
		r        int64
	}{
		{"<answer>[9223372036854775807, 9223372036854775807]</answer>", 123},
		{"<answer>[9223372036854775000, 9223372036854775807]</answer>", 1000},
		{"<answer>[4611686018427387904, 9223372036854775807]</answer>", 7},
	}
	var rows []Scored
	for i, p := range probes {
		rows = append(rows, NewScored(Truth{CustomID: string(rune('a' + i)), TrajectoryID: "t", Target: Tokens(p.r, true)}, p.response))
	}
	got := ComputeBagenV1(rows)
	if got.MeanRelativeError != 3.574761896947613e+17 || got.MedianRelativeError != 7.498676452727461e+16 {
		t.Errorf("mean, median relative error: got %v, %v; want 3.574761896947613e+17, 7.498676452727461e+16",
			got.MeanRelativeError, got.MedianRelativeError)
	}
}
