package validate

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// Counter counts the tokens of a text, as *tokenizer.Tokenizer does.
type Counter interface {
	Count(s string) int
}

// Config tunes Run. The zero value checks everything except prompt
// lengths, with 5 examples per finding.
type Config struct {
	// MaxExamples is how many offending rows each finding lists; zero
	// means 5.
	MaxExamples int
	// Counter, when set, counts prompt tokens for the length check.
	Counter Counter
	// MaxPromptTokens is the prompt length to warn above; zero means 8192
	// (verl's max_prompt_length in the paper's runs).
	MaxPromptTokens int
	// Strict makes every warning an error, for CI; false reports warnings
	// without failing.
	Strict bool
}

// Defaults of Config's zero fields.
const (
	DefaultMaxExamples     = 5
	DefaultMaxPromptTokens = 8192
)

func (c Config) withDefaults() Config {
	if c.MaxExamples <= 0 {
		c.MaxExamples = DefaultMaxExamples
	}
	if c.MaxPromptTokens <= 0 {
		c.MaxPromptTokens = DefaultMaxPromptTokens
	}
	return c
}

// Run validates the parquet files at paths (files, or dataset directories
// in build's layout) and returns the report. It returns an error only when
// the paths cannot be read as a whole (no such file, no parquet files);
// problems inside files are findings.
func Run(ctx context.Context, paths []string, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	names, manifestPath, err := discover(paths)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	v := newValidator(cfg)
	r := &Report{Findings: []Finding{}}
	var files []*file
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		files = append(files, v.open(name))
	}
	// A manifest describes a build; probe sets stand alone.
	if manifestPath != "" && slices.ContainsFunc(files, func(f *file) bool { return !f.probeSet }) {
		r.Manifest = manifestPath
		v.loadManifest(manifestPath)
	}
	v.chooseWidth(files)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v.checkFile(f)
		r.Files = append(r.Files, v.summary(f))
	}
	v.crossChecks(files)
	if v.width != nil {
		r.Width, r.WidthSource = v.width.Text, v.widthSource
	} else if w := firstProbeWidth(files); w != nil {
		r.Width, r.WidthSource = w.Text, "inferred"
	}
	v.fs.report(r, cfg.Strict)
	return r, nil
}

// validator holds the state of one Run.
type validator struct {
	cfg         Config
	fs          *findings
	manifest    *dataset.Manifest
	width       *probes.Width
	widthSource string
	// Cross-row state.
	trajs    map[string]*trajState     // trajKey → first probe seen
	splits   map[string][]trajLoc      // split → trajectories in order of first row
	inSplit  map[string]map[string]loc // split → trajectory → first row
	prompts  map[[32]byte]*trainPrompt // train prompt → where it occurs
	sysCount map[string]map[int64]loc  // group → tokens_used − Σ per_turn_tokens → first row
	budgets  map[string]budgetSeen     // group, trajectory → first budget seen
	sftTrajs map[string]*sftTraj       // SFT trajectory → its probes
	sftOrder []string                  // SFT trajectories in order of first row
	longest  int
	longLoc  loc
}

// loc is a row's position.
type loc struct {
	file string
	row  int
	id   string
}

func (l loc) example(msg string) Example {
	return Example{File: l.file, Row: l.row, CustomID: l.id, Message: msg}
}

type trajLoc struct {
	traj string
	at   loc
}

func newValidator(cfg Config) *validator {
	return &validator{
		cfg: cfg, fs: newFindings(cfg.MaxExamples),
		trajs: map[string]*trajState{}, splits: map[string][]trajLoc{},
		inSplit: map[string]map[string]loc{}, prompts: map[[32]byte]*trainPrompt{},
		sysCount: map[string]map[int64]loc{}, budgets: map[string]budgetSeen{},
		sftTrajs: map[string]*sftTraj{},
	}
}

func (v *validator) loadManifest(path string) {
	m, err := readManifest(path)
	if err != nil {
		v.fs.add(CheckLabels, Warning, "manifest", path, "manifest.json cannot be read; labels are checked against an inferred width",
			Example{File: path, Row: -1, Message: err.Error()})
		return
	}
	v.manifest = m
}

// open reads a file's schema and, when it matches, its rows.
func (v *validator) open(path string) *file {
	f := &file{path: path, split: splitOf(path, "")}
	pf, closeFile, err := openParquet(path)
	if err != nil {
		v.fs.add(CheckSchema, Error, "not-parquet", path, "file cannot be read as parquet",
			Example{File: path, Row: -1, Message: err.Error()})
		return f
	}
	defer closeFile()
	f.schema = dataset.TypeOf(pf.Schema())
	f.numRows = int(pf.NumRows())
	kind, ok := kindOf(path, f.schema)
	if !ok {
		v.fs.add(CheckSchema, Error, "unknown-kind", path,
			"file has neither an SFT messages column nor RL prompt/reward_model/extra_info columns; put it in sft/, rl/ or eval/",
			Example{File: path, Row: -1, Message: "columns: " + f.schema.String()})
		return f
	}
	f.kind, f.split = kind, splitOf(path, kind)
	if !v.checkSchema(f) {
		return f
	}
	v.readRows(f)
	return f
}

func openParquet(path string) (*parquet.File, func(), error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return pf, func() { fh.Close() }, nil
}

func (v *validator) readRows(f *file) {
	var err error
	if f.kind == kindSFT {
		f.sft, err = dataset.ReadSFT(f.path)
	} else {
		f.rl, err = dataset.ReadRL(f.path)
	}
	if err != nil {
		v.fs.add(CheckSchema, Error, "unreadable-rows", f.path, "rows cannot be read with the expected schema",
			Example{File: f.path, Row: -1, Message: err.Error()})
		return
	}
	f.checked = true
	if f.kind == kindRL && isProbeSet(f.path, f.rl) {
		f.probeSet, f.split = true, dataset.SplitProbes
	}
	if f.rows() == 0 {
		v.fs.add(CheckSize, Warning, "empty-file", f.path, "file has no rows", Example{File: f.path, Row: -1, Message: "0 rows"})
	}
}

func (v *validator) summary(f *file) FileSummary {
	s := FileSummary{Path: f.path, Kind: f.kind, Split: f.split, Rows: f.numRows, Checked: f.checked}
	for _, row := range f.rl {
		if row.ExtraInfo.IsPossible {
			s.Possible++
		} else {
			s.Impossible++
		}
	}
	for _, row := range f.sft {
		if possible, ok := sftClass(row); ok && possible {
			s.Possible++
		} else if ok {
			s.Impossible++
		}
	}
	return s
}
