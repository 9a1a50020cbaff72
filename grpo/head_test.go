package grpo

import (
	"math"
	"math/rand/v2"
	"testing"

	"bagen-data/reward"
)

// testSamples is a mini-batch on a small head with non-trivial logits.
func testSamples() (*Head, Samples) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHead(5, 4, 3, 2, rng)
	for _, p := range [][]float64{h.BK, h.WC, h.WW} {
		for i := range p {
			p[i] = rng.NormFloat64()
		}
	}
	var s Samples
	for i := range 6 {
		x := make([]float64, 5)
		for j := range x {
			x[j] = rng.NormFloat64()
		}
		a := Action{Impossible: i%3 == 0, Center: i % 3, Width: i % 2}
		lp := h.Forward(x).LogProb(a)
		s.X = append(s.X, x)
		s.Actions = append(s.Actions, a)
		s.Adv = append(s.Adv, rng.NormFloat64())
		s.OldLogp = append(s.OldLogp, lp+0.3*rng.NormFloat64())
		s.RefLogp = append(s.RefLogp, lp+0.3*rng.NormFloat64())
	}
	return h, s
}

// grpoLoss is the GRPO objective computed sample by sample with the pure
// functions, the reference for the graph.
func grpoLoss(h *Head, s Samples, eps, beta float64) (float64, int) {
	var sur, kl float64
	var clipped int
	for i, x := range s.X {
		lp := h.Forward(x).LogProb(s.Actions[i])
		v, c := Surrogate(Ratio(lp, s.OldLogp[i]), s.Adv[i], eps)
		if c {
			clipped++
		}
		sur += v
		kl += K3(lp, s.RefLogp[i])
	}
	n := float64(len(s.X))
	return -sur/n + beta*kl/n, clipped
}

func sftLoss(h *Head, s Samples) float64 {
	var l float64
	for i, x := range s.X {
		l -= h.Forward(x).LogProb(s.Actions[i])
	}
	return l / float64(len(s.X))
}

// checkGrad compares grads with central differences of f.
func checkGrad(t *testing.T, h *Head, grads [][]float64, f func() float64) {
	t.Helper()
	const step = 1e-6
	for pi, p := range h.Params() {
		for j := range p {
			old := p[j]
			p[j] = old + step
			up := f()
			p[j] = old - step
			down := f()
			p[j] = old
			if num := (up - down) / (2 * step); math.Abs(num-grads[pi][j]) > 1e-6 {
				t.Errorf("param %d[%d]: gradient %v, numeric %v", pi, j, grads[pi][j], num)
			}
		}
	}
}

