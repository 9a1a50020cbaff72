package guard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"bagen-data/guard"
)

// A guard in front of a model server: the agent's call goes through
// untouched, and the ledger holds its usage.
func ExampleNew() {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1}}`)
	}))
	defer model.Close()
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)

	g, err := guard.New(guard.Config{Upstream: model.URL, Ledger: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	proxy := httptest.NewServer(g)
	resp, err := http.Post(proxy.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"2 + 2?"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	proxy.Close()
	g.Close()

	fmt.Println(resp.Header.Get("X-Bagen-Guard"), strings.Contains(string(body), `"content":"4"`))
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	data, _ := os.ReadFile(files[0])
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if i := strings.Index(line, `"usage":`); i >= 0 {
			fmt.Println(line[i : i+strings.Index(line[i:], "}")+1])
		}
	}
	// Output:
	// pass true
	// "usage":{"input":12,"output":1,"reasoning":null,"cached":0}
}
