package prediction

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"golang.org/x/sync/errgroup"

	"bagen-data/dataset"
)

// Chatter is the part of the Ollama API client Ask uses; *api.Client
// implements it.
type Chatter interface {
	Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error
}

// Probe is one prompt to answer.
type Probe struct {
	CustomID string
	Messages []dataset.Message
}

// Options configures Ask. Zero fields take the defaults named.
type Options struct {
	// Model is the Ollama model name; required.
	Model string
	// Concurrency bounds requests in flight; zero means 4.
	Concurrency int
	// Seed is the sampling seed sent with every request (fixed, so
	// reruns give the same answers).
	Seed int
	// NumPredict caps the answer length in tokens; zero means 512, the
	// paper's evaluation cap. Temperature is always 0 (greedy).
	NumPredict int
	// Attempts is how many times one probe is tried on transport errors
	// and 5xx/429 answers; zero means 5.
	Attempts int
	// Backoff is the wait before the first retry, doubled after each one
	// up to 30 s; zero means 500 ms.
	Backoff time.Duration
	// Timeout bounds one request; zero means 10 minutes.
	Timeout time.Duration
	// Progress, when set, is told done of total after every answer.
	Progress func(done, total int)
}

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.NumPredict <= 0 {
		o.NumPredict = 512
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	return o
}

// Ask asks the model to answer every probe (each custom_id once) with at
// most opt.Concurrency requests in flight, and calls save with each answer
// as it arrives (never concurrently). It stops at the first error that
// retries do not fix, or when save fails, and returns it.
func Ask(ctx context.Context, c Chatter, probes []Probe, opt Options, save func(Prediction) error) error {
	opt = opt.withDefaults()
	if opt.Model == "" {
		return errors.New("ask: no model given")
	}
	probes = unique(probes)
	parent := ctx
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Concurrency)
	var mu sync.Mutex
	done := 0
	for _, p := range probes {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			pred, err := askOne(ctx, c, p, opt)
			if err != nil {
				return fmt.Errorf("%s: %w", p.CustomID, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if err := save(pred); err != nil {
				return err
			}
			done++
			if opt.Progress != nil {
				opt.Progress(done, len(probes))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return parent.Err()
}

func unique(probes []Probe) []Probe {
	seen := make(map[string]bool, len(probes))
	out := make([]Probe, 0, len(probes))
	for _, p := range probes {
		if !seen[p.CustomID] {
			seen[p.CustomID] = true
			out = append(out, p)
		}
	}
	return out
}

// askOne asks for one probe, retrying transport errors with backoff.
func askOne(ctx context.Context, c Chatter, p Probe, opt Options) (Prediction, error) {
	wait := opt.Backoff
	for attempt := 1; ; attempt++ {
		pred, err := chat(ctx, c, p, opt)
		if err == nil {
			return pred, nil
		}
		if ctx.Err() != nil {
			return Prediction{}, ctx.Err()
		}
		if !retryable(err) || attempt == opt.Attempts {
			return Prediction{}, fmt.Errorf("attempt %d of %d: %w", attempt, opt.Attempts, err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return Prediction{}, ctx.Err()
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// chat sends one non-streaming chat request: the probe's messages,
// temperature 0, the seed and the length cap.
func chat(ctx context.Context, c Chatter, p Probe, opt Options) (Prediction, error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	msgs := make([]api.Message, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	stream := false
	req := &api.ChatRequest{
		Model: opt.Model, Messages: msgs, Stream: &stream,
		Options: map[string]any{"temperature": 0, "num_predict": opt.NumPredict, "seed": opt.Seed},
	}
	var answer string
	var done bool
	err := c.Chat(ctx, req, func(r api.ChatResponse) error {
		answer += r.Message.Content
		done = done || r.Done
		return nil
	})
	return Prediction{CustomID: p.CustomID, Response: answer, Model: opt.Model, Incomplete: !done}, err
}

// retryable says whether an error may go away on retry: transport errors,
// timeouts of one request, 429 and 5xx answers. Other HTTP errors (an
// unknown model is 404) will not.
func retryable(err error) bool {
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500
	}
	var ae api.AuthorizationError
	return !errors.As(err, &ae)
}

// Resume asks for the probes log has no answer for and appends each answer
// to log as it arrives. It returns how many probes it asked about.
func Resume(ctx context.Context, c Chatter, probes []Probe, log *Log, opt Options) (int, error) {
	var todo []Probe
	for _, p := range unique(probes) {
		if !log.Has(p.CustomID) {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	return len(todo), Ask(ctx, c, todo, opt, log.Append)
}
