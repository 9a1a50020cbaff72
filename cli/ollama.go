package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// ollamaTimeout bounds the check that Ollama answers at all, made before
// any work so that a server that is not running is said at once, not after
// the retries of the first request.
const ollamaTimeout = 5 * time.Second

// checkOllama reports whether anything listens at $OLLAMA_HOST, without
// sending it a request.
func checkOllama(ctx context.Context) error {
	host := envconfig.Host()
	d := net.Dialer{Timeout: ollamaTimeout}
	conn, err := d.DialContext(ctx, "tcp", host.Host)
	if err != nil {
		return withOllamaHint(fmt.Errorf("ollama: %w", err))
	}
	return conn.Close()
}

// withOllamaHint adds to an error reaching Ollama what to do about it: a
// server that does not answer, or a model it does not have.
func withOllamaHint(err error) error {
	var op *net.OpError
	var se api.StatusError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w (is Ollama running at %s? start it with `ollama serve`, or set OLLAMA_HOST to where it listens)", err, envconfig.Host())
	case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w (pull it with `ollama pull MODEL`; offline, `make ollama-tiny` serves the test model tiny-qwen)", err)
	}
	return err
}
