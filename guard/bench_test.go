package guard

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The README's guard benchmark table comes from:
//
//	go test ./guard -run '^$' -bench 'AddedLatency|TTFB' -benchtime 10000x -cpu 2
//	go test ./guard -run '^$' -bench IdleSessions -benchtime 1x
//
// Added latency and time to first byte are the percentiles through the
// guard minus the same percentiles direct to the same loopback upstream,
// each measured over b.N requests from 64 concurrent sessions.

// timed sends n requests from 64 workers, each its own session, and
// returns the sorted latencies (to the whole answer, or to its first byte).
func timed(b *testing.B, url string, n int, body func(worker, i int) string, firstByte bool) []time.Duration {
	return paced(b, url, n, body, firstByte, 0)
}

// paced is timed with each session waiting a pause drawn uniformly from
// [0, 2·gap) after each answer (an agent's own work between calls); 0
// sends the next request at once.
func paced(b *testing.B, url string, n int, body func(worker, i int) string, firstByte bool, gap time.Duration) []time.Duration {
	const workers = 64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true}}
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := w; i < n; i += workers {
				if gap > 0 {
					time.Sleep(time.Duration(rng.Int64N(int64(2 * gap))))
				}
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body(w, i)))
				req.Header.Set("X-Bagen-Session", "bench-"+strconv.Itoa(w))
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				if firstByte {
					one := make([]byte, 1)
					io.ReadFull(resp.Body, one)
					mine = append(mine, time.Since(start))
					io.Copy(io.Discard, resp.Body)
				} else {
					io.Copy(io.Discard, resp.Body)
					mine = append(mine, time.Since(start))
				}
				resp.Body.Close()
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(all)
	return all
}

// pct is the p-th quantile of sorted d: the value at index ⌊p·n⌋
// (the last for p = 1), 0 for none.
func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

func benchBody(w, i int) string {
	return fmt.Sprintf(`{"model":"m","messages":[{"role":"system","content":"bench"},{"role":"user","content":"run %d"}]}`, w)
}

func reportAdded(b *testing.B, direct, guarded []time.Duration, name string) {
	for _, p := range []float64{0.50, 0.99} {
		b.ReportMetric(float64((pct(guarded, p) - pct(direct, p)).Microseconds()), fmt.Sprintf("%s-p%02.0f-added-µs", name, p*100))
	}
	b.ReportMetric(float64(pct(direct, 0.99).Microseconds()), name+"-p99-direct-µs")
}

// BenchmarkAddedLatency: non-streaming calls, 64 concurrent sessions, a
// loopback upstream that answers at once; without and with a ledger
// (a write per call, and its file's fsync off the call's path).
func BenchmarkAddedLatency(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatReply)
	}))
	defer up.Close()
	for _, ledger := range []bool{false, true} {
		b.Run(fmt.Sprintf("ledger=%v", ledger), func(b *testing.B) {
			cfg := Config{Upstream: up.URL}
			if ledger {
				cfg.Ledger = b.TempDir()
			}
			g, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(g)
			defer srv.Close()
			timed(b, up.URL, 256, benchBody, false) // warm both paths
			timed(b, srv.URL, 256, benchBody, false)
			b.ResetTimer()
			c0 := cpuTime()
			direct := timed(b, up.URL, b.N, benchBody, false)
			c1 := cpuTime()
			guarded := timed(b, srv.URL, b.N, benchBody, false)
			c2 := cpuTime()
			b.StopTimer()
			reportAdded(b, direct, guarded, "call")
			b.ReportMetric(float64((c2-c1)-(c1-c0))/float64(b.N)/1e3, "added-CPU-µs/call")
		})
	}
}

