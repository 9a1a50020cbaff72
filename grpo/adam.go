package grpo

import "math"

// Adam is the Adam optimiser (Kingma & Ba) with global-norm gradient
// clipping. Its state (moments and step count) is part of a checkpoint so
// that a resumed run continues exactly. Not safe for concurrent use.
type Adam struct {
	LR           float64
	Beta1, Beta2 float64
	Eps          float64
	// MaxNorm clips the gradient to this global L2 norm before the update
	// (verl's grad_clip); 0 disables clipping.
	MaxNorm float64
	T       int         // steps taken
	M, V    [][]float64 // first and second moments, shaped like the params
}

// NewAdam returns an optimiser for params with β1 = 0.9, β2 = 0.999,
// ε = 1e-8 and gradients clipped to norm 1.
func NewAdam(lr float64, params [][]float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxNorm: 1}
	for _, p := range params {
		a.M = append(a.M, make([]float64, len(p)))
		a.V = append(a.V, make([]float64, len(p)))
	}
	return a
}

// Step updates params in place from grads (same shapes) and returns the
// gradient norm before clipping.
func (a *Adam) Step(params, grads [][]float64) float64 {
	var ss float64
	for _, g := range grads {
		for _, v := range g {
			ss += v * v
		}
	}
	norm := math.Sqrt(ss)
	scale := 1.0
	if a.MaxNorm > 0 && norm > a.MaxNorm {
		scale = a.MaxNorm / norm
	}
	a.T++
	c1 := 1 - math.Pow(a.Beta1, float64(a.T))
	c2 := 1 - math.Pow(a.Beta2, float64(a.T))
	for i, p := range params {
		m, v := a.M[i], a.V[i]
		for j, g := range grads[i] {
			g *= scale
			m[j] = a.Beta1*m[j] + (1-a.Beta1)*g
			v[j] = a.Beta2*v[j] + (1-a.Beta2)*g*g
			p[j] -= a.LR * (m[j] / c1) / (math.Sqrt(v[j]/c2) + a.Eps)
		}
	}
	return norm
}
