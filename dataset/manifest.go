package dataset

import (
	"encoding/json"
	"errors"
	"fmt"

	"bagen-data/probes"
)

// Manifest describes a build: its configuration, inputs, counts and
// outputs. It carries no timestamps, so the same build writes the same
// bytes.
type Manifest struct {
	Tool    string         `json:"tool"`
	Version string         `json:"version"`
	Config  ManifestConfig `json:"config"`
	Inputs  []FileDigest   `json:"inputs"`
	// Results are the outcome files (--results) joined to the inputs.
	Results      []FileDigest   `json:"results,omitempty"`
	Trajectories int            `json:"trajectories"`
	Groups       GroupStats     `json:"split_groups"`
	Invalid      InvalidSummary `json:"invalid"`
	// Outcomes counts trajectories by where their success came from:
	// results, score, exit_status or none.
	Outcomes map[string]int `json:"outcomes"`
	// ReplacedUTF8 counts invalid UTF-8 sequences replaced with U+FFFD
	// (--replace-invalid-utf8).
	ReplacedUTF8 int          `json:"replaced_utf8"`
	Splits       SplitsStats  `json:"splits"`
	Outputs      []FileDigest `json:"outputs"`
	// Codec is the compressor that wrote the outputs' pages, with its
	// level and version: the outputs' bytes, and so their digests,
	// depend on it.
	Codec string `json:"codec"`
}

// ManifestConfig is the configuration as the user gave it.
type ManifestConfig struct {
	Task               string  `json:"task"`
	Compat             string  `json:"compat,omitempty"` // e.g. bagen-v1; empty for this tool's own behaviour
	SystemPromptSHA256 string  `json:"system_prompt_sha256"`
	Budget             int64   `json:"budget"` // 0: per trajectory, else the task's
	TaskBudget         int64   `json:"task_budget"`
	Width              string  `json:"width"`
	Labels             string  `json:"labels"`
	ProbeEvery         int     `json:"probe_every"`
	MinRemaining       int64   `json:"min_remaining"`
	Think              bool    `json:"think"`
	Split              string  `json:"split"`
	Seed               uint64  `json:"seed"`
	OversamplePossible int     `json:"oversample_possible"`
	BalanceRatio       float64 `json:"balance_ratio"`
	BalanceEval        bool    `json:"balance_eval"`
	SplitByTrajectory  bool    `json:"split_by_trajectory"`
	PrefixIDs          bool    `json:"prefix_ids"`
	SkipInvalid        bool    `json:"skip_invalid"`
	Tokenizer          string  `json:"tokenizer"`
	// Accounting is the token accounting that made every number of the
	// build ("message" or "replay"; see probes.AccountingKind), also in
	// each row's accounting column. A manifest written before it was
	// recorded reads as probes.AccountingUnknown.
	Accounting probes.AccountingKind `json:"accounting"`
}

// FileDigest identifies a file by path, size and SHA-256.
type FileDigest struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// GroupStats describes the units the split assigns: trajectories grouped
// by their first user message (the default), or single trajectories.
type GroupStats struct {
	By      string `json:"by"`
	Count   int    `json:"count"`
	Largest int    `json:"largest"` // trajectories in the largest group
}

// InvalidSummary counts skipped trajectories and shows the first few.
type InvalidSummary struct {
	Count    int       `json:"count"`
	Examples []Invalid `json:"examples"`
}

// ClassCounts counts by truth class.
type ClassCounts struct {
	Possible   int `json:"possible"`
	Impossible int `json:"impossible"`
}

// Total is Possible + Impossible.
func (c ClassCounts) Total() int { return c.Possible + c.Impossible }

func (c *ClassCounts) add(possible bool) {
	if possible {
		c.Possible++
	} else {
		c.Impossible++
	}
}

// SplitStats counts one split: trajectories by class (a trajectory is
// possible when its rollout succeeded within budget), probes before
// balancing, rows written, and what balancing and filtering did.
type SplitStats struct {
	File         string      `json:"file"`
	Trajectories ClassCounts `json:"trajectories"`
	Probes       ClassCounts `json:"probes"`
	Rows         ClassCounts `json:"rows"`
	Duplicates   int         `json:"duplicates_added"`
	Downsampled  int         `json:"impossible_downsampled"`
	// DroppedMinRemaining counts probes dropped for r < min_remaining.
	DroppedMinRemaining int `json:"dropped_min_remaining"`
}

// SplitsStats holds the three splits.
type SplitsStats struct {
	SFT  SplitStats `json:"sft"`
	RL   SplitStats `json:"rl"`
	Eval SplitStats `json:"eval"`
}

// ByName returns the split named sft, rl or eval; ok is false for any
// other name.
func (s *SplitsStats) ByName(name string) (st SplitStats, ok bool) {
	for i, n := range splitNames {
		if n == name {
			return *s.at(i), true
		}
	}
	return SplitStats{}, false
}

func (s *SplitsStats) at(i int) *SplitStats {
	return [...]*SplitStats{&s.SFT, &s.RL, &s.Eval}[i]
}

// ReadManifest decodes a manifest.json. A field of the wrong type is an
// error naming it; unknown fields are ignored.
func ReadManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return nil, err
	}
	return &m, nil
}
