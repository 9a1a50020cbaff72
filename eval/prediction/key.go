package prediction

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"bagen-data/rollout"
)

// Sampler is a Client that says how it samples (temperature, length cap,
// seed, vendor parameters): what, besides the model and the prompt, makes
// two requests ask the same thing. *OpenAI and *Ollama implement it.
type Sampler interface {
	Sampling() string
}

// RequestKey identifies the request that answers a probe: the SHA-256 (hex)
// of the model, the client's sampling settings (Sampler; "" for a client
// that does not say) and the prompt's messages. An answer in a ledger is
// reused only for a probe with the same key: the same custom_id in a file
// built otherwise (another budget, width or task) is another question.
func RequestKey(c Client, model string, msgs []rollout.Message) string {
	sampling := ""
	if s, ok := c.(Sampler); ok {
		sampling = s.Sampling()
	}
	b, err := json.Marshal(struct {
		Model    string            `json:"model"`
		Sampling string            `json:"sampling"`
		Messages []rollout.Message `json:"messages"`
	}{model, sampling, msgs})
	if err != nil {
		panic("prediction: request key: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// RequestKeys maps each probe's custom_id to its RequestKey (the first
// probe of a custom_id wins, as in Ask).
func RequestKeys(c Client, model string, probes []Probe) map[string]string {
	keys := make(map[string]string, len(probes))
	for _, p := range probes {
		if _, ok := keys[p.CustomID]; !ok {
			keys[p.CustomID] = RequestKey(c, model, p.Messages)
		}
	}
	return keys
}

// Sampling describes the request settings besides model and messages: the
// temperature, the length cap, the seed and the Extra body, as JSON.
func (o *OpenAI) Sampling() string {
	b, err := json.Marshal(struct {
		Temperature float64        `json:"temperature"`
		MaxTokens   int            `json:"max_tokens"`
		Seed        *int64         `json:"seed,omitempty"`
		Extra       map[string]any `json:"extra,omitempty"`
	}{o.Temperature, positive(o.MaxTokens, DefaultMaxTokens), o.Seed, o.Extra})
	if err != nil {
		return "unencodable extra body"
	}
	return string(b)
}

// Sampling describes the request options: temperature, num_predict and
// seed, as JSON.
func (o *Ollama) Sampling() string {
	b, _ := json.Marshal(map[string]any{"temperature": o.Temperature, "num_predict": positive(o.NumPredict, DefaultMaxTokens), "seed": o.Seed})
	return string(b)
}
