package grpo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

// ErrUnavailable is wrapped by an Estimator's errors when the Ollama
// server cannot embed or describe the model: unreachable, failing, or
// without the model. The request may succeed later; `grpo serve` answers
// it with 503.
var ErrUnavailable = errors.New("ollama unavailable")

// Estimator answers budget probes one chat at a time with a trained head,
// exactly as grpo eval answers a file of them: the same rendered prompt,
// embedding (Encoder, its cache included), numeric features and answer
// text. It is the library under `grpo serve` and is safe for concurrent
// use.
type Estimator struct {
	enc   *Encoder
	state *State
	space Space

	mu     sync.Mutex
	digest string               // enc's model digest, once known
	tok    *tokenizer.Tokenizer // the model's tokenizer, once loaded
	rng    *rand.Rand           // draws of unseeded sampled answers
}

// NewEstimator returns an estimator answering with st's head over enc's
// model. It checks that the head's weights have the shapes its sizes and
// action space say (a checkpoint that does not is ErrCheckpoint); it does
// no I/O. seed seeds the draws of sampled answers that carry no seed of
// their own.
func NewEstimator(enc *Encoder, st *State, seed uint64) (*Estimator, error) {
	if err := checkHead(st); err != nil {
		return nil, err
	}
	return &Estimator{enc: enc, state: st, space: st.Config.Space,
		rng: rand.New(rand.NewPCG(seed, 0x65737469))}, nil // "esti"
}

// checkHead reports a head whose weights do not match its sizes or its
// action space, which Forward would index out of range.
func checkHead(st *State) error {
	h := st.Policy
	if h == nil {
		return fmt.Errorf("%w: no policy head", ErrCheckpoint)
	}
	if err := errors.Join(st.Config.Space.validate()...); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if h.In <= NumNumeric || h.Hidden <= 0 {
		return fmt.Errorf("%w: head of %d inputs and %d hidden units, want more than the %d numeric features and at least 1", ErrCheckpoint, h.In, h.Hidden, NumNumeric)
	}
	if sp := st.Config.Space; h.Bins != sp.bins() || h.Widths != len(sp.widths()) {
		return fmt.Errorf("%w: head of %d centre bins and %d widths, its action space %d and %d", ErrCheckpoint, h.Bins, h.Widths, sp.bins(), len(sp.widths()))
	}
	sizes := []struct {
		name      string
		got, want int
	}{
		{"W1", len(h.W1), h.In * h.Hidden}, {"B1", len(h.B1), h.Hidden},
		{"WK", len(h.WK), h.Hidden * 2}, {"BK", len(h.BK), 2},
		{"WC", len(h.WC), h.Hidden * h.Bins}, {"BC", len(h.BC), h.Bins},
		{"WW", len(h.WW), h.Hidden * h.Widths}, {"BW", len(h.BW), h.Widths},
	}
	for _, s := range sizes {
		if s.got != s.want {
			return fmt.Errorf("%w: head %s: %d values, want %d (in %d, hidden %d)", ErrCheckpoint, s.name, s.got, s.want, h.In, h.Hidden)
		}
	}
	return nil
}

// Model is the Ollama model the estimator embeds with.
func (e *Estimator) Model() string { return e.enc.Model }

// Accounting is the token accounting the head learned on (State.Accounting):
// the numbers its probes must carry to be answered as calibrated.
func (e *Estimator) Accounting() probes.AccountingKind { return e.state.Accounting }

