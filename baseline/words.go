package baseline

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

var wordsGroup = &group{
	name: GroupWords,
	features: []Feature{
		{"word_score", GroupWords, "naive-Bayes log-odds of failure over the words of the last observation and the last answer, cross-fitted in training"},
	},
	// The score needs the fitted Bayes model: extract fills it.
}

// Bayes is a Bernoulli naive-Bayes score of failure over a probe's words,
// counting only the words present (absent words carry no evidence, so that
// a long vocabulary does not swamp the sum).
type Bayes struct {
	// Prior is log P(failed) − log P(successful) over the training probes.
	Prior float64 `json:"prior"`
	// Weights is log P(w | failed) − log P(w | successful) per word, with
	// add-one smoothing, for words in at least minDocs probes.
	Weights map[string]float64 `json:"weights"`
}

// Bayes's vocabulary limits: a word must be in minDocs probes, and at most
// maxVocab words (the most frequent, ties by spelling) are kept.
const (
	minDocs  = 3
	maxVocab = 3000
)

// Score is the sum of the weights of the words of ws, without the prior.
func (b *Bayes) Score(ws []string) float64 {
	if b == nil {
		return 0
	}
	s := 0.0
	for _, w := range ws {
		s += b.Weights[w]
	}
	return s
}

// fitBayes counts the words of docs (each deduplicated) by label.
func fitBayes(docs [][]string, failed []bool) *Bayes {
	type count struct{ fail, succ int }
	counts := map[string]*count{}
	nf, ns := 0, 0
	for i, d := range docs {
		if failed[i] {
			nf++
		} else {
			ns++
		}
		for _, w := range d {
			c := counts[w]
			if c == nil {
				c = &count{}
				counts[w] = c
			}
			if failed[i] {
				c.fail++
			} else {
				c.succ++
			}
		}
	}
	vocab := make([]string, 0, len(counts))
	for w, c := range counts {
		if c.fail+c.succ >= minDocs {
			vocab = append(vocab, w)
		}
	}
	slices.SortFunc(vocab, func(a, b string) int {
		ca, cb := counts[a], counts[b]
		if d := (cb.fail + cb.succ) - (ca.fail + ca.succ); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	vocab = vocab[:min(len(vocab), maxVocab)]
	b := &Bayes{Prior: math.Log(float64(nf+1) / float64(ns+1)), Weights: make(map[string]float64, len(vocab))}
	for _, w := range vocab {
		c := counts[w]
		b.Weights[w] = math.Log(float64(c.fail+1)/float64(nf+2)) - math.Log(float64(c.succ+1)/float64(ns+2))
	}
	return b
}

// words is the deduplicated, sorted word list of v's last observation
// (prefixed "o:") and last answer ("a:"): runs of letters, lower-cased,
// two letters or more.
func words(v *View) []string {
	var out []string
	out = appendWords(out, "o:", v.LastObservation())
	out = appendWords(out, "a:", v.LastAnswer())
	slices.Sort(out)
	return slices.Compact(out)
}

func appendWords(out []string, prefix, s string) []string {
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start >= 2 {
			out = append(out, prefix+strings.ToLower(s[start:end]))
		}
		start = -1
	}
	for i, r := range s {
		if unicode.IsLetter(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return out
}
