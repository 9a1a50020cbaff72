package baseline

import (
	"math"
	"slices"
)

// Boost is a sum of small regression trees fitted by Newton boosting
// (Friedman 2001; Chen and Guestrin 2016, eq. 6): F(x) = Base + Σ tree(x),
// each tree's leaves already scaled by the learning rate. Trees read the
// raw features, so no scaling is needed.
type Boost struct {
	Base  float64 `json:"base"`
	Trees []Tree  `json:"trees"`
}

// Tree is a binary tree in an array; node 0 is the root.
type Tree []Node

// Node is a split (x[Feature] < Threshold goes Left, else Right) or, when
// Left is 0, a leaf of Value.
type Node struct {
	Feature   int     `json:"f,omitempty"`
	Threshold float64 `json:"t,omitempty"`
	Left      int     `json:"l,omitempty"`
	Right     int     `json:"r,omitempty"`
	Value     float64 `json:"v,omitempty"`
}

// at returns F(x).
func (b *Boost) at(x []float64) float64 {
	f := b.Base
	for _, t := range b.Trees {
		f += t.at(x)
	}
	return f
}

func (t Tree) at(x []float64) float64 {
	i := 0
	for t[i].Left != 0 {
		if x[t[i].Feature] < t[i].Threshold {
			i = t[i].Left
		} else {
			i = t[i].Right
		}
	}
	return t[i].Value
}

// boostParams are the boosting's settings: rounds, learning rate, tree
// depth, the L2 penalty on leaf values and the least hessian weight of a
// leaf.
type boostParams struct {
	rounds, depth  int
	rate, l2, minH float64
}

var defaultBoost = boostParams{rounds: 150, depth: 3, rate: 0.1, l2: 1, minH: 5}

// loss gives the gradient and hessian of a loss at F for example i.
type loss func(i int, f float64) (g, h float64)

// fitBoost fits a Boost to xs under loss, starting from base.
func fitBoost(xs [][]float64, wts []float64, base float64, l loss, p boostParams) *Boost {
	n, d := len(xs), len(xs[0])
	order := make([][]int, d)
	for j := range d {
		order[j] = make([]int, n)
		for i := range n {
			order[j][i] = i
		}
		slices.SortStableFunc(order[j], func(a, b int) int {
			switch {
			case xs[a][j] < xs[b][j]:
				return -1
			case xs[a][j] > xs[b][j]:
				return 1
			}
			return 0
		})
	}
	b := &Boost{Base: base}
	f := make([]float64, n)
	for i := range f {
		f[i] = base
	}
	g, h := make([]float64, n), make([]float64, n)
	for range p.rounds {
		for i := range n {
			gi, hi := l(i, f[i])
			g[i], h[i] = wts[i]*gi, wts[i]*hi
		}
		t := growTree(xs, order, g, h, p)
		for i := range n {
			f[i] += t.at(xs[i])
		}
		b.Trees = append(b.Trees, t)
	}
	return b
}

// split is the best split found for one node.
type split struct {
	gain      float64
	feature   int
	threshold float64
}

// maxNodes bounds a tree's nodes: a full tree of the deepest depth used.
const maxNodes = 1<<8 - 1

// growTree grows one tree level by level: every leaf of a level is split
// where the Newton gain is largest, if it is positive and both children
// keep at least minH of hessian.
func growTree(xs [][]float64, order [][]int, g, h []float64, p boostParams) Tree {
	n := len(g)
	nodeOf := make([]int, n)
	t := Tree{{}}
	level := []int{0}
	for depth := 0; depth < p.depth && len(level) > 0; depth++ {
		var sumG, sumH [maxNodes]float64
		for i := range n {
			sumG[nodeOf[i]] += g[i]
			sumH[nodeOf[i]] += h[i]
		}
		best := bestSplits(xs, order, g, h, nodeOf, level, &sumG, &sumH, p)
		var next []int
		for _, k := range level {
			s := best[k]
			if s.gain <= 0 {
				continue
			}
			l, r := len(t), len(t)+1
			t[k] = Node{Feature: s.feature, Threshold: s.threshold, Left: l, Right: r}
			t = append(t, Node{}, Node{})
			next = append(next, l, r)
		}
		for i := range n {
			if k := nodeOf[i]; t[k].Left != 0 {
				if xs[i][t[k].Feature] < t[k].Threshold {
					nodeOf[i] = t[k].Left
				} else {
					nodeOf[i] = t[k].Right
				}
			}
		}
		level = next
	}
	var sumG, sumH [maxNodes]float64
	for i := range n {
		sumG[nodeOf[i]] += g[i]
		sumH[nodeOf[i]] += h[i]
	}
	for k := range t {
		if t[k].Left == 0 {
			t[k].Value = -p.rate * sumG[k] / (sumH[k] + p.l2)
		}
	}
	return t
}

// bestSplits scans every feature once in sorted order, keeping running
// sums per node of the level.
func bestSplits(xs [][]float64, order [][]int, g, h []float64, nodeOf, level []int, sumG, sumH *[maxNodes]float64, p boostParams) *[maxNodes]split {
	var inLevel [maxNodes]bool
	for _, k := range level {
		inLevel[k] = true
	}
	best := new([maxNodes]split)
	for j := range order {
		var leftG, leftH, last [maxNodes]float64
		var seen [maxNodes]bool
		for _, i := range order[j] {
			k := nodeOf[i]
			if !inLevel[k] {
				continue
			}
			v := xs[i][j]
			if seen[k] && v > last[k] {
				gl, hl := leftG[k], leftH[k]
				gr, hr := sumG[k]-gl, sumH[k]-hl
				if hl >= p.minH && hr >= p.minH {
					gain := gl*gl/(hl+p.l2) + gr*gr/(hr+p.l2) - sumG[k]*sumG[k]/(sumH[k]+p.l2)
					if gain > best[k].gain {
						best[k] = split{gain: gain, feature: j, threshold: (last[k] + v) / 2}
					}
				}
			}
			leftG[k] += g[i]
			leftH[k] += h[i]
			last[k], seen[k] = v, true
		}
	}
	return best
}

// logLoss is the logistic loss of labels ys (F is the log-odds).
func logLoss(ys []bool) loss {
	return func(i int, f float64) (float64, float64) {
		p := sigmoid(f)
		return p - b2f(ys[i]), max(p*(1-p), 1e-6)
	}
}

// squaredLoss is half the squared error to ys.
func squaredLoss(ys []float64) loss {
	return func(i int, f float64) (float64, float64) { return f - ys[i], 1 }
}

// fits reports whether every tree is well formed over d features.
func (b *Boost) fits(d int) bool {
	for _, t := range b.Trees {
		for k, n := range t {
			if n.Left == 0 {
				continue
			}
			if n.Feature < 0 || n.Feature >= d || n.Left <= k || n.Right <= k || n.Left >= len(t) || n.Right >= len(t) || math.IsNaN(n.Threshold) {
				return false
			}
		}
	}
	return true
}
