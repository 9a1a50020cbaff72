package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/tokenizer"
)

// miniLog is rollout/testdata/mini2/astropy__astropy-12907, the README's
// one log counted both ways.
const miniLog = "../rollout/testdata/mini2/astropy__astropy-12907"

// miniUsage reads what the log itself records, independently of the
// readers: each assistant message's prompt and completion tokens, and the
// texts of the two messages that open its turns (the task, then the first
// tool output).
func miniUsage(t *testing.T) (prompt, completion []int64, users []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(miniLog, "astropy__astropy-12907.traj.json"))
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
			Extra   struct {
				Response struct {
					Usage struct {
						Prompt     int64 `json:"prompt_tokens"`
						Completion int64 `json:"completion_tokens"`
					} `json:"usage"`
				} `json:"response"`
			} `json:"extra"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	for i, m := range log.Messages {
		if m.Role == "assistant" {
			prompt = append(prompt, m.Extra.Response.Usage.Prompt)
			completion = append(completion, m.Extra.Response.Usage.Completion)
			users = append(users, log.Messages[i-1].Content)
		}
	}
	return prompt, completion, users
}

// TestBuildAccountingOnAgentLog builds the README's log with each
// accounting and checks the rows against the log's numbers: under the
// message rule the preset's system prompt and the two opening messages
// counted by the tokenizer (41 + 9 + 60 + 26 + 75 = 211); under the replay
// the first request whole and the second's growth less the first output
// (900, then 1010 − 900 − 60 = 50: a total of the last request plus its
// output, 1085), as probes counts it. The manifest and every row record
// the accounting.
func TestBuildAccountingOnAgentLog(t *testing.T) {
	tok, err := tokenizer.Load(tokenizerPath(t))
	if err != nil {
		t.Fatal(err)
	}
	prompt, out, users := miniUsage(t)
	if len(prompt) != 2 {
		t.Fatalf("the log has %d calls, want 2", len(prompt))
	}
	sys := int64(tok.Count(probes.Tasks["swebench"].System))
	user := []int64{int64(tok.Count(users[0])), int64(tok.Count(users[1]))}
	for _, c := range []struct {
		kind      probes.AccountingKind
		in0, in1  int64
		sys       int64
		wantTotal int64
	}{
		{probes.AccountingMessage, user[0], user[1], sys, 211},
		{probes.AccountingReplay, prompt[0], prompt[1] - prompt[0] - out[0], 0, 1085},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			total := c.sys + c.in0 + out[0] + c.in1 + out[1]
			if total != c.wantTotal {
				t.Fatalf("the log's numbers give %d, the README says %d", total, c.wantTotal)
			}
			dir := t.TempDir()
			if _, err := run(t, "build", "-q", "--task", "swebench", "-i", miniLog, "--split", "0/0/100", "--budget", "5000",
				"--tokenizer", tokenizerPath(t), "--accounting", string(c.kind), "--out", dir); err != nil {
				t.Fatal(err)
			}
			rows, err := dataset.ReadRL(filepath.Join(dir, dataset.EvalFile))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 {
				t.Fatalf("%d rows, want 2", len(rows))
			}
			e0, e1 := rows[0].ExtraInfo, rows[1].ExtraInfo
			if e0.TokensUsed != c.sys+c.in0 || e0.RemainingTokens != total-c.sys-c.in0 {
				t.Errorf("p=0: used %d remaining %d, want %d and %d", e0.TokensUsed, e0.RemainingTokens, c.sys+c.in0, total-c.sys-c.in0)
			}
			if got := e1.PerTurnTokens; len(got) != 1 || got[0].InputTokens != c.in0 || got[0].OutputTokens != out[0] || e1.TokensUsed+e1.RemainingTokens != total {
				t.Errorf("p=1: turns %v, used+remaining %d; want [{1 %d %d}] and %d", got, e1.TokensUsed+e1.RemainingTokens, c.in0, out[0], total)
			}
			for i, r := range rows {
				if r.ExtraInfo.Accounting != c.kind {
					t.Errorf("row %d: accounting %q, want %q", i, r.ExtraInfo.Accounting, c.kind)
				}
			}
			if k, err := dataset.ReadAccounting(dir); err != nil || k != c.kind {
				t.Errorf("manifest accounting %q (%v), want %q", k, err, c.kind)
			}
		})
	}
}

// TestBuildReplayMatchesProbes: a build with --accounting replay and the
// probes command give the same usage, used and remaining tokens for every
// probe both place (k ≥ 1), on every agent log of rollout/testdata.
func TestBuildReplayMatchesProbes(t *testing.T) {
	in := []string{"../rollout/testdata/mini0", "../rollout/testdata/mini1", "../rollout/testdata/mini2",
		"../rollout/testdata/openhands", "../rollout/testdata/inspect", "../rollout/testdata/harbor"}
	dir := t.TempDir()
	common := []string{"-q", "--task", "swebench", "--budget", "5000", "--tokenizer", tokenizerPath(t), "--prefix-ids"}
	for _, i := range in {
		common = append(common, "-i", i)
	}
	args := append([]string{"build", "--accounting", "replay", "--split", "0/0/100", "--min-remaining", "0", "--out", filepath.Join(dir, "b")}, common...)
	if _, err := run(t, args...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"probes", "--max-samples", "0", "--out", filepath.Join(dir, "p.parquet")}, common...)...); err != nil {
		t.Fatal(err)
	}
	built, err := dataset.ReadRL(filepath.Join(dir, "b", dataset.EvalFile))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]dataset.ExtraInfo{}
	for _, r := range built {
		byID[r.ExtraInfo.CustomID] = r.ExtraInfo
	}
	probed, err := dataset.ReadRL(filepath.Join(dir, "p.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(probed) < 5 {
		t.Fatalf("%d probes, want the logs' prefixes", len(probed))
	}
	for _, p := range probed {
		b, ok := byID[p.ExtraInfo.CustomID]
		switch {
		case !ok:
			t.Errorf("%s: probed, not built", p.ExtraInfo.CustomID)
		case b.TokensUsed != p.ExtraInfo.TokensUsed || b.RemainingTokens != p.ExtraInfo.RemainingTokens ||
			b.IsPossible != p.ExtraInfo.IsPossible || !slices.Equal(b.PerTurnTokens, p.ExtraInfo.PerTurnTokens):
			t.Errorf("%s: build %+v, probes %+v", p.ExtraInfo.CustomID, b, p.ExtraInfo)
		case b.Accounting != probes.AccountingReplay || p.ExtraInfo.Accounting != probes.AccountingReplay:
			t.Errorf("%s: accounting build %q, probes %q, want replay", p.ExtraInfo.CustomID, b.Accounting, p.ExtraInfo.Accounting)
		}
	}
}

func TestBuildAccountingFlag(t *testing.T) {
	_, err := run(t, "build", "--accounting", "api")
	if err == nil || !strings.Contains(err.Error(), `accounting "api": want message`) {
		t.Errorf("--accounting api: %v, want an error naming the flag's values", err)
	}
}
