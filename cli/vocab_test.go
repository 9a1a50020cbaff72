package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v3"
)

// walkFlags calls fn with every flag of every command, subcommands
// included, hidden ones too.
func walkFlags(cmds []*ucli.Command, prefix string, fn func(command string, f ucli.Flag)) {
	for _, c := range cmds {
		name := strings.TrimSpace(prefix + " " + c.Name)
		for _, f := range c.Flags {
			fn(name, f)
		}
		walkFlags(c.Commands, name, fn)
	}
}

// valueClass is the kind of value a flag takes, as a user sees it.
func valueClass(f ucli.Flag) string {
	switch f.(type) {
	case *ucli.BoolFlag:
		return "switch"
	case *ucli.IntFlag, *ucli.Int64Flag, *ucli.UintFlag, *ucli.Uint64Flag:
		return "integer"
	case *ucli.Float64Flag:
		return "number"
	case *ucli.DurationFlag:
		return "duration"
	case *ucli.StringSliceFlag, *ucli.IntSliceFlag, *ucli.Int64SliceFlag, *ucli.Float64SliceFlag:
		return "repeatable"
	}
	return "text"
}

// meaning is what a flag name means in one command: the kind of value, the
// placeholder its help names and, unless defaults may differ, the default.
func meaning(f ucli.Flag, withDefault bool) string {
	m := valueClass(f)
	if p := placeholder(f); p != "" {
		m += " " + p
	}
	if d, ok := f.(ucli.DocGenerationFlag); ok && withDefault {
		def := d.GetValue()
		if d.GetDefaultText() != "" {
			def = d.GetDefaultText()
		}
		m += fmt.Sprintf(" (default %s)", def)
	}
	return m
}

// Names whose default or kind of value depends on the command by design,
// each with the reason.
var (
	perCommandDefault = map[string]string{
		"n":                "each fixtures generator has its own default size",
		"noise":            "each fixtures generator has its own default skill",
		"max-turns":        "each fixtures generator has its task's turn limit",
		"concurrency":      "8 requests for eval's remote model, 2 for grpo's local embeddings",
		"model":            "grpo train embeds with an Ollama model by default; eval's is given, grpo eval's comes from the checkpoint",
		"tokenizer":        "fixtures must count tokens (Qwen's); build, probes and validate count with one when given or cached",
		"addr":             "each server has its own port: reward serve 8000, grpo serve 8788",
		"listen":           "the same flag as --addr",
		"max-body":         "each server's largest request: batches of responses for reward serve, one probe for grpo serve",
		"drain-timeout":    "the guard relays agents' streams, which run for minutes; the servers' answers take milliseconds",
		"shutdown-timeout": "the same flag as --drain-timeout",
		"task":             "the guard fronts coding agents (swebench); build and probes take the task the records name",
	}
	perCommandKind = map[string]string{
		"out":    "where the command writes: a directory for commands that write several files (build, grpo train), else a file",
		"o":      "short for --out",
		"budget": "the token budget; probes also takes median, fixtures defaults to its task's budget",
		"data":   "the data read: one parquet file or build directory, except baseline train, which fits on several build directories",
	}
)

// TestFlagVocabulary walks every command of the app, commands added later
// included, and fails when one flag name has two meanings: two kinds of
// value (a switch here, a file there), two placeholders (FILE here, DIR
// there) or two defaults (a seed of 1 here, 42 there).
func TestFlagVocabulary(t *testing.T) {
	for _, c := range vocabularyConflicts(App().Commands) {
		t.Error(c)
	}
	// The check itself catches the kinds of disagreement it is for.
	old := []*ucli.Command{
		{Name: "validate", Flags: []ucli.Flag{&ucli.BoolFlag{Name: "json"}, &ucli.Uint64Flag{Name: "seed", Value: 42, Usage: "`SEED`"}}},
		{Name: "grpo", Commands: []*ucli.Command{{Name: "train", Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "json", Usage: "`FILE`"}, &ucli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED`"},
			&ucli.StringFlag{Name: "cache", Usage: "`DIR`"}}}}},
		{Name: "eval", Flags: []ucli.Flag{&ucli.StringFlag{Name: "cache", Usage: "`FILE`"}, &ucli.Uint64Flag{Name: "seed", Value: 42}}},
	}
	want := []string{
		"--cache has 2 meanings: text DIR (default ) in grpo train; text FILE (default ) in eval",
		"--json has 2 meanings: switch (default false) in validate; text FILE (default ) in grpo train",
		"--seed has 3 meanings: integer SEED (default 1) in grpo train; integer SEED (default 42) in validate; integer uint (default 42) in eval",
	}
	if got := vocabularyConflicts(old); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("on a table with three conflicts got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// vocabularyConflicts lists the flag names of cmds with more than one
// meaning, in name order.
func vocabularyConflicts(cmds []*ucli.Command) []string {
	type use struct{ command, meaning string }
	uses := map[string][]use{}
	walkFlags(cmds, "", func(cmd string, f ucli.Flag) {
		for _, n := range f.Names() {
			if _, ok := perCommandKind[n]; ok {
				continue
			}
			_, anyDefault := perCommandDefault[n]
			uses[n] = append(uses[n], use{cmd, meaning(f, !anyDefault)})
		}
	})
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	sort.Strings(names)
	var conflicts []string
	for _, n := range names {
		byMeaning := map[string][]string{}
		for _, u := range uses[n] {
			byMeaning[u.meaning] = append(byMeaning[u.meaning], u.command)
		}
		if len(byMeaning) > 1 {
			var parts []string
			for m, cmds := range byMeaning {
				parts = append(parts, fmt.Sprintf("%s in %s", m, strings.Join(cmds, ", ")))
			}
			sort.Strings(parts)
			conflicts = append(conflicts, fmt.Sprintf("--%s has %d meanings: %s", n, len(parts), strings.Join(parts, "; ")))
		}
	}
	return conflicts
}

// getterTypes are the value types urfave/cli's getters read: c.Int("x")
// on a flag of another type is 0, silently.
var getterTypes = map[string]string{
	"Int": "int", "Int64": "int64", "Uint64": "uint64", "Float64": "float64", "Duration": "time.Duration",
	"String": "string", "StringSlice": "[]string", "Bool": "bool",
}

// Every c.Int("name")-style call in the commands reads a flag of that name
// and of the getter's type: the typed getters return zero for a flag of
// another type (c.Int of an Int64Flag), which the command would take for
// the user's value.
func TestGettersMatchFlagTypes(t *testing.T) {
	types := map[string]map[string]bool{}
	walkFlags([]*ucli.Command{App()}, "", func(_ string, f ucli.Flag) {
		for _, n := range f.Names() {
			if types[n] == nil {
				types[n] = map[string]bool{}
			}
			types[n][fmt.Sprintf("%T", f.Get())] = true
		}
	})
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset, n := token.NewFileSet(), 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			lit, isLit := call.Args[0].(*ast.BasicLit)
			want, getter := "", ok && isLit && lit.Kind == token.STRING
			if getter {
				want, getter = getterTypes[sel.Sel.Name]
			}
			if !getter || !isIdent(sel.X, "c") {
				return true
			}
			flag, _ := strconv.Unquote(lit.Value)
			n++
			if !types[flag][want] {
				t.Errorf("%s: c.%s(%q) reads a %s, but the flags named %s hold %v", fset.Position(call.Pos()), sel.Sel.Name, flag, want, flag, types[flag])
			}
			return true
		})
	}
	if n < 100 {
		t.Errorf("checked %d getter calls, want at least 100", n)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
