// Command loadgen benchmarks the reward server on loopback: single-item
// OpenRLHF requests from many concurrent clients and native batches of
// 256 and 4096 items, each for a bounded time and request count. It
// prints requests/s, rewards/s and p50/p99 latency as a Markdown table.
//
// Without --addr it starts the server in process; with --addr it drives a
// running server (make bench-reward starts `bagen-data reward serve`),
// which must be on a loopback address. Clients speak HTTP/1.1 over raw
// keep-alive TCP connections so that the generator costs little CPU next
// to the server on the same machine.
//
// With --floor N it then alternates the single-item scenario N times
// between the server and a bare net/http handler in a process of its own
// (this program with --serve-floor) that reads the same body and answers
// the server's own response bytes, and prints each side's best and their
// ratio: what the server costs over net/http itself.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"bagen-data/internal/openai"
	"bagen-data/reward/server"
)

type options struct {
	addr        string
	duration    time.Duration
	maxRequests int64
	clients     int
	batchConns  int
	prompt      string
	wait        time.Duration
	cpuProfile  string
	only        int
	floor       int
	serveFloor  string
	floorBody   string
}

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "", "loopback host:port of a running server (default: start one in process)")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "time per scenario")
	flag.Int64Var(&o.maxRequests, "max-requests", 2_000_000, "request cap per scenario")
	flag.IntVar(&o.clients, "clients", 64, "concurrent single-item clients")
	flag.IntVar(&o.batchConns, "batch-clients", 4, "concurrent batch clients")
	flag.StringVar(&o.prompt, "prompt", "reward/server/testdata/prompt.txt", "probe prompt `FILE` for OpenRLHF queries")
	flag.DurationVar(&o.wait, "wait", 10*time.Second, "how long to wait for the server's /healthz")
	flag.IntVar(&o.only, "only", 0, "run only scenario `N` (1-4); 0 runs all")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process to `FILE`")
	flag.IntVar(&o.floor, "floor", 0, "then alternate the single-item scenario `N` times each against the server and a bare net/http floor")
	flag.StringVar(&o.serveFloor, "serve-floor", "", "serve the bare net/http floor on loopback `ADDR` (what --floor starts)")
	flag.StringVar(&o.floorBody, "floor-body", "", "the floor's answer to every POST: the bytes of `FILE`")
	flag.Parse()
	if o.serveFloor != "" {
		if err := serveFloor(o.serveFloor, o.floorBody); err != nil {
			fmt.Fprintf(os.Stderr, "loadgen: floor: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.duration <= 0 || o.maxRequests <= 0 || o.clients <= 0 || o.batchConns <= 0 {
		return errors.New("--duration, --max-requests, --clients and --batch-clients must be positive")
	}
	if o.floor < 0 {
		return fmt.Errorf("--floor: got %d, want 0 (no floor) or a number of runs", o.floor)
	}
	prompt, err := os.ReadFile(o.prompt)
	if err != nil {
		return err
	}
	addr := o.addr
	if addr == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go server.Serve(ctx, ln, server.Config{})
		addr = ln.Addr().String()
	}
	if err := checkLoopback(addr); err != nil {
		return err
	}
	if err := waitHealthy(addr, o.wait); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	scenarios := []scenario{
		openRLHF("OpenRLHF /get_reward, 1 item", string(prompt), 1, o.clients),
		openRLHF("OpenRLHF /get_reward, 256 items", string(prompt), 256, o.batchConns),
		native("/v1/rewards, 256 items", 256, o.batchConns),
		native("/v1/rewards, 4096 items", 4096, o.batchConns),
	}
	fmt.Println("| scenario | clients | body | requests | requests/s | rewards/s | p50 | p99 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for i, s := range scenarios {
		if o.only != 0 && o.only != i+1 {
			continue
		}
		res, err := s.run(addr, o.duration, o.maxRequests)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Println(res)
	}
	if o.floor > 0 {
		return compareFloor(addr, scenarios[0], o)
	}
	return nil
}

// serveFloor answers every POST with body after reading the request's
// body, and GET /healthz with 200: net/http doing nothing else.
func serveFloor(addr, bodyFile string) error {
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return http.ListenAndServe(addr, mux)
}

// compareFloor alternates s against the server at addr and against the
// floor, started here in its own process answering the server's own
// response to s, and prints each side's best requests/s and their ratio.
func compareFloor(addr string, s scenario, o options) error {
	resp, err := http.Post("http://"+addr+s.path, "application/json", bytes.NewReader(s.body))
	if err != nil {
		return err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server's answer for the floor: %s: %v", resp.Status, err)
	}
	dir, err := os.MkdirTemp("", "loadgen-floor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bodyFile := dir + "/answer.json"
	if err := os.WriteFile(bodyFile, answer, 0o644); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	floorAddr := ln.Addr().String()
	ln.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "--serve-floor", floorAddr, "--floor-body", bodyFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := waitHealthy(floorAddr, o.wait); err != nil {
		return err
	}
	var best [2]float64
	for round := range o.floor {
		for i, a := range []string{addr, floorAddr} {
			res, err := s.run(a, o.duration, o.maxRequests)
			if err != nil {
				return fmt.Errorf("%s against %s: %w", s.name, a, err)
			}
			rps := float64(res.requests) / res.elapsed.Seconds()
			fmt.Fprintf(os.Stderr, "round %d %s: %.0f requests/s\n", round+1, [2]string{"server", "floor"}[i], rps)
			best[i] = max(best[i], rps)
		}
	}
	fmt.Printf("\n%s, %d clients, best of %d alternating runs: the server %.0f requests/s, a bare net/http handler reading the same body and writing the same %d-byte answer %.0f: %.2f× the floor\n",
		s.name, s.clients, o.floor, best[0], len(answer), best[1], best[0]/best[1])
	return nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s resolves to %s: loopback addresses only", addr, ip)
		}
	}
	return nil
}

