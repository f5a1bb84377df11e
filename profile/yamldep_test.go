package profile

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// oldYAML are the module paths of the unmaintained YAML libraries the
// profile reader must not use: gopkg.in/yaml.v3 and
// gopkg.in/yaml.v2. go.yaml.in/yaml/v3 is their maintained successor.
var oldYAML = []string{"gopkg.in/yaml.v3", "gopkg.in/yaml.v2"}

// TestNoOldYAMLLibrary fails when an old YAML library comes back into
// the main module: required or summed in go.mod or go.sum, or imported
// by any of its Go files (tests included). Modules nested in the tree
// (contrib/gosdkcontrol, whose go-sdk may bring one in indirectly) are
// their own business, and are left out.
func TestNoOldYAMLLibrary(t *testing.T) {
	root := filepath.Join("..")
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, old := range oldYAML {
			if bytes.Contains(data, []byte(old+" ")) || bytes.Contains(data, []byte(old+"/")) {
				t.Errorf("%s names %s: the YAML library is go.yaml.in/yaml/v3", name, old)
			}
		}
	}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			base := d.Name()
			if base == "testdata" || base == "node_modules" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			for _, old := range oldYAML {
				if p == old || strings.HasPrefix(p, old+"/") {
					t.Errorf("%s imports %s: use go.yaml.in/yaml/v3", path, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have seen the module, this file and the YAML reader
	// at least, or it proves nothing.
	if checked < 100 {
		t.Fatalf("only %d Go files checked: the walk missed the module", checked)
	}
}
