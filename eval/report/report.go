// Package report renders an evaluation as one self-contained HTML page: the
// metric tables and inline SVG plots — optimism by rollout progress
// (paper Fig. "optimism"), feasibility accuracy by progress on failed
// trajectories (the failure-timing figure), coverage against midpoint
// relative error (the SFT ablation figure's axes), one point per progress
// bin, and, when the probes carry budgets, the early stop's
// savings-versus-abort curve (eval.CurvePoint). The page loads nothing
// from outside: no scripts, fonts or images.
package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"

	"bagen-data/eval"
)

// Colours of the plotted series; tests look for them in screenshots.
const (
	ColorOptimistic   = "#e8590c"
	ColorConservative = "#f2c94c"
	ColorFailed       = "#1c7ed6"
	ColorBin          = "#2b8a3e"
	ColorOverall      = "#862e9c"
	ColorCurve        = "#c2255c"
)

// Write renders run as an HTML page to w.
func Write(w io.Writer, run eval.Run) error {
	m := run.Metrics
	var text bytes.Buffer
	if err := eval.WriteText(&text, m); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if s := m.BagenV1; s != nil {
		text.WriteString("\n")
		if err := s.WriteText(&text); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	page := struct {
		Run                        eval.Run
		Text, Spend                string
		Optimism, Failure, Scatter template.HTML
		Curve                      template.HTML
	}{
		Run:      run,
		Text:     text.String(),
		Spend:    spend(run.Spend),
		Optimism: optimismPlot(m.Bins),
		Failure:  failurePlot(m.Bins),
		Scatter:  scatterPlot(m),
		Curve:    curvePlot(m.EarlyStop.Curve),
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// spend summarises what the answers cost, "" when unknown.
func spend(s *eval.Spend) string {
	if s == nil {
		return ""
	}
	out := fmt.Sprintf("%d requests; tokens: %d prompt, %d completion", s.Requests, s.PromptTokens, s.CompletionTokens)
	if s.Dollars != nil {
		out += fmt.Sprintf(", $%.4f", *s.Dollars)
	}
	return out
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>bagen-data eval: {{.Run.Name}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #212529; max-width: 1100px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
pre { background: #f8f9fa; padding: 1em; overflow-x: auto; font-size: 0.85em; }
.plots { display: flex; flex-wrap: wrap; gap: 1.5em; }
figure { margin: 0; } figcaption { font-size: 0.85em; max-width: 440px; color: #495057; }
svg text { font-family: system-ui, sans-serif; font-size: 11px; fill: #212529; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; font-size: 0.9em; }
dt { font-weight: 600; }
</style>
</head>
<body>
<h1>Budget-estimation evaluation: {{.Run.Name}}</h1>
<dl>
<dt>data</dt><dd>{{.Run.Data}}</dd>
{{- if .Run.Predictions}}<dt>predictions</dt><dd>{{.Run.Predictions}}</dd>{{end}}
{{- if .Run.Model}}<dt>model</dt><dd>{{.Run.Model}}</dd>{{end}}
{{- if .Run.Endpoint}}<dt>endpoint</dt><dd>{{.Run.Endpoint}}</dd>{{end}}
{{- if .Spend}}<dt>spend</dt><dd>{{.Spend}}</dd>{{end}}
</dl>
<h2>Plots</h2>
<div class="plots">
<figure>{{.Optimism}}<figcaption>Interval misses on possible probes by rollout progress: optimistic (midpoint below the true remaining tokens) vs conservative (above), as shares of the misses in each bin.</figcaption></figure>
<figure>{{.Failure}}<figcaption>Failure timing: share of probes on failed trajectories predicted <code>impossible</code>, by rollout progress.</figcaption></figure>
<figure>{{.Scatter}}<figcaption>Coverage against median midpoint relative error on possible probes, one point per progress bin (1–5) and overall.</figcaption></figure>
{{- if .Curve}}
<figure>{{.Curve}}<figcaption>Early stop under stricter rules: stop at the first probe answered <code>impossible</code> or whose upper bound H is at least θ × the budget left; the tokens saved on failed runs against the share of successful runs aborted. The large point is the paper's rule (impossible only).</figcaption></figure>
{{- end}}
</div>
<h2>Metrics</h2>
<pre>{{.Text}}</pre>
</body>
</html>
`))

// WriteCompare renders several runs as one page: the comparison tables of
// eval.WriteCompare, then each run's plots in a column of its own, side by
// side, in the order given.
func WriteCompare(w io.Writer, runs []eval.Run) error {
	var text bytes.Buffer
	if err := eval.WriteCompare(&text, runs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	type column struct {
		Run                        eval.Run
		BagenV1                    string
		Optimism, Failure, Scatter template.HTML
		Curve                      template.HTML
	}
	page := struct {
		Text    string
		Columns []column
	}{Text: text.String()}
	for _, r := range runs {
		col := column{Run: r, Optimism: optimismPlot(r.Metrics.Bins), Failure: failurePlot(r.Metrics.Bins), Scatter: scatterPlot(r.Metrics),
			Curve: curvePlot(r.Metrics.EarlyStop.Curve)}
		if s := r.Metrics.BagenV1; s != nil {
			var b bytes.Buffer
			if err := s.WriteText(&b); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			col.BagenV1 = b.String()
		}
		page.Columns = append(page.Columns, col)
	}
	var buf bytes.Buffer
	if err := compareTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

var compareTemplate = template.Must(template.New("compare").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>bagen-data eval: {{len .Columns}} runs</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #212529; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: 0.4em 0; }
pre { background: #f8f9fa; padding: 1em; overflow-x: auto; font-size: 0.85em; }
.runs { display: flex; gap: 1.5em; overflow-x: auto; align-items: flex-start; }
.run { flex: 0 0 auto; width: 460px; }
figure { margin: 0 0 1em 0; } figcaption { font-size: 0.8em; color: #495057; }
svg text { font-family: system-ui, sans-serif; font-size: 11px; fill: #212529; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; font-size: 0.85em; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>Budget-estimation evaluation: {{len .Columns}} runs</h1>
<pre>{{.Text}}</pre>
<div class="runs">
{{- range .Columns}}
<section class="run">
<h2>{{.Run.Name}}</h2>
<dl>
<dt>data</dt><dd>{{.Run.Data}}</dd>
{{- if .Run.Model}}<dt>model</dt><dd>{{.Run.Model}}</dd>{{end}}
{{- if .Run.Endpoint}}<dt>endpoint</dt><dd>{{.Run.Endpoint}}</dd>{{end}}
</dl>
{{- if .BagenV1}}
<pre>{{.BagenV1}}</pre>
{{- end}}
<figure>{{.Optimism}}<figcaption>Optimistic vs conservative interval misses by rollout progress.</figcaption></figure>
<figure>{{.Failure}}<figcaption>Failure timing: failed-trajectory probes predicted impossible, by progress.</figcaption></figure>
<figure>{{.Scatter}}<figcaption>Coverage against median midpoint relative error, per progress bin and overall.</figcaption></figure>
{{- if .Curve}}
<figure>{{.Curve}}<figcaption>Tokens saved on failed runs against successful runs aborted, per stopping rule; large: the paper's.</figcaption></figure>
{{- end}}
</section>
{{- end}}
</div>
</body>
</html>
`))
