package docscheck

import (
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

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/spec"
)

// walkThroughPage and walkThroughHeading locate the contributing
// guide's walk-through of one case added end to end.
const (
	walkThroughPage    = "docs/contributing.md"
	walkThroughHeading = "### Walk-through: a case in two files"
)

// An excerpt is a fenced block of Go in the walk-through and the file
// the prose before it names as its source.
type excerpt struct {
	file, code string
	line       int
}

var (
	// goPath is a Go file named in inline code.
	goPath = regexp.MustCompile("`([\\w./-]+\\.go)`")
	// caseID is a case row's ID field.
	caseID = regexp.MustCompile(`\bID:\s+"([^"]+)"`)
	// faultName is a fault named in the prose ("fault `name`").
	faultName = regexp.MustCompile("fault `([a-z0-9-]+)`")
)

// TestWalkThroughIsTrue holds docs/contributing.md's walk-through to the
// code: every Go excerpt stands, line for line, in the file the prose
// before it names; the excerpts come from two files, the case's row and
// its proof row; the case is in the catalogue, the fault the prose names
// lists it among its killers, and no other Go file of the module names
// the case; every command runs a package that exists, and every test
// its -run pattern names (and every test go generate runs) exists.
func TestWalkThroughIsTrue(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, walkThroughPage))
	if err != nil {
		t.Fatal(err)
	}
	section, startLine := walkThroughSection(string(b))
	if section == "" {
		t.Fatalf("%s has no section %q", walkThroughPage, walkThroughHeading)
	}
	excerpts, commands := walkThroughBlocks(t, section, startLine)

	var files []string
	for _, ex := range excerpts {
		src, err := os.ReadFile(filepath.Join(root, ex.file))
		if err != nil {
			t.Errorf("%s:%d: the excerpt's file: %v", walkThroughPage, ex.line, err)
			continue
		}
		if !containsLines(string(src), ex.code) {
			t.Errorf("%s:%d: the excerpt does not stand in %s as shown: copy it again from the file", walkThroughPage, ex.line, ex.file)
		}
		if !slices.Contains(files, ex.file) {
			files = append(files, ex.file)
		}
	}
	if len(files) != 2 {
		t.Fatalf("the walk-through shows excerpts of %v, want the case's two files", files)
	}

	m := caseID.FindStringSubmatch(excerpts[0].code)
	if m == nil {
		t.Fatalf("the first excerpt (%s) holds no case row with an ID", excerpts[0].file)
	}
	id := m[1]
	if !slices.ContainsFunc(cases.All(), func(c probe.Case) bool { return c.ID == id }) {
		t.Errorf("the walk-through's case %s is not in the catalogue", id)
	}
	fm := faultName.FindStringSubmatch(section)
	if fm == nil {
		t.Fatal("the walk-through names no fault (\"fault `name`\")")
	}
	fault, err := refserver.ParseFault(fm[1])
	if err != nil {
		t.Fatalf("the walk-through's fault: %v", err)
	}
	if !killsIt(fault, id) {
		t.Errorf("fault %s does not list %s among its killers under its own revision", fault, id)
	}
	if got := goFilesNaming(t, id); !slices.Equal(got, slices.Sorted(slices.Values(files))) {
		t.Errorf("the Go files that name %s are %v; the walk-through says it lives in %v", id, got, files)
	}

	if len(commands) == 0 {
		t.Fatal("the walk-through shows no command")
	}
	for _, c := range commands {
		checkWalkCommand(t, c.code, c.line)
	}
}

// walkThroughSection is the walk-through's text, up to the next heading
// of its level or above, and the 1-based line of its heading.
func walkThroughSection(text string) (string, int) {
	start := strings.Index(text, "\n"+walkThroughHeading+"\n")
	if start < 0 {
		return "", 0
	}
	start++
	rest := text[start+len(walkThroughHeading):]
	end := len(rest)
	for _, h := range []string{"\n## ", "\n### "} {
		if i := strings.Index(rest, h); i >= 0 && i < end {
			end = i
		}
	}
	return text[start : start+len(walkThroughHeading)+end], lineOf(text, start)
}

// walkThroughBlocks splits the section into its Go excerpts, each with
// the last Go file the prose before it names, and its commands (the
// lines of other fenced blocks that start with "$ ").
func walkThroughBlocks(t *testing.T, section string, startLine int) ([]excerpt, []excerpt) {
	t.Helper()
	var excerpts, commands []excerpt
	var prose, block []string
	lang, inBlock, blockLine := "", false, 0
	for i, line := range strings.Split(section, "\n") {
		n := startLine + i
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```") && !inBlock:
			inBlock, lang, blockLine, block = true, strings.TrimPrefix(trimmed, "```"), n, nil
		case strings.HasPrefix(trimmed, "```"):
			inBlock = false
			if lang == "go" {
				var file string
				if ms := goPath.FindAllStringSubmatch(strings.Join(prose, "\n"), -1); len(ms) > 0 {
					file = ms[len(ms)-1][1]
				}
				if file == "" {
					t.Errorf("%s:%d: a Go excerpt whose file the prose before it does not name", walkThroughPage, blockLine)
				}
				excerpts = append(excerpts, excerpt{file, strings.Join(block, "\n"), blockLine})
			}
			prose = nil
		case inBlock && lang != "go":
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				commands = append(commands, excerpt{"", cmd, n})
			}
		case inBlock:
			block = append(block, line)
		default:
			prose = append(prose, line)
		}
	}
	return excerpts, commands
}

