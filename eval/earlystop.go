package eval

import (
	"cmp"
	"math"
	"slices"

	"bagen-data/eval/prediction"
	"bagen-data/reward"
)

// EarlyStop is the early-stopping policy of the paper's §6.1 replayed on the
// table: each trajectory stops at its first probe (lowest probe_after_turn)
// predicted impossible.
//
// A trajectory is successful when all its probes are truly possible and
// failed otherwise. Its total cost is tokens_used + remaining_tokens of its
// first probe; stopping at a probe saves that probe's remaining tokens.
//
// The paper's figure is gross: Net subtracts what the estimator spent to
// decide (see Net), Live replays the probes a live guard can act on, and
// Curve trades savings against aborted runs over stricter policies.
type EarlyStop struct {
	Trajectories int `json:"trajectories"`
	Successful   int `json:"successful"`
	Failed       int `json:"failed"`
	// FalseAborts counts probes on successful trajectories predicted
	// impossible, out of SuccessProbes.
	SuccessProbes  int `json:"success_probes"`
	FalseAborts    int `json:"false_aborts"`
	FalseAbortRate Num `json:"false_abort_rate"`
	// AbortedSuccessful counts successful trajectories the policy stops;
	// SuccessDrop is that count over all trajectories, the fall in success
	// rate.
	AbortedSuccessful int `json:"aborted_successful"`
	SuccessDrop       Num `json:"success_drop"`
	// StoppedFailed counts failed trajectories stopped at least once.
	StoppedFailed      int `json:"stopped_failed"`
	StoppedFailedShare Num `json:"stopped_failed_share"`
	// FailedTokens is the total cost of the failed trajectories and
	// SavedTokens what stopping them saves; SavedShare = Saved / Failed.
	FailedTokens int64 `json:"failed_tokens"`
	SavedTokens  int64 `json:"saved_tokens"`
	SavedShare   Num   `json:"saved_share"`

	// AbortedSuccessfulShare is AbortedSuccessful / Successful, the harm
	// per run: the share of successful runs a stop aborts, where
	// FalseAbortRate is per probe. Bootstrap gives its 95% interval
	// (CI "aborted_successful_share", "live_aborted_successful_share").
	AbortedSuccessfulShare Num `json:"aborted_successful_share"`
	// NotAsked counts the probes the replay leaves out: those before the
	// first turn in Live.
	NotAsked int `json:"probes_not_asked,omitempty"`
	// Net is the savings net of the estimator's tokens.
	Net Net `json:"net"`
	// Live is the same replay on the probes a live guard can act on: a
	// probe before the first turn (probe_after_turn 0, build's first
	// probe) has no live counterpart, since the guard estimates after a
	// turn. The trajectories, their truth and cost are the same.
	Live *EarlyStop `json:"live,omitempty"`
	// Curve is the saved share against the share of successful runs
	// aborted for stricter stopping rules (CurveThresholds); empty on
	// Warehouse probes and on probes without a budget.
	Curve []CurvePoint `json:"curve,omitempty"`
}

// Net is an early stop's savings net of what its estimator spent to
// decide. The estimator's tokens are those of every probe it answered up
// to and including the stop of its run, on successful and failed runs
// alike, or of all its probes when it never stops the run: a live guard
// asks after every turn and stops asking once it stops the run. A probe
// without an answer cost nothing known and is not counted.
type Net struct {
	// EstimatorProbes counts the probes counted; WithoutUsage those of
	// them whose answer carries no usage.
	EstimatorProbes int `json:"estimator_probes"`
	WithoutUsage    int `json:"estimator_probes_without_usage"`
	// The estimator's tokens as its server reported them; cached tokens
	// are part of the prompt tokens.
	EstimatorPromptTokens     int64 `json:"estimator_prompt_tokens"`
	EstimatorCachedTokens     int64 `json:"estimator_cached_tokens"`
	EstimatorCompletionTokens int64 `json:"estimator_completion_tokens"`
	// EstimatorTokens is prompt + completion tokens; Tokens is SavedTokens
	// − EstimatorTokens, the net, and Share = Tokens / FailedTokens. They
	// are unknown (null, not zero) when any counted probe lacks usage.
	EstimatorTokens *int64 `json:"estimator_tokens"`
	Tokens          *int64 `json:"tokens"`
	Share           Num    `json:"share"`
	// SavedInput, SavedCached and SavedOutput are what the calls a stop
	// refuses on failed runs would have billed the agent (Billed).
	SavedInput  int64 `json:"saved_input_tokens"`
	SavedCached int64 `json:"saved_cached_tokens"`
	SavedOutput int64 `json:"saved_output_tokens"`
	// WithoutTurns counts the stopped failed runs whose probes carry no
	// per-turn usage: their saved tokens are billed as new input only.
	WithoutTurns int `json:"saved_without_per_turn_usage"`
	// Dollars prices the above; nil until Price is given prices.
	Dollars *NetDollars `json:"dollars,omitempty"`
}

