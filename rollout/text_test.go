package rollout

import (
	"strings"
	"testing"
)

func TestPathAt(t *testing.T) {
	const doc = `{"id":"t1","messages":[{"role":"user","content":"AAA"},{"role":"assistant","content":"BBB"}],"meta":{"tags":["x","CCC"],"n":1},"tail":"DDD"}`
	tests := []struct{ at, want string }{
		{`"t1"`, "id"},
		{"AAA", "messages[0].content"},
		{"BBB", "messages[1].content"},
		{`"assistant"`, "messages[1].role"},
		{"CCC", "meta.tags[1]"},
		{"DDD", "tail"},
	}
	for _, tt := range tests {
		off := strings.Index(doc, tt.at) + 1
		if got := pathAt([]byte(doc), off); got != tt.want {
			t.Errorf("byte %d (%s): got %q, want %q", off, tt.at, got, tt.want)
		}
	}
}
