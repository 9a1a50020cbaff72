package eval

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
)

// Job is one evaluation: the probes of Data, answered by the predictions
// file Predictions or by a model asked for them (Ollama, or Model at
// Endpoint), scored by ScoreRun. Exactly one of Predictions, Ollama and
// Endpoint is set. Zero fields take the defaults named.
type Job struct {
	// Data is the eval parquet file (dataset.ReadRL).
	Data string
	// Predictions is a predictions file or a guard's ledger directory
	// (prediction.ReadFile) to score as it is.
	Predictions string
	// Ollama names a model served by Ollama (OLLAMA_HOST, its native API)
	// to ask; Ready, when set, is called first (a check that the server
	// answers).
	Ollama string
	Ready  func(context.Context) error
	// Endpoint is an OpenAI-compatible Chat Completions server to ask for
	// Model, with APIKey (none when empty), Header and Extra: the fields of
	// prediction.OpenAI.
	Endpoint, Model, APIKey string
	Header                  http.Header
	Extra                   map[string]any
	// Temperature and MaxTokens are the sampling temperature (0: greedy)
	// and the answer cap (0: prediction.DefaultMaxTokens).
	Temperature float64
	MaxTokens   int
	// Seed seeds the bootstrap and Ollama's sampling; SendSeed sends it to
	// Endpoint too.
	Seed     uint64
	SendSeed bool
	// Out is the predictions log a model's answers are appended to (a
	// rerun asks only the probes without an answer there); "" means
	// predictions-MODEL.jsonl.
	Out string
	// Ask bounds the requests (concurrency, rate, retries, timeout) and
	// reports progress.
	Ask prediction.Options
	// Agent and Estimator are the agent's and the estimator's prices: both
	// given, they price the early stop's net savings; Estimator prices the
	// spend.
	Agent, Estimator prediction.Prices
	// Name, Bootstrap, BagenV1 and Strict are RunOptions'.
	Name      string
	Bootstrap *int
	BagenV1   bool
	Strict    bool
}

// Outcome is a Job's run and what a caller reports beside it.
type Outcome struct {
	Run Run
	// Asked is what asking the model did; nil when none was asked.
	Asked *Asked
	// Failed lists the probes the model was asked and could not answer;
	// they are scored as unanswered.
	Failed *prediction.FailedError
	// Cut counts the answers cut off (token cap, or no done flag).
	Cut int
	// Scores says how the join went (Matched.OneToOne).
	Scores Scores
	// HalfPriced is true when only one of the agent's and the estimator's
	// prices were given: the net savings in dollars need both.
	HalfPriced bool
}

// Asked is what a Job asked a model: the predictions log it appended to,
// how many probes the log answered before to the same request, and what
// this run spent.
type Asked struct {
	Log    string
	Before int
	Stats  prediction.Stats
}

// Do runs j: reads the probes, gets their answers (asking the model the
// probes its log has no answer for to the same request) and scores them
// (ScoreRun). Asking, it returns the *prediction.FailedError of the probes
// that failed in Outcome.Failed, not as the error; a *JoinError is a join
// ScoreRun refused.
func Do(ctx context.Context, j Job) (Outcome, error) {
	if err := j.Validate(); err != nil {
		return Outcome{}, err
	}
	rows, err := dataset.ReadRL(j.Data)
	if err != nil {
		return Outcome{}, err
	}
	var o Outcome
	var keys map[string]string
	if j.Ollama != "" || j.Endpoint != "" {
		if j.Predictions, keys, o.Asked, o.Failed, err = ask(ctx, j, rows); err != nil {
			return o, err
		}
	}
	set, err := prediction.ReadFile(j.Predictions)
	if err != nil {
		return o, err
	}
	if keys != nil {
		// The ledger may hold answers to other prompts under the same ids.
		set = set.Only(keys)
	}
	o.Cut = set.Cut()
	err = j.score(&o, rows, set)
	return o, err
}

// Score scores set, the answers in j.Predictions, against rows as Do
// does once it has them (no model is asked, no answer counted as cut).
func (j Job) Score(rows []dataset.RLRow, set *prediction.Set) (Outcome, error) {
	var o Outcome
	err := j.score(&o, rows, set)
	return o, err
}

