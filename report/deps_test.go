package report

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpflight/mcpflight"

// deps returns every package of the module that pkg (a path relative to
// the module root) imports, directly or not, test files left out: what
// `go list -deps` shows, walked with go/build.
func deps(t *testing.T, root, pkg string) []string {
	t.Helper()
	seen := map[string]bool{}
	var walk func(rel string)
	walk = func(rel string) {
		p, err := build.ImportDir(filepath.Join(root, rel), 0)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, imp := range p.Imports {
			sub, ok := strings.CutPrefix(imp, module+"/")
			if !ok || seen[sub] {
				continue
			}
			seen[sub] = true
			walk(sub)
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestRenderersDoNotDependOnTheCatalogue: the renderers and baselines
// depend on the verdict layer, never on the catalogue, so that a change
// to a case rebuilds neither.
func TestRenderersDoNotDependOnTheCatalogue(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"report", "baseline", "runner"} {
		got := deps(t, root, pkg)
		if !slices.Contains(got, "verdict") {
			t.Errorf("%s does not depend on verdict (%v): the walk found nothing", pkg, got)
		}
		if slices.Contains(got, "cases") {
			t.Errorf("%s depends on the catalogue (package cases): %v", pkg, got)
		}
	}
}

// TestResultsModelIsPlainData: the results model holds no transport,
// peer, negotiation or runner values, and the renderers depend on it, the
// chronology and the verdicts alone: at most six packages of
// the module, report itself included, as `go list -deps ./report` names
// them.
func TestResultsModelIsPlainData(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dialing := []string{"transport", "peer", "negotiate", "runner", "probe", "wireschema", "mcp"}
	for _, pkg := range []string{"results", "report", "baseline"} {
		got := deps(t, root, pkg)
		for _, d := range dialing {
			if slices.Contains(got, d) {
				t.Errorf("%s depends on %s: %v", pkg, d, got)
			}
		}
	}
	if got := deps(t, root, "report"); len(got)+1 > 6 {
		t.Errorf("report and its %d packages of the module (%v): want at most 6 in all", len(got), got)
	}
}
