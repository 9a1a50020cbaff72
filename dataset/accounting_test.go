package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// withUsage writes n rollouts that record their API usage: trajectory i
// has T = 1 + i%3 turns; the system message is the Sokoban preset's (90
// tokens), every user message 100 tokens, every output 50; request k
// counts 400 + 200k input tokens, history included. Trajectory i succeeds
// unless i%4 == 0.
func withUsage(n int) []byte {
	var b bytes.Buffer
	sys := probes.Tasks["sokoban"].System
	for i := range n {
		msgs := []map[string]any{{"role": "system", "content": sys, "tokens": 90}}
		var api []map[string]any
		for k := range 1 + i%3 {
			msgs = append(msgs,
				map[string]any{"role": "user", "content": fmt.Sprintf("Grid %d of traj %d", k, i), "tokens": 100},
				map[string]any{"role": "assistant", "content": "<answer>Up</answer>", "tokens": 50})
			api = append(api, map[string]any{"input": 400 + 200*k, "output": 50})
		}
		line, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprintf("u%02d", i), "budget": 2500, "messages": msgs,
			"per_turn_api_tokens": api, "api_inputs": "request", "metadata": map[string]any{"success": i%4 != 0}})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// usageTruth is withUsage's used tokens before probe p and total of a
// T-turn trajectory under kind, from the definitions: the message rule
// counts sys = 90 apart and in_k = 100; the replay has sys = 0, in_0 = 400
// (the first request) and in_k = 200 − 50 = 150 (the request's growth less
// the previous output).
func usageTruth(kind probes.AccountingKind, p, T int64) (used, total int64) {
	if kind == probes.AccountingMessage {
		if p == 0 {
			return 90 + 100, 90 + 150*T
		}
		return 90 + 150*p, 90 + 150*T
	}
	if p == 0 {
		return 400, 450 + 200*(T-1)
	}
	return 450 + 200*(p-1), 450 + 200*(T-1)
}

func TestBuildAccounting(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "u.jsonl", withUsage(24))
	for _, kind := range []probes.AccountingKind{probes.AccountingUnknown, probes.AccountingMessage, probes.AccountingReplay} {
		t.Run(kind.String(), func(t *testing.T) {
			want := kind
			if kind == probes.AccountingUnknown {
				want = probes.AccountingMessage // the zero value is the paper's rule
			}
			cfg := testConfig()
			cfg.Accounting = kind
			out := filepath.Join(dir, kind.String())
			m, err := Build(context.Background(), []rollout.Source{src}, out, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Config.Accounting != want {
				t.Errorf("manifest accounting %q, want %q", m.Config.Accounting, want)
			}
			if k, err := ReadAccounting(out); k != want || err != nil {
				t.Errorf("ReadAccounting: %q, %v; want %q", k, err, want)
			}
			checkUsageRows(t, out, want)
		})
	}
}

// checkUsageRows checks every RL and eval row of a withUsage build against
// usageTruth, and the accounting of every row.
func checkUsageRows(t *testing.T, out string, kind probes.AccountingKind) {
	t.Helper()
	n := 0
	for _, f := range []string{RLFile, EvalFile} {
		rows, err := ReadRL(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			e := r.ExtraInfo
			used, total := usageTruth(kind, e.ProbeAfterTurn, e.TotalTurns)
			if e.TokensUsed != used || e.TokensUsed+e.RemainingTokens != total || e.Accounting != kind {
				t.Errorf("%s %s: used %d, total %d, accounting %q; want %d, %d, %q", f, e.CustomID, e.TokensUsed, e.TokensUsed+e.RemainingTokens, e.Accounting, used, total, kind)
			}
			n++
		}
		if k, err := AccountingOf(f, rows); k != kind || err != nil {
			t.Errorf("AccountingOf(%s) = %q, %v; want %q", f, k, err, kind)
		}
	}
	sft, err := ReadSFT(filepath.Join(out, SFTFile))
	if err != nil {
		t.Fatal(err)
	}
	if k, err := AccountingOf(SFTFile, sft); k != kind || err != nil || len(sft) == 0 {
		t.Errorf("AccountingOf(%s) of %d rows = %q, %v; want %q", SFTFile, len(sft), k, err, kind)
	}
	if n == 0 {
		t.Fatal("no RL or eval rows")
	}
}

// TestReplayAccountingForeignReader: DuckDB reads the accounting column of
// all three files of a replay build as parquet-go does.
func TestReplayAccountingForeignReader(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "u.jsonl", withUsage(12))
	cfg := testConfig()
	cfg.Accounting = probes.AccountingReplay
	out := filepath.Join(dir, "out")
	if _, err := Build(context.Background(), []rollout.Source{src}, out, cfg); err != nil {
		t.Fatal(err)
	}
	foreign := readForeign(t, filepath.Join(out, SFTFile), filepath.Join(out, RLFile), filepath.Join(out, EvalFile))
	for _, f := range []string{RLFile, EvalFile} {
		var theirs []RLRow
		if err := json.Unmarshal(foreign[filepath.Join(out, f)].Rows, &theirs); err != nil {
			t.Fatal(err)
		}
		for i, r := range theirs {
			if r.ExtraInfo.Accounting != probes.AccountingReplay {
				t.Errorf("%s row %d: DuckDB reads accounting %q, want replay", f, i, r.ExtraInfo.Accounting)
			}
		}
		if len(theirs) == 0 {
			t.Errorf("%s: DuckDB reads no rows", f)
		}
	}
	var sft []SFTRow
	if err := json.Unmarshal(foreign[filepath.Join(out, SFTFile)].Rows, &sft); err != nil {
		t.Fatal(err)
	}
	for i, r := range sft {
		if r.Accounting != probes.AccountingReplay {
			t.Errorf("sft row %d: DuckDB reads accounting %q, want replay", i, r.Accounting)
		}
	}
}

