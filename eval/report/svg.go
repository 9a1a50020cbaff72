package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"

	"bagen-data/eval"
)

// Plot geometry, in SVG user units.
const (
	width, height = 440.0, 280.0
	left, right   = 50.0, 30.0
	top, bottom   = 46.0, 45.0
	plotW         = width - left - right
	plotH         = height - top - bottom
)

// canvas accumulates SVG elements.
type canvas struct{ b strings.Builder }

func newCanvas(title string) *canvas {
	c := &canvas{}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" role="img">`, width, height, width, height)
	fmt.Fprintf(&c.b, `<title>%s</title>`, html.EscapeString(title))
	c.text(width/2, 16, "middle", title)
	return c
}

func (c *canvas) text(x, y float64, anchor, s string) {
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, x, y, anchor, html.EscapeString(s))
}

func (c *canvas) rect(x, y, w, h float64, fill, series string) {
	fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" data-series="%s"/>`, x, y, w, h, fill, series)
}

func (c *canvas) path(d, stroke string, w float64, series string) {
	fmt.Fprintf(&c.b, `<path d="%s" fill="none" stroke="%s" stroke-width="%g" data-series="%s"/>`, d, stroke, w, series)
}

func (c *canvas) circle(x, y, r float64, fill, series string) {
	fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s" data-series="%s"/>`, x, y, r, fill, series)
}

// axes draws the frame, y ticks at 0, 25, …, 100% of yMax and the labels.
func (c *canvas) axes(xLabel, yLabel string, yMax float64) {
	for i := 0; i <= 4; i++ {
		y := top + plotH*(1-float64(i)/4)
		c.path(fmt.Sprintf("M%.1f %.1fH%.1f", left, y, left+plotW), "#dee2e6", 1, "grid")
		c.text(left-6, y+4, "end", fmt.Sprintf("%.0f%%", 100*yMax*float64(i)/4))
	}
	c.path(fmt.Sprintf("M%.1f %.1fV%.1fH%.1f", left, top, top+plotH, left+plotW), "#495057", 1, "axis")
	c.text(left+plotW/2, height-8, "middle", xLabel)
	fmt.Fprintf(&c.b, `<text x="12" y="%.1f" text-anchor="middle" transform="rotate(-90 12 %.1f)">%s</text>`,
		top+plotH/2, top+plotH/2, html.EscapeString(yLabel))
}

func (c *canvas) html() template.HTML {
	c.b.WriteString(`</svg>`)
	// Safe: built from escaped text and formatted numbers only.
	return template.HTML(c.b.String())
}

// binLabel names a progress bin, e.g. "0.2-0.4".
func binLabel(b eval.Bin) string { return fmt.Sprintf("%.1f-%.1f", b.Lo, b.Hi) }

// value maps an undefined Num to 0 for drawing and reports whether it was
// defined.
func value(n eval.Num) (float64, bool) {
	if !n.Defined() {
		return 0, false
	}
	return float64(n), true
}

func optimismPlot(bins []eval.Bin) template.HTML {
	c := newCanvas("Optimism by rollout progress")
	c.axes("rollout progress (probe_after_turn / total_turns)", "share of interval misses", 1)
	slot := plotW / float64(max(1, len(bins)))
	bar := slot * 0.35
	for i, b := range bins {
		x := left + slot*float64(i) + slot*0.15
		for j, s := range []struct {
			v      eval.Num
			color  string
			series string
		}{{b.OptimisticShare, ColorOptimistic, "optimistic"}, {b.ConservativeShare, ColorConservative, "conservative"}} {
			v, ok := value(s.v)
			if !ok {
				continue
			}
			h := plotH * v
			c.rect(x+bar*float64(j), top+plotH-h, bar, h, s.color, s.series)
		}
		label := binLabel(b)
		if b.Misses == 0 {
			label += " (n/a)"
		}
		c.text(left+slot*(float64(i)+0.5), top+plotH+14, "middle", label)
	}
	c.rect(left+plotW-160, 24, 10, 10, ColorOptimistic, "legend")
	c.text(left+plotW-146, 33, "start", "optimistic")
	c.rect(left+plotW-80, 24, 10, 10, ColorConservative, "legend")
	c.text(left+plotW-66, 33, "start", "conservative")
	return c.html()
}

