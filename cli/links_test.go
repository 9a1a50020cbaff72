package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// mdLink is a link of a Markdown file: where it is and what it points to.
type mdLink struct {
	line   int
	target string
}

var (
	mdInlineLink = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdRefLink    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	mdCodeSpan   = regexp.MustCompile("`[^`]*`")
	mdHeading    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdLineAnchor = regexp.MustCompile(`^L\d+(-L\d+)?$`)
)

// mdProse is the text of a Markdown file with its fenced code blocks and
// code spans blanked out, newlines kept, so that offsets give line numbers.
func mdProse(text string) string {
	lines := strings.Split(text, "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			lines[i] = ""
			continue
		}
		if fence {
			lines[i] = ""
		}
	}
	return mdCodeSpan.ReplaceAllStringFunc(strings.Join(lines, "\n"), func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	})
}

// mdLinks returns the inline and reference links of a Markdown text,
// outside code.
func mdLinks(text string) []mdLink {
	prose := mdProse(text)
	var out []mdLink
	for _, re := range []*regexp.Regexp{mdInlineLink, mdRefLink} {
		for _, m := range re.FindAllStringSubmatchIndex(prose, -1) {
			t := prose[m[len(m)-2]:m[len(m)-1]]
			out = append(out, mdLink{line: 1 + strings.Count(prose[:m[0]], "\n"), target: t})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

// githubSlug is the anchor GitHub gives a heading: links reduced to their
// text, lower case, every character but letters, marks, numbers,
// connector punctuation, spaces and hyphens dropped, spaces made hyphens.
func githubSlug(heading string) string {
	heading = mdInlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdAnchors returns the anchors of a Markdown text's headings, the
// second and later of one slug numbered -1, -2, … as GitHub numbers them.
func mdAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		m := mdHeading.FindStringSubmatch(l)
		if fence || m == nil {
			continue
		}
		s := githubSlug(m[2])
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

// deadLinks checks the links of the Markdown files (paths relative to
// root) and returns one message per dead one: a relative path that does
// not exist, or an #anchor that no heading of its Markdown file makes.
// Links to other schemes (https:, mailto:) are not followed. A file
// named in assumed is taken to exist even when it does not, and anchors
// into it are not checked while it does not.
func deadLinks(root string, files []string, assumed map[string]bool) ([]string, int) {
	var dead []string
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		anchors[rel] = mdAnchors(string(b))
		return anchors[rel], nil
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			dead = append(dead, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		for _, l := range mdLinks(string(b)) {
			if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(l.target) {
				continue
			}
			checked++
			if msg := checkLink(root, f, l.target, assumed, anchorsOf); msg != "" {
				dead = append(dead, fmt.Sprintf("%s:%d: %s: %s", f, l.line, l.target, msg))
			}
		}
	}
	return dead, checked
}

// checkLink says what is wrong with one relative link of file f, or "".
func checkLink(root, f, target string, assumed map[string]bool, anchorsOf func(string) (map[string]bool, error)) string {
	path, anchor, _ := strings.Cut(target, "#")
	rel := f
	if path != "" {
		rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), path)))
		if strings.HasPrefix(rel, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			if assumed[rel] {
				return ""
			}
			return "no such file"
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(rel, ".md") {
		if mdLineAnchor.MatchString(anchor) {
			return ""
		}
		return "an anchor into a file that is not Markdown"
	}
	a, err := anchorsOf(rel)
	if err != nil {
		return err.Error()
	}
	if !a[anchor] {
		return fmt.Sprintf("no heading of %s makes the anchor #%s", rel, anchor)
	}
	return ""
}

// docFiles are the Markdown files a reader is sent to, relative to the
// repository's top directory: README.md, CONTRIBUTING.md, ARCHITECTURE.md
// and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", "CONTRIBUTING.md"}
	if fileExists("../ARCHITECTURE.md") {
		files = append(files, "ARCHITECTURE.md")
	}
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	return files
}

// Every relative link of the documentation resolves: the file exists and
// the #anchor is a heading of it, by GitHub's slug rules.
// ARCHITECTURE.md is drawn after the code it describes; until it is
// there, links to it are taken as good.
func TestDocsLinks(t *testing.T) {
	files := docFiles(t)
	if len(files) < 10 {
		t.Fatalf("found %d documentation files (%v), want README.md, CONTRIBUTING.md and the docs/ pages", len(files), files)
	}
	dead, checked := deadLinks("..", files, map[string]bool{"ARCHITECTURE.md": true})
	for _, d := range dead {
		t.Error(d)
	}
	if checked < 50 {
		t.Errorf("checked %d relative links, want at least 50", checked)
	}
}

// The link checker finds each kind of dead link in a small tree, and
// passes the good ones: GitHub's slugs (punctuation dropped, a repeated
// heading numbered), links across lines, links in code left alone.
func TestLinkCheckerFindsDeadLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/page.md", "# build: rollouts → probe parquet\n\n## Errors\n\n### Errors\n\n"+
		"#### `POST /slime` — slime (`--rm-type`)\n")
	write("README.md", "# Top\n\n"+
		"[ok](docs/page.md#build-rollouts--probe-parquet) [ok](docs/page.md#errors-1)\n"+
		"[ok](docs/page.md#post-slime--slime---rm-type) [ok](#top) [ok](https://example.com/x#y)\n"+
		"[dead file](docs/missing.md) [dead anchor](docs/page.md#errors-2)\n"+
		"[across\nlines](#nowhere)\n"+
		"`[in code](nowhere.md)`\n\n```\n[in a block](nowhere.md)\n```\n"+
		"[assumed](ARCHITECTURE.md) [up](../x.md) [ok](docs/)\n"+
		"[ref]: docs/gone.md\n")
	dead, checked := deadLinks(root, []string{"README.md"}, map[string]bool{"ARCHITECTURE.md": true})
	want := []string{
		"README.md:5: docs/missing.md: no such file",
		"README.md:5: docs/page.md#errors-2: no heading of docs/page.md makes the anchor #errors-2",
		"README.md:6: #nowhere: no heading of README.md makes the anchor #nowhere",
		"README.md:13: ../x.md: outside the repository",
		"README.md:14: docs/gone.md: no such file",
	}
	if diff := cmp.Diff(want, dead); diff != "" {
		t.Errorf("dead links (-want +got):\n%s", diff)
	}
	if checked != 11 {
		t.Errorf("checked %d links, want 11", checked)
	}
}
