package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/internal/httpd"
)

// route is one endpoint: its path, the method it accepts and how it
// answers.
type route struct {
	// name labels the route's metrics.
	name string
	path string
	// method is the one method accepted; a GET route also answers HEAD.
	method string
	// contentType is the type of a 200 body; "" means application/json.
	// Errors are always JSON.
	contentType string
	// use says who calls the route and with which flags, for the answer
	// to a path no route has; {url} stands for the route's URL, {base}
	// for the server's.
	use string
	// serve answers the body in st.body: it fills st.out and returns the
	// number of items scored. Items and the rewards judged into st.tally
	// are recorded when it returns no error.
	serve func(h *handler, st *state) (int, error)
}

// routes is the one list of the server's endpoints: the mux, the metrics
// (one series per route, bound in newHandler) and the access log all
// derive from it, so a route added here is routed, counted and logged.
var routes = []route{
	{name: "get_reward", path: "/get_reward", method: http.MethodPost, serve: (*handler).openRLHF,
		use: "OpenRLHF v0.10.2 and later: --reward.remote_url {url} --data.label_key label; before v0.10.2: --remote_rm_url {url} --label_key label"},
	{name: "slime", path: "/slime", method: http.MethodPost, serve: (*handler).slime,
		use: "slime: --rm-type remote_rm --rm-url {url} --label-key label"},
	{name: "v1_rewards", path: "/v1/rewards", method: http.MethodPost, serve: (*handler).native,
		use: "verl and TRL: examples/verl/bagen_reward.py and examples/trl/bagen_reward.py with BAGEN_REWARD_URL={base}"},
	{name: "healthz", path: "/healthz", method: http.MethodGet, serve: (*handler).health, use: "readiness"},
	{name: "metrics", path: "/metrics", method: http.MethodGet, contentType: httpd.MetricsType, serve: (*handler).metricsPage,
		use: "Prometheus"},
}

// endpoint is a route with its metrics bound.
type endpoint struct {
	route
	*httpd.RouteMetrics
	items prometheus.Counter
}

// handler routes requests, records metrics and maps errors to statuses.
// Safe for concurrent use.
type handler struct {
	cfg     Config
	metrics *metrics
	routes  *httpd.Routes[endpoint]
	// draining turns /healthz to 503 and adds Connection: close to every
	// response.
	draining atomic.Bool
}

func newHandler(cfg Config, table []route) (*handler, error) {
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	h := &handler{cfg: cfg, metrics: m, routes: httpd.NewRoutes(func(name string) *endpoint { return m.bind(route{name: name}) })}
	for _, rt := range table {
		if rt.serve == nil || !h.routes.Add(rt.name, rt.path, m.bind(rt)) {
			panic(fmt.Sprintf("server: route %q %q: want a unique name and path and a serve function", rt.name, rt.path))
		}
	}
	return h, nil
}

// ServeHTTP implements http.Handler. Paths no route has are answered
// by the route without a serve function that httpd.Routes gives them,
// counted as "other".
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ep := h.routes.Find(r.URL.Path)
	st := getState()
	defer putState(st)
	n, err := h.serve(ep, w, r, st)
	code := http.StatusOK
	contentType := ep.contentType
	if err != nil {
		code, contentType, n = status(err), "", 0
		if code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", ep.method)
		}
		st.out = appendError(st.out[:0], err)
	} else {
		h.metrics.rewards.merge(&st.tally)
	}
	h.write(w, code, contentType, st.out)
	h.finish(r.Context(), ep, r.Method, r.URL.Path, r.RemoteAddr, code, n, start)
}

// serve checks the method, reads the body and calls the route.
func (h *handler) serve(ep *endpoint, w http.ResponseWriter, r *http.Request, st *state) (int, error) {
	if ep.serve == nil {
		return 0, fmt.Errorf("%w: no route %s; endpoints: %s", ErrNotFound, r.URL.Path, endpoints(r.Host))
	}
	if err := httpd.CheckMethod(r, ep.method); err != nil {
		return 0, err
	}
	if err := st.readBody(w, r, h.cfg.MaxBody); err != nil {
		return 0, err
	}
	return ep.serve(h, st)
}

// endpoints lists the routes for a request to a path none has (a trainer
// given the server's base URL, as slime's --rm-url help suggests): each
// method and path and who calls it with which flags, URLs on host.
func endpoints(host string) string {
	if host == "" {
		host = "HOST:PORT"
	}
	parts := make([]string, len(routes))
	for i, rt := range routes {
		use := strings.NewReplacer("{url}", "http://"+host+rt.path, "{base}", "http://"+host).Replace(rt.use)
		parts[i] = rt.method + " " + rt.path + " (" + use + ")"
	}
	return strings.Join(parts, "; ")
}

var jsonType = []string{"application/json"}

// smallBody is net/http's buffer before chunking: a response this small,
// written once, gets its Content-Length from net/http without allocating.
const smallBody = 2048

// write sends one response; while draining it carries Connection: close,
// so the client opens its next request on a fresh connection, which the
// load balancer sends elsewhere.
func (h *handler) write(w http.ResponseWriter, code int, contentType string, body []byte) {
	hdr := w.Header()
	if contentType == "" {
		hdr["Content-Type"] = jsonType
	} else {
		hdr["Content-Type"] = []string{contentType}
	}
	if len(body) > smallBody {
		hdr["Content-Length"] = []string{itoa(len(body))}
	}
	httpd.Header(hdr, &h.draining)
	w.WriteHeader(code)
	w.Write(body)
}

// finish records metrics and the access log for one request.
func (h *handler) finish(ctx context.Context, ep *endpoint, method, path, remote string, code, items int, start time.Time) {
	took := time.Since(start)
	ep.Observe(code, took)
	if items > 0 {
		ep.items.Add(float64(items))
	}
	httpd.LogRequest(ctx, h.cfg.Log, method, path, remote, code, took, slog.Int("items", items))
}

// reject answers a request net/http rejected before routing (see
// httpd.Server.Reject): counted under the protocol pseudo-route, in the
// JSON envelope.
func (h *handler) reject(e *httpd.ProtocolError, remote string) []byte {
	h.finish(context.Background(), h.routes.Protocol, "", "", remote, e.Code, 0, time.Now())
	return appendError(nil, e)
}

// health answers /healthz: 200 while serving, 503 once draining
// (httpd.Health).
func (h *handler) health(st *state) (int, error) {
	var err error
	st.out, err = httpd.Health(st.out[:0], &h.draining)
	return 0, err
}

// metricsPage answers /metrics with the registry in Prometheus' text
// exposition format.
func (h *handler) metricsPage(st *state) (int, error) {
	var err error
	st.out, err = httpd.AppendMetrics(st.out[:0], h.cfg.Registry)
	return 0, err
}