// NetDollars is Net in dollars.
type NetDollars struct {
	// AgentPrices price the agent's saved calls, EstimatorPrices the
	// estimator's tokens, in dollars per million tokens.
	AgentPrices     prediction.Prices `json:"agent_prices_per_million"`
	EstimatorPrices prediction.Prices `json:"estimator_prices_per_million"`
	// Saved is the agent's saved calls priced; Estimator the estimator's
	// tokens priced and Net = Saved − Estimator (both unknown, null, when
	// the estimator's usage is).
	Saved     float64 `json:"saved"`
	Estimator Num     `json:"estimator"`
	Net       Num     `json:"net"`
}

// CurvePoint is the early stop under one stopping rule: stop at the first
// probe answered "impossible" or whose interval's upper bound H is at
// least Upper × the budget left (budget − tokens_used). An undefined
// Upper (null) stops on "impossible" only: the paper's policy.
type CurvePoint struct {
	Upper                  Num    `json:"upper_over_left"`
	SavedTokens            int64  `json:"saved_tokens"`
	SavedShare             Num    `json:"saved_share"`
	AbortedSuccessful      int    `json:"aborted_successful"`
	AbortedSuccessfulShare Num    `json:"aborted_successful_share"`
	FalseAbortRate         Num    `json:"false_abort_rate"`
	NetTokens              *int64 `json:"net_tokens"`
}

// CurveThresholds are the Upper values of Curve, least strict first; +Inf
// is the paper's policy (impossible only). A lower threshold stops on a
// smaller predicted need: at 1 the guard stops once the estimator's upper
// bound no longer fits in the budget left.
var CurveThresholds = []float64{math.Inf(1), 4, 2, 1.5, 1.25, 1, 0.75, 0.5, 0.25}

// policy is a stopping rule: the probes it asks (from turn from on) and
// when it stops (see CurvePoint).
type policy struct {
	from  int64
	upper float64
}

var (
	paperPolicy = policy{upper: math.Inf(1)}
	livePolicy  = policy{from: 1, upper: math.Inf(1)}
)

// stops reports whether the rule stops at a probe answered as r was.
func (p policy) stops(r Scored) bool {
	switch r.Class() {
	case reward.ClassImpossible:
		return true
	case reward.ClassPossible:
		if math.IsInf(p.upper, 1) || r.Warehouse || r.Budget <= 0 {
			return false
		}
		hi := max(r.Prediction.Low, r.Prediction.High)
		return float64(hi) >= p.upper*float64(r.Budget-r.TokensUsed)
	}
	return false
}

// run is one trajectory replayed under a policy.
type run struct {
	failed      bool
	first, last Scored // probes with the lowest and highest probe_after_turn
	stop        Scored // first probe the policy stops at
	stopped     bool
	notAsked    int // probes before policy.from
	asked       int
	stopping    int // asked probes the policy stops at
	est         estimator
}

// estimator is what the estimator spent on a run up to its stop.
type estimator struct {
	probes, withoutUsage       int
	prompt, cached, completion int64
}

func (e *estimator) add(u *prediction.Usage) {
	e.probes++
	if u == nil {
		e.withoutUsage++
		return
	}
	e.prompt += u.PromptTokens
	e.cached += u.CachedTokens
	e.completion += u.CompletionTokens
}

