package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"bagen-data/internal/atomicfile"
)

// UsageError is a command line that does not parse: an unknown command or
// flag, a flag without its value, a required flag missing. Main prints it
// as one line and exits 2.
type UsageError struct {
	Command string // "reward score"; empty for the tool itself
	Msg     string
	Err     error // the library's error Msg restates, if any
}

// Unwrap returns the library's error, if any.
func (e *UsageError) Unwrap() error { return e.Err }

// usage restates err, about a flag or an argument, as a UsageError of
// command ("build"); nil stays nil.
func usage(command string, err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Command: command, Msg: strings.TrimPrefix(err.Error(), command+": "), Err: err}
}

func (e *UsageError) Error() string {
	if e.Command == "" {
		return e.Msg
	}
	return e.Command + ": " + e.Msg
}

// invocation is a command line resolved against the app: the command it
// names and the flags it gives.
type invocation struct {
	path  []*ucli.Command     // the commands named, outermost first
	given map[string][]string // flag values by the flag's first name, in order
	help  bool                // --help, -h or `help CMD`
}

// name is the command as the user types it: "reward score".
func (inv *invocation) name() string {
	names := make([]string, len(inv.path))
	for i, c := range inv.path {
		names[i] = c.Name
	}
	return strings.Join(names, " ")
}

func (inv *invocation) leaf() *ucli.Command {
	if len(inv.path) == 0 {
		return nil
	}
	return inv.path[len(inv.path)-1]
}

// normalize reads args (program name first) against app the way the
// commands mean them and returns them in the order urfave/cli parses:
// global flags, the command names, the command's flags, then "--" and the
// positional arguments. Flags may so stand after positional arguments
// (urfave/cli stops at the first). `help CMD` becomes `CMD --help`.
// Unknown commands and flags, flags without a value and missing required
// flags are a *UsageError naming the nearest valid spelling.
func normalize(app *ucli.App, args []string) ([]string, *invocation, error) {
	inv := &invocation{given: map[string][]string{}}
	if len(args) == 0 || slices.Contains(args[1:], "--generate-bash-completion") {
		return args, inv, nil // urfave/cli's shell completion reads the line as it is
	}
	rest := args[1:]
	if len(rest) > 0 && rest[0] == "help" {
		rest = append(append([]string{}, rest[1:]...), "--help")
	}
	var globals, flags, pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			pos = append(pos, rest[i+1:]...)
			i = len(rest)
		case !isFlag(a):
			sub := subcommands(app, inv)
			if len(sub) == 0 || len(pos) > 0 {
				pos = append(pos, a)
				break
			}
			c := find(sub, a)
			if c == nil {
				return nil, inv, unknownCommand(inv, sub, a)
			}
			inv.path = append(inv.path, c)
		default:
			tokens, global, err := readFlag(app, inv, rest, &i)
			if err != nil {
				return nil, inv, err
			}
			if global {
				globals = append(globals, tokens...)
			} else {
				flags = append(flags, tokens...)
			}
		}
	}
	if err := checkRequired(inv); err != nil {
		return nil, inv, err
	}
	out := append([]string{args[0]}, globals...)
	for _, c := range inv.path {
		out = append(out, c.Name)
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(append(out, "--"), pos...)
	}
	return out, inv, nil
}

// readFlag reads the flag at rest[*i], and its value from the next word
// when it takes one and has no "=" (moving *i past it), into inv; it
// returns the words to pass on and whether the flag is the app's.
func readFlag(app *ucli.App, inv *invocation, rest []string, i *int) ([]string, bool, error) {
	a := rest[*i]
	name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	if name == "help" || name == "h" {
		inv.help = true
		return []string{a}, false, nil
	}
	f, global := lookupFlag(app, inv, name)
	if f == nil {
		return nil, false, unknownFlag(app, inv, name)
	}
	tokens := []string{a}
	if takesValue(f) && !hasValue {
		if *i+1 == len(rest) {
			return nil, false, &UsageError{Command: inv.name(), Msg: fmt.Sprintf("--%s needs a value (%s)", name, placeholder(f))}
		}
		*i++
		value = rest[*i]
		if strings.HasPrefix(value, "--") && len(value) > 2 {
			return nil, false, &UsageError{Command: inv.name(), Msg: fmt.Sprintf("--%s needs a value (%s), got the flag %s", name, placeholder(f), value)}
		}
		tokens = append(tokens, value)
	}
	inv.given[f.Names()[0]] = append(inv.given[f.Names()[0]], value)
	return tokens, global, nil
}

