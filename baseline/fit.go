package baseline

import (
	"math"
)

// Scale standardises features: (x − Mean) / Std, Std 1 for a constant.
type Scale struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

// fitScale measures the columns of xs.
func fitScale(xs [][]float64) Scale {
	d := len(xs[0])
	s := Scale{Mean: make([]float64, d), Std: make([]float64, d)}
	for _, x := range xs {
		for j, v := range x {
			s.Mean[j] += v
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= float64(len(xs))
	}
	for _, x := range xs {
		for j, v := range x {
			s.Std[j] += (v - s.Mean[j]) * (v - s.Mean[j])
		}
	}
	for j := range s.Std {
		s.Std[j] = math.Sqrt(s.Std[j] / float64(len(xs)))
		if s.Std[j] < 1e-9 {
			s.Std[j] = 1
		}
	}
	return s
}

// apply returns x standardised with a leading 1 for the intercept.
func (s Scale) apply(x []float64) []float64 {
	z := make([]float64, len(x)+1)
	z[0] = 1
	for j, v := range x {
		z[j+1] = (v - s.Mean[j]) / s.Std[j]
	}
	return z
}

// Linear is a linear function of standardised features, intercept first.
type Linear []float64

// at returns w · z.
func (w Linear) at(z []float64) float64 {
	s := 0.0
	for j, v := range z {
		s += w[j] * v
	}
	return s
}

// ridge fits weighted least squares of ys on zs with penalty lambda on
// every weight but the intercept.
func ridge(zs [][]float64, ys, wts []float64, lambda float64) Linear {
	d := len(zs[0])
	a := make([][]float64, d)
	for i := range a {
		a[i] = make([]float64, d)
	}
	b := make([]float64, d)
	for i, z := range zs {
		for j := range d {
			b[j] += wts[i] * z[j] * ys[i]
			for k := range d {
				a[j][k] += wts[i] * z[j] * z[k]
			}
		}
	}
	for j := 1; j < d; j++ {
		a[j][j] += lambda
	}
	return solve(a, b)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// solve solves a x = b for a symmetric positive definite a by Cholesky
// decomposition; a and b are overwritten.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	for j := range n {
		s := a[j][j]
		for k := range j {
			s -= a[j][k] * a[j][k]
		}
		if s <= 1e-12 {
			s = 1e-12
		}
		a[j][j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := a[i][j]
			for k := range j {
				s -= a[i][k] * a[j][k]
			}
			a[i][j] = s / a[j][j]
		}
	}
	y := make([]float64, n)
	for i := range n {
		s := b[i]
		for k := range i {
			s -= a[i][k] * y[k]
		}
		y[i] = s / a[i][i]
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= a[k][i] * x[k]
		}
		x[i] = s / a[i][i]
	}
	return x
}
