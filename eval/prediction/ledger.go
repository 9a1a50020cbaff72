package prediction

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"bagen-data/dataset"
	"bagen-data/rollout"
)

// ReadLedger reads the live estimates of a `bagen-data guard --ledger DIR`
// directory as predictions, one per "estimate" event, in file-name then
// line order: custom_id is the probe id that build and probes give the
// session's probe after that turn (<session>_probe_after_turn_<k>),
// response the estimator's raw answer, usage the estimator's tokens. An
// estimate the estimator never answered ("unestimated") is a failure
// line with its error. Other events are skipped, and so is a last line
// cut by a crash; any other malformed line is a *LineError naming the
// session file and line.
func ReadLedger(dir string) ([]Prediction, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Prediction
	for _, f := range files {
		preds, err := readLedgerFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, preds...)
	}
	return out, nil
}

// readLedgerFile reads the estimates of one session file.
func readLedgerFile(path string) ([]Prediction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Prediction
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	last := bytes.Count(bytes.TrimRight(data, "\n"), []byte("\n")) + 1
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		p, ok, err := ledgerLine(sc.Bytes())
		if err != nil && line == last && !bytes.HasSuffix(data, []byte("\n")) {
			break // cut by a crash: every completed event is before it
		}
		if err != nil {
			return nil, &LineError{File: path, Line: line, Err: err}
		}
		if ok {
			p.Line = line
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ledgerLine decodes one ledger event; ok is false for events that are
// not estimates.
func ledgerLine(b []byte) (Prediction, bool, error) {
	var e rollout.GuardEstimate
	if err := json.Unmarshal(b, &e); err != nil {
		return Prediction{}, false, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	if e.Event != "estimate" {
		return Prediction{}, false, nil
	}
	switch {
	case e.Session == "":
		return Prediction{}, false, fmt.Errorf("session: %w", ErrMissing)
	case e.AfterTurn < 1:
		return Prediction{}, false, fmt.Errorf("after_turn: want ≥ 1, got %d", e.AfterTurn)
	}
	p := Prediction{CustomID: e.Session + dataset.ProbeSuffix + strconv.Itoa(e.AfterTurn), LatencyMS: e.LatencyMS}
	if e.Verdict == "unestimated" {
		p.Error = e.Error
		if p.Error == "" {
			p.Error = "unestimated"
		}
		return p, true, nil
	}
	p.Response = e.Response
	if e.EstimatorInput != 0 || e.EstimatorOutput != 0 {
		p.Usage = &Usage{PromptTokens: e.EstimatorInput, CompletionTokens: e.EstimatorOutput, CachedTokens: e.EstimatorCached}
	}
	return p, true, nil
}
