package main

import (
	"testing"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/internal/testenv"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

func TestChat(t *testing.T) {
	got := chat([]rollout.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}})
	want := "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCommonPrefix(t *testing.T) {
	for _, tc := range []struct {
		a, b []int
		want int
	}{{[]int{1, 2, 3}, []int{1, 2, 4}, 2}, {[]int{1, 2}, []int{1, 2, 3}, 2}, {[]int{5}, nil, 0}, {nil, nil, 0}} {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("commonPrefix(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestWithUsage: a probe's cached tokens are the prefix it shares with
// the previous probe of its trajectory, none for a trajectory's first.
func TestWithUsage(t *testing.T) {
	tok, err := tokenizer.Load(tokenizer.DefaultPath())
	testenv.Need(t, "Qwen's tokenizer", err)
	row := func(traj, id, user string) dataset.RLRow {
		return dataset.RLRow{Prompt: []rollout.Message{{Role: "system", Content: "Solve it."}, {Role: "user", Content: user}},
			ExtraInfo: dataset.ExtraInfo{TrajectoryID: traj, CustomID: id}}
	}
	rows := []dataset.RLRow{row("a", "a1", "turn one"), row("a", "a2", "turn one then two"), row("b", "b1", "turn one")}
	set, err := prediction.NewSet([]prediction.Prediction{{CustomID: "a1", Response: "<answer>impossible</answer>"},
		{CustomID: "a2", Response: "<answer>[1, 2]</answer>"}, {CustomID: "b1", Response: "x"}}, "p")
	if err != nil {
		t.Fatal(err)
	}
	preds, stats := withUsage(tok, rows, set)
	var prompt, cached, completion int64
	for i, p := range preds {
		ids := tok.Encode(chat(rows[i].Prompt))
		want := int64(0)
		if i == 1 {
			want = int64(commonPrefix(ids, tok.Encode(chat(rows[0].Prompt))))
			if want == 0 || want >= int64(len(ids)) {
				t.Fatalf("a2 shares %d of %d tokens with a1: the rows do not test a cached prefix", want, len(ids))
			}
		}
		if p.Usage.PromptTokens != int64(len(ids)) || p.Usage.CachedTokens != want || p.Usage.CompletionTokens != int64(len(tok.Encode(p.Response))) {
			t.Errorf("%s: usage %+v, want %d prompt, %d cached", p.CustomID, *p.Usage, len(ids), want)
		}
		prompt, cached, completion = prompt+p.Usage.PromptTokens, cached+p.Usage.CachedTokens, completion+p.Usage.CompletionTokens
	}
	if len(preds) != 3 || stats.PromptTokens != prompt || stats.CachedTokens != cached || stats.CompletionTokens != completion {
		t.Errorf("%d answers, stats %+v; want 3 and the sums %d, %d, %d", len(preds), stats, prompt, cached, completion)
	}
}
