package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/clientadapter"
	"github.com/mcpflight/mcpflight/clientcases"
	"github.com/mcpflight/mcpflight/internal/hostile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/spec"
)

// root is the module's root, where README.md is, relative to this
// package's directory (go test runs a test in its package's directory).
const root = "../.."

// maxReadmeLines bounds the front page: everything else has a page in docs/.
const maxReadmeLines = 200

// page is one Markdown file of the docs, by its path from the root.
type page struct {
	path string
	text string
}

// pages reads README.md, CONTRIBUTING.md and every docs/*.md.
func pages(t *testing.T) []page {
	t.Helper()
	paths := []string{"README.md", "CONTRIBUTING.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.ToSlash(rel))
	}
	var out []page
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page{p, string(b)})
	}
	return out
}

// lineOf is the 1-based line of byte offset off in text.
func lineOf(text string, off int) int { return strings.Count(text[:off], "\n") + 1 }

// A count is a number the docs state in a known phrase and the code
// computes. The phrases let a line break fall between any two words, as
// Markdown wraps them.
type count struct {
	what   string
	phrase *regexp.Regexp // its first group is the number
	want   int
}

func phrase(words string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(words, " ", `\s+`))
}

func counts() []count {
	var leavesTasks, leavesCancelled int
	for _, c := range cases.All() {
		if c.LeavesTasks {
			leavesTasks++
		}
		if c.LeavesCancelled {
			leavesCancelled++
		}
	}
	return []count{
		{"the cases of the catalogue (cases.All)", phrase(`(\d+) cases in the catalogue`), len(cases.All())},
		{"the client cases (clientcases.All)", phrase(`(\d+) client cases`), len(clientcases.All())},
		{"the requirements of the registry (spec.All)", phrase(`(\d+) requirements in the registry`), len(spec.All())},
		{"the reference server's faults (refserver.AllFaults)", phrase(`(\d+) faults of the reference server`), len(refserver.AllFaults())},
		{"the faults of the 2026-07-28 behaviour (refserver.Faults2026)", phrase(`(\d+) faults of the 2026-07-28 behaviour`), len(refserver.Faults2026())},
		{"the robustness faults (refserver.RobustFaults)", phrase(`(\d+) robustness faults`), len(refserver.RobustFaults())},
		{"the built-in client's faults (clientadapter.Faults)", phrase(`(\d+) faults of the built-in client`), len(clientadapter.Faults())},
		{"the hostile modes (hostile.All)", phrase(`(\d+) hostile modes`), len(hostile.All())},
		{"the cases marked LeavesTasks", phrase("`probe.Case.LeavesTasks`: " + `(\d+) of them`), leavesTasks},
		{"the cases marked LeavesCancelled", phrase("`probe.Case.LeavesCancelled`: " + `(\d+) of them`), leavesCancelled},
	}
}

// TestCountsMatchTheCode fails on a count in README.md or docs/ that the
// code contradicts, and on a known phrase that no page states any more:
// a check that matches nothing could never fail.
func TestCountsMatchTheCode(t *testing.T) {
	ps := pages(t)
	for _, c := range counts() {
		seen := 0
		for _, p := range ps {
			for _, m := range c.phrase.FindAllStringSubmatchIndex(p.text, -1) {
				seen++
				got, err := strconv.Atoi(p.text[m[2]:m[3]])
				if err != nil {
					t.Fatalf("%s:%d: %v", p.path, lineOf(p.text, m[0]), err)
				}
				if got != c.want {
					t.Errorf("%s:%d: %q says %d, but %s are %d",
						p.path, lineOf(p.text, m[0]), p.text[m[0]:m[1]], got, c.what, c.want)
				}
			}
		}
		if seen == 0 {
			t.Errorf("no page states %s (%s): the phrase is checked nowhere", c.what, c.phrase)
		}
	}
}