// containsLines reports whether the lines of code, trimmed, stand one
// after the other among the lines of src, trimmed: an excerpt keeps its
// text, not necessarily its indentation.
func containsLines(src, code string) bool {
	trim := func(s string) []string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		return lines
	}
	have, want := trim(src), trim(code)
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// killsIt reports whether the fault's killer row under its own revision
// lists the case.
func killsIt(f refserver.Fault, id string) bool {
	fs, ok := f.Spec()
	return ok && slices.ContainsFunc(fs.Killers, func(k refserver.KillerRow) bool {
		return k.Revision == fs.Revision && slices.Contains(k.Cases, id)
	})
}

// goFilesNaming lists, sorted and relative to the root, the Go files of
// the module that hold the case ID as a string literal.
func goFilesNaming(t *testing.T, id string) []string {
	t.Helper()
	quoted := strconv.Quote(id)
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), quoted) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// checkWalkCommand checks one "go generate PKG" or "go test PKG [-run
// PATTERN]" command of the walk-through.
func checkWalkCommand(t *testing.T, cmd string, line int) {
	t.Helper()
	args := shellWords(cmd)
	if len(args) < 3 || args[0] != "go" || (args[1] != "test" && args[1] != "generate") {
		t.Errorf("%s:%d: %q: the walk-through's commands are go test and go generate", walkThroughPage, line, cmd)
		return
	}
	pkg := args[2]
	dir := filepath.Join(root, filepath.FromSlash(pkg))
	if st, err := os.Stat(dir); !strings.HasPrefix(pkg, "./") || err != nil || !st.IsDir() {
		t.Errorf("%s:%d: %q: no package %s", walkThroughPage, line, cmd, pkg)
		return
	}
	tests, directives := packageTests(t, dir)
	var patterns []string
	if args[1] == "generate" {
		if len(directives) == 0 {
			t.Errorf("%s:%d: %q: %s has no //go:generate line", walkThroughPage, line, cmd, pkg)
		}
		for _, d := range directives {
			words := shellWords(d)
			if !slices.Contains(words, "-update") {
				t.Errorf("%s:%d: %s's //go:generate line does not pass -update: %s", walkThroughPage, line, pkg, d)
			}
			if i := slices.Index(words, "-run"); i >= 0 && i+1 < len(words) {
				patterns = append(patterns, words[i+1])
			}
		}
	} else if i := slices.Index(args, "-run"); i >= 0 && i+1 < len(args) {
		patterns = append(patterns, args[i+1])
	}
	for _, p := range patterns {
		for _, alt := range strings.Split(strings.Trim(p, "^$()"), "|") {
			path := strings.Split(strings.Trim(alt, "^$()"), "/")
			if !tests[path[0]] {
				t.Errorf("%s:%d: %q runs %s, which is no test of %s", walkThroughPage, line, cmd, path[0], pkg)
			}
			checkSubtests(t, line, cmd, path[1:])
		}
	}
}

// checkSubtests checks the subtest path of a mutation matrix test: its
// words are an evidence mode, a transport, "2026" or a fault, and a
// fault named must have a killer row on that transport under that
// revision (the matrix names its rows [2026/]TRANSPORT/FAULT).
func checkSubtests(t *testing.T, line int, cmd string, path []string) {
	t.Helper()
	transport, revision := "", ""
	for _, w := range path {
		switch w {
		case refserver.EvidenceObserver, refserver.EvidenceWire:
		case refserver.OnStdio, refserver.OnHTTP:
			transport = w
		case "2026":
			revision = spec.V20260728
		default:
			f := refserver.Fault(w)
			fs, ok := f.Spec()
			if !ok {
				t.Errorf("%s:%d: %q: %q is no fault of the reference server", walkThroughPage, line, cmd, w)
				continue
			}
			rev := revision
			if rev == "" {
				rev = spec.V20251125
			}
			if !slices.ContainsFunc(fs.Killers, func(k refserver.KillerRow) bool {
				return k.Revision == rev && (k.On == refserver.OnAny || k.On == transport)
			}) {
				t.Errorf("%s:%d: %q: the matrix has no row of %s over %s under %s", walkThroughPage, line, cmd, f, transport, rev)
			}
		}
	}
}

// packageTests returns the names of the Test functions of the package in
// dir and the commands of its //go:generate lines.
func packageTests(t *testing.T, dir string) (map[string]bool, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{}
	var directives []string
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && strings.HasSuffix(name, "_test.go") {
				tests[fn.Name.Name] = true
			}
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if d, ok := strings.CutPrefix(c.Text, "//go:generate "); ok {
					directives = append(directives, d)
				}
			}
		}
	}
	return tests, directives
}

// shellWords splits a command line into words as a shell would for the
// quoting the docs use: single and double quotes group, and are dropped.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
