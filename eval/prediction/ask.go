package prediction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"bagen-data/dataset"
	"bagen-data/rollout"
)

// Probe is one prompt to answer: the prompt column of an eval row, sent as
// it is.
type Probe struct {
	CustomID string
	Messages []rollout.Message
}

// Client answers one probe with one request. Ask retries it (Retry) and
// bounds how many run at once; implementations are safe for concurrent
// use. *OpenAI and *Ollama implement it.
type Client interface {
	Complete(ctx context.Context, p Probe) (Prediction, error)
}

// Defaults of Options, Retry and the clients' answer caps, the command
// line's too.
const (
	DefaultConcurrency = 8   // Options.Concurrency: the paper's evaluation scripts
	DefaultAttempts    = 6   // Retry.Attempts
	DefaultMaxTokens   = 512 // Ollama.NumPredict, OpenAI.MaxTokens: the paper's and the authors' cap

	DefaultTimeout = 2 * time.Minute // Retry.Timeout
)

// NoTimeout as Retry.Timeout leaves an attempt unbounded but by the
// caller's context.
const NoTimeout time.Duration = -1

// Options configures Ask. Zero fields take the defaults named.
type Options struct {
	// Concurrency bounds requests in flight; zero means 8 (the paper's
	// evaluation scripts).
	Concurrency int
	// Rate caps requests started per second, retries included; zero means
	// no cap.
	Rate float64
	// Retry is the retry policy of each probe.
	Retry Retry
	// Progress, when set, is told how the run goes after every probe
	// (never concurrently).
	Progress func(Progress)
}

// Progress is a run's state after a probe finished.
type Progress struct {
	Done, Failed, Total int
	Elapsed             time.Duration
}

// Rate is probes finished per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done+p.Failed) / p.Elapsed.Seconds()
}

// ETA estimates the time left at the rate so far; 0 when unknown.
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r == 0 {
		return 0
	}
	return time.Duration(float64(p.Total-p.Done-p.Failed) / r * float64(time.Second))
}

// Stats is what a run spent.
type Stats struct {
	// Probes is how many were asked; Answered and Failed split them (a
	// run stopped early leaves the rest in neither). Stale counts the
	// asked probes whose saved answer was to another request (Resume).
	Probes, Answered, Failed, Stale int
	// Requests counts HTTP requests, retries included.
	Requests int
	// Tokens the server reported for the answered probes; CachedTokens
	// are prompt tokens read from its prefix cache.
	PromptTokens, CompletionTokens, ReasoningTokens, CachedTokens int64
	// Wall is the run's wall time.
	Wall time.Duration
}

// Add sums two runs' spend (wall times add).
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Probes: s.Probes + o.Probes, Answered: s.Answered + o.Answered, Failed: s.Failed + o.Failed, Stale: s.Stale + o.Stale,
		Requests: s.Requests + o.Requests, PromptTokens: s.PromptTokens + o.PromptTokens,
		CompletionTokens: s.CompletionTokens + o.CompletionTokens, ReasoningTokens: s.ReasoningTokens + o.ReasoningTokens,
		CachedTokens: s.CachedTokens + o.CachedTokens, Wall: s.Wall + o.Wall,
	}
}

// Dollars prices the tokens at p (reasoning tokens are completion
// tokens, cached tokens prompt tokens at the cached price).
func (s Stats) Dollars(p Prices) float64 {
	return p.Cost(s.PromptTokens, s.CachedTokens, s.CompletionTokens)
}

// Ask answers every probe (each custom_id once) with at most
// opt.Concurrency requests in flight and calls save with each result as it
// arrives, never concurrently: an answer, or a failure line (Error set)
// for a probe whose retries ran out. It stops early, returning the error,
// when the server refuses a request for good (ErrPermanent: a wrong model,
// key or request), when as many probes in a row as run at once fail (at
// least 4: the server is down), when save fails or when ctx ends. Otherwise, when some
// probes failed, it returns a *FailedError listing them.
func Ask(ctx context.Context, c Client, probes []Probe, opt Options, save func(Prediction) error) (Stats, error) {
	probes = unique(probes)
	r := newRun(c, len(probes), opt, save)
	parent := ctx
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency)
	for _, p := range probes {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return r.ask(ctx, p) })
	}
	err := g.Wait()
	r.stats.Wall = time.Since(r.start)
	switch {
	case err != nil:
		return r.stats, err
	case parent.Err() != nil:
		return r.stats, parent.Err()
	case len(r.failed) > 0:
		return r.stats, &FailedError{IDs: r.failed, Last: r.last}
	}
	return r.stats, nil
}

// run is the state of one Ask.
type run struct {
	client      Client
	opt         Options
	retry       Retry
	concurrency int
	save        func(Prediction) error
	start       time.Time

	mu     sync.Mutex
	stats  Stats
	failed []string
	streak int // probes failed in a row
	last   error
}

