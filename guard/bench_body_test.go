package guard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The guard's latency table (docs/guard.md) comes from:
//
//	go test ./guard -run '^$' -bench 'BodyLatency$' -benchtime 1x -cpu 2
//
// It compares five paths to one loopback upstream that reads the request
// and answers at once: direct, through two bare httputil.ReverseProxy
// servers, through the guard without a ledger and through the guard with
// one (no estimator either way), each proxy in a process of its own, with
// the requests of Claude Code sessions whose history grows past each size
// (claudeSession), each session named by Claude Code's session header.
// The five are measured in short rounds taken in turn, so that other work
// on the machine falls on each alike; the second bare proxy measures how
// far two identical proxies differ.

// bodySizes are the request sizes of the table.
var bodySizes = []int{50 << 10, 250 << 10, 1 << 20}

// recordedClaude is the recorded Claude Code request
// (testdata/requests/claude.json), not streamed, with its messages
// decoded into msgs, and this package's source for padding.
func recordedClaude(tb testing.TB, msgs any) (req map[string]json.RawMessage, size int, src []byte) {
	tb.Helper()
	raw, err := os.ReadFile("testdata/requests/claude.json")
	if err != nil {
		tb.Fatal(err)
	}
	if src, err = os.ReadFile("guard_test.go"); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(req["messages"], msgs); err != nil {
		tb.Fatal(err)
	}
	req["stream"] = json.RawMessage("false")
	return req, len(raw), src
}

// paddedClaudeRequest is the recorded Claude Code request
// (testdata/requests/claude.json), not streamed, with turns of history
// (a tool call and its result, the result a piece of this package's
// source) inserted before its last message until it holds size bytes.
func paddedClaudeRequest(tb testing.TB, size int) []byte {
	tb.Helper()
	var msgs []json.RawMessage
	req, n0, src := recordedClaude(tb, &msgs)
	last := msgs[len(msgs)-1]
	msgs = msgs[:len(msgs)-1]
	for k, n := 0, n0; ; k++ {
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
// request padded with history to each size of the latency table, from
// scratch, and of a session's next request (claudeSession) against the
// memo its request before left, with the prefix hashes of each.
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
		seq := claudeSession(b, size, 2)
		prev, memo, _ := lexRead(seq[0], nil, readAnthropic)
		hashes := prefixHashes(prev.Items)
		b.Run(fmt.Sprintf("size=%dKB/next", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(seq[1])))
			for b.Loop() {
				r, m, _ := lexRead(seq[1], memo, readAnthropic)
				if m.resumed == 0 {
					b.Fatal("nothing taken from the memo")
				}
				prefixHashesFrom(prev.Items, hashes, r.Items)
			}
		})
	}
}

// anthropicReply is a non-streamed Messages answer whose usage has the
// input tokens (%d) and 30 output tokens.
const anthropicReply = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":%d,"output_tokens":30}}`

// answerRead reads the request and answers anthropicReply with a token
// of input for each 4 bytes read, so that, as with a model, each call's
// input grows with the history by more than the last answer's output.
func answerRead(w http.ResponseWriter, r *http.Request) {
	answerAfter(w, r, 0)
}

// answerAfter is answerRead with a wait of d between the request's
// reading and the answer.
func answerAfter(w http.ResponseWriter, r *http.Request, d time.Duration) {
	n, _ := io.Copy(io.Discard, r.Body)
	if d > 0 {
		time.Sleep(d)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, anthropicReply, n/4)
}

