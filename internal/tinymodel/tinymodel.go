// Package tinymodel writes a tiny random-weight Qwen2 model in the Hugging
// Face safetensors layout, for `ollama create` to convert and serve on a CPU
// in tests.
//
// The model has Qwen2's architecture and Qwen's real tokenizer, so Ollama
// treats it exactly like a Qwen2.5 checkpoint (same converter, same runner,
// same chat format); only the sizes are small (hidden size 64, two layers)
// and the weights are seeded noise. Its generations are meaningless, but its
// generate, chat and embed endpoints answer in milliseconds.
package tinymodel

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"bagen-data/internal/atomicfile"
)

// Config sizes the model. The zero value of every field takes the default
// noted beside it.
type Config struct {
	Hidden       int    // hidden size; 0 means 64
	Layers       int    // decoder layers; 0 means 2
	Heads        int    // attention heads; 0 means 4
	KVHeads      int    // key/value heads; 0 means 2
	Intermediate int    // MLP width; 0 means 128
	Vocab        int    // vocabulary rows; 0 means 151936, Qwen2.5's padded size
	Context      int    // max_position_embeddings; 0 means 32768
	Seed         uint64 // weight seed; 0 is a valid seed
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Hidden, 64)
	def(&c.Layers, 2)
	def(&c.Heads, 4)
	def(&c.KVHeads, 2)
	def(&c.Intermediate, 128)
	def(&c.Vocab, 151936)
	def(&c.Context, 32768)
	return c
}

func (c Config) validate() error {
	var bad []string
	for _, f := range []struct {
		name string
		v    int
	}{{"Hidden", c.Hidden}, {"Layers", c.Layers}, {"Heads", c.Heads}, {"KVHeads", c.KVHeads},
		{"Intermediate", c.Intermediate}, {"Vocab", c.Vocab}, {"Context", c.Context}} {
		if f.v < 0 {
			bad = append(bad, fmt.Sprintf("%s: want >= 0, got %d", f.name, f.v))
		}
	}
	if c.Heads > 0 && c.Hidden%c.Heads != 0 {
		bad = append(bad, fmt.Sprintf("Hidden: %d is not a multiple of Heads %d", c.Hidden, c.Heads))
	}
	if c.KVHeads > 0 && c.Heads%c.KVHeads != 0 {
		bad = append(bad, fmt.Sprintf("KVHeads: Heads %d is not a multiple of %d", c.Heads, c.KVHeads))
	}
	if len(bad) > 0 {
		return fmt.Errorf("tinymodel: config: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Special token ids of Qwen's tokenizer.
const (
	endOfText = 151643 // <|endoftext|>
	imEnd     = 151645 // <|im_end|>
)

// Template is the Ollama chat template of Qwen's <|im_start|> format,
// written into the Modelfile.
const Template = `{{- if .Messages }}
{{- if .System }}<|im_start|>system
{{ .System }}<|im_end|>
{{ end }}
{{- range $i, $_ := .Messages }}
{{- $last := eq (len (slice $.Messages $i)) 1 -}}
{{- if eq .Role "user" }}<|im_start|>user
{{ .Content }}<|im_end|>
{{ else if eq .Role "assistant" }}<|im_start|>assistant
{{ .Content }}{{ if not $last }}<|im_end|>
{{ end }}
{{- end }}
{{- if and (ne .Role "assistant") $last }}<|im_start|>assistant
{{ end }}
{{- end }}
{{- else }}
{{- if .System }}<|im_start|>system
{{ .System }}<|im_end|>
{{ end }}{{ if .Prompt }}<|im_start|>user
{{ .Prompt }}<|im_end|>
{{ end }}<|im_start|>assistant
{{ end }}{{ .Response }}{{ if .Response }}<|im_end|>{{ end }}`

// Modelfile is the Modelfile written beside the weights. num_predict caps a
// random model's generations, which rarely reach <|im_end|>, so that a
// request without its own limit still answers quickly. One thread: for a
// model this small, synchronising threads costs more than it saves, badly
// so on a busy machine.
const Modelfile = "FROM .\nTEMPLATE \"\"\"" + Template + "\"\"\"\n" +
	"PARAMETER stop <|im_end|>\nPARAMETER stop <|endoftext|>\nPARAMETER num_predict 16\nPARAMETER num_thread 1\n"

// Write writes config.json, model.safetensors, tokenizer.json (copied from
// tokenizerPath, Qwen's tokenizer.json), tokenizer_config.json,
// generation_config.json and Modelfile into dir, creating it. Equal configs
// write byte-identical files.
func Write(dir string, c Config, tokenizerPath string) error {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tinymodel: %w", err)
	}
	tok, err := os.ReadFile(tokenizerPath)
	if err != nil {
		return fmt.Errorf("tinymodel: tokenizer: %w", err)
	}
	files := []struct {
		name string
		data func(io.Writer) error
	}{
		{"config.json", jsonFile(configJSON(c))},
		{"tokenizer_config.json", jsonFile(tokenizerConfig)},
		{"generation_config.json", jsonFile(generationConfig)},
		{"tokenizer.json", bytesFile(tok)},
		{"Modelfile", bytesFile([]byte(Modelfile))},
		{"model.safetensors", func(w io.Writer) error { return writeSafetensors(w, tensors(c)) }},
	}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("tinymodel: %w", err)
		}
	}
	return nil
}

