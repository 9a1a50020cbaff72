package guard

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"bagen-data/internal/httpd"
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
	// Task renders the probes; the zero Task means
	// probes.Tasks[DefaultTask].
	Task probes.Task
	// Budget is the session token budget; 0 means the task's default, and
	// a task without one (swebench) then has no budget: no probes, no cap.
	Budget int64
	// Every asks for an estimate after every Every-th turn; 0 means
	// DefaultEvery.
	Every int
	// EstimateFrom is the first turn after which an estimate is asked
	// (turns k ≥ EstimateFrom with k a multiple of Every); 0 means
	// DefaultEstimateFrom.
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
	// EstimateTimeout bounds one estimate, retries included; 0 means
	// DefaultEstimateTimeout.
	EstimateTimeout time.Duration
	// Ledger is the ledger directory; "" means none.
	Ledger string
	// Limits are the server's request limits and timeouts, each zero
	// field the guard's default: MaxBody DefaultMaxBody, MaxHeaderBytes
	// DefaultMaxHeaderBytes, ReadHeaderTimeout DefaultReadHeaderTimeout,
	// DrainTimeout (the bound on the streams in flight after Serve's
	// context ends) DefaultDrainTimeout; ReadTimeout, WriteTimeout,
	// IdleTimeout and DrainGrace none, since the answers it relays are
	// streams of any length.
	httpd.Limits
	// MaxInFlight bounds the request bytes held at once; 0 means
	// DefaultInFlightBodies × MaxBody.
	MaxInFlight int64
	// RedactHeaders are headers never written anywhere, beyond the ones
	// the guard never writes (it records no header but User-Agent).
	RedactHeaders []string
	// MaxSessions bounds the sessions held (least recently used go
	// first); 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxChainBytes bounds the history kept for a Responses session whose
	// responses are stored (a chain's next request may send only its new
	// turn); 0 means DefaultMaxChainBytes.
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

// The defaults of zero Config fields.
const (
	// DefaultTask names the probe preset of a zero Task.
	DefaultTask = "swebench"
	// DefaultEvery and DefaultEstimateFrom: an estimate after every turn,
	// from the first.
	DefaultEvery, DefaultEstimateFrom = 1, 1
	DefaultEstimateTimeout            = 30 * time.Second
	DefaultMaxBody                    = 32 << 20
	// DefaultInFlightBodies is MaxInFlight's default in bodies of MaxBody.
	DefaultInFlightBodies    = 16
	DefaultMaxHeaderBytes    = http.DefaultMaxHeaderBytes
	DefaultReadHeaderTimeout = 30 * time.Second
	// DefaultDrainTimeout bounds the streams in flight after Serve's
	// context ends: an agent's answer may stream for minutes.
	DefaultDrainTimeout  = 5 * time.Minute
	DefaultMaxSessions   = 100_000
	DefaultMaxChainBytes = 1 << 20
)

// limitDefaults are the guard's defaults of its Limits (see Config.Limits).
var limitDefaults = httpd.Limits{MaxBody: DefaultMaxBody, MaxHeaderBytes: DefaultMaxHeaderBytes,
	ReadHeaderTimeout: DefaultReadHeaderTimeout, DrainTimeout: DefaultDrainTimeout}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	c.Limits = c.Limits.Or(limitDefaults)
	c.MaxInFlight = cmp.Or(c.MaxInFlight, DefaultInFlightBodies*c.MaxBody)
	c.MaxSessions = cmp.Or(c.MaxSessions, DefaultMaxSessions)
	c.MaxChainBytes = cmp.Or(c.MaxChainBytes, DefaultMaxChainBytes)
	c.Every = cmp.Or(c.Every, DefaultEvery)
	c.EstimateFrom = cmp.Or(c.EstimateFrom, DefaultEstimateFrom)
	c.EstimateTimeout = cmp.Or(c.EstimateTimeout, DefaultEstimateTimeout)
	if c.Task.Name == "" {
		c.Task = probes.Tasks[DefaultTask]
	}
	if c.Budget == 0 {
		c.Budget = c.Task.Budget
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports every bad field at once, each by its name in Config.
func (c Config) Validate() error {
	var errs []error
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		//lint:ignore ST1005 the error starts with the Config field it names
		errs = append(errs, fmt.Errorf("Upstream %q: want http(s)://host[:port]", c.Upstream))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"Budget", c.Budget}, {"Every", int64(c.Every)}, {"EstimateFrom", int64(c.EstimateFrom)},
		{"MaxInFlight", c.MaxInFlight}, {"MaxSessions", int64(c.MaxSessions)}, {"MaxChainBytes", int64(c.MaxChainBytes)}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s: want ≥ 0, got %d", f.name, f.v))
		}
	}
	if c.EstimateTimeout < 0 {
		errs = append(errs, fmt.Errorf("EstimateTimeout: want ≥ 0, got %v", c.EstimateTimeout))
	}
	for _, p := range c.Limits.Or(limitDefaults).Problems() {
		errs = append(errs, errors.New(p))
	}
	if d := c.withDefaults(); c.MaxInFlight > 0 && c.MaxInFlight < d.MaxBody {
		errs = append(errs, fmt.Errorf("MaxInFlight: %d is below MaxBody %d", c.MaxInFlight, d.MaxBody))
	}
	errs = append(errs, c.validatePolicy()...)
	if c.Policy > Stop {
		errs = append(errs, fmt.Errorf("Policy: unknown (%d)", c.Policy))
	}
	if c.StopAs > ContextLimit {
		errs = append(errs, fmt.Errorf("StopAs: unknown (%d)", c.StopAs))
	}
	return errors.Join(errs...)
}
