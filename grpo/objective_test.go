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

func TestCenteredAdvantages(t *testing.T) {
	for _, tc := range []struct {
		rewards, want []float64
		uniform       bool
	}{
		{[]float64{1.8, 0}, []float64{0.9, -0.9}, false},
		{[]float64{0.2, 0, 0, 0}, []float64{0.15, -0.05, -0.05, -0.05}, false},
		{[]float64{0.2, 0.2}, []float64{0, 0}, true},
	} {
		in := slices.Clone(tc.rewards)
		got, u := CenteredAdvantages(in)
		if u != tc.uniform || !slices.EqualFunc(got, tc.want, func(a, b float64) bool { return math.Abs(a-b) < 1e-15 }) {
			t.Errorf("CenteredAdvantages(%v) = %v, %v; want %v, %v", tc.rewards, got, u, tc.want, tc.uniform)
		}
		if !slices.Equal(in, tc.rewards) {
			t.Errorf("CenteredAdvantages modified its input")
		}
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
		{4, -1, -3, true}, // A < 0, ratio far above 1+ε: the dual clip floors it at 3A
		{3.5, -0.5, -1.5, true},
		{2.9, -1, -2.9, false}, // below the dual-clip bound: ρA
	} {
		t.Run(fmt.Sprintf("ratio %v adv %v", tc.ratio, tc.adv), func(t *testing.T) {
			got, clipped := Surrogate(tc.ratio, tc.adv, 0.2)
			if math.Abs(got-tc.want) > 1e-15 || clipped != tc.clipped {
				t.Errorf("Surrogate(%v, %v, 0.2) = %v, %v; want %v, %v", tc.ratio, tc.adv, got, clipped, tc.want, tc.clipped)
			}
		})
	}
}

