package eval

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBootstrapDeterministic(t *testing.T) {
	a := Bootstrap(handTable(), 200, 7)
	b := Bootstrap(handTable(), 200, 7)
	if d := cmp.Diff(a, b, approx); d != "" {
		t.Errorf("same seed, different intervals:\n%s", d)
	}
	c := Bootstrap(handTable(), 200, 8)
	if cmp.Equal(a, c, approx) {
		t.Errorf("seeds 7 and 8 gave identical intervals %v", a)
	}
	if len(a) != len(Headline)+len(Harm) {
		t.Errorf("got %d intervals, want %d", len(a), len(Headline)+len(Harm))
	}
}

func TestBootstrapContainsEstimate(t *testing.T) {
	m := Compute(handTable())
	for name, ci := range Bootstrap(handTable(), 500, 1) {
		v := m.Value(name)
		if ci.Low > v || ci.High < v {
			t.Errorf("%s: estimate %v outside its 95%% interval [%v, %v]", name, float64(v), float64(ci.Low), float64(ci.High))
		}
	}
}

func TestBootstrapDegenerate(t *testing.T) {
	// Every trajectory is answered perfectly: every resample has accuracy 1
	// and reward 0.2, so the intervals collapse onto the estimate.
	var rows []Scored
	for _, id := range []string{"a", "b", "c"} {
		rows = append(rows, NewScored(Truth{CustomID: id, TrajectoryID: id}, "<answer>impossible</answer>"))
	}
	got := Bootstrap(rows, 50, 3)
	if ci := got["accuracy"]; ci.Low != 1 || ci.High != 1 || ci.Replicates != 50 {
		t.Errorf("accuracy: got %+v, want [1, 1] over 50 replicates", ci)
	}
	if ci := got["reward"]; math.Abs(float64(ci.Low)-0.2) > 1e-12 || math.Abs(float64(ci.High)-0.2) > 1e-12 {
		t.Errorf("reward: got %+v, want [0.2, 0.2]", ci)
	}
	// No possible probe: coverage is never defined.
	if ci := got["coverage"]; ci.Low.Defined() || ci.Replicates != 0 {
		t.Errorf("coverage: got %+v, want undefined over 0 replicates", ci)
	}
	if Bootstrap(rows, 0, 3) != nil {
		t.Errorf("0 replicates: want no intervals")
	}
}

func TestNumJSON(t *testing.T) {
	tests := []struct {
		name string
		n    Num
		want string
	}{
		{"number", 0.25, "0.25"},
		{"undefined", NaN, "null"},
		{"zero", 0, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.n)
			if err != nil || string(b) != tt.want {
				t.Fatalf("Marshal(%v): got %s, %v; want %s", float64(tt.n), b, err, tt.want)
			}
			var back Num
			if err := json.Unmarshal(b, &back); err != nil || !cmp.Equal(back, tt.n, approx) {
				t.Errorf("Unmarshal(%s): got %v, %v; want %v", b, float64(back), err, float64(tt.n))
			}
		})
	}
	var n Num
	if err := json.Unmarshal([]byte(`"x"`), &n); err == nil {
		t.Errorf(`Unmarshal("x"): got no error`)
	}
}
