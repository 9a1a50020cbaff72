// Command bagen-data turns logged LLM-agent rollouts into training data and
// rewards for budget-aware agents. See the README for the verbs.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"bagen-data/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.App().RunContext(ctx, os.Args)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bagen-data: %v\n", err)
		os.Exit(1)
	}
}
