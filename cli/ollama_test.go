package cli

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/ollama/ollama/api"
)

// TestOllamaHint: a model Ollama does not have names the way to get it;
// other errors pass unchanged.
func TestOllamaHint(t *testing.T) {
	missing := fmt.Errorf("show nope: %w", api.StatusError{StatusCode: http.StatusNotFound, ErrorMessage: "model 'nope' not found"})
	want := "show nope: model 'nope' not found (pull it with `ollama pull MODEL`; offline, `make ollama-tiny` serves the test model tiny-qwen)"
	if got := withOllamaHint(missing); got.Error() != want || !errors.Is(got, missing) {
		t.Errorf("got %v, want %s", got, want)
	}
	other := errors.New("invalid embedding")
	if got := withOllamaHint(other); got != other {
		t.Errorf("got %v, want it unchanged", got)
	}
}
