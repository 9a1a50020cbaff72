package baseline

import (
	"testing"
)

// FuzzFeatures feeds arbitrary dialogue around a real estimation prompt
// to the view and every feature group: no input may panic, and every
// feature is a finite number.
func FuzzFeatures(f *testing.F) {
	f.Add("You have 10 turns and may take at most 3 actions per turn.\n"+sokobanObs, "<answer>Left || Up</answer>", sokobanObs)
	f.Add("Question: Which river flows through Ulm?", "<answer>search[river Ulm]</answer>", `<information>Doc 1(Title: "Danube") The Danube.</information>`)
	f.Add("State:\nP√X\n", "<answer>Right||Right</answer>", "State:\n#S#\n")
	f.Fuzz(func(t *testing.T, first, answer, obs string) {
		msgs := probeChat(t, []string{answer, answer})
		msgs[1].Content, msgs[3].Content = first, obs
		v, err := NewView(msgs)
		if err != nil {
			return
		}
		for _, task := range []string{"sokoban", "searchr1"} {
			gs := layout(task, Groups)
			for i, x := range extract(v, gs, &Bayes{Weights: map[string]float64{"o:state": 1}}) {
				if x != x || x > 1e300 || x < -1e300 {
					t.Fatalf("%s feature %s = %v", task, featureList(gs)[i].Name, x)
				}
			}
		}
	})
}

// FuzzRoom plays arbitrary moves in arbitrary rooms.
func FuzzRoom(f *testing.F) {
	f.Add(sokobanObs, "Left || Up || Up")
	f.Add("State:\n#X#\n#P#\n#O#\n", "Up || Down")
	f.Fuzz(func(t *testing.T, obs, moves string) {
		r, ok := parseRoom(obs)
		if !ok {
			return
		}
		n := r.NumBoxes()
		played, blocked, _ := play(r, moves)
		if blocked > played || r.NumBoxes() != n {
			t.Fatalf("played %d, blocked %d, boxes %d → %d", played, blocked, n, r.NumBoxes())
		}
		if off, dist, player, cornered := measure(r); off < 0 || dist < 0 || player < 0 || cornered > off {
			t.Fatalf("measure: %d %d %d %d", off, dist, player, cornered)
		}
	})
}
