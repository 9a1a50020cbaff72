package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	ucli "github.com/urfave/cli/v3"

	predict "bagen-data/eval/prediction"
	"bagen-data/guard"
	"bagen-data/internal/httpd"
	"bagen-data/probes"
)

// Guard is the `bagen-data guard` command: a budget guard between an
// agent and its model.
var Guard = &ucli.Command{
	Name:  "guard",
	Usage: "proxy an agent's model calls, estimate its remaining budget live, and log, warn or stop it",
	UsageText: "bagen-data guard --upstream URL [--estimator URL --estimator-model NAME] [--listen 127.0.0.1:8787]\n" +
		"   [--budget TOKENS] [--task swebench] [--every N] [--estimate-from K] [--tokenizer SPEC]\n" +
		"   [--policy log|warn|stop] [--stop-as auto|message|context-limit]\n" +
		"   [--warn-at 80,90,100] [--prices FILE] [--budget-usd DOLLARS] [--loop N]\n" +
		"   [--wait] [--ledger DIR]",
	Description: `Serves OpenAI Chat Completions (POST /v1/chat/completions), OpenAI Responses
(POST /v1/responses) and Anthropic Messages (POST /v1/messages) and forwards
every request to --upstream with the agent's own headers (its API key
included: the guard holds none); anything else, GET /v1/models included, is
forwarded untouched. Point the agent's base URL at --listen.

After each turn (every --every turns) the guard renders the budget probe of
--task for the run so far, as "bagen-data probes" renders it, with --budget
as the budget, and asks --estimator (an OpenAI-compatible server; its key
from BAGEN_ESTIMATOR_API_KEY). Usage is accounted as probes accounts it,
--tokenizer counting what the upstream does not report (a call without
usage, hidden reasoning), so that the live probe is the offline one. A
turn left without an estimate is an "unestimated" estimate event with its
reason (ledger, log, bagen_guard_unestimated_total); a failed estimate
never blocks the agent.
--policy log records only; warn adds the estimate and the budget left to
the next request; stop ends the run at the first "impossible" estimate or
once its tokens pass --budget, answering with a final assistant message
(--stop-as message) or the API's context-window error (context-limit).
Under warn (and stop, below 100%) a run is also warned once at each
--warn-at share of its budget. --prices FILE prices each call by its model
(no network fetch) and --budget-usd caps a run's dollars beside --budget.
With an estimator that answers before the first turn (baseline:MODEL.json)
each run gets a forecast of its whole cost when it starts, updated after
every estimate. --loop N stops (warns, under warn) a run that makes the
same tool call, or receives the same tool result, N times in a row.
A Claude Code subagent (X-Claude-Code-Agent-Id) or a session naming
X-Bagen-Parent-Session is a child: its own ledger file, its spending
counted toward its parent's budget.

--ledger DIR keeps one JSONL file per run (0600 files in a 0700 directory:
they hold whole conversations, never a header); convert, build and probes
read the directory, and eval --predictions DIR scores its estimates. GET / is a live page of the
sessions (GET /sessions.json its data); GET /healthz, GET /metrics (Prometheus). SIGTERM or
SIGINT: new requests are refused, streams in flight finish, exit 0.
Listening beyond loopback exposes the upstream, with the callers' keys,
to the network.`,
	Flags: []ucli.Flag{
		&ucli.StringFlag{Name: "upstream", Required: true, Usage: "model server root `URL` (http://127.0.0.1:8000, https://api.anthropic.com)"},
		&ucli.StringFlag{Name: "listen", Value: "127.0.0.1:8787", Usage: "listen `ADDRESS`"},
		&ucli.StringFlag{Name: "estimator", Usage: "OpenAI-compatible estimator `URL` (with or without /v1), or baseline:MODEL.json to answer in-process; none: usage only"},
		&ucli.StringFlag{Name: "estimator-model", Usage: "estimator model `NAME`"},
		estimatorAccountingFlag,
		&ucli.Int64Flag{Name: "budget", Usage: "session token budget (default: the task's; swebench has none)"},
		&ucli.StringFlag{Name: "task", Value: guard.DefaultTask, Usage: "probe preset `NAME`: sokoban, searchr1, swebench or warehouse"},
		&ucli.IntFlag{Name: "every", Value: guard.DefaultEvery, Usage: "estimate after every `N`th turn"},
		&ucli.IntFlag{Name: "estimate-from", Value: guard.DefaultEstimateFrom, Usage: "first estimate after turn `K` (then every --every turns)"},
		tokenizerFlag,
		&ucli.StringFlag{Name: "policy", Value: "log", Usage: "log, warn or stop"},
		&ucli.StringFlag{Name: "warn-at", Value: guard.FormatWarnAt(guard.DefaultWarnAt), Usage: "warn once at each `PERCENTS` of the budget (comma-separated; none: never)"},
		&ucli.StringFlag{Name: "prices", Usage: "prices `FILE`: lines of MODEL-GLOB INPUT CACHED_INPUT OUTPUT, $ per million tokens"},
		&ucli.Float64Flag{Name: "budget-usd", Usage: "session budget in `DOLLARS` (needs --prices; with --budget, whichever is crossed first)"},
		&ucli.IntFlag{Name: "loop", Usage: "stop (warn under --policy warn) a run repeating a tool call or receiving the same tool result `N` times in a row (0: off)"},
		&ucli.StringFlag{Name: "stop-as", Value: "auto", Usage: "how a stop reaches the agent: auto, message or context-limit"},
		&ucli.BoolFlag{Name: "wait", Usage: "hold a run's next request until the previous turn's estimate is in"},
		&ucli.DurationFlag{Name: "estimate-timeout", Value: guard.DefaultEstimateTimeout, Usage: "limit on one estimate, retries included"},
		&ucli.StringFlag{Name: "ledger", Usage: "append every run to `DIR` (one JSONL file per session)"},
		&ucli.Int64Flag{Name: "max-body", Value: guard.DefaultMaxBody, Usage: "largest request body in `BYTES`"},
		&ucli.StringSliceFlag{Name: "redact-header", Usage: "header `NAME` never written anywhere (repeatable; the guard records no header but User-Agent)"},
		&ucli.DurationFlag{Name: "drain-timeout", Aliases: []string{"shutdown-timeout"}, Value: guard.DefaultDrainTimeout, Usage: "`DURATION` limit on the streams in flight after SIGTERM"},
	},
	Action: runGuard,
}

