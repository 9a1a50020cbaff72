package rollout

import (
	"path/filepath"
	"testing"
)

func TestSuccessFiles(t *testing.T) {
	dir := write(t, map[string]string{
		"a.json":    `{"s1": true, "s2": false}`,
		"b.json":    `{"s2": true}`,
		"null.json": `{"s1": null}`,
		"num.json":  `{"s1": 1}`,
		"arr.json":  `[true]`,
	})
	p := func(n string) string { return filepath.Join(dir, n) }
	r, err := LoadSuccessFiles(nil, []string{p("a.json")})
	if err != nil || r.LenSuccess() != 2 || len(r.Files()) != 1 {
		t.Fatalf("a.json: %v, %d verdicts, %d files", err, r.LenSuccess(), len(r.Files()))
	}
	for _, tc := range []struct {
		id, instance string
		success      bool
		outcome      Outcome
	}{
		{"s1", "", true, OutcomeResults},
		{"s2", "s1", false, OutcomeResults}, // the id, not the instance, is joined
		{"s3", "s1", false, ""},
	} {
		tr := Trajectory{ID: tc.id, Extra: Extra{Instance: tc.instance}}
		r.join(&tr)
		if tr.Success != tc.success || tr.Outcome != tc.outcome {
			t.Errorf("%s: success %v outcome %q, want %v %q", tc.id, tr.Success, tr.Outcome, tc.success, tc.outcome)
		}
	}
	bad := map[string]string{
		"b.json":    p("b.json") + `: s2: true here, false in ` + p("a.json"),
		"null.json": p("null.json") + `: s1: want true or false, got null`,
		"num.json":  p("num.json") + `: s1: want true or false, got 1`,
		"arr.json":  p("arr.json") + `: want a JSON object mapping ids to true or false: want an object, got JSON array`,
	}
	for name, want := range bad {
		_, err := LoadSuccessFiles(nil, []string{p("a.json"), p(name)})
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}
