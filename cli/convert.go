package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/rollout"
)

// Convert is the `bagen-data convert` command.
var Convert = &ucli.Command{
	Name:      "convert",
	Usage:     "read agent logs and write the canonical rollout JSONL, to see what was read",
	UsageText: "bagen-data convert --input FILE|DIR ... [--results report.json ...] [--success-file verdicts.json ...] [--format NAME] [--prefix-ids] --out rollouts.jsonl",
	Description: `Reads every trajectory of the inputs (format detected from each file's
content, or --format) and writes one canonical JSONL line per trajectory: the
messages as build reads them (tool calls rendered, observations joined into
the user side), per_turn_api_tokens with input, output, reasoning and cached
tokens as recorded (reasoning null where the log has no count, 0 where it
records 0; retried calls of a turn beside them), metadata.success and metadata.outcome_source (results,
score, exit_status or none). build and probes on that file give what they give
on the inputs. The output is written atomically. The summary counts the
trajectories, their turns (LLM calls) and the usage recorded for them.

Coding-agent sessions (Claude Code, Codex, Qwen Code) carry no outcome: their
success is false (outcome_source none) unless --results joins a verdict on
the working directory or --success-file on the session id.

Formats:
` + rollout.FormatHelp(),
	Flags: append([]ucli.Flag{
		&ucli.StringSliceFlag{Name: "input", Aliases: []string{"i"}, Required: true, Usage: "log `FILE` or directory (repeatable)"},
		&ucli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "output canonical JSONL `FILE`"},
		&ucli.BoolFlag{Name: "prefix-ids", Usage: "prefix every trajectory id with its file's base name"},
		quietFlag,
	}, readFlags...),
	Action: runConvert,
}

// readFlags say how inputs are read; build, probes and convert share them.
var readFlags = []ucli.Flag{
	&ucli.StringSliceFlag{Name: "results", Usage: "outcomes from a SWE-bench harness report `FILE` (resolved_ids), joined on instance ids; repeatable"},
	&ucli.StringSliceFlag{Name: "success-file", Usage: "outcomes from a JSON `FILE` mapping trajectory (session) ids to true or false; repeatable"},
	&ucli.StringFlag{Name: "format", Usage: "log `NAME`: " + strings.Join(rollout.FormatNames(), ", ") + " (see convert --help); default: detected from each file's content"},
	&ucli.Int64Flag{Name: "max-message-bytes", Value: rollout.DefaultMaxMessageBytes, Usage: "reject a message longer than `N` bytes (a record may be 32 times as long)"},
	&ucli.BoolFlag{Name: "replace-invalid-utf8", Usage: "replace invalid UTF-8 with U+FFFD (counted) instead of failing"},
}

// readOptions are the checked read flags.
func readOptions(c *ucli.Command) (*rollout.Options, error) {
	o := &rollout.Options{MaxMessageBytes: c.Int64("max-message-bytes"), ReplaceInvalidUTF8: c.Bool("replace-invalid-utf8"),
		Skipped: &rollout.Skips{}}
	if o.MaxMessageBytes < 1 || o.MaxMessageBytes > 1<<30 {
		return nil, fmt.Errorf("max-message-bytes: want 1 to %d, got %d", 1<<30, o.MaxMessageBytes)
	}
	if name := c.String("format"); name != "" {
		f, err := rollout.LookupFormat(name)
		if err != nil {
			return nil, err
		}
		o.Format = f
	}
	if paths := c.StringSlice("results"); len(paths) > 0 {
		r, err := rollout.LoadResults(paths)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		o.Results = r
	}
	if paths := c.StringSlice("success-file"); len(paths) > 0 {
		r, err := rollout.LoadSuccessFiles(o.Results, paths)
		if err != nil {
			return nil, fmt.Errorf("success-file: %w", err)
		}
		o.Results = r
	}
	return o, nil
}

