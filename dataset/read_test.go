package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"bagen-data/rollout"
)

// writeFile writes rows of any type as a parquet file and returns its path.
func writeFile[T any](t *testing.T, rows []T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.parquet")
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadChecksSchema(t *testing.T) {
	type foreign struct {
		Question string `parquet:"question"`
		Answer   int64  `parquet:"answer"`
	}
	type mistypedLabel struct {
		DataSource  string            `parquet:"data_source"`
		Prompt      []rollout.Message `parquet:"prompt,list"`
		Ability     string            `parquet:"ability"`
		RewardModel RewardModel       `parquet:"reward_model"`
		ExtraInfo   ExtraInfo         `parquet:"extra_info"`
		Label       int64             `parquet:"label"`
	}
	sft := writeFile(t, []SFTRow{{CustomID: "a_probe_after_turn_1"}})
	rl := writeFile(t, []RLRow{{Label: "impossible"}})
	tests := []struct {
		name, path string
		read       func(string) error
		want       string
	}{
		{"sft as rl", sft, readRL, sft + ": is an SFT file (messages column), want RL or eval file"},
		{"rl as sft", rl, readSFT, rl + ": is an RL or eval file (prompt column), want SFT file"},
		{"foreign as rl", writeFile(t, []foreign{{"q", 1}}), readRL, ": not an RL or eval file: column data_source missing (want string); column prompt missing (want list<struct<role string, content string>>); column ability missing (want string); column reward_model missing (want struct<style string, ground_truth string>); column extra_info missing"},
		{"mistyped label", writeFile(t, []mistypedLabel{{Label: 3}}), readRL, ": not an RL or eval file: column label: want string, got int64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read(tt.path)
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("got %v, want an error wrapping ErrSchema", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
	if got, err := ReadRL(rl); err != nil || len(got) != 1 || got[0].Label != "impossible" {
		t.Errorf("ReadRL(rl) = %v, %v; want the one row", got, err)
	}
}

func readRL(p string) error  { _, err := ReadRL(p); return err }
func readSFT(p string) error { _, err := ReadSFT(p); return err }

func TestReadManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	eval, ok := m.Splits.ByName("eval")
	rl, _ := m.Splits.ByName("rl")
	if c := m.Config; c.Width != "pct30" || c.Labels != "paper" || c.Budget != 0 || !ok || eval.Rows.Possible != 110 || eval.Rows.Impossible != 138 || rl.Duplicates != 532 {
		t.Errorf("got %+v", m)
	}
	if _, ok := m.Splits.ByName("probes"); ok {
		t.Errorf("ByName(probes): want no such split")
	}
	for _, tt := range []struct{ in, want string }{
		{`{"config": {"width": 30}}`, "config.width: want string, got JSON number"},
		{`{"splits": {"eval": {"rows": 3}}}`, "splits.eval.rows: want dataset.ClassCounts, got JSON number"},
		{`{"config": `, "unexpected end of JSON input"},
	} {
		if _, err := ReadManifest([]byte(tt.in)); err == nil || err.Error() != tt.want {
			t.Errorf("ReadManifest(%s) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func FuzzReadManifest(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "manifest.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"splits": {"sft": null, "rl": {"rows": {"possible": -1}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := ReadManifest(b); (err == nil) != (m != nil) {
			t.Fatalf("ReadManifest(%q) = %v, %v", b, m, err)
		}
	})
}