// isFlag reports whether a command-line word is a flag ("-" alone is a
// value: standard input or output).
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// subcommands are what the next command name may be: the app's commands,
// or the subcommands of the last command named.
func subcommands(app *ucli.App, inv *invocation) []*ucli.Command {
	if c := inv.leaf(); c != nil {
		return c.Subcommands
	}
	return app.Commands
}

func find(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// lookupFlag finds name among the flags of the command named so far (for a
// command whose subcommand is not named yet: of its subcommands) and then
// the app's global flags.
func lookupFlag(app *ucli.App, inv *invocation, name string) (ucli.Flag, bool) {
	for _, f := range commandFlags(subtree(app, inv)) {
		if hasName(f, name) {
			return f, false
		}
	}
	for _, f := range app.Flags {
		if hasName(f, name) {
			return f, true
		}
	}
	if name == "version" || name == "v" {
		return ucli.VersionFlag, true
	}
	return nil, false
}

// subtree is the command named so far, or the app's commands.
func subtree(app *ucli.App, inv *invocation) []*ucli.Command {
	if c := inv.leaf(); c != nil {
		return []*ucli.Command{c}
	}
	return nil
}

// commandFlags are the flags of cmds and of all their subcommands.
func commandFlags(cmds []*ucli.Command) []ucli.Flag {
	var fs []ucli.Flag
	for _, c := range cmds {
		fs = append(fs, c.Flags...)
		fs = append(fs, commandFlags(c.Subcommands)...)
	}
	return fs
}

func hasName(f ucli.Flag, name string) bool {
	for _, n := range f.Names() {
		if n == name {
			return true
		}
	}
	return false
}

func takesValue(f ucli.Flag) bool {
	d, ok := f.(ucli.DocGenerationFlag)
	return ok && d.TakesValue()
}

// placeholder is the value's name in a flag's usage (the `QUOTED` word),
// "value" when it names none, as the help shows it.
func placeholder(f ucli.Flag) string {
	d, ok := f.(ucli.DocGenerationFlag)
	if !ok || !d.TakesValue() {
		return ""
	}
	u := d.GetUsage()
	if i := strings.IndexByte(u, '`'); i >= 0 {
		if j := strings.IndexByte(u[i+1:], '`'); j >= 0 {
			return u[i+1 : i+1+j]
		}
	}
	return "value"
}

func visible(f ucli.Flag) bool {
	v, ok := f.(ucli.VisibleFlag)
	return !ok || v.IsVisible()
}

func unknownCommand(inv *invocation, cmds []*ucli.Command, name string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := nearest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	} else {
		msg += "; commands: " + strings.Join(names, ", ")
	}
	return &UsageError{Command: inv.name(), Msg: msg}
}

func unknownFlag(app *ucli.App, inv *invocation, name string) error {
	var names []string
	for _, f := range append(commandFlags(subtree(app, inv)), app.Flags...) {
		if visible(f) {
			names = append(names, f.Names()...)
		}
	}
	msg := fmt.Sprintf("unknown flag %s", dashed(name))
	if s := nearest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", dashed(s))
	} else if len(inv.path) > 0 {
		msg += fmt.Sprintf(" (see bagen-data %s --help)", inv.name())
	}
	return &UsageError{Command: inv.name(), Msg: msg}
}

