//go:build unix

package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"bagen-data/grpo"
	"bagen-data/internal/ollamatest"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// benchProbes are n distinct Sokoban probes: p completed turns of varied
// usage and a varied budget.
func benchProbes(n int) [][]rollout.Message {
	out := make([][]rollout.Message, n)
	for i := range out {
		p := i%6 + 1
		turns := make([]probes.TurnTokens, p)
		msgs := []rollout.Message{{Role: "system", Content: probes.SokobanSystem}}
		for k := range turns {
			turns[k] = probes.TurnTokens{In: int64(90 + 7*k + i), Out: int64(20 + k)}
			msgs = append(msgs, rollout.Message{Role: "user", Content: fmt.Sprintf("Grid %d of puzzle %d:\n#####\n#_P_#\n#_X_#\n#####", k, i)},
				rollout.Message{Role: "assistant", Content: "<answer>Up || Left</answer>"})
		}
		budget := int64(2000 + 100*i)
		out[i] = append(msgs, rollout.Message{Role: "user", Content: probes.Tasks["sokoban"].ProbeText(turns, p, budget, false)})
	}
	return out
}

// BenchmarkChat8 measures the served head with the embeddings cached:
// answers per second over HTTP at 8 concurrent keep-alive clients, and
// the time each answer takes beyond the embedding (Estimate.Head: parsing
// the probe, features, the head, the answer text and both token counts),
// p50 and p99 over answers asked one at a time (under 8 callers on few
// cores the wall time would count waiting for a core), and the CPU time of
// each whole cached answer (answer-cpu: the head's part and reading the
// cached embedding), which a loaded machine does not inflate. dim=64 is the tiny model's own
// embedding; dim=3584 puts vectors of Qwen2.5-7B's width in the cache, so
// the head is the size it has over the paper's model.
//
//	go test ./grpo/server -run '^$' -bench Chat8 -benchtime 4000x
func BenchmarkChat8(b *testing.B) {
	srv := ollamatest.Start(b)
	for _, dim := range []int{64, 3584} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) { benchChat8(b, srv, dim) })
	}
}

func benchChat8(b *testing.B, srv *ollamatest.Server, dim int) {
	cache := b.TempDir()
	enc := &grpo.Encoder{Client: srv.Client(), Model: srv.Model, Cache: cache, Retries: -1}
	rng := rand.New(rand.NewPCG(3, 4))
	st := &grpo.State{Model: srv.Model, Policy: grpo.NewHead(dim+grpo.NumNumeric, 64, grpo.DefaultBins, len(grpo.DefaultWidths), rng)}
	est, err := grpo.NewEstimator(enc, st, 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	chats := benchProbes(64)
	if dim != 64 {
		fillCache(b, enc, chats, dim)
	}
	for _, m := range chats { // embed (or read) every prompt once
		if _, err := est.Answer(ctx, grpo.Query{Messages: m}); err != nil {
			b.Fatalf("%v\n%s", err, srv.Logs())
		}
	}
	s := start(b, Config{Estimator: est, Name: "head"})
	bodies := make([]string, len(chats))
	for i, m := range chats {
		bodies[i] = chatBody("head", m, "")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	b.ResetTimer()
	elapsed := parallel8(b, b.N, func(i int) {
		resp, err := client.Post(s.url+"/v1/chat/completions", "application/json", strings.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			b.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Errorf("status %d", resp.StatusCode)
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "answers/s")
	b.ReportMetric(0, "ns/op")

	heads, cpus := make([]time.Duration, b.N), make([]time.Duration, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := range heads {
		t0 := threadCPU(b)
		e, err := est.Answer(ctx, grpo.Query{Messages: chats[i%len(chats)]})
		cpus[i] = threadCPU(b) - t0
		if err != nil || !e.Cached {
			b.Errorf("answer %d: cached %v, %v", i, e.Cached, err)
		}
		heads[i] = e.Head
	}
	for name, ds := range map[string][]time.Duration{"head": heads, "answer-cpu": cpus} {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), name+"-p50-µs")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), name+"-p99-µs")
	}
}

// threadCPU is the CPU time the calling OS thread has used: the work of
// an answer without the time it waited for a core.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// parallel8 runs f(0…n−1) on 8 goroutines and returns the wall time.
func parallel8(b *testing.B, n int, f func(i int)) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// fillCache stores a random dim-wide embedding for each chat's prompt in
// enc's cache, in the encoder's layout (cache/digest[:16]/key[:2]/key.f32,
// little-endian float32s), so the estimator reads it as cached.
func fillCache(b *testing.B, enc *grpo.Encoder, chats [][]rollout.Message, dim int) {
	digest, err := enc.Digest(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range chats {
		h := sha256.Sum256([]byte(grpo.Render(m)))
		key := hex.EncodeToString(h[:])
		v := make([]byte, 4*dim)
		for i := 0; i < dim; i++ {
			binary.LittleEndian.PutUint32(v[4*i:], math.Float32bits(float32(rng.NormFloat64())))
		}
		p := filepath.Join(enc.Cache, digest[:16], key[:2], key+".f32")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, v, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
