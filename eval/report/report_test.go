package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bagen-data/eval"
	"bagen-data/internal/chromiumtest"
)

// sample is a small scored table with misses on both sides, a failed
// trajectory caught late and intervals in every progress bin but the last.
func sample() eval.Run {
	var rows []eval.Scored
	add := func(traj string, p, T, r int64, possible bool, answer string) {
		t := eval.Truth{CustomID: fmt.Sprintf("%s_probe_after_turn_%d", traj, p), TrajectoryID: traj,
			ProbeAfterTurn: p, TotalTurns: T, TokensUsed: 100, Budget: 1200, Target: eval.Tokens(r, possible)}
		rows = append(rows, eval.NewScored(t, "<answer>"+answer+"</answer>"))
	}
	okLow, okHigh := []int64{500, 300, 500, 100}, []int64{1100, 700, 700, 300}
	for p := int64(0); p < 4; p++ {
		// r = 1000, 800, 600, 400: covered, optimistic miss, covered, optimistic miss.
		add("ok", p, 5, 1000-200*p, true, fmt.Sprintf("[%d, %d]", okLow[p], okHigh[p]))
		// r = 800, 650, 500, 350 under [900, 1000]: conservative misses.
		add("ok2", p, 5, 800-150*p, true, "[900, 1000]")
		answer := "[100, 200]"
		if p >= 2 {
			answer = "impossible"
		}
		add("bad", p, 5, 2000-300*p, false, answer)
	}
	return eval.Run{Name: "sample <run>", Data: "eval/test.parquet", Predictions: "preds.jsonl", Metrics: eval.Compute(rows)}
}

func TestWriteSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sample()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<svg "); n != 4 {
		t.Errorf("got %d <svg> elements, want 4", n)
	}
	for _, bad := range []string{"<script", "<link", "<img", "src=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page refers to outside assets: contains %q", bad)
		}
	}
	if !strings.Contains(page, "sample &lt;run&gt;") {
		t.Errorf("run name not escaped in page")
	}
	var again bytes.Buffer
	Write(&again, sample())
	if again.String() != page {
		t.Errorf("two renderings of the same run differ")
	}
}

func writePage(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, sample()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChromiumDOM loads the page in headless Chromium and counts the SVG
// elements of each plotted series in the DOM Chromium built.
func TestChromiumDOM(t *testing.T) {
	bin := chromiumtest.Find(t)
	dom := string(chromiumtest.Run(t, bin, "--dump-dom", "file://"+writePage(t)))
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(dom, -1)) }
	// sample has misses in bins 0–3 (a bar pair per bin, bin 0's and bin
	// 2's optimistic bars of height 0), failed probes in bins 0–3 (4 points)
	// and intervals in bins 0–3 (4 scatter points and the overall one).
	tests := []struct {
		name string
		re   string
		want int
	}{
		{"svg", `<svg `, 4},
		{"optimistic bars", `<rect [^>]*data-series="optimistic"`, 4},
		{"conservative bars", `<rect [^>]*data-series="conservative"`, 4},
		{"failure points", `<circle [^>]*data-series="failed"`, 4},
		{"failure line", `<path [^>]*data-series="failed-line"`, 1},
		{"scatter bin points", `<circle [^>]*data-series="bin"`, 4},
		{"scatter overall", `<circle [^>]*data-series="overall"`, 1},
		// Nine rules (eval.CurveThresholds): the paper's and eight others,
		// each with both shares defined (ok and ok2 succeed, bad fails).
		{"curve paper point", `<circle [^>]*data-series="curve-paper"`, 1},
		{"curve points", `<circle [^>]*data-series="curve"`, 8},
		{"curve line", `<path [^>]*data-series="curve-line"`, 1},
	}
	for _, tt := range tests {
		if got := count(tt.re); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestChromiumScreenshot renders the page to a PNG and checks the plotted
// colours were painted.
func TestChromiumScreenshot(t *testing.T) {
	bin := chromiumtest.Find(t)
	img := chromiumtest.Screenshot(t, bin, "file://"+writePage(t), 1200, 1400)
	counts := chromiumtest.Colors(img)
	for _, c := range []string{ColorOptimistic, ColorConservative, ColorFailed, ColorBin, ColorOverall, ColorCurve} {
		if counts[c] < 50 {
			t.Errorf("colour %s: %d pixels painted, want at least 50", c, counts[c])
		}
	}
}

func TestTickStep(t *testing.T) {
	tests := []struct {
		name string
		vs   []eval.Num
		want float64
	}{
		{"none", []eval.Num{eval.NaN}, 0.25},
		{"under 100%", []eval.Num{0.42, 0.9}, 0.25},
		{"exactly 100%", []eval.Num{1}, 0.25},
		{"111%", []eval.Num{1.107}, 0.5},
		{"277%", []eval.Num{2.772}, 1},
		{"422%", []eval.Num{4.217}, 1.5},
		{"848%", []eval.Num{8.481}, 2.5},
		{"2000%", []eval.Num{20}, 5},
	}
	for _, tt := range tests {
		if got := tickStep(tt.vs); got != tt.want {
			t.Errorf("%s: tickStep(%v): got %v, want %v", tt.name, tt.vs, got, tt.want)
		}
	}
}

// TestWriteCompareSideBySide draws three runs in three columns of three
// plots each, under the comparison tables.
func TestWriteCompareSideBySide(t *testing.T) {
	a, b, c := sample(), sample(), sample()
	a.Name, b.Name, c.Name = "qwen", "gpt <mini>", "claude"
	dollars := 0.25
	b.Spend = &eval.Spend{Requests: 12, Dollars: &dollars}
	var buf bytes.Buffer
	if err := WriteCompare(&buf, []eval.Run{a, b, c}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, `<section class="run">`); n != 3 {
		t.Errorf("got %d run columns, want 3", n)
	}
	if n := strings.Count(page, "<svg "); n != 12 {
		t.Errorf("got %d <svg> elements, want 12", n)
	}
	for _, want := range []string{"overall layout", "SFT/RL sweep layout", "<h2>gpt &lt;mini&gt;</h2>", "<title>bagen-data eval: 3 runs</title>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if i, j := strings.Index(page, "<h2>qwen</h2>"), strings.Index(page, "<h2>claude</h2>"); i < 0 || j < i {
		t.Errorf("columns not in the order given")
	}
	var single bytes.Buffer
	if err := Write(&single, b); err != nil || !strings.Contains(single.String(), "<dt>spend</dt><dd>12 requests; tokens: 0 prompt, 0 completion, $0.2500</dd>") {
		t.Errorf("single-run page lacks the spend: %v", err)
	}
}
