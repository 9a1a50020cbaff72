package eval

import (
	"fmt"
	"io"
	"math"
	"slices"

	"bagen-data/reward"
)

// BagenV1 is the summary the authors' scripts/budget-rl/eval_checkpoint.py
// writes (mll-lab-nu/BAGEN 58bef4c; analyze_eval.py prints the same
// numbers), computed their way from the token probes of a scored table:
//
//   - a prediction is "invalid" when unparseable (or missing), else
//     "impossible" or "possible" (an interval — reversed ones too — or a
//     scalar);
//   - FormatValidRate counts every parseable answer, scalars included;
//   - CoverRatePossible is covered / possible, covered meaning L ≤ r ≤ H
//     or a scalar equal to r (bagen-data's Hit rate, which needs a
//     well-formed interval);
//   - the relative errors |mid − r| / r are over possible probes with r > 0
//     answered by an interval (mid = (L + H) / 2, reversed or not) or a
//     scalar (mid = the scalar); the median is sorted[n // 2];
//   - empty ratios are 0, not undefined.
//
// Warehouse probes are left out (their script scores tokens only).
type BagenV1 struct {
	Samples             int     `json:"n_samples"`
	Possible            int     `json:"n_possible"`
	Impossible          int     `json:"n_impossible"`
	MeanReward          float64 `json:"mean_reward"`
	FormatValidRate     float64 `json:"format_valid_rate"`
	ClassAccuracy       float64 `json:"class_accuracy"`
	PredHitPossible     float64 `json:"pred_hit_possible"`
	PredHitImpossible   float64 `json:"pred_hit_impossible"`
	CoverRatePossible   float64 `json:"cover_rate_possible"`
	MeanRelativeError   float64 `json:"mean_relative_error"`
	MedianRelativeError float64 `json:"median_relative_error"`
}

// ComputeBagenV1 computes the authors' summary of rows. rows is not
// modified.
func ComputeBagenV1(rows []Scored) BagenV1 {
	var s BagenV1
	var rewards, parsed, correct, hitPos, hitImp, covered float64
	var errs []float64
	for _, r := range rows {
		if r.Warehouse {
			continue
		}
		s.Samples++
		rewards += r.Reward
		p := r.Prediction
		if p.Kind != reward.Unparseable {
			parsed++
		}
		if !r.Possible {
			s.Impossible++
			if p.Kind == reward.Impossible {
				correct++
				hitImp++
			}
			continue
		}
		s.Possible++
		if p.Kind != reward.Interval && p.Kind != reward.Scalar {
			continue
		}
		correct++
		hitPos++
		if p.Low <= r.Remaining && r.Remaining <= p.High {
			covered++
		}
		if r.Remaining > 0 {
			mid := p.Mid()
			errs = append(errs, math.Abs(mid-float64(r.Remaining))/float64(r.Remaining))
		}
	}
	div := func(a float64, b int) float64 {
		if b == 0 {
			return 0
		}
		return a / float64(b)
	}
	s.MeanReward = div(rewards, s.Samples)
	s.FormatValidRate = div(parsed, s.Samples)
	s.ClassAccuracy = div(correct, s.Samples)
	s.PredHitPossible = div(hitPos, s.Possible)
	s.PredHitImpossible = div(hitImp, s.Impossible)
	s.CoverRatePossible = div(covered, s.Possible)
	var sum float64
	for _, e := range errs {
		sum += e
	}
	s.MeanRelativeError = div(sum, len(errs))
	if len(errs) > 0 {
		slices.Sort(errs)
		s.MedianRelativeError = errs[len(errs)/2]
	}
	return s
}

// WriteText prints the summary under the authors' names.
func (s BagenV1) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "bagen-v1 (eval_checkpoint.py): n_samples %d, n_possible %d, n_impossible %d\n"+
		"  mean_reward %.4f  format_valid_rate %.4f  class_accuracy %.4f\n"+
		"  pred_hit_possible %.4f  pred_hit_impossible %.4f  cover_rate_possible %.4f\n"+
		"  mean_relative_error %.4f  median_relative_error %.4f\n",
		s.Samples, s.Possible, s.Impossible, s.MeanReward, s.FormatValidRate, s.ClassAccuracy,
		s.PredHitPossible, s.PredHitImpossible, s.CoverRatePossible, s.MeanRelativeError, s.MedianRelativeError)
	return err
}