// legacySFTRow is an SFT row as build wrote it before the accounting
// column.
type legacySFTRow struct {
	Messages      []rollout.Message `parquet:"messages,list"`
	PerTurnTokens []TurnTokens      `parquet:"per_turn_tokens,list"`
	CustomID      string            `parquet:"custom_id"`
	Budget        int64             `parquet:"budget"`
}

// TestReadWithoutAccounting: a file written before the column reads, its
// accounting unknown; validate's schema check sees the column as optional.
func TestReadWithoutAccounting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.parquet")
	rows := []legacySFTRow{{Messages: []rollout.Message{{Role: "user", Content: "u"}}, CustomID: "a_probe_after_turn_0", Budget: 10}}
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSFT(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Budget != 10 || got[0].Accounting != probes.AccountingUnknown {
		t.Errorf("read %+v, want the row with no accounting", got)
	}
	ms := Compare(SFTSchema, TypeOf(parquet.SchemaOf(legacySFTRow{})))
	if len(ms) != 1 || ms[0].Path != "accounting" || !ms[0].Missing || !ms[0].Optional || ms[0].Fatal() {
		t.Errorf("mismatches %+v, want accounting missing and optional", ms)
	}
}

func TestAccountingOf(t *testing.T) {
	rl := func(source string, k probes.AccountingKind) RLRow {
		return RLRow{DataSource: source, ExtraInfo: ExtraInfo{Accounting: k}}
	}
	msg, rep := probes.AccountingMessage, probes.AccountingReplay
	for _, c := range []struct {
		name string
		rows []RLRow
		want probes.AccountingKind
		err  string
	}{
		{"none", nil, probes.AccountingUnknown, ""},
		{"legacy", []RLRow{rl("budget_probe_sokoban", "")}, probes.AccountingUnknown, ""},
		{"one kind", []RLRow{rl("budget_probe_sokoban", rep), rl("budget_probe_sokoban", rep)}, rep, ""},
		{"warehouse skipped", []RLRow{rl("budget_probe_warehouse", ""), rl("budget_probe_swebench", rep)}, rep, ""},
		{"mixed", []RLRow{rl("budget_probe_sokoban", msg), rl("budget_probe_sokoban", rep)}, msg, "f: row 1: rows of different token accountings: replay, row 0 message"},
		{"half recorded", []RLRow{rl("budget_probe_sokoban", ""), rl("budget_probe_sokoban", msg)}, "", "f: row 1: rows of different token accountings: message, row 0 unknown"},
		{"bad", []RLRow{rl("budget_probe_sokoban", "api")}, "", `f: row 0: accounting "api": want message or replay`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := AccountingOf("f", c.rows)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Errorf("error %v, want %s", err, c.err)
				}
				if strings.Contains(c.err, "different") && !errors.Is(err, ErrMixedAccounting) {
					t.Errorf("%v does not wrap ErrMixedAccounting", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestReadAccounting(t *testing.T) {
	dir := t.TempDir()
	if k, err := ReadAccounting(dir); k != probes.AccountingUnknown || err != nil {
		t.Errorf("no manifest: %q, %v; want unknown and no error", k, err)
	}
	old, err := os.ReadFile(filepath.Join("testdata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) {
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(old)
	if k, err := ReadAccounting(dir); k != probes.AccountingUnknown || err != nil {
		t.Errorf("a manifest written before the field: %q, %v; want unknown and no error", k, err)
	}
	write([]byte(`{"config": {"accounting": "tokens"}}`))
	if _, err := ReadAccounting(dir); err == nil || !strings.Contains(err.Error(), `manifest.json: config.accounting "tokens"`) {
		t.Errorf("unknown kind: %v, want an error naming the field", err)
	}
	write([]byte(`{"config": {"accounting": 3}}`))
	if _, err := ReadAccounting(dir); err == nil || !strings.Contains(err.Error(), "config.accounting") {
		t.Errorf("mistyped: %v, want an error naming the field", err)
	}
}

func TestConfigRejectsUnknownAccounting(t *testing.T) {
	cfg := testConfig()
	cfg.Accounting = "api"
	var fe *FieldError
	if err := cfg.Validate(); !errors.As(err, &fe) || fe.Field != "Accounting" {
		t.Errorf("Validate: %v, want a FieldError naming Accounting", err)
	}
	if diff := cmp.Diff(`got "api", want message or replay`, fmt.Sprint(fe.Err)); diff != "" {
		t.Error(diff)
	}
}
