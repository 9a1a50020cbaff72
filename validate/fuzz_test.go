package validate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	eval := m.Splits["eval"]
	if m.Width != "pct30" || m.Labels != "paper" || m.Budget != 0 || !eval.Known || eval.Possible != 110 || eval.Impossible != 138 || m.Splits["rl"].Duplicates != 532 {
		t.Errorf("got %+v", m)
	}
	// Mistyped fields are unknown, not errors.
	m, err = parseManifest([]byte(`{"config": {"width": 30, "budget": "2500"}, "splits": {"eval": {"rows": 3}}}`))
	if err != nil || m.Width != "" || m.Budget != 0 || m.Splits["eval"].Known {
		t.Errorf("mistyped: got %+v, %v", m, err)
	}
	if _, err := parseManifest([]byte(`{"config": `)); err == nil {
		t.Errorf("truncated JSON: got no error")
	}
}

func FuzzParseManifest(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "manifest.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"splits": {"sft": null, "rl": {"rows": {"possible": -1}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err == nil && m.Splits == nil {
			t.Fatalf("nil splits for %q", b)
		}
	})
}

func FuzzProbeAfter(f *testing.F) {
	for _, s := range []string{"traj_0_probe_after_turn_3", "a_probe_after_turn_", "x_probe_after_turn_-1", "y_probe_after_turn_+2", "z_probe_after_turn_007", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, ok := probeAfter(id)
		if !ok {
			return
		}
		// The id ends in the suffix and p's digits (leading zeros aside).
		tail := strings.TrimLeft(id[strings.LastIndex(id, "_probe_after_turn_")+len("_probe_after_turn_"):], "0")
		if p < 0 || (tail != strconv.FormatInt(p, 10) && !(p == 0 && tail == "")) {
			t.Fatalf("probeAfter(%q) = %d", id, p)
		}
	})
}
