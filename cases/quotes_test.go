package cases_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
)

// quoteWidth is the width a quoted sentence is wrapped at, after "// ".
const quoteWidth = 88

// quoteBlock is the comment that stands above a case's row: each
// requirement it declares, with its level and the sentence quoted from
// the registry (h2spec style), so a reader of the case sees what it
// judges. The lines are indented by indent.
func quoteBlock(c probe.Case, indent string) []string {
	type cite struct{ id, only string }
	var cites []cite
	for _, id := range c.Reqs {
		cites = append(cites, cite{id: id})
	}
	revs := make([]string, 0, len(c.ReqsUnder))
	for rev := range c.ReqsUnder {
		revs = append(revs, rev)
	}
	slices.Sort(revs)
	for _, rev := range revs {
		for _, id := range c.ReqsUnder[rev] {
			cites = append(cites, cite{id: id, only: rev})
		}
	}
	var out []string
	for _, ct := range cites {
		head := ct.id
		text := "(not in the registry)"
		if r, ok := spec.Lookup(ct.id); ok {
			head += " " + r.Level
			text = `"` + r.Quote + `"`
		}
		if ct.only != "" {
			head += " (" + ct.only + " only)"
		}
		for i, line := range wrap(head+": "+text, quoteWidth) {
			prefix := "// "
			if i > 0 {
				prefix = "//   "
			}
			out = append(out, indent+prefix+line)
		}
	}
	return out
}

// wrap breaks s into lines of at most width runes, at spaces; a word
// longer than width stands on a line of its own.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// TestQuotesBesideCases: above every row of the catalogue stands the
// sentence of each requirement it declares, as the registry has it. The
// test fails when a quote is missing or stale; -update rewrites them.
func TestQuotesBesideCases(t *testing.T) {
	byID := map[string]probe.Case{}
	for _, c := range cases.All() {
		byID[c.ID] = c
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		type edit struct {
			from, to int // the comment lines [from, to) above the row
			block    []string
		}
		var edits []edit
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			id := rowID(cl)
			if id == "" {
				return true
			}
			c, ok := byID[id]
			if !ok {
				t.Errorf("%s: row %s is not in cases.All()", name, id)
				return true
			}
			found++
			brace := fset.Position(cl.Lbrace).Line - 1 // index of the "{" line
			indent := lines[brace][:len(lines[brace])-len(strings.TrimLeft(lines[brace], "\t"))]
			from := brace
			for from > 0 && strings.HasPrefix(strings.TrimSpace(lines[from-1]), "//") {
				from--
			}
			want := quoteBlock(c, indent)
			if got := lines[from:brace]; !slices.Equal(got, want) {
				if !*update {
					t.Errorf("%s:%d: %s: the quoted requirements above the row are missing or stale (run with -update):\n got: %q\nwant: %q", name, brace+1, id, got, want)
				}
				edits = append(edits, edit{from, brace, want})
			}
			return true
		})
		if *update && len(edits) > 0 {
			for i := len(edits) - 1; i >= 0; i-- {
				e := edits[i]
				lines = append(lines[:e.from], append(e.block, lines[e.to:]...)...)
			}
			if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if found != len(byID) {
		t.Errorf("found %d rows in the source, the catalogue has %d", found, len(byID))
	}
}

// rowID is the ID of a case row literal, or "".
func rowID(cl *ast.CompositeLit) string {
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok || !isIdent(kv.Key, "ID") {
			continue
		}
		if s, ok := stringValue(kv.Value); ok {
			return s
		}
	}
	return ""
}
