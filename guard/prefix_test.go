package guard

import (
	"context"
	"strings"
	"testing"

	"bagen-data/probes"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

// TestProbePrefixReuse measures, on the repo's recorded runs, how much of
// each live probe repeats the previous probe of its session as a prefix
// (what an estimator with prefix caching serves from its cache), in Qwen
// tokens of the rendered messages (role, content). The paper's prompt
// already puts what changes last: probe k+1 starts with every message of
// probe k but its question, which the new turn replaces. The test checks
// that layout on every probe and reports the share:
//
//	go test ./guard/ -run TestProbePrefixReuse -v
func TestProbePrefixReuse(t *testing.T) {
	tok, err := tokenizer.Load(tokenizer.DefaultPath())
	if err != nil {
		t.Fatalf("%v: run `make tokenizer` first", err)
	}
	srcs, err := (&rollout.Options{}).Expand([]string{"../probes/testdata/replay/swebench.jsonl", "../rollout/testdata/sessions",
		"../rollout/testdata/mini2", "../rollout/testdata/openhands/trajectory.json", "../rollout/testdata/inspect"})
	if err != nil {
		t.Fatal(err)
	}
	task := probes.Tasks["swebench"]
	rs, err := probes.ReadReplays(context.Background(), srcs, probes.ReplayOptions{System: task.System, Counter: tok})
	if err != nil {
		t.Fatal(err)
	}
	var shared, total, question, probesN int64
	for _, r := range rs {
		var prev []rollout.Message
		for k := 1; k <= r.Turns(); k++ {
			cur := renderAfter(task, r, k)
			if prev != nil {
				n := len(prev) - 1
				if len(cur) < n || !equalMessages(prev[:n], cur[:n]) {
					t.Errorf("%s: probe %d does not start with probe %d's dialogue", r.Traj.ID, k, k-1)
				}
				a, b := flatten(prev), flatten(cur)
				shared += int64(tok.Count(b[:commonPrefix(a, b)]))
				total += int64(tok.Count(b))
				question += int64(tok.Count(cur[len(cur)-1].Content))
				probesN++
			}
			prev = cur
		}
	}
	if total == 0 {
		t.Fatal("no probe follows another")
	}
	t.Logf("%d runs, %d probes after a first: %d of %d tokens (%.1f%%) repeat the previous probe's prefix; "+
		"the question (usage text and instructions, last) is %d tokens (%.1f%%)",
		len(rs), probesN, shared, total, 100*float64(shared)/float64(total), question, 100*float64(question)/float64(total))
}

// renderAfter is the live probe after turn k, as the guard renders it
// then (Render shows the usage as known after turn k).
func renderAfter(task probes.Task, r probes.Replay, k int) []rollout.Message {
	chat := task.Render(r.Traj, r.Acc, probes.Probe{After: k}, 100000, true)
	out := make([]rollout.Message, len(chat))
	for i, c := range chat {
		out[i] = rollout.Message{Role: c.Role, Content: c.Content}
	}
	return out
}

func equalMessages(a, b []rollout.Message) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// flatten is a prompt as one text: each message's role and content.
func flatten(msgs []rollout.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + "\n" + m.Content + "\n")
	}
	return b.String()
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
