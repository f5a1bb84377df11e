package cases_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestEveryClauseResolves reads every non-test Go file of the module and
// judges each verdict.Req("ID")…Clause("KW") it finds (its Under links
// included) under every revision whose registry row it cites: a clause
// the registry refuses would end a case in "harness bug" against the
// target that broke the rule, exactly where the verdict matters. A
// Clause whose receiver or keyword
// is not a literal chain cannot be checked here and fails the test too.
func TestEveryClauseResolves(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	found := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Clause" || len(call.Args) != 1 {
				return true
			}
			found++
			where := fset.Position(call.Pos()).String()
			kw, ok := stringLit(call.Args[0])
			if !ok {
				t.Errorf("%s: Clause of a non-literal keyword cannot be checked", where)
				return true
			}
			rule, ok := literalRule(sel.X)
			if !ok {
				t.Errorf("%s: Clause(%q) on a receiver that is not a literal verdict.Req chain cannot be checked", where, kw)
				return true
			}
			rule = rule.Clause(kw)
			judged := 0
			for _, rev := range []string{spec.V20251125, spec.V20260728} {
				req, ok := spec.Lookup(rule.ID(rev))
				if !ok || !req.AppliesTo(rev) {
					continue
				}
				judged++
				if _, err := rule.Judge(rev); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
			if judged == 0 {
				t.Errorf("%s: %v cites no requirement of either revision", where, rule.IDs())
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 {
		t.Fatalf("found only %d Clause calls: the walk missed the sources", found)
	}
}

// literalRule rebuilds verdict.Req("ID").Under("REV", "ID")… from its
// source.
func literalRule(e ast.Expr) (verdict.Rule, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return verdict.Rule{}, false
	}
	switch fun := call.Fun.(type) {
	case *ast.SelectorExpr:
		if x, ok := fun.X.(*ast.Ident); ok && x.Name == "verdict" && fun.Sel.Name == "Req" && len(call.Args) == 1 {
			id, ok := stringLit(call.Args[0])
			return verdict.Req(id), ok
		}
		inner, ok := literalRule(fun.X)
		if !ok {
			return verdict.Rule{}, false
		}
		switch {
		case fun.Sel.Name == "Under" && len(call.Args) == 2:
			rev, ok1 := revisionLit(call.Args[0])
			id, ok2 := stringLit(call.Args[1])
			return inner.Under(rev, id), ok1 && ok2
		}
		return verdict.Rule{}, false
	case *ast.Ident:
		if fun.Name == "Req" && len(call.Args) == 1 {
			id, ok := stringLit(call.Args[0])
			return verdict.Req(id), ok
		}
	}
	return verdict.Rule{}, false
}

// revisionLit reads a revision: a string literal, spec.V20251125 or
// spec.V20260728, or the v2025/v2026 shorthands the case packages use.
func revisionLit(e ast.Expr) (string, bool) {
	if s, ok := stringLit(e); ok {
		return s, true
	}
	name := ""
	switch x := e.(type) {
	case *ast.SelectorExpr:
		name = x.Sel.Name
	case *ast.Ident:
		name = x.Name
	}
	switch name {
	case "V20251125", "v2025":
		return spec.V20251125, true
	case "V20260728", "v2026":
		return spec.V20260728, true
	}
	return "", false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
