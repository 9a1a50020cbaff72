package prediction

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"bagen-data/rollout"
)

// The benchmarks measure the client's own overhead against a loopback stub
// that answers at once, 64 requests in flight:
//
//	go test -run XXX -bench 'Ask|RawPost' -benchtime 20000x ./eval/prediction
//
// BenchmarkAsk is the whole path of `eval --endpoint`: request body, POST,
// decode, retry policy, ledger append. BenchmarkRawPost posts the same
// bytes with bare net/http and discards the answer: the floor. Both report
// requests/s and process CPU per request (rusage, stub included: the stub
// runs in the same process).

func benchStub(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func benchProbes(n int) []Probe {
	ps := make([]Probe, n)
	for i := range ps {
		ps[i] = Probe{CustomID: fmt.Sprintf("t%d_probe_after_turn_0", i), Messages: []rollout.Message{
			{Role: "system", Content: "You estimate the remaining token budget of an agent."},
			{Role: "user", Content: fmt.Sprintf("Turn %d of a Sokoban rollout. How many tokens remain?", i)}}}
	}
	return ps
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, start time.Time, cpu0 time.Duration) {
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
	b.ReportMetric(float64((cpu()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
}

func transport() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

func BenchmarkAsk(b *testing.B) {
	u := benchStub(b)
	c := &OpenAI{BaseURL: u, Model: "qwen", HTTP: transport()}
	ps := benchProbes(b.N)
	log, _, err := OpenLog(filepath.Join(b.TempDir(), "p.jsonl"), "qwen")
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpu()
	st, err := Ask(b.Context(), c, ps, Options{Concurrency: 64}, log.Append)
	report(b, start, cpu0)
	if err != nil || st.Answered != b.N {
		b.Fatalf("%+v, %v", st, err)
	}
}

func BenchmarkRawPost(b *testing.B) {
	u := benchStub(b) + "/v1/chat/completions"
	hc := transport()
	body, _ := (&OpenAI{Model: "qwen"}).Body(benchProbes(1)[0].Messages)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpu()
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range 64 {
		wg.Go(func() {
			for range next {
				res, err := hc.Post(u, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	report(b, start, cpu0)
}
