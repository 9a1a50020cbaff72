package reward

import (
	"math"
	"strings"
	"testing"
)

func rng(lo, hi float64) Range { return Range{Low: lo, High: hi, Set: true} }

func TestParseWarehouse(t *testing.T) {
	all := Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), rng(100, 150), rng(1000.5, 2000)}}
	tests := []struct {
		name, in string
		want     Warehouse
	}{
		{"paper format", "<answer>time_weeks:[2, 4], warehouse_item_weeks:[100, 150], cumulative_cost_usd:[1000.5, 2000]</answer>", all},
		{"short labels", "<answer>time:[2,4], warehouse:[100,150], cost:[1000.5,2000]</answer>", all},
		{"cumulative_cost label", "<answer>time:[2,4] warehouse:[100,150] cumulative_cost:[1000.5,2000]</answer>", all},
		{"full-width colon", "<answer>time_weeks：[2, 4]，warehouse_item_weeks：[100, 150]，cumulative_cost_usd：[1000.5, 2000]</answer>", all},
		{"spaces and newlines", "<answer>\ntime_weeks : [ 2 , 4 ]\nwarehouse_item_weeks :\n[100 ,150]\ncumulative_cost_usd: [1000.5,\t2000]\n</answer>", all},
		{"upper case labels", "<answer>TIME_WEEKS:[2,4], Warehouse_Item_Weeks:[100,150], COST:[1000.5,2000]</answer>", all},
		{"json-like quoted keys", `<answer>{"time_weeks": [2, 4], "warehouse_item_weeks": [100, 150], 'cumulative_cost_usd': [1000.5, 2000]}</answer>`, all},
		{"missing dimension", "<answer>time_weeks:[2, 4], cumulative_cost_usd:[1000.5, 2000]</answer>",
			Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), {}, rng(1000.5, 2000)}}},
		{"first occurrence wins", "<answer>time:[1, 2], time_weeks:[3, 4]</answer>",
			Warehouse{Kind: Interval, Dims: [3]Range{rng(1, 2), {}, {}}}},
		{"reversed kept as read", "<answer>time:[4, 2]</answer>", Warehouse{Kind: Interval, Dims: [3]Range{rng(4, 2), {}, {}}}},
		{"bad first occurrence then good", "<answer>time:[a, 2], time:[1, 2]</answer>", Warehouse{Kind: Interval, Dims: [3]Range{rng(1, 2), {}, {}}}},
		{"leading zeros and long fraction", "<answer>cost:[007.50, 8.125000]</answer>", Warehouse{Kind: Interval, Dims: [3]Range{{}, {}, rng(7.5, 8.125)}}},
		{"integer part beyond float64", "<answer>cost:[1, 1" + strings.Repeat("0", 400) + "]</answer>",
			Warehouse{Kind: Interval, Dims: [3]Range{{}, {}, rng(1, math.Inf(1))}}},
		{"impossible", "<answer> Impossible </answer>", Warehouse{Kind: Impossible}},
		{"impossible trimmed as Python strips", "<answer>\x1cimpossible\u3000\x1f</answer>", Warehouse{Kind: Impossible}},
		{"long s is not s", "<answer>impoſſible</answer>", Warehouse{}},
		{"kelvin sign is not k", "<answer>IMPOSSIBLE\u212a</answer>", Warehouse{}},
		{"full-width digits", "<answer>time:[２, ４], warehouse:[１００.５, １５０], cost:[1000.5, ２０００]</answer>",
			Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), rng(100.5, 150), rng(1000.5, 2000)}}},
		{"unicode space around the label and bounds", "<answer>time\u00a0:\x1d[\u30002, 4\u2003]</answer>", Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), {}, {}}}},
		{"unlabelled interval", "<answer>[1, 2]</answer>", Warehouse{}},
		{"unknown label", "<answer>budget:[1, 2], cost_usd:[3, 4]</answer>", Warehouse{}},
		{"equals sign is no colon", "<answer>time=[1, 2]</answer>", Warehouse{}},
		{"negative bound", "<answer>time:[-1, 2]</answer>", Warehouse{}},
		{"dangling decimal point", "<answer>time:[1., 2]</answer>", Warehouse{}},
		{"no answer tag", "time:[1, 2]", Warehouse{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseWarehouse(tt.in); got != tt.want {
				t.Errorf("ParseWarehouse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// The wanted values are Python's 1.8 * ((s1 + s2 + s3) / 3) with
// s = max(0, 1 - (hi - lo) / v) for a covering interval.
func TestScoreWarehouse(t *testing.T) {
	truth := WarehouseTruth{Remaining: [3]float64{3, 120, 1500}, Possible: true}
	full := Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), rng(100, 150), rng(1000, 2000)}}
	tests := []struct {
		name         string
		p            Warehouse
		truth        WarehouseTruth
		train, paper float64
	}{
		{"all covered", full, truth, 0.75, 0.4166666666666667},
		{"missing warehouse", Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), {}, rng(1000, 2000)}}, truth, 0.4, 0.22222222222222224},
		{"exact", Warehouse{Kind: Interval, Dims: [3]Range{rng(3, 3), rng(120, 120), rng(1500, 1500)}}, truth, 1.8, 1},
		{"zero truths", Warehouse{Kind: Interval, Dims: [3]Range{rng(0, 0), rng(0, 1), rng(1400, 1600)}},
			WarehouseTruth{Remaining: [3]float64{0, 0, 1500}, Possible: true}, 1.12, 0.6222222222222222},
		{"reversed dimension", Warehouse{Kind: Interval, Dims: [3]Range{rng(4, 2), rng(120, 120), rng(1500, 1500)}}, truth, 1.2, 0.6666666666666666},
		{"uncovered", Warehouse{Kind: Interval, Dims: [3]Range{rng(4, 5), rng(0, 10), rng(0, 1)}}, truth, 0, 0},
		{"impossible on possible", Warehouse{Kind: Impossible}, truth, 0, 0},
		{"unparseable on possible", Warehouse{}, truth, 0, 0},
		{"impossible on impossible", Warehouse{Kind: Impossible}, WarehouseTruth{}, 0.2, 0},
		{"intervals on impossible", full, WarehouseTruth{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Train.ScoreWarehouse(tt.p, tt.truth); got != tt.train {
				t.Errorf("Train.ScoreWarehouse(%+v) = %v, want %v", tt.p, got, tt.train)
			}
			if got := Paper.ScoreWarehouse(tt.p, tt.truth); got != tt.paper {
				t.Errorf("Paper.ScoreWarehouse(%+v) = %v, want %v", tt.p, got, tt.paper)
			}
		})
	}
	resp := "<answer>time_weeks:[2, 4], warehouse_item_weeks:[100, 150], cumulative_cost_usd:[1000, 2000]</answer>"
	if got := ScoreWarehouse(resp, truth); got != 0.75 {
		t.Errorf("ScoreWarehouse(%q) = %v, want 0.75", resp, got)
	}
}

