package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v3"

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

// commandPath names c as the user types it, without the tool's name:
// "reward serve"; empty for the tool itself.
func commandPath(c *ucli.Command) string {
	return strings.Join(c.Path()[1:], " ")
}

// The messages of urfave/cli's parser, which it gives as plain strings.
const (
	unknownFlagMsg  = "flag provided but not defined: -"
	needsValueMsg   = "flag needs an argument: "
	invalidValueMsg = "invalid value "
)

// usageError restates an error of urfave/cli's parser in c as one line
// naming the flag the way the help does, with the nearest valid spelling.
func usageError(_ context.Context, c *ucli.Command, err error, _ bool) error {
	if name := c.Args().First(); name != "" && len(c.Commands) > 0 && c.Command(name) == nil {
		return unknownCommand(c, name) // the command's name comes first
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, unknownFlagMsg):
		return unknownFlag(c, strings.TrimPrefix(msg, unknownFlagMsg))
	case strings.HasPrefix(msg, needsValueMsg):
		name := strings.TrimLeft(strings.TrimPrefix(msg, needsValueMsg), "-")
		if f := findFlag(c, name); f != nil {
			msg = fmt.Sprintf("--%s needs a value (%s)", f.Names()[0], placeholder(f))
		}
	case strings.HasPrefix(msg, invalidValueMsg):
		msg = invalidValue(c, msg)
	}
	return &UsageError{Command: commandPath(c), Msg: msg, Err: err}
}

// invalidValue restates `invalid value "x" for flag -seed: strconv…` as
// the help names the flag, and a value that is a flag as the missing value.
func invalidValue(c *ucli.Command, msg string) string {
	value, rest, ok := strings.Cut(strings.TrimPrefix(msg, invalidValueMsg), " for flag -")
	name, _, _ := strings.Cut(rest, ": ")
	f := findFlag(c, name)
	if !ok || f == nil {
		return msg
	}
	if v, err := strconv.Unquote(value); err == nil && isFlagWord(v) {
		return fmt.Sprintf("--%s needs a value (%s), got the flag %s", f.Names()[0], placeholder(f), v)
	}
	// As the standard flag package says it, whatever the value's type.
	reason := "parse error"
	if strings.HasSuffix(rest, "value out of range") {
		reason = "value out of range"
	}
	return fmt.Sprintf("invalid value %s for %s: %s", value, dashed(name), reason)
}

// isFlagWord reports whether a word meant as a flag's value is a long
// flag: the flag's value was left out.
func isFlagWord(v string) bool { return strings.HasPrefix(v, "--") && len(v) > 2 }

// findFlag is the flag named name that c reads: its own or an ancestor's.
func findFlag(c *ucli.Command, name string) ucli.Flag {
	for _, x := range c.Lineage() {
		for _, f := range x.Flags {
			if hasName(f, name) {
				return f
			}
		}
	}
	return nil
}

