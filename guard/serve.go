package guard

import (
	"context"
	"net"
)

// Serve serves the guard on l until ctx ends, then drains as every server
// of the project does (internal/httpd): /healthz answers 503, new
// connections are refused after DrainGrace, requests and streams in
// flight finish (at most DrainTimeout), then the running estimates finish
// (at most EstimateTimeout) so that the ledger has them.
func (g *Guard) Serve(ctx context.Context, l net.Listener) error {
	srv := g.cfg.Limits.Server(g)
	srv.Draining = g.draining
	err := srv.Serve(ctx, l)
	g.Close()
	return err
}
