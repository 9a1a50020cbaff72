package grpo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"bagen-data/eval"
)

// Record is one line of the training log (train.jsonl). Type says which of
// SFT, GRPO and Epoch is set.
type Record struct {
	Type  string     `json:"type"`  // "sft_step", "grpo_step" or "epoch"
	Phase string     `json:"phase"` // "init" (before training), "sft" or "grpo"
	Epoch int        `json:"epoch"` // 1-based epoch within the phase; 0 for init
	Step  int        `json:"step"`  // optimiser steps taken so far, both phases
	SFT   *SFTStep   `json:"sft,omitempty"`
	GRPO  *GRPOStep  `json:"grpo,omitempty"`
	Eval  *EpochEval `json:"eval,omitempty"`
}

// SFTStep is one supervised step.
type SFTStep struct {
	Loss     float64 `json:"loss"` // cross-entropy of the target actions
	GradNorm float64 `json:"grad_norm"`
}

// GRPOStep is one GRPO step: the rewards of the sampled actions (before
// the update) and what the updates measured.
type GRPOStep struct {
	Groups int `json:"groups"`
	// ZeroVarGroups counts groups whose rewards were all equal: their
	// advantages are 0, so only their KL term acts, and with
	// DropUniformGroups they are left out of the objective.
	ZeroVarGroups int `json:"zero_var_groups"`
	// Reward is the mean reward of all sampled actions, and by the probe's
	// truth class (undefined when the batch has none of the class).
	Reward           eval.Num `json:"reward"`
	RewardPossible   eval.Num `json:"reward_possible"`
	RewardImpossible eval.Num `json:"reward_impossible"`
	ImpossibleRate   float64  `json:"impossible_rate"` // share of sampled actions that are impossible
	// KL is the mean k3 estimate of KL(π‖π_ref) over the sampled actions.
	KL float64 `json:"kl"`
	// ClipFrac is the share of samples in the updates whose ratio was
	// clipped; Loss the mean objective over the updates.
	ClipFrac eval.Num `json:"clip_frac"`
	Loss     eval.Num `json:"loss"`
	Updates  int      `json:"updates"`
}

// EpochEval is the greedy head's quality at the end of an epoch: its
// reward on the RL training probes and the eval package's headline
// metrics on the eval probes.
type EpochEval struct {
	Train TrainReward `json:"train"`
	Eval  Headline    `json:"eval"`
}

// TrainReward is the head's reward on the RL training probes: the mean
// rule reward of its greedy actions, overall and by truth class, and the
// mean expected reward of the policy itself, E_{a∼π}[R(a)] computed exactly
// over the action space — the quantity GRPO maximises, and smoother than
// the greedy reward, which flips when an argmax does.
type TrainReward struct {
	Reward           eval.Num `json:"reward"`
	RewardPossible   eval.Num `json:"reward_possible"`
	RewardImpossible eval.Num `json:"reward_impossible"`
	ImpossibleRate   eval.Num `json:"impossible_rate"`
	Expected         eval.Num `json:"expected_reward"`
}

// Headline is the eval metrics a training log records after an epoch, by
// their eval.Table names: the appendix sweep's columns
// (eval.CompareColumns) and the format-valid rate.
type Headline map[string]eval.Num

// headlineNames are Headline's metrics in the log's order.
var headlineNames = append(slices.Clone(eval.CompareColumns), "format_valid")

func headlineOf(m eval.Metrics) Headline {
	h := make(Headline, len(headlineNames))
	for _, name := range headlineNames {
		h[name] = m.Value(name)
	}
	return h
}

// MarshalJSON writes h's metrics in headlineNames order; an absent one as
// zero.
func (h Headline) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, name := range headlineNames {
		v, err := json.Marshal(h[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strconv.AppendQuote(b, name), ':')
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// ReadLog reads a training log.
func ReadLog(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeLog(f, path)
}

// decodeLog reads the records of r, naming path and the line in errors.
func decodeLog(r io.Reader, path string) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
