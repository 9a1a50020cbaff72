package reward

import (
	"math"
	"testing"
)

func TestTargetTexts(t *testing.T) {
	tests := []struct {
		name       string
		t          Target
		label, gt  string
		possible   bool
		tokens, wh bool
	}{
		{"token possible", TokenTarget(Truth{Remaining: 90, Possible: true}, "[62, 117]"),
			`{"remaining_tokens":90,"is_possible":true,"ground_truth":"[62, 117]"}`, "[62, 117]", true, true, false},
		{"token impossible", TokenTarget(Truth{}, "impossible"),
			`{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`, "impossible", false, true, false},
		{"zero target", Target{},
			`{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`, "impossible", false, true, false},
		{"warehouse possible", WarehouseTarget(WarehouseTruth{Remaining: [3]float64{20, 71492, 591668.08}, Possible: true}),
			`{"time_weeks":20,"warehouse_item_weeks":71492,"cumulative_cost_usd":591668.08,"is_possible":true,"ground_truth":"time_weeks:[20, 20], warehouse_item_weeks:[71492, 71492], cumulative_cost_usd:[591668.08, 591668.08]"}`,
			"time_weeks:[20, 20], warehouse_item_weeks:[71492, 71492], cumulative_cost_usd:[591668.08, 591668.08]", true, false, true},
		{"warehouse impossible", WarehouseTarget(WarehouseTruth{Remaining: [3]float64{1, 2, 3}}),
			`{"time_weeks":1,"warehouse_item_weeks":2,"cumulative_cost_usd":3,"is_possible":false,"ground_truth":"impossible"}`, "impossible", false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.Label(); got != tt.label {
				t.Errorf("Label() = %s\nwant %s", got, tt.label)
			}
			if got := tt.t.GroundTruth(); got != tt.gt {
				t.Errorf("GroundTruth() = %q, want %q", got, tt.gt)
			}
			if tt.t.Possible() != tt.possible {
				t.Errorf("Possible() = %v, want %v", tt.t.Possible(), tt.possible)
			}
			_, tok := tt.t.Tokens()
			_, wh := tt.t.Resources()
			if tok != tt.tokens || wh != tt.wh {
				t.Errorf("kinds: tokens %v warehouse %v, want %v %v", tok, wh, tt.tokens, tt.wh)
			}
			// The label column reads back as the same truth.
			back, err := ParseTarget(tt.t.Label())
			if err != nil {
				t.Fatal(err)
			}
			got, want := back.Judge(Train, Tag(tt.gt)), tt.t.Judge(Train, Tag(tt.gt))
			if back.Possible() != tt.possible || got.Reward != want.Reward || got.Score != want.Score || got.Class != want.Class {
				t.Errorf("ParseTarget(Label()) = %+v, judges differently from %+v", back, tt.t)
			}
		})
	}
}

func TestTargetJudge(t *testing.T) {
	tok := TokenTarget(Truth{Remaining: 450, Possible: true}, "[315, 585]")
	wh := WarehouseTarget(WarehouseTruth{Remaining: [3]float64{2, 10, 100}, Possible: true})
	tests := []struct {
		name          string
		t             Target
		response      string
		reward, score float64
		class         Class
	}{
		{"covering interval", tok, "<answer>[400, 500]</answer>", 1.8 * (1 - 100.0/450), 1 - 100.0/450, ClassPossible},
		{"missed interval", tok, "<answer>[10, 20]</answer>", 0, 0, ClassPossible},
		{"wrong impossible", tok, "<answer>impossible</answer>", 0, 0, ClassImpossible},
		{"correct impossible", TokenTarget(Truth{}, "impossible"), "<answer>impossible</answer>", 0.2, 0, ClassImpossible},
		{"unparseable", tok, "450", 0, 0, ClassInvalid},
		{"warehouse exact", wh, "<answer>time_weeks:[2, 2], warehouse_item_weeks:[10, 10], cumulative_cost_usd:[100, 100]</answer>", 1.8, 1, ClassPossible},
		{"warehouse one dim", wh, "<answer>time_weeks:[1, 3]</answer>", 1.8 * (0.0 / 3), 0, ClassPossible},
		{"warehouse correct impossible", WarehouseTarget(WarehouseTruth{}), "<answer>impossible</answer>", 0.2, 0, ClassImpossible},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.t.Judge(Train, tt.response)
			if math.Abs(j.Reward-tt.reward) > 1e-12 || math.Abs(j.Score-tt.score) > 1e-12 || j.Class != tt.class {
				t.Errorf("Judge(%q) = reward %v score %v class %v; want %v %v %v", tt.response, j.Reward, j.Score, j.Class, tt.reward, tt.score, tt.class)
			}
			if _, wh := tt.t.Resources(); j.Warehouse != wh {
				t.Errorf("Warehouse = %v, want %v", j.Warehouse, wh)
			}
		})
	}
	if allocs := testing.AllocsPerRun(100, func() {
		tok.Judge(Train, "<answer>[400, 500]</answer>")
		wh.Judge(Train, "<answer>time_weeks:[1, 3]</answer>")
	}); allocs != 0 {
		t.Errorf("Judge: %v allocs per run, want 0", allocs)
	}
}

// TestFormatValid pins which answers have the required format: the
// paper's "impossible" or well-formed intervals, never a scalar or a
// reversed interval (both score 0 on a possible probe).
func TestFormatValid(t *testing.T) {
	tok := TokenTarget(Truth{Remaining: 450, Possible: true}, "[315, 585]")
	wh := WarehouseTarget(WarehouseTruth{Remaining: [3]float64{2, 10, 100}, Possible: true})
	tests := []struct {
		name     string
		t        Target
		response string
		want     bool
	}{
		{"interval", tok, "<answer>[400, 500]</answer>", true},
		{"point interval", tok, "<answer>[450, 450]</answer>", true},
		{"reversed interval", tok, "<answer>[500, 400]</answer>", false},
		{"scalar", tok, "<answer>450</answer>", false},
		{"impossible", tok, "<answer>Impossible</answer>", true},
		{"no tags", tok, "[400, 500]", false},
		{"warehouse three dims", wh, "<answer>time_weeks:[1, 3], warehouse_item_weeks:[5, 20], cost:[90, 110]</answer>", true},
		{"warehouse reversed dim", wh, "<answer>time_weeks:[3, 1], warehouse_item_weeks:[5, 20], cost:[90, 110]</answer>", false},
		{"warehouse two dims", wh, "<answer>time_weeks:[1, 3], cost:[90, 110]</answer>", false},
		{"warehouse impossible", wh, "<answer>impossible</answer>", true},
	}
	for _, tt := range tests {
		j := tt.t.Judge(Train, tt.response)
		if got := j.FormatValid(); got != tt.want {
			t.Errorf("%s: FormatValid(%q) = %v, want %v", tt.name, tt.response, got, tt.want)
		}
	}
}