func configJSON(c Config) map[string]any {
	return map[string]any{
		"architectures":           []string{"Qwen2ForCausalLM"},
		"model_type":              "qwen2",
		"hidden_act":              "silu",
		"hidden_size":             c.Hidden,
		"intermediate_size":       c.Intermediate,
		"num_hidden_layers":       c.Layers,
		"num_attention_heads":     c.Heads,
		"num_key_value_heads":     c.KVHeads,
		"max_position_embeddings": c.Context,
		"rope_theta":              1000000.0,
		"rms_norm_eps":            1e-6,
		"vocab_size":              c.Vocab,
		"tie_word_embeddings":     true,
		"torch_dtype":             "bfloat16",
		"bos_token_id":            endOfText,
		"eos_token_id":            imEnd,
	}
}

var tokenizerConfig = map[string]any{
	"add_bos_token": false,
	"bos_token":     nil,
	"eos_token":     "<|im_end|>",
	"pad_token":     "<|endoftext|>",
}

var generationConfig = map[string]any{
	"bos_token_id": endOfText,
	"eos_token_id": []int{imEnd, endOfText},
}

func jsonFile(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
}

func bytesFile(b []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(b); return err }
}

// tensor is one named weight in Hugging Face layout (shape [out, in]).
type tensor struct {
	name  string
	shape []int
	data  []float32
}

// tensors returns the model's weights: N(0, 0.02) matrices and biases, unit
// norms, drawn in name order from one PCG stream seeded by c.Seed.
func tensors(c Config) []tensor {
	hd := c.Hidden / c.Heads
	shapes := map[string][]int{
		"model.embed_tokens.weight": {c.Vocab, c.Hidden},
		"model.norm.weight":         {c.Hidden},
	}
	for i := range c.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		shapes[p+"input_layernorm.weight"] = []int{c.Hidden}
		shapes[p+"post_attention_layernorm.weight"] = []int{c.Hidden}
		shapes[p+"self_attn.q_proj.weight"] = []int{c.Heads * hd, c.Hidden}
		shapes[p+"self_attn.q_proj.bias"] = []int{c.Heads * hd}
		shapes[p+"self_attn.k_proj.weight"] = []int{c.KVHeads * hd, c.Hidden}
		shapes[p+"self_attn.k_proj.bias"] = []int{c.KVHeads * hd}
		shapes[p+"self_attn.v_proj.weight"] = []int{c.KVHeads * hd, c.Hidden}
		shapes[p+"self_attn.v_proj.bias"] = []int{c.KVHeads * hd}
		shapes[p+"self_attn.o_proj.weight"] = []int{c.Hidden, c.Heads * hd}
		shapes[p+"mlp.gate_proj.weight"] = []int{c.Intermediate, c.Hidden}
		shapes[p+"mlp.up_proj.weight"] = []int{c.Intermediate, c.Hidden}
		shapes[p+"mlp.down_proj.weight"] = []int{c.Hidden, c.Intermediate}
	}
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	rng := rand.New(rand.NewPCG(c.Seed, 0x7469_6e79_7177_656e)) // "tinyqwen"
	out := make([]tensor, 0, len(names))
	for _, n := range names {
		t := tensor{name: n, shape: shapes[n], data: make([]float32, product(shapes[n]))}
		for i := range t.data {
			if strings.HasSuffix(n, "norm.weight") {
				t.data[i] = 1
			} else {
				t.data[i] = float32(rng.NormFloat64() * 0.02)
			}
		}
		out = append(out, t)
	}
	return out
}

func product(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// bf16 rounds f to bfloat16 (round to nearest even), the dtype of Qwen's
// published checkpoints.
func bf16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return 0x7fc0
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// writeSafetensors writes the safetensors format: an 8-byte little-endian
// header length, a JSON header padded with spaces to 8 bytes, then the
// tensors' bytes in header order.
func writeSafetensors(w io.Writer, ts []tensor) error {
	type meta struct {
		Dtype   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Offsets [2]int `json:"data_offsets"`
	}
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	off := 0
	for _, t := range ts {
		n := 2 * len(t.data)
		header[t.name] = meta{Dtype: "BF16", Shape: t.shape, Offsets: [2]int{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(len(h))); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, t := range ts {
		buf := make([]byte, 2*len(t.data))
		for i, v := range t.data {
			binary.LittleEndian.PutUint16(buf[2*i:], bf16(v))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
