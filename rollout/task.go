package rollout

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// TaskSeen is a task some input names and where it first does.
type TaskSeen struct {
	Task string
	At   Position
}

// errStop ends a scan after its first record.
var errStop = errors.New("rollout: stop")

// Tasks reads the first trajectory of each source and returns the tasks
// they name (metadata.task), each with the first place that names it, in
// order of first appearance. A log is one run of one task, so its first
// record speaks for it; sources whose first record names no task or does
// not decode add nothing (the read proper reports those).
func Tasks(ctx context.Context, srcs []Source) ([]TaskSeen, error) {
	var seen []TaskSeen
	for _, src := range srcs {
		err := Scan(ctx, src, func(rec Record) error {
			if t, err := Decode(rec); err == nil && t.Task != "" && !named(seen, t.Task) {
				seen = append(seen, TaskSeen{Task: t.Task, At: t.Pos})
			}
			return errStop
		})
		if err != nil && !errors.Is(err, errStop) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue // the read proper names it
		}
	}
	return seen, nil
}

func named(seen []TaskSeen, task string) bool {
	for _, s := range seen {
		if s.Task == task {
			return true
		}
	}
	return false
}

// MixedTasksError is inputs from more than one task.
type MixedTasksError struct{ Seen []TaskSeen }

func (e *MixedTasksError) Error() string {
	parts := make([]string, len(e.Seen))
	for i, s := range e.Seen {
		parts[i] = fmt.Sprintf("%s says %s", s.At, s.Task)
	}
	sort.Strings(parts)
	return "inputs mix tasks: " + strings.Join(parts, ", ") + "; build each task on its own"
}
