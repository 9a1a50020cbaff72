package validate

import (
	"fmt"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// checkAccounting reads the token accounting a file's rows record
// (dataset.AccountingOf) into f.accounting and checks it: one known kind
// per file, the manifest's config.accounting in a build, the replay in a
// probe set (probes counts no other way). A file that records none
// (written before the column) is noted; its rows are then checked as the
// message rule's, a probe set's as the replay's.
func (v *validator) checkAccounting(f *file) {
	var err error
	if f.kind == kindSFT {
		f.accounting, err = dataset.AccountingOf(f.path, f.sft)
	} else {
		f.accounting, err = dataset.AccountingOf(f.path, f.rl)
	}
	bad := func(msg string) {
		v.fs.add(CheckLabels, Error, "accounting", f.path, "rows whose accounting is unknown, mixed, or not the manifest's (a probe set's: replay)",
			Example{File: f.path, Row: -1, Message: msg})
	}
	want := probes.AccountingUnknown
	switch {
	case f.probeSet:
		want = probes.AccountingReplay
	case v.manifest != nil:
		want = v.manifest.Config.Accounting
	}
	switch {
	case err != nil:
		bad(err.Error())
	case f.accounting == probes.AccountingUnknown:
		if f.rows() > 0 && !allWarehouse(f) {
			v.fs.add(CheckLabels, Info, "accounting-unknown", f.path, "files that record no token accounting (written before it was recorded): checked as the message rule's, a probe set's as the replay's",
				Example{File: f.path, Row: -1, Message: "no accounting recorded"})
		}
	case want != probes.AccountingUnknown && f.accounting != want:
		bad(fmt.Sprintf("the rows record %s, the %s %s", f.accounting, wantSource(f), want))
	}
	if v.manifest != nil && !f.probeSet && want != probes.AccountingUnknown && !want.Known() {
		bad(fmt.Sprintf("the manifest's config.accounting is %q, want %s or %s", string(want), probes.AccountingMessage, probes.AccountingReplay))
	}
}

func wantSource(f *file) string {
	if f.probeSet {
		return "probes command writes"
	}
	return "manifest says"
}

// allWarehouse reports whether every row of an RL file is a Warehouse
// probe, which counts no tokens and records no accounting.
func allWarehouse(f *file) bool {
	if f.kind == kindSFT {
		return false
	}
	for _, r := range f.rl {
		if !isWarehouse(r) {
			return false
		}
	}
	return true
}

// perRollout reports whether the system prompt's share of tokens_used is
// the rollout's own rather than one count per build: under the replay
// (a probe set, or a build that records it) it is 0 where the log's first
// request holds the system prompt and the task's count where the log
// records no inputs, and per_turn_tokens' inputs are request deltas, not
// the shown user messages' counts.
func (f *file) perRollout() bool {
	return f.probeSet || f.accounting == probes.AccountingReplay
}
