package eval

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Run is one evaluation as written by `bagen-data eval --json`: what was
// evaluated and its metrics.
type Run struct {
	// Name labels the run in comparisons (default: the predictions file or
	// model name).
	Name string `json:"name"`
	// Data is the evaluated parquet file; Predictions the predictions file;
	// Model the model asked, when one answered.
	Data        string `json:"data"`
	Predictions string `json:"predictions,omitempty"`
	Model       string `json:"model,omitempty"`
	// Endpoint is the Chat Completions URL that answered, when one did.
	Endpoint string  `json:"endpoint,omitempty"`
	Metrics  Metrics `json:"metrics"`
	// Spend is what the answers cost, when the predictions file says.
	Spend *Spend `json:"spend,omitempty"`
}

// format prints the Table metric name's value v.
func format(name string, v Num) string {
	mt, _ := MetricNamed(name)
	return mt.Format(v)
}

// WriteText prints m as the headline table, the progress bins and the
// early-stop summary.
func WriteText(w io.Writer, m Metrics) error {
	var b strings.Builder
	fmt.Fprintf(&b, "probes %d: %d possible, %d impossible; %d without a prediction\n\n",
		m.Probes, m.TruePossible, m.TrueImpossible, m.Missing)
	writeHeadline(&b, m)
	b.WriteString("\n")
	if len(m.Dims) > 0 {
		writeDims(&b, m.Dims)
		b.WriteString("\n")
	}
	writeBins(&b, m.Bins)
	b.WriteString("\n")
	writeEarlyStop(&b, m)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeadline prints Table: each metric's value, interval and count.
func writeHeadline(b *strings.Builder, m Metrics) {
	t := table{{"metric", "value", "95% CI", "n"}}
	for _, mt := range Table {
		ci := ""
		if c, ok := m.CI[mt.Name]; ok {
			ci = "[" + mt.Format(c.Low) + ", " + mt.Format(c.High) + "]"
		}
		t = append(t, []string{mt.Label, mt.Format(mt.Get(m)), ci, mt.N(m)})
	}
	t.write(b)
}

// writeDims prints Cover and MRE per Warehouse dimension.
func writeDims(b *strings.Builder, dims []DimMetrics) {
	t := table{{"dimension", "Cover", "n", "MRE P50", "MRE P90"}}
	for _, d := range dims {
		t = append(t, []string{d.Dim, d.Coverage.Pct(), fmt.Sprintf("%d/%d", d.Covered, d.Intervals), d.MREP50.Pct(), d.MREP90.Pct()})
	}
	t.write(b)
}

func writeBins(b *strings.Builder, bins []Bin) {
	t := table{{"progress", "probes", "Cover", "MRE P50", "optimistic", "conservative", "failed caught"}}
	for _, bin := range bins {
		t = append(t, []string{
			fmt.Sprintf("%.1f-%.1f", bin.Lo, bin.Hi),
			fmt.Sprintf("%d", bin.Probes),
			bin.Coverage.Pct(),
			bin.MREP50.Pct(),
			fmt.Sprintf("%s (%d/%d)", bin.OptimisticShare.Pct(), bin.Optimistic, bin.Misses),
			fmt.Sprintf("%s (%d/%d)", bin.ConservativeShare.Pct(), bin.Conservative, bin.Misses),
			fmt.Sprintf("%s (%d/%d)", bin.FailedAccuracy.Pct(), bin.FailedCaught, bin.FailedProbes),
		})
	}
	t.write(b)
}

func writeEarlyStop(b *strings.Builder, m Metrics) {
	e := m.EarlyStop
	fmt.Fprintf(b, "early stop at the first impossible prediction (%d trajectories: %d successful, %d failed)\n",
		e.Trajectories, e.Successful, e.Failed)
	writeStop(b, e, m.CI["aborted_successful_share"], "  ")
	if l := e.Live; l != nil {
		fmt.Fprintf(b, "live: the probes a guard can act on, after turn 1 on (%d before the first turn left out)\n", l.NotAsked)
		writeStop(b, *l, m.CI["live_aborted_successful_share"], "  ")
	}
	if len(e.Curve) > 0 {
		b.WriteString("\n")
		writeCurve(b, e.Curve)
	}
}

// writeStop prints one replay's lines: the paper's gross figures, then
// the harm per run and the net.
func writeStop(b *strings.Builder, e EarlyStop, harm CI, in string) {
	line := func(label, format string, a ...any) {
		fmt.Fprintf(b, "%s%-26s%s\n", in, label, fmt.Sprintf(format, a...))
	}
	line("false-abort rate", "%s (%d/%d probes on successful trajectories)", e.FalseAbortRate.Pct(), e.FalseAborts, e.SuccessProbes)
	line("success-rate drop", "%s (%d/%d trajectories)", e.SuccessDrop.Pct(), e.AbortedSuccessful, e.Trajectories)
	line("stopped failed", "%s (%d/%d trajectories)", e.StoppedFailedShare.Pct(), e.StoppedFailed, e.Failed)
	line("tokens saved on failed", "%s (%d/%d tokens)", e.SavedShare.Pct(), e.SavedTokens, e.FailedTokens)
	interval := ""
	if harm.Replicates > 0 {
		interval = fmt.Sprintf(", 95%% CI [%s, %s]", harm.Low.Pct(), harm.High.Pct())
	}
	line("successful runs aborted", "%s (%d/%d runs%s)", e.AbortedSuccessfulShare.Pct(), e.AbortedSuccessful, e.Successful, interval)
	n := e.Net
	if n.Tokens == nil {
		line("net tokens saved", "unknown, not zero: %d of the %d probes answered up to the stops carry no usage", n.WithoutUsage, n.EstimatorProbes)
	} else {
		line("estimator tokens", "%d (%d probes answered up to the stops: %d prompt, %d cached, %d completion)",
			*n.EstimatorTokens, n.EstimatorProbes, n.EstimatorPromptTokens, n.EstimatorCachedTokens, n.EstimatorCompletionTokens)
		line("net tokens saved", "%d (%s of the failed runs' tokens)", *n.Tokens, n.Share.Pct())
	}
	if d := n.Dollars; d != nil {
		line("net dollars saved", "%s: $%.4f the agent's refused calls − %s the estimator",
			dollars(d.Net), d.Saved, dollars(d.Estimator))
	}
}

// dollars formats an amount, "unknown" when undefined.
func dollars(v Num) string {
	switch {
	case !v.Defined():
		return "unknown"
	case v < 0:
		return "-$" + (-v).Fixed(4)
	}
	return "$" + v.Fixed(4)
}

// writeCurve prints the savings-versus-abort curve.
func writeCurve(b *strings.Builder, points []CurvePoint) {
	b.WriteString("savings vs aborts: stop at \"impossible\" or once the upper bound H ≥ θ × (budget − tokens_used)\n")
	t := table{{"θ", "saved on failed", "successful aborted", "false-abort rate", "net tokens"}}
	for _, p := range points {
		th := "impossible only"
		if p.Upper.Defined() {
			th = strconv.FormatFloat(float64(p.Upper), 'g', -1, 64)
		}
		net := "unknown"
		if p.NetTokens != nil {
			net = strconv.FormatInt(*p.NetTokens, 10)
		}
		t = append(t, []string{th, p.SavedShare.Pct(), fmt.Sprintf("%s (%d)", p.AbortedSuccessfulShare.Pct(), p.AbortedSuccessful),
			p.FalseAbortRate.Pct(), net})
	}
	t.write(b)
}

// CompareColumns are the columns of the appendix's SFT/RL sweep table.
var CompareColumns = []string{"accuracy", "recall_possible", "recall_impossible", "coverage", "mre_p50", "mre_p90", "reward"}

// WriteCompare prints the runs side by side twice: one row per run in the
// layout of the paper's SFT/RL sweep table (Acc, Rec pos, Rec imp, Cover,
// MRE P50, MRE P90, R), then in the layout of its overall table (task
// success and mean turns of the probed rollouts, F1@1, F1@All, Fail F1,
// Hit, Reward). Reward is the mean paper score S (eq. 4) over the truly
// possible probes, Hit's denominator, so it never exceeds Hit; the paper's
// table, whose Reward exceeds Hit in places, averages over another set
// that neither it nor the authors' code states (Metrics.ScoreIntervals and
// ScoreCovered are two that can). An undefined value prints as "-" (task
// success on Warehouse probes: n/a in the paper).
func WriteCompare(w io.Writer, runs []Run) error {
	head := []string{"run"}
	for _, name := range CompareColumns {
		mt, _ := MetricNamed(name)
		head = append(head, mt.Label)
	}
	sweep := table{head}
	overall := table{{"model", "Success", "Turns", "F1@1", "F1@All", "Fail F1", "Hit", "Reward"}}
	for _, r := range runs {
		row := []string{r.Name}
		for _, name := range CompareColumns {
			row = append(row, format(name, r.Metrics.Value(name)))
		}
		sweep = append(sweep, row)
		m := r.Metrics
		overall = append(overall, []string{r.Name, m.TaskSuccess.Pct(), m.MeanTurns.Fixed(2),
			m.F1First.Pct(), m.F1All.Pct(), m.FailF1.Pct(), m.HitRate.Pct(), m.Score.Fixed(3)})
	}
	var b strings.Builder
	b.WriteString("SFT/RL sweep layout\n")
	sweep.write(&b)
	b.WriteString("\noverall layout (Success and Turns describe the probed rollouts; Reward is S over truly possible probes, ≤ Hit)\n")
	overall.write(&b)
	b.WriteString("\nearly stop layout (gross saved share as the paper reports it; net of the estimator's tokens up to each stop)\n")
	stopTable(runs).write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// stopTable is one row per run of the early stop's figures: per probe and
// per run harm, gross and net savings.
func stopTable(runs []Run) table {
	t := table{{"run", "false aborts", "runs aborted", "saved", "estimator tokens", "net tokens", "net", "net $"}}
	for _, r := range runs {
		e := r.Metrics.EarlyStop
		est, net, usd := "-", "-", "-"
		if n := e.Net; n.Tokens != nil {
			est, net = strconv.FormatInt(*n.EstimatorTokens, 10), strconv.FormatInt(*n.Tokens, 10)
		}
		if d := e.Net.Dollars; d != nil && d.Net.Defined() {
			usd = d.Net.Fixed(4)
		}
		t = append(t, []string{r.Name, e.FalseAbortRate.Pct(), e.AbortedSuccessfulShare.Pct(), e.SavedShare.Pct(), est, net, e.Net.Share.Pct(), usd})
	}
	return t
}

// table is rows of cells; the first column is left-aligned, the others
// right-aligned, separated by two spaces.
type table [][]string

func (t table) write(b *strings.Builder) {
	var width []int
	for _, row := range t {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range t {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
