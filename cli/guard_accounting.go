package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v3"

	predict "bagen-data/eval/prediction"
	"bagen-data/guard"
	"bagen-data/probes"
)

// estimatorAccountingFlag is guard's --estimator-accounting.
var estimatorAccountingFlag = &ucli.StringFlag{Name: "estimator-accounting",
	Usage:       "token `ACCOUNTING` the estimator learned on (message or replay), checked against the guard's (replay)",
	DefaultText: "what the estimator lists under /v1/models (grpo serve does), else unknown"}

// noteEstimatorAccounting logs, once at start, whether the estimator
// learned on the guard's accounting (guard.AccountingNote): the one
// --estimator-accounting gives, else the one the estimator lists under
// /v1/models. Asking the estimator never fails the guard.
func noteEstimatorAccounting(ctx context.Context, c *ucli.Command, logf func(format string, args ...any)) error {
	u, given := c.String("estimator"), c.String("estimator-accounting")
	if strings.HasPrefix(u, "baseline:") {
		return nil // the model file records its accounting: guardBaseline checks it
	}
	if u == "" {
		if given != "" {
			return errors.New("estimator-accounting: given without --estimator")
		}
		return nil
	}
	learned, err := probes.ParseAccountingKind(given)
	if given == "" {
		learned = listedAccounting(ctx, c, u, logf)
	} else if err != nil {
		return fmt.Errorf("estimator-accounting: %w", err)
	}
	if note := guard.AccountingNote(learned); note != "" {
		logf("%s", note)
	}
	return nil
}

// listedAccounting is the accounting the estimator at u lists for
// --estimator-model under /v1/models; unknown (with the reason logged)
// when it cannot be had or is not a known kind.
func listedAccounting(ctx context.Context, c *ucli.Command, u string, logf func(format string, args ...any)) probes.AccountingKind {
	client := &predict.OpenAI{BaseURL: u, Model: c.String("estimator-model"), APIKey: os.Getenv("BAGEN_ESTIMATOR_API_KEY")}
	ctx, cancel := context.WithTimeout(ctx, c.Duration("estimate-timeout"))
	defer cancel()
	listed, err := client.Accounting(ctx)
	if err != nil {
		logf("the estimator's token accounting is unknown: %v", err)
		return probes.AccountingUnknown
	}
	if listed == "" {
		return probes.AccountingUnknown
	}
	k, err := probes.ParseAccountingKind(listed)
	if err != nil {
		logf("the estimator lists %v", err)
	}
	return k
}