// TestSurrogateNoClip: ε = 0 means no clipping, not clipping everything
// (min(ρA, A)): ρA with its gradient, on both sides of 1 and past the
// dual-clip bound.
func TestSurrogateNoClip(t *testing.T) {
	for _, tc := range []struct{ ratio, adv float64 }{{1.5, 2}, {0.5, 2}, {0.5, -2}, {1.5, -2}, {4, -1}} {
		got, clipped := Surrogate(tc.ratio, tc.adv, 0)
		if got != tc.ratio*tc.adv || clipped {
			t.Errorf("Surrogate(%v, %v, 0) = %v, %v; want %v, false", tc.ratio, tc.adv, got, clipped, tc.ratio*tc.adv)
		}
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
		{-4, -1, MaxK3},                                          // e³ − 4 = 16.09: capped at 10 (verl's clamp)
		{0, -30, MaxK3},                                          // d = −30, clamped to −20: e⁻²⁰ + 19, capped
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

// objectiveBatch is a hand-computable batch on a head whose weights are 0
// and biases 0, so π is the same for every input: p(interval) =
// p(impossible) = ½, two centres and two widths at ½ each.
// log π(interval, c, w) = log ⅛ and log π(impossible) = log ½. Two groups
// of two:
//
//   - mixed, rewards {1.8, 0}, A = ±a with a = 0.9/(0.9·√2 + 1e-6):
//     s1 interval c0 w0 with ρ = 1.5 (clipped at 1.2, A > 0: no gradient),
//     s2 impossible with ρ = 1.1 (A < 0, unclipped); π_ref = π, k3 = 0;
//   - uniform, rewards {0.2, 0.2}, A = 0, ρ = 1: s3 impossible with
//     π_ref = ¼ (k3 = ln 2 − ½, dk3/dlog π = 1 − π_ref/π = ½), s4 interval
//     c1 w0 with π_ref = 2π (k3 = 1 − ln 2, dk3/dlog π = −1).
func objectiveBatch() (*Head, []group) {
	h := &Head{In: 1, Hidden: 1, Bins: 2, Widths: 2,
		W1: []float64{0}, B1: []float64{0}, WK: []float64{0, 0}, BK: []float64{0, 0},
		WC: []float64{0, 0}, BC: []float64{0, 0}, WW: []float64{0, 0}, BW: []float64{0, 0}}
	ex := Example{X: []float64{1}}
	in0, in1, imp := Action{Center: 0}, Action{Center: 1}, Action{Impossible: true}
	q, hf := math.Log(0.125), math.Log(0.5)
	return h, []group{
		{ex: ex, actions: []Action{in0, imp}, rewards: []float64{1.8, 0},
			old: []float64{q - math.Log(1.5), hf - math.Log(1.1)}, ref: []float64{q, hf}},
		{ex: ex, actions: []Action{imp, in1}, rewards: []float64{0.2, 0.2},
			old: []float64{hf, q}, ref: []float64{math.Log(0.25), math.Log(0.25)}},
	}
}

// TestObjectiveUniformGroup pins the loss and the bias gradients of the
// batch above, by hand: with the uniform group kept (verl), N = 4 and
//
//	L = −(1.2a − 1.1a)/4 + β(ln 2 − ½ + 1 − ln 2)/4 = −0.025a + β/8,
//	∂L/∂log π = (0, 1.1a/4, β/8, −β/4) for s1…s4,
//	∂L/∂BK = Σ ∂L/∂log π_i (onehot(kind_i) − ½) = (−0.1375a − 3β/16, +…),
//	∂L/∂BC = −β/4 · (onehot(c1) − ½) = (β/8, −β/8), ∂L/∂BW = −β/4 · (onehot(w0) − ½) = (−β/8, β/8);
//
// dropped (DAPO-style), N = 2, L = −0.05a, ∂L/∂BK = 0.55a·(−½, ½),
// ∂L/∂BC = ∂L/∂BW = 0.
func TestObjectiveUniformGroup(t *testing.T) {
	const beta = 0.1
	a := 0.9 / (0.9*math.Sqrt2 + AdvantageEps)
	for _, tc := range []struct {
		name          string
		drop          bool
		uniform       int
		samples       int
		loss          float64
		clipped       int
		bk0, bc0, bw0 float64
		wantLossText  string
	}{
		{"verl keeps it", false, 1, 4, -0.025*a + beta/8, 1, -0.1375*a - 3*beta/16, beta / 8, -beta / 8, "-0.0051776556407857124"},
		{"drop uniform groups", true, 1, 2, -0.05 * a, 1, -0.275 * a, 0, 0, "-0.035355311281571426"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, groups := objectiveBatch()
			kept, uniform := keep(groups, tc.drop, false)
			s := samplesOf(kept)
			if uniform != tc.uniform || len(s.X) != tc.samples {
				t.Fatalf("keep: %d uniform, %d samples; want %d, %d", uniform, len(s.X), tc.uniform, tc.samples)
			}
			st, grads, err := h.GRPOGrad(s, 0.2, beta)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(st.Loss-tc.loss) > 1e-15 || fmt.Sprint(tc.loss) != tc.wantLossText || st.Clipped != tc.clipped {
				t.Errorf("loss %v (hand %v = %s), clipped %d; want %d", st.Loss, tc.loss, tc.wantLossText, st.Clipped, tc.clipped)
			}
			checkPair(t, "BK", grads[3], tc.bk0)
			checkPair(t, "BC", grads[5], tc.bc0)
			checkPair(t, "BW", grads[7], tc.bw0)
			for _, i := range []int{0, 1, 2, 4, 6} { // hidden is tanh(0) = 0 and WK = WC = WW = 0
				for j, v := range grads[i] {
					if v != 0 {
						t.Errorf("param %d[%d]: gradient %v, want 0", i, j, v)
					}
				}
			}
		})
	}
}

// checkPair checks a two-entry gradient (v, −v).
func checkPair(t *testing.T, name string, got []float64, v float64) {
	t.Helper()
	if math.Abs(got[0]-v) > 1e-15 || math.Abs(got[1]+v) > 1e-15 {
		t.Errorf("∂L/∂%s = %v, want (%v, %v)", name, got, v, -v)
	}
}

// TestObjectiveNoClip: with ε = 0 the mixed group's s1 (ρ = 1.5, A > 0)
// is not clipped: L = −(1.5a − 1.1a)/2 = −0.2a, ∂L/∂log π = (−0.75a,
// 0.55a), ∂L/∂BK = (−0.65a, 0.65a), ∂L/∂BC = ∂L/∂BW = (−0.375a, 0.375a).
// With ε = 0.2 it is clipped and passes nothing to BC and BW.
func TestObjectiveNoClip(t *testing.T) {
	a := 0.9 / (0.9*math.Sqrt2 + AdvantageEps)
	h, groups := objectiveBatch()
	kept, _ := keep(groups[:1], false, false)
	st, grads, err := h.GRPOGrad(samplesOf(kept), 0, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.Loss+0.2*a) > 1e-15 || st.Clipped != 0 {
		t.Errorf("loss %v, clipped %d; want %v, 0", st.Loss, st.Clipped, -0.2*a)
	}
	checkPair(t, "BK", grads[3], -0.65*a)
	checkPair(t, "BC", grads[5], -0.375*a)
	checkPair(t, "BW", grads[7], -0.375*a)
}
