package cases_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// severityDirs are the packages whose code judges a peer: the server
// catalogue, its probe kit and the client catalogue. None of them may
// pick a verdict for a broken requirement by hand.
var severityDirs = []string{".", "../probe", "../clientcases"}

// TestSeverityComesFromTheRegistry: no code of the catalogues or the
// kit picks a verdict for a broken requirement by hand. The registry's
// level decides it, through verdict.Broken (Env.Broke); a departure is
// only possible through Rule.Except, with a reason, and to a verdict
// the registry's level does not give already. What severityFindings
// flags is listed there; TestSeverityCheckerCatches shows that each of
// those shapes is caught.
func TestSeverityComesFromTheRegistry(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, dir := range severityDirs {
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, pkg := range pkgs {
			for _, f := range pkg.Files {
				files = append(files, f)
				n++
			}
		}
		if n == 0 {
			t.Fatalf("no Go file in %s", dir)
		}
	}
	for _, f := range severityFindings(fset, files) {
		t.Error(f)
	}
}

// TestSeverityCheckerCatches feeds the checker snippets: each bad one
// must be flagged (so the meta-test above can fail), each good one,
// written the way the catalogue legitimately judges, must not.
func TestSeverityCheckerCatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string // the body of a function; verdict and e are in scope
		want string // a fragment of the finding; "" for a good snippet
	}{
		// Good: what the catalogue does.
		{"a constructor", `return verdict.Passf("ok")`, ""},
		{"an info by constructor", `return verdict.Infof("it MAY")`, ""},
		{"a rule broken through the registry", `return e.Broke(verdict.Req("CAN-8"))`, ""},
		{"a pass, skip or error literal", `_ = verdict.Outcome{Verdict: verdict.Pass}; _ = &verdict.Outcome{Verdict: verdict.Skip}; _ = verdict.Outcome{Verdict: verdict.Error, Summary: "x"}`, ""},
		{"an exception with a reason, to a verdict the level does not give", `return e.Broke(verdict.Req("CAN-8").Except(verdict.Fail, "because"))`, ""},
		{"an exception on a rule held in a variable", `rule := verdict.Req("CAN-4").Under("2026-07-28", "CAN-57"); return e.Broke(rule.Except(verdict.Info, "because"))`, ""},
		{"an exception that differs under one revision only", `return e.Broke(verdict.Req("CAN-8").Under("2026-07-28", "CAN-54").Except(verdict.Fail, "because"))`, ""},
		{"a comparison with a verdict", `if o.Verdict == verdict.Fail || o.Verdict == "warn" { return o }`, ""},

		// Bad: each way around the registry.
		{"a fail literal", `return verdict.Outcome{Verdict: verdict.Fail, Summary: "x"}`, "hard-codes its verdict"},
		{"an info literal", `return verdict.Outcome{Verdict: verdict.Info}`, "hard-codes its verdict"},
		{"a verdict through a variable", `v := verdict.Warn; return verdict.Outcome{Verdict: v}`, "hard-codes its verdict"},
		{"a pointer literal", `return &verdict.Outcome{Verdict: verdict.Warn}`, "hard-codes its verdict"},
		{"a literal inside a slice", `_ = []verdict.Outcome{{Verdict: verdict.Fail}}`, "hard-codes its verdict"},
		{"a literal inside a map", `_ = map[string]*verdict.Outcome{"a": {Verdict: verdict.Fail}}`, "hard-codes its verdict"},
		{"a conversion from a string", `return verdict.Outcome{Verdict: verdict.Verdict("fail")}`, "converts to verdict.Verdict"},
		{"a conversion on its own", `v := verdict.Verdict("warn"); _ = v`, "converts to verdict.Verdict"},
		{"a typed string", `var v verdict.Verdict = "fail"; _ = v`, "a verdict.Verdict from a string"},
		{"a requirement in a literal", `return verdict.Outcome{Verdict: verdict.Error, Requirement: "CAN-8"}`, "sets Requirement"},
		{"a level in a literal", `return verdict.Outcome{Verdict: verdict.Pass, Level: "MUST"}`, "sets Level"},
		{"a blame in a literal", `return verdict.Outcome{Verdict: verdict.Error, Blame: &verdict.Blame{}}`, "sets Blame"},
		{"an unkeyed literal", `return verdict.Outcome{verdict.Pass, "x", "", "", "", nil, "", 0, nil}`, "unkeyed"},
		{"a verdict assigned", `o := verdict.Passf("x"); o.Verdict = verdict.Fail; return o`, "Verdict is set by hand"},
		{"a requirement assigned", `o := verdict.Errorf("x"); o.Requirement = "CAN-8"; return o`, "Requirement is set by hand"},
		{"an exception without a reason", `return e.Broke(verdict.Req("CAN-8").Except(verdict.Fail, " "))`, "without a written reason"},
		{"an exception to a verdict in a variable", `v := verdict.Fail; return e.Broke(verdict.Req("CAN-8").Except(v, "because"))`, "not written out"},
		{"an exception the registry gives anyway", `return e.Broke(verdict.Req("CAN-4").Except(verdict.Fail, "because"))`, "which the registry gives anyway"},
		{"the same, on a rule held in a variable", `rule := verdict.Req("CAN-4").Under("2026-07-28", "CAN-57"); return e.Broke(rule.Except(verdict.Fail, "because"))`, "which the registry gives anyway"},
		{"an exception for a rule not in the registry", `return e.Broke(verdict.Req("CAN-999").Except(verdict.Fail, "because"))`, "not in the registry"},
		{"an exception whose rule cannot be read", `return e.Broke(someRule().Except(verdict.Fail, "because"))`, "not a literal verdict.Req"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\nimport \"github.com/mcpflight/mcpflight/verdict\"\n\nfunc f(e env, o verdict.Outcome) verdict.Outcome {\n" + tc.body + "\nreturn o\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "snippet.go", src, 0)
			if err != nil {
				t.Fatalf("the snippet does not parse: %v\n%s", err, src)
			}
			got := severityFindings(fset, []*ast.File{f})
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("a good snippet was flagged: %q", got)
			case tc.want != "" && !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, tc.want) }):
				t.Errorf("a bad snippet was not flagged for %q; findings: %q", tc.want, got)
			}
		})
	}
}

