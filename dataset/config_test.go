package dataset

import (
	"errors"
	"math"
	"testing"

	"bagen-data/probes"
)

func TestValidateNamesEveryBadField(t *testing.T) {
	cfg := testConfig()
	cfg.Budget, cfg.Probes.Every, cfg.Probes.MinRemaining = -1, 1<<30, new(int64(math.MaxInt64))
	cfg.Ratio = Ratio{SFT: math.MaxInt, RL: math.MaxInt, Eval: 102} // sums to 100 in wrapped int arithmetic
	cfg.Balance = Balance{Oversample: 1_000_000_000, Ratio: new(math.NaN())}
	cfg.Workers = -3
	cfg.Width = probes.Width{Kind: probes.Pct, N: math.Inf(1), Text: "pctInf"}
	want := "Budget: got -1, want 0 (the trajectory's or the task's) to 9007199254740992 tokens\n" +
		"Width: got pct+Inf, want a percentage in [0, 100)\n" +
		"Probes.Every: got 1073741824, want 0 (every turn) to 1048576 turns\n" +
		"Probes.MinRemaining: got 9223372036854775807, want 0 to 9007199254740992 tokens\n" +
		"Ratio: got 9223372036854775807/9223372036854775807/102, want three percentages 0 to 100 that sum to 100\n" +
		"Balance.Oversample: got 1000000000, want 1 to 100 copies\n" +
		"Balance.Ratio: got NaN, want 0 (no cap) to 1e+06\n" +
		"Workers: got -3, want 0 (all cores) to 1024"
	err := cfg.Validate()
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Budget" {
		t.Errorf("errors.As: %+v, want the FieldError of Budget", fe)
	}
	if ok := testConfig(); ok.Validate() != nil {
		err := ok.Validate()
		t.Errorf("the test config: %v", err)
	}
}

// Balanced takes any ratio without panicking: one too large for an int,
// infinite or not a number means no cap.
func TestBalancedHugeRatio(t *testing.T) {
	entries := make([]Entry, 30)
	for i := range entries {
		entries[i] = Entry{Traj: int32(i)}
	}
	possible := func(e Entry) bool { return e.Traj < 3 }
	for _, r := range []float64{1e19, math.Inf(1), math.NaN(), math.MaxFloat64} {
		got, st := Balanced(entries, possible, Balance{Oversample: 2, Ratio: new(r)}, 1, "rl")
		if len(got) != 33 || st.Downsampled != 0 || st.Duplicates != 3 {
			t.Errorf("ratio %v: %d rows, %+v; want 33 rows, 3 duplicates, none downsampled", r, len(got), st)
		}
	}
}
