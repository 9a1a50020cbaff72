package baseline

import (
	"context"
	"fmt"
	"math"
	"sync"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// Estimator answers rendered budget probes with a model. Safe for
// concurrent use.
type Estimator struct {
	m  *Model
	gs []*group
	// Name is the model name predictions carry.
	Name string
	// OtherTasks answers probes of another task than the model's (with a
	// warning) instead of refusing them with ErrTask.
	OtherTasks bool
	// Warn, when set, receives one line the first time a probe states a
	// task or budget other than the model's.
	Warn func(string)

	warned sync.Map // task/budget already warned about
}

// NewEstimator is an Estimator answering with m.
func NewEstimator(m *Model, name string) *Estimator {
	return &Estimator{m: m, gs: layout(m.Task, m.Groups), Name: name}
}

// Model is the estimator's model.
func (e *Estimator) Model() *Model { return e.m }

// Answer is one probe's answer and what it rests on.
type Answer struct {
	// Text is the answer as an LLM would write it: "<answer>[L, H]</answer>"
	// or "<answer>impossible</answer>".
	Text string
	// Impossible says the gate stopped the run; Low and High are the
	// interval otherwise.
	Impossible bool
	Low, High  int64
	// Failure is the estimated probability that the run fails.
	Failure float64
	// View is the probe as read.
	View *View
}

// Answer answers a rendered probe. A chat that is not a budget probe is a
// *probes.PromptError; a probe of another task than the model's is ErrTask
// unless OtherTasks.
func (e *Estimator) Answer(msgs []rollout.Message) (Answer, error) {
	v, err := NewView(msgs)
	if err != nil {
		return Answer{}, err
	}
	if err := e.check(v); err != nil {
		return Answer{}, err
	}
	x := extract(v, e.gs, e.m.Words)
	z := e.m.Scale.apply(x)
	a := Answer{View: v, Failure: sigmoid(e.m.Failure.at(x))}
	if math.IsNaN(a.Failure) {
		a.Failure = 0
	}
	if e.m.Gate.stops(a.Failure) {
		a.Impossible = true
		a.Text = reward.Tag(reward.Prediction{Kind: reward.Impossible}.Text())
		return a, nil
	}
	a.Low, a.High = e.m.Remaining.interval(x, z, v.Turns())
	a.Text = reward.Tag(reward.Prediction{Kind: reward.Interval, Low: a.Low, High: a.High}.Text())
	return a, nil
}

// check refuses or warns about a probe of another task or budget.
func (e *Estimator) check(v *View) error {
	st := v.Stated
	if st.Task != e.m.Task {
		if !e.OtherTasks {
			return fmt.Errorf("%w: a probe of task %q; the model was trained on %q", ErrTask, st.Task, e.m.Task)
		}
		e.warn("task "+st.Task, fmt.Sprintf("a probe of task %q; the model was trained on %q: its answers carry no calibration", st.Task, e.m.Task))
	}
	if e.m.Budget > 0 && st.Budget != e.m.Budget {
		e.warn(fmt.Sprint("budget ", st.Budget), fmt.Sprintf("a probe states a budget of %d tokens; the model was trained on %d", st.Budget, e.m.Budget))
	}
	return nil
}

func (e *Estimator) warn(key, msg string) {
	if e.Warn == nil {
		return
	}
	if _, loaded := e.warned.LoadOrStore(key, true); !loaded {
		e.Warn(msg)
	}
}

// Estimate answers a probe as a guard asks it: in-process, with 0 tokens
// of usage.
func (e *Estimator) Estimate(ctx context.Context, id string, prompt []rollout.Message) (prediction.Prediction, error) {
	if err := ctx.Err(); err != nil {
		return prediction.Prediction{}, err
	}
	a, err := e.Answer(prompt)
	if err != nil {
		return prediction.Prediction{}, err
	}
	return e.prediction(id, a), nil
}

// prediction is a's line in a predictions file.
func (e *Estimator) prediction(id string, a Answer) prediction.Prediction {
	return prediction.Prediction{CustomID: id, Response: a.Text, FinishReason: "stop",
		Usage: &prediction.Usage{}, Model: e.Name, Attempts: 1}
}

// Predict answers every row of an RL or eval split, in order.
func (e *Estimator) Predict(ctx context.Context, file string, rows []dataset.RLRow) ([]prediction.Prediction, error) {
	out := make([]prediction.Prediction, len(rows))
	for i, r := range rows {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a, err := e.Answer(r.Prompt)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d (%s): %w", file, i, r.ExtraInfo.CustomID, err)
		}
		out[i] = e.prediction(r.ExtraInfo.CustomID, a)
	}
	return out, nil
}
