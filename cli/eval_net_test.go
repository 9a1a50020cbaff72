package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bagen-data/dataset"
	"bagen-data/eval"
)

// netAnswer is the answer and usage TestEvalNet gives a probe: impossible
// from half-way through the rollout, else an interval around twice the
// tokens used; the estimator reads a prompt growing with the dialogue, of
// which it has cached what the previous probe of the run read.
func netAnswer(x dataset.ExtraInfo) (answer string, prompt, cached, completion int64) {
	answer = fmt.Sprintf("[%d, %d]", x.TokensUsed, 3*x.TokensUsed)
	if 2*x.ProbeAfterTurn >= x.TotalTurns {
		answer = "impossible"
	}
	prompt = 400 + x.TokensUsed + int64(len(x.CustomID))
	if x.ProbeAfterTurn > 0 {
		cached = 350 + x.TokensUsed/2
	}
	return answer, prompt, cached, 8 + x.ProbeAfterTurn%3
}

// writeNetPredictions answers every probe of rows with netAnswer; the
// probe skip names (if any) gets no usage.
func writeNetPredictions(t *testing.T, path string, rows []dataset.RLRow, skip string) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		answer, p, c, o := netAnswer(r.ExtraInfo)
		line := map[string]any{"custom_id": r.ExtraInfo.CustomID, "response": "<answer>" + answer + "</answer>"}
		if r.ExtraInfo.CustomID != skip {
			line["usage"] = map[string]int64{"prompt_tokens": p, "cached_tokens": c, "completion_tokens": o}
		}
		enc, _ := json.Marshal(line)
		b.Write(append(enc, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// netWant is the early stop recomputed from the rows by a loop of its own.
type netWant struct {
	successful, aborted               int
	failedTokens, saved               int64
	prompt, cached, completion        int64
	billedIn, billedCached, billedOut int64
}

// recomputeNet replays rows from turn from on: each run stops at its
// first probe netAnswer calls impossible; the estimator is counted on
// every probe up to the stop; the refused calls are billed from the last
// probe's per_turn_tokens (call k: in_k new, the context before it
// re-read, out_k; after the last probe, its remaining tokens new and its
// context re-read once per call).
func recomputeNet(rows []dataset.RLRow, from int64) netWant {
	runs := map[string][]dataset.ExtraInfo{}
	var order []string
	for _, r := range rows {
		id := r.ExtraInfo.TrajectoryID
		if _, ok := runs[id]; !ok {
			order = append(order, id)
		}
		runs[id] = append(runs[id], r.ExtraInfo)
	}
	var w netWant
	for _, id := range order {
		ps := runs[id]
		slices.SortStableFunc(ps, func(a, b dataset.ExtraInfo) int { return int(a.ProbeAfterTurn - b.ProbeAfterTurn) })
		failed, stop := false, -1
		for i, x := range ps {
			failed = failed || !x.IsPossible
			if a, _, _, _ := netAnswer(x); stop < 0 && x.ProbeAfterTurn >= from && a == "impossible" {
				stop = i
			}
		}
		for i, x := range ps {
			if x.ProbeAfterTurn >= from && (stop < 0 || i <= stop) {
				_, p, c, o := netAnswer(x)
				w.prompt, w.cached, w.completion = w.prompt+p, w.cached+c, w.completion+o
			}
		}
		if !failed {
			w.successful++
			if stop >= 0 {
				w.aborted++
			}
			continue
		}
		w.failedTokens += ps[0].TokensUsed + ps[0].RemainingTokens
		if stop < 0 {
			continue
		}
		w.saved += ps[stop].RemainingTokens
		in, cached, out := billCalls(ps[stop], ps[len(ps)-1])
		w.billedIn, w.billedCached, w.billedOut = w.billedIn+in, w.billedCached+cached, w.billedOut+out
	}
	return w
}

// billCalls bills the calls after stop from the per-turn usage of last.
func billCalls(stop, last dataset.ExtraInfo) (in, cached, out int64) {
	turns := last.PerTurnTokens
	if int64(len(turns)) != last.ProbeAfterTurn {
		return stop.RemainingTokens, 0, 0
	}
	after := func(k int64) int64 { // tokens of turns k+1 … last
		var s int64
		for _, t := range turns[k:] {
			s += t.InputTokens + t.OutputTokens
		}
		return s
	}
	if last.TokensUsed-after(0) < 0 {
		return stop.RemainingTokens, 0, 0
	}
	for k := stop.ProbeAfterTurn + 1; k <= last.ProbeAfterTurn; k++ {
		in += turns[k-1].InputTokens
		out += turns[k-1].OutputTokens
		cached += last.TokensUsed - after(k-1)
	}
	in += last.RemainingTokens
	cached += (last.TotalTurns - last.ProbeAfterTurn) * last.TokensUsed
	return in, cached, out
}

// TestEvalNet runs eval on what build and probes write from the embedded
// fixtures, with answers carrying usage, and checks its net savings,
// harm per run, live replay and dollars against recomputeNet.
func TestEvalNet(t *testing.T) {
	dir := t.TempDir()
	ev, set := buildAndProbes(t, dir)
	for _, data := range []string{ev, set} {
		t.Run(filepath.Base(data), func(t *testing.T) { checkNet(t, dir, data) })
	}
}

func checkNet(t *testing.T, dir, data string) {
	rows := mustReadRL(t, data)
	preds, js := filepath.Join(dir, "net.jsonl"), filepath.Join(dir, "net.json")
	writeNetPredictions(t, preds, rows, "")
	stdout, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "200", "--json", js,
		"--price-in", "3", "--price-cached", "0.3", "--price-out", "15",
		"--estimator-price-in", "0.5", "--estimator-price-cached", "0.05", "--estimator-price-out", "2")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	e := readRun(t, js).Metrics.EarlyStop
	for _, tc := range []struct {
		name string
		got  *eval.EarlyStop
		from int64
	}{{"paper", &e, 0}, {"live", e.Live, 1}} {
		w := recomputeNet(rows, tc.from)
		g := tc.got
		if g == nil {
			t.Fatalf("%s: no replay", tc.name)
		}
		n := g.Net
		spent := w.prompt + w.completion
		if g.Successful != w.successful || g.AbortedSuccessful != w.aborted || g.FailedTokens != w.failedTokens || g.SavedTokens != w.saved ||
			n.EstimatorPromptTokens != w.prompt || n.EstimatorCachedTokens != w.cached || n.EstimatorCompletionTokens != w.completion ||
			n.EstimatorTokens == nil || *n.EstimatorTokens != spent || n.Tokens == nil || *n.Tokens != w.saved-spent ||
			n.SavedInput != w.billedIn || n.SavedCached != w.billedCached || n.SavedOutput != w.billedOut {
			t.Errorf("%s: eval gives %+v; recomputed %+v", tc.name, *g, w)
		}
		if h := float64(g.AbortedSuccessfulShare); w.successful > 0 && math.Abs(h-float64(w.aborted)/float64(w.successful)) > 1e-12 {
			t.Errorf("%s: harm per run %v, want %d/%d", tc.name, h, w.aborted, w.successful)
		}
		saved := (float64(w.billedIn)*3 + float64(w.billedCached)*0.3 + float64(w.billedOut)*15) / 1e6
		est := (float64(w.prompt-w.cached)*0.5 + float64(w.cached)*0.05 + float64(w.completion)*2) / 1e6
		if d := n.Dollars; d == nil || math.Abs(d.Saved-saved) > 1e-9 || math.Abs(float64(d.Estimator)-est) > 1e-9 || math.Abs(float64(d.Net)-(saved-est)) > 1e-9 {
			t.Errorf("%s: dollars %+v, want saved %.6f, estimator %.6f", tc.name, n.Dollars, saved, est)
		}
	}
	if ci := readRun(t, js).Metrics.CI["aborted_successful_share"]; ci.Replicates == 0 || ci.Low > e.AbortedSuccessfulShare || ci.High < e.AbortedSuccessfulShare {
		t.Errorf("harm interval %+v does not hold the estimate %v", ci, e.AbortedSuccessfulShare)
	}
	if want := fmt.Sprintf("net tokens saved          %d (", *e.Net.Tokens); !strings.Contains(stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout)
	}

	// One answer without usage: the net is unknown, not zero.
	writeNetPredictions(t, preds, rows, rows[0].ExtraInfo.CustomID)
	stdout, _, err = runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "0", "--json", js)
	if err != nil {
		t.Fatal(err)
	}
	u := readRun(t, js).Metrics.EarlyStop.Net
	if u.Tokens != nil || u.EstimatorTokens != nil || u.WithoutUsage != 1 || !strings.Contains(stdout, "net tokens saved          unknown, not zero: 1 of the") {
		t.Errorf("one answer without usage: net %v, %d without usage; summary:\n%s", u.Tokens, u.WithoutUsage, stdout)
	}
	raw, _ := os.ReadFile(js)
	if !strings.Contains(string(raw), `"tokens": null`) {
		t.Errorf("--json does not give the unknown net as null")
	}
}
