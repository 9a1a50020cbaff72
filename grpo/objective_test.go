package grpo

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestAdvantages(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rewards []float64
		want    []float64
		zero    bool
	}{
		// mean 0.9, unbiased std 0.9·√2 = 1.2727922061357855:
		// 0.9 / (1.2727922061357855 + 1e-6).
		{"two", []float64{1.8, 0}, []float64{0.7071062256314286, -0.7071062256314286}, false},
		// mean 0.5, std √(1/3) = 0.5773502691896257.
		{"four", []float64{1, 1, 0, 0}, []float64{0.8660239037870368, 0.8660239037870368, -0.8660239037870368, -0.8660239037870368}, false},
		// an impossible probe answered right once in four: mean 0.05, std 0.1.
		{"one of four", []float64{0.2, 0, 0, 0}, []float64{1.4999850001499984, -0.4999950000499994, -0.4999950000499994, -0.4999950000499994}, false},
		{"all equal", []float64{0.2, 0.2, 0.2}, []float64{0, 0, 0}, true},
		{"all zero", []float64{0, 0}, []float64{0, 0}, true},
		{"single", []float64{1.8}, []float64{0}, true},
		{"empty", nil, []float64{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.rewards)
			got, zero := Advantages(in)
			if !slices.Equal(got, tc.want) || zero != tc.zero {
				t.Errorf("Advantages(%v) = %v, %v; want %v, %v", tc.rewards, got, zero, tc.want, tc.zero)
			}
			if !slices.Equal(in, tc.rewards) {
				t.Errorf("Advantages modified its input: %v, want %v", in, tc.rewards)
			}
		})
	}
}

func TestAdvantagesZeroMean(t *testing.T) {
	adv, _ := Advantages([]float64{0.3, 1.8, 0, 0.9, 0.45})
	var s float64
	for _, a := range adv {
		s += a
	}
	if math.Abs(s) > 1e-12 {
		t.Errorf("sum of advantages %v, want 0", s)
	}
}

func TestSurrogate(t *testing.T) {
	for _, tc := range []struct {
		ratio, adv float64
		want       float64
		clipped    bool
	}{
		{1, 2, 2, false},
		{1.1, 2, 2.2, false},
		{1.5, 2, 2.4, true},   // A > 0: capped at (1+ε)A
		{0.5, 2, 1, false},    // A > 0, ratio below 1−ε: the unclipped term is smaller
		{0.5, -2, -1.6, true}, // A < 0: floored at (1−ε)A
		{1.5, -2, -3, false},  // A < 0, ratio above 1+ε: unclipped and smaller
		{0.9, -1, -0.9, false},
		{1.3, 0, 0, false},
	} {
		t.Run(fmt.Sprintf("ratio %v adv %v", tc.ratio, tc.adv), func(t *testing.T) {
			got, clipped := Surrogate(tc.ratio, tc.adv, 0.2)
			if math.Abs(got-tc.want) > 1e-15 || clipped != tc.clipped {
				t.Errorf("Surrogate(%v, %v, 0.2) = %v, %v; want %v, %v", tc.ratio, tc.adv, got, clipped, tc.want, tc.clipped)
			}
		})
	}
}

func TestK3(t *testing.T) {
	for _, tc := range []struct {
		logp, ref float64
		want      float64
	}{
		{-1, -1, 0},
		{math.Log(0.5), math.Log(0.25), 0.5 - math.Log(0.5) - 1}, // ratio ref/π = 0.5: 0.1931471805599453
		{math.Log(0.25), math.Log(0.5), 2 - math.Log(2) - 1},     // ratio 2: 0.3068528194400547
		{-3, -1, math.Exp(2) - 2 - 1},                            // 4.38905609893065
	} {
		got := K3(tc.logp, tc.ref)
		if math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("K3(%v, %v) = %v, want %v", tc.logp, tc.ref, got, tc.want)
		}
		if got < 0 {
			t.Errorf("K3(%v, %v) = %v < 0", tc.logp, tc.ref, got)
		}
	}
}

// TestK3Unbiased checks that the mean k3 over exact expectation equals
// KL(π‖π_ref) for a two-point distribution.
func TestK3Unbiased(t *testing.T) {
	p, q := []float64{0.7, 0.3}, []float64{0.4, 0.6}
	var e, kl float64
	for i := range p {
		e += p[i] * K3(math.Log(p[i]), math.Log(q[i]))
		kl += p[i] * math.Log(p[i]/q[i])
	}
	if math.Abs(e-kl) > 1e-15 {
		t.Errorf("E_π[k3] = %v, want KL = %v", e, kl)
	}
}