// BenchmarkTTFBSequential is BenchmarkTTFB one call at a time, round robin
// over 64 live sessions.
func BenchmarkTTFBSequential(b *testing.B) {
	up := httptest.NewServer(streamUpstream())
	defer up.Close()
	g, err := New(Config{Upstream: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	sequential(b, up.URL, 256, streamBody, true)
	sequential(b, srv.URL, 256, streamBody, true)
	b.ResetTimer()
	direct := sequential(b, up.URL, b.N, streamBody, true)
	guarded := sequential(b, srv.URL, b.N, streamBody, true)
	b.StopTimer()
	reportAdded(b, direct, guarded, "ttfb")
}

func streamBody(w, i int) string {
	return fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"user","content":"run %d"}]}`, w)
}

// streamUpstream sends a stream's first event at once and the rest 2 ms
// later.
func streamUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sse(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		time.Sleep(2 * time.Millisecond)
		sse(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
			"data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n", "data: [DONE]\n\n")
	})
}

// BenchmarkAddedLatencyPaced: 64 concurrent sessions that each pause
// 50 ms on average between calls (about 1,300 calls/s in all), so that
// the cores are not saturated: the guard's added latency without the
// queueing of BenchmarkAddedLatency.
func BenchmarkAddedLatencyPaced(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatReply)
	}))
	defer up.Close()
	g, err := New(Config{Upstream: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	target, _ := url.Parse(up.URL)
	// A bare httputil.ReverseProxy: the cost of the hop alone.
	bare := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }}
	for _, p := range []struct {
		name string
		h    http.Handler
	}{{"guard", g}, {"bare-proxy", bare}} {
		b.Run(p.name, func(b *testing.B) {
			srv := httptest.NewServer(p.h)
			defer srv.Close()
			paced(b, up.URL, 256, benchBody, false, 50*time.Millisecond)
			paced(b, srv.URL, 256, benchBody, false, 50*time.Millisecond)
			b.ResetTimer()
			direct := paced(b, up.URL, b.N, benchBody, false, 50*time.Millisecond)
			guarded := paced(b, srv.URL, b.N, benchBody, false, 50*time.Millisecond)
			b.StopTimer()
			reportAdded(b, direct, guarded, "call")
		})
	}
}

// BenchmarkTTFB: streamed calls whose first event leaves the upstream at
// once and the rest 2 ms later: time to the first byte at the agent.
func BenchmarkTTFB(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sse(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		time.Sleep(2 * time.Millisecond)
		sse(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
			"data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n", "data: [DONE]\n\n")
	}))
	defer up.Close()
	g, err := New(Config{Upstream: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	body := func(w, i int) string {
		return fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"user","content":"run %d"}]}`, w)
	}
	timed(b, up.URL, 256, body, true)
	timed(b, srv.URL, 256, body, true)
	b.ResetTimer()
	direct := timed(b, up.URL, b.N, body, true)
	guarded := timed(b, srv.URL, b.N, body, true)
	b.StopTimer()
	reportAdded(b, direct, guarded, "ttfb")
}

// BenchmarkIdleSessions holds 10,000 sessions (one answered call each,
// each its own run) and reports the process's resident memory and the
// Go heap they take. It runs once whatever b.N.
func BenchmarkIdleSessions(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatReply)
	}))
	defer up.Close()
	{
		g, err := New(Config{Upstream: up.URL})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(g)
		runtime.GC()
		debug.FreeOSMemory()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		const sessions = 10_000
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		var wg sync.WaitGroup
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := w; s < sessions; s += 16 {
					body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"task %d: %s"}]}`, s, strings.Repeat("x", 2000))
					resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		if n := g.sessions.count(); n != sessions {
			b.Fatalf("%d sessions held, want %d", n, sessions)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/sessions, "heap-B/session")
		b.ReportMetric(float64(rssKB())/1024, "process-RSS-MiB")
		srv.Close()
		g.Close()
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssKB is VmRSS from /proc/self/status, 0 where there is none.
func rssKB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// sequential sends n requests one at a time, round robin over 64
// sessions, and returns the sorted latencies.
func sequential(b *testing.B, url string, n int, body func(worker, i int) string, firstByte bool) []time.Duration {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body(i%64, i)))
		req.Header.Set("X-Bagen-Session", "bench-"+strconv.Itoa(i%64))
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if firstByte {
			one := make([]byte, 1)
			io.ReadFull(resp.Body, one)
			out = append(out, time.Since(start))
			io.Copy(io.Discard, resp.Body)
		} else {
			io.Copy(io.Discard, resp.Body)
			out = append(out, time.Since(start))
		}
		resp.Body.Close()
	}
	slices.Sort(out)
	return out
}

// BenchmarkAddedLatencySequential: the same calls one at a time, round
// robin over 64 live sessions: the guard's own cost per call, without
// the queueing of 64 requests on 2 cores.
func BenchmarkAddedLatencySequential(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatReply)
	}))
	defer up.Close()
	g, err := New(Config{Upstream: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	sequential(b, up.URL, 256, benchBody, false)
	sequential(b, srv.URL, 256, benchBody, false)
	b.ResetTimer()
	direct := sequential(b, up.URL, b.N, benchBody, false)
	guarded := sequential(b, srv.URL, b.N, benchBody, false)
	b.StopTimer()
	reportAdded(b, direct, guarded, "call")
}

// BenchmarkReadRealRequest: the guard's reading of the request each CLI
// sent for its second turn (testdata/requests; Claude Code's is 49 KB):
// decode, normalize, hash.
func BenchmarkReadRealRequest(b *testing.B) {
	for _, rc := range []struct {
		file  string
		codec Codec
	}{{"claude", Anthropic{}}, {"codex", Responses{}}, {"qwen", Chat{}}} {
		body, err := os.ReadFile("testdata/requests/" + rc.file + ".json")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(rc.file, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r, err := rc.codec.Request(body)
				if err != nil {
					b.Fatal(err)
				}
				prefixHashes(r.Items)
			}
		})
	}
}
