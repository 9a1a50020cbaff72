package eval

import "bagen-data/reward"

// EarlyStop is the early-stopping policy of the paper's §6.1 replayed on the
// table: each trajectory stops at its first probe (lowest probe_after_turn)
// predicted impossible.
//
// A trajectory is successful when all its probes are truly possible and
// failed otherwise. Its total cost is tokens_used + remaining_tokens of its
// first probe; stopping at a probe saves that probe's remaining tokens.
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
}

// trajectory is the early-stop view of one trajectory's probes.
type trajectory struct {
	failed     bool
	first      Scored // probe with the lowest probe_after_turn
	stop       Scored // first probe predicted impossible
	stopped    bool
	probes     int
	impossible int // probes predicted impossible
}

func (t *trajectory) add(r Scored) {
	if t.probes == 0 || r.ProbeAfterTurn < t.first.ProbeAfterTurn {
		t.first = r
	}
	t.probes++
	t.failed = t.failed || !r.Possible
	if r.Class() != reward.ClassImpossible {
		return
	}
	t.impossible++
	if !t.stopped || r.ProbeAfterTurn < t.stop.ProbeAfterTurn {
		t.stop, t.stopped = r, true
	}
}

// EarlyStopOf replays the early stop on rows, as Compute does.
func EarlyStopOf(rows []Scored) EarlyStop { return earlyStop(rows) }

func earlyStop(rows []Scored) EarlyStop {
	byID := map[string]*trajectory{}
	var order []string
	for _, r := range rows {
		t, ok := byID[r.TrajectoryID]
		if !ok {
			t = &trajectory{}
			byID[r.TrajectoryID] = t
			order = append(order, r.TrajectoryID)
		}
		t.add(r)
	}
	var e EarlyStop
	for _, id := range order {
		e.add(byID[id])
	}
	e.FalseAbortRate = ratio(e.FalseAborts, e.SuccessProbes)
	e.SuccessDrop = ratio(e.AbortedSuccessful, e.Trajectories)
	e.StoppedFailedShare = ratio(e.StoppedFailed, e.Failed)
	e.SavedShare = NaN
	if e.FailedTokens > 0 {
		e.SavedShare = Num(float64(e.SavedTokens) / float64(e.FailedTokens))
	}
	return e
}

func (e *EarlyStop) add(t *trajectory) {
	e.Trajectories++
	if !t.failed {
		e.Successful++
		e.SuccessProbes += t.probes
		e.FalseAborts += t.impossible
		if t.stopped {
			e.AbortedSuccessful++
		}
		return
	}
	e.Failed++
	e.FailedTokens += t.first.TokensUsed + t.first.Remaining
	if t.stopped {
		e.StoppedFailed++
		e.SavedTokens += t.stop.Remaining
	}
}
