package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// findingCall matches the code and level of every finding the sources
// make: fs.add(CheckX, Level, "code", …), the add/say helpers with a level,
// and the Error-only add("code", …) helpers.
var findingCall = regexp.MustCompile(`(Check\w+, |\badd\(|\bsay\()(Error|Warning|Info|level)?(?:, )?"([a-z][a-z0-9-]*)"`)

// TestCatalogueListsEveryFinding keeps --help honest: every code the
// sources report is in the catalogue once, at the level it is reported
// with (trajectory checks, reported at a computed level, are listed as
// errors), and the catalogue lists no code the sources never make.
func TestCatalogueListsEveryFinding(t *testing.T) {
	listed := map[string]Level{}
	for _, e := range Catalogue {
		if _, dup := listed[e.Code]; dup {
			t.Errorf("%s is listed twice", e.Code)
		}
		listed[e.Code] = e.Level
		if strings.Contains(e.What, "\n") {
			t.Errorf("%s: description is more than one line", e.Code)
		}
	}
	files, _ := filepath.Glob("*.go")
	made := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "catalogue.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range findingCall.FindAllStringSubmatch(string(src), -1) {
			level, code := Level(strings.ToLower(m[2])), m[3]
			switch level {
			case "", "level":
				level = Error
			}
			made[code] = true
			got, ok := listed[code]
			switch {
			case !ok:
				t.Errorf("%s: code %q (%s) is not in the catalogue", name, code, level)
			case got != level:
				t.Errorf("%s: code %q is reported as %s, catalogued as %s", name, code, level, got)
			}
		}
	}
	for code := range listed {
		if !made[code] {
			t.Errorf("catalogued code %q is made nowhere", code)
		}
	}
}