func TestDetailWarehouse(t *testing.T) {
	truth := WarehouseTruth{Remaining: [3]float64{3, 120, 1500}, Possible: true}
	p := Warehouse{Kind: Interval, Dims: [3]Range{rng(2, 4), rng(100, 150), {}}}
	got := Train.DetailWarehouse(p, truth)
	want := `{"reward":0.5499999999999999,"class":"possible","dims":{` +
		`"time_weeks":{"score":0.33333333333333337,"interval":true,"covered":true,"width":2,"rel_width":0.6666666666666666,"mid_rel_err":0},` +
		`"warehouse_item_weeks":{"score":0.5833333333333333,"interval":true,"covered":true,"width":50,"rel_width":0.4166666666666667,"mid_rel_err":0.041666666666666664},` +
		`"cumulative_cost_usd":{"score":0,"interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null}}}`
	if b, _ := got.MarshalJSON(); string(b) != want {
		t.Errorf("DetailWarehouse JSON =\n%s\nwant\n%s", b, want)
	}
	imp := Train.DetailWarehouse(Warehouse{Kind: Impossible}, WarehouseTruth{})
	wantImp := `{"reward":0.2,"class":"impossible","dims":{` +
		`"time_weeks":{"score":0,"interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null},` +
		`"warehouse_item_weeks":{"score":0,"interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null},` +
		`"cumulative_cost_usd":{"score":0,"interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null}}}`
	if b, _ := imp.MarshalJSON(); string(b) != wantImp {
		t.Errorf("DetailWarehouse(impossible) JSON =\n%s\nwant\n%s", b, wantImp)
	}
}
