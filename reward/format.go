package reward

import "strconv"

// Text is the answer p stands for, as written inside the answer tags and
// in the ground_truth column: "impossible", "[L, H]" for an interval, "N"
// for a scalar, and "" for an unparseable prediction. Parse(Tag(p.Text()))
// gives p back.
func (p Prediction) Text() string {
	switch p.Kind {
	case Impossible:
		return "impossible"
	case Interval:
		return "[" + strconv.FormatInt(p.Low, 10) + ", " + strconv.FormatInt(p.High, 10) + "]"
	case Scalar:
		return strconv.FormatInt(p.Low, 10)
	}
	return ""
}

// Tag wraps an answer text in the tags Parse reads:
// "<answer>" + text + "</answer>".
func Tag(text string) string {
	return openTag + text + closeTag
}