// Prepare asks Ollama for what every answer needs, the model's digest (the
// embedding cache's key) and its tokenizer (usage counts), and keeps them.
// Answer calls it until it succeeds; call it at start-up to learn early
// that Ollama is unreachable (ErrUnavailable) or that the model's
// tokenizer cannot be read.
func (e *Estimator) Prepare(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.digest == "" {
		d, err := e.enc.Digest(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		e.digest = d
	}
	if e.tok == nil {
		t, err := tokenizer.FromOllama(ctx, e.enc.Client, e.enc.Model)
		switch {
		case errors.Is(err, tokenizer.ErrUnsupported) || errors.Is(err, tokenizer.ErrMalformed):
			return fmt.Errorf("tokenizer of %s: %w", e.enc.Model, err)
		case err != nil:
			return fmt.Errorf("%w: tokenizer of %s: %w", ErrUnavailable, e.enc.Model, err)
		}
		e.tok = t
	}
	return nil
}

func (e *Estimator) prepared(ctx context.Context) (string, *tokenizer.Tokenizer, error) {
	e.mu.Lock()
	d, t := e.digest, e.tok
	e.mu.Unlock()
	if d != "" && t != nil {
		return d, t, nil
	}
	if err := e.Prepare(ctx); err != nil {
		return "", nil, err
	}
	return e.prepared(ctx)
}

// Query is one chat to answer.
type Query struct {
	// Messages is the rendered probe: system, history, and the user's
	// estimation prompt last.
	Messages []rollout.Message
	// Temperature 0 answers with the greedy action, as grpo eval does; above
	// 0 samples each factor of the head's distribution with its
	// log-probabilities divided by Temperature (1 is the head's own).
	// Temperatures below MinTemperature answer greedily: the tempered
	// distribution is the greedy action up to rounding.
	Temperature float64
	// Seed, with Temperature > 0, seeds this answer's draw, so the same
	// query and seed give the same answer; nil draws from the estimator's
	// stream.
	Seed *uint64
}

// Estimate is one answer and what it cost.
type Estimate struct {
	Answer string // the answer text, as grpo eval writes it
	Action Action
	// Stated is what the probe's text states: the task, turns and budget
	// the numeric features come from.
	Stated probes.Stated
	// PromptTokens counts the rendered prompt's tokens and CompletionTokens
	// the answer's, with the model's tokenizer.
	PromptTokens, CompletionTokens int
	Cached                         bool          // the embedding came from the cache
	Embed                          time.Duration // the embedding: cache read or Ollama call
	Head                           time.Duration // everything else: parse, features, head, answer, token counts
}

// Answer answers q. A chat that is not a budget probe of a known task is
// an error wrapping probes.ErrNotProbe (a *probes.PromptError naming the
// message); Ollama failing is ErrUnavailable.
func (e *Estimator) Answer(ctx context.Context, q Query) (Estimate, error) {
	start := time.Now()
	p, stated, err := probeOf(q.Messages)
	if err != nil {
		return Estimate{}, err
	}
	digest, tok, err := e.prepared(ctx)
	if err != nil {
		return Estimate{}, err
	}
	t0 := time.Now()
	vec, cached, err := e.embed(ctx, digest, p.Prompt)
	embed := time.Since(t0)
	if err != nil {
		return Estimate{}, err
	}
	x := Features(vec, p)
	if len(x) != e.state.Policy.In {
		return Estimate{}, fmt.Errorf("%w: the head takes %d features, %s gives %d (another model than %q?)", ErrData, e.state.Policy.In, e.enc.Model, len(x), e.state.Model)
	}
	a := e.act(e.state.Policy.Forward(x), q)
	est := Estimate{Answer: e.space.Answer(a, p.Budget), Action: a, Stated: stated, Cached: cached, Embed: embed}
	est.PromptTokens, est.CompletionTokens = tok.Count(p.Prompt), tok.Count(est.Answer)
	est.Head = time.Since(start) - embed
	return est, nil
}

// probeOf renders the chat as training does and takes the numeric
// features' numbers from the probe's text.
func probeOf(msgs []rollout.Message) (Probe, probes.Stated, error) {
	st, err := probes.ParseProbe(msgs)
	if err != nil {
		return Probe{}, st, err
	}
	turns := make([]dataset.TurnTokens, len(st.Turns))
	for k, t := range st.Turns {
		turns[k] = dataset.TurnTokens{Turn: int64(k + 1), InputTokens: t.In, OutputTokens: t.Out}
	}
	return Probe{Prompt: Render(msgs), Budget: st.Budget, Turns: turns}, st, nil
}

// embed returns prompt's embedding from the cache, or from Ollama (one
// request under the encoder's retry policy), caching it.
func (e *Estimator) embed(ctx context.Context, digest, prompt string) ([]float32, bool, error) {
	h := sha256.Sum256([]byte(prompt))
	key := hex.EncodeToString(h[:])
	if v, ok := e.enc.load(digest, key); ok {
		return v, true, nil
	}
	vecs, _, err := e.enc.embedRetry(ctx, []string{prompt})
	if err != nil {
		if errors.Is(err, ErrEmbed) {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if len(vecs[0]) == 0 {
		return nil, false, fmt.Errorf("embed %s: %w: no dimensions", e.enc.Model, ErrEmbed)
	}
	if err := e.enc.store(digest, key, vecs[0]); err != nil {
		return nil, false, err
	}
	return vecs[0], false, nil
}

// MinTemperature is the smallest temperature that samples.
const MinTemperature = 1e-6

// act chooses the action: greedy at temperature 0, else a draw from the
// tempered distribution.
func (e *Estimator) act(d Dist, q Query) Action {
	if q.Temperature < MinTemperature {
		return d.Greedy()
	}
	d = d.Tempered(q.Temperature)
	if q.Seed != nil {
		return d.Sample(rand.New(rand.NewPCG(*q.Seed, 0x73656564))) // "seed"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return d.Sample(e.rng)
}

// Tempered returns d with each factor's log-probabilities divided by t
// and renormalised: t = 1 is d, t → 0 the greedy action, t → ∞ uniform.
func (d Dist) Tempered(t float64) Dist {
	scale := func(lp []float64) []float64 {
		z := make([]float64, len(lp))
		for i, v := range lp {
			z[i] = v / t
		}
		return logSoftmax(z)
	}
	out := Dist{Centre: scale(d.Centre), Width: scale(d.Width)}
	copy(out.Kind[:], scale(d.Kind[:]))
	return out
}

// RunName is the name of the run a checkpoint path belongs to (a run's
// output directory, one of its checkpoints, or a state.gob in one): the
// name in its eval.json, else the output directory's name.
func RunName(path string) string {
	dir := filepath.Clean(path)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	if filepath.Base(filepath.Dir(dir)) == CheckpointDir {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	var run struct {
		Name string `json:"name"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, EvalFile)); err == nil && json.Unmarshal(b, &run) == nil && run.Name != "" {
		return run.Name
	}
	return filepath.Base(dir)
}

// CheckpointTime is when the checkpoint at path (as LoadState takes it)
// was written, or the zero time when it cannot tell.
func CheckpointTime(path string) time.Time {
	file, err := stateFile(path)
	if err != nil {
		return time.Time{}
	}
	fi, err := os.Stat(file)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