// commandFlags are the flags of cmds and of all their subcommands.
func commandFlags(cmds []*ucli.Command) []ucli.Flag {
	var fs []ucli.Flag
	for _, c := range cmds {
		fs = append(fs, c.Flags...)
		fs = append(fs, commandFlags(c.Commands)...)
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
// else its type ("int"), as the help shows it.
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
	return d.TypeName()
}

func visible(f ucli.Flag) bool {
	v, ok := f.(ucli.VisibleFlag)
	return !ok || v.IsVisible()
}

// unknownCommand is the error of a command name that c does not have.
func unknownCommand(c *ucli.Command, name string) error {
	var names []string
	for _, sub := range c.Commands {
		if !sub.Hidden && sub.Name != helpName {
			names = append(names, sub.Name)
		}
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := nearest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	} else {
		msg += "; commands: " + strings.Join(names, ", ")
	}
	return &UsageError{Command: commandPath(c), Msg: msg}
}

// unknownFlag is the error of a flag that c does not read, with the
// nearest among its flags, its subcommands' and the tool's that it reads.
func unknownFlag(c *ucli.Command, name string) error {
	var names []string
	for _, f := range append(commandFlags([]*ucli.Command{c}), c.Root().Flags...) {
		if l, ok := f.(ucli.LocalFlag); ok && l.IsLocal() && !slices.Contains(c.Flags, f) {
			continue // --version is the tool's only
		}
		if visible(f) {
			names = append(names, f.Names()...)
		}
	}
	msg := fmt.Sprintf("unknown flag %s", dashed(name))
	if s := nearest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", dashed(s))
	} else if path := commandPath(c); path != "" {
		msg += fmt.Sprintf(" (see bagen-data %s --help)", path)
	}
	return &UsageError{Command: commandPath(c), Msg: msg}
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

// checkRequired reports the required flags of c that the command line
// does not give, all at once.
func checkRequired(c *ucli.Command) error {
	var missing []string
	for _, f := range c.Flags {
		r, ok := f.(ucli.RequiredFlag)
		if ok && r.IsRequired() && !f.IsSet() {
			missing = append(missing, dashed(f.Names()[0])+" "+placeholder(f))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &UsageError{Command: commandPath(c), Msg: "missing " + strings.Join(missing, " and ")}
}

// refuseFlagValues makes a text flag refuse a long flag as its value: in
// `--data --out x` the value of --data was left out. urfave/cli reports
// the refusal as an invalid value, which invalidValue restates.
func refuseFlagValues(f ucli.Flag) {
	switch f := f.(type) {
	case *ucli.StringFlag:
		f.Validator = func(v string) error { return refuseFlagWords([]string{v}) }
	case *ucli.StringSliceFlag:
		f.Validator = refuseFlagWords
	}
}

func refuseFlagWords(values []string) error {
	for _, v := range values {
		if isFlagWord(v) {
			return fmt.Errorf("%s is a flag", v)
		}
	}
	return nil
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

// outputs are the outputs of the parsed command c: the values given, else
// the defaults. A flag both c and the tool have (--cpuprofile) counts once,
// with the value given to either.
func outputs(c *ucli.Command) []output {
	var names []string
	byName := map[string]ucli.Flag{}
	for _, x := range c.Lineage() {
		for _, f := range x.Flags {
			name := f.Names()[0]
			if _, ok := outputFlags[name]; !ok || !takesValue(f) {
				continue
			}
			if prev, ok := byName[name]; !ok {
				names = append(names, name)
			} else if prev.IsSet() || !f.IsSet() {
				continue
			}
			byName[name] = f
		}
	}
	var outs []output
	for _, name := range names {
		f := byName[name]
		kind := outputFlags[name]
		if placeholder(f) == "DIR" {
			kind = outDir
		}
		if path, _ := f.Get().(string); path != "" {
			outs = append(outs, output{command: commandPath(c), flag: name, path: path, kind: kind})
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

// line is the command line a run read: the command it names and its
// outputs, once parsed.
type line struct {
	leaf *ucli.Command
	outs []output
}

// check is the tool's ArgValidator: it runs for the command the line
// names once urfave/cli has parsed it, before anything else runs. It
// checks the required flags and every output path, and sends the summaries to
// standard error when the data goes to standard output.
func (l *line) check(_ context.Context, c *ucli.Command) error {
	if len(c.Commands) > 0 || c.Name == helpName {
		return nil // a command that only lists others, or help
	}
	l.leaf = c
	if err := checkRequired(c); err != nil {
		return err
	}
	l.outs = outputs(c)
	if err := checkOutputs(l.outs); err != nil {
		if name := commandPath(c); name != "" {
			return fmt.Errorf("%s: %w", name, err)
		}
		return err
	}
	if toStdout(l.outs) {
		c.Root().Writer = os.Stderr // the data has standard output
	}
	return nil
}
