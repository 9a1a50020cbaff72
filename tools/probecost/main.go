// Command probecost gives each answer of a predictions file the usage an
// LLM estimator would report for it: the prompt tokens of the probe's
// messages rendered in Qwen's chat template (<|im_start|>role\n…<|im_end|>\n,
// then <|im_start|>assistant\n), counted by the tokenizer; as cached, the
// tokens it shares from the start with the previous probe of the same
// rollout (an estimator with prefix caching has read them); and the
// completion tokens of the answer. eval then reports the early stop net of
// that cost.
//
//	go run ./tools/probecost -data out/eval/test.parquet -predictions baseline.jsonl -out baseline-usage.jsonl [-tokenizer SPEC]
//
// It prints the mean prompt tokens per probe and the cached share.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/internal/atomicfile"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

func main() {
	data := flag.String("data", "", "probe parquet `FILE`")
	preds := flag.String("predictions", "", "answers `FILE` (JSONL)")
	out := flag.String("out", "", "write the answers with usage to `FILE`")
	spec := flag.String("tokenizer", tokenizer.DefaultPath(), "tokenizer `SPEC`")
	flag.Parse()
	if err := run(*data, *preds, *out, *spec); err != nil {
		fmt.Fprintln(os.Stderr, "probecost:", err)
		os.Exit(1)
	}
}

func run(data, preds, out, spec string) error {
	if data == "" || preds == "" || out == "" {
		return errors.New("-data, -predictions and -out are required")
	}
	rows, err := dataset.ReadRL(data)
	if err != nil {
		return err
	}
	set, err := prediction.ReadFile(preds)
	if err != nil {
		return err
	}
	tok, err := tokenizer.Open(context.Background(), spec)
	if err != nil {
		return err
	}
	answered, stats := withUsage(tok, probeOrder(rows), set)
	if err := atomicfile.Write(out, func(w io.Writer) error { return prediction.Write(w, answered) }); err != nil {
		return err
	}
	fmt.Printf("%d probes: %.0f prompt tokens each on average, %.1f%% of them cached; %.1f completion tokens\n",
		len(answered), float64(stats.PromptTokens)/float64(len(answered)),
		100*float64(stats.CachedTokens)/float64(stats.PromptTokens), float64(stats.CompletionTokens)/float64(len(answered)))
	return nil
}

// probeOrder returns each probe once, grouped by rollout in order of first
// appearance and in probe order within it.
func probeOrder(rows []dataset.RLRow) []dataset.RLRow {
	seen := map[string]bool{}
	rank := map[string]int{}
	var out []dataset.RLRow
	for _, r := range rows {
		x := r.ExtraInfo
		if seen[x.CustomID] {
			continue
		}
		seen[x.CustomID] = true
		if _, ok := rank[x.TrajectoryID]; !ok {
			rank[x.TrajectoryID] = len(rank)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b dataset.RLRow) int {
		return cmp.Or(cmp.Compare(rank[a.ExtraInfo.TrajectoryID], rank[b.ExtraInfo.TrajectoryID]),
			cmp.Compare(a.ExtraInfo.ProbeAfterTurn, b.ExtraInfo.ProbeAfterTurn))
	})
	return out
}

// withUsage returns the answers of set to rows, each with its usage.
func withUsage(tok *tokenizer.Tokenizer, rows []dataset.RLRow, set *prediction.Set) ([]prediction.Prediction, prediction.Stats) {
	var out []prediction.Prediction
	var stats prediction.Stats
	var prev []int
	prevTraj := ""
	for _, r := range rows {
		ids := tok.Encode(chat(r.Prompt))
		if r.ExtraInfo.TrajectoryID != prevTraj {
			prev = nil
		}
		cached := commonPrefix(ids, prev)
		prev, prevTraj = ids, r.ExtraInfo.TrajectoryID
		p, ok := set.Answer(r.ExtraInfo.CustomID)
		if !ok {
			continue
		}
		p.Usage = &prediction.Usage{PromptTokens: int64(len(ids)), CachedTokens: int64(cached), CompletionTokens: int64(tok.Count(p.Response))}
		stats.PromptTokens += p.Usage.PromptTokens
		stats.CachedTokens += p.Usage.CachedTokens
		stats.CompletionTokens += p.Usage.CompletionTokens
		out = append(out, p)
	}
	return out, stats
}

// chat renders messages in Qwen's chat template, ready for the answer.
func chat(msgs []rollout.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
