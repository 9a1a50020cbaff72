package eval

import (
	"fmt"
	"io"
	"time"

	"bagen-data/eval/prediction"
)

// Spend is what the model's answers cost, as `eval --json` reports it.
type Spend struct {
	// Requests counts HTTP requests over every run that filled the
	// predictions file, retries included.
	Requests int `json:"requests"`
	// Answered and Failed count probes with an answer and probes whose
	// requests all failed.
	Answered int `json:"answered"`
	Failed   int `json:"failed"`
	// Tokens the server reported; reasoning tokens are part of completion
	// tokens, cached tokens (read from its prefix cache; absent when none)
	// part of prompt tokens.
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
	// Asked counts the probes this run asked and WallSeconds its wall time.
	Asked       int     `json:"asked"`
	WallSeconds float64 `json:"wall_seconds"`
	// Dollars is the tokens priced at PriceIn / PriceCached / PriceOut
	// dollars per million prompt / cached prompt / completion tokens
	// (PriceCached shown only when some tokens were cached); absent
	// without prices.
	PriceIn     float64  `json:"price_in_per_million,omitempty"`
	PriceCached *float64 `json:"price_cached_per_million,omitempty"`
	PriceOut    float64  `json:"price_out_per_million,omitempty"`
	Dollars     *float64 `json:"dollars,omitempty"`
}

// NewSpend combines the file's spend (every run that wrote it) with this
// run's: how many it asked and its wall time. The estimator's prices p
// give the dollar figure; all of them zero give none.
func NewSpend(file, run prediction.Stats, p prediction.Prices) Spend {
	s := Spend{
		Requests: file.Requests, Answered: file.Answered, Failed: file.Failed,
		PromptTokens: file.PromptTokens, CompletionTokens: file.CompletionTokens, ReasoningTokens: file.ReasoningTokens,
		CachedTokens: file.CachedTokens, Asked: run.Probes, WallSeconds: run.Wall.Seconds(), PriceIn: p.In, PriceOut: p.Out,
	}
	if p != (prediction.Prices{}) {
		d := file.Dollars(p)
		s.Dollars = &d
		if file.CachedTokens > 0 {
			s.PriceCached = &p.Cached
		}
	}
	return s
}

// WriteSpend prints s in two lines.
func WriteSpend(w io.Writer, s Spend) error {
	wall := time.Duration(s.WallSeconds * float64(time.Second)).Round(time.Millisecond)
	cached := ""
	if s.CachedTokens > 0 {
		cached = fmt.Sprintf(" (%d cached)", s.CachedTokens)
	}
	_, err := fmt.Fprintf(w, "spend: %d requests for %d answers, %d failed; tokens: %d prompt%s, %d completion (%d reasoning)\n",
		s.Requests, s.Answered, s.Failed, s.PromptTokens, cached, s.CompletionTokens, s.ReasoningTokens)
	if err != nil {
		return err
	}
	cost := "no --estimator-price-in/--estimator-price-out"
	switch {
	case s.Dollars != nil && s.PriceCached != nil:
		cost = fmt.Sprintf("$%.4f at $%g / $%g / $%g per million prompt / cached / completion tokens", *s.Dollars, s.PriceIn, *s.PriceCached, s.PriceOut)
	case s.Dollars != nil:
		cost = fmt.Sprintf("$%.4f at $%g / $%g per million prompt / completion tokens", *s.Dollars, s.PriceIn, s.PriceOut)
	}
	_, err = fmt.Fprintf(w, "this run: %d probes asked in %v; %s\n", s.Asked, wall, cost)
	return err
}