func newRun(c Client, n int, opt Options, save func(Prediction) error) *run {
	r := &run{client: c, opt: opt, retry: opt.Retry, concurrency: positive(opt.Concurrency, DefaultConcurrency), save: save, start: time.Now()}
	r.stats.Probes = n
	if opt.Rate > 0 {
		r.retry.Pace = newPacer(opt.Rate).wait
	}
	return r
}

func (r *run) ask(ctx context.Context, p Probe) error {
	var pred Prediction
	attempts, err := r.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		pred, err = r.client.Complete(ctx, p)
		return err
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Requests += attempts
	switch {
	case err == nil:
		return r.answered(pred, attempts)
	case errors.Is(err, ErrPermanent):
		return fmt.Errorf("%s: %w", p.CustomID, err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return r.fail(p, attempts, err)
}

func (r *run) answered(p Prediction, attempts int) error {
	p.Attempts = attempts
	if err := r.save(p); err != nil {
		return err
	}
	r.streak = 0
	r.stats.Answered++
	if u := p.Usage; u != nil {
		r.stats.PromptTokens += u.PromptTokens
		r.stats.CompletionTokens += u.CompletionTokens
		r.stats.ReasoningTokens += u.ReasoningTokens
		r.stats.CachedTokens += u.CachedTokens
	}
	r.progress()
	return nil
}

// minStreak is the fewest failed probes in a row that stop a run.
const minStreak = 4

// fail records a probe whose retries ran out; as many in a row as run at
// once (at least minStreak) mean the server is down, and the run stops.
func (r *run) fail(p Probe, attempts int, err error) error {
	if serr := r.save(Prediction{CustomID: p.CustomID, Error: err.Error(), Attempts: attempts}); serr != nil {
		return serr
	}
	r.stats.Failed++
	r.failed = append(r.failed, p.CustomID)
	r.last = err
	r.streak++
	r.progress()
	if r.streak >= max(r.concurrency, minStreak) {
		return fmt.Errorf("%d probes in a row got no answer, stopping (last %s: %w)", r.streak, p.CustomID, err)
	}
	return nil
}

func (r *run) progress() {
	if r.opt.Progress != nil {
		r.opt.Progress(Progress{Done: r.stats.Answered, Failed: r.stats.Failed, Total: r.stats.Probes, Elapsed: time.Since(r.start)})
	}
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

// pacer spaces request starts 1/rate apart.
type pacer struct {
	mu    sync.Mutex
	next  time.Time
	every time.Duration
}

func newPacer(rate float64) *pacer {
	return &pacer{every: time.Duration(float64(time.Second) / rate)}
}

func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Resume asks for the probes log has no answer for to the same request
// (RequestKey of the log's model, c's sampling and the probe's prompt:
// never asked, failed before, or answered to another prompt or sampling,
// which Stats.Stale counts) and appends each result to log, with its key,
// as it arrives. It returns how many probes it asked about and what they
// cost.
func Resume(ctx context.Context, c Client, probes []Probe, log *Log, opt Options) (Stats, error) {
	probes = unique(probes)
	keys := RequestKeys(c, log.model, probes)
	var todo []Probe
	stale := 0
	for _, p := range probes {
		if log.HasKey(p.CustomID, keys[p.CustomID]) {
			continue
		}
		todo = append(todo, p)
		if log.Has(p.CustomID) {
			stale++
		}
	}
	if len(todo) == 0 {
		return Stats{}, nil
	}
	st, err := Ask(ctx, c, todo, opt, func(p Prediction) error {
		p.Key = keys[p.CustomID]
		return log.Append(p)
	})
	st.Stale = stale
	return st, err
}

// ProbesOf makes one probe per eval or RL row: its custom_id and prompt.
func ProbesOf(rows []dataset.RLRow) []Probe {
	out := make([]Probe, len(rows))
	for i, r := range rows {
		out[i] = Probe{CustomID: r.ExtraInfo.CustomID, Messages: r.Prompt}
	}
	return out
}

// ResumeFile opens the ledger at path for model's answers (OpenLog), asks
// the probes it has no answer for to the same request (Resume) and closes
// it. It returns how many probes the ledger had answered before to the
// same request (the answers reused) and what this run spent; the
// error is the ledger's or Resume's (a *FailedError when some probes
// failed, the ledger then holds their failure lines).
func ResumeFile(ctx context.Context, c Client, probes []Probe, path, model string, opt Options) (before int, st Stats, err error) {
	log, _, err := OpenLog(path, model)
	if err != nil {
		return 0, Stats{}, err
	}
	probes = unique(probes)
	st, err = Resume(ctx, c, probes, log, opt)
	before = len(probes) - st.Probes
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	return before, st, err
}
