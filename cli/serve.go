package cli

import (
	"fmt"
	"log/slog"
	"time"

	ucli "github.com/urfave/cli/v2"

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
)

// serveFlags are the shared flags, in --help order.
var serveFlags = []ucli.Flag{readTimeoutFlag, writeTimeoutFlag, idleTimeoutFlag, maxHeaderBytesFlag, drainGraceFlag, drainTimeoutFlag, logRequestsFlag}

// drainHelp is the servers' shared --help paragraph on SIGTERM.
const drainHelp = `SIGINT or SIGTERM drains: /healthz turns 503 and responses carry
Connection: close; the server keeps serving for --drain-grace, then stops
accepting, answers every request it has read and exits 0 (1 if
--drain-timeout cut a request off). Use --drain-grace 0 without a load
balancer.`

// announceDrain says on stderr, when the first SIGINT or SIGTERM cancels
// c's context, that the server named who is draining and how a second
// signal stops it at once (Main). The returned function ends the watch.
func announceDrain(c *ucli.Context, who string, grace, timeout time.Duration) func() {
	served := make(chan struct{})
	go func() {
		select {
		case <-c.Context.Done():
			fmt.Fprintf(c.App.ErrWriter, "%s: draining: /healthz answers 503 for %v, then requests in flight finish (at most %v in all); interrupt again to stop at once\n",
				who, grace, timeout)
		case <-served:
		}
	}()
	return func() { close(served) }
}

// accessLog is the --log-requests logger, nil without it.
func accessLog(c *ucli.Context) *slog.Logger {
	if !c.Bool("log-requests") {
		return nil
	}
	return slog.New(slog.NewJSONHandler(c.App.ErrWriter, nil))
}
