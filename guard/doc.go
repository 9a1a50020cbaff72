// Package guard is a live budget guard: a transparent proxy between an
// agent and its model that records every call's usage, asks a budget
// estimator after each turn and, by policy, logs, warns or stops the run
// — the paper's early stop (its early-stop tables: stopping at the first
// impossible estimate saves 28–64% of the tokens spent on failed runs),
// running instead of replayed.
//
// It has the shape of net/http/httputil.ReverseProxy: one transport, one
// place that rewrites the outgoing request (Codec.Outgoing), one that
// observes the answer (Codec.Reply, Codec.Stream), streams flushed event
// by event. Each wire format is a Codec (chat.go, responses.go,
// anthropic.go); sessions, usage, estimates, policy and the ledger are a
// file each and know no wire format. The probe is rendered by package
// probes from the accounting step it shares with the readers, the
// estimator asked through eval/prediction's retrying client and its
// answer parsed by package reward.
//
// Bytes the guard does not need to understand go through untouched, and
// a side service that fails (estimator, ledger disk) never fails the
// agent's call: estimates fail open.
//
// One file per concern:
//
//	config.go      Config, its defaults and Validate
//	guard.go       Guard: New, Close
//	serve.go       Serve: the guard on internal/httpd's server and drain
//	transport.go   the proxy: routes, reading a request, forwarding it,
//	               observing the answer, upstream errors
//	alongside.go   a request whose session a header names, forwarded at
//	               once and read from a copy as it goes
//	turn.go        a call's life in its session: begin, finish, the turn,
//	               a stop's answer
//	session.go     sessions: identifying them, their prefix links, the bound
//	family.go      subagents: parents, children, one family budget
//	recover.go     a session's state recovered from a shared ledger
//	usage.go       the accounting step (probes) on a session's transcript
//	estimate.go    the estimator, the probes it is asked, when
//	forecast.go    the forecast of a whole session
//	budget.go      token and dollar budgets, warn thresholds
//	prices.go      the prices file
//	loop.go        the loop gate
//	policy.go      log, warn, stop: the decision on each request
//	ledger.go      the ledger: one JSONL file per session, and recording
//	metrics.go     /metrics
//	page.go        the live page (page.html) and /sessions.json
//	codec.go       Codec, the interface of a wire format, and its values
//	chat.go, responses.go, anthropic.go: one codec per wire format
//	lexread.go     reading a request with internal/jsonlex, for each codec's
//	               fast reader, encoding/json the fallback
//	sse.go         reading an event stream as it is relayed
//	accounting.go  the note on an estimator's own accounting
//	flock_*.go     a ledger file's lock per platform
package guard
