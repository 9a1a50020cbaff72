package grpo_test

import (
	"fmt"

	"bagen-data/grpo"
	"bagen-data/reward"
)

// An action decodes to the answer text an LLM would write; the reward
// package scores that text.
func ExampleSpace_Answer() {
	var s grpo.Space // 40 log-spaced centres over [1, budget], widths 5–50%
	a := grpo.Action{Center: 30, Width: 3}
	answer := s.Answer(a, 2500)
	fmt.Println(answer)
	fmt.Printf("%.4f\n", reward.Score(answer, reward.Truth{Remaining: 409, Possible: true}))
	fmt.Println(s.Answer(grpo.Action{Impossible: true}, 2500))
	// Output:
	// <answer>[287, 534]</answer>
	// 0.7130
	// <answer>impossible</answer>
}

// A group of sampled answers to one impossible probe: only the one that
// said "impossible" earned 0.2.
func ExampleAdvantages() {
	adv, zero := grpo.Advantages([]float64{0.2, 0, 0, 0})
	fmt.Printf("%.4f %v\n", adv, zero)
	_, zero = grpo.Advantages([]float64{0.2, 0.2, 0.2, 0.2})
	fmt.Println("all equal, no signal:", zero)
	// Output:
	// [1.5000 -0.5000 -0.5000 -0.5000] false
	// all equal, no signal: true
}
