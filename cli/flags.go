package cli

import (
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v3"

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

// dashFlags restates err, one reason a line, as a usage error of command
// whose lines that begin with the name of one of flags ("budget: want ≥
// 0", "max body: …") begin with the flag ("--budget: want ≥ 0").
func dashFlags(command string, flags []ucli.Flag, err error) error {
	if err == nil {
		return nil
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		for _, f := range flags {
			name := f.Names()[0]
			for _, spoken := range []string{name, strings.ReplaceAll(name, "-", " ")} {
				if rest, ok := strings.CutPrefix(l, spoken); ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " ")) {
					lines[i] = "--" + name + rest
				}
			}
		}
	}
	return &UsageError{Command: command, Msg: strings.Join(lines, "\n"), Err: err}
}
