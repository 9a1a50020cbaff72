package baseline

// width is the number of features gs lay out.
func width(gs []*group) int {
	n := 0
	for _, g := range gs {
		n += len(g.features)
	}
	return n
}

// featureList names the features gs lay out, in order.
func featureList(gs []*group) []Feature {
	var out []Feature
	for _, g := range gs {
		out = append(out, g.features...)
	}
	return out
}

// extract returns v's features under gs; nb gives the word score.
func extract(v *View, gs []*group, nb *Bayes) []float64 {
	out := make([]float64, width(gs))
	at := 0
	for _, g := range gs {
		part := out[at : at+len(g.features)]
		if g == wordsGroup {
			part[0] = nb.Score(words(v))
		} else {
			g.fill(v, part)
		}
		at += len(g.features)
	}
	return out
}
