package validate

import (
	"fmt"
	"slices"
	"strings"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// Routing columns build writes (dataset.NewRLRow).
const (
	dataSourcePrefix = "budget_probe_"
	ability          = "budget_estimation"
)

// checkRouting checks the columns trainers route rewards by: verl's reward
// managers pick the scoring function by data_source, and the examples'
// reward functions score only budget_probe_* rows. data_source must be
// budget_probe_<task>, the manifest's task for a build, a preset for a
// file on its own; ability is budget_estimation.
func (v *validator) checkRouting(f *file, at loc, row dataset.RLRow) {
	if msg := v.dataSourceProblem(f, row.DataSource); msg != "" {
		v.fs.add(CheckLabels, Error, "data-source", f.path,
			"rows whose data_source is not budget_probe_<task> (verl routes each row's reward by data_source)", at.example(msg))
	}
	if row.Ability != ability {
		v.fs.add(CheckLabels, Error, "ability", f.path, `rows whose ability is not "`+ability+`"`,
			at.example(fmt.Sprintf("ability %q", clip(row.Ability, 80))))
	}
}

func (v *validator) dataSourceProblem(f *file, ds string) string {
	if !f.probeSet && v.manifest != nil && v.manifest.Config.Task != "" {
		if want := dataSourcePrefix + v.manifest.Config.Task; ds != want {
			return fmt.Sprintf("data_source %q, want %q (the manifest's task)", clip(ds, 80), want)
		}
		return ""
	}
	task, ok := strings.CutPrefix(ds, dataSourcePrefix)
	if _, known := probes.Tasks[task]; !ok || !known {
		return fmt.Sprintf("data_source %q, want budget_probe_ and one of the tasks %s", clip(ds, 80), taskNames())
	}
	return ""
}

func taskNames() string {
	names := make([]string, 0, len(probes.Tasks))
	for n := range probes.Tasks {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
