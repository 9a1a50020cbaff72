package validate

import (
	"fmt"

	"bagen-data/dataset"
	"bagen-data/reward"
)

// checkImpossibleRemaining checks that an impossible token label gives the
// remaining tokens extra_info has: what the failed rollout went on to
// spend, which eval's early stop counts as saved when it stops there. A
// label that gives none (the bare "impossible", no remaining_tokens, or 0)
// leaves extra_info's to every reader (eval.TruthOf); a different non-zero
// count is an error. Possible labels are checkLabelColumn's.
func (v *validator) checkImpossibleRemaining(f *file, at loc, row dataset.RLRow) {
	x := row.ExtraInfo
	t, err := reward.ParseLabel(row.Label)
	if err != nil || t.Possible || x.IsPossible || t.Remaining == 0 || t.Remaining == x.RemainingTokens {
		return
	}
	v.fs.add(CheckLabels, Error, "label-remaining", f.path,
		"impossible rows whose label's remaining_tokens disagree with extra_info (the early stop's saved tokens)",
		at.example(fmt.Sprintf("label remaining_tokens %d, extra_info %d", t.Remaining, x.RemainingTokens)))
}
