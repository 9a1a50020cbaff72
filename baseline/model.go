package baseline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"bagen-data/dataset"
	"bagen-data/internal/atomicfile"
)

// Format and Version identify a model file; Load refuses any other.
const (
	Format  = "bagen-data baseline"
	Version = 1
)

// Model is a fitted baseline estimator, saved as one JSON file. Safe for
// concurrent use once loaded (nothing in it changes).
type Model struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Task is the probes' task preset; Budget the token budget every
	// training probe states (0 when they state several).
	Task   string `json:"task"`
	Budget int64  `json:"budget"`
	// Accounting is how the training data counted tokens, as its build
	// manifest records it ("default" when it records none).
	Accounting string `json:"accounting"`
	// Coverage, MaxAbort, Seed and CalibrationShare are the training
	// flags; Groups the feature groups used.
	Coverage         float64  `json:"coverage"`
	MaxAbort         float64  `json:"max_abort"`
	Seed             uint64   `json:"seed"`
	CalibrationShare float64  `json:"calibration_share"`
	Groups           []string `json:"groups"`
	// Features names the inputs, in the order the weights take them.
	Features []Feature `json:"features"`
	// Data identifies the training data; Counts sizes it.
	Data   []Source `json:"data"`
	Counts Counts   `json:"counts"`
	// Scale standardises the features; Words scores the words group.
	Scale Scale  `json:"scale"`
	Words *Bayes `json:"words,omitempty"`
	// Failure is the boosted trees of the log-odds that the run fails.
	Failure   *Boost    `json:"failure"`
	Remaining Remaining `json:"remaining"`
	Gate      Gate      `json:"gate"`
}

// Source is one training directory: its path as given, its manifest's
// digest and the digests of the split files read, from the manifest.
type Source struct {
	Dir            string               `json:"dir"`
	ManifestSHA256 string               `json:"manifest_sha256"`
	Files          []dataset.FileDigest `json:"files"`
}

// Counts sizes the training data: trajectories and probes in the fitting
// and calibration parts.
type Counts struct {
	FitRuns          int `json:"fit_runs"`
	FitProbes        int `json:"fit_probes"`
	CalibrationRuns  int `json:"calibration_runs"`
	CalibrationProbe int `json:"calibration_probes"`
	FailedRuns       int `json:"failed_runs"`
}

// Save writes m to path atomically, as indented JSON.
func (m *Model) Save(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return m.Encode(w) })
}

// Encode writes m as indented JSON.
func (m *Model) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}

// Load reads a model file: the format and version first (ErrVersion),
// then everything, checked against this build's features.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if head.Format != Format || head.Version != Version {
		return nil, fmt.Errorf("%s: %w: format %q version %d, want %q version %d (train it again)", path, ErrVersion, head.Format, head.Version, Format, Version)
	}
	m := &Model{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// check verifies that m's features are this build's and its weights fit.
func (m *Model) check() error {
	want := featureList(layout(m.Task, m.Groups))
	if !slices.Equal(names(want), names(m.Features)) {
		return fmt.Errorf("%w: its features differ from this build's for task %q (train it again)", ErrVersion, m.Task)
	}
	d := len(want) + 1
	switch {
	case len(m.Scale.Mean) != d-1 || len(m.Scale.Std) != d-1:
		return fmt.Errorf("%w: scale: want %d features", ErrVersion, d-1)
	case m.Failure == nil || !m.Failure.fits(d-1):
		return fmt.Errorf("%w: failure: trees over other features than the %d listed", ErrVersion, d-1)
	case m.Remaining.Mean == nil || !m.Remaining.Mean.fits(d-1) || len(m.Remaining.Spread) != d || len(m.Remaining.ByTurns) != len(turnBuckets):
		return fmt.Errorf("%w: remaining: want trees and %d weights over the features listed", ErrVersion, d)
	}
	return nil
}

func names(fs []Feature) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// Summary is one line on the model: task, data, held-out coverage and the
// gate.
func (m *Model) Summary() string {
	gate := fmt.Sprintf("impossible when P(fail) > %.4g (stops %d of %d successful and %d of %d failed held-out runs)",
		m.Gate.Threshold, m.Gate.StoppedSuccessful, m.Gate.SuccessfulRuns, m.Gate.StoppedFailed, m.Gate.FailedRuns)
	if !m.Gate.On {
		gate = "never impossible: " + m.Gate.Why
	}
	return fmt.Sprintf("task %s, %d features, fitted on %d runs (%d probes), calibrated on %d runs (%d probes): intervals cover %.3f of held-out possible probes; %s",
		m.Task, len(m.Features), m.Counts.FitRuns, m.Counts.FitProbes, m.Counts.CalibrationRuns, m.Counts.CalibrationProbe,
		m.Remaining.Covered, gate)
}
