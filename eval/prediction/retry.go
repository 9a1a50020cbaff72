package prediction

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
)

// Retry is the one retry policy of every client of a remote model: the
// chat clients here and grpo's embedding encoder. An attempt that fails
// with a 429, a 408 or a 5xx answer, a transport error (refused, reset,
// a body cut short or not JSON) or its own timeout is repeated after
// exponential backoff with jitter, or after the server's Retry-After when
// that is longer. Any other HTTP answer (400, 401, 403, 404, 422) cannot
// succeed on repeat and ends the call with an error wrapping ErrPermanent.
// Retry is a value; its zero value is the documented defaults.
type Retry struct {
	// Attempts bounds the requests per call, the first included; zero
	// means 6.
	Attempts int
	// Backoff is the wait before the first retry, doubled after each up to
	// MaxBackoff; each wait is drawn uniformly from [w/2, w]. Zero means
	// 500 ms.
	Backoff time.Duration
	// MaxBackoff caps the backoff; zero means 30 s. A Retry-After longer
	// than the backoff is honoured up to MaxRetryAfter.
	MaxBackoff time.Duration
	// Timeout bounds one attempt; zero means DefaultTimeout (2 min), a
	// negative value (NoTimeout) no bound but the caller's context.
	Timeout time.Duration
	// Pace, when set, is called before every attempt, outside its timeout
	// (a request-rate cap); its error ends the call.
	Pace func(context.Context) error
	// Rand draws the jitter in [0, 1); nil means math/rand/v2. Tests fix it.
	Rand func() float64
	// Sleep waits d or until ctx ends; nil means a timer. Tests record it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// MaxRetryAfter caps the wait a server's Retry-After can ask for.
const MaxRetryAfter = 5 * time.Minute

func (r Retry) timeout() time.Duration    { return cmp.Or(r.Timeout, DefaultTimeout) }
func (r Retry) attempts() int             { return positive(r.Attempts, DefaultAttempts) }
func (r Retry) backoff() time.Duration    { return positiveDur(r.Backoff, 500*time.Millisecond) }
func (r Retry) maxBackoff() time.Duration { return positiveDur(r.MaxBackoff, 30*time.Second) }

func positive(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func positiveDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Do calls f until it succeeds, fails permanently, the attempts run out or
// ctx ends, and returns the number of attempts made with the last error:
// wrapping ErrPermanent when retrying could not help, prefixed "attempt n
// of m" when the attempts ran out, ctx's error when ctx ended.
func (r Retry) Do(ctx context.Context, f func(context.Context) error) (int, error) {
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return n - 1, err
		}
		if r.Pace != nil {
			if err := r.Pace(ctx); err != nil {
				return n - 1, err
			}
		}
		err := r.attempt(ctx, f)
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		retry, after := Retryable(err)
		if !retry {
			return n, fmt.Errorf("%w (%w)", err, ErrPermanent)
		}
		if n >= r.attempts() {
			return n, fmt.Errorf("attempt %d of %d: %w", n, r.attempts(), err)
		}
		if err := r.sleep(ctx, max(r.wait(n), min(after, MaxRetryAfter))); err != nil {
			return n, err
		}
	}
}

func (r Retry) attempt(ctx context.Context, f func(context.Context) error) error {
	timeout := r.timeout()
	if timeout < 0 {
		return f(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := f(actx)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return fmt.Errorf("no answer within %v: %w", timeout, err)
	}
	return err
}

// wait is the jittered backoff after the n-th failed attempt.
func (r Retry) wait(n int) time.Duration {
	w := r.backoff()
	for i := 1; i < n && w < r.maxBackoff(); i++ {
		w *= 2
	}
	w = min(w, r.maxBackoff())
	draw := rand.Float64
	if r.Rand != nil {
		draw = r.Rand
	}
	return w/2 + time.Duration(draw()*float64(w/2))
}

func (r Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Retryable says whether a failed request may succeed when repeated, and
// how long the server asked to wait first: yes for 408, 429 and 5xx
// answers (a *StatusError or Ollama's api.StatusError) and for transport
// errors; no for other HTTP answers, Ollama's authorization error and a
// cancelled context.
func Retryable(err error) (bool, time.Duration) {
	var se *StatusError
	if errors.As(err, &se) {
		return transient(se.Code), se.RetryAfter
	}
	var ose api.StatusError
	if errors.As(err, &ose) {
		return transient(ose.StatusCode), 0
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return false, 0
	}
	return !errors.Is(err, context.Canceled), 0
}

func transient(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}
