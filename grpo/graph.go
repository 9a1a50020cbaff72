package grpo

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Samples is a mini-batch for a gradient step: N feature rows and the
// action each row took (or, in SFT, the target action).
type Samples struct {
	X       [][]float64
	Actions []Action
	// GRPO only: advantage, log π_old and log π_ref of each action.
	Adv, OldLogp, RefLogp []float64
}

// GRPOStats are what one GRPO gradient step measured.
type GRPOStats struct {
	Loss    float64 // the objective's value, −surrogate + β·KL
	KL      float64 // mean k3 over the samples
	Clipped int     // samples whose clipped term was the smaller
}

// read asks run for the value of a node.
type read struct {
	node *G.Node
	into *G.Value
}

// graph is one differentiable evaluation of the head on a mini-batch.
type graph struct {
	g      *G.ExprGraph
	params []*G.Node
	logp   *G.Node // log π(a_i | x_i), shape (N)
}

func dense(data []float64, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

// build lays out the head on s: per sample,
// log π(a) = Σ onehot_kind ⊙ logsoftmax(h·WK+BK) + Σ onehot_c ⊙ logsoftmax(h·WC+BC)
// + Σ onehot_w ⊙ logsoftmax(h·WW+BW), with h = tanh(x·W1+B1); an
// impossible action's centre and width one-hots are zero.
func (h *Head) build(s Samples) *graph {
	n := len(s.X)
	gr := &graph{g: G.NewGraph()}
	x := make([]float64, 0, n*h.In)
	for _, row := range s.X {
		x = append(x, row...)
	}
	xn := G.NewMatrix(gr.g, tensor.Float64, G.WithShape(n, h.In), G.WithName("x"), G.WithValue(dense(x, n, h.In)))
	shapes := [][2]int{{h.In, h.Hidden}, {0, h.Hidden}, {h.Hidden, 2}, {0, 2}, {h.Hidden, h.Bins}, {0, h.Bins}, {h.Hidden, h.Widths}, {0, h.Widths}}
	for i, p := range h.Params() {
		// Copies: the optimiser updates h between steps, never the graph.
		v := append([]float64(nil), p...)
		name := fmt.Sprintf("p%d", i)
		if shapes[i][0] == 0 {
			gr.params = append(gr.params, G.NewVector(gr.g, tensor.Float64, G.WithShape(len(v)), G.WithName(name), G.WithValue(dense(v, len(v)))))
			continue
		}
		gr.params = append(gr.params, G.NewMatrix(gr.g, tensor.Float64, G.WithShape(shapes[i][0], shapes[i][1]), G.WithName(name), G.WithValue(dense(v, shapes[i][0], shapes[i][1]))))
	}
	p := gr.params
	hid := G.Must(G.Tanh(affineNode(xn, p[0], p[1])))
	kind, centre, width := onehots(h, s.Actions)
	gr.logp = G.Must(G.Add(
		G.Must(G.Add(chosen(gr.g, affineNode(hid, p[2], p[3]), kind, "kind"),
			chosen(gr.g, affineNode(hid, p[4], p[5]), centre, "centre"))),
		chosen(gr.g, affineNode(hid, p[6], p[7]), width, "width")))
	return gr
}

func affineNode(x, w, b *G.Node) *G.Node {
	return G.Must(G.BroadcastAdd(G.Must(G.Mul(x, w)), b, nil, []byte{0}))
}

// chosen returns Σ_j onehot_ij · logsoftmax(z)_ij per row i.
func chosen(g *G.ExprGraph, z *G.Node, onehot *tensor.Dense, name string) *G.Node {
	oh := G.NewMatrix(g, tensor.Float64, G.WithShape(onehot.Shape()...), G.WithName("onehot_"+name), G.WithValue(onehot))
	return G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.LogSoftMax(z)), oh)), 1))
}

func onehots(h *Head, acts []Action) (kind, centre, width *tensor.Dense) {
	n := len(acts)
	k, c, w := make([]float64, n*2), make([]float64, n*h.Bins), make([]float64, n*h.Widths)
	for i, a := range acts {
		if a.Impossible {
			k[i*2+kindImpossible] = 1
			continue
		}
		k[i*2+kindInterval] = 1
		c[i*h.Bins+a.Center] = 1
		w[i*h.Widths+a.Width] = 1
	}
	return dense(k, n, 2), dense(c, n, h.Bins), dense(w, n, h.Widths)
}

func (gr *graph) vector(name string, v []float64) *G.Node {
	return G.NewVector(gr.g, tensor.Float64, G.WithShape(len(v)), G.WithName(name), G.WithValue(dense(append([]float64(nil), v...), len(v))))
}

