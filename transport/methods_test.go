package transport

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKnownMethodNames holds the package doc to its word: the transport
// matches exactly these MCP method names, each through package mcp, and
// writes none as a string of its own.
func TestKnownMethodNames(t *testing.T) {
	want := []string{"MethodInitialize", "MethodPromptsGet", "MethodResourcesRead", "MethodTasksCancel",
		"MethodTasksGet", "MethodTasksUpdate", "MethodToolsCall", "NotificationCancelled"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var got []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "mcp" &&
					(strings.HasPrefix(n.Sel.Name, "Method") || strings.HasPrefix(n.Sel.Name, "Notification")) && !slices.Contains(got, n.Sel.Name) {
					got = append(got, n.Sel.Name)
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				s, _ := strconv.Unquote(n.Value)
				for _, prefix := range []string{"tools/", "tasks/", "resources/", "prompts/", "notifications/", "logging/", "server/", "completion/", "sampling/", "elicitation/"} {
					if strings.HasPrefix(s, prefix) {
						t.Errorf("%s: the method name %q is written by hand", fset.Position(n.Pos()), s)
					}
				}
			}
			return true
		})
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the MCP names the transport matches (-doc +code):\n%s", diff)
	}
}
