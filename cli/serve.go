package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/internal/httpd"
)

// The HTTP servers' shared flags (reward serve, grpo serve): limits, the
// drain after SIGTERM and the access log.
var (
	readTimeoutFlag    = &ucli.DurationFlag{Name: "read-timeout", Value: httpd.DefaultTimeout, Usage: "`DURATION` limit on reading a request"}
	writeTimeoutFlag   = &ucli.DurationFlag{Name: "write-timeout", Value: httpd.DefaultTimeout, Usage: "`DURATION` limit on handling and writing a response"}
	idleTimeoutFlag    = &ucli.DurationFlag{Name: "idle-timeout", Value: httpd.DefaultTimeout, Usage: "`DURATION` limit on an idle keep-alive connection"}
	maxHeaderBytesFlag = &ucli.IntFlag{Name: "max-header-bytes", Value: httpd.DefaultMaxHeaderBytes, Usage: "largest request line and header block in `BYTES`"}
	drainGraceFlag     = &ucli.DurationFlag{Name: "drain-grace", Value: httpd.DefaultDrainGrace, Usage: "after SIGTERM, keep serving for `DURATION` while /healthz answers 503 (the load balancer's time to notice)"}
	drainTimeoutFlag   = &ucli.DurationFlag{Name: "drain-timeout", Aliases: []string{"shutdown-timeout"}, Value: httpd.DefaultDrainTimeout, Usage: "`DURATION` limit on the whole drain after SIGTERM, grace included"}
	logRequestsFlag    = &ucli.BoolFlag{Name: "log-requests", Usage: "write a structured access log to stderr"}
	gcPercentFlag      = &ucli.IntFlag{Name: "gc-percent", Value: serveGCPercent, Usage: "the Go collector's GOGC while serving, in `PERCENT` of heap growth; GOGC in the environment wins over this default"}
)

// serveFlags are the shared flags, in --help order.
var serveFlags = []ucli.Flag{readTimeoutFlag, writeTimeoutFlag, idleTimeoutFlag, maxHeaderBytesFlag, drainGraceFlag, drainTimeoutFlag, logRequestsFlag, gcPercentFlag}

// serveLimits reads the shared flags' limits and --max-body.
func serveLimits(c *ucli.Command) httpd.Limits {
	return httpd.Limits{MaxBody: c.Int64("max-body"), MaxHeaderBytes: c.Int("max-header-bytes"),
		ReadTimeout: c.Duration("read-timeout"), WriteTimeout: c.Duration("write-timeout"), IdleTimeout: c.Duration("idle-timeout"),
		DrainGrace: c.Duration("drain-grace"), DrainTimeout: c.Duration("drain-timeout")}
}

// serveGCPercent is the servers' GOGC unless the environment sets one.
// The binary carries about 1.5 MB of every command's package state
// (urfave/cli's man page renderer, gorgonia's graph parser, protobuf
// descriptors), which each collection marks again, while net/http leaves
// about 4 KB of garbage a request: at Go's default of 100 a reward server
// collects every ~950 requests and spends about 8% of its CPU doing so.
// At 400 it collects a quarter as often for about 12 MB more peak RSS
// (README, "Reward server").
const serveGCPercent = 400

// setServeGC applies --gc-percent: given, or else unless GOGC is set.
func setServeGC(c *ucli.Command) error {
	if _, env := os.LookupEnv("GOGC"); env && !c.IsSet("gc-percent") {
		return nil
	}
	p := c.Int("gc-percent")
	if p < 1 {
		return fmt.Errorf("--gc-percent: got %d, want at least 1 (GOGC=off in the environment turns the collector off)", p)
	}
	debug.SetGCPercent(p)
	return nil
}

// drainHelp is the servers' shared --help paragraph on SIGTERM.
const drainHelp = `SIGINT or SIGTERM drains: /healthz turns 503 and responses carry
Connection: close; the server keeps serving for --drain-grace, then stops
accepting, answers every request it has read and exits 0 (1 if
--drain-timeout cut a request off). Use --drain-grace 0 without a load
balancer.`

// announceDrain says on stderr, when the first SIGINT or SIGTERM cancels
// c's context, that the server named who is draining and how a second
// signal stops it at once (Main). The returned function ends the watch.
func announceDrain(ctx context.Context, c *ucli.Command, who string, grace, timeout time.Duration) func() {
	served := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			fmt.Fprintf(c.Root().ErrWriter, "%s: draining: /healthz answers 503 for %v, then requests in flight finish (at most %v in all); interrupt again to stop at once\n",
				who, grace, timeout)
		case <-served:
		}
	}()
	return func() { close(served) }
}

// accessLog is the --log-requests logger, nil without it.
func accessLog(c *ucli.Command) *slog.Logger {
	if !c.Bool("log-requests") {
		return nil
	}
	return slog.New(slog.NewJSONHandler(c.Root().ErrWriter, nil))
}
