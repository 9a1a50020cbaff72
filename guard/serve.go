package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve serves the guard on l until ctx ends, then shuts down gracefully:
// new requests are refused, requests and streams in flight finish (at
// most grace), running estimates finish (at most EstimateTimeout).
func (g *Guard) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		g.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	g.Close()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: requests still in flight after %v", grace)
	}
	return err
}
