package guard

import (
	"fmt"

	"bagen-data/probes"
)

// Accounting is the token accounting the guard counts a session by: the
// replay of the API's own usage (probes.NewReplay), as `probes` counts a
// logged run. An estimator trained on numbers of another accounting (a
// head on `build`'s default message rule) answers the guard's probes
// miscalibrated.
const Accounting = probes.AccountingReplay

// AccountingNote is what the guard says once, at start, of the accounting
// its estimator learned on: a warning when it is known and not Accounting
// (probes.CheckAccounting), a note when the estimator does not say, ""
// when they agree.
func AccountingNote(learned probes.AccountingKind) string {
	switch {
	case learned == Accounting:
		return ""
	case !learned.Known():
		return fmt.Sprintf("note: the estimator does not say which token accounting it learned on; the guard counts by the %s (--estimator-accounting KIND checks it)", Accounting)
	}
	return fmt.Sprintf("warning: %v", probes.CheckAccounting(Accounting, learned))
}