// runs replays every trajectory of rows under p, in order of first
// appearance (the order of clusters).
func runs(rows []Scored, p policy) []run {
	groups := clusters(rows)
	out := make([]run, len(groups))
	for g, idx := range groups {
		idx = slices.Clone(idx)
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(rows[a].ProbeAfterTurn, rows[b].ProbeAfterTurn)
		})
		out[g] = replay(rows, idx, p)
	}
	return out
}

// replay runs one trajectory, its rows idx in probe order.
func replay(rows []Scored, idx []int, p policy) run {
	t := run{first: rows[idx[0]], last: rows[idx[len(idx)-1]]}
	for _, i := range idx {
		r := rows[i]
		t.failed = t.failed || !r.Possible
		if r.ProbeAfterTurn < p.from {
			t.notAsked++
			continue
		}
		t.asked++
		if p.stops(r) {
			t.stopping++
			if !t.stopped {
				t.stop, t.stopped = r, true
			}
		}
	}
	for _, i := range idx {
		r := rows[i]
		if r.ProbeAfterTurn >= p.from && !r.Missing && (!t.stopped || r.ProbeAfterTurn <= t.stop.ProbeAfterTurn) {
			t.est.add(r.Usage)
		}
	}
	return t
}

// EarlyStopOf replays the early stop on rows, as Compute does.
func EarlyStopOf(rows []Scored) EarlyStop { return earlyStop(rows) }

func earlyStop(rows []Scored) EarlyStop {
	e := stopUnder(rows, paperPolicy)
	live := stopUnder(rows, livePolicy)
	e.Live = &live
	e.Curve = curve(rows)
	return e
}

// stopUnder replays rows under p.
func stopUnder(rows []Scored, p policy) EarlyStop {
	var e EarlyStop
	var est estimator
	for _, t := range runs(rows, p) {
		e.add(t)
		est.probes += t.est.probes
		est.withoutUsage += t.est.withoutUsage
		est.prompt += t.est.prompt
		est.cached += t.est.cached
		est.completion += t.est.completion
	}
	e.FalseAbortRate = ratio(e.FalseAborts, e.SuccessProbes)
	e.SuccessDrop = ratio(e.AbortedSuccessful, e.Trajectories)
	e.StoppedFailedShare = ratio(e.StoppedFailed, e.Failed)
	e.AbortedSuccessfulShare = ratio(e.AbortedSuccessful, e.Successful)
	e.SavedShare = share(e.SavedTokens, e.FailedTokens)
	e.Net.setEstimator(est, e.SavedTokens, e.FailedTokens)
	return e
}

// share is a/b, undefined when b is not positive.
func share(a, b int64) Num {
	if b <= 0 {
		return NaN
	}
	return Num(float64(a) / float64(b))
}

func (e *EarlyStop) add(t run) {
	e.Trajectories++
	e.NotAsked += t.notAsked
	if !t.failed {
		e.Successful++
		e.SuccessProbes += t.asked
		e.FalseAborts += t.stopping
		if t.stopped {
			e.AbortedSuccessful++
		}
		return
	}
	e.Failed++
	e.FailedTokens += t.first.TokensUsed + t.first.Remaining
	if !t.stopped {
		return
	}
	e.StoppedFailed++
	e.SavedTokens += t.stop.Remaining
	in, cached, out, ok := Billed(t.stop, t.last)
	e.Net.SavedInput += in
	e.Net.SavedCached += cached
	e.Net.SavedOutput += out
	if !ok {
		e.Net.WithoutTurns++
	}
}

// setEstimator records the estimator's spend and the net it leaves.
func (n *Net) setEstimator(est estimator, saved, failed int64) {
	n.EstimatorProbes, n.WithoutUsage = est.probes, est.withoutUsage
	n.EstimatorPromptTokens, n.EstimatorCachedTokens, n.EstimatorCompletionTokens = est.prompt, est.cached, est.completion
	n.Share = NaN
	if est.withoutUsage > 0 {
		return
	}
	spent := est.prompt + est.completion
	net := saved - spent
	n.EstimatorTokens, n.Tokens = &spent, &net
	n.Share = share(net, failed)
}