func TestGRPOGrad(t *testing.T) {
	h, s := testSamples()
	st, grads, err := h.GRPOGrad(s, 0.2, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	want, clipped := grpoLoss(h, s, 0.2, 0.05)
	if math.Abs(st.Loss-want) > 1e-12 || st.Clipped != clipped {
		t.Errorf("loss %v, clipped %d; want %v, %d", st.Loss, st.Clipped, want, clipped)
	}
	if clipped == 0 {
		t.Error("test batch clips no sample; the clip path is untested")
	}
	checkGrad(t, h, grads, func() float64 { l, _ := grpoLoss(h, s, 0.2, 0.05); return l })
}

// TestGRPOGradClippedNoGradient: a sample whose ratio is clipped passes no
// gradient through the surrogate.
func TestGRPOGradClippedNoGradient(t *testing.T) {
	h, s := testSamples()
	one := Samples{X: s.X[:1], Actions: s.Actions[:1], Adv: []float64{1}, RefLogp: s.RefLogp[:1]}
	lp := h.Forward(one.X[0]).LogProb(one.Actions[0])
	one.OldLogp = []float64{lp - 1} // ratio e ≈ 2.72 > 1.2 with A > 0: clipped
	one.RefLogp = []float64{lp}     // k3 = 0 with zero gradient at π = π_ref
	st, grads, err := h.GRPOGrad(one, 0.2, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if st.Clipped != 1 || math.Abs(st.Loss+1.2) > 1e-12 {
		t.Errorf("clipped %d loss %v, want 1 and −1.2", st.Clipped, st.Loss)
	}
	for i, g := range grads {
		for j, v := range g {
			if math.Abs(v) > 1e-12 {
				t.Fatalf("param %d[%d]: gradient %v through a clipped sample, want 0", i, j, v)
			}
		}
	}
}

func TestSFTGrad(t *testing.T) {
	h, s := testSamples()
	loss, grads, err := h.SFTGrad(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := sftLoss(h, s); math.Abs(loss-want) > 1e-12 {
		t.Errorf("loss %v, want %v", loss, want)
	}
	checkGrad(t, h, grads, func() float64 { return sftLoss(h, s) })
}

func TestForwardNormalised(t *testing.T) {
	h, s := testSamples()
	d := h.Forward(s.X[0])
	var total float64
	for k := range 2 {
		if k == kindImpossible {
			total += math.Exp(d.LogProb(Action{Impossible: true}))
			continue
		}
		for c := range h.Bins {
			for w := range h.Widths {
				total += math.Exp(d.LogProb(Action{Center: c, Width: w}))
			}
		}
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("Σ π(a) = %v, want 1", total)
	}
}

func TestSample(t *testing.T) {
	d := Dist{Kind: [2]float64{math.Log(0.25), math.Log(0.75)}, Centre: []float64{math.Log(0.5), math.Log(0.5)}, Width: []float64{0}}
	rng := rand.New(rand.NewPCG(3, 4))
	var imp int
	const n = 20000
	for range n {
		if d.Sample(rng).Impossible {
			imp++
		}
	}
	if share := float64(imp) / n; math.Abs(share-0.75) > 0.01 {
		t.Errorf("impossible share %v, want 0.75 ± 0.01", share)
	}
	a1 := d.Sample(rand.New(rand.NewPCG(9, 9)))
	a2 := d.Sample(rand.New(rand.NewPCG(9, 9)))
	if a1 != a2 {
		t.Errorf("same seed sampled %+v and %+v", a1, a2)
	}
	if g := d.Greedy(); !g.Impossible {
		t.Errorf("Greedy = %+v, want impossible", g)
	}
	d.Kind = [2]float64{math.Log(0.6), math.Log(0.4)}
	if g := d.Greedy(); g != (Action{Center: 0, Width: 0}) {
		t.Errorf("Greedy = %+v, want centre 0 (tie to the lower index), width 0", g)
	}
}

func TestClone(t *testing.T) {
	h, _ := testSamples()
	c := h.Clone()
	c.W1[0]++
	c.BW[1]++
	if h.W1[0] == c.W1[0] || h.BW[1] == c.BW[1] {
		t.Error("Clone shares weights with the original")
	}
}

func TestAdam(t *testing.T) {
	p := [][]float64{{1, -1}}
	a := NewAdam(0.1, p)
	// Gradient norm 5 > 1 is clipped to (0.6, 0.8); the first bias-corrected
	// step moves each weight by lr·sign(g).
	if norm := a.Step(p, [][]float64{{3, 4}}); norm != 5 {
		t.Errorf("norm %v, want 5", norm)
	}
	want := []float64{1 - 0.1*0.6/(0.6+1e-8), -1 - 0.1*0.8/(0.8+1e-8)}
	for i := range want {
		if math.Abs(p[0][i]-want[i]) > 1e-15 {
			t.Errorf("p[%d] = %v, want %v", i, p[0][i], want[i])
		}
	}
	if a.T != 1 {
		t.Errorf("T = %d, want 1", a.T)
	}
}

func TestExpectedReward(t *testing.T) {
	// Budget 100, centres 1 and 100, one width (10%): the actions answer
	// [1, 1] and [90, 110].
	s := Space{Bins: 2, Widths: []float64{0.1}}
	d := Dist{Kind: [2]float64{math.Log(0.6), math.Log(0.4)}, Centre: []float64{math.Log(0.25), math.Log(0.75)}, Width: []float64{0}}
	for _, tc := range []struct {
		truth reward.Truth
		want  float64
	}{
		{reward.Truth{Possible: false}, 0.4 * 0.2},
		// only [90, 110] covers 100: 0.6 · 0.75 · 1.8·(1 − 20/100).
		{reward.Truth{Remaining: 100, Possible: true}, 0.6 * 0.75 * 1.8 * 0.8},
		// [1, 1] covers 1 with width 0: 0.6 · 0.25 · 1.8.
		{reward.Truth{Remaining: 1, Possible: true}, 0.6 * 0.25 * 1.8},
		{reward.Truth{Remaining: 50, Possible: true}, 0},
	} {
		if got := ExpectedReward(d, s, 100, tc.truth); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ExpectedReward(%+v) = %v, want %v", tc.truth, got, tc.want)
		}
	}
}
