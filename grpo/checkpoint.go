package grpo

import (
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"bagen-data/internal/atomicfile"
	"bagen-data/probes"
)

// Files and directories of a run's output directory.
const (
	CheckpointDir = "checkpoints"   // one subdirectory per epoch
	LatestFile    = "latest"        // in CheckpointDir: the newest checkpoint's name
	StateFile     = "state.gob"     // in a checkpoint: the State
	ConfigFile    = "config.json"   // in a checkpoint: the Config, for people
	LogFile       = "train.jsonl"   // the training log
	PlotFile      = "plot.html"     // reward and eval metrics per epoch
	EvalFile      = "eval.json"     // the latest epoch's eval.Run
	PredsFile     = "preds.jsonl"   // the latest epoch's eval answers
	stateVersion  = "bagen-grpo/v1" // State.Version
)

// State is everything a run needs to continue exactly where it stopped:
// weights, optimiser moments, the random stream and the position in the
// schedule.
type State struct {
	Version string
	Config  Config // with defaults applied
	Model   string // the Ollama model that embedded the data
	Data    string // Data.Digest of the data it was trained on
	// Accounting is the token accounting of the data it was trained on
	// (Data.Accounting): the numbers it must be asked with. A checkpoint
	// written before it was kept reads as probes.AccountingUnknown.
	Accounting probes.AccountingKind
	Phase      string // "sft" or "grpo"
	Epoch      int    // epochs finished in Phase
	Step       int    // optimiser steps taken, both phases
	Policy     *Head
	Ref        *Head // the frozen reference head; nil during SFT
	Opt        *Adam
	RNG        []byte // the PCG stream's MarshalBinary state
	LogSize    int64  // bytes of train.jsonl that belong to this state
}

// name is the checkpoint directory's name, e.g. "grpo-03".
func (st *State) name() string { return fmt.Sprintf("%s-%02d", st.Phase, st.Epoch) }

// save writes st as out/checkpoints/<phase>-<epoch>/ and then points
// out/checkpoints/latest at it, so a crash mid-save leaves the previous
// checkpoint current.
func (st *State) save(out string) error {
	dir := filepath.Join(out, CheckpointDir, st.name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	err := atomicfile.Write(filepath.Join(dir, StateFile), func(w io.Writer) error { return gob.NewEncoder(w).Encode(st) })
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	cfg, err := json.MarshalIndent(st.Config, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ConfigFile), append(cfg, '\n')); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(out, CheckpointDir, LatestFile), []byte(st.name()+"\n")); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// LoadState reads a checkpoint. path is a checkpoint directory, its
// state.gob, or a run's output directory (its latest checkpoint).
func LoadState(path string) (*State, error) {
	file, err := stateFile(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	defer f.Close()
	var st State
	if err := gob.NewDecoder(f).Decode(&st); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", file, ErrCheckpoint, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("%s: %w: version %q, want %q", file, ErrCheckpoint, st.Version, stateVersion)
	}
	if st.Policy == nil || st.Opt == nil {
		return nil, fmt.Errorf("%s: %w: no policy or optimiser", file, ErrCheckpoint)
	}
	st.Config.restoreZeros()
	return &st, nil
}

// stateFile resolves path to a state.gob.
func stateFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if !fi.IsDir() {
		return path, nil
	}
	if exists(filepath.Join(path, StateFile)) {
		return filepath.Join(path, StateFile), nil
	}
	latest, err := os.ReadFile(filepath.Join(path, CheckpointDir, LatestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w: no %s and no %s/%s", path, ErrCheckpoint, StateFile, CheckpointDir, LatestFile)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return filepath.Join(path, CheckpointDir, strings.TrimSpace(string(latest)), StateFile), nil
}

// verifyLog reads the first size bytes of the training log at path, the
// part a checkpoint owns, without modifying it: they must exist, end with
// a whole record and decode. Anything after them (epochs logged after the
// checkpoint) is dropped by the resume.
func verifyLog(path string, size int64) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if fi.Size() < size {
		return nil, fmt.Errorf("%s: %w: %d bytes, the checkpoint was taken at %d: the log was truncated or replaced (restore it, or start a new run in a new directory)", path, ErrCheckpoint, fi.Size(), size)
	}
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrCheckpoint, err)
		}
		if last[0] != '\n' {
			return nil, fmt.Errorf("%s: %w: byte %d, where the checkpoint's part ends, is not the end of a record: the log was modified", path, ErrCheckpoint, size)
		}
	}
	recs, err := decodeLog(io.LimitReader(f, size), path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return recs, nil
}

// restoreZeros undoes gob's flattening: gob sends no zero values, so a
// pointer field saved as a pointer to 0 comes back nil. A saved Config had
// its defaults applied, so nil there can only have been 0.
func (c *Config) restoreZeros() {
	for _, p := range []**float64{&c.KL, &c.Clip} {
		if *p == nil {
			*p = new(0.0)
		}
	}
	for _, p := range []**int{&c.SFTEpochs, &c.Epochs} {
		if *p == nil {
			*p = new(0)
		}
	}
}
