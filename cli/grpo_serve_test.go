package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/grpo"
	"bagen-data/internal/ollamatest"
	"bagen-data/rollout"
)

// lockedBuffer is a bytes.Buffer safe for a server's goroutine to write
// while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveGRPO runs `bagen-data grpo serve` with args on a free loopback port
// until the test ends and returns its /v1 URL; stop cancels it (as
// SIGTERM does) and returns the command's error and stderr.
func serveGRPO(t *testing.T, args ...string) (string, func() (string, error)) {
	t.Helper()
	argv := append([]string{"grpo", "serve", "--listen", "127.0.0.1:0", "--drain-grace", "0"}, args...)
	return runServer(t, "grpo serve", argv, regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/v1)\n`))
}

// runServer runs the command argv until the test ends and returns the URL
// that listening, matched by the first group of re in its output, prints;
// stop cancels it (as SIGTERM does) and returns its error and output.
func runServer(t *testing.T, name string, argv []string, listening *regexp.Regexp) (string, func() (string, error)) {
	t.Helper()
	app := App()
	var out lockedBuffer
	app.Writer, app.ErrWriter = &out, &out
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, append([]string{"bagen-data"}, argv...))
	}()
	stopped := false
	stop := func() (string, error) {
		if stopped {
			return out.String(), nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return out.String(), err
		case <-time.After(30 * time.Second):
			t.Fatal(name + " did not stop")
			return "", nil
		}
	}
	t.Cleanup(func() { stop() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return m[1], stop
		}
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("%s exited: %v\n%s", name, err, out.String())
		default:
		}
	}
	t.Fatalf("%s did not start listening:\n%s", name, out.String())
	return "", nil
}

// readAnswers reads a predictions file's response text by custom_id, and
// its usage.
func readAnswers(t *testing.T, path string) (map[string]string, map[string][2]int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	texts, usage := map[string]string{}, map[string][2]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p struct {
			CustomID string `json:"custom_id"`
			Response *string
			Error    string
			Usage    *struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil || p.Response == nil || p.Error != "" {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		if _, dup := texts[p.CustomID]; dup {
			t.Fatalf("%s: %s answered twice", path, p.CustomID)
		}
		texts[p.CustomID] = *p.Response
		if p.Usage != nil {
			usage[p.CustomID] = [2]int64{p.Usage.PromptTokens, p.Usage.CompletionTokens}
		}
	}
	return texts, usage
}

// TestGRPOServeEqualsEval trains a short run on the tiny model, answers
// the eval probes offline (grpo eval) and through the served head (eval
// --endpoint against grpo serve), for the final checkpoint and the one
// after SFT, and requires the same answer text for every probe and the
// same metrics; usage is checked against Ollama's own token counts.
func TestGRPOServeEqualsEval(t *testing.T) {
	srv := ollamatest.Start(t)
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	tmp := t.TempDir()
	data, out, cache := filepath.Join(tmp, "data"), filepath.Join(tmp, "run"), filepath.Join(tmp, "cache")
	runGRPOApp(t, "build", "--input", grpoFixtures(t), "--out", data, "--probe-every", "6", "-q")
	runGRPOApp(t, "grpo", "train", "--data", data, "--out", out, "--model", srv.Model,
		"--sft-epochs", "4", "--sft-lr", "0.05", "--epochs", "1", "--sft-batch", "4", "--batch", "4", "--cache", cache, "--name", "served", "--seed", "1", "-q")
	testFile := filepath.Join(data, "eval", "test.parquet")
	all := map[string]int{}
	for i, ckpt := range []string{out, filepath.Join(out, grpo.CheckpointDir, "sft-04")} {
		dir := filepath.Join(tmp, fmt.Sprint("ckpt", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		base, answers := servedEqualsOffline(t, srv, ckpt, cache, testFile, dir)
		kinds := map[string]int{}
		for _, a := range answers {
			kinds[a]++
			all[a]++
		}
		t.Logf("%s: %v", ckpt, kinds)
		if i == 0 {
			checkStreamAndSampling(t, base, testFile)
		}
	}
	// The two checkpoints together answer some probes impossible and
	// others with an interval: the comparison covers both kinds of text.
	if all["<answer>impossible</answer>"] == 0 || len(all) < 2 {
		t.Errorf("the checkpoints answered %v; want impossible for some probes and an interval for others", all)
	}
	checkOllamaDown(t, srv, out, cache, testFile)
}

// checkOllamaDown starts grpo serve with Ollama unreachable: it warns,
// listens, and answers a probe with 503 and the reason.
func checkOllamaDown(t *testing.T, srv *ollamatest.Server, ckpt, cache, testFile string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	t.Setenv("OLLAMA_HOST", closed)
	base, stop := serveGRPO(t, "--checkpoint", ckpt, "--cache", cache, "--name", "served")
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	rows, err := dataset.ReadRL(testFile)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := json.Marshal(rows[0].Prompt)
	code, body := postChat(t, base, `{"model":"served","messages":`+string(msgs)+`}`)
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	json.Unmarshal([]byte(body), &e)
	if code != 503 || e.Error.Code != "ollama_unavailable" || !strings.Contains(e.Error.Message, "connection refused") {
		t.Errorf("Ollama down: %d %s, want 503 ollama_unavailable naming the refused connection", code, body)
	}
	log, err := stop()
	if err != nil || !strings.Contains(log, "; answering 503 until it is reachable\n") {
		t.Errorf("grpo serve with Ollama down: %v\n%s", err, log)
	}
}

func postChat(t *testing.T, base, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// servedEqualsOffline answers file's probes with grpo eval and with eval
// --endpoint against grpo serve of the same checkpoint, checks that they
// agree, stops the server and returns its URL (for checks while it runs,
// pass them before) and the answers.
func servedEqualsOffline(t *testing.T, srv *ollamatest.Server, ckpt, cache, testFile, dir string) (string, map[string]string) {
	t.Helper()
	offJSON, offPreds := filepath.Join(dir, "grpo-eval.json"), filepath.Join(dir, "grpo-preds.jsonl")
	runGRPOApp(t, "grpo", "eval", "--checkpoint", ckpt, "--data", testFile, "--cache", cache,
		"--json", offJSON, "--predictions-out", offPreds, "-q")

	base, stop := serveGRPO(t, "--checkpoint", ckpt, "--cache", cache, "--name", "served")
	onJSON, onPreds := filepath.Join(dir, "endpoint.json"), filepath.Join(dir, "endpoint-preds.jsonl")
	runGRPOApp(t, "eval", "--endpoint", base, "--model", "served", "--data", testFile, "--bootstrap", "0",
		"--predictions-out", onPreds, "--json", onJSON, "-q")

	off, _ := readAnswers(t, offPreds)
	on, usage := readAnswers(t, onPreds)
	if len(off) == 0 || len(on) != len(off) {
		t.Fatalf("%s: %d answers offline, %d served", ckpt, len(off), len(on))
	}
	for id, want := range off {
		if got, ok := on[id]; !ok || got != want {
			t.Errorf("%s: %s: served %q, grpo eval %q", ckpt, id, got, want)
		}
	}
	offRun, onRun := readGRPORun(t, offJSON), readGRPORun(t, onJSON)
	// Only the served answers carry the estimator's usage: the net's
	// token figures are the one difference, by design.
	if n := offRun.Metrics.EarlyStop.Net; n.EstimatorTokens != nil || n.WithoutUsage != n.EstimatorProbes {
		t.Errorf("%s: grpo eval's answers carry usage: %+v", ckpt, n)
	}
	if n := onRun.Metrics.EarlyStop.Net; n.EstimatorTokens == nil || n.WithoutUsage != 0 {
		t.Errorf("%s: the served answers lack usage: %+v", ckpt, n)
	}
	withoutUsage(&offRun.Metrics.EarlyStop)
	withoutUsage(&onRun.Metrics.EarlyStop)
	a, _ := json.Marshal(offRun.Metrics)
	b, _ := json.Marshal(onRun.Metrics)
	if !bytes.Equal(a, b) {
		t.Errorf("%s: metrics differ:\ngrpo eval:       %s\neval --endpoint: %s", ckpt, a, b)
	}
	if onRun.Spend == nil || onRun.Spend.Requests != len(off) {
		t.Errorf("%s: eval --endpoint spend %+v, want %d requests with usage", ckpt, onRun.Spend, len(off))
	}
	checkUsage(t, srv.Client(), srv.Model, testFile, on, usage)
	t.Cleanup(func() {
		log, err := stop()
		if err != nil || !strings.HasSuffix(log, "grpo serve: drained, bye\n") {
			t.Errorf("grpo serve after the drain: %v\n%s", err, log)
		}
	})
	return base, off
}

// checkUsage compares the served usage of a few probes with Ollama's own
// count of the same texts (prompt_eval_count of /api/embed).
func checkUsage(t *testing.T, client *api.Client, model, file string, answers map[string]string, usage map[string][2]int64) {
	t.Helper()
	rows, err := dataset.ReadRL(file)
	if err != nil {
		t.Fatal(err)
	}
	count := func(text string) int64 {
		res, err := client.Embed(context.Background(), &api.EmbedRequest{Model: model, Input: text, Options: map[string]any{"num_ctx": 8192}})
		if err != nil {
			t.Fatal(err)
		}
		return int64(res.PromptEvalCount)
	}
	for _, r := range rows[:3] {
		id := r.ExtraInfo.CustomID
		want := [2]int64{count(grpo.Render(r.Prompt)), count(answers[id])}
		if got := usage[id]; got != want || want[0] < 100 || want[1] < 5 {
			t.Errorf("%s: usage (prompt, completion) %v, Ollama counts %v", id, got, want)
		}
	}
}

// checkStreamAndSampling asks the running server directly: a stream
// carries the same answer as the plain response; a sampled answer with a
// seed is reproducible; sampling without one varies.
func checkStreamAndSampling(t *testing.T, base, file string) {
	t.Helper()
	rows, err := dataset.ReadRL(file)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := json.Marshal(rows[0].Prompt)
	ask := func(extra string) string {
		resp, err := http.Post(base+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"served","messages":`+string(msgs)+extra+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", extra, resp.StatusCode, b)
		}
		return string(b)
	}
	var plain struct {
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(ask("")), &plain); err != nil || len(plain.Choices) != 1 || plain.Choices[0].FinishReason != "stop" || plain.Choices[0].Message.Role != "assistant" ||
		plain.Usage.PromptTokens < 100 || plain.Usage.TotalTokens != plain.Usage.PromptTokens+plain.Usage.CompletionTokens {
		t.Fatalf("plain answer: %+v %v", plain, err)
	}
	answer := plain.Choices[0].Message.Content

	stream := ask(`,"stream":true,"stream_options":{"include_usage":true}`)
	var text, finish string
	var events int
	var streamUsage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	for _, ev := range strings.Split(strings.TrimSuffix(stream, "\n\n"), "\n\n") {
		events++
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("stream event %q is not data", ev)
		}
		if data == "[DONE]" {
			continue
		}
		var c struct {
			Object  string
			Choices []struct {
				Delta        struct{ Content string }
				FinishReason *string `json:"finish_reason"`
			}
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("stream event %q: %v", data, err)
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			streamUsage = c.Usage
		}
	}
	if text != answer || finish != "stop" || events != 5 || !strings.HasSuffix(stream, "data: [DONE]\n\n") ||
		streamUsage == nil || streamUsage.PromptTokens != plain.Usage.PromptTokens || streamUsage.CompletionTokens != plain.Usage.CompletionTokens {
		t.Errorf("stream: text %q finish %q, %d events, usage %+v; want %q, stop, 5 events ending [DONE], usage %+v", text, finish, events, streamUsage, answer, plain.Usage)
	}

	content := func(body string) string {
		var r struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("%s: %v", body, err)
		}
		return r.Choices[0].Message.Content
	}
	if a, b := content(ask(`,"temperature":1.5,"seed":42`)), content(ask(`,"temperature":1.5,"seed":42`)); a != b {
		t.Errorf("seed 42 at temperature 1.5: %q then %q, want the same answer", a, b)
	}
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		seen[content(ask(fmt.Sprintf(`,"temperature":2,"seed":%d`, i)))] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 seeds at temperature 2 gave %d distinct answers, want several", len(seen))
	}
	if got := content(ask(`,"temperature":0,"seed":9`)); got != answer {
		t.Errorf("temperature 0 with a seed: %q, want the greedy %q", got, answer)
	}

	// Error answers of the real server.
	cut := append([]rollout.Message(nil), rows[0].Prompt...)
	last := &cut[len(cut)-1]
	last.Content = strings.Replace(last.Content, "You have completed", "You completed", 1)
	cutMsgs, _ := json.Marshal(cut)
	for _, tt := range []struct {
		body       string
		code       int
		param, err string
	}{
		{`{"model":"other","messages":` + string(msgs) + `}`, 404, "model", "model_not_found"},
		{`{"model":"served","messages":` + string(cutMsgs) + `}`, 400, fmt.Sprintf("messages[%d].content", len(cut)-1), "not_a_budget_probe"},
		{`{"model":"served","messages":` + string(msgs) + `,"temperature":-1}`, 400, "temperature", ""},
	} {
		code, body := postChat(t, base, tt.body)
		var e struct {
			Error struct {
				Param, Code *string
			}
		}
		json.Unmarshal([]byte(body), &e)
		if code != tt.code || e.Error.Param == nil || *e.Error.Param != tt.param || (tt.err != "" && (e.Error.Code == nil || *e.Error.Code != tt.err)) {
			t.Errorf("%.80s…: %d %s, want %d with param %s and code %q", tt.body, code, body, tt.code, tt.param, tt.err)
		}
	}
}