// claudeSession is a Claude Code session's requests as its history grows
// past size: the recorded request (testdata/requests/claude.json), not
// streamed, its history padded with turns of a tool call and a result (a
// piece of this package's source) to size less what the calls add, then
// a short turn (a result of 300 bytes) more with each call, the cache
// marker on the last message only, as Claude Code moves it. Call j's
// request is about size - calls/2 + j short turns.
func claudeSession(tb testing.TB, size, calls int) [][]byte {
	tb.Helper()
	var msgs []map[string]any
	req, n0, src := recordedClaude(tb, &msgs)
	req["messages"] = json.RawMessage("[]")
	top, _ := json.Marshal(req)
	head, tail, _ := bytes.Cut(top, []byte(`"messages":[]`))
	// plain and marked are each message as it stands before the last
	// and as the last.
	var plain, marked [][]byte
	add := func(m map[string]any) {
		blocks, ok := m["content"].([]any)
		if !ok { // a string
			p, _ := json.Marshal(m)
			plain, marked = append(plain, p), append(marked, p)
			return
		}
		last := blocks[len(blocks)-1].(map[string]any)
		delete(last, "cache_control")
		p, _ := json.Marshal(m)
		last["cache_control"] = map[string]any{"type": "ephemeral"}
		q, _ := json.Marshal(m)
		delete(last, "cache_control")
		plain, marked = append(plain, p), append(marked, q)
	}
	for _, m := range msgs {
		add(m)
	}
	const short = 300
	growth := calls * (short + 330)
	for k, n, shorts := 0, n0, 0; shorts < calls; k++ {
		width := 3000
		if n >= size-growth/2 {
			width = short
			shorts++
		}
		off := (k * 3000) % (len(src) - width)
		id := "toolu_pad" + strconv.Itoa(k)
		add(map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Reading the next part of the file."},
			map[string]any{"type": "tool_use", "id": id, "name": "Read", "input": map[string]any{"file_path": "guard/guard_test.go", "offset": off}}}})
		add(map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": id, "content": string(src[off : off+width])}}})
		n += len(plain[len(plain)-1]) + len(plain[len(plain)-2]) + 2
	}
	first := len(plain) - 2*calls
	seq := make([][]byte, calls)
	for j := range seq {
		n := first + 2*j
		msgs := append(slices.Clip(plain[:n-1]), marked[n-1])
		seq[j] = slices.Concat(head, []byte(`"messages":[`), bytes.Join(msgs, []byte(",")), []byte("]"), tail)
	}
	return seq
}

// sendCalls sends n POSTs to /v1/messages from workers at once, each on
// its own keep-alive connection: worker w speaks for sessions w,
// w+workers, … of sessions in turn, each sending the next request of seq
// (next counts them per session); it returns the latencies to the whole
// answer.
func sendCalls(b testing.TB, client *http.Client, base string, seq [][]byte, next []int, n, workers, round int) []time.Duration {
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i, turn := w, 0; i < n; i, turn = i+workers, turn+1 {
				s := w + workers*(turn%(len(next)/workers))
				body := seq[next[s]%len(seq)]
				next[s]++
				req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Claude-Code-Session-Id", fmt.Sprintf("bench-%d-%d-%d", len(seq[0]), len(next), s))
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

// replyAtOnce is the benchmark's upstream: it reads the request and
// answers at once (answerRead).
var replyAtOnce = http.HandlerFunc(answerRead)

// replyAfter is an upstream that reads the request, waits d, as a model
// takes time to answer, and answers as answerRead does (answerAfter).
func replyAfter(d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answerAfter(w, r, d) })
}

// bodyServers starts the upstream h in this process and, each in a
// process of its own (proxyProcess), two bare proxies to it and a guard
// in front of it without and with a ledger; it returns their root URLs
// and the proxies' processes.
func bodyServers(b testing.TB, h http.Handler) (up string, proxies []*proxyProcess) {
	upSrv := &http.Server{Handler: h}
	up = serveBench(b, upSrv.Serve, upSrv.Close)
	for _, p := range []proxySpec{{Kind: "bare"}, {Kind: "bare"}, {Kind: "guard"}, {Kind: "guard", Ledger: b.TempDir()}} {
		p.Upstream = up
		proxies = append(proxies, startProxy(b, p))
	}
	return up, proxies
}

// proxyProcess is a proxy serving in a process of its own: the test
// binary run with benchProxyEnv.
type proxyProcess struct {
	url string
	cmd *exec.Cmd
}

// startProxy starts the proxy p in a process of its own, at the guard's
// GOGC (the CLI's --gc-percent) whatever its kind, and stops it at the
// end of b.
func startProxy(b testing.TB, p proxySpec) *proxyProcess {
	b.Helper()
	spec, _ := json.Marshal(p)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchProxyEnv+"="+string(spec), "GOGC=400")
	cmd.Stderr = os.Stderr
	// The proxy ends with its stdin: with this process, however it ends.
	if _, err := cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		b.Fatalf("proxy %s: said %q (%v), want its address", spec, line, err)
	}
	go io.Copy(io.Discard, out)
	return &proxyProcess{url: u, cmd: cmd}
}

