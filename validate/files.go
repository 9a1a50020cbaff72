package validate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// Kinds of file, by schema.
const (
	kindSFT = dataset.SplitSFT
	kindRL  = dataset.SplitRL
)

// file is one parquet file under validation.
type file struct {
	path    string
	kind    string // kindSFT or kindRL
	split   string // dataset.SplitSFT, SplitRL, SplitEval or dataset.SplitProbes
	schema  dataset.Type
	numRows int // from the file's metadata
	sft     []dataset.SFTRow
	rl      []dataset.RLRow
	checked bool
	// probeSet marks a benchmark probe set (isProbeSet); width is then its
	// own target width, inferred from its rows.
	probeSet bool
	width    *probes.Width
	// accounting is the token accounting the rows record (checkAccounting).
	accounting probes.AccountingKind
}

func (f *file) rows() int {
	if f.kind == kindSFT {
		return len(f.sft)
	}
	return len(f.rl)
}

// discover expands paths into parquet files and finds the manifest: a
// directory in build's layout contributes its three split files (and its
// manifest.json); any other directory every *.parquet below it.
func discover(paths []string) (files []string, manifest string, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, "", err
		}
		if !st.IsDir() {
			files = append(files, p)
			if manifest == "" {
				manifest = manifestNear(p)
			}
			continue
		}
		found, m, err := discoverDir(p)
		if err != nil {
			return nil, "", err
		}
		files = append(files, found...)
		if manifest == "" {
			manifest = m
		}
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("%s: %w", strings.Join(paths, ", "), ErrNoFiles)
	}
	return files, manifest, nil
}

func discoverDir(dir string) (files []string, manifest string, err error) {
	for _, name := range []string{dataset.SFTFile, dataset.RLFile, dataset.EvalFile} {
		if p := filepath.Join(dir, filepath.FromSlash(name)); exists(p) {
			files = append(files, p)
		}
	}
	if m := filepath.Join(dir, dataset.ManifestFile); exists(m) {
		manifest = m
	}
	if len(files) > 0 {
		return files, manifest, nil
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, manifest, err
}

// manifestNear finds the manifest of a file given on its own: next to it,
// or one level up when it sits in an sft/, rl/ or eval/ directory.
func manifestNear(path string) string {
	dir := filepath.Dir(path)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if m := filepath.Join(d, dataset.ManifestFile); exists(m) {
			return m
		}
	}
	return ""
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// inLayout reports a file in an sft/, rl/ or eval/ directory, whose split
// the directory names.
func inLayout(path string) bool {
	switch filepath.Base(filepath.Dir(path)) {
	case dataset.SplitSFT, dataset.SplitRL, dataset.SplitEval:
		return true
	}
	return false
}

// isProbeSet reports a benchmark probe set: a file outside build's sft/,
// rl/ and eval/ directories whose rows mostly say extra_info.split
// "probes". Such a file stands alone: it is no split of a build, so the
// leakage checks and the manifest do not apply to it.
func isProbeSet(path string, rows []dataset.RLRow) bool {
	if inLayout(path) || len(rows) == 0 {
		return false
	}
	n := 0
	for _, r := range rows {
		if r.ExtraInfo.Split == dataset.SplitProbes {
			n++
		}
	}
	return 2*n > len(rows)
}

// splitOf names the split of a file: its directory when that is sft, rl or
// eval, else a guess from the file name.
func splitOf(path, kind string) string {
	switch d := filepath.Base(filepath.Dir(path)); d {
	case dataset.SplitSFT, dataset.SplitRL, dataset.SplitEval:
		return d
	}
	if kind == kindSFT {
		return dataset.SplitSFT
	}
	base := strings.ToLower(filepath.Base(path))
	for _, s := range []string{"test", "eval", "val"} {
		if strings.Contains(base, s) {
			return dataset.SplitEval
		}
	}
	return dataset.SplitRL
}

// kindOf decides which schema a file should have: from its directory, else
// from its columns (messages → SFT; prompt, reward_model or extra_info →
// RL). ok is false when neither tells.
func kindOf(path string, t dataset.Type) (kind string, ok bool) {
	switch filepath.Base(filepath.Dir(path)) {
	case dataset.SplitSFT:
		return kindSFT, true
	case dataset.SplitRL, dataset.SplitEval:
		return kindRL, true
	}
	has := func(name string) bool {
		return slices.ContainsFunc(t.Fields, func(f dataset.Field) bool { return f.Name == name })
	}
	switch {
	case has("messages"):
		return kindSFT, true
	case has("prompt") || has("reward_model") || has("extra_info"):
		return kindRL, true
	}
	return "", false
}

// readManifest reads the build's manifest (dataset.ReadManifest).
func readManifest(path string) (*dataset.Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := dataset.ReadManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
