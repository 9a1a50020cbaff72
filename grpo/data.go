package grpo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// Example is a probe with its feature vector and, for SFT rows, the action
// nearest to its target answer.
type Example struct {
	Probe
	X []float64
	// Want is the action nearest to an SFT row's target answer.
	Want Action
}

// Data is everything Train reads: featurised SFT, RL and eval probes, and
// the eval rows the eval package scores against.
type Data struct {
	SFT, RL, Eval []Example
	EvalRows      []dataset.RLRow
	// Accounting is the token accounting of every probe's numbers
	// (Sources.Accounting).
	Accounting probes.AccountingKind
}

// Sources is the probe sets to featurise: the SFT, RL and eval probes and
// the eval rows. Any set may be empty.
type Sources struct {
	SFT, RL, Eval []Probe
	EvalRows      []dataset.RLRow
	// Accounting is the token accounting the files record, one for all
	// (dataset.AccountingOf); probes.AccountingUnknown for files written
	// before it was recorded.
	Accounting probes.AccountingKind
}

// ReadDir reads sft/train.parquet, rl/train.parquet and eval/test.parquet
// under dir. A missing SFT file leaves Sources.SFT empty (zero-RL needs
// none); the RL and eval files are required. The files must record one
// token accounting (Sources.Accounting).
func ReadDir(dir string) (Sources, error) {
	var s Sources
	var acc accountings
	sftPath := filepath.Join(dir, dataset.SFTFile)
	sft, err := dataset.ReadSFT(sftPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return s, fmt.Errorf("read %s: %w", sftPath, err)
	default:
		if s.SFT, err = ProbesFromSFT(sftPath, sft); err != nil {
			return s, err
		}
		acc.add(dataset.SFTFile, len(sft))(dataset.AccountingOf(sftPath, sft))
	}
	rlPath := filepath.Join(dir, dataset.RLFile)
	rl, err := dataset.ReadRL(rlPath)
	if err != nil {
		return s, fmt.Errorf("read %s: %w", rlPath, err)
	}
	if s.RL, err = ProbesFromRL(rlPath, rl); err != nil {
		return s, err
	}
	acc.add(dataset.RLFile, len(rl))(dataset.AccountingOf(rlPath, rl))
	evalPath := filepath.Join(dir, dataset.EvalFile)
	if s.EvalRows, err = dataset.ReadRL(evalPath); err != nil {
		return s, fmt.Errorf("read %s: %w", evalPath, err)
	}
	if s.Eval, err = ProbesFromRL(evalPath, s.EvalRows); err != nil {
		return s, err
	}
	acc.add(dataset.EvalFile, len(s.EvalRows))(dataset.AccountingOf(evalPath, s.EvalRows))
	s.Accounting, err = acc.one()
	return s, err
}

// accountings collects the accounting of each file read, in order.
type accountings struct {
	said []string // "sft/train.parquet message", …
	kind probes.AccountingKind
	err  error
}

// add returns the function that records the accounting of file, of n rows
// (the result of dataset.AccountingOf); a file without rows says nothing.
func (a *accountings) add(file string, n int) func(probes.AccountingKind, error) {
	return func(k probes.AccountingKind, err error) {
		switch {
		case a.err != nil, n == 0 && err == nil:
			return
		case err != nil:
			a.err = fmt.Errorf("%w: %w", ErrData, err)
		case len(a.said) > 0 && k != a.kind:
			a.err = fmt.Errorf("%w: %w: %s, %s %s; a head learns one calibration", ErrData, dataset.ErrMixedAccounting, strings.Join(a.said, ", "), file, k)
		}
		a.said, a.kind = append(a.said, file+" "+k.String()), k
	}
}

// one is the accounting every file shares; files of two are an error
// wrapping ErrData and dataset.ErrMixedAccounting.
func (a *accountings) one() (probes.AccountingKind, error) {
	if a.err != nil {
		return probes.AccountingUnknown, a.err
	}
	return a.kind, nil
}

// Featurize embeds every probe's prompt with enc (once per distinct prompt)
// and builds the examples; SFT targets are mapped to their nearest action
// in space.
func Featurize(ctx context.Context, enc *Encoder, s Sources, space Space) (*Data, Stats, error) {
	var prompts []string
	for _, set := range [][]Probe{s.SFT, s.RL, s.Eval} {
		for _, p := range set {
			prompts = append(prompts, p.Prompt)
		}
	}
	vecs, st, err := enc.Embed(ctx, prompts)
	if err != nil {
		return nil, st, err
	}
	d, err := NewData(s, vecs, space)
	return d, st, err
}

// NewData builds the examples from the probes and their embeddings, given
// in the order SFT, RL, eval.
func NewData(s Sources, vecs [][]float32, space Space) (*Data, error) {
	if n := len(s.SFT) + len(s.RL) + len(s.Eval); len(vecs) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d probes", ErrEmbed, len(vecs), n)
	}
	d := &Data{EvalRows: s.EvalRows, Accounting: s.Accounting}
	next := func(ps []Probe) []Example {
		out := make([]Example, len(ps))
		for i, p := range ps {
			out[i] = Example{Probe: p, X: Features(vecs[0], p)}
			vecs = vecs[1:]
		}
		return out
	}
	d.SFT, d.RL, d.Eval = next(s.SFT), next(s.RL), next(s.Eval)
	for i := range d.SFT {
		a, err := space.Nearest(d.SFT[i].Probe.Target, d.SFT[i].Budget)
		if err != nil {
			return nil, fmt.Errorf("sft row %d (%s): %w", i, d.SFT[i].ID, err)
		}
		d.SFT[i].Want = a
	}
	return d, nil
}

// Digest is a SHA-256 over every example's id, features, truth and target:
// a checkpoint remembers it so that a run resumes only on the same data.
func (d *Data) Digest() string {
	h := sha256.New()
	var b [8]byte
	num := func(v float64) {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	for _, set := range [][]Example{d.SFT, d.RL, d.Eval} {
		num(float64(len(set)))
		for _, e := range set {
			h.Write([]byte(e.ID))
			h.Write([]byte{0})
			for _, v := range e.X {
				num(v)
			}
			num(float64(e.Budget))
			num(float64(e.Truth.Remaining))
			num(b2f(e.Truth.Possible))
			num(b2f(e.Want.Impossible))
			num(float64(e.Want.Center))
			num(float64(e.Want.Width))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