// Billed returns what the calls a stop at probe stop refuses would have
// billed an agent that resends its history with every call, as chat
// agents do: call k brings its new input tokens in_k, re-reads the
// history before it, U(k−1) tokens (cached, when the provider caches
// prefixes), and writes out_k output tokens. U(k) is the context after
// turn k: last.TokensUsed after the trajectory's last probe, less the
// turns after k (in_j + out_j of per_turn_tokens). The calls after the
// last probe, whose split is unknown, bill its remaining tokens as new
// input and re-read U(last) each: a lower bound. ok is false when the
// last probe's per_turn_tokens do not list turns 1 … probe_after_turn
// (or contradict tokens_used): the saved tokens are then billed as new
// input alone.
func Billed(stop, last Scored) (input, cached, output int64, ok bool) {
	pmax := last.ProbeAfterTurn
	u, ok := contexts(last)
	if !ok || stop.ProbeAfterTurn > pmax {
		return stop.Remaining, 0, 0, false
	}
	for k := stop.ProbeAfterTurn + 1; k <= pmax; k++ {
		t := last.Turns[k-1]
		input += t.InputTokens
		cached += u[k-1]
		output += t.OutputTokens
	}
	input += last.Remaining
	cached += max(0, last.TotalTurns-pmax) * u[pmax]
	return input, cached, output, true
}

// contexts returns U(0) … U(p) for the last probe of a trajectory, after
// p turns, when its per-turn usage lists them all.
func contexts(last Scored) ([]int64, bool) {
	p := last.ProbeAfterTurn
	if p < 0 || int64(len(last.Turns)) != p {
		return nil, false
	}
	u := make([]int64, p+1)
	u[p] = last.TokensUsed
	for k := p; k >= 1; k-- {
		t := last.Turns[k-1]
		if t.Turn != k || t.InputTokens < 0 || t.OutputTokens < 0 {
			return nil, false
		}
		u[k-1] = u[k] - t.InputTokens - t.OutputTokens
	}
	return u, u[0] >= 0
}

// curve replays rows under each of CurveThresholds; nil on Warehouse
// probes, which carry no tokens, and on probes without a budget.
func curve(rows []Scored) []CurvePoint {
	if slices.ContainsFunc(rows, func(r Scored) bool { return r.Warehouse }) ||
		!slices.ContainsFunc(rows, func(r Scored) bool { return r.Budget > 0 }) {
		return nil
	}
	out := make([]CurvePoint, len(CurveThresholds))
	for i, th := range CurveThresholds {
		e := stopUnder(rows, policy{upper: th})
		out[i] = CurvePoint{
			Upper: Num(th), SavedTokens: e.SavedTokens, SavedShare: e.SavedShare,
			AbortedSuccessful: e.AbortedSuccessful, AbortedSuccessfulShare: e.AbortedSuccessfulShare,
			FalseAbortRate: e.FalseAbortRate, NetTokens: e.Net.Tokens,
		}
	}
	return out
}

// Price fills the dollar figures of e's Net and of its Live replay's: the
// agent's saved calls (Net.SavedInput, SavedCached, SavedOutput) at
// agent's prices, the estimator's tokens at estimator's.
func (e *EarlyStop) Price(agent, estimator prediction.Prices) {
	n := &e.Net
	d := &NetDollars{AgentPrices: agent, EstimatorPrices: estimator, Estimator: NaN, Net: NaN}
	d.Saved = agent.Cost(n.SavedInput+n.SavedCached, n.SavedCached, n.SavedOutput)
	if n.EstimatorTokens != nil {
		d.Estimator = Num(estimator.Cost(n.EstimatorPromptTokens, n.EstimatorCachedTokens, n.EstimatorCompletionTokens))
		d.Net = Num(d.Saved) - d.Estimator
	}
	n.Dollars = d
	if e.Live != nil {
		e.Live.Price(agent, estimator)
	}
}
