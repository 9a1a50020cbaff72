package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// benchProxyEnv names the environment variable that makes the test binary
// serve one proxy of the latency benchmark (proxySpec, JSON) in a process
// of its own instead of running tests: it says "listening on URL" on
// stdout and serves until SIGTERM or the end of its stdin (its parent
// gone).
const benchProxyEnv = "BAGEN_GUARD_BENCH_PROXY"

// proxySpec is a proxy the latency benchmark runs: "bare", a bare
// httputil.ReverseProxy with the guard's transport, or "guard", with a
// ledger in Ledger when set.
type proxySpec struct {
	Kind     string `json:"kind"`
	Upstream string `json:"upstream"`
	Ledger   string `json:"ledger,omitempty"`
}

func TestMain(m *testing.M) {
	if v := os.Getenv(benchProxyEnv); v != "" {
		if err := serveProxy(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveProxy serves the proxy spec (JSON) names on a loopback port until
// SIGTERM or the end of stdin.
func serveProxy(spec string) error {
	var p proxySpec
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		return fmt.Errorf("%s: %w", benchProxyEnv, err)
	}
	if p.Kind != "bare" && p.Kind != "guard" {
		return fmt.Errorf("%s: kind %q, want bare or guard", benchProxyEnv, p.Kind)
	}
	target, err := url.Parse(p.Upstream)
	if err != nil || target.Scheme != "http" || target.Host == "" {
		return fmt.Errorf("%s: upstream %q, want an http:// URL", benchProxyEnv, p.Upstream)
	}
	var g *Guard
	if p.Kind == "guard" {
		if g, err = New(Config{Upstream: p.Upstream, Ledger: p.Ledger}); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	fmt.Printf("listening on http://%s\n", l.Addr())
	if g == nil {
		srv := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }, Transport: transport(nil)}}
		go func() { <-ctx.Done(); srv.Close() }()
		if err := srv.Serve(l); err != http.ErrServerClosed {
			return err
		}
		return nil
	}
	return g.Serve(ctx, l)
}

// TestServeProxyRefuses: a proxy spec the benchmark could not serve is
// refused, named, before anything listens.
func TestServeProxyRefuses(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{`{"kind":`, benchProxyEnv + ": unexpected end of JSON input"},
		{`{"kind":"nope","upstream":"http://127.0.0.1:1"}`, benchProxyEnv + `: kind "nope", want bare or guard`},
		{`{"kind":"bare"}`, benchProxyEnv + `: upstream "", want an http:// URL`},
		{`{"kind":"guard","upstream":"127.0.0.1:1"}`, benchProxyEnv + `: upstream "127.0.0.1:1", want an http:// URL`},
	} {
		if err := serveProxy(c.spec); err == nil || err.Error() != c.want {
			t.Errorf("spec %s: %v, want %s", c.spec, err, c.want)
		}
	}
}
