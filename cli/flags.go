package cli

import (
	"os"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"bagen-data/dataset"
)

// Flags shared by several commands, declared once so that one name keeps
// one meaning (TestFlagVocabulary checks the whole table).

// dataFlag is --data: a parquet file of probes, or the dataset directory
// build wrote, whose eval split is meant (see dataFile).
func dataFlag(what string) *ucli.StringFlag {
	return &ucli.StringFlag{Name: "data", Usage: what + " `PATH`: a parquet file, or a directory build wrote (its " + dataset.EvalFile + ")"}
}

// withRequired marks f required.
func withRequired(f *ucli.StringFlag) *ucli.StringFlag {
	f.Required = true
	return f
}

// dataFile is the parquet file --data names: path itself, or the eval
// split of the dataset directory path.
func dataFile(path string) string {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, filepath.FromSlash(dataset.EvalFile))
	}
	return path
}
