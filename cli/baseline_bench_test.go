package cli

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"bagen-data/baseline"
	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// sessionPrompts renders the probes after turns 1 … n of a Sokoban
// session as the guard does (the task's estimation prompt with <think>),
// the session cycling through the turns of a logged run.
func sessionPrompts(b testing.TB, run dataset.RLRow, n int, budget int64) [][]rollout.Message {
	b.Helper()
	task, err := probes.LookupTask("sokoban")
	if err != nil {
		b.Fatal(err)
	}
	msgs := run.Prompt[:len(run.Prompt)-1]
	head, pairs := msgs[:2], msgs[2:]
	if len(pairs) < 2 {
		b.Fatal("the run has fewer than two turns")
	}
	var out [][]rollout.Message
	var turns []probes.TurnTokens
	history := slices.Clone(head)
	for k := 1; k <= n; k++ {
		t := run.ExtraInfo.PerTurnTokens[(k-1)%len(run.ExtraInfo.PerTurnTokens)]
		turns = append(turns, probes.TurnTokens{In: t.InputTokens, Out: t.OutputTokens})
		a := pairs[(2*(k-1))%(len(pairs)-len(pairs)%2)]
		history = append(history, a)
		prompt := append(slices.Clone(history), rollout.Message{Role: "user", Content: task.ProbeText(turns, k, budget, true)})
		out = append(out, prompt)
		history = append(history, pairs[(2*(k-1)+1)%(len(pairs)-len(pairs)%2)])
	}
	return out
}

// BenchmarkGuardBaselineEstimate is the guard's in-process estimate over
// a 100-turn Sokoban session: each op answers the probes after turns 1 to
// 100; p99-ms is the 99th percentile of one estimate's wall time, and
// p99-cpu-ms of the CPU time it used (the wall time on a loaded machine
// includes waiting for a core).
func BenchmarkGuardBaselineEstimate(b *testing.B) {
	data := buildFixtures(b, "sokoban")
	model := trainBaseline(b, filepath.Join(b.TempDir(), "m.json"), []string{data})
	m, err := baseline.Load(model)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := dataset.ReadRL(filepath.Join(data, filepath.FromSlash(dataset.EvalFile)))
	if err != nil {
		b.Fatal(err)
	}
	longest := rows[0]
	for _, r := range rows {
		if len(r.Prompt) > len(longest.Prompt) {
			longest = r
		}
	}
	prompts := sessionPrompts(b, longest, 100, 100000)
	est := baseline.NewEstimator(m, "m")
	var took, cpu []time.Duration
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for b.Loop() {
		for k, p := range prompts {
			start, c0 := time.Now(), threadCPU()
			if _, err := est.Estimate(ctx, "s"+dataset.ProbeSuffix+strconv.Itoa(k+1), p); err != nil {
				b.Fatal(err)
			}
			took, cpu = append(took, time.Since(start)), append(cpu, threadCPU()-c0)
		}
	}
	for _, q := range []struct {
		d    []time.Duration
		name string
	}{{took, "ms"}, {cpu, "cpu-ms"}} {
		slices.Sort(q.d)
		b.ReportMetric(float64(q.d[len(q.d)*99/100].Microseconds())/1000, "p99-"+q.name)
		b.ReportMetric(float64(q.d[len(q.d)/2].Microseconds())/1000, "p50-"+q.name)
	}
}