func runGuard(ctx context.Context, c *ucli.Command) error {
	cfg, err := guardConfig(ctx, c)
	if err != nil {
		return dashFlags("guard", c.Flags, guardFlagNames(err))
	}
	cfg.Logf = func(format string, args ...any) {
		fmt.Fprintf(c.Root().ErrWriter, "bagen-data guard: "+format+"\n", args...)
	}
	if err := noteEstimatorAccounting(ctx, c, cfg.Logf); err != nil {
		return err
	}
	g, err := guard.New(cfg)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Fprintf(c.Root().ErrWriter, "bagen-data guard: listening on http://%s, upstream %s, policy %s\n", l.Addr(), cfg.Upstream, cfg.Policy)
	if cfg.Counter == nil && cfg.Estimator != nil {
		fmt.Fprintf(c.Root().ErrWriter, "bagen-data guard: no tokenizer (make tokenizer, or --tokenizer): a turn whose usage needs a count the upstream did not give goes unestimated\n")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return g.Serve(ctx, l)
}

// guardFields are the guard's flags, by the Config field each sets.
var guardFields = map[string]string{"Upstream": "upstream", "Budget": "budget", "Every": "every",
	"EstimateFrom": "estimate-from", "EstimateTimeout": "estimate-timeout", "MaxBody": "max-body",
	"DrainTimeout": "drain-timeout", "WarnAt": "warn-at", "BudgetUSD": "budget-usd", "Loop": "loop"}

// guardFlagNames speaks of the flags where guard.Config's errors name
// its fields ("MaxBody: …" is "max-body: …", which dashFlags makes
// "--max-body: …"); the error still wraps err.
func guardFlagNames(err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		field := l[:strings.IndexFunc(l+":", func(r rune) bool { return r == ':' || r == ' ' || r == '[' })]
		if flag, ok := guardFields[field]; ok {
			lines[i] = flag + strings.Replace(l[len(field):], "needs Prices", "needs --prices FILE", 1)
		}
	}
	return &renamedError{msg: strings.Join(lines, "\n"), err: err}
}

