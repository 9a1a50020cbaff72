package probes_test

import (
	"fmt"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// A three-turn rollout with a 10-token system prompt, labelled with the
// paper's rule and pct30 targets.
func ExampleProbes() {
	acc := probes.Accounting{Turns: []probes.TurnTokens{{In: 5, Out: 3}, {In: 4, Out: 2}, {In: 2, Out: 1}}, TrailingAt: -1}
	width, _ := probes.ParseWidth("pct30")
	ps, _ := probes.Probes(acc, 10, 2500, true, probes.Options{})
	for _, p := range ps {
		fmt.Printf("after %d turns: used %d, remaining %d, answer %s\n", p.After, p.Used, p.Remaining, width.GroundTruth(p))
	}
	// Output:
	// after 0 turns: used 15, remaining 12, answer [8, 15]
	// after 1 turns: used 18, remaining 9, answer [6, 11]
	// after 2 turns: used 24, remaining 3, answer [2, 3]
}

func ExampleStripReward() {
	fmt.Printf("%q\n", rollout.StripReward("State:\n#_P_# (reward: -0.1)\n"))
	// Output: "State:\n#_P_#"
}
