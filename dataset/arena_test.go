package dataset

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/rollout"
)

// Rows are rendered from spill records read into arena blocks that are
// reused once a chunk is written: on a build of many chunks, every row's
// messages must still be its own trajectory's, in order.
func TestBuildRowsKeepTheirTextsAcrossReusedArenas(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", benchRollouts(1500))
	cfg := testConfig()
	cfg.Workers = 2
	out := filepath.Join(dir, "out")
	m, err := Build(context.Background(), []rollout.Source{src}, out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	check := func(file, id string, msgs []rollout.Message) {
		t.Helper()
		var room int
		if _, err := fmt.Sscanf(id, "b%06d", &room); err != nil {
			t.Fatalf("%s: custom_id %q", file, id)
		}
		turn := 0
		for i, msg := range msgs {
			switch {
			case msg.Role == "user" && strings.HasPrefix(msg.Content, "Room "):
				turn++
				want := fmt.Sprintf("Room %d, turn %d. State:\n", room, turn)
				if !strings.HasPrefix(msg.Content, want) {
					t.Fatalf("%s row %s message %d: starts %.40q, want %q", file, id, i, msg.Content, want)
				}
			case msg.Role == "assistant" && i < len(msgs)-1:
				if !strings.HasPrefix(msg.Content, "<think>the box is left") || !strings.HasSuffix(msg.Content, "</think><answer>Up</answer>") {
					t.Fatalf("%s row %s message %d: %.60q is no reply of the input", file, id, i, msg.Content)
				}
			}
		}
		if turn == 0 {
			t.Fatalf("%s row %s shows no turn", file, id)
		}
	}
	sft, err := ReadSFT(filepath.Join(out, SFTFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sft {
		check(SFTFile, strings.Split(r.CustomID, ProbeSuffix)[0], r.Messages)
	}
	rl, err := ReadRL(filepath.Join(out, RLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rl {
		check(RLFile, r.ExtraInfo.TrajectoryID, r.Prompt)
	}
	if rows := m.Splits.SFT.Rows.Total() + m.Splits.RL.Rows.Total(); len(sft)+len(rl) != rows || rows < 4*chunkRows {
		t.Fatalf("checked %d rows, the manifest has %d; want at least %d to reuse blocks", len(sft)+len(rl), rows, 4*chunkRows)
	}
}