// renamedError is err said in other words.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

func guardConfig(ctx context.Context, c *ucli.Command) (guard.Config, error) {
	var errs []error
	cfg := guard.Config{Upstream: c.String("upstream"), Budget: c.Int64("budget"), Every: c.Int("every"), EstimateFrom: c.Int("estimate-from"),
		Wait: c.Bool("wait"), EstimateTimeout: c.Duration("estimate-timeout"), Ledger: c.String("ledger"),
		Limits:        httpd.Limits{MaxBody: c.Int64("max-body"), DrainTimeout: c.Duration("drain-timeout")},
		RedactHeaders: c.StringSlice("redact-header")}
	var err error
	if cfg.Policy, err = guard.ParsePolicy(c.String("policy")); err != nil {
		errs = append(errs, err)
	}
	if cfg.StopAs, err = guard.ParseStopAs(c.String("stop-as")); err != nil {
		errs = append(errs, err)
	}
	if cfg.Task, err = probes.LookupTask(c.String("task")); err != nil {
		errs = append(errs, err)
	}
	if t, _, err := openCounter(ctx, c); err != nil {
		errs = append(errs, err)
	} else if t != nil {
		cfg.Counter = t
	}
	if u, ok := strings.CutPrefix(c.String("estimator"), "baseline:"); ok {
		cfg.ForecastStart = true // it answers a probe after turn 0
		cfg.Estimator, err = guardBaseline(c, u, cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("estimator: %w", err))
		}
	} else if u := c.String("estimator"); u != "" {
		client := &predict.OpenAI{BaseURL: u, Model: c.String("estimator-model"), APIKey: os.Getenv("BAGEN_ESTIMATOR_API_KEY")}
		if err := client.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("estimator: %w (--estimator-model names it)", err))
		}
		// Three attempts share the estimate timeout.
		cfg.Estimator = guard.NewEstimator(client, predict.Retry{Attempts: 3, Timeout: cfg.EstimateTimeout / 3})
	} else if c.String("estimator-model") != "" {
		errs = append(errs, errors.New("estimator-model: given without --estimator"))
	}
	errs = append(errs, guardPolicyConfig(c, &cfg)...)
	if cfg.Policy != guard.Log && cfg.Estimator == nil && cfg.Budget == 0 && cfg.BudgetUSD == 0 && cfg.Loop == 0 {
		errs = append(errs, fmt.Errorf("policy %s: needs --estimator, --budget, --budget-usd or --loop", cfg.Policy))
	}
	return cfg, errors.Join(append(errs, cfg.Validate())...)
}

// guardPolicyConfig reads the budget policies' flags: --warn-at,
// --prices, --budget-usd and --loop.
func guardPolicyConfig(c *ucli.Command, cfg *guard.Config) []error {
	var errs []error
	var err error
	if cfg.WarnAt, err = guard.ParseWarnAt(c.String("warn-at")); err != nil {
		errs = append(errs, err)
	}
	if f := c.String("prices"); f != "" {
		if cfg.Prices, err = guard.LoadPrices(f); err != nil {
			errs = append(errs, err)
		}
	}
	cfg.BudgetUSD, cfg.Loop = c.Float64("budget-usd"), c.Int("loop")
	return errs
}
