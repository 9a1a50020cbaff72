package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"bagen-data/grpo"
	"bagen-data/internal/httpd"
	"bagen-data/internal/openai"
)

// route is one endpoint: its path, the one method it accepts (a GET route
// also answers HEAD) and how it answers.
type route struct {
	name   string // labels the route's metrics
	path   string
	method string
	// serve answers r. On success it has written the response and returns
	// its status; on error it has written nothing and the handler answers
	// with the error.
	serve func(h *handler, w http.ResponseWriter, r *http.Request) (int, error)
}

// routes is the one list of the server's endpoints: the mux, the metrics
// and the access log all derive from it.
var routes = []route{
	{name: "chat_completions", path: "/v1/chat/completions", method: http.MethodPost, serve: (*handler).chat},
	{name: "models", path: "/v1/models", method: http.MethodGet, serve: (*handler).models},
	{name: "healthz", path: "/healthz", method: http.MethodGet, serve: (*handler).health},
	{name: "metrics", path: "/metrics", method: http.MethodGet, serve: (*handler).metricsPage},
}

// handler routes requests, records metrics and maps errors to statuses.
// Safe for concurrent use.
type handler struct {
	cfg      Config
	metrics  *metrics
	routes   *httpd.Routes[endpoint]
	draining atomic.Bool
	ids      atomic.Uint64 // completion ids
	idBase   string
}

func newHandler(cfg Config) (*handler, error) {
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	pseudo := func(name string) *endpoint { return &endpoint{route: route{name: name}, RouteMetrics: m.Bind(name)} }
	h := &handler{cfg: cfg, metrics: m, routes: httpd.NewRoutes(pseudo),
		idBase: "chatcmpl-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"}
	for _, rt := range routes {
		if !h.routes.Add(rt.name, rt.path, &endpoint{route: rt, RouteMetrics: m.Bind(rt.name)}) {
			panic(fmt.Sprintf("server: route %q %q: want a unique name and path", rt.name, rt.path))
		}
	}
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ep := h.routes.Find(r.URL.Path)
	httpd.Header(w.Header(), &h.draining)
	code, err := h.serve(ep, w, r)
	if err != nil {
		e := classify(err)
		code = e.status
		if code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", ep.method)
		}
		writeJSON(w, code, e.Append(nil))
	}
	h.finish(r.Context(), ep, r.Method, r.URL.Path, r.RemoteAddr, code, start)
}

// serve checks the method and calls the route.
func (h *handler) serve(ep *endpoint, w http.ResponseWriter, r *http.Request) (int, error) {
	if ep.serve == nil {
		return 0, fmt.Errorf("%w: no route %s", httpd.ErrNotFound, r.URL.Path)
	}
	if err := httpd.CheckMethod(r, ep.method); err != nil {
		return 0, err
	}
	return ep.serve(h, w, r)
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	w.Write(body)
}

// finish records metrics and the access log for one request.
func (h *handler) finish(ctx context.Context, ep *endpoint, method, path, remote string, code int, start time.Time) {
	took := time.Since(start)
	ep.Observe(code, took)
	httpd.LogRequest(ctx, h.cfg.Log, method, path, remote, code, took)
}

// reject answers a request net/http rejected before routing (see
// httpd.Server.Reject): counted under the protocol pseudo-route, in the
// OpenAI error shape.
func (h *handler) reject(e *httpd.ProtocolError, remote string) []byte {
	h.finish(context.Background(), h.routes.Protocol, "", "", remote, e.Code, time.Now())
	return classify(e).Append(nil)
}

