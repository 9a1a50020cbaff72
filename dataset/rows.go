package dataset

import (
	"context"
	"strconv"

	"bagen-data/probes"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// rowWriter renders planned entries into rows.
type rowWriter struct {
	cfg   *Config
	trajs []traj
	sp    *spill
}

func (w *rowWriter) write(ctx context.Context, path string, split int, entries []Entry) error {
	var progress func(int64)
	if w.cfg.Progress != nil {
		name := "write " + splitNames[split]
		total := int64(len(entries))
		progress = func(done int64) { w.cfg.Progress(name, done, total) }
	}
	// A row's prompt is at most its trajectory's text: the spilled record's
	// size estimates it before rendering.
	weight := func(i int) int { return int(w.trajs[entries[i].Traj].n) }
	load := func(start, end int, a *arena) error { return w.load(entries, start, end, a) }
	if split == sftIdx {
		return writeParquet(ctx, path, w.cfg.pageCodec(), len(entries), w.cfg.Workers, load, func(i int, a *arena) (SFTRow, int, error) {
			return w.sft(entries[i], a.recs[i-a.first])
		}, weight, progress)
	}
	return writeParquet(ctx, path, w.cfg.pageCodec(), len(entries), w.cfg.Workers, load, func(i int, a *arena) (RLRow, int, error) {
		return w.rl(entries[i], a.recs[i-a.first], split, i)
	}, weight, progress)
}

// load reads the spill records of entries[start:end] into a, all at once
// (a.recs). A row's prompt shows the first p.After turns of its
// trajectory (the first user message when p.After is 0): only they are
// read.
func (w *rowWriter) load(entries []Entry, start, end int, a *arena) error {
	offs := make([]int64, end-start)
	a.recs, a.first = make([][]byte, end-start), start
	for k, e := range entries[start:end] {
		t := &w.trajs[e.Traj]
		size := t.n
		if need := shownTurns(t, t.probes[e.Probe]); need > 0 {
			size = t.ends[need-1]
		}
		offs[k], a.recs[k] = t.off, a.alloc(int(size))
	}
	return w.sp.readAll(offs, a.recs)
}

// shownTurns is how many turns of t the prompt of p shows.
func shownTurns(t *traj, p probes.Probe) int {
	return min(max(p.After, 1), len(t.ends))
}

// probe decodes what rendering entry e needs from its spill record rec
// (read by load into the chunk's arena, whose memory the texts share).
func (w *rowWriter) probe(e Entry, rec []byte) (*traj, probes.Probe, []rollout.Message, []TurnTokens, error) {
	t := &w.trajs[e.Traj]
	p := t.probes[e.Probe]
	tr, acc, err := decodeTurnsN(rec, shownTurns(t, p))
	if err != nil {
		return nil, p, nil, nil, err
	}
	prompt := w.cfg.Task.Render(tr, acc, p, t.budget, w.cfg.Think)
	turns := make([]TurnTokens, p.After)
	for k := range turns {
		turns[k] = TurnTokens{Turn: int64(k + 1), InputTokens: acc.Turns[k].In, OutputTokens: acc.Turns[k].Out}
	}
	return t, p, prompt, turns, nil
}

func (w *rowWriter) sft(e Entry, rec []byte) (SFTRow, int, error) {
	t, p, prompt, turns, err := w.probe(e, rec)
	if err != nil {
		return SFTRow{}, 0, err
	}
	answer := w.cfg.Task.Answer(p, w.cfg.Width, t.budget, w.cfg.Think)
	size := promptSize(prompt) + len(answer)
	msgs := append(prompt, rollout.Message{Role: "assistant", Content: answer})
	return SFTRow{Messages: msgs, PerTurnTokens: turns, CustomID: customID(t.id, p.After), Budget: t.budget, Accounting: w.cfg.Accounting}, size, nil
}

func (w *rowWriter) rl(e Entry, rec []byte, split, index int) (RLRow, int, error) {
	t, p, prompt, turns, err := w.probe(e, rec)
	if err != nil {
		return RLRow{}, 0, err
	}
	row := NewRLRow(RLProbe{
		Task: w.cfg.Task.Name, Trajectory: t.id, Split: splitNames[split], Index: index,
		After: p.After, TotalTurns: t.turns, Used: p.Used, Budget: t.budget,
		Prompt: prompt, Turns: turns, Accounting: w.cfg.Accounting,
		Target: reward.TokenTarget(reward.Truth{Remaining: p.Remaining, Possible: p.Possible}, w.cfg.Width.GroundTruth(p)),
	})
	return row, promptSize(prompt), nil
}

// SplitProbes is extra_info.split of a benchmark probe set's rows.
const SplitProbes = "probes"

// RLProbe is what an RL, eval or probe-set row says about one probe.
type RLProbe struct {
	Task       string // the task preset; data_source is budget_probe_<Task>
	Trajectory string
	Split      string // SplitRL, SplitEval or SplitProbes
	Index      int    // row index in its file
	After      int    // completed turns shown (p)
	TotalTurns int
	// Used and Budget are tokens spent before the probe and the budget (0
	// on Warehouse probes, whose budgets are in the prompt).
	Used, Budget int64
	Prompt       []rollout.Message
	Turns        []TurnTokens // usage of the After completed turns
	// Accounting made Used, Turns and the target's remaining tokens;
	// probes.AccountingUnknown on Warehouse probes, which count no tokens.
	Accounting probes.AccountingKind
	Target     reward.Target
}

// NewRLRow is the one constructor of RL, eval and probe-set rows, in
// verl's RLHFDataset layout: data_source budget_probe_<task>, ability
// budget_estimation, the rule reward model with the target's ground truth,
// extra_info and the label column (reward.Target.Label). A token target
// fills remaining_tokens and the margin (budget − used − r) / budget.
func NewRLRow(p RLProbe) RLRow {
	msgs := append(make([]rollout.Message, 0, len(p.Prompt)), p.Prompt...)
	tr, tokens := p.Target.Tokens()
	margin := 0.0
	if tokens && p.Budget > 0 {
		margin = float64(p.Budget-p.Used-tr.Remaining) / float64(p.Budget)
	}
	return RLRow{
		DataSource:  "budget_probe_" + p.Task,
		Prompt:      msgs,
		Ability:     "budget_estimation",
		RewardModel: RewardModel{Style: "rule", GroundTruth: p.Target.GroundTruth()},
		ExtraInfo: ExtraInfo{
			CustomID: customID(p.Trajectory, p.After), TrajectoryID: p.Trajectory, Split: p.Split, Index: int64(p.Index),
			ProbeAfterTurn: int64(p.After), TotalTurns: int64(p.TotalTurns), TokensUsed: p.Used,
			RemainingTokens: tr.Remaining, IsPossible: p.Target.Possible(), Budget: p.Budget,
			PerTurnTokens: p.Turns, Margin: margin, Accounting: p.Accounting,
		},
		Label: p.Target.Label(),
	}
}

func promptSize(prompt []rollout.Message) int {
	n := 0
	for _, c := range prompt {
		n += len(c.Content)
	}
	return n
}

func customID(traj string, p int) string {
	return traj + ProbeSuffix + strconv.Itoa(p)
}

// BenchRows are the rows of a benchmark probe set (split SplitProbes):
// row i is bench[i], a probe of the rollout ids[bench[i].Rollout]. Token
// probes get width's target interval as their ground truth and record
// probes.AccountingReplay, the accounting of every Replay; Warehouse
// probes the point answer of their remaining usage, and no accounting.
func BenchRows(task string, width probes.Width, ids []string, bench []probes.Bench) []RLRow {
	rows := make([]RLRow, len(bench))
	for i, b := range bench {
		turns := make([]TurnTokens, len(b.TurnUsage))
		for k, t := range b.TurnUsage {
			turns[k] = TurnTokens{Turn: int64(k + 1), InputTokens: t.In, OutputTokens: t.Out}
		}
		var target reward.Target
		kind := probes.AccountingReplay
		if b.Warehouse != nil {
			target, kind = b.Warehouse.Target(), probes.AccountingUnknown
		} else {
			gt := width.GroundTruth(probes.Probe{After: b.After, Used: b.Used, Remaining: b.Remaining, Possible: b.Possible})
			target = reward.TokenTarget(reward.Truth{Remaining: b.Remaining, Possible: b.Possible}, gt)
		}
		rows[i] = NewRLRow(RLProbe{
			Task: task, Trajectory: ids[b.Rollout], Split: SplitProbes, Index: i,
			After: b.After, TotalTurns: b.TotalTurns, Used: b.Used, Budget: b.Budget,
			Prompt: b.Prompt, Turns: turns, Accounting: kind, Target: target,
		})
	}
	return rows
}
