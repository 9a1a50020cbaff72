package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/ollama/ollama/api"

	"bagen-data/internal/cache"
)

// DefaultPath returns where `make tokenizer` puts Qwen's tokenizer.json:
// qwen-tokenizer.json in the cache directory (internal/cache), or "" when
// there is none.
func DefaultPath() string {
	p, _ := cache.Path("qwen-tokenizer.json")
	return p
}

// Open returns the tokenizer that spec names:
//
//   - "" — the file at DefaultPath;
//   - "ollama:MODEL" — the vocabulary and merges of MODEL in the Ollama
//     server at $OLLAMA_HOST (default http://127.0.0.1:11434);
//   - "hf:REPO" — REPO/resolve/main/tokenizer.json from $HF_ENDPOINT
//     (default https://huggingface.co), sending $HF_TOKEN as a bearer token
//     when set;
//   - anything else — a tokenizer.json file path.
//
// Errors name the spec and the step that failed.
func Open(ctx context.Context, spec string) (*Tokenizer, error) {
	var (
		t   *Tokenizer
		err error
	)
	switch {
	case spec == "":
		t, err = Load(DefaultPath())
	case strings.HasPrefix(spec, "ollama:"):
		t, err = openOllama(ctx, strings.TrimPrefix(spec, "ollama:"))
	case strings.HasPrefix(spec, "hf:"):
		t, err = openHF(ctx, strings.TrimPrefix(spec, "hf:"))
	default:
		t, err = Load(spec)
	}
	var pe *fs.PathError
	switch {
	case err == nil:
		return t, nil
	case errors.As(err, &pe) && pe.Path == spec:
		// The file's error names the spec already.
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return nil, fmt.Errorf("tokenizer %q: %w", spec, err)
}

// openHF downloads a tokenizer.json from the Hugging Face Hub.
func openHF(ctx context.Context, repo string) (*Tokenizer, error) {
	if repo == "" || strings.ContainsAny(repo, " ?#") {
		return nil, fmt.Errorf("%w: want hf:OWNER/NAME, got repo %q", ErrSpec, repo)
	}
	endpoint := os.Getenv("HF_ENDPOINT")
	if endpoint == "" {
		endpoint = "https://huggingface.co"
	}
	u := strings.TrimRight(endpoint, "/") + "/" + repo + "/resolve/main/tokenizer.json"
	if _, err := url.Parse(u); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	if tok := os.Getenv("HF_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %w: %s", u, ErrRemote, resp.Status)
	}
	return parse(resp.Body, u)
}

// openOllama reads a model's tokenizer from a running Ollama server through
// POST /api/show with verbose set, which returns the GGUF tokenizer arrays.
func openOllama(ctx context.Context, name string) (*Tokenizer, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: want ollama:MODEL, got no model", ErrSpec)
	}
	client, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, err
	}
	return FromOllama(ctx, client, name)
}

// FromOllama reads model's tokenizer from the Ollama server client talks
// to, through POST /api/show with verbose set (the GGUF tokenizer arrays).
func FromOllama(ctx context.Context, client *api.Client, name string) (*Tokenizer, error) {
	resp, err := client.Show(ctx, &api.ShowRequest{Model: name, Verbose: true})
	if err != nil {
		return nil, fmt.Errorf("POST /api/show: %w", err)
	}
	return fromGGUF("ollama:"+name, resp.ModelInfo)
}
