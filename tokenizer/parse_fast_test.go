package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/testenv"
)

// sameAsReadModel checks readModelFast against readModel on data: when the
// fast reader takes a file, encoding/json reads the same model from it.
// It reports whether the fast reader took it.
func sameAsReadModel(t *testing.T, data []byte) bool {
	t.Helper()
	fast, ok := readModelFast(data, "f")
	if !ok {
		return false
	}
	slow, err := readModel(data, "f")
	if err != nil {
		t.Fatalf("the fast reader took a file readModel rejects (%v):\n%.300s", err, data)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the fast reader's model differs from readModel's on:\n%.300s", data)
	}
	return true
}

func TestReadModelFastMatches(t *testing.T) {
	marshal := func(tree map[string]any) []byte {
		b, err := json.Marshal(tree)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mini := string(marshal(miniJSON()))
	strMerges := miniJSON()
	at(strMerges, "model")["merges"] = []any{"Ġ t", "h e", "Ġt he"}
	escaped := miniJSON()
	at(escaped, "model")["vocab"].(map[string]any)["a\"\\/\u00e9\U0001F600"] = 400
	at(escaped, "model")["merges"] = []any{[]any{"a\"\\", "/"}, []any{"h", "e"}}
	noMerges := miniJSON()
	at(noMerges, "model")["merges"] = []any{}
	for name, tc := range map[string]struct {
		data string
		fast bool // the fast reader takes it
	}{
		"mini":                 {mini, true},
		"merges as strings":    {string(marshal(strMerges)), true},
		"escapes":              {string(marshal(escaped)), true},
		"no merges":            {string(marshal(noMerges)), true},
		"escaped in the file":  {strings.Replace(mini, `"he":257`, `"h\u0065":257`, 1), true},
		"key case":             {strings.Replace(mini, `"model":`, `"Model":`, 1), false},
		"model key twice":      {strings.Replace(mini, `"model":`, `"model":{},"model":`, 1), false},
		"float id":             {strings.Replace(mini, `"he":257`, `"he":257.0`, 1), false},
		"string id":            {strings.Replace(mini, `"he":257`, `"he":"257"`, 1), false},
		"trailing data":        {mini + " {}", false},
		"not JSON":             {mini[:len(mini)-1], false},
		"invalid UTF-8":        {strings.Replace(mini, `"he":257`, "\"h\xff\":257", 1), false},
		"lone surrogate":       {strings.Replace(mini, `"he":257`, `"h\ud800":257`, 1), true}, // U+FFFD, as encoding/json
		"merge of three":       {strings.Replace(mini, `["h","e"]`, `["h","e","x"]`, 1), false},
		"mixed merges":         {strings.Replace(mini, `["h","e"]`, `"h e"`, 1), false},
		"pre-tokenizer absent": {strings.Replace(mini, `"pre_tokenizer":`, `"pre_tokenizerx":`, 1), false},
	} {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(mini, `"he":257`) || !strings.Contains(mini, `["h","e"]`) {
				t.Fatal("the mutations no longer apply to miniJSON")
			}
			if got := sameAsReadModel(t, []byte(tc.data)); got != tc.fast {
				t.Errorf("fast reader took it: %v, want %v", got, tc.fast)
			}
		})
	}
}

// Qwen's own file: the fast reader takes it, gives readModel's model, and
// loads it in well under half the time.
func TestReadModelFastQwen(t *testing.T) {
	data, err := os.ReadFile(DefaultPath())
	if err != nil {
		testenv.Need(t, "Qwen's tokenizer", fmt.Errorf("%w (make tokenizer)", err))
	}
	if !sameAsReadModel(t, data) {
		t.Fatal("the fast reader declined Qwen's tokenizer.json")
	}
	best := func(f func()) time.Duration {
		b := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			f()
			b = min(b, time.Since(start))
		}
		return b
	}
	fast := best(func() { readModelFast(data, "") })
	slow := best(func() { readModel(data, "") })
	t.Logf("Qwen's tokenizer.json read in %v (encoding/json: %v)", fast, slow)
}

func FuzzReadModelFast(f *testing.F) {
	b, _ := json.Marshal(miniJSON())
	f.Add(b)
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a"]}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a\u0041":1,"aA":2},"merges":[["a","A"]]},"pre_tokenizer":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsReadModel(t, data)
	})
}

func BenchmarkReadModel(b *testing.B) {
	data, err := os.ReadFile(DefaultPath())
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(data)))
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			readModelFast(data, "")
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			readModel(data, "")
		}
	})
}

// BenchmarkLoadQwen is a command's start: reading and building Qwen's
// tokenizer from its file.
func BenchmarkLoadQwen(b *testing.B) {
	if _, err := os.Stat(DefaultPath()); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := Load(DefaultPath()); err != nil {
			b.Fatal(err)
		}
	}
}
