package probes

import (
	"errors"
	"fmt"

	"bagen-data/rollout"
)

// ErrNoBudget means a trajectory has no token budget: none was given, the
// log sets none and the task has no default.
var ErrNoBudget = errors.New("no budget")

// ResolveBudget is a trajectory's token budget, by the one precedence
// build and probes share: given (the user's, 0 when unset), else the
// trajectory's own, else fallback (the task's default, 0 when it has
// none). None is an error wrapping ErrNoBudget that names the trajectory.
func ResolveBudget(given int64, t rollout.Trajectory, fallback int64, task string) (int64, error) {
	for _, b := range [...]int64{given, t.Budget, fallback} {
		if b > 0 {
			return b, nil
		}
	}
	return 0, &ParseError{File: t.Pos.File, Line: t.Pos.Line, Index: t.Pos.Index, Field: "budget",
		Err: fmt.Errorf("%w: task %s has no default and the trajectory sets none", ErrNoBudget, task)}
}
