package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// discard is a minimal ResponseWriter so the benchmarks measure the
// handler, not httptest's recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

func benchHandler(b *testing.B, path string, body []byte) {
	h, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("POST", path, nil)
	w := &discard{h: http.Header{}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req.Body = nopCloser{bytes.NewReader(body)}
		req.ContentLength = int64(len(body))
		h.ServeHTTP(w, req)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func BenchmarkOpenRLHFSingle(b *testing.B) {
	prompt, err := os.ReadFile("testdata/prompt.txt")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(map[string][]string{
		"query":   {string(prompt) + "<answer>[140, 160]</answer><|im_end|>"},
		"prompts": {string(prompt)},
		"labels":  {`{"remaining_tokens":150,"is_possible":true,"ground_truth":"[135, 165]"}`},
	})
	benchHandler(b, "/get_reward", body)
}

func BenchmarkNative4096(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"items":[`)
	for i := range 4096 {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"response":"<think>two more turns</think><answer>[140, 160]</answer>","remaining_tokens":150,"is_possible":true}`)
	}
	buf.WriteString(`]}`)
	benchHandler(b, "/v1/rewards", buf.Bytes())
}
