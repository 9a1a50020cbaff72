package grpo

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Head is the policy head: a one-hidden-layer tanh MLP over the features
// with three softmax outputs — kind (interval, impossible), centre bin and
// width — whose product is the factored action distribution
//
//	π(a|x) = p_kind(k|x) · [k = interval] · p_centre(c|x) · p_width(w|x).
//
// Weights are row-major [in][out] float64s. A Head is not safe for
// concurrent mutation; its methods that only read may run concurrently.
type Head struct {
	In, Hidden, Bins, Widths int

	W1, B1 []float64 // In×Hidden, Hidden
	WK, BK []float64 // Hidden×2, 2 (index 0 interval, 1 impossible)
	WC, BC []float64 // Hidden×Bins, Bins
	WW, BW []float64 // Hidden×Widths, Widths
}

// kind indices in the kind softmax.
const (
	kindInterval   = 0
	kindImpossible = 1
)

// NewHead returns a head with Glorot-uniform hidden weights, output
// weights uniform in ±0.01 and zero biases, drawn from rng, so a new head
// is close to the uniform policy.
func NewHead(in, hidden, bins, widths int, rng *rand.Rand) *Head {
	h := &Head{In: in, Hidden: hidden, Bins: bins, Widths: widths,
		W1: make([]float64, in*hidden), B1: make([]float64, hidden),
		WK: make([]float64, hidden*2), BK: make([]float64, 2),
		WC: make([]float64, hidden*bins), BC: make([]float64, bins),
		WW: make([]float64, hidden*widths), BW: make([]float64, widths),
	}
	uniform(h.W1, math.Sqrt(6/float64(in+hidden)), rng)
	for _, w := range [][]float64{h.WK, h.WC, h.WW} {
		uniform(w, 0.01, rng)
	}
	return h
}

func uniform(w []float64, a float64, rng *rand.Rand) {
	for i := range w {
		w[i] = a * (2*rng.Float64() - 1)
	}
}

// Params returns the weight slices in a fixed order (W1, B1, WK, BK, WC,
// BC, WW, BW); the optimiser and checkpoints rely on it.
func (h *Head) Params() [][]float64 {
	return [][]float64{h.W1, h.B1, h.WK, h.BK, h.WC, h.BC, h.WW, h.BW}
}

// Clone returns a deep copy of h.
func (h *Head) Clone() *Head {
	c := *h
	p := c.Params()
	for i, s := range p {
		p[i] = slices.Clone(s)
	}
	c.W1, c.B1, c.WK, c.BK, c.WC, c.BC, c.WW, c.BW = p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	return &c
}

// Dist is the head's output for one input: log-probabilities of the kind,
// centre and width choices.
type Dist struct {
	Kind   [2]float64
	Centre []float64
	Width  []float64
}

// Forward computes the distribution for feature vector x.
func (h *Head) Forward(x []float64) Dist {
	hid := make([]float64, h.Hidden)
	copy(hid, h.B1)
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		row := h.W1[i*h.Hidden : (i+1)*h.Hidden]
		for j, w := range row {
			hid[j] += xi * w
		}
	}
	for j := range hid {
		hid[j] = math.Tanh(hid[j])
	}
	var d Dist
	copy(d.Kind[:], logSoftmax(affine(hid, h.WK, h.BK)))
	d.Centre = logSoftmax(affine(hid, h.WC, h.BC))
	d.Width = logSoftmax(affine(hid, h.WW, h.BW))
	return d
}

// affine returns b + x·W for W row-major len(x)×len(b).
func affine(x, w, b []float64) []float64 {
	out := slices.Clone(b)
	n := len(b)
	for i, xi := range x {
		row := w[i*n : (i+1)*n]
		for j, wij := range row {
			out[j] += xi * wij
		}
	}
	return out
}

// logSoftmax returns z − logΣexp(z), computed stably, in place.
func logSoftmax(z []float64) []float64 {
	m := slices.Max(z)
	var s float64
	for _, v := range z {
		s += math.Exp(v - m)
	}
	lse := m + math.Log(s)
	for i := range z {
		z[i] -= lse
	}
	return z
}

// LogProb is log π(a) under d.
func (d Dist) LogProb(a Action) float64 {
	if a.Impossible {
		return d.Kind[kindImpossible]
	}
	return d.Kind[kindInterval] + d.Centre[a.Center] + d.Width[a.Width]
}

// Sample draws an action from d with rng (kind, then centre and width for
// an interval).
func (d Dist) Sample(rng *rand.Rand) Action {
	if draw(d.Kind[:], rng) == kindImpossible {
		return Action{Impossible: true}
	}
	return Action{Center: draw(d.Centre, rng), Width: draw(d.Width, rng)}
}

// Greedy returns the most likely action: the argmax of each factor (ties
// to the lower index).
func (d Dist) Greedy() Action {
	if argmax(d.Kind[:]) == kindImpossible {
		return Action{Impossible: true}
	}
	return Action{Center: argmax(d.Centre), Width: argmax(d.Width)}
}

// draw samples an index from log-probabilities by inverting the CDF; the
// last index absorbs rounding.
func draw(logp []float64, rng *rand.Rand) int {
	u := rng.Float64()
	var c float64
	for i, lp := range logp {
		c += math.Exp(lp)
		if u < c {
			return i
		}
	}
	return len(logp) - 1
}

func argmax(xs []float64) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}