// run differentiates loss with respect to the parameters, evaluates the
// graph and returns the loss and the gradients in Params order; each read
// is filled with its node's value.
func (gr *graph) run(loss *G.Node, reads ...read) (float64, [][]float64, error) {
	if _, err := G.Grad(loss, gr.params...); err != nil {
		return 0, nil, fmt.Errorf("grpo: gradient: %w", err)
	}
	var lv G.Value
	G.Read(loss, &lv)
	for _, r := range reads {
		G.Read(r.node, r.into)
	}
	vm := G.NewTapeMachine(gr.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return 0, nil, fmt.Errorf("grpo: run graph: %w", err)
	}
	grads := make([][]float64, len(gr.params))
	for i, p := range gr.params {
		gv, err := p.Grad()
		if err != nil {
			return 0, nil, fmt.Errorf("grpo: gradient of %s: %w", p.Name(), err)
		}
		grads[i] = append([]float64(nil), gv.Data().([]float64)...)
	}
	return lv.Data().(float64), grads, nil
}

// SFTGrad returns the cross-entropy loss −mean_i log π(a_i|x_i) of the
// target actions and its gradient.
func (h *Head) SFTGrad(s Samples) (float64, [][]float64, error) {
	gr := h.build(s)
	loss := G.Must(G.Neg(G.Must(G.Mean(gr.logp))))
	return gr.run(loss)
}

// GRPOGrad returns the GRPO objective on s and its gradient, verl's
// actor loss with one sample standing for one token (see the package doc):
//
//	L = −mean_i S_i + β · mean_i k3_i,
//	S_i = min(ρ_i A_i, clip(ρ_i, 1−ε, 1+ε) A_i), no less than DualClip·A_i when A_i < 0,
//	ρ_i = exp(log π − log π_old),  k3_i = min(exp(d_i) − d_i − 1, MaxK3),  d_i = log π_ref − log π,
//
// with both log-ratios clamped to ±MaxLogRatio; eps = 0 means S_i = ρ_i A_i
// (no clipping at all). The means run over every sample in s, advantage 0
// or not. min, max and clamp are written with |·|
// (min(a,b) = (a+b−|a−b|)/2) so that the graph is differentiable with the
// exact gradient away from the kinks; a clamped value passes no gradient.
func (h *Head) GRPOGrad(s Samples, eps, beta float64) (GRPOStats, [][]float64, error) {
	gr := h.build(s)
	ratio := G.Must(G.Exp(clampNode(G.Must(G.Sub(gr.logp, gr.vector("old", s.OldLogp))), MaxLogRatio)))
	surr := gr.surrogate(ratio, s.Adv, eps)
	d := clampNode(G.Must(G.Sub(gr.vector("ref", s.RefLogp), gr.logp)), MaxLogRatio)
	k3 := minNode(G.Must(G.Sub(G.Must(G.Sub(G.Must(G.Exp(d)), d)), G.NewConstant(1.0))), G.NewConstant(MaxK3))
	kl := G.Must(G.Mean(k3))
	loss := G.Must(G.Add(G.Must(G.Neg(G.Must(G.Mean(surr)))), G.Must(G.Mul(kl, G.NewConstant(beta)))))
	var klv, rv G.Value
	lv, grads, err := gr.run(loss, read{kl, &klv}, read{ratio, &rv})
	if err != nil {
		return GRPOStats{}, nil, err
	}
	st := GRPOStats{Loss: lv, KL: klv.Data().(float64)}
	for i, r := range rv.Data().([]float64) {
		if _, c := Surrogate(r, s.Adv[i], eps); c {
			st.Clipped++
		}
	}
	return st, grads, nil
}

// surrogate lays out Surrogate over the batch.
func (gr *graph) surrogate(ratio *G.Node, adv []float64, eps float64) *G.Node {
	a := gr.vector("adv", adv)
	plain := G.Must(G.HadamardProd(ratio, a))
	if eps == 0 {
		return plain
	}
	clipped := minNode(maxNode(ratio, G.NewConstant(1-eps)), G.NewConstant(1+eps))
	surr := minNode(plain, G.Must(G.HadamardProd(clipped, a)))
	neg, floor := make([]float64, len(adv)), make([]float64, len(adv))
	for i, v := range adv {
		floor[i] = DualClip * v
		if v < 0 {
			neg[i] = 1
		}
	}
	// surr + [A < 0]·(max(surr, c·A) − surr)
	lift := G.Must(G.Sub(maxNode(surr, gr.vector("floor", floor)), surr))
	return G.Must(G.Add(surr, G.Must(G.HadamardProd(gr.vector("neg", neg), lift))))
}

// clampNode is min(max(v, −bound), bound).
func clampNode(v *G.Node, bound float64) *G.Node {
	return minNode(maxNode(v, G.NewConstant(-bound)), G.NewConstant(bound))
}

func minNode(a, b *G.Node) *G.Node {
	diff := G.Must(G.Abs(G.Must(G.Sub(a, b))))
	return G.Must(G.Mul(G.Must(G.Sub(G.Must(G.Add(a, b)), diff)), G.NewConstant(0.5)))
}

func maxNode(a, b *G.Node) *G.Node {
	diff := G.Must(G.Abs(G.Must(G.Sub(a, b))))
	return G.Must(G.Mul(G.Must(G.Add(G.Must(G.Add(a, b)), diff)), G.NewConstant(0.5)))
}
