package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the module's directory, seen from this package's.
const root = "../.."

// floorRow is one row of ARCHITECTURE.md's floor table: "| 3 | `a`, `b` | ... |".
var floorRow = regexp.MustCompile(`^\|\s*(\d+)\s*\|([^|]*)\|`)

// backticked finds `code` spans.
var backticked = regexp.MustCompile("`([^`]+)`")

// readFloors reads the floor of each package the plan names, failing on a
// package named twice.
func readFloors(plan string) (map[string]int, error) {
	floors := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(plan))
	for n := 1; sc.Scan(); n++ {
		m := floorRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		floor, _ := strconv.Atoi(m[1])
		for _, p := range backticked.FindAllStringSubmatch(m[2], -1) {
			if _, dup := floors[p[1]]; dup {
				return nil, fmt.Errorf("ARCHITECTURE.md:%d: package %s is on two floors", n, p[1])
			}
			floors[p[1]] = floor
		}
	}
	if len(floors) == 0 {
		return nil, fmt.Errorf("ARCHITECTURE.md: no floor table")
	}
	return floors, nil
}

// pkg is one package of the module as its non-test files show it.
type pkg struct {
	imports []string // this module's packages it imports, module prefix cut
	doc     bool     // some file carries a package comment
}

// walkSource parses every non-test Go file under dir, leaving out tools/
// (programs above the house), testdata and hidden folders, and calls fn
// with its path relative to dir.
func walkSource(dir string, mode parser.Mode, fn func(rel string, fset *token.FileSet, f *ast.File)) error {
	fset := token.NewFileSet()
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "tools" || d.Name() == "testdata" || (rel != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		fn(rel, fset, f)
		return nil
	})
}

// readPackages reads the imports and package comments of every package
// under dir.
func readPackages(dir, module string) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	err := walkSource(dir, parser.ImportsOnly|parser.ParseComments, func(rel string, _ *token.FileSet, f *ast.File) {
		name := filepath.ToSlash(filepath.Dir(rel))
		p := pkgs[name]
		if p == nil {
			p = &pkg{}
			pkgs[name] = p
		}
		p.doc = p.doc || f.Doc != nil
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if cut, ok := strings.CutPrefix(path, module+"/"); ok && !slices.Contains(p.imports, cut) {
				p.imports = append(p.imports, cut)
			}
		}
	})
	return pkgs, err
}

// TestArchitectureMatchesImports holds ARCHITECTURE.md's floor table
// against the code: every package is on exactly one floor, imports only
// packages on lower floors, and says in its package comment what it owns;
// every file or folder the plan names exists.
func TestArchitectureMatchesImports(t *testing.T) {
	plan, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	floors, err := readFloors(string(plan))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := readPackages(root, "bagen-data")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems(floors, pkgs) {
		t.Error(p)
	}
	for _, m := range backticked.FindAllStringSubmatch(string(plan), -1) {
		name := m[1]
		if !strings.Contains(name, "/") || strings.ContainsAny(name, "<* ") || !strings.ContainsAny(name, ".") && !strings.HasSuffix(name, "/") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("ARCHITECTURE.md names %s, which does not exist", name)
		}
	}
}

// problems lists where the code and the floor table disagree.
func problems(floors map[string]int, pkgs map[string]*pkg) []string {
	var out []string
	for _, name := range sortedKeys(pkgs) {
		p := pkgs[name]
		floor, ok := floors[name]
		if !ok {
			out = append(out, fmt.Sprintf("package %s is on no floor of ARCHITECTURE.md", name))
			continue
		}
		if !p.doc {
			out = append(out, fmt.Sprintf("package %s has no package comment saying what it owns", name))
		}
		for _, im := range p.imports {
			if f, ok := floors[im]; ok && f >= floor {
				out = append(out, fmt.Sprintf("%s (floor %d) imports %s (floor %d): arrows point down only", name, floor, im, f))
			}
		}
	}
	for _, name := range sortedKeys(floors) {
		if pkgs[name] == nil {
			out = append(out, fmt.Sprintf("ARCHITECTURE.md names package %s, which does not exist", name))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestArchitectureCheckCanFail feeds the check a plan and a tree that
// disagree in each way it looks for.
func TestArchitectureCheckCanFail(t *testing.T) {
	floors, err := readFloors("| 0 | `low` |\n| 1 | `high`, `gone` |\n")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*pkg{
		"low":    {imports: []string{"high"}, doc: true},
		"high":   {imports: []string{"low"}},
		"orphan": {doc: true},
	}
	want := []string{
		"package high has no package comment saying what it owns",
		"low (floor 0) imports high (floor 1): arrows point down only",
		"package orphan is on no floor of ARCHITECTURE.md",
		"ARCHITECTURE.md names package gone, which does not exist",
	}
	if got := problems(floors, pkgs); !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
	if _, err := readFloors("| 0 | `a` |\n| 1 | `a` |\n"); err == nil || err.Error() != "ARCHITECTURE.md:2: package a is on two floors" {
		t.Errorf("duplicate: %v", err)
	}
}

// maxFuncLines is the longest a function outside tools/ and tests may be,
// counted from its func keyword to its closing brace.
const maxFuncLines = 60

// TestNoLongFunctions keeps every function of the library and the
// command short enough to read at once.
func TestNoLongFunctions(t *testing.T) {
	long, err := longFunctions(root, maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range long {
		t.Error(l)
	}
}

// longFunctions lists the functions over max lines in the non-test Go
// files under dir, leaving out tools/ and testdata.
func longFunctions(dir string, max int) ([]string, error) {
	var long []string
	err := walkSource(dir, parser.SkipObjectResolution, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > max {
				long = append(long, fmt.Sprintf("%s:%d: %s is %d lines (at most %d)", rel, start.Line, fn.Name.Name, n, max))
			}
		}
	})
	return long, err
}

// TestLongFunctionsFindsOne writes a function of 61 lines, one of 60 and a
// long one in a test file and in tools/, and expects only the first named.
func TestLongFunctionsFindsOne(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	files := map[string]string{
		"a/a.go":       "package a\n\n" + body("long", 61) + body("fits", 60),
		"a/a_test.go":  "package a\n\n" + body("inTest", 90),
		"tools/t/t.go": "package main\n\n" + body("inTools", 90),
	}
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := longFunctions(dir, maxFuncLines)
	want := []string{"a/a.go:3: long is 61 lines (at most 60)"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("longFunctions = %q, %v; want %q", got, err, want)
	}
}
