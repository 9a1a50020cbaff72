package eval

import "bagen-data/reward"

// ProgressBins is the number of rollout-progress bins: progress
// probe_after_turn / total_turns falls in [0, 0.2), [0.2, 0.4), …,
// [0.8, 1.0] (a probe after the last turn counts in the last bin).
const ProgressBins = 5

// Bin is one rollout-progress bin.
type Bin struct {
	// Lo and Hi bound the bin's progress, [Lo, Hi).
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Probes int     `json:"probes"`

	// Interval diagnostics on truly possible probes in the bin.
	Intervals         int `json:"intervals"`
	Covered           int `json:"covered"`
	Coverage          Num `json:"coverage"`
	MREP50            Num `json:"mre_p50"`
	Misses            int `json:"misses"`
	Optimistic        int `json:"optimistic"`
	Conservative      int `json:"conservative"`
	OptimisticShare   Num `json:"optimistic_share"`
	ConservativeShare Num `json:"conservative_share"`

	// Failure timing: truly impossible probes in the bin and how many were
	// predicted impossible (FailedAccuracy = FailedCaught / FailedProbes).
	FailedProbes   int `json:"failed_probes"`
	FailedCaught   int `json:"failed_caught"`
	FailedAccuracy Num `json:"failed_accuracy"`
}

// ProgressBin returns the bin of a probe: ⌊ProgressBins · p / T⌋ in integer
// arithmetic, clamped to [0, ProgressBins−1]; 0 when T ≤ 0.
func ProgressBin(probeAfterTurn, totalTurns int64) int {
	if totalTurns <= 0 || probeAfterTurn <= 0 {
		return 0
	}
	return int(min(ProgressBins-1, ProgressBins*probeAfterTurn/totalTurns))
}

func progressBins(rows []Scored) []Bin {
	parts := make([][]Scored, ProgressBins)
	for _, r := range rows {
		b := ProgressBin(r.ProbeAfterTurn, r.TotalTurns)
		parts[b] = append(parts[b], r)
	}
	bins := make([]Bin, ProgressBins)
	for i, part := range parts {
		bins[i] = binOf(part)
		bins[i].Lo = float64(i) / ProgressBins
		bins[i].Hi = float64(i+1) / ProgressBins
	}
	return bins
}

func binOf(rows []Scored) Bin {
	s := intervalsOf(rows)
	b := Bin{
		Probes:    len(rows),
		Intervals: s.intervals, Covered: s.covered, Coverage: s.coverage, MREP50: s.p50,
		Misses: s.misses, Optimistic: s.optimistic, Conservative: s.conservative,
		OptimisticShare:   ratio(s.optimistic, s.misses),
		ConservativeShare: ratio(s.conservative, s.misses),
	}
	for _, r := range rows {
		if r.Possible {
			continue
		}
		b.FailedProbes++
		if r.Class() == reward.ClassImpossible {
			b.FailedCaught++
		}
	}
	b.FailedAccuracy = ratio(b.FailedCaught, b.FailedProbes)
	return b
}
