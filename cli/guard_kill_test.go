package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuardKilledLosesNoAnsweredCall: a guard process killed with SIGKILL
// right after answering has every call it answered in its ledger, each
// with its usage: the ledger's line is written before the answer is
// relayed (its fsync follows, for a machine's crash, not a process's).
func TestGuardKilledLosesNoAnsweredCall(t *testing.T) {
	up := stepModel(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	enc, _ := json.Marshal([]string{"guard", "--listen", "127.0.0.1:0", "--upstream", up.URL, "--ledger", ledger})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(enc))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	url := listeningURL(t, out)
	const calls = 4
	history := `{"role":"user","content":"go"}`
	for turn := 1; turn <= calls; turn++ {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[`+history+`]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Bagen-Session", "killed")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), fmt.Sprintf(`"step %d"`, turn)) {
			t.Fatalf("call %d answered %s", turn, body)
		}
		history += fmt.Sprintf(`,{"role":"assistant","content":"step %d"},{"role":"user","content":"more"}`, turn)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	files, _ := filepath.Glob(filepath.Join(ledger, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("ledger files %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var ev struct {
			Event string `json:"event"`
			Turn  int    `json:"turn"`
			Usage struct {
				Input  int `json:"input"`
				Output int `json:"output"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		if ev.Event == "call" {
			got = append(got, fmt.Sprintf("turn %d: %d in, %d out", ev.Turn, ev.Usage.Input, ev.Usage.Output))
		}
	}
	want := []string{"turn 1: 100 in, 7 out", "turn 2: 200 in, 7 out", "turn 3: 300 in, 7 out", "turn 4: 400 in, 7 out"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls in the ledger of the killed guard:\n%q\nwant\n%q", got, want)
	}
}

// listeningURL reads a server's output until it says where it listens.
func listeningURL(t *testing.T, out io.Reader) string {
	t.Helper()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the guard did not say where it listens")
		return ""
	}
}
