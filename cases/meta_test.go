package cases_test

import (
	"flag"
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
)

// update rewrites the checked-in expectations of this package's tests
// (the quoted sentences, the wire goldens, the pinned verdicts).
var update = flag.Bool("update", false, "rewrite the checked-in expectations (quotes, wire goldens, pinned verdicts)")

// "go generate ./cases" writes, in one command, everything a new or
// changed case needs besides its row and its place in the fault table:
// the quoted sentences above the rows (TestQuotesBesideCases) and the
// pinned verdicts against the popular npm servers, the third-party Go
// servers and server-everything (TestPopularServersVerdicts,
// TestThirdPartyVerdicts, TestSameVerdictsAsTheCarefulRun), each
// recorded by its test's -update. The pinned runs need the npm targets
// (MCPFLIGHT_TARGETS_DIR) and the Go servers of testdata/, and take
// minutes.
//
//go:generate go test -run "^(TestQuotesBesideCases|TestPopularServersVerdicts|TestThirdPartyVerdicts|TestSameVerdictsAsTheCarefulRun)$" -update -timeout 60m

// TestCaseIDsUnique: every case ID is a unique area/slug. Renaming or
// removing a case (which breaks baselines and bookmarks) is a deliberate
// edit of the fault table too, which names every case as a killer or
// unkillable: TestFaultTable fails until it is made.
func TestCaseIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cases.All() {
		if seen[c.ID] {
			t.Errorf("case ID %s appears twice", c.ID)
		}
		seen[c.ID] = true
		if area, slug, ok := strings.Cut(c.ID, "/"); !ok || area == "" || slug == "" || strings.ContainsAny(c.ID, " \t") {
			t.Errorf("case ID %q is not area/slug", c.ID)
		}
	}
}

// TestCitations: every requirement a case declares exists and applies to
// every revision the case declares it under, and every requirement its
// Run can cite, on any path (read from the source), is declared. So a
// citation that does not apply to the run's revision cannot ship: it is
// caught here, and at run time it is an error naming the harness bug.
func TestCitations(t *testing.T) {
	src := parseSource(t)
	for _, c := range cases.All() {
		if len(c.Versions) == 0 {
			t.Errorf("%s declares no protocol version", c.ID)
		}
		for rev := range c.ReqsUnder {
			if !slices.Contains(c.Versions, rev) {
				t.Errorf("%s: ReqsUnder names %s, which is not one of its versions %v", c.ID, rev, c.Versions)
			}
		}
		for _, rev := range c.Versions {
			declared := c.ReqsFor(rev)
			for _, id := range declared {
				r, ok := spec.Lookup(id)
				switch {
				case !ok:
					t.Errorf("%s declares %s, which is not in the registry", c.ID, id)
				case !r.AppliesTo(rev):
					t.Errorf("%s declares %s (Ver %s) under %s, where that sentence does not exist", c.ID, id, r.Versions, rev)
				}
			}
			cited, ok := src.citedUnder(c.ID, rev)
			if !ok {
				t.Errorf("%s: no Run found in the source", c.ID)
				continue
			}
			for _, id := range cited {
				if !slices.Contains(declared, id) {
					t.Errorf("%s can cite %s under %s but does not declare it (Reqs %v)", c.ID, id, rev, declared)
				}
			}
		}
	}
}

// TestBlameOwners: every owner a helper step blames is a case of the
// catalogue that declares the requirement it is said to own.
func TestBlameOwners(t *testing.T) {
	src := parseSource(t)
	byID := map[string][]string{}
	for _, c := range cases.All() {
		byID[c.ID] = c.Reqs
	}
	n := 0
	for _, f := range src.files {
		ast.Inspect(f, func(node ast.Node) bool {
			cl, ok := node.(*ast.CompositeLit)
			if !ok || !isOwner(cl.Type) {
				return true
			}
			var req, owner string
			for _, el := range cl.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					s, _ := stringValue(kv.Value)
					switch {
					case isIdent(kv.Key, "Requirement"):
						req = s
					case isIdent(kv.Key, "Case"):
						owner = s
					}
				}
			}
			n++
			reqs, ok := byID[owner]
			switch {
			case !ok:
				t.Errorf("%s: the owner %q is not a case of the catalogue", src.fset.Position(cl.Pos()), owner)
			case !slices.Contains(reqs, req):
				t.Errorf("%s: %s is said to own %s, which it does not declare (%v)", src.fset.Position(cl.Pos()), owner, req, reqs)
			}
			return true
		})
	}
	if n == 0 {
		t.Error("found no probe.Owner in the source")
	}
}

// stringValue is the value of a string literal or a concatenation of
// string literals.
func stringValue(expr ast.Expr) (string, bool) {
	switch e := expr.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok := stringValue(e.X)
		b, ok2 := stringValue(e.Y)
		return a + b, ok && ok2
	case *ast.ParenExpr:
		return stringValue(e.X)
	}
	return "", false
}

func isIdent(expr ast.Expr, name string) bool {
	id, ok := expr.(*ast.Ident)
	return ok && id.Name == name
}

func isSel(expr ast.Expr, pkg, name string) bool {
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg
}

// TestTidyCasesMayShare: a case marked Tidy needs nothing a shared
// session cannot give (probe.Case.SharesSession), so that the mark is
// never a dead letter, and the catalogue has tidy cases in the areas
// whose cases leave a server as they found it.
func TestTidyCasesMayShare(t *testing.T) {
	areas := map[string]int{}
	for _, c := range cases.All() {
		if !c.Tidy {
			continue
		}
		if !c.SharesSession() {
			t.Errorf("%s is marked Tidy, but its needs (%+v) keep it off shared sessions", c.ID, c.Needs)
		}
		areas[c.Area()]++
	}
	for _, area := range []string{"progress", "cancel", "ping", "rpc", "robust"} {
		if areas[area] == 0 {
			t.Errorf("no tidy case in %s", area)
		}
	}
}

// TestSharingMarksAreLive: a case marked LeavesTasks needs a task tool
// and nothing else a shared session cannot give (probe.Case.Sharing), and
// is not also Tidy; so for LeavesCancelled, without the task tool; a
// case marked AwaitsTaskEnd needs a task tool. Each mark would otherwise
// be a dead letter.
func TestSharingMarksAreLive(t *testing.T) {
	leavers := 0
	for _, c := range cases.All() {
		if c.LeavesTasks {
			leavers++
			if c.Sharing() != probe.ShareTasks || c.Tidy {
				t.Errorf("%s is marked LeavesTasks, but shares as %d (tidy %v; needs %+v)", c.ID, c.Sharing(), c.Tidy, c.Needs)
			}
		}
		if c.LeavesCancelled && c.Sharing() != probe.ShareCancels {
			t.Errorf("%s is marked LeavesCancelled, but shares as %d (tidy %v; needs %+v)", c.ID, c.Sharing(), c.Tidy, c.Needs)
		}
		if c.AwaitsTaskEnd && !c.Needs.Tasks {
			t.Errorf("%s is marked AwaitsTaskEnd but needs no task tool", c.ID)
		}
	}
	if leavers == 0 {
		t.Error("no case is marked LeavesTasks")
	}
}