// cpu is the process's user and system CPU time so far, from
// /proc/PID/stat (clock ticks).
func (p *proxyProcess) cpu(b testing.TB) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("the proxies' CPU time is read from /proc (Linux): %v", err)
	}
	// The fields after the command's name, which is in parentheses:
	// utime and stime are the 14th and 15th of the line.
	_, rest, _ := bytes.Cut(data, []byte(") "))
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", p.cmd.Process.Pid, data)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", p.cmd.Process.Pid, data)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// TestProxyProcessCPU: the CPU time the latency benchmark reads of a
// proxy's process from /proc is the process's own: at most what the
// kernel reports for it once it has exited (wait4's rusage), and short of
// it by less than 50 ms (the rounding to clock ticks, and the shutdown:
// 2–24 ms here).
func TestProxyProcessCPU(t *testing.T) {
	up := httptest.NewServer(replyAtOnce)
	defer up.Close()
	p := startProxy(t, proxySpec{Kind: "bare", Upstream: up.URL})
	body := bytes.Repeat([]byte("x"), 256<<10)
	for range 200 {
		resp, err := http.Post(p.url+"/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	got := p.cpu(t)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	ps := p.cmd.ProcessState
	want := ps.UserTime() + ps.SystemTime()
	if got <= 0 || got > want || want-got >= 50*time.Millisecond {
		t.Errorf("CPU read from /proc %v, rusage at exit %v: want at most it and less than 50 ms short", got, want)
	}
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on Linux's every architecture but alpha and ia64.
const clockTicks = 100

func serveBench(b testing.TB, serve func(net.Listener) error, close func() error) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go serve(l)
	b.Cleanup(func() { close() })
	return "http://" + l.Addr().String()
}

// BenchmarkBodyLatency reports, for each request size, one call at a
// time and 64 at once, the p50 and p99 latency direct, through a bare
// ReverseProxy, through a second bare ReverseProxy, through the guard and
// through the guard with a ledger; each p99 over the first bare proxy's;
// and each path's CPU per call (client, upstream and proxy included).
// The second bare proxy is the same program as the first: its ratio is
// the run's own noise, against which the guard's is read. Each size and
// number in flight starts proxies of its own (bodyServers), so that none
// carries the sessions of another. Each path sends 4,096 calls over 128
// sessions of 32 calls each (the p99 is the 41st slowest call), in
// rounds short enough (128 calls one at a time, 256 with 64 in flight)
// that the machine's slow moments fall on every path alike, each round
// after a garbage collection in this process and each taking the paths
// in turn from the next one on. Each proxy's p99 is reported over the
// first bare proxy's twice: whole ("/bare-p99"), and as the p99 it adds
// over direct's over the p99 the bare proxy adds ("/bare-added-p99").
// It runs its rounds once whatever b.N.
func BenchmarkBodyLatency(b *testing.B) {
	for _, size := range bodySizes {
		for _, workers := range []int{1, 64} {
			b.Run(fmt.Sprintf("size=%dKB/inflight=%d", size>>10, workers), func(b *testing.B) {
				perRound := 128
				if workers > 1 {
					perRound = 256
				}
				bodyLatency(b, replyAtOnce, size, workers, 4096, 128, perRound)
			})
		}
	}
}

// BenchmarkBodyLatencyModelTime is BenchmarkBodyLatency one call at a
// time against an upstream that takes 20 ms to answer, as a model takes
// its time: the guard reads the copy of each request while the upstream
// works, and what it adds is the copy made as the body passes and what
// comes after the answer (the answer's reading, the turn's accounting,
// the ledger's write). Each path sends
// 512 calls over 32 sessions of 16 calls, in rounds of 32; it reports,
// beside BenchmarkBodyLatency's metrics, the p50 each proxy adds over
// direct's.
func BenchmarkBodyLatencyModelTime(b *testing.B) {
	for _, size := range bodySizes {
		b.Run(fmt.Sprintf("size=%dKB/inflight=1", size>>10), func(b *testing.B) {
			bodyLatency(b, replyAfter(20*time.Millisecond), size, 1, 512, 32, 32)
		})
	}
}

// bodyLatency sends calls over sessions, in rounds of perRound with
// workers in flight, to the upstream h directly and through each proxy
// of bodyServers, and reports each path's latency and CPU.
func bodyLatency(b *testing.B, h http.Handler, size, workers, calls, sessions, perRound int) {
	names := []string{"direct", "bare", "bare2", "guard", "ledger"}
	up, proxies := bodyServers(b, h)
	bases := []string{up}
	for _, p := range proxies {
		bases = append(bases, p.url)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true}}
	defer client.CloseIdleConnections()
	seq := claudeSession(b, size, calls/sessions+1)
	lat := make([][]time.Duration, len(bases))
	// The process's CPU time over a path's calls is what they cost the
	// machine.
	cpu := make([]time.Duration, len(bases))
	// A proxy's CPU from the end of its warm-up on.
	proxyCPU := make([]time.Duration, len(proxies))
	next := make([][]int, len(bases))
	for k := range next {
		next[k] = make([]int, sessions)
	}
	for r := -1; r < calls/perRound; r++ { // round -1 warms the connections and reads each session's first request
		n := perRound
		if r < 0 {
			n = sessions
		}
		for i := range bases {
			k := (i + max(r, 0)) % len(bases)
			base := bases[k]
			runtime.GC()
			before := cpuTime()
			d := sendCalls(b, client, base, seq, next[k], n, workers, r)
			if r >= 0 {
				lat[k] = append(lat[k], d...)
				cpu[k] += cpuTime() - before
			} else if k > 0 {
				proxyCPU[k-1] = -proxies[k-1].cpu(b)
			}
		}
	}
	for k, p := range proxies {
		cpu[k+1] += proxyCPU[k] + p.cpu(b)
	}
	b.ReportMetric(float64(len(seq[0]))/1024, "first-KB")
	b.ReportMetric(float64(len(seq[len(seq)-1]))/1024, "last-KB")
	for k, name := range names {
		b.ReportMetric(float64(cpu[k].Microseconds())/float64(len(lat[k])), name+"-cpu-µs/call")
	}
	m := latencyMetrics(names, lat)
	for _, key := range slices.Sorted(maps.Keys(m)) {
		b.ReportMetric(m[key], key)
	}
	if direct, bare := pct(lat[0], 0.99), pct(lat[1], 0.99); bare <= direct {
		b.Logf("the bare proxy's p99 %v is not over direct's %v: no added p99 to divide by", bare, direct)
	}
}

// latencyMetrics is what bodyLatency reports of each path's latencies
// (lat[0] direct's, lat[1] the bare proxy's, then the others', each
// named by names), which it sorts: each path's p50 and p99 in µs; each
// proxy's p50 less direct's; and each proxy after the bare one's p99
// over the bare proxy's, whole and less direct's over the bare proxy's
// less direct's (when that is over 0).
func latencyMetrics(names []string, lat [][]time.Duration) map[string]float64 {
	for k := range lat {
		slices.Sort(lat[k])
	}
	m := map[string]float64{}
	direct, bare := pct(lat[0], 0.99), pct(lat[1], 0.99)
	for k, name := range names {
		p50, p99 := pct(lat[k], 0.5), pct(lat[k], 0.99)
		m[name+"-p99-µs"] = float64(p99.Microseconds())
		m[name+"-p50-µs"] = float64(p50.Microseconds())
		if k == 0 {
			continue
		}
		m[name+"-added-p50-µs"] = float64((p50 - pct(lat[0], 0.5)).Microseconds())
		if k == 1 {
			continue
		}
		m[name+"/bare-p99"] = float64(p99) / float64(bare)
		if bare > direct {
			m[name+"/bare-added-p99"] = float64(p99-direct) / float64(bare-direct)
		}
	}
	return m
}

// TestLatencyMetrics: on paths of 200 calls each, 198 at a low latency
// and 2 at a high one given out of order, the p50 is the low and the p99
// (the 199th) the high, and the ratios are those of the highs, whole and
// less direct's.
func TestLatencyMetrics(t *testing.T) {
	names := []string{"direct", "bare", "bare2", "guard"}
	path := func(lo, hi time.Duration) []time.Duration {
		d := make([]time.Duration, 200)
		for i := range d {
			d[i] = lo
			if i%100 == 7 {
				d[i] = hi
			}
		}
		return d
	}
	ms := time.Millisecond
	got := latencyMetrics(names, [][]time.Duration{path(1*ms, 3*ms), path(1400*time.Microsecond, 4*ms),
		path(1500*time.Microsecond, 4200*time.Microsecond), path(1700*time.Microsecond, 5*ms)})
	want := map[string]float64{
		"direct-p50-µs": 1000, "direct-p99-µs": 3000,
		"bare-p50-µs": 1400, "bare-p99-µs": 4000, "bare-added-p50-µs": 400,
		"bare2-p50-µs": 1500, "bare2-p99-µs": 4200, "bare2-added-p50-µs": 500, "bare2/bare-p99": 1.05, "bare2/bare-added-p99": 1.2,
		"guard-p50-µs": 1700, "guard-p99-µs": 5000, "guard-added-p50-µs": 700, "guard/bare-p99": 1.25, "guard/bare-added-p99": 2,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	// A bare proxy no slower than direct at p99: no added ratio.
	got = latencyMetrics(names[:3], [][]time.Duration{path(ms, 3*ms), path(ms, 3*ms), path(ms, 4*ms)})
	if _, ok := got["bare2/bare-added-p99"]; ok || got["bare2/bare-p99"] != 4.0/3 {
		t.Errorf("bare p99 = direct's: %v, want bare2/bare-p99 4/3 and no added ratio", got)
	}
}

// TestPct: the quantiles the latency tables report, on 1…512 ms.
func TestPct(t *testing.T) {
	d := make([]time.Duration, 512)
	for i := range d {
		d[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 257 * time.Millisecond}, {0.99, 507 * time.Millisecond}, {1, 512 * time.Millisecond}, {0, time.Millisecond}} {
		if got := pct(d, c.p); got != c.want {
			t.Errorf("pct(1…512 ms, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := pct(nil, 0.99); got != 0 {
		t.Errorf("pct(none) = %v, want 0", got)
	}
}

// TestClaudeSession: the sessions the latency table sends are what
// docs/guard.md says: each request one short turn (two messages, 600–700
// bytes) longer than the one before, the cache marker on its last message
// alone, the first request about the size less half of what the calls
// add, and each read against the memo of the one before from that one's
// last message on.
func TestClaudeSession(t *testing.T) {
	seq := claudeSession(t, 250<<10, 8)
	var memo *readMemo
	prevMsgs := 0
	for j, body := range seq {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Stream bool `json:"stream"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("call %d: %v", j, err)
		}
		n := len(req.Messages)
		if j > 0 && n != prevMsgs+2 {
			t.Errorf("call %d: %d messages, want %d", j, n, prevMsgs+2)
		}
		prevMsgs = n
		marked := 0
		for k, m := range req.Messages {
			if bytes.Contains(m.Content, []byte(`"cache_control"`)) {
				marked++
				if k != n-1 {
					t.Errorf("call %d: message %d of %d holds the cache marker", j, k, n)
				}
			}
		}
		if marked != 1 || req.Stream {
			t.Errorf("call %d: %d messages marked, stream %v; want 1, false", j, marked, req.Stream)
		}
		_, m, ok := lexRead(body, memo, readAnthropic)
		if !ok {
			t.Fatalf("call %d: left to encoding/json", j)
		}
		if want := max(prevMsgs-3, 0); j > 0 && m.resumed != want {
			t.Errorf("call %d: %d messages from the memo, want %d", j, m.resumed, want)
		}
		memo = m
	}
	// The padding stops at the first of its turns (about 3.3 KB each)
	// that passes the size less half of the calls' turns (630 bytes each
	// allowed for).
	first, last := len(seq[0]), len(seq[len(seq)-1])
	floor := 250<<10 - 8*630/2
	if first < floor || first > floor+3400 || last < first+7*600 || last > first+7*700 {
		t.Errorf("sizes %d … %d bytes, want the first in [%d, %d] and 600–700 bytes more a call", first, last, floor, floor+3400)
	}
}
