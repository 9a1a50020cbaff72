package rollout

import (
	"context"
	"io"
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
