package ollamatest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

func TestMain(m *testing.M) { Main(m) }

func TestServerEmbedAndChat(t *testing.T) {
	s := Start(t)
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	show, err := c.Show(ctx, &api.ShowRequest{Model: s.Model})
	if err != nil {
		t.Fatal(err)
	}
	if got := show.Details.Family; got != "qwen2" {
		t.Errorf("family: got %q, want qwen2", got)
	}
	if got := show.ModelInfo["qwen2.embedding_length"]; got != float64(64) {
		t.Errorf("qwen2.embedding_length: got %v, want 64", got)
	}

	prompts := []string{"Turn 1: the box is at (2, 3).", "<answer>[100, 200]</answer>"}
	var first [][]float32
	for i := range 2 {
		start := time.Now()
		res, err := c.Embed(ctx, &api.EmbedRequest{Model: s.Model, Input: prompts})
		if err != nil {
			t.Fatalf("embed: %v\n%s", err, s.Logs())
		}
		t.Logf("embed %d prompts (call %d): %v", len(prompts), i+1, time.Since(start))
		if len(res.Embeddings) != 2 {
			t.Fatalf("embeddings: got %d, want 2", len(res.Embeddings))
		}
		for j, e := range res.Embeddings {
			if len(e) != 64 {
				t.Fatalf("embedding %d: got %d dims, want 64", j, len(e))
			}
			if n := norm(e); math.Abs(n-1) > 1e-4 {
				t.Errorf("embedding %d: L2 norm %v, want 1", j, n)
			}
		}
		if i == 1 {
			for j := range first {
				for k := range first[j] {
					if first[j][k] != res.Embeddings[j][k] {
						t.Fatalf("embedding %d[%d]: %v then %v; want the same vector twice", j, k, first[j][k], res.Embeddings[j][k])
					}
				}
			}
		}
		first = res.Embeddings
	}
	if d := dot(first[0], first[1]); d > 0.9999 {
		t.Errorf("two different prompts embed to cosine %v; want distinct vectors", d)
	}

	start := time.Now()
	var last api.ChatResponse
	stream := false
	err = c.Chat(ctx, &api.ChatRequest{
		Model:    s.Model,
		Messages: []api.Message{{Role: "system", Content: "Estimate."}, {Role: "user", Content: "How many tokens remain?"}},
		Stream:   &stream,
		Options:  map[string]any{"temperature": 0, "seed": 1, "num_predict": 8},
	}, func(r api.ChatResponse) error { last = r; return nil })
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, s.Logs())
	}
	t.Logf("chat, 8 tokens: %v (eval %d tokens in %v)", time.Since(start), last.EvalCount, last.EvalDuration)
	if !last.Done || last.Message.Role != "assistant" {
		t.Errorf("chat: done %v role %q, want done assistant", last.Done, last.Message.Role)
	}
	if last.EvalCount < 1 || last.EvalCount > 8 {
		t.Errorf("chat eval count: got %d, want 1..8 (num_predict 8)", last.EvalCount)
	}
}

func norm(v []float32) float64 { return math.Sqrt(dot(v, v)) }

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
