package cli

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"bagen-data/grpo"
	"bagen-data/grpo/server"
	"bagen-data/probes"
)

// serveHead serves a random head that learned on kind with the real grpo
// server on loopback (its /v1/models needs no Ollama) and returns its
// /v1 URL.
func serveHead(t *testing.T, kind probes.AccountingKind) string {
	t.Helper()
	st := &grpo.State{Model: "tiny-qwen", Accounting: kind,
		Policy: grpo.NewHead(64+grpo.NumNumeric, 8, grpo.DefaultBins, len(grpo.DefaultWidths), rand.New(rand.NewPCG(1, 2)))}
	u, _ := url.Parse("http://127.0.0.1:1")
	est, err := grpo.NewEstimator(&grpo.Encoder{Client: api.NewClient(u, http.DefaultClient), Model: "tiny-qwen", Retries: -1}, st, 7)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, server.Config{Estimator: est, Name: "head"}) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String() + "/v1"
}

// TestGuardEstimatorAccounting: the guard says at start whether its
// estimator learned on its own accounting, the replay: a head trained on
// build's message rule gets a warning, one trained on the replay none, an
// estimator that does not say a note; --estimator-accounting overrides
// what the estimator lists.
func TestGuardEstimatorAccounting(t *testing.T) {
	message, replay := serveHead(t, probes.AccountingMessage), serveHead(t, probes.AccountingReplay)
	llm := startScriptedEstimator(t, "<answer>impossible</answer>")
	const warning = "bagen-data guard: warning: token accounting mismatch: the estimator learned on message numbers and is asked with replay numbers"
	const note = "bagen-data guard: note: the estimator does not say which token accounting it learned on"
	for _, c := range []struct {
		name string
		args []string
		want string // "" for no line on accounting
	}{
		{"message head", []string{"--estimator", message}, warning},
		{"replay head", []string{"--estimator", replay}, ""},
		{"no listing", []string{"--estimator", llm.URL}, note},
		{"flag over listing", []string{"--estimator", message, "--estimator-accounting", "replay"}, ""},
		{"flag", []string{"--estimator", llm.URL, "--estimator-accounting", "message"}, warning},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stop := startGuard(t, append([]string{"--upstream", "http://127.0.0.1:1", "--estimator-model", "head"}, c.args...)...)
			log, err := stop()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == "" && strings.Contains(log, "accounting"):
				t.Errorf("log says:\n%s\nwant nothing of the accounting", log)
			case c.want != "" && !strings.Contains(log, c.want):
				t.Errorf("log:\n%s\nwant %q", log, c.want)
			}
		})
	}
	if _, err := run(t, "guard", "--upstream", "http://127.0.0.1:1", "--estimator-accounting", "replay"); err == nil || err.Error() != "estimator-accounting: given without --estimator" {
		t.Errorf("--estimator-accounting alone: %v", err)
	}
	if _, err := run(t, "guard", "--upstream", "http://127.0.0.1:1", "--estimator", llm.URL, "--estimator-model", "head", "--estimator-accounting", "api"); err == nil || !strings.Contains(err.Error(), `estimator-accounting: accounting "api"`) {
		t.Errorf("--estimator-accounting api: %v", err)
	}
}