func waitHealthy(addr string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server at %s not healthy after %v: %v", addr, wait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scenario is one fixed request sent over and over.
type scenario struct {
	name    string
	path    string
	body    []byte
	items   int
	clients int
	// want is the exact response body.
	want []byte
}

// cases cycles through answers and truths: covered, impossible, reversed
// and missing answers, with the rewards the Train rule gives them.
var cases = []struct {
	response, label string
	remaining       int64
	possible        bool
	reward          string
}{
	{"<think>two more turns</think><answer>[140, 160]</answer>", `{"remaining_tokens":150,"is_possible":true,"ground_truth":"[135, 165]"}`, 150, true, "1.56"},
	{"<answer>impossible</answer>", `{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`, 0, false, "0.2"},
	{"<answer>[900, 700]</answer>", `{"remaining_tokens":800,"is_possible":true,"ground_truth":"[720, 880]"}`, 800, true, "0"},
	{"I am not sure.", `{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`, 0, false, "0"},
}

func rewardsPrefix(items int) []byte {
	b := []byte(`{"rewards":[`)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, cases[i%len(cases)].reward...)
	}
	return append(b, ']')
}

func openRLHF(name, prompt string, items, clients int) scenario {
	var req struct {
		Query   []string `json:"query"`
		Prompts []string `json:"prompts"`
		Labels  []string `json:"labels"`
	}
	for i := range items {
		c := cases[i%len(cases)]
		req.Query = append(req.Query, prompt+c.response+"<|im_end|>")
		req.Prompts = append(req.Prompts, prompt)
		req.Labels = append(req.Labels, c.label)
	}
	body := openai.Marshal(req)
	return scenario{name: name, path: "/get_reward", body: body, items: items, clients: clients, want: rewardsPrefix(items)}
}

func native(name string, items, clients int) scenario {
	type item struct {
		Response        string `json:"response"`
		RemainingTokens int64  `json:"remaining_tokens"`
		IsPossible      bool   `json:"is_possible"`
	}
	var req struct {
		Items []item `json:"items"`
	}
	for i := range items {
		c := cases[i%len(cases)]
		req.Items = append(req.Items, item{c.response, c.remaining, c.possible})
	}
	body := openai.Marshal(req)
	return scenario{name: name, path: "/v1/rewards", body: body, items: items, clients: clients, want: rewardsPrefix(items)}
}

// result is one scenario's measurements.
type result struct {
	s        scenario
	requests int64
	elapsed  time.Duration
	lat      []time.Duration
}

func (r result) String() string {
	rps := float64(r.requests) / r.elapsed.Seconds()
	slices.Sort(r.lat)
	return fmt.Sprintf("| %s | %d | %s | %d | %.0f | %.0f | %s | %s |",
		r.s.name, r.s.clients, size(len(r.s.body)), r.requests, rps, rps*float64(r.s.items),
		pct(r.lat, 0.50), pct(r.lat, 0.99))
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

func pct(sorted []time.Duration, p float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	d := sorted[int(float64(len(sorted)-1)*p)]
	return d.Round(time.Microsecond).String()
}

// maxSamples bounds the latency samples kept per client.
const maxSamples = 1 << 20

func (s scenario) run(addr string, d time.Duration, maxRequests int64) (result, error) {
	req := append([]byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		s.path, addr, len(s.body))), s.body...)
	budget := atomic.Int64{}
	budget.Store(maxRequests)
	deadline := time.Now().Add(d)
	lats := make([][]time.Duration, s.clients)
	errs := make([]error, s.clients)
	var wg sync.WaitGroup
	began := time.Now()
	for c := range s.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats[c], errs[c] = s.client(addr, req, deadline, &budget)
		}()
	}
	wg.Wait()
	res := result{s: s, elapsed: time.Since(began)}
	for c := range s.clients {
		if errs[c] != nil {
			return res, errs[c]
		}
		res.lat = append(res.lat, lats[c]...)
	}
	res.requests = int64(len(res.lat))
	return res, nil
}

// client sends req over one connection until the deadline or the shared
// budget runs out, checking the first response byte for byte.
func (s scenario) client(addr string, req []byte, deadline time.Time, budget *atomic.Int64) ([]time.Duration, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	var lat []time.Duration
	var body []byte
	for i := 0; time.Now().Before(deadline) && budget.Add(-1) >= 0 && len(lat) < maxSamples; i++ {
		t0 := time.Now()
		if _, err := conn.Write(req); err != nil {
			return lat, err
		}
		if body, err = readResponse(br, body[:0]); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(t0))
		if i == 0 && !bytes.HasPrefix(body, s.want) {
			return lat, fmt.Errorf("unexpected response %.200s", body)
		}
	}
	return lat, nil
}

// readResponse reads one HTTP/1.1 response with a Content-Length and
// returns its body; any status but 200 is an error.
func readResponse(br *bufio.Reader, body []byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return nil, fmt.Errorf("status %q", bytes.TrimSpace(line))
	}
	n := -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, errors.New("response without Content-Length")
	}
	body = slices.Grow(body, n)[:n]
	_, err = io.ReadFull(br, body)
	return body, err
}
