package guard

import (
	"bagen-data/probes"
	"bagen-data/rollout"
)

// transcript is a session's trajectory up to and with a reply: the turns
// of the request's history, then the request's new messages and the
// reply, with the upstream's per-turn usage aligned from the last turn
// back (a history longer than the session, as after a restart, keeps
// only the turns the session saw). tail is what the request added after
// the history's last assistant message.
func transcript(id string, history, reply []rollout.Message, usage []*rollout.GuardUsage) (t rollout.Trajectory, system string, tail []rollout.Message) {
	system, turns, tail := rollout.SplitGuardHistory(history)
	turns = append(turns, rollout.GuardTurn{Input: tail, Output: reply})
	if len(turns) > len(usage) {
		turns = turns[len(turns)-len(usage):]
	}
	for k := range turns {
		turns[k].Usage = usage[len(usage)-len(turns)+k]
	}
	return rollout.GuardTrajectory(id, system, turns), system, tail
}

// account is the trajectory's per-turn usage, by the one accounting step
// every reader uses (history-inclusive inputs become per-turn deltas),
// with c counting what the upstream did not report and system the task's
// system prompt (counted only when no call reports its input), exactly as
// `bagen-data probes --tokenizer` accounts the session's ledger.
func account(t rollout.Trajectory, c probes.Counter, system string) (probes.Replay, error) {
	return probes.NewReplay(t, c, system)
}

// spentOf is the tokens a session has spent: the accounting's total
// sys + Σ(in_k + out_k), or, where the usage cannot be accounted (a turn
// without counts), the last recorded request and reply.
func spentOf(r probes.Replay, err error, last *rollout.GuardUsage, before int64) int64 {
	if err == nil {
		return r.Total()
	}
	if last != nil && last.Input >= 0 && last.Output >= 0 {
		return max(before, last.Input+last.Output)
	}
	return before
}
