package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/eval"
	predict "bagen-data/eval/prediction"
	"bagen-data/internal/atomicfile"
	"bagen-data/reward"
	"bagen-data/reward/server"
)

// Reward is the `bagen-data reward` command: batch scoring and the HTTP
// reward server.
var Reward = &ucli.Command{
	Name:     "reward",
	Usage:    "score predictions with the rule reward, or serve it over HTTP",
	Commands: []*ucli.Command{rewardScore, rewardServe},
}

var rewardScore = &ucli.Command{
	Name:      "score",
	Usage:     "score model predictions against an eval or RL parquet",
	UsageText: "bagen-data reward score --data eval/test.parquet --predictions preds.jsonl [--out scored.jsonl]",
	Description: `Joins predictions (JSONL {"custom_id": "...", "response": "..."}) to the data
rows on custom_id with eval's join, scores each probe once against its
label with the rule reward, prints the mean reward by truth class and, with
--out, writes one JSON line per probe. Data rows repeated by oversampling
are one probe. A probe without a prediction is scored as an unparseable
answer; it and predictions with no data row are listed on stderr and
counted; --strict makes them an error.`,
	Flags: []ucli.Flag{
		withRequired(dataFlag("RL or eval probes")),
		&ucli.StringFlag{Name: "predictions", Required: true, Usage: "predictions JSONL `FILE`"},
		&ucli.StringFlag{Name: "out", Usage: "write per-row rewards and details to this JSONL `FILE`"},
		&ucli.StringFlag{Name: "rule", Value: "train", Usage: "reward `RULE`: train (1.8/0.2, the RL reward) or paper (the evaluation score S)"},
		&ucli.BoolFlag{Name: "strict", Usage: "fail when predictions and data rows do not match one to one"},
	},
	Action: runRewardScore,
}

var rewardServe = &ucli.Command{
	Name:      "serve",
	Usage:     "serve the rule reward over HTTP (OpenRLHF, slime, batch)",
	UsageText: "bagen-data reward serve [--addr 127.0.0.1:8000] [--max-body 67108864] [--drain-grace 5s] [--log-requests]",
	Description: `Routes:
  POST /get_reward   OpenRLHF: v0.10.2+ --reward.remote_url http://HOST/get_reward
                     --data.label_key label; before v0.10.2 --remote_rm_url … --label_key label
  POST /slime        slime: --rm-type remote_rm --rm-url http://HOST/slime --label-key label
  POST /v1/rewards   batches of any size
  GET /healthz, GET /metrics (Prometheus)
` + drainHelp,
	Flags: append([]ucli.Flag{
		&ucli.StringFlag{Name: "addr", Aliases: []string{"listen"}, Value: "127.0.0.1:8000", Usage: "listen `ADDRESS`"},
		&ucli.Int64Flag{Name: "max-body", Value: server.DefaultMaxBody, Usage: "largest request body in `BYTES`"},
		&ucli.StringFlag{Name: "rule", Value: "train", Usage: "reward `RULE`: train (1.8/0.2) or paper (weights 1/0)"},
	}, serveFlags...),
	Action: runRewardServe,
}

func ruleFlag(c *ucli.Command) (reward.Rule, error) {
	switch v := c.String("rule"); v {
	case "train":
		return reward.Train, nil
	case "paper":
		return reward.Paper, nil
	default:
		return reward.Rule{}, fmt.Errorf("--rule: want train or paper, got %q", v)
	}
}

func runRewardServe(ctx context.Context, c *ucli.Command) error {
	rule, err := ruleFlag(c)
	if err != nil {
		return err
	}
	cfg := server.Config{Rule: rule, Limits: serveLimits(c), Log: accessLog(c)}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("reward serve: %w", err)
	}
	if err := setServeGC(c); err != nil {
		return fmt.Errorf("reward serve: %w", err)
	}
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fmt.Errorf("reward serve: %w", err)
	}
	fmt.Fprintf(c.Root().ErrWriter, "reward: serving on http://%s\n", ln.Addr())
	defer announceDrain(ctx, c, "reward", cfg.DrainGrace, cfg.DrainTimeout)()
	if err := server.Serve(ctx, ln, cfg); err != nil {
		return fmt.Errorf("reward serve: %w", err)
	}
	fmt.Fprintln(c.Root().ErrWriter, "reward: drained, bye")
	return nil
}

