package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"bagen-data/dataset"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// runReward runs the app with args, returning stdout, stderr and the error.
func runReward(ctx context.Context, args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	app := App()
	app.Writer, app.ErrWriter = &stdout, &stderr
	err := app.Run(ctx, append([]string{"bagen-data"}, args...))
	return stdout.String(), stderr.String(), err
}

// writeEvalParquet writes rows as an eval parquet file.
func writeEvalParquet(t *testing.T, path string, rows []dataset.RLRow) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[dataset.RLRow](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func evalRow(id string, r int64, possible bool, label string) dataset.RLRow {
	return dataset.RLRow{
		DataSource: "sokoban",
		Prompt:     []rollout.Message{{Role: "user", Content: "Output exactly one of the following:\n<answer>[est_low, est_high]</answer>"}},
		ExtraInfo:  dataset.ExtraInfo{CustomID: id, RemainingTokens: r, IsPossible: possible, Split: dataset.SplitEval},
		Label:      label,
	}
}

func scoreFixture(t *testing.T) (dir, data, preds string) {
	t.Helper()
	dir = t.TempDir()
	data = filepath.Join(dir, "test.parquet")
	writeEvalParquet(t, data, []dataset.RLRow{
		evalRow("t1_probe_after_turn_0", 150, true, reward.TokenTarget(reward.Truth{Remaining: 150, Possible: true}, "[135, 165]").Label()),
		evalRow("t1_probe_after_turn_1", 100, true, reward.TokenTarget(reward.Truth{Remaining: 100, Possible: true}, "[90, 110]").Label()),
		evalRow("t2_probe_after_turn_0", 0, false, reward.TokenTarget(reward.Truth{}, "impossible").Label()),
		evalRow("t2_probe_after_turn_1", 0, false, ""), // no label column: extra_info decides
		evalRow("t3_probe_after_turn_0", 80, true, "80"),
	})
	preds = filepath.Join(dir, "preds.jsonl")
	lines := `{"custom_id":"t1_probe_after_turn_0","response":"<answer>[140, 160]</answer>"}
{"custom_id":"t1_probe_after_turn_1","response":"<answer>[0, 1000]</answer>"}

{"custom_id":"t2_probe_after_turn_0","response":"<answer>impossible</answer>"}
{"custom_id":"t2_probe_after_turn_1","response":"<answer>[1, 2]</answer>"}
{"custom_id":"t9_probe_after_turn_0","response":"<answer>impossible</answer>"}
`
	if err := os.WriteFile(preds, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, data, preds
}

func TestRewardScore(t *testing.T) {
	dir, data, preds := scoreFixture(t)
	out := filepath.Join(dir, "scored.jsonl")
	stdout, stderr, err := runReward(context.Background(), "reward", "score", "--data", data, "--predictions", preds, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	// t3 has no prediction: scored as unparseable (0 on a possible probe).
	wantOut := `truth       probes  mean reward (train)
possible    3       0.5200
impossible  2       0.1000
all         5       0.3520
data rows: 5 (5 probes)
probes without a prediction: 1 (scored as unparseable)
predictions without a data row: 1
`
	if stdout != wantOut {
		t.Errorf("stdout =\n%s\nwant\n%s", stdout, wantOut)
	}
	wantErr := "reward score: probe without a prediction: t3_probe_after_turn_0\n" +
		"reward score: prediction without a data row: t9_probe_after_turn_0\n"
	if stderr != wantErr {
		t.Errorf("stderr =\n%s\nwant\n%s", stderr, wantErr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := `{"custom_id":"t1_probe_after_turn_0","truth_possible":true,"remaining_tokens":150,"reward":1.56,"detail":{"reward":1.56,"class":"possible","interval":true,"covered":true,"width":20,"rel_width":0.13333333333333333,"mid_rel_err":0}}
{"custom_id":"t1_probe_after_turn_1","truth_possible":true,"remaining_tokens":100,"reward":0,"detail":{"reward":0,"class":"possible","interval":true,"covered":true,"width":1000,"rel_width":10,"mid_rel_err":4}}
{"custom_id":"t2_probe_after_turn_0","truth_possible":false,"remaining_tokens":0,"reward":0.2,"detail":{"reward":0.2,"class":"impossible","interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null}}
{"custom_id":"t2_probe_after_turn_1","truth_possible":false,"remaining_tokens":0,"reward":0,"detail":{"reward":0,"class":"possible","interval":true,"covered":false,"width":1,"rel_width":null,"mid_rel_err":null}}
{"custom_id":"t3_probe_after_turn_0","truth_possible":true,"remaining_tokens":80,"reward":0,"detail":{"reward":0,"class":"invalid","interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null},"missing":true}
`
	if string(got) != wantFile {
		t.Errorf("%s =\n%s\nwant\n%s", out, got, wantFile)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("output directory holds %d entries, want 3 (no temporary files left)", len(entries))
	}
}

func TestRewardScorePaperAndStrict(t *testing.T) {
	_, data, preds := scoreFixture(t)
	stdout, _, err := runReward(context.Background(), "reward", "score", "--data", data, "--predictions", preds, "--rule", "paper", "--strict")
	if want := "reward score: 1 predictions without a data row, 1 probes without a prediction"; err == nil || err.Error() != want {
		t.Fatalf("--strict error = %v, want %q", err, want)
	}
	if !strings.Contains(stdout, "possible    3       0.2889\n") {
		t.Errorf("paper rule summary lacks the possible mean 0.2889 (t3, unanswered, scores 0):\n%s", stdout)
	}
}

func TestRewardScoreErrors(t *testing.T) {
	dir, data, _ := scoreFixture(t)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"custom_id\":\"a\",\"response\":\"x\"}\n{\"custom_id\":\"a\",\"response\":\"y\"}\n"), 0o644)
	broken := filepath.Join(dir, "broken.jsonl")
	os.WriteFile(broken, []byte("{\"custom_id\":\"a\",\"response\":\"\"}\n{\"custom_id\":\n"), 0o644)
	noResponse := filepath.Join(dir, "noresponse.jsonl")
	os.WriteFile(noResponse, []byte("{\"custom_id\":\"a\"}\n"), 0o644)
	noID := filepath.Join(dir, "noid.jsonl")
	os.WriteFile(noID, []byte("{\"response\":\"x\"}\n"), 0o644)
	badLabel := filepath.Join(dir, "badlabel.parquet")
	writeEvalParquet(t, badLabel, []dataset.RLRow{evalRow("x", 1, true, `{"remaining_tokens":1}`)})
	xpred := filepath.Join(dir, "x.jsonl")
	os.WriteFile(xpred, []byte(`{"custom_id":"x","response":"r"}`+"\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"duplicate prediction", []string{"--data", data, "--predictions", bad}, fmt.Sprintf(`reward score: %s:2: custom_id "a": two different responses (line 1 has another)`, bad)},
		{"broken line", []string{"--data", data, "--predictions", broken}, fmt.Sprintf("reward score: %s:2: not a JSON object: unexpected end of JSON input", broken)},
		{"no response", []string{"--data", data, "--predictions", noResponse}, fmt.Sprintf("reward score: %s:1: response: missing (a line needs a response, or an error for a probe that got none)", noResponse)},
		{"missing id", []string{"--data", data, "--predictions", noID}, fmt.Sprintf("reward score: %s:1: custom_id: missing", noID)},
		{"bad label", []string{"--data", badLabel, "--predictions", xpred}, fmt.Sprintf("reward score: %s: row 0 (x): label: invalid label: is_possible: missing", badLabel)},
		{"bad rule", []string{"--data", data, "--predictions", xpred, "--rule", "mine"}, `--rule: want train or paper, got "mine"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runReward(context.Background(), append([]string{"reward", "score"}, tt.args...)...)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingRE = regexp.MustCompile(`reward: serving on (http://\S+)`)

// TestRewardServe runs the serve command in process with the context the
// main function would cancel on SIGINT/SIGTERM.
func TestRewardServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	app := App()
	app.Writer, app.ErrWriter = io.Discard, &stderr
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"bagen-data", "reward", "serve", "--addr", "127.0.0.1:0", "--drain-grace", "0", "--log-requests"})
	}()
	url := waitServing(t, stderr.String)
	resp, err := http.Post(url+"/slime", "application/json", strings.NewReader(`{"response":"<answer>[140, 160]</answer>","label":"150"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "1.56" {
		t.Errorf("POST /slime = %s, want 1.56", b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve after cancel: %v, want nil", err)
	}
	log := stderr.String()
	if !strings.Contains(log, `"msg":"request","method":"POST","path":"/slime","status":200,"items":1`) || !strings.HasSuffix(log, "reward: drained, bye\n") {
		t.Errorf("stderr lacks the access log line or the drain message:\n%s", log)
	}
}

func waitServing(t *testing.T, output func() string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingRE.FindStringSubmatch(output()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("server did not start; output:\n%s", output())
	return ""
}

// TestRewardServeSIGTERM builds the binary, loads it, sends SIGTERM and
// expects every answered request to be whole and the exit status 0.
func TestRewardServeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "bagen-data")
	build := exec.Command("go", "build", "-o", bin, "../cmd/bagen-data")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "reward", "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var out syncBuffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, bufio.NewReader(stderr))
		close(copied)
	}()
	url := waitServing(t, out.String)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	var answered int
	var bad []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				reused := false
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
				})
				req, _ := http.NewRequestWithContext(ctx, "POST", url+"/slime", strings.NewReader(`{"response":"<answer>[140, 160]</answer>","label":"150"}`))
				resp, err := http.DefaultClient.Do(req)
				if err != nil && reused {
					// The drain never closes a kept-alive connection under
					// a request; a new one may be refused or, without a
					// load balancer, reset as the listener closes.
					mu.Lock()
					bad = append(bad, fmt.Sprintf("no response on a kept-alive connection: %v", err))
					mu.Unlock()
				}
				if err != nil {
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				if err != nil || resp.StatusCode != 200 || string(b) != "1.56" {
					bad = append(bad, fmt.Sprintf("%d %q %v", resp.StatusCode, b, err))
				} else {
					answered++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Read stderr to its end before Wait, which closes the pipe: the drain
	// message is the last thing the server writes.
	<-copied
	err = cmd.Wait()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v, want status 0; stderr:\n%s", err, out.String())
	}
	if len(bad) > 0 || answered == 0 {
		t.Fatalf("%d answered, bad responses: %v", answered, bad)
	}
	if !strings.HasSuffix(out.String(), "reward: drained, bye\n") {
		t.Errorf("stderr = %q, want the drain message last", out.String())
	}
}

// TestRewardScoreOversampled scores a probe repeated by oversampling once
// and says so, as eval does.
func TestRewardScoreOversampled(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "train.parquet")
	a := evalRow("t1_probe_after_turn_0", 150, true, "")
	b := evalRow("t2_probe_after_turn_0", 0, false, "")
	writeEvalParquet(t, data, []dataset.RLRow{a, b, a, a})
	preds := filepath.Join(dir, "preds.jsonl")
	os.WriteFile(preds, []byte(`{"custom_id":"t1_probe_after_turn_0","response":"<answer>[140, 160]</answer>"}`+"\n"+
		`{"custom_id":"t2_probe_after_turn_0","response":"<answer>impossible</answer>"}`+"\n"), 0o644)
	stdout, stderr, err := runReward(context.Background(), "reward", "score", "--data", data, "--predictions", preds, "--strict")
	if err != nil {
		t.Fatalf("reward score: %v\n%s", err, stderr)
	}
	want := `truth       probes  mean reward (train)
possible    1       1.5600
impossible  1       0.2000
all         2       0.8800
data rows: 4 (2 probes)
probes without a prediction: 0 (scored as unparseable)
predictions without a data row: 0
`
	if stdout != want {
		t.Errorf("stdout =\n%s\nwant\n%s", stdout, want)
	}
}

// reward serve runs the collector at --gc-percent, 400 by default unless
// GOGC is set; /metrics exports what the runtime uses (go_gc_gogc_percent).
func TestRewardServeGCPercent(t *testing.T) {
	for _, tc := range []struct {
		env  string // GOGC; "" unset
		args []string
		want string
	}{
		{"", nil, "400"},
		{"50", nil, "50"},
		{"50", []string{"--gc-percent", "200"}, "200"},
		{"", []string{"--gc-percent", "100"}, "100"},
	} {
		cmd := childCommand(t, t.TempDir(), append([]string{"reward", "serve", "--addr", "127.0.0.1:0", "--drain-grace", "0"}, tc.args...)...)
		env := cmd.Env[:0:0]
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, "GOGC=") {
				env = append(env, kv)
			}
		}
		if tc.env != "" {
			env = append(env, "GOGC="+tc.env)
		}
		cmd.Env = env
		var out syncBuffer
		cmd.Stderr = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		url := waitServing(t, out.String)
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cmd.Process.Signal(os.Interrupt)
		m := regexp.MustCompile(`(?m)^go_gc_gogc_percent (\S+)$`).FindSubmatch(page)
		if m == nil || string(m[1]) != tc.want {
			t.Errorf("GOGC=%q %v: go_gc_gogc_percent %q, want %s", tc.env, tc.args, m, tc.want)
		}
	}
	dir := t.TempDir()
	bagen(t, dir, "reward", "serve", "--addr", "127.0.0.1:0", "--gc-percent", "0").oneLine(t, 1,
		"bagen-data: reward serve: --gc-percent: got 0, want at least 1 (GOGC=off in the environment turns the collector off)")
}
