package grpo

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"bagen-data/internal/atomicfile"
)

// WritePlot renders the training log at logPath as a self-contained HTML
// page (inline SVG, no scripts or external assets) at htmlPath: the
// sampled reward per GRPO step, and per epoch the greedy head's training
// reward and its eval reward R, accuracy and coverage.
func WritePlot(htmlPath, logPath string) error {
	recs, err := ReadLog(logPath)
	if err != nil {
		return err
	}
	return atomicfile.Write(htmlPath, func(w io.Writer) error { return Plot(w, recs) })
}

// series is one line of a chart; NaN points are gaps.
type series struct {
	name  string
	color string
	y     []float64
}

// Plot writes the page for recs to w.
func Plot(w io.Writer, recs []Record) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>bagen-data grpo training</title>
<style>body{font:14px sans-serif;margin:24px}svg{display:block;margin:8px 0 24px}</style>
</head><body>
<h1>GRPO training</h1>
`)
	steps, stepX := grpoSeries(recs)
	b.WriteString("<h2>Sampled reward per GRPO step</h2>\n")
	chartLabels(&b, stepX, steps)
	epochs, labels := epochSeries(recs)
	b.WriteString("<h2>Greedy head per epoch</h2>\n")
	chartLabels(&b, labels, epochs)
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func grpoSeries(recs []Record) ([]series, []string) {
	all := series{name: "mean reward", color: "#1f77b4"}
	pos := series{name: "possible probes", color: "#2ca02c"}
	neg := series{name: "impossible probes", color: "#d62728"}
	var x []string
	for _, r := range recs {
		if r.GRPO == nil {
			continue
		}
		all.y = append(all.y, float64(r.GRPO.Reward))
		pos.y = append(pos.y, float64(r.GRPO.RewardPossible))
		neg.y = append(neg.y, float64(r.GRPO.RewardImpossible))
		x = append(x, strconv.Itoa(r.Step))
	}
	return []series{all, pos, neg}, x
}

func epochSeries(recs []Record) ([]series, []string) {
	train := series{name: "train greedy reward", color: "#1f77b4"}
	rew := series{name: "eval R", color: "#ff7f0e"}
	acc := series{name: "eval accuracy", color: "#2ca02c"}
	cov := series{name: "eval coverage", color: "#9467bd"}
	var labels []string
	for _, r := range recs {
		if r.Eval == nil {
			continue
		}
		train.y = append(train.y, float64(r.Eval.Train.Reward))
		rew.y = append(rew.y, float64(r.Eval.Eval["reward"]))
		acc.y = append(acc.y, float64(r.Eval.Eval["accuracy"]))
		cov.y = append(cov.y, float64(r.Eval.Eval["coverage"]))
		label := r.Phase
		if r.Phase != "init" {
			label = fmt.Sprintf("%s %d", r.Phase, r.Epoch)
		}
		labels = append(labels, label)
	}
	return []series{train, rew, acc, cov}, labels
}

// chartLabels draws ss over the categorical x axis labels, y from 0 to the
// largest value (at least 1).
func chartLabels(b *strings.Builder, labels []string, ss []series) {
	const w, h, left, right, top, bottom = 720.0, 300.0, 50.0, 180.0, 10.0, 40.0
	if len(labels) == 0 {
		b.WriteString("<p>No data yet.</p>\n")
		return
	}
	ymax := 1.0
	for _, s := range ss {
		for _, v := range s.y {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				ymax = math.Max(ymax, v)
			}
		}
	}
	pw, ph := w-left-right, h-top-bottom
	px := func(i int) float64 {
		if len(labels) == 1 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(len(labels)-1)
	}
	py := func(v float64) float64 { return top + ph*(1-v/ymax) }
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g">`+"\n", w, h, w, h)
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`+"\n", left, top, pw, ph)
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(b, `<text x="%g" y="%s" font-size="11" text-anchor="end">%s</text>`+"\n", left-4, f2(py(v)+4), f2(v))
	}
	every := max(1, len(labels)/10)
	for i := 0; i < len(labels); i += every {
		fmt.Fprintf(b, `<text x="%s" y="%g" font-size="11" text-anchor="middle">%s</text>`+"\n", f2(px(i)), h-bottom+16, html.EscapeString(labels[i]))
	}
	for k, s := range ss {
		var pts []string
		flush := func() {
			switch len(pts) {
			case 0:
			case 1: // an isolated point: a dot, since a line needs two
				xy := strings.Split(pts[0], ",")
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], s.color)
			default:
				fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
			}
			pts = nil
		}
		for i, v := range s.y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				flush()
				continue
			}
			pts = append(pts, f2(px(i))+","+f2(py(v)))
		}
		flush()
		ly := top + 16*float64(k+1)
		fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/>`, w-right+10, ly-4, w-right+30, ly-4, s.color)
		fmt.Fprintf(b, `<text x="%g" y="%g" font-size="12">%s</text>`+"\n", w-right+34, ly, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