// scoredRow is one line of the --out file.
type scoredRow struct {
	CustomID        string          `json:"custom_id"`
	TruthPossible   bool            `json:"truth_possible"`
	RemainingTokens int64           `json:"remaining_tokens"` // on impossible probes too: what the rollout went on to spend
	Reward          float64         `json:"reward"`
	Detail          json.RawMessage `json:"detail"`
	// Missing marks a probe without a prediction, scored as unparseable.
	Missing bool `json:"missing,omitempty"`
}

// runRewardScore reads the data and the predictions, joins them under
// eval's join rules, scores each probe once and prints the summary.
func runRewardScore(ctx context.Context, c *ucli.Command) error {
	rule, err := ruleFlag(c)
	if err != nil {
		return err
	}
	if err := c.Set("data", dataFile(c.String("data"))); err != nil {
		return err
	}
	rows, err := dataset.ReadRL(c.String("data"))
	if err != nil {
		return fmt.Errorf("reward score: %w", err)
	}
	preds, err := predict.ReadFile(c.String("predictions"))
	if err != nil {
		return fmt.Errorf("reward score: %w", err)
	}
	res, err := scoreRows(eval.Join(rows, preds), rule, c.String("data"))
	if err != nil {
		return fmt.Errorf("reward score: %w", err)
	}
	res.reportMismatches(c.Root().ErrWriter)
	if out := c.String("out"); out != "" {
		if err := atomicfile.Write(out, res.writeJSONL); err != nil {
			return fmt.Errorf("reward score: %w", err)
		}
	}
	res.printSummary(c.Root().Writer, c.String("rule"))
	if c.Bool("strict") && (len(res.Unknown) > 0 || len(res.Missing) > 0) {
		return fmt.Errorf("reward score: %d predictions without a data row, %d probes without a prediction", len(res.Unknown), len(res.Missing))
	}
	return nil
}

// scoring is the outcome of joining and scoring.
type scoring struct {
	eval.Matched
	scored []scoredRow
	sums   [2]float64
	counts [2]int
}

// scoreRows scores each probe of the join once; a probe without a
// prediction is scored as an unparseable answer.
func scoreRows(j eval.Matched, rule reward.Rule, path string) (*scoring, error) {
	res := &scoring{Matched: j}
	for _, p := range j.Probes {
		t, err := eval.TruthOf(p.Row)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d (%s): label: %w", path, p.Index, p.Row.ExtraInfo.CustomID, err)
		}
		res.add(p, t.Target, rule)
	}
	return res, nil
}

func (s *scoring) add(p eval.Match, t reward.Target, rule reward.Rule) {
	j := t.Judge(rule, p.Response)
	tr, _ := t.Tokens()
	row := scoredRow{CustomID: p.Row.ExtraInfo.CustomID, TruthPossible: j.Possible, RemainingTokens: tr.Remaining,
		Reward: j.Reward, Detail: j.AppendJSON(nil), Missing: !p.Answered}
	k := 0
	if row.TruthPossible {
		k = 1
	}
	s.sums[k] += row.Reward
	s.counts[k]++
	s.scored = append(s.scored, row)
}

// maxListed bounds the ids printed per kind of mismatch.
const maxListed = 20

func (s *scoring) reportMismatches(w io.Writer) {
	list := func(what string, ids []string) {
		for i, id := range ids {
			if i == maxListed {
				fmt.Fprintf(w, "reward score: … and %d more %s\n", len(ids)-maxListed, what)
				return
			}
			fmt.Fprintf(w, "reward score: %s: %s\n", what, id)
		}
	}
	list("probe without a prediction", s.Missing)
	list("prediction without a data row", s.Unknown)
}

func (s *scoring) printSummary(w io.Writer, rule string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "truth\tprobes\tmean reward (%s)\n", rule)
	names := [2]string{"impossible", "possible"}
	var sum float64
	var n int
	for _, k := range []int{1, 0} {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", names[k], s.counts[k], mean(s.sums[k], s.counts[k]))
		sum += s.sums[k]
		n += s.counts[k]
	}
	fmt.Fprintf(tw, "all\t%d\t%s\n", n, mean(sum, n))
	tw.Flush()
	fmt.Fprintf(w, "data rows: %d (%d probes)\nprobes without a prediction: %d (scored as unparseable)\npredictions without a data row: %d\n",
		s.DataRows, len(s.Probes), len(s.Missing), len(s.Unknown))
}

func mean(sum float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", sum/float64(n))
}

func (s *scoring) writeJSONL(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, r := range s.scored {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}
