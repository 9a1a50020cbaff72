package grpo

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"bagen-data/internal/ollamatest"
)

func TestMain(m *testing.M) { ollamatest.Main(m) }

func TestEncoderCache(t *testing.T) {
	s := ollamatest.Start(t)
	ctx := context.Background()
	enc := &Encoder{Client: s.Client(), Model: s.Model, Cache: t.TempDir(), Batch: 2}
	prompts := []string{"<|im_start|>user\nTurn 1<|im_end|>\n", "<|im_start|>user\nTurn 2<|im_end|>\n", "<|im_start|>user\nTurn 1<|im_end|>\n", "third"}
	first, st, err := enc.Embed(ctx, prompts)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.Logs())
	}
	if want := (Stats{Prompts: 3, Cached: 0, Requests: 2}); st.Prompts != want.Prompts || st.Cached != want.Cached || st.Requests != want.Requests {
		t.Errorf("first call stats %+v, want %+v", st, want)
	}
	if len(first) != 4 || len(first[0]) != 64 {
		t.Fatalf("got %d embeddings of %d dims, want 4 of 64", len(first), len(first[0]))
	}
	if !slices.Equal(first[0], first[2]) || slices.Equal(first[0], first[1]) {
		t.Error("duplicate prompts must share a vector and different prompts must not")
	}
	digest, err := enc.Digest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(enc.Cache, digest[:16], "*", "*.f32"))
	if len(files) != 3 {
		t.Errorf("cache holds %d files, want 3", len(files))
	}
	again, st, err := enc.Embed(ctx, prompts)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cached != 3 || st.Requests != 0 {
		t.Errorf("second call stats %+v, want 3 cached and no requests", st)
	}
	for i := range first {
		if !slices.Equal(first[i], again[i]) {
			t.Errorf("prompt %d: cached vector differs from the embedded one", i)
		}
	}
	other := *enc
	other.NumCtx = 2048
	d2, err := other.Digest(ctx)
	if err != nil || d2 == digest {
		t.Errorf("num_ctx 2048 digest %s (%v) equals the 8192 one", d2, err)
	}
}

func TestEncoderUnknownModelNotRetried(t *testing.T) {
	s := ollamatest.Start(t)
	enc := &Encoder{Client: s.Client(), Model: "no-such-model", Backoff: time.Millisecond}
	_, _, err := enc.Embed(context.Background(), []string{"x"})
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
		t.Errorf("got %v, want a 404 StatusError", err)
	}
}

func TestEncoderRetriesTransportErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: every request is refused
	u, _ := url.Parse("http://" + addr)
	enc := &Encoder{Client: api.NewClient(u, http.DefaultClient), Model: "m", Retries: 2, Backoff: time.Millisecond}
	_, err = enc.embedRetryCount(t)
	if err == nil {
		t.Fatal("embedding against a closed port succeeded")
	}
}

// embedRetryCount calls embedRetry directly (Embed stops at /api/show) and
// checks it made Retries+1 attempts.
func (e *Encoder) embedRetryCount(t *testing.T) (int, error) {
	t.Helper()
	_, n, err := e.embedRetry(context.Background(), []string{"x"})
	if n != e.Retries+1 {
		t.Errorf("%d attempts, want %d", n, e.Retries+1)
	}
	return n, err
}

func TestEncoderCacheCorruptIsMiss(t *testing.T) {
	enc := &Encoder{Cache: t.TempDir()}
	d := "0123456789abcdef0123"
	key := "ab" + "cd"
	if err := enc.store(d, key, []float32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if v, ok := enc.load(d, key); !ok || !slices.Equal(v, []float32{1, 2}) {
		t.Errorf("load = %v, %v", v, ok)
	}
	if err := os.WriteFile(enc.path(d, key), []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := enc.load(d, key); ok {
		t.Error("a 3-byte cache file loaded as an embedding")
	}
}
