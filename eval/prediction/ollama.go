package prediction

import (
	"context"
	"errors"
	"time"

	"github.com/ollama/ollama/api"
)

// Chatter is the part of the Ollama API client Ollama uses; *api.Client
// implements it.
type Chatter interface {
	Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error
}

// Ollama answers probes through Ollama's native POST /api/chat, one
// non-streaming request per probe. It is safe for concurrent use.
type Ollama struct {
	API   Chatter // required
	Model string  // required
	// Temperature is the sampling temperature (0: greedy, the paper's).
	Temperature float64
	// NumPredict caps the answer in tokens; zero means 512, the paper's
	// evaluation cap.
	NumPredict int
	// Seed is the sampling seed sent with every request.
	Seed int64
}

// Complete sends one chat request: the probe's messages as they are, the
// temperature, the seed and the length cap.
func (o *Ollama) Complete(ctx context.Context, p Probe) (Prediction, error) {
	if o.Model == "" {
		return Prediction{}, errors.New("ollama: no model given")
	}
	msgs := make([]api.Message, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	stream := false
	req := &api.ChatRequest{
		Model: o.Model, Messages: msgs, Stream: &stream,
		Options: map[string]any{"temperature": o.Temperature, "num_predict": positive(o.NumPredict, DefaultMaxTokens), "seed": o.Seed},
	}
	start := time.Now()
	pred := Prediction{CustomID: p.CustomID, Model: o.Model}
	var done bool
	err := o.API.Chat(ctx, req, func(r api.ChatResponse) error {
		pred.Response += r.Message.Content
		pred.Reasoning += r.Message.Thinking
		done = done || r.Done
		if r.Done {
			pred.FinishReason = r.DoneReason
			pred.Reported = r.Model
			pred.Usage = &Usage{PromptTokens: int64(r.PromptEvalCount), CompletionTokens: int64(r.EvalCount)}
		}
		return nil
	})
	if err != nil {
		return Prediction{}, err
	}
	pred.Incomplete = !done
	pred.LatencyMS = ms(time.Since(start))
	return pred, nil
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
