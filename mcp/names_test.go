package mcp

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// notWire lists the places outside this package where a string equal to
// a method name is a word of another vocabulary, not the wire name: the
// file (from the module root), the string, how many times it may occur
// there, and why. One more occurrence in such a file fails the test.
var notWire = []struct {
	file, name string
	n          int
	why        string
}{
	{"shell/shell.go", MethodPing, 2, "the shell's own ping command, a word of its script language (its command list and its dispatch)"},
	{"explore/plan.go", MethodPing, 1, "OpPing, an op kind of explore's plan vocabulary, written in saved plans"},
	{"spec/links.go", MethodServerDiscover, 1, "the path of the 2026-07-28 spec page server/discover.mdx, not the method"},
}

// TestMethodNamesSpelledOnce: no non-test Go file of the module outside
// this package spells an MCP method or notification name (the value of
// one of this package's Method* or Notification* constants) as a string
// literal, apart from the words listed in notWire. The checker, the
// explorer, the schema check, the reports and the reference server all
// name methods through these constants, so a spelling cannot drift.
// contrib/gosdkcontrol is a module of its own that a go-sdk server
// imports without this one (its non-test code depends on go-sdk only),
// and is not read; its wire test pins it to the control extension.
func TestMethodNamesSpelledOnce(t *testing.T) {
	names := constantNames(t)
	if len(names) < 30 {
		t.Fatalf("found %d method and notification names in package mcp; the parse is broken", len(names))
	}
	found := map[string]int{}
	for _, f := range scanForNames(t, "..", names) {
		key := f.file + " " + f.name
		allowed := false
		for _, w := range notWire {
			if w.file == f.file && w.name == f.name {
				allowed = true
				found[key]++
			}
		}
		if !allowed {
			t.Errorf("%s: the method name %q is written by hand; use mcp.%s", f.pos, f.name, names[f.name])
		}
	}
	for _, w := range notWire {
		if got := found[w.file+" "+w.name]; got != w.n {
			t.Errorf("%s spells %q %d times, %d are listed as not the wire name (%s)", w.file, w.name, got, w.n, w.why)
		}
	}
}

// TestMethodNameScanCatches: the scan finds a hand-written name in a
// file, and not a constant's use, a longer string or a comment.
func TestMethodNameScanCatches(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import "github.com/mcpflight/mcpflight/mcp"

// Sends "tools/call".
var a, b, c = "notifications/cancelled", mcp.MethodToolsCall, "the tools/call request"

func f(m string) bool { return m == "tasks/get" }
`
	for name, text := range map[string]string{"p/p.go": src, "p/p_test.go": src, "testdata/q.go": src} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, f := range scanForNames(t, dir, constantNames(t)) {
		got = append(got, f.file+" "+f.name)
	}
	want := []string{"p/p.go notifications/cancelled", "p/p.go tasks/get"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("found %q, want %q", got, want)
	}
}

// constantNames maps the value of each Method* and Notification*
// constant of this package to the constant's name.
func constantNames(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Method") && !strings.HasPrefix(id.Name, "Notification") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						names[s] = id.Name
					}
				}
				return true
			})
		}
	}
	return names
}

type nameFound struct {
	pos        token.Position
	file, name string
}

// scanForNames lists every string literal equal to one of names in the
// non-test Go files under root, outside this package, testdata,
// node_modules, hidden directories and nested modules.
func scanForNames(t *testing.T, root string, names map[string]string) []nameFound {
	t.Helper()
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []nameFound
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			abs, err := filepath.Abs(path)
			if err != nil {
				return err
			}
			name := d.Name()
			if abs == self || name == "testdata" || name == "node_modules" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && names[s] != "" {
				out = append(out, nameFound{pos: fset.Position(lit.Pos()), file: filepath.ToSlash(rel), name: s})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