// TestGRPOServeBadCheckpoint: a checkpoint that does not load stops the
// command before it listens, naming the file and the problem.
func TestGRPOServeBadCheckpoint(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt")
	os.MkdirAll(corrupt, 0o755)
	os.WriteFile(filepath.Join(corrupt, grpo.StateFile), []byte("not a gob"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no checkpoint", nil, "grpo serve: --checkpoint DIR is required"},
		{"missing", []string{"--checkpoint", filepath.Join(dir, "nope")},
			"grpo serve: invalid checkpoint: stat " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"empty directory", []string{"--checkpoint", dir},
			"grpo serve: " + dir + ": invalid checkpoint: no state.gob and no checkpoints/latest"},
		{"corrupt", []string{"--checkpoint", corrupt},
			"grpo serve: " + filepath.Join(corrupt, grpo.StateFile) + ": invalid checkpoint: unexpected EOF"},
		{"num-ctx", []string{"--checkpoint", corrupt, "--num-ctx", "0"}, "grpo serve: --num-ctx: got 0, want 1 to 1048576 tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := App()
			var out bytes.Buffer
			app.Writer, app.ErrWriter = &out, &out
			err := app.Run(context.Background(), append([]string{"bagen-data", "grpo", "serve", "--listen", "127.0.0.1:0"}, tt.args...))
			if err == nil || err.Error() != tt.want || strings.Contains(out.String(), "http://") {
				t.Errorf("got %v (output %q), want %s and nothing served", err, out.String(), tt.want)
			}
		})
	}
}

// withoutUsage clears what an early stop's figures take from the
// estimator's usage.
func withoutUsage(e *eval.EarlyStop) {
	n := &e.Net
	n.WithoutUsage, n.EstimatorPromptTokens, n.EstimatorCachedTokens, n.EstimatorCompletionTokens = 0, 0, 0, 0
	n.EstimatorTokens, n.Tokens, n.Share, n.Dollars = nil, nil, eval.NaN, nil
	for i := range e.Curve {
		e.Curve[i].NetTokens = nil
	}
	if e.Live != nil {
		withoutUsage(e.Live)
	}
}