// chat answers POST /v1/chat/completions: decode, answer, encode.
func (h *handler) chat(w http.ResponseWriter, r *http.Request) (int, error) {
	body, err := httpd.ReadBody(w, r, nil, h.cfg.MaxBody)
	if err != nil {
		return 0, err
	}
	req, err := decodeChat(body)
	if err != nil {
		return 0, err
	}
	if req.Model != h.cfg.Name {
		return 0, fmt.Errorf("%w: %q; this server answers as %q", ErrUnknownModel, req.Model, h.cfg.Name)
	}
	est, err := h.cfg.Estimator.Answer(r.Context(), grpo.Query{Messages: req.Messages, Temperature: req.Temperature, Seed: req.Seed})
	if err != nil {
		return 0, err
	}
	h.metrics.observe(est)
	id, created := h.idBase+strconv.FormatUint(h.ids.Add(1), 10), time.Now().Unix()
	u := &openai.Usage{PromptTokens: int64(est.PromptTokens), CompletionTokens: int64(est.CompletionTokens),
		TotalTokens: int64(est.PromptTokens + est.CompletionTokens)}
	if req.Stream {
		return h.stream(w, id, created, est.Answer, u, req.IncludeUsage), nil
	}
	writeJSON(w, http.StatusOK, openai.Marshal(openai.ChatCompletion{ID: id, Object: openai.ObjectCompletion, Created: created, Model: h.cfg.Name,
		Choices: []openai.Choice{{Message: &openai.Message{Role: "assistant", Content: openai.Text(est.Answer)}, FinishReason: &stop}}, Usage: u}))
	return http.StatusOK, nil
}

// stream writes the answer as server-sent events: the role, the answer,
// the finish reason, the usage when asked for, then [DONE].
func (h *handler) stream(w http.ResponseWriter, id string, created int64, answer string, u *openai.Usage, withUsage bool) int {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	chunk := func(c openai.Choice, u *openai.Usage) {
		cs := []openai.Choice{c}
		if c.Delta == nil {
			cs = []openai.Choice{}
		}
		w.Write([]byte("data: "))
		w.Write(openai.Marshal(openai.ChatCompletion{ID: id, Object: openai.ObjectChunk, Created: created, Model: h.cfg.Name, Choices: cs, Usage: u}))
		w.Write([]byte("\n\n"))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	chunk(openai.Choice{Delta: &openai.Message{Role: "assistant", Content: openai.Text("")}}, nil)
	chunk(openai.Choice{Delta: &openai.Message{Content: openai.Text(answer)}}, nil)
	chunk(openai.Choice{Delta: &openai.Message{}, FinishReason: &stop}, nil)
	if withUsage {
		chunk(openai.Choice{}, u)
	}
	w.Write([]byte("data: [DONE]\n\n"))
	return http.StatusOK
}

// stop is the finish reason of every answer.
var stop = "stop"

// models answers GET /v1/models with the one model served and the token
// accounting its head learned on ("accounting": "message" or "replay",
// omitted when the checkpoint records none), which a client such as the
// guard compares with its own (probes.CheckAccounting).
func (h *handler) models(w http.ResponseWriter, r *http.Request) (int, error) {
	var created int64
	if !h.cfg.Created.IsZero() {
		created = h.cfg.Created.Unix()
	}
	writeJSON(w, http.StatusOK, openai.Marshal(openai.ModelList{Object: "list", Data: []openai.Model{{ID: h.cfg.Name, Object: "model",
		Created: created, OwnedBy: "bagen-data", Accounting: string(h.cfg.Estimator.Accounting())}}}))
	return http.StatusOK, nil
}

// health answers /healthz: 200 while serving, 503 once draining.
func (h *handler) health(w http.ResponseWriter, r *http.Request) (int, error) {
	b, err := httpd.Health(nil, &h.draining)
	if err != nil {
		return 0, err
	}
	writeJSON(w, http.StatusOK, b)
	return http.StatusOK, nil
}

// metricsPage answers /metrics in Prometheus' text exposition format.
func (h *handler) metricsPage(w http.ResponseWriter, r *http.Request) (int, error) {
	b, err := httpd.AppendMetrics(nil, h.cfg.Registry)
	if err != nil {
		return 0, err
	}
	w.Header().Set("Content-Type", httpd.MetricsType)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return http.StatusOK, nil
}
