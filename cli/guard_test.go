package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"bagen-data/guard"
)

// TestGuardFlags: every bad flag is reported at once, by name.
func TestGuardFlags(t *testing.T) {
	_, err := run(t, "guard", "--upstream", "ftp://x", "--policy", "halt", "--stop-as", "crash", "--every", "-1", "--task", "chess")
	want := []string{
		`policy: want log, warn or stop, got "halt"`,
		`stop-as: want auto, message or context-limit, got "crash"`,
		`task "chess": want one of searchr1, sokoban, swebench, warehouse`,
		"--every: want ≥ 0, got -1",
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v: want it to say %q", err, w)
		}
	}
	_, err = run(t, "guard", "--upstream", "ftp://x")
	if err == nil || err.Error() != `guard: --upstream "ftp://x": want http(s)://host[:port]` {
		t.Errorf("error %v", err)
	}
	_, err = run(t, "guard", "--upstream", "http://127.0.0.1:1", "--policy", "stop")
	if err == nil || err.Error() != "guard: --policy stop: needs --estimator, --budget, --budget-usd or --loop" {
		t.Errorf("error %v", err)
	}
	prices := filepath.Join(t.TempDir(), "prices.txt")
	os.WriteFile(prices, []byte("# ok\nm 1 0.5 4\ngpt-5* 1 x 4\n"), 0o600)
	_, err = run(t, "guard", "--upstream", "http://127.0.0.1:1", "--warn-at", "80,abc", "--prices", prices, "--budget-usd", "1", "--loop", "-1")
	for _, w := range []string{
		`warn-at: item 2: want a percentage in (0, 1000], got "abc"`,
		prices + `:3: cached_input: want dollars per million tokens in [0, 1e+06], got "x"`,
		"loop: want ≥ 0, got -1",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v: want it to say %q", err, w)
		}
	}
	_, err = run(t, "guard", "--upstream", "http://127.0.0.1:1", "--budget-usd", "1")
	if err == nil || !strings.Contains(err.Error(), "budget-usd: needs --prices FILE") {
		t.Errorf("error %v: want --budget-usd without --prices refused", err)
	}
}

// TestConvertGuardLedger: a ledger the guard wrote converts to one
// trajectory per session with the upstream's usage and metadata.guard.
func TestConvertGuardLedger(t *testing.T) {
	up := stepModel(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	g, err := guard.New(guard.Config{Upstream: up.URL, Ledger: ledger, Budget: 900, Policy: guard.Stop})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	history := `{"role":"user","content":"go"}`
	for turn := 1; turn <= 2; turn++ {
		body := `{"model":"m","messages":[` + history + `]}`
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		history += fmt.Sprintf(`,{"role":"assistant","content":"step %d"},{"role":"user","content":"more"}`, turn)
	}
	srv.Close()
	g.Close()
	out := filepath.Join(dir, "runs.jsonl")
	summary, err := run(t, "convert", "-q", "-i", ledger, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	got := string(data)
	id := strings.Split(strings.Split(got, `"custom_id":"`)[1], `"`)[0]
	want := `{"custom_id":"` + id + `","budget":900,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"step 1"},{"role":"user","content":"more"},{"role":"assistant","content":"step 2"}],` +
		`"per_turn_api_tokens":[{"input":100,"output":7,"reasoning":null,"cached":0},{"input":200,"output":7,"reasoning":null,"cached":0}],"api_inputs":"request",` +
		`"metadata":{"success":false,"outcome_source":"none","guard":{"policy":"stop","budget":900,"estimates":[],"stopped_after_turn":null}}}` + "\n"
	if got != want {
		t.Errorf("convert wrote\n%s\nwant\n%s\n(summary %q)", got, want, summary)
	}
}

// stepModel is a Chat Completions upstream on loopback whose k-th answer
// (from 1) is "step k", id ck, with 100·k prompt tokens and 7 completion
// tokens.
func stepModel(t *testing.T) *httptest.Server {
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		k := n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c%d","choices":[{"index":0,"message":{"role":"assistant","content":"step %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":7}}`, k, k, 100*k)
	}))
	t.Cleanup(up.Close)
	return up
}