func failurePlot(bins []eval.Bin) template.HTML {
	c := newCanvas("Failure timing on failed trajectories")
	c.axes("rollout progress (probe_after_turn / total_turns)", "predicted impossible", 1)
	slot := plotW / float64(max(1, len(bins)))
	var d strings.Builder
	for i, b := range bins {
		x := left + slot*(float64(i)+0.5)
		c.text(x, top+plotH+14, "middle", binLabel(b))
		v, ok := value(b.FailedAccuracy)
		if !ok {
			continue
		}
		y := top + plotH*(1-v)
		if d.Len() == 0 {
			fmt.Fprintf(&d, "M%.1f %.1f", x, y)
		} else {
			fmt.Fprintf(&d, "L%.1f %.1f", x, y)
		}
		c.circle(x, y, 5, ColorFailed, "failed")
		c.text(x, y-9, "middle", fmt.Sprintf("%d/%d", b.FailedCaught, b.FailedProbes))
	}
	if d.Len() > 0 {
		c.path(d.String(), ColorFailed, 2.5, "failed-line")
	}
	return c.html()
}

func scatterPlot(m eval.Metrics) template.HTML {
	c := newCanvas("Coverage vs midpoint relative error")
	xMax := 4 * tickStep(append(binMRE(m.Bins), m.MREP50))
	c.axes("", "coverage", 1)
	for i := 0; i <= 4; i++ {
		x := left + plotW*float64(i)/4
		c.text(x, top+plotH+14, "middle", fmt.Sprintf("%g%%", 100*xMax*float64(i)/4))
	}
	c.text(left+plotW/2, height-8, "middle", "MRE P50")
	point := func(mre, cov eval.Num, r float64, color, series, label string) {
		x, okx := value(mre)
		y, oky := value(cov)
		if !okx || !oky {
			return
		}
		px, py := left+plotW*x/xMax, top+plotH*(1-y)
		c.circle(px, py, r, color, series)
		c.text(px+r+3, py+4, "start", label)
	}
	for i, b := range m.Bins {
		point(b.MREP50, b.Coverage, 5, ColorBin, "bin", fmt.Sprintf("%d", i+1))
	}
	point(m.MREP50, m.Coverage, 8, ColorOverall, "overall", "all")
	return c.html()
}

func binMRE(bins []eval.Bin) []eval.Num {
	out := make([]eval.Num, len(bins))
	for i, b := range bins {
		out[i] = b.MREP50
	}
	return out
}

// tickStep returns the x tick step of the MRE axis: the smallest of 0.25,
// 0.5, 1, 1.5, 2.5, 5, 10, 15, 25, … whose four steps reach the largest
// defined value.
func tickStep(vs []eval.Num) float64 {
	top := 0.0
	for _, n := range vs {
		if v, ok := value(n); ok {
			top = math.Max(top, v)
		}
	}
	for scale := 1.0; ; scale *= 10 {
		for _, s := range []float64{0.25, 0.5, 1, 1.5} {
			if 4*s*scale >= top {
				return s * scale
			}
		}
	}
}

// curvePlot draws the early stop's savings-versus-abort curve: one point
// per stopping rule (eval.CurveThresholds), the saved share of the failed
// runs' tokens against the share of successful runs aborted, the paper's
// rule (impossible only) drawn larger. Empty when the run has no curve.
func curvePlot(points []eval.CurvePoint) template.HTML {
	if len(points) == 0 {
		return ""
	}
	c := newCanvas("Savings vs aborted successful runs")
	c.axes("", "tokens saved on failed runs", 1)
	for i := 0; i <= 4; i++ {
		x := left + plotW*float64(i)/4
		c.text(x, top+plotH+14, "middle", fmt.Sprintf("%.0f%%", 25*float64(i)))
	}
	c.text(left+plotW/2, height-8, "middle", "successful runs aborted")
	var d strings.Builder
	for _, p := range points {
		x, okx := value(p.AbortedSuccessfulShare)
		y, oky := value(p.SavedShare)
		if !okx || !oky {
			continue
		}
		px, py := left+plotW*x, top+plotH*(1-y)
		if d.Len() == 0 {
			fmt.Fprintf(&d, "M%.1f %.1f", px, py)
		} else {
			fmt.Fprintf(&d, "L%.1f %.1f", px, py)
		}
		label, r, series := "θ "+strconv.FormatFloat(float64(p.Upper), 'g', -1, 64), 4.0, "curve"
		if !p.Upper.Defined() {
			label, r, series = "impossible", 7, "curve-paper"
		}
		c.circle(px, py, r, ColorCurve, series)
		c.text(px+r+3, py+4, "start", label)
	}
	if d.Len() > 0 {
		c.path(d.String(), ColorCurve, 2, "curve-line")
	}
	return c.html()
}
