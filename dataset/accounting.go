package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"bagen-data/probes"
)

// ErrMixedAccounting means the rows of one dataset record different token
// accountings.
var ErrMixedAccounting = errors.New("rows of different token accountings")

// AccountingOf is the token accounting rows record (ExtraInfo.Accounting
// of RL rows, Accounting of SFT rows): the one kind they share, or
// probes.AccountingUnknown when none records one (a file written before
// the column). Rows that disagree are an error wrapping
// ErrMixedAccounting that names path and the first row that differs; so is
// a value that is not a known kind. Warehouse probes, which count no
// tokens and record none, are skipped.
func AccountingOf[R RLRow | SFTRow](path string, rows []R) (probes.AccountingKind, error) {
	kind, first := probes.AccountingUnknown, -1
	for i, r := range rows {
		k, ok := rowAccounting(r)
		if !ok {
			continue
		}
		if k != probes.AccountingUnknown && !k.Known() {
			return kind, fmt.Errorf("%s: row %d: accounting %q: want %s or %s", path, i, string(k), probes.AccountingMessage, probes.AccountingReplay)
		}
		if first < 0 {
			kind, first = k, i
			continue
		}
		if k != kind {
			return kind, fmt.Errorf("%s: row %d: %w: %s, row %d %s", path, i, ErrMixedAccounting, k, first, kind)
		}
	}
	return kind, nil
}

// rowAccounting is a row's accounting; false for a Warehouse probe.
func rowAccounting(r any) (probes.AccountingKind, bool) {
	switch r := r.(type) {
	case RLRow:
		return r.ExtraInfo.Accounting, r.DataSource != "budget_probe_warehouse"
	case SFTRow:
		return r.Accounting, true
	}
	panic("dataset: rowAccounting of a row that is neither RLRow nor SFTRow")
}

// ReadAccounting is the accounting of the build in dir, as its
// manifest.json records it (config.accounting): what an estimator trained
// on dir keeps to check what it is later asked with. A dir without a
// manifest, or a manifest written before the field, gives
// probes.AccountingUnknown and no error; an unreadable manifest or an
// unknown kind is an error naming the file.
func ReadAccounting(dir string) (probes.AccountingKind, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return probes.AccountingUnknown, nil
	}
	if err != nil {
		return probes.AccountingUnknown, err
	}
	m, err := ReadManifest(b)
	if err != nil {
		return probes.AccountingUnknown, fmt.Errorf("%s: %w", path, err)
	}
	if k := m.Config.Accounting; k != probes.AccountingUnknown && !k.Known() {
		return probes.AccountingUnknown, fmt.Errorf("%s: config.accounting %q: want %s or %s", path, string(k), probes.AccountingMessage, probes.AccountingReplay)
	}
	return m.Config.Accounting, nil
}