// dashed writes a flag name as the help does: -o, --out.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearest is the candidate closest to s by edit distance, if it is close
// enough to be a slip (two edits, or a third of the word) or s begins it;
// of equally close ones, one with the same first letter.
func nearest(s string, candidates []string) string {
	best, bestScore := "", -1
	for _, c := range candidates {
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			return c
		}
		d := editDistance(s, c)
		if d > max(2, len(s)/3) || d >= len(c) {
			continue
		}
		score := 2 * d
		if s[0] != c[0] {
			score++
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count
// one) between a and b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// checkRequired reports the required flags of the command that the line
// does not give, all at once, unless it asks for help.
func checkRequired(inv *invocation) error {
	c := inv.leaf()
	if c == nil || inv.help || len(c.Subcommands) > 0 {
		return nil
	}
	var missing []string
	for _, f := range c.Flags {
		r, ok := f.(ucli.RequiredFlag)
		if ok && r.IsRequired() && len(inv.given[f.Names()[0]]) == 0 {
			missing = append(missing, dashed(f.Names()[0])+" "+placeholder(f))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &UsageError{Command: inv.name(), Msg: "missing " + strings.Join(missing, " and ")}
}

// outputKind is what a flag naming an output writes there.
type outputKind int

const (
	outFile outputKind = iota + 1 // one file replaced atomically; "-" is standard output
	outDir                        // a directory tree replaced as a whole
	outLog                        // a file appended to as the work goes
)

// outputFlags are the flag names that name outputs, across all commands
// (one meaning per name). A DIR placeholder makes an --out a directory.
var outputFlags = map[string]outputKind{
	"out": outFile, "json": outFile, "report": outFile, "predictions-out": outLog, "cpuprofile": outFile,
}

// output is one output of the command line, checked before any work.
type output struct {
	command, flag, path string
	kind                outputKind
}

// changedNotes are added to the errors of flags whose meaning changed, for
// the command lines written before.
var changedNotes = map[string]string{
	"validate --json": " (--json takes the report's FILE now, - for standard output; the dataset goes after the flags)",
}

// outputs are the command's outputs: the values given, else the defaults.
func (inv *invocation) outputs(app *ucli.App) []output {
	var outs []output
	flags := append([]ucli.Flag{}, app.Flags...)
	if c := inv.leaf(); c != nil && len(c.Subcommands) == 0 {
		flags = append(flags, c.Flags...)
	}
	named := map[string]bool{}
	for _, f := range flags {
		name := f.Names()[0]
		if named[name] { // --cpuprofile is both the app's flag and the command's
			continue
		}
		named[name] = true
		kind, ok := outputFlags[name]
		if !ok || !takesValue(f) {
			continue
		}
		if placeholder(f) == "DIR" {
			kind = outDir
		}
		path := ""
		if v := inv.given[name]; len(v) > 0 {
			path = v[len(v)-1]
		} else if d, ok := f.(ucli.DocGenerationFlag); ok {
			path = d.GetValue()
		}
		if path != "" {
			outs = append(outs, output{command: inv.name(), flag: name, path: path, kind: kind})
		}
	}
	return outs
}

// checkOutputs refuses, before any input is read, an output path the
// command could not write or would destroy: anything but a regular file at
// a file's path, a file at a directory's, a missing parent directory, "-"
// where standard output cannot serve, one path named by two flags.
func checkOutputs(outs []output) error {
	var errs []error
	seen := map[string]string{}
	for _, o := range outs {
		var err error
		switch {
		case o.path == atomicfile.Stdout && o.kind != outFile:
			err = errors.New("standard output (-) cannot serve here; give a file")
		case o.kind == outDir:
			err = atomicfile.CheckDir(o.path)
		default:
			err = atomicfile.CheckFile(o.path)
		}
		if prev, ok := seen[o.path]; ok && o.path != atomicfile.Stdout {
			err = fmt.Errorf("%s is also --%s", o.path, prev)
		}
		seen[o.path] = o.flag
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w%s", o.flag, err, changedNotes[o.command+" --"+o.flag]))
		}
	}
	return errors.Join(errs...)
}

// toStdout reports whether an output goes to standard output; summaries
// then go to standard error.
func toStdout(outs []output) bool {
	for _, o := range outs {
		if o.path == atomicfile.Stdout {
			return true
		}
	}
	return false
}
