package tokenizer

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/ollamatest"
)

func TestMain(m *testing.M) { ollamatest.Main(m) }

func TestDefaultPath(t *testing.T) {
	t.Setenv("BAGEN_DATA_CACHE", "/data/cache")
	if got, want := DefaultPath(), "/data/cache/qwen-tokenizer.json"; got != want {
		t.Errorf("DefaultPath() with BAGEN_DATA_CACHE = %q, want %q", got, want)
	}
	t.Setenv("BAGEN_DATA_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got, want := DefaultPath(), "/xdg/bagen-data/qwen-tokenizer.json"; got != want {
		t.Errorf("DefaultPath() with XDG_CACHE_HOME = %q, want %q", got, want)
	}
}

// checkSame compares tk with the tokenizer.json one on every golden string.
func checkSame(t *testing.T, name string, tk *Tokenizer) {
	t.Helper()
	for _, c := range readGolden(t) {
		if got := tk.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Fatalf("%s: Encode(%q) = %v, want %v", name, c.Text, got, c.IDs)
		}
	}
}

func TestOpenFile(t *testing.T) {
	qwenTokenizer(t) // fails with the `make tokenizer` hint when missing
	ctx := context.Background()
	tk, err := Open(ctx, DefaultPath())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Count("\nCHAPTER XXIII"), 4; got != want {
		t.Errorf("Count = %d, want %d", got, want)
	}
	missing := filepath.Join(t.TempDir(), "nope.json")
	_, err = Open(ctx, missing)
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), `tokenizer: open `+missing+`: `) {
		t.Errorf("Open(missing) error = %v, want a not-exist error naming the spec", err)
	}
}

// hfServer serves the real tokenizer.json at the Hub's resolve URL of
// Qwen/Qwen3-0.6B, only with the right bearer token.
func hfServer(t *testing.T) *httptest.Server {
	data, err := os.ReadFile(DefaultPath())
	if err != nil {
		t.Fatalf("%v: run `make tokenizer` first", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/Qwen/Qwen3-0.6B/resolve/main/tokenizer.json":
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer hf_test":
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			w.Write(data)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenHF(t *testing.T) {
	srv := hfServer(t)
	t.Setenv("HF_ENDPOINT", srv.URL+"/")
	t.Setenv("HF_TOKEN", "hf_test")
	ctx := context.Background()
	tk, err := Open(ctx, "hf:Qwen/Qwen3-0.6B")
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "hf", tk)

	tests := []struct {
		name, spec, token string
		want              string
		is                error
	}{
		{"not found", "hf:Qwen/Nope", "hf_test",
			`tokenizer "hf:Qwen/Nope": GET ` + srv.URL + `/Qwen/Nope/resolve/main/tokenizer.json: remote error: 404 Not Found`, ErrRemote},
		{"no token", "hf:Qwen/Qwen3-0.6B", "",
			`tokenizer "hf:Qwen/Qwen3-0.6B": GET ` + srv.URL + `/Qwen/Qwen3-0.6B/resolve/main/tokenizer.json: remote error: 401 Unauthorized`, ErrRemote},
		{"no repo", "hf:", "hf_test", `tokenizer "hf:": bad tokenizer spec: want hf:OWNER/NAME, got repo ""`, ErrSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HF_TOKEN", tt.token)
			_, err := Open(ctx, tt.spec)
			if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) {
				t.Errorf("Open(%q) error = %v, want %q", tt.spec, err, tt.want)
			}
		})
	}
}

// TestOpenOllama reads the tokenizer of a real Ollama server's tiny Qwen2
// model, whose GGUF was converted from Qwen's tokenizer.json.
func TestOpenOllama(t *testing.T) {
	s := ollamatest.Start(t)
	t.Setenv("OLLAMA_HOST", s.Host)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tk, err := Open(ctx, "ollama:"+s.Model)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "ollama", tk)

	_, err = Open(ctx, "ollama:no-such-model")
	if want := `tokenizer "ollama:no-such-model": POST /api/show: model 'no-such-model' not found`; err == nil || err.Error() != want {
		t.Errorf("Open(missing model) error = %v, want %q", err, want)
	}
}

func TestOpenOllamaErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "ollama:")
	if want := `tokenizer "ollama:": bad tokenizer spec: want ollama:MODEL, got no model`; err == nil || err.Error() != want || !errors.Is(err, ErrSpec) {
		t.Errorf("Open(ollama:) error = %v, want %q", err, want)
	}
	// A closed loopback port: nothing listens there once the server is closed.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	_, err = Open(ctx, "ollama:qwen3")
	if err == nil || !strings.HasPrefix(err.Error(), `tokenizer "ollama:qwen3": POST /api/show: `) {
		t.Errorf("Open with no server: error = %v, want it to name the spec and /api/show", err)
	}
}
