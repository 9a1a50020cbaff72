package rollout

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func stringSource(name, text string) Source {
	return Source{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
}

func TestTasks(t *testing.T) {
	rec := func(id, task string) string {
		return `{"custom_id":"` + id + `","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}],"metadata":{"success":true` + task + "}}\n"
	}
	srcs := []Source{
		stringSource("a.jsonl", rec("1", `,"task":"searchr1"`)+rec("2", `,"task":"sokoban"`)),
		stringSource("b.jsonl", rec("3", "")),
		stringSource("c.jsonl", "not json\n"),
		stringSource("d.jsonl", rec("4", `,"task":"sokoban"`)),
		stringSource("e.jsonl", rec("5", `,"task":"searchr1"`)),
		stringSource("f.jsonl", rec("6", `,"task":7`)),
	}
	seen, err := Tasks(context.Background(), srcs)
	if err != nil {
		t.Fatal(err)
	}
	got := (&MixedTasksError{Seen: seen}).Error()
	if want := "inputs mix tasks: a.jsonl:1 says searchr1, d.jsonl:1 says sokoban; build each task on its own"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// The task survives convert's canonical JSONL.
	var tr Trajectory
	Scan(context.Background(), srcs[0], func(r Record) error { tr, err = Decode(r); return errStop })
	line, _ := MarshalCanonical(tr)
	if !strings.Contains(string(line), `"task":"searchr1"`) {
		t.Errorf("canonical line %s lacks the task", line)
	}
}

// A trajectory pretty-printed over several lines is read, each object at
// the line it starts on; in a directory, JSON that is no trajectory is
// skipped and recorded, and named in the error when given directly.
func TestMultiLineAndSkipped(t *testing.T) {
	dir := t.TempDir()
	one := "{\n  \"custom_id\": \"a\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"x\"},\n    {\"role\": \"assistant\", \"content\": \"y\"}\n  ]\n}\n"
	two := strings.Replace(one, `"a"`, `"b"`, 1)
	files := map[string]string{
		"one.json":            one + two,
		"config.json":         "{\n  \"lr\": 0.1\n}\n",
		"manifest.json":       `{"tool":"bagen-data","inputs":[]}` + "\n",
		"sub/report.json":     `{"resolved_ids":["x"]}`,
		"sub/broken.jsonl":    `{"custom_id":"c","messages":[]}` + "\n",
		"sub/.hidden.jsonl.x": "ignored by name",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	skips := &Skips{}
	srcs, err := (&Options{Skipped: skips}).Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var errs []string
	for _, src := range srcs {
		err := Scan(context.Background(), src, func(r Record) error {
			tr, err := Decode(r)
			if err != nil {
				return err
			}
			got = append(got, tr.ID+"@"+tr.Pos.String()[len(dir)+1:])
			return nil
		})
		if err != nil {
			errs = append(errs, err.Error()[len(dir)+1:])
		}
	}
	if want := "[a@one.json:1 b@one.json:8]"; fmt.Sprint(got) != want {
		t.Errorf("read %v, want %s", got, want)
	}
	if want := "[sub/broken.jsonl:1: messages: missing or empty]"; fmt.Sprint(errs) != want {
		t.Errorf("errors %v, want %s", errs, want)
	}
	var rel []string
	for _, f := range skips.Files() {
		rel = append(rel, f[len(dir)+1:])
	}
	if want := "[config.json manifest.json sub/report.json]"; fmt.Sprint(rel) != want {
		t.Errorf("skipped %v, want %s", rel, want)
	}
	// Named directly, the config is an error that names it.
	err = Scan(context.Background(), FileSource(filepath.Join(dir, "config.json")), func(r Record) error { _, err := Decode(r); return err })
	if want := filepath.Join(dir, "config.json") + ":1: custom_id: missing"; err == nil || err.Error() != want {
		t.Errorf("config.json given directly: %v, want %s", err, want)
	}
}
