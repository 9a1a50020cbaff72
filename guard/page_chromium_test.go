package guard

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/chromiumtest"
)

// pageBudget is the virtual time the page runs for in Chromium: long
// enough for its first poll and two refreshes (every 2 s).
const pageBudget = "--virtual-time-budget=5000"

// TestPageChromium loads the live page after the page's traffic in
// headless Chromium and reads the numbers its script drew: they are the
// JSON's and /metrics' counters, and no User-Agent or model name became
// markup.
func TestPageChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	r := pageTraffic(t, Config{})
	dom := string(chromiumtest.Run(t, bin, pageBudget, "--dump-dom", r.url+"/"))
	p, _ := getPage(t, r.url)
	if diff := cmp.Diff(pageTotalsAsMetrics(p), metricTotals(t, r.url)); diff != "" {
		t.Fatalf("JSON totals against /metrics (-JSON +metrics):\n%s", diff)
	}
	if polls := attrInt(t, dom, `<body data-polls="(\d+)"`); polls < 2 {
		t.Errorf("the page polled /sessions.json %d times in 5 s, want at least 2 (every 2 s)", polls)
	}
	m := metricTotals(t, r.url)
	for _, c := range []struct {
		id   string
		want int64
	}{
		{"sessions", int64(m.Sessions)}, {"turns", int64(p.Totals.Turns)}, {"spent", p.Totals.Spent},
		{"input", int64(m.Tokens["input"])}, {"output", int64(m.Tokens["output"])},
		{"cached", int64(m.Tokens["cached"])}, {"reasoning", int64(m.Tokens["reasoning"])},
		{"estimates", int64(m.Verdicts["interval"] + m.Verdicts["impossible"])}, {"stops", int64(m.Stops)},
	} {
		if got := shownTotal(t, dom, c.id); got != c.want {
			t.Errorf("page total %s: %d, want %d", c.id, got, c.want)
		}
	}
	rows := regexp.MustCompile(`<tr data-session="([^"]+)">(.*?)</tr>`).FindAllStringSubmatch(dom, -1)
	if len(rows) != len(p.Sessions) {
		t.Fatalf("page rows: %d, want the JSON's %d sessions", len(rows), len(p.Sessions))
	}
	for i, s := range p.Sessions {
		if rows[i][1] != s.ID {
			t.Errorf("row %d: session %s, want %s (most recent first)", i, rows[i][1], s.ID)
		}
		checkRow(t, rows[i][2], s)
	}
	checkNoMarkup(t, dom)
}

// checkRow compares a drawn row with its session in the JSON.
func checkRow(t *testing.T, row string, s SessionView) {
	t.Helper()
	got := map[string]int64{
		"turns":  shownCell(t, row, "turns"),
		"calls":  shownCell(t, row, "calls"),
		"spent":  attrInt(t, row, `data-field="spent" data-value="(\d+)"`),
		"input":  attrInt(t, row, `data-input="(\d+)"`),
		"output": attrInt(t, row, `data-output="(\d+)"`),
	}
	want := map[string]int64{"turns": int64(s.Turns), "calls": int64(s.Calls), "spent": s.Spent,
		"input": s.Tokens.Input, "output": s.Tokens.Output}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row %s (-JSON +page):\n%s", s.ID, diff)
	}
	shown := comma(s.Spent) + " of " + comma(s.Budget)
	if !strings.Contains(row, shown) || !strings.Contains(row, comma(s.Tokens.Input)+" / "+comma(s.Tokens.Output)) {
		t.Errorf("row %s does not show %q and the tokens %s / %s:\n%s", s.ID, shown, comma(s.Tokens.Input), comma(s.Tokens.Output), row)
	}
	if !strings.Contains(row, `data-verdict="`+s.Estimate.Verdict+`"`) {
		t.Errorf("row %s: latest verdict not %s:\n%s", s.ID, s.Estimate.Verdict, row)
	}
	if (s.Stop != nil) != strings.Contains(row, `data-refused="true"`) {
		t.Errorf("row %s: stop %+v, drawn:\n%s", s.ID, s.Stop, row)
	}
}

// checkNoMarkup: the markup in a User-Agent and a model name is text on
// the page; their scripts did not run.
func checkNoMarkup(t *testing.T, dom string) {
	t.Helper()
	for _, bad := range []string{"<img", "pwned</title>"} {
		if strings.Contains(dom, bad) {
			t.Errorf("the page holds %q: a request's string became markup", bad)
		}
	}
	if n := strings.Count(dom, "<script"); n != 1 {
		t.Errorf("%d script elements, want the page's own", n)
	}
	for _, text := range []string{`&lt;script&gt;document.title="pwned"&lt;/script&gt;&lt;img src=x`, `m-a"&gt;&lt;img src=x onerror=alert(1)&gt;`} {
		if !strings.Contains(dom, text) {
			t.Errorf("the page does not show %q as text", text)
		}
	}
}

// TestPageScreenshot renders the page to a PNG: it decodes, is not
// blank, and paints the budget bars of the running session (green, under
// 80% of the budget) and of the stopped one (red).
func TestPageScreenshot(t *testing.T) {
	bin := chromiumtest.Find(t)
	r := pageTraffic(t, Config{})
	img := chromiumtest.Screenshot(t, bin, r.url+"/", 1400, 600, pageBudget)
	colors := chromiumtest.Colors(img)
	if len(colors) < 20 || colors["#f6f8fa"] > img.Bounds().Dx()*img.Bounds().Dy()*9/10 {
		t.Errorf("the screenshot is blank: %d colours, %d background pixels", len(colors), colors["#f6f8fa"])
	}
	// A bar is 220 × 12 px; a's is 28.5% full, b's 24.6%.
	for name, c := range map[string]string{"running (green)": "#2e7d32", "stopped (red)": "#c62828"} {
		if colors[c] < 400 {
			t.Errorf("%s bar %s: %d pixels painted, want at least 400", name, c, colors[c])
		}
	}
}

// shownTotal is a total card's value, checked against its text.
func shownTotal(t *testing.T, dom, id string) int64 {
	t.Helper()
	return shown(t, dom, `id="total-`+id+`"`)
}

// shownCell is the value of a row's cell, checked against its text.
func shownCell(t *testing.T, row, field string) int64 {
	t.Helper()
	return shown(t, row, `data-field="`+field+`"`)
}

// shown is the data-value of the element whose attributes start with
// attr, checked against its text.
func shown(t *testing.T, s, attr string) int64 {
	t.Helper()
	m := regexp.MustCompile(attr + ` data-value="(\d+)">([^<]*)<`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s on the page", attr)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	if m[2] != comma(n) {
		t.Errorf("%s shows %q, want %q", attr, m[2], comma(n))
	}
	return n
}

func attrInt(t *testing.T, s, re string) int64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in %.300s", re, s)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// comma writes n with a comma between groups of three digits.
func comma(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
