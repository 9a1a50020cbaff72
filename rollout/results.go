package rollout

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// Results are outcomes read from results files, joined on instance ids. A
// Results is read-only after LoadResults and safe for concurrent use.
type Results struct {
	resolved map[string]bool   // instance id -> resolved
	from     map[string]string // instance id -> file that says so
	files    []File
	byID     map[string]bool   // trajectory id -> success (--success-file)
	byIDFrom map[string]string // trajectory id -> file that says so
}

// File is a results file as read: its path, size and SHA-256 (hex), for
// the manifest of what a build read.
type File struct {
	Path   string
	Bytes  int64
	SHA256 string
}

// Files lists the results files in the order they were loaded; nil for a
// nil Results.
func (r *Results) Files() []File {
	if r == nil {
		return nil
	}
	return r.files
}

// resultIDLists are the id lists of a SWE-bench harness report
// (swebench/harness/reporting.py, schema_version 2) that name instances
// with a verdict; an instance is resolved iff it is in resolved_ids.
var resultIDLists = []string{"resolved_ids", "unresolved_ids", "completed_ids", "submitted_ids", "empty_patch_ids", "error_ids", "incomplete_ids"}

// LoadResults reads SWE-bench harness reports (the JSON file
// run_evaluation writes, with resolved_ids). An instance that two reports
// judge differently is an error.
func LoadResults(paths []string) (*Results, error) {
	r := &Results{resolved: map[string]bool{}, from: map[string]string{}}
	for _, p := range paths {
		if err := r.load(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readFile reads one outcome file whole, records its size and SHA-256 for
// the manifest, and returns it as a record without its byte-order mark,
// checked to be UTF-8.
func (r *Results) readFile(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	sum := sha256.Sum256(data)
	r.files = append(r.files, File{Path: path, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
	rec := Record{Pos: Position{File: path, Index: -1}, Data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))}
	if _, err := checkUTF8(rec); err != nil {
		return Record{}, err
	}
	return rec, nil
}

func (r *Results) load(path string) error {
	rec, err := r.readFile(path)
	if err != nil {
		return err
	}
	var lists map[string]json.RawMessage
	if err := json.Unmarshal(rec.Data, &lists); err != nil {
		return rec.Errorf("", "want a SWE-bench report (a JSON object with resolved_ids): %w", JSONCause(err))
	}
	if _, ok := lists["resolved_ids"]; !ok {
		return rec.Errorf("resolved_ids", "missing: want a SWE-bench harness report")
	}
	for _, name := range resultIDLists {
		var ids []string
		if v, ok := present(lists[name]); ok {
			if err := json.Unmarshal(v, &ids); err != nil {
				return rec.Errorf(name, "want an array of instance ids, got %s", clipJSON(v))
			}
		}
		for _, id := range ids {
			if err := r.set(path, id, name == "resolved_ids"); err != nil {
				return rec.Errorf(name, "%w", err)
			}
		}
	}
	return nil
}

func (r *Results) set(path, id string, resolved bool) error {
	if prev, ok := r.resolved[id]; ok {
		if r.from[id] == path {
			r.resolved[id] = prev || resolved
			return nil
		}
		if prev != resolved {
			return fmt.Errorf("instance %q is resolved in one report and not in the other (%s)", id, r.from[id])
		}
		return nil
	}
	r.resolved[id], r.from[id] = resolved, path
	return nil
}

// Len is the number of instances with a verdict.
func (r *Results) Len() int { return len(r.resolved) }

// IDs lists the instances with a verdict, sorted.
func (r *Results) IDs() []string {
	ids := make([]string, 0, len(r.resolved))
	for id := range r.resolved {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// join sets t's outcome from the results when they judge its instance.
func (r *Results) join(t *Trajectory) {
	if r.joinID(t) {
		return
	}
	if v, ok := r.resolved[t.Extra.Instance]; ok && t.Extra.Instance != "" {
		t.Success, t.Outcome, t.Extra.BySuccessRule = v, OutcomeResults, nil
	}
}
