package eval

import (
	"math"
	"slices"
)

// PercentileLinear returns the q-th percentile (0 ≤ q ≤ 100) of xs by linear
// interpolation between closest ranks — NumPy's default method "linear",
// Hyndman & Fan type 7: with the values sorted ascending as x[0..n−1] and
// h = (n−1)·q/100, the result is x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
// NaN values are ignored; the result is NaN when no value is left. xs is not
// modified.
func PercentileLinear(xs []float64, q float64) float64 {
	if q < 0 || q > 100 || math.IsNaN(q) {
		panic("eval: percentile out of [0, 100]")
	}
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	return linearSorted(s, q)
}

// linearSorted is PercentileLinear on sorted, NaN-free, non-empty s.
func linearSorted(s []float64, q float64) float64 {
	h := float64(len(s)-1) * q / 100
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
