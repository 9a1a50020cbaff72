package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"bagen-data/internal/atomicfile"
)

// WriteRun saves r as ReadRun reads it: indented JSON, one newline at the
// end, written atomically; path "-" is standard output.
func WriteRun(path string, r Run) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	})
}

// ReadRun reads a Run saved as JSON (eval --json, grpo's eval.json). A file
// with no scored probe is not a run; a run without a name is named after
// the file.
func ReadRun(path string) (Run, error) {
	var r Run
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Metrics.Probes == 0 {
		return r, fmt.Errorf("%s: not a saved eval run (no probes scored)", path)
	}
	if r.Name == "" {
		r.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return r, nil
}