func runConvert(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return usage("convert", fmt.Errorf("unexpected argument %q (inputs go in --input)", c.Args().First()))
	}
	o, err := readOptions(c)
	if err != nil {
		return err
	}
	srcs, err := o.Expand(c.StringSlice("input"))
	if err != nil {
		return err
	}
	sum, err := rollout.Convert(ctx, srcs, c.String("out"), rollout.ConvertOptions{PrefixIDs: c.Bool("prefix-ids")})
	if err != nil {
		return withFlagHints(err, "")
	}
	if !c.Bool("quiet") {
		printConvertSummary(c.Root().Writer, c.String("out"), sum)
		printSkipped(c.Root().Writer, o)
	}
	return nil
}

// withSkipped adds to err the files of input directories that were
// skipped, when there were any: a run that found nothing to read says why.
func withSkipped(err error, srcs []rollout.Source) error {
	if err == nil || len(srcs) == 0 || len(srcs[0].Options.Skipped.Files()) == 0 {
		return err
	}
	var b strings.Builder
	printSkipped(&b, srcs[0].Options)
	return fmt.Errorf("%w (%s)", err, strings.TrimSuffix(b.String(), "\n"))
}

// printSkipped counts the files of input directories that hold no
// trajectory and names the first few.
func printSkipped(w io.Writer, o *rollout.Options) {
	files := o.Skipped.Files()
	if len(files) == 0 {
		return
	}
	const shown = 3
	list := strings.Join(files[:min(shown, len(files))], ", ")
	if len(files) > shown {
		list += ", …"
	}
	fmt.Fprintf(w, "skipped %d file(s) in input directories that hold no trajectory: %s\n", len(files), list)
}

func printConvertSummary(w io.Writer, out string, s rollout.Summary) {
	fmt.Fprintf(w, "%d trajectories from %d file(s) to %s\n", s.Trajectories, s.Files, out)
	fmt.Fprintf(w, "formats:%s\n", counts(s.Formats))
	fmt.Fprintf(w, "turns: %d (LLM calls), %d with usage\n", s.Turns, s.UsageTurns)
	if s.UsageTurns > 0 {
		u := s.Usage
		fmt.Fprintf(w, "usage: input %d (cached %d), output %d (reasoning %d)\n", u.Input, u.Cached, u.Output, u.Reasoning)
	}
	if s.Turns > 0 {
		fmt.Fprintf(w, "reasoning count recorded on %d turn(s) (%d of them 0), absent on %d; %d retried call(s)\n",
			s.ReasoningTurns, s.ZeroReasoning, s.Turns-s.ReasoningTurns, s.Retried)
	}
	outcomes := map[string]int{}
	for k, v := range s.Outcomes {
		outcomes[string(k)] = v
	}
	fmt.Fprintf(w, "outcome from:%s\n", counts(outcomes))
	if n := s.Outcomes[rollout.OutcomeNone]; n > 0 {
		fmt.Fprintf(w, "note: %d trajectories have no outcome and count as unsuccessful (pass --results or --success-file)\n", n)
	}
	printReadCounts(w, nil, s.Replaced)
	if s.Submitted > 0 {
		fmt.Fprintf(w, "warning: %d trajectories count as successful because the agent submitted; that is not a verified resolution (pass the SWE-bench report with --results)\n", s.Submitted)
	}
}

// printReadCounts says where outcomes came from, unless they all come from
// the log's own score or none (RAGEN rollouts), and how many invalid UTF-8
// sequences were replaced.
func printReadCounts(w io.Writer, outcomes map[string]int, replaced int) {
	if len(outcomes) > 1 || (len(outcomes) == 1 && outcomes[string(rollout.OutcomeNone)] == 0 && outcomes[string(rollout.OutcomeScore)] == 0) {
		fmt.Fprintf(w, "outcome from:%s\n", counts(outcomes))
	}
	if replaced > 0 {
		fmt.Fprintf(w, "invalid UTF-8: %d sequences replaced with U+FFFD\n", replaced)
	}
}

// counts prints " a 3, b 1" in name order.
func counts(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	s := ""
	for i, k := range names {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %s %d", k, m[k])
	}
	return s
}
