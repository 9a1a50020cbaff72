package probes_test

import (
	"fmt"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// ExampleParseProbe reads back the numbers a Sokoban probe after two turns
// states: the estimation prompt is the last user message, as build renders
// it.
func ExampleParseProbe() {
	turns := []probes.TurnTokens{{In: 120, Out: 30}, {In: 80, Out: 25}}
	msgs := []rollout.Message{
		{Role: "system", Content: probes.SokobanSystem},
		{Role: "user", Content: "Grid 0"}, {Role: "assistant", Content: "<answer>Up</answer>"},
		{Role: "user", Content: "Grid 1"}, {Role: "assistant", Content: "<answer>Left</answer>"},
		{Role: "user", Content: probes.Tasks["sokoban"].ProbeText(turns, 2, 2500, false)},
	}
	st, err := probes.ParseProbe(msgs)
	fmt.Println(st.Task, st.Turns, st.Budget, err)

	_, err = probes.ParseProbe([]rollout.Message{{Role: "user", Content: "How long will this take?"}})
	fmt.Println(err)
	// Output:
	// sokoban [{120 30} {80 25}] 2500 <nil>
	// messages[0].content: not a budget probe of a known task: no estimation prompt of searchr1, sokoban, swebench, warehouse ends the message (want "Based on the provided" … filled by the renderer)
}
