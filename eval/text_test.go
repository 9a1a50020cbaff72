package eval

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestWriteCompare(t *testing.T) {
	runs := []Run{
		{Name: "SFT pct30 e5", Metrics: Metrics{Accuracy: 0.911, RecallPossible: 0.953, RecallImpossible: 0.868,
			Coverage: 0.374, MREP50: 0.539, MREP90: 0.864, Reward: 0.21,
			TaskSuccess: 0.719, MeanTurns: 12.12, F1First: 0.411, F1All: 0.511, FailF1: 0.488, HitRate: 0.303, Score: 0.16,
			EarlyStop: EarlyStop{FalseAbortRate: 0.05, AbortedSuccessfulShare: 0.2, SavedShare: 0.317,
				Net: Net{EstimatorTokens: i64(12000), Tokens: i64(-2301), Share: -0.0753, Dollars: &NetDollars{Net: -0.01234}}}}},
		{Name: "Zero RL no think", Metrics: Metrics{Accuracy: 0.5, RecallPossible: 0, RecallImpossible: 1,
			Coverage: NaN, MREP50: NaN, MREP90: NaN, Reward: 0.1,
			TaskSuccess: NaN, MeanTurns: 3, F1First: NaN, F1All: 0.5, FailF1: NaN, HitRate: 0, Score: NaN,
			EarlyStop: EarlyStop{FalseAbortRate: 1, AbortedSuccessfulShare: 1, SavedShare: 0.862, Net: Net{Share: NaN}}}},
	}
	var b strings.Builder
	if err := WriteCompare(&b, runs); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"SFT/RL sweep layout\n" +
		"run                 Acc  Rec pos  Rec imp  Cover  MRE P50  MRE P90      R\n" +
		"SFT pct30 e5      91.1%    95.3%    86.8%  37.4%    53.9%    86.4%  0.210\n" +
		"Zero RL no think  50.0%     0.0%   100.0%      -        -        -  0.100\n" +
		"\n" +
		"overall layout (Success and Turns describe the probed rollouts; Reward is S over truly possible probes, ≤ Hit)\n" +
		"model             Success  Turns   F1@1  F1@All  Fail F1    Hit  Reward\n" +
		"SFT pct30 e5        71.9%  12.12  41.1%   51.1%    48.8%  30.3%   0.160\n" +
		"Zero RL no think        -   3.00      -   50.0%        -   0.0%       -\n" +
		"\n" +
		"early stop layout (gross saved share as the paper reports it; net of the estimator's tokens up to each stop)\n" +
		"run               false aborts  runs aborted  saved  estimator tokens  net tokens    net    net $\n" +
		"SFT pct30 e5              5.0%         20.0%  31.7%             12000       -2301  -7.5%  -0.0123\n" +
		"Zero RL no think        100.0%        100.0%  86.2%                 -           -      -        -\n"
	if b.String() != want {
		t.Errorf("WriteCompare:\ngot:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteText(t *testing.T) {
	m := Compute(handTable())
	m.CI = Bootstrap(handTable(), 100, 1)
	var b strings.Builder
	if err := WriteText(&b, m); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/text.golden", b.String())
}

// golden compares got with the file at path, or rewrites the file under
// -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
