package prediction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"bagen-data/internal/openai"
	"bagen-data/rollout"
)

// OpenAI answers probes through an OpenAI-compatible Chat Completions
// endpoint (POST {base}/chat/completions): vLLM, SGLang, llama.cpp's
// server, Ollama's /v1 and hosted APIs. One non-streaming request per
// probe. It is safe for concurrent use once its fields are set; Validate
// checks them.
type OpenAI struct {
	// BaseURL is the server's API root: http://host:8000/v1. A URL with no
	// path gets /v1; a trailing /chat/completions is dropped.
	BaseURL string
	// Model is the model name sent with each request; required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Header holds extra request headers (gateways).
	Header http.Header
	// Temperature is the sampling temperature (0: greedy, the paper's).
	Temperature float64
	// MaxTokens caps the answer; zero means 512, the authors' cap.
	MaxTokens int
	// Seed, when set, is sent as "seed".
	Seed *int64
	// Extra is merged into every request body last (vendor parameters:
	// reasoning_effort, chat_template_kwargs, top_p, …); it may not set
	// model, messages or stream.
	Extra map[string]any
	// HTTP is the client to send with; nil means one without a timeout of
	// its own (Retry bounds each attempt).
	HTTP *http.Client
}

// reserved are the request keys Extra may not set.
var reserved = []string{"messages", "model", "stream"}

// Validate reports every bad field at once.
func (o *OpenAI) Validate() error {
	var errs []error
	if o.Model == "" {
		errs = append(errs, errors.New("model: none given"))
	}
	if _, err := o.endpoint("/chat/completions"); err != nil {
		errs = append(errs, err)
	}
	if o.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("max tokens: want ≥ 0, got %d", o.MaxTokens))
	}
	if o.Temperature < 0 {
		errs = append(errs, fmt.Errorf("temperature: want ≥ 0, got %g", o.Temperature))
	}
	for _, k := range reserved {
		if _, ok := o.Extra[k]; ok {
			errs = append(errs, fmt.Errorf("extra body: %q is set by the client", k))
		}
	}
	return errors.Join(errs...)
}

// endpoint resolves path (e.g. /chat/completions) against BaseURL.
func (o *OpenAI) endpoint(path string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(o.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("endpoint %q: want http(s)://host[:port][/v1]", o.BaseURL)
	}
	p := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/chat/completions")
	if p == "" {
		p = "/v1"
	}
	u.Path = p + path
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

func (o *OpenAI) client() *http.Client {
	if o.HTTP != nil {
		return o.HTTP
	}
	return http.DefaultClient
}

// Body returns the JSON request body for messages: model, messages,
// temperature, max_tokens, seed and then Extra's keys.
func (o *OpenAI) Body(messages []rollout.Message) ([]byte, error) {
	msgs := make([]openai.Message, len(messages))
	for i, m := range messages {
		msgs[i] = openai.Message{Role: m.Role, Content: openai.Text(m.Content)}
	}
	body := map[string]any{
		"model": o.Model, "messages": msgs, "stream": false,
		"temperature": o.Temperature, "max_tokens": positive(o.MaxTokens, DefaultMaxTokens),
	}
	if o.Seed != nil {
		body["seed"] = *o.Seed
	}
	for k, v := range o.Extra {
		if !slices.Contains(reserved, k) {
			body[k] = v
		}
	}
	return json.Marshal(body)
}

// Complete sends one chat completion request for p.
func (o *OpenAI) Complete(ctx context.Context, p Probe) (Prediction, error) {
	body, err := o.Body(p.Messages)
	if err != nil {
		return Prediction{}, err
	}
	u, err := o.endpoint("/chat/completions")
	if err != nil {
		return Prediction{}, err
	}
	start := time.Now()
	data, err := o.do(ctx, http.MethodPost, u, body)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			return Prediction{}, o.notFound(ctx, se)
		}
		return Prediction{}, err
	}
	pred, err := decodeChat(data)
	if err != nil {
		return Prediction{}, err
	}
	pred.CustomID, pred.Model, pred.LatencyMS = p.CustomID, o.Model, ms(time.Since(start))
	return pred, nil
}

// do sends one request and returns the body of a 200 answer, or a
// *StatusError.
func (o *OpenAI) do(ctx context.Context, method, u string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, vs := range o.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	res, err := o.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxLine))
	if res.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: res.StatusCode, Message: errorMessage(data), RetryAfter: retryAfter(res.Header.Get("Retry-After"), time.Now())}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	return data, nil
}

func decodeChat(data []byte) (Prediction, error) {
	var r openai.ChatCompletion
	if err := json.Unmarshal(data, &r); err != nil {
		return Prediction{}, fmt.Errorf("%w: %w", ErrAnswer, err)
	}
	if len(r.Choices) == 0 {
		return Prediction{}, fmt.Errorf("%w: no choices", ErrAnswer)
	}
	c := r.Choices[0]
	var m openai.Message
	if c.Message != nil {
		m = *c.Message
	}
	p := Prediction{Reported: r.Model, Reasoning: m.ReasoningContent}
	if c.FinishReason != nil {
		p.FinishReason = *c.FinishReason
	}
	if p.Reasoning == "" {
		p.Reasoning = m.Reasoning
	}
	if len(m.Content) > 0 {
		if err := json.Unmarshal(m.Content, &p.Response); err != nil {
			return Prediction{}, fmt.Errorf("%w: choices[0].message.content: %w", ErrAnswer, err)
		}
	}
	if u := r.Usage; u != nil {
		p.Usage = &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
		if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
			p.Usage.ReasoningTokens = *d.ReasoningTokens
		}
		if d := u.PromptTokensDetails; d != nil {
			p.Usage.CachedTokens = d.CachedTokens
		}
	}
	return p, nil
}

// errorMessage reads an error body: {"error": {"message": …}},
// {"error": "…"}, {"message": …} (vLLM), or the text itself.
func errorMessage(data []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case e.Message != "":
			return e.Message
		}
	}
	text := strings.TrimSpace(string(data))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	if text == "" {
		text = "(empty body)"
	}
	return text
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		if s >= MaxRetryAfter.Seconds() {
			return MaxRetryAfter
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// notFound adds what the server serves to a 404: the likely cause is a
// model name it does not know.
func (o *OpenAI) notFound(ctx context.Context, se *StatusError) error {
	ids, err := o.Models(ctx)
	if err != nil || len(ids) == 0 {
		return se
	}
	return fmt.Errorf("%w; model %q? the server has: %s", se, o.Model, strings.Join(ids, ", "))
}

// Models lists the model ids the server serves (GET {base}/models).
func (o *OpenAI) Models(ctx context.Context) ([]string, error) {
	list, err := o.models(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids, nil
}

// Accounting is the token accounting o.Model learned on as the server
// lists it under GET {base}/models ("accounting", which grpo serve
// writes: "message" or "replay", see probes.ParseAccountingKind); "" when
// the server does not say or does not list the model.
func (o *OpenAI) Accounting(ctx context.Context) (string, error) {
	list, err := o.models(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range list.Data {
		if m.ID == o.Model {
			return m.Accounting, nil
		}
	}
	return "", nil
}

func (o *OpenAI) models(ctx context.Context) (openai.ModelList, error) {
	var list openai.ModelList
	u, err := o.endpoint("/models")
	if err != nil {
		return list, err
	}
	data, err := o.do(ctx, http.MethodGet, u, nil)
	if err != nil {
		return list, err
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return list, fmt.Errorf("models: %w", err)
	}
	return list, nil
}
