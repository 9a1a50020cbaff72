package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"bagen-data/eval"
)

func TestTInterval(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		xs     []float64
		mean   float64
		lo, hi float64
		n      int
	}{
		// s = √2.5, t(0.975, 4) = 2.7764451051977934: 3 ± 1.9632431614775572.
		{"five", []float64{1, 2, 3, 4, 5}, 3, 1.0367568385224428, 4.963243161477557, 5},
		// s = √0.02, t(0.975, 1) = 12.706204736174705: 0.2 ± 1.2706204736174705.
		{"two", []float64{0.1, 0.3}, 0.2, 0.2 - 1.2706204736174705, 0.2 + 1.2706204736174705, 2},
		{"NaN ignored", []float64{1, nan, 2, 3, 4, 5, nan}, 3, 1.0367568385224428, 4.963243161477557, 5},
		{"one", []float64{nan, 0.4}, 0.4, nan, nan, 1},
		{"none", []float64{nan}, nan, nan, nan, 0},
		{"constant", []float64{0.5, 0.5, 0.5}, 0.5, 0.5, 0.5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.xs)
			iv := tInterval(in)
			if !near(iv.Mean, tc.mean) || !near(iv.Lo, tc.lo) || !near(iv.Hi, tc.hi) || iv.N != tc.n {
				t.Errorf("tInterval(%v) = %+v, want mean %v [%v, %v] n %d", tc.xs, iv, tc.mean, tc.lo, tc.hi, tc.n)
			}
			if !slices.EqualFunc(in, tc.xs, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Errorf("tInterval modified its input")
			}
		})
	}
}

func near(a, b float64) bool {
	return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-12
}

// TestWriteSummary pins the printed tables for two seeds: means, t-intervals
// (t(0.975, 1) = 12.706), the paper's values and the paired changes.
func TestWriteSummary(t *testing.T) {
	m := func(acc, rp, ri, cov, p50, p90, r float64) eval.Metrics {
		return eval.Metrics{Accuracy: eval.Num(acc), RecallPossible: eval.Num(rp), RecallImpossible: eval.Num(ri),
			Coverage: eval.Num(cov), MREP50: eval.Num(p50), MREP90: eval.Num(p90), Reward: eval.Num(r)}
	}
	nan := math.NaN()
	configs := []config{
		{name: "Zero RL", paper: paperZeroRL, runs: []eval.Metrics{m(0.5, 0, 1, nan, nan, nan, 0.1), m(0.5, 0, 1, nan, nan, nan, 0.1)}},
		{name: "SFT", paper: paperSFT, runs: []eval.Metrics{m(0.6, 0.9, 0.3, 0.3, 0.5, 2, 0.1), m(0.6, 0.8, 0.4, 0.2, 0.4, 2, 0.12)}},
		{name: "RL", paper: paperRL005, runs: []eval.Metrics{m(0.6, 0.8, 0.4, 0.4, 0.4, 2, 0.11), m(0.6, 0.8, 0.4, nan, nan, nan, 0.14)}},
	}
	var b strings.Builder
	if err := writeSummary(&b, configs, 1, []uint64{1, 2}); err != nil {
		t.Fatal(err)
	}
	want := `Mean over 2 seeds (seeds 1, 2) with the 95% Student-t interval over seeds, mean ± t(0.975, n−1)·s/√n;
n is the seeds where the metric is defined (Cover and MRE need an interval answer);
the paper prints 0.0% for Cover and MRE where no interval was answered.

Zero RL      mean    95% t-interval  n   paper
  Acc       50.0%    [50.0%, 50.0%]  2   50.0%
  Rec pos    0.0%      [0.0%, 0.0%]  2    0.0%
  Rec imp  100.0%  [100.0%, 100.0%]  2  100.0%
  Cover         -                 -  0    0.0%
  MRE P50       -                 -  0    0.0%
  MRE P90       -                 -  0    0.0%
  R         0.100    [0.100, 0.100]  2   0.100

SFT          mean    95% t-interval  n  paper
  Acc       60.0%    [60.0%, 60.0%]  2  91.1%
  Rec pos   85.0%   [21.5%, 148.5%]  2  95.3%
  Rec imp   35.0%   [-28.5%, 98.5%]  2  86.8%
  Cover     25.0%   [-38.5%, 88.5%]  2  37.4%
  MRE P50   45.0%  [-18.5%, 108.5%]  2  53.9%
  MRE P90  200.0%  [200.0%, 200.0%]  2  86.4%
  R         0.110   [-0.017, 0.237]  2  0.210

RL           mean   95% t-interval  n  paper
  Acc       60.0%   [60.0%, 60.0%]  2  90.0%
  Rec pos   80.0%   [80.0%, 80.0%]  2  92.6%
  Rec imp   40.0%   [40.0%, 40.0%]  2  87.4%
  Cover     40.0%                -  1  46.8%
  MRE P50   40.0%                -  1  28.2%
  MRE P90  200.0%                -  1  87.8%
  R         0.125  [-0.066, 0.316]  2  0.264

Change from SFT, paired by seed:
RL         mean Δ    95% t-interval  n  seeds up/down  paper Δ
  Acc        +0.0      [+0.0, +0.0]  2            0/0     -1.1
  Rec pos    -5.0    [-68.5, +58.5]  2            0/1     -2.7
  Rec imp    +5.0    [-58.5, +68.5]  2            1/0     +0.6
  Cover     +10.0                 -  1            1/0     +9.4
  MRE P50   -10.0                 -  1            0/1    -25.7
  MRE P90    +0.0                 -  1            0/0     +1.4
  R        +0.015  [-0.049, +0.079]  2            2/0   +0.054
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
