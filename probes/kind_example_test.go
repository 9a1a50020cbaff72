package probes_test

import (
	"fmt"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// The two accountings of one logged run: two turns whose requests count
// 30 and 47 input tokens, history included, with outputs of 5 and 6; the
// user messages record 10 and 20 tokens and the system prompt 7.
func ExampleAccountingKind_Account() {
	t := rollout.Trajectory{ID: "run", Inputs: rollout.InputsRequest, Messages: []rollout.Message{
		{Role: "system", Content: "be brief", Tokens: 7},
		{Role: "user", Content: "task", Tokens: 10},
		{Role: "assistant", Content: "a", Tokens: 5},
		{Role: "user", Content: "observation", Tokens: 20},
		{Role: "assistant", Content: "b", Tokens: 6},
	}, API: []rollout.APITokens{{Input: 30, Output: 5}, {Input: 47, Output: 6}}}
	for _, kind := range probes.AccountingKinds {
		acc, sys, err := kind.Account(t, nil, "be brief", probes.Native)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: sys %d, turns %v, total %d\n", kind, sys, acc.Turns, acc.Total(sys))
	}
	fmt.Println(probes.CheckAccounting(probes.AccountingReplay, probes.AccountingMessage))
	// Output:
	// message: sys 7, turns [{10 5} {20 6}], total 48
	// replay: sys 0, turns [{30 5} {12 6}], total 53
	// token accounting mismatch: the estimator learned on message numbers and is asked with replay numbers, so its estimates are miscalibrated (build the training data with --accounting replay)
}