// severityFindings lists, as "file:line:col: message", every place in
// files that picks an outcome's verdict or requirement by hand:
//   - a verdict.Outcome literal (also a &-literal, or one whose type is
//     elided in a slice or map) whose Verdict is anything but the
//     constant verdict.Pass, verdict.Skip or verdict.Error (a fail, warn
//     or info, a variable, a conversion, a call), or that sets
//     Requirement, Level, Exception or Blame, or that is unkeyed: those
//     come from verdict.Broken and verdict.Blamed, and an info without
//     a requirement from verdict.Infof;
//   - any conversion to verdict.Verdict, and a verdict.Verdict declared
//     from a string;
//   - an assignment to a field named Verdict, Requirement, Level,
//     Exception or Blame;
//   - a Rule.Except without a written reason, to a verdict that is not
//     a written-out constant, on a rule that cannot be read (a
//     verdict.Req chain, directly or through the variable it was first
//     assigned to), or to the verdict the registry's level gives under
//     every revision of the rule anyway.
func severityFindings(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	flag := func(n ast.Node, format string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+format)
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isOutcome(n.Type) {
					checkOutcomeLit(n, flag)
					return true
				}
				// Elements whose type is elided: []verdict.Outcome{{…}}.
				if elt := elemType(n.Type); elt != nil && isOutcome(elt) {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							el = kv.Value
						}
						if lit, ok := el.(*ast.CompositeLit); ok && lit.Type == nil {
							checkOutcomeLit(lit, flag)
						}
					}
				}
			case *ast.CallExpr:
				if isSel(unparen(n.Fun), "verdict", "Verdict") {
					flag(n, "converts to verdict.Verdict; a verdict comes from the registry (Env.Broke) or a constructor")
				}
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Except" && len(n.Args) == 2 {
					checkExcept(n, sel, flag)
				}
			case *ast.ValueSpec:
				if isSel(n.Type, "verdict", "Verdict") {
					for _, v := range n.Values {
						if _, ok := stringValue(v); ok {
							flag(v, "declares a verdict.Verdict from a string")
						}
					}
				}
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && outcomeField(sel.Sel.Name) {
						flag(n, "an outcome's "+sel.Sel.Name+" is set by hand; cite the rule with Env.Broke")
					}
				}
			}
			return true
		})
	}
	return out
}

// outcomeField reports whether name is a field of verdict.Outcome that
// only the verdict package's constructors may set.
func outcomeField(name string) bool {
	switch name {
	case "Verdict", "Requirement", "Level", "Exception", "Blame":
		return true
	}
	return false
}

