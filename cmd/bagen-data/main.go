// Command bagen-data turns logged LLM-agent rollouts into training data and
// rewards for budget-aware agents. See the README for the verbs.
package main

import (
	"os"

	"bagen-data/cli"
)

func main() { os.Exit(cli.Main(os.Args)) }