var (
	// summary is check's (and check-client's, and judge's) last line:
	// "mcpflight: 142 cases — 69 pass, 0 fail, …, 0 error (6.18s) — …".
	summary = regexp.MustCompile(`^mcpflight: (\d+) (?:cases?|rules?) — ((?:\d+ [a-z]+, )*\d+ [a-z]+) \(`)
	// checkCommand and checkClientCommand recognise a shell line that
	// runs check or check-client ("$ mcpflight check …", "$ go run
	// ./cmd/mcpflight check …").
	checkCommand       = regexp.MustCompile(`mcpflight check(\s|$)`)
	checkClientCommand = regexp.MustCompile(`mcpflight check-client(\s|$)`)
)

// TestSummaryLinesMatchTheCode reads the fenced code blocks of README.md
// and docs/: a summary line that follows a "$ mcpflight check" command
// which selects no cases (no --case) must count the whole catalogue, one
// that follows "$ mcpflight check-client" the client catalogue, and in
// every summary line the verdicts must add up to the total.
func TestSummaryLinesMatchTheCode(t *testing.T) {
	checked := 0
	for _, p := range pages(t) {
		inBlock := false
		want, command := -1, ""
		for i, line := range strings.Split(p.text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				want, command = -1, ""
				continue
			}
			if !inBlock {
				continue
			}
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				want, command = expectedTotal(cmd), cmd
				continue
			}
			m := summary.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			total, _ := strconv.Atoi(m[1])
			sum := 0
			for part := range strings.SplitSeq(m[2], ", ") {
				n, _ := strconv.Atoi(strings.Fields(part)[0])
				sum += n
			}
			if sum != total {
				t.Errorf("%s:%d: the verdicts add up to %d, not the %d the line counts: %s", p.path, i+1, sum, total, line)
			}
			if want >= 0 {
				checked++
				if total != want {
					t.Errorf("%s:%d: %q is followed by a summary of %d cases, but that command runs %d: %s", p.path, i+1, command, total, want, line)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no summary line under a check or check-client command: the rule is checked nowhere")
	}
}

// expectedTotal is how many cases a shell line's run reports: the whole
// catalogue for check, the client catalogue for check-client, -1 when it
// selects cases or runs something else.
func expectedTotal(cmd string) int {
	switch {
	case strings.Contains(cmd, "--case"), strings.Contains(cmd, "--protocol both"):
		return -1
	case checkClientCommand.MatchString(cmd):
		return len(clientcases.All())
	case checkCommand.MatchString(cmd):
		return len(cases.All())
	}
	return -1
}

// TestReadmeIsShort holds the front page to what a newcomer reads.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page of docs/", n, maxReadmeLines)
	}
}

var (
	// link is a Markdown inline link or image; its first group is the target.
	link = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// codeSpan is inline code, where brackets are no link.
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// TestRelativeLinksResolve fails on a relative link of README.md or docs/
// whose file or directory does not exist, or whose #fragment names no
// heading of the Markdown page it points to.
func TestRelativeLinksResolve(t *testing.T) {
	ps := pages(t)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, err
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path], nil
	}
	checked := 0
	for _, p := range ps {
		for i, line := range proseLines(p.text) {
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, fragment, _ := strings.Cut(target, "#")
				path := p.path
				if file != "" {
					path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), file)))
					if _, err := os.Stat(filepath.Join(root, path)); err != nil {
						t.Errorf("%s:%d: link %s: no %s", p.path, i+1, target, path)
						continue
					}
				}
				if fragment == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				a, err := anchorsOf(path)
				if err != nil {
					t.Fatal(err)
				}
				if !a[fragment] {
					t.Errorf("%s:%d: link %s: %s has no heading whose anchor is #%s", p.path, i+1, target, path, fragment)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found: the link check is checking nothing")
	}
}

// proseLines is text's lines with those of fenced code blocks blanked,
// so that line numbers stay those of the file.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	inBlock := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inBlock = !inBlock
			lines[i] = ""
			continue
		}
		if inBlock {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors is the anchors GitHub gives the headings of a Markdown
// page: the heading's text in lower case, without its punctuation but
// hyphens and underscores, spaces turned to hyphens, and "-1", "-2", …
// after a repeated one.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || len(line)-len(h) > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
