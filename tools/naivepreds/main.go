// Command naivepreds answers the probes of an eval or RL parquet file with
// the README's naive heuristic baseline and writes them as a predictions
// file for `bagen-data eval --predictions`: impossible once tokens_used
// exceeds 60% of the budget, else the interval [0.7, 1.3] × m × max(2, p),
// where m is the mean of per_turn_tokens over the p completed turns (or
// tokens_used before the first turn), bounds truncated to integers.
//
//	go run ./tools/naivepreds -data out/eval/test.parquet -out baseline.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"bagen-data/dataset"
	"bagen-data/internal/atomicfile"
)

func main() {
	data := flag.String("data", "", "eval or RL parquet file (required)")
	out := flag.String("out", "", "predictions file to write (required)")
	flag.Parse()
	if *data == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "naivepreds: want -data FILE -out FILE")
		os.Exit(2)
	}
	rows, err := dataset.ReadRL(*data)
	if err == nil {
		err = atomicfile.Write(*out, func(w io.Writer) error { return write(w, rows) })
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "naivepreds: %v\n", err)
		os.Exit(1)
	}
}

func write(w io.Writer, rows []dataset.RLRow) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, r := range rows {
		line := struct {
			CustomID string `json:"custom_id"`
			Response string `json:"response"`
		}{r.ExtraInfo.CustomID, answer(r.ExtraInfo)}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// answer is the heuristic's answer to one probe.
func answer(x dataset.ExtraInfo) string {
	if float64(x.TokensUsed) > 0.6*float64(x.Budget) {
		return "<answer>impossible</answer>"
	}
	p := len(x.PerTurnTokens)
	m := float64(x.TokensUsed)
	if p > 0 {
		sum := int64(0)
		for _, t := range x.PerTurnTokens {
			sum += t.InputTokens + t.OutputTokens
		}
		m = float64(sum) / float64(p)
	}
	k := float64(max(2, p))
	return fmt.Sprintf("<answer>[%d, %d]</answer>", int64(0.7*m*k), int64(1.3*m*k))
}