func checkOutcomeLit(lit *ast.CompositeLit, flag func(ast.Node, string)) {
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			flag(lit, "an unkeyed Outcome literal; build the outcome with a constructor of the verdict package")
			return
		}
		key, _ := kv.Key.(*ast.Ident)
		switch {
		case key == nil:
		case key.Name == "Verdict":
			if v, ok := verdictValue(kv.Value); !ok || (v != verdict.Pass && v != verdict.Skip && v != verdict.Error) {
				flag(kv, "an Outcome literal hard-codes its verdict (only verdict.Pass, Skip or Error may be written); cite the rule with Env.Broke, or use verdict.Infof")
			}
		case outcomeField(key.Name):
			flag(kv, "an Outcome literal sets "+key.Name+"; only verdict.Broken and verdict.Blamed do")
		}
	}
}

func checkExcept(call *ast.CallExpr, sel *ast.SelectorExpr, flag func(ast.Node, string)) {
	reason, ok := stringValue(call.Args[1])
	if !ok || strings.TrimSpace(reason) == "" {
		flag(call, "an exception without a written reason")
	}
	v, ok := verdictValue(call.Args[0])
	if !ok {
		flag(call, "an exception to a verdict that is not written out")
		return
	}
	ids, clause := ruleOf(sel.X)
	if len(ids) == 0 {
		flag(call, "an exception whose rule is not a literal verdict.Req")
		return
	}
	anyway := true
	for _, id := range ids {
		req, ok := spec.Lookup(id)
		if !ok {
			flag(call, "an exception for "+id+", which is not in the registry")
			return
		}
		level := req.Level
		if clause != "" {
			level = clause
		}
		if given, err := verdict.Severity(level); err != nil || given != v {
			anyway = false
		}
	}
	if anyway {
		flag(call, "an exception to "+string(v)+" for "+strings.Join(ids, ", ")+", which the registry gives anyway")
	}
}

// verdictValue is the verdict a constant selector verdict.X names.
func verdictValue(expr ast.Expr) (verdict.Verdict, bool) {
	sel, ok := unparen(expr).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "verdict" {
		return "", false
	}
	switch sel.Sel.Name {
	case "Pass", "Fail", "Warn", "Info", "Skip", "Error":
		return verdict.Verdict(strings.ToLower(sel.Sel.Name)), true
	}
	return "", false
}

// ruleOf reads verdict.Req("ID")[.Clause("K")][.Under(rev, "ID2")…]
// into the IDs it can cite (sorted) and the clause. A variable is read
// through the expression it was declared with.
func ruleOf(expr ast.Expr) (ids []string, clause string) {
	seen := map[string]bool{}
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for {
		switch e := unparen(expr).(type) {
		case *ast.Ident:
			init := declaredAs(e)
			if init == nil {
				return nil, ""
			}
			expr = init
			continue
		case *ast.CallExpr:
			sel, ok := e.Fun.(*ast.SelectorExpr)
			if !ok {
				return nil, ""
			}
			switch sel.Sel.Name {
			case "Clause":
				if len(e.Args) == 1 {
					clause, _ = stringValue(e.Args[0])
				}
			case "Under":
				if len(e.Args) == 2 {
					id, _ := stringValue(e.Args[1])
					add(id)
				}
			case "Req":
				if !isSel(sel, "verdict", "Req") || len(e.Args) != 1 {
					return nil, ""
				}
				id, _ := stringValue(e.Args[0])
				if id == "" {
					return nil, ""
				}
				add(id)
				sort.Strings(ids)
				return ids, clause
			default:
				return nil, ""
			}
			expr = sel.X
		default:
			return nil, ""
		}
	}
}

// declaredAs is the expression a local variable was declared with
// (x := expr, or var x = expr), or nil.
func declaredAs(id *ast.Ident) ast.Expr {
	if id.Obj == nil {
		return nil
	}
	switch d := id.Obj.Decl.(type) {
	case *ast.AssignStmt:
		for i, lhs := range d.Lhs {
			if l, ok := lhs.(*ast.Ident); ok && l.Name == id.Name && i < len(d.Rhs) && len(d.Lhs) == len(d.Rhs) {
				return d.Rhs[i]
			}
		}
	case *ast.ValueSpec:
		for i, n := range d.Names {
			if n.Name == id.Name && i < len(d.Values) {
				return d.Values[i]
			}
		}
	}
	return nil
}

// isOutcome reports whether typ is verdict.Outcome or a pointer to it.
func isOutcome(typ ast.Expr) bool {
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	return isSel(typ, "verdict", "Outcome")
}

// elemType is the element type of a slice, array or map type, or nil.
func elemType(typ ast.Expr) ast.Expr {
	switch t := typ.(type) {
	case *ast.ArrayType:
		return t.Elt
	case *ast.MapType:
		return t.Value
	}
	return nil
}

func unparen(expr ast.Expr) ast.Expr {
	for {
		p, ok := expr.(*ast.ParenExpr)
		if !ok {
			return expr
		}
		expr = p.X
	}
}
