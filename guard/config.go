package guard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"bagen-data/probes"
)

// Config configures a Guard. The zero value of each optional field is the
// documented default.
type Config struct {
	// Upstream is the model server's root URL; request paths are appended
	// as received (http://host:8000, https://api.anthropic.com). Required.
	Upstream string
	// Estimator answers the budget probes; nil means no estimates (the
	// guard then only records usage, and stops on the budget alone).
	Estimator Estimator
	// Task renders the probes; the zero Task means probes.Tasks["swebench"].
	Task probes.Task
	// Budget is the session token budget; 0 means the task's default, and
	// a task without one (swebench) then has no budget: no probes, no cap.
	Budget int64
	// Every asks for an estimate after every Every-th turn; 0 means 1.
	Every int
	// EstimateFrom is the first turn after which an estimate is asked
	// (turns k ≥ EstimateFrom with k a multiple of Every); 0 means 1.
	EstimateFrom int
	// Counter counts what the upstream did not report (a call without
	// usage, the visible part of an output with hidden reasoning), as
	// `bagen-data probes --tokenizer` does, so that a live probe is the
	// offline probe. It must be safe for concurrent use (sessions are
	// accounted in parallel). nil means none: a turn whose accounting
	// needs a count is then unestimated, and says so.
	Counter probes.Counter
	Policy  Policy
	StopAs  StopAs
	// WarnAt are the shares of the budget, in percent, at which a session
	// is warned once each (a ledger event; a note in its next request
	// under policy warn, and under policy stop below 100); nil means
	// DefaultWarnAt, an empty non-nil slice none.
	WarnAt []float64
	// Prices price each call by its model (dollars in the ledger, the
	// forecast and BudgetUSD); nil means no dollars.
	Prices *Prices
	// BudgetUSD is the session dollar budget, beside Budget (both given:
	// whichever is crossed first); 0 means none. It needs Prices.
	BudgetUSD float64
	// ForecastStart: the Estimator answers a probe before the first turn
	// (the zero-token baseline does), so a session's forecast is asked
	// for when it starts.
	ForecastStart bool
	// Loop stops (warns, under policy warn; records, under log) a session
	// that makes the same tool call, or receives the same tool result,
	// Loop times in a row; 0 means off.
	Loop int
	// Wait holds a session's next request until the estimate of its
	// previous turn is in, at most EstimateTimeout.
	Wait bool
	// EstimateTimeout bounds one estimate, retries included; 0 means 30 s.
	EstimateTimeout time.Duration
	// Ledger is the ledger directory; "" means none.
	Ledger string
	// MaxBody bounds a request body; 0 means 32 MiB. MaxInFlight bounds
	// the request bytes held at once; 0 means 16 × MaxBody.
	MaxBody, MaxInFlight int64
	// RedactHeaders are headers never written anywhere, beyond the ones
	// the guard never writes (it records no header but User-Agent).
	RedactHeaders []string
	// MaxSessions bounds the sessions held (least recently used go
	// first); 0 means 100,000.
	MaxSessions int
	// MaxChainBytes bounds the history kept for a Responses session whose
	// responses are stored (a chain's next request may send only its new
	// turn); 0 means 1 MiB.
	MaxChainBytes int
	// Transport sends the upstream requests; nil means a clone of
	// http.DefaultTransport without compression (the guard reads the
	// answers).
	Transport http.RoundTripper
	// Logf reports stops and failures of side services (estimator,
	// ledger); nil means none. It is never given a header.
	Logf func(format string, args ...any)
	// Now is the clock of the ledger's timestamps; nil means time.Now.
	Now func() time.Time
}

func (c Config) estimateBudget() time.Duration {
	if c.EstimateTimeout <= 0 {
		return 30 * time.Second
	}
	return c.EstimateTimeout
}

// Validate reports every bad field at once.
func (c Config) Validate() error {
	var errs []error
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("upstream %q: want http(s)://host[:port]", c.Upstream))
	}
	if c.Budget < 0 {
		errs = append(errs, fmt.Errorf("budget: want ≥ 0, got %d", c.Budget))
	}
	if c.Every < 0 {
		errs = append(errs, fmt.Errorf("every: want ≥ 0, got %d", c.Every))
	}
	if c.EstimateFrom < 0 {
		errs = append(errs, fmt.Errorf("estimate from: want ≥ 0, got %d", c.EstimateFrom))
	}
	if c.MaxBody < 0 || c.MaxInFlight < 0 {
		errs = append(errs, errors.New("max body: want ≥ 0"))
	}
	if c.MaxInFlight > 0 && c.MaxInFlight < c.MaxBody {
		errs = append(errs, fmt.Errorf("max in flight: %d is below the body limit %d", c.MaxInFlight, c.MaxBody))
	}
	errs = append(errs, c.validatePolicy()...)
	if c.Policy > Stop || c.StopAs > ContextLimit {
		errs = append(errs, errors.New("policy: unknown"))
	}
	return errors.Join(errs...)
}
