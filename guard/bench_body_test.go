package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The guard's latency table (docs/guard.md) comes from:
//
//	go test ./guard -run '^$' -bench BodyLatency -benchtime 1x -cpu 2
//
// It compares three paths to one loopback upstream that reads the
// request and answers at once: direct, through a bare
// httputil.ReverseProxy, and through the guard (no estimator, no
// ledger), with Claude Code's request for its second turn padded with
// history to each size, each session named by Claude Code's session
// header. The three are measured in interleaved rounds, so that other
// work on the machine falls on each alike.

// bodySizes are the request sizes of the table.
var bodySizes = []int{50 << 10, 250 << 10, 1 << 20}

// paddedClaudeRequest is the recorded Claude Code request
// (testdata/requests/claude.json), not streamed, with turns of history
// (a tool call and its result, the result a piece of this package's
// source) inserted before its last message until it holds size bytes.
func paddedClaudeRequest(tb testing.TB, size int) []byte {
	tb.Helper()
	raw, err := os.ReadFile("testdata/requests/claude.json")
	if err != nil {
		tb.Fatal(err)
	}
	src, err := os.ReadFile("guard_test.go")
	if err != nil {
		tb.Fatal(err)
	}
	var req map[string]json.RawMessage
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &req); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(req["messages"], &msgs); err != nil {
		tb.Fatal(err)
	}
	req["stream"] = json.RawMessage("false")
	last := msgs[len(msgs)-1]
	msgs = msgs[:len(msgs)-1]
	for k, n := 0, len(raw); ; k++ {
		if n >= size {
			req["messages"], _ = json.Marshal(append(msgs, last))
			body, _ := json.Marshal(req)
			if len(body) >= size {
				return body
			}
		}
		id := "toolu_pad" + strconv.Itoa(k)
		off := (k * 3000) % (len(src) - 3000)
		call, _ := json.Marshal(map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Reading the next part of the file."},
			map[string]any{"type": "tool_use", "id": id, "name": "Read", "input": map[string]any{"file_path": "guard/guard_test.go", "offset": off}}}})
		result, _ := json.Marshal(map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": id, "content": string(src[off : off+3000])}}})
		msgs = append(msgs, call, result)
		n += len(call) + len(result) + 2
	}
}

// BenchmarkReadPaddedRequest: the guard's reading of Claude Code's
// request padded with history to each size of the latency table.
func BenchmarkReadPaddedRequest(b *testing.B) {
	for _, size := range bodySizes {
		body := paddedClaudeRequest(b, size)
		b.Run(fmt.Sprintf("size=%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r, err := Anthropic{}.Request(body)
				if err != nil {
					b.Fatal(err)
				}
				prefixHashes(r.Items)
			}
		})
	}
}

// anthropicReply is a non-streamed Messages answer with usage.
const anthropicReply = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1200,"output_tokens":30}}`

// sendBodies sends n POSTs of body to /v1/messages from workers
// sessions at once, each on its own keep-alive connection, and returns
// the latencies to the whole answer.
func sendBodies(b *testing.B, client *http.Client, base string, body []byte, n, workers, round int) []time.Duration {
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := w; i < n; i += workers {
				req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Claude-Code-Session-Id", fmt.Sprintf("bench-%d-%d-%d", len(body), workers, w))
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(start))
				if resp.StatusCode != http.StatusOK {
					b.Errorf("round %d: %s: %s", round, base, resp.Status)
					return
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

// bodyServers starts the upstream, a bare proxy to it and a guard in
// front of it, and returns their root URLs.
func bodyServers(b *testing.B) (up, bare, guarded string) {
	upSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, anthropicReply)
	})}
	up = serveBench(b, upSrv.Serve, upSrv.Close)
	target, _ := url.Parse(up)
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }, Transport: transport(nil)}
	bareSrv := &http.Server{Handler: proxy}
	bare = serveBench(b, bareSrv.Serve, bareSrv.Close)
	r := startReplica(b, Config{Upstream: up})
	return up, bare, "http://" + r.addr
}

func serveBench(b *testing.B, serve func(net.Listener) error, close func() error) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go serve(l)
	b.Cleanup(func() { close() })
	return "http://" + l.Addr().String()
}

// BenchmarkBodyLatency reports, for each request size and 1 or 64
// concurrent sessions (512 calls each way), the p99 latency direct, through a bare
// ReverseProxy and through the guard, the guard's p99 over the bare
// proxy's, their difference, and the two p50s. (The guard's added p99 over the bare
// proxy's added p99, each over direct, is not reported: on a loopback
// upstream the bare proxy's added p99 is within the noise of direct's,
// and the quotient with it.) It runs its rounds once whatever b.N.
func BenchmarkBodyLatency(b *testing.B) {
	up, bare, guarded := bodyServers(b)
	for _, size := range bodySizes {
		body := paddedClaudeRequest(b, size)
		for _, workers := range []int{1, 64} {
			b.Run(fmt.Sprintf("size=%dKB/sessions=%d", size>>10, workers), func(b *testing.B) {
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true}}
				defer client.CloseIdleConnections()
				perRound, rounds := 128*max(1, workers/32), 4
				var lat [3][]time.Duration
				for r := -1; r < rounds; r++ { // round -1 warms the connections
					for k, base := range []string{up, bare, guarded} {
						d := sendBodies(b, client, base, body, perRound, workers, r)
						if r >= 0 {
							lat[k] = append(lat[k], d...)
						}
					}
				}
				for k := range lat {
					slices.Sort(lat[k])
				}
				direct, bp, gp := pct(lat[0], 0.99), pct(lat[1], 0.99), pct(lat[2], 0.99)
				b.ReportMetric(float64(len(body))/1024, "KB")
				b.ReportMetric(float64(direct.Microseconds()), "direct-p99-µs")
				b.ReportMetric(float64(bp.Microseconds()), "bare-p99-µs")
				b.ReportMetric(float64(gp.Microseconds()), "guard-p99-µs")
				b.ReportMetric(float64(gp)/float64(bp), "guard/bare-p99")
				b.ReportMetric(float64((gp - bp).Microseconds()), "guard-minus-bare-p99-µs")
				b.ReportMetric(float64(pct(lat[1], 0.5).Microseconds()), "bare-p50-µs")
				b.ReportMetric(float64(pct(lat[2], 0.5).Microseconds()), "guard-p50-µs")
			})
		}
	}
}
