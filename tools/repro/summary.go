package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"bagen-data/eval"
)

// metric is one column of the appendix's SFT/RL sweep table.
type metric struct {
	key   string // eval.Metrics.Value name
	label string
	pct   bool // printed as a percentage; else with three decimals
}

var metrics = []metric{
	{"accuracy", "Acc", true}, {"recall_possible", "Rec pos", true}, {"recall_impossible", "Rec imp", true},
	{"coverage", "Cover", true}, {"mre_p50", "MRE P50", true}, {"mre_p90", "MRE P90", true}, {"reward", "R", false},
}

// paperRow is a row of the appendix's "Sokoban budget-probe results for
// the SFT and RL sweep" table (tab:appendix-sft-rl-results), in the order
// of metrics; the paper prints 0.0% for Cover and MRE where no interval
// was answered.
type paperRow struct {
	name   string
	values []float64
}

var (
	paperZeroRL = &paperRow{"Zero RL no think", []float64{0.500, 0.000, 1.000, 0, 0, 0, 0.100}}
	paperSFT    = &paperRow{"SFT pct30 e5", []float64{0.911, 0.953, 0.868, 0.374, 0.539, 0.864, 0.210}}
	paperRL005  = &paperRow{"SFT pct30 e5 → RL KL 0.05", []float64{0.900, 0.926, 0.874, 0.468, 0.282, 0.878, 0.264}}
)

// interval is a sample mean and its two-sided 95% Student-t interval,
// mean ± t(0.975, n−1)·s/√n with s the unbiased standard deviation, over
// the defined values; n < 2 leaves the bounds NaN.
type interval struct {
	Mean, Lo, Hi float64
	N            int
}

// tInterval computes the interval of xs, ignoring NaN values. xs is not
// modified.
func tInterval(xs []float64) interval {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	iv := interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(v)}
	if len(v) == 0 {
		return iv
	}
	var s float64
	for _, x := range v {
		s += x
	}
	iv.Mean = s / float64(len(v))
	if len(v) < 2 {
		return iv
	}
	var ss float64
	for _, x := range v {
		ss += (x - iv.Mean) * (x - iv.Mean)
	}
	sd := math.Sqrt(ss / float64(len(v)-1))
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(v) - 1)}.Quantile(0.975) * sd / math.Sqrt(float64(len(v)))
	iv.Lo, iv.Hi = iv.Mean-half, iv.Mean+half
	return iv
}

// config is one row of the sweep, trained once per seed.
type config struct {
	name  string
	paper *paperRow // nil: the paper has no such row
	runs  []eval.Metrics
}

func (m metric) format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case m.pct:
		return fmt.Sprintf("%.1f%%", 100*v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// delta formats a difference with its sign, in points for percentages.
func (m metric) delta(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case m.pct:
		return fmt.Sprintf("%+.1f", 100*v)
	default:
		return fmt.Sprintf("%+.3f", v)
	}
}

// values returns metric m of every run, NaN where undefined.
func (c config) values(m metric) []float64 {
	out := make([]float64, len(c.runs))
	for i, r := range c.runs {
		out[i] = float64(r.Value(m.key))
	}
	return out
}

// writeSummary prints, for every configuration, each metric's mean over
// the seeds with its 95% t-interval beside the paper's value, and then the
// change of each RL configuration from SFT paired by seed.
func writeSummary(w io.Writer, configs []config, sft int, seeds []uint64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Mean over %d seeds (%s) with the 95%% Student-t interval over seeds, mean ± t(0.975, n−1)·s/√n;\n", len(seeds), seedList(seeds))
	b.WriteString("n is the seeds where the metric is defined (Cover and MRE need an interval answer);\n")
	b.WriteString("the paper prints 0.0% for Cover and MRE where no interval was answered.\n")
	for _, c := range configs {
		t := table{{c.name, "mean", "95% t-interval", "n", "paper"}}
		for i, m := range metrics {
			iv := tInterval(c.values(m))
			paper := "no such row"
			if c.paper != nil {
				paper = m.format(c.paper.values[i])
			}
			t = append(t, []string{"  " + m.label, m.format(iv.Mean), bounds(m.format, iv), fmt.Sprint(iv.N), paper})
		}
		b.WriteString("\n")
		t.write(&b)
	}
	base := configs[sft]
	for _, c := range configs {
		if c.name == base.name || c.paper == paperZeroRL {
			continue
		}
		fmt.Fprintf(&b, "\nChange from %s, paired by seed:\n", base.name)
		t := table{{c.name, "mean Δ", "95% t-interval", "n", "seeds up/down", "paper Δ"}}
		for i, m := range metrics {
			a, s := c.values(m), base.values(m)
			d := make([]float64, len(a))
			var up, down int
			for j := range a {
				d[j] = a[j] - s[j]
				switch {
				case d[j] > 0:
					up++
				case d[j] < 0:
					down++
				}
			}
			iv := tInterval(d)
			paper := "-"
			if c.paper != nil {
				paper = m.delta(c.paper.values[i] - paperSFT.values[i])
			}
			t = append(t, []string{"  " + m.label, m.delta(iv.Mean), bounds(m.delta, iv), fmt.Sprint(iv.N), fmt.Sprintf("%d/%d", up, down), paper})
		}
		t.write(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func bounds(f func(float64) string, iv interval) string {
	if math.IsNaN(iv.Lo) {
		return "-"
	}
	return "[" + f(iv.Lo) + ", " + f(iv.Hi) + "]"
}

func seedList(seeds []uint64) string {
	s := make([]string, len(seeds))
	for i, v := range seeds {
		s[i] = fmt.Sprint(v)
	}
	return "seeds " + strings.Join(s, ", ")
}

// table is rows of cells; the first column left-aligned, the others right.
type table [][]string

func (t table) write(b *strings.Builder) {
	width := make([]int, len(t[0]))
	for _, row := range t {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range t {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			switch {
			case i == 0:
				b.WriteString(c + pad)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
}