// score fills o's run and join (ScoreRun) and its spend.
func (j Job) score(o *Outcome, rows []dataset.RLRow, set *prediction.Set) error {
	var err error
	o.Run, o.Scores, err = ScoreRun(rows, set, RunOptions{Data: j.Data, Predictions: j.Predictions, Model: j.model(), Name: j.Name,
		Bootstrap: j.Bootstrap, Seed: j.Seed, BagenV1: j.BagenV1, Strict: j.Strict})
	if err != nil {
		return err
	}
	o.Run.Endpoint = j.Endpoint
	o.addSpend(set, j.Agent, j.Estimator)
	return nil
}

// model is the model j asks; "" when none.
func (j Job) model() string {
	if j.Endpoint != "" {
		return j.Model
	}
	return j.Ollama
}

// addSpend adds to the run what the predictions and this run's requests
// cost, when anything was asked, and prices the early stop's net when
// both the agent's and the estimator's prices are given (HalfPriced when
// only one of them is).
func (o *Outcome) addSpend(set *prediction.Set, agent, estimator prediction.Prices) {
	var stats prediction.Stats
	if o.Asked != nil {
		stats = o.Asked.Stats
	}
	if spend := set.Spend(); spend.Requests > 0 || stats.Probes > 0 {
		s := NewSpend(spend, stats, estimator)
		o.Run.Spend = &s
	}
	none := prediction.Prices{}
	if agent != none && estimator != none {
		o.Run.Metrics.EarlyStop.Price(agent, estimator)
		return
	}
	o.HalfPriced = agent != none || estimator != none
}

// ask answers the probes the predictions log has no answer for to the
// same request (model, sampling, prompt) and returns the log's path, each
// probe's request key, what this run did and the probes that failed.
func ask(ctx context.Context, j Job, rows []dataset.RLRow) (string, map[string]string, *Asked, *prediction.FailedError, error) {
	model := j.model()
	client, err := j.client(ctx)
	if err != nil {
		return "", nil, nil, nil, err
	}
	out := j.Out
	if out == "" {
		out = "predictions-" + strings.NewReplacer("/", "_", ":", "_").Replace(model) + ".jsonl"
	}
	probes := prediction.ProbesOf(rows)
	before, stats, err := prediction.ResumeFile(ctx, client, probes, out, model, j.Ask)
	asked := &Asked{Log: out, Before: before, Stats: stats}
	var failed *prediction.FailedError
	switch {
	case errors.Is(err, prediction.ErrModel):
		return "", nil, asked, nil, err
	case err != nil && !errors.As(err, &failed):
		return "", nil, asked, nil, fmt.Errorf("%s: %w (answers so far are in %s; rerun to resume)", model, err, out)
	}
	return out, prediction.RequestKeys(client, model, probes), asked, failed, nil
}

// client builds the Ollama or Chat Completions client j asks for.
func (j Job) client(ctx context.Context) (prediction.Client, error) {
	if j.Endpoint != "" {
		o := j.openAI()
		return o, o.Validate()
	}
	api, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	if j.Ready != nil {
		if err := j.Ready(ctx); err != nil {
			return nil, err
		}
	}
	return &prediction.Ollama{API: api, Model: j.Ollama, Temperature: j.Temperature,
		NumPredict: j.MaxTokens, Seed: int64(j.Seed)}, nil
}

// openAI is the Chat Completions client of j.Endpoint.
func (j Job) openAI() *prediction.OpenAI {
	o := &prediction.OpenAI{BaseURL: j.Endpoint, Model: j.Model, APIKey: j.APIKey,
		Temperature: j.Temperature, MaxTokens: j.MaxTokens, Header: j.Header, Extra: j.Extra}
	if j.SendSeed {
		seed := int64(j.Seed)
		o.Seed = &seed
	}
	return o
}

// Validate reports every bad field of j at once: no Data, not exactly
// one source of answers, and those of the Chat Completions client it
// would ask (prediction.OpenAI.Validate).
func (j Job) Validate() error {
	var errs []error
	if j.Data == "" {
		errs = append(errs, errors.New("data: none given"))
	}
	if n := countSet(j.Predictions, j.Ollama, j.Endpoint); n != 1 {
		errs = append(errs, fmt.Errorf("answers: want one of a predictions file, an Ollama model and an endpoint, got %d", n))
	}
	if j.Endpoint != "" {
		errs = append(errs, j.openAI().Validate())
	}
	return errors.Join(errs...)
}

// countSet counts the non-empty strings.
func countSet(s ...string) int {
	n := 0
	for _, v := range s {
		if v != "" {
			n++
		}
	}
	return n
}
