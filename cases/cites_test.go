package cases_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/spec"
)

// This file reads the catalogue's source (cases/ and probe/) to find
// every requirement a case's Run can cite, on every path: the ID
// literals of its own code and of every function and package-level value
// it reaches, the peer progress rules (peer.Rule…) a judge names, and
// the per-revision IDs of Rule.Under. A judge that cites an ID it
// computes (string(v.Rule)) names the rules it can cite in a table. The meta-tests compare that with what
// the case declares.

// idLit matches a requirement ID literal, "CAN-8".
var idLit = regexp.MustCompile(`^[A-Z]+-[0-9]+$`)

// revisionConst maps spec's revision constants to their values.
var revisionConst = map[string]string{"V20251125": spec.V20251125, "V20260728": spec.V20260728}

// citation is one ID a function can cite: under every revision but those
// in except, or only under the revision only (Rule.Under).
type citation struct {
	id     string
	only   string
	except []string
}

// fnInfo is what one function cites by itself and the names it refers to.
type fnInfo struct {
	cites []citation
	refs  []string
}

// source is the parsed catalogue and kit.
type source struct {
	fset  *token.FileSet
	funcs map[string]*fnInfo // "cases.name", "probe.name", "probe.Type.Method"
	// methods maps a method name to its keys in funcs, for calls through
	// a value (e.Healthy, op.Settle).
	methods map[string][]string
	// runs maps a case ID to the cites and refs of its Run field.
	runs map[string]*fnInfo
	// files are the parsed files of cases/ and probe/.
	files []*ast.File
	// peerRules maps peer's progress rules (ViolationRule constants) to
	// their IDs: a judge that names one cites it.
	peerRules map[string]string
}

func parseSource(t *testing.T) *source {
	t.Helper()
	src := &source{fset: token.NewFileSet(), funcs: map[string]*fnInfo{}, methods: map[string][]string{}, runs: map[string]*fnInfo{}, peerRules: map[string]string{}}
	peerFile, err := parser.ParseFile(src.fset, filepath.Join("..", "peer", "call.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(peerFile, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "ViolationRule" {
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && i < len(vs.Names) {
						s, _ := strconv.Unquote(lit.Value)
						src.peerRules[vs.Names[i].Name] = s
					}
				}
			}
		}
		return true
	})
	if len(src.peerRules) == 0 {
		t.Fatal("found none of peer's ViolationRule constants")
	}
	for _, dir := range []string{".", "../probe"} {
		pkgs, err := parser.ParseDir(src.fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			for _, f := range pkg.Files {
				src.addFile(name, f)
				src.files = append(src.files, f)
			}
		}
	}
	return src
}

func (src *source) addFile(pkg string, f *ast.File) {
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok {
			// Package-level values (a table of rules) are scanned like
			// functions, under their names.
			for _, spec := range gd.Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						src.funcs[pkg+"."+n.Name] = src.scan(pkg, vs)
					}
				}
			}
			continue
		}
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		key := pkg + "." + fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			typ := fd.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				key = pkg + "." + id.Name + "." + fd.Name.Name
				src.methods[fd.Name.Name] = append(src.methods[fd.Name.Name], key)
			}
		}
		src.funcs[key] = src.scan(pkg, fd.Body)
		if pkg == "cases" {
			src.findRows(fd.Body)
		}
	}
}

// findRows records the Run of every case row (a composite literal with an
// ID field) in body.
func (src *source) findRows(body ast.Node) {
	ast.Inspect(body, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		var id string
		var run ast.Expr
		for _, el := range cl.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch key, _ := kv.Key.(*ast.Ident); {
			case key == nil:
			case key.Name == "ID":
				if lit, ok := kv.Value.(*ast.BasicLit); ok {
					id, _ = strconv.Unquote(lit.Value)
				}
			case key.Name == "Run":
				run = kv.Value
			}
		}
		if id != "" && run != nil {
			src.runs[id] = src.scan("cases", run)
		}
		return true
	})
}

// scan collects the citations and references of one function body.
func (src *source) scan(pkg string, body ast.Node) *fnInfo {
	info := &fnInfo{}
	handled := map[token.Pos]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			// A probe.Owner names the rule of a helper step another case
			// judges: blame, not a citation.
			if isOwner(n.Type) {
				ast.Inspect(n, func(m ast.Node) bool {
					if lit, ok := m.(*ast.BasicLit); ok {
						handled[lit.Pos()] = true
					}
					return true
				})
			}
		case *ast.CallExpr:
			// verdict.Req("X").Under(spec.V…, "Y")…: X everywhere but
			// under those revisions, Y only under its revision.
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Under" || len(n.Args) != 2 {
				return true
			}
			var excepts []string
			x := ast.Expr(n)
			for {
				call, ok := x.(*ast.CallExpr)
				if !ok {
					break
				}
				s, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				if s.Sel.Name == "Under" && len(call.Args) == 2 {
					rs, _ := call.Args[0].(*ast.SelectorExpr)
					lit, _ := call.Args[1].(*ast.BasicLit)
					if rs != nil && lit != nil {
						id, _ := strconv.Unquote(lit.Value)
						rev := revisionConst[rs.Sel.Name]
						info.cites = append(info.cites, citation{id: id, only: rev})
						excepts = append(excepts, rev)
						handled[lit.Pos()] = true
					}
				}
				if s.Sel.Name == "Req" && len(call.Args) == 1 {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok {
						id, _ := strconv.Unquote(lit.Value)
						info.cites = append(info.cites, citation{id: id, except: excepts})
						handled[lit.Pos()] = true
					}
					break
				}
				x = s.X
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING || handled[n.Pos()] {
				return true
			}
			if s, err := strconv.Unquote(n.Value); err == nil && idLit.MatchString(s) {
				info.cites = append(info.cites, citation{id: s})
			}
		case *ast.SelectorExpr:
			x, _ := n.X.(*ast.Ident)
			switch {
			case x != nil && (x.Name == "probe" || x.Name == "cases"):
				info.refs = append(info.refs, x.Name+"."+n.Sel.Name)
			case x != nil && x.Name == "peer" && src.peerRules[n.Sel.Name] != "":
				info.cites = append(info.cites, citation{id: src.peerRules[n.Sel.Name]})
			default:
				info.refs = append(info.refs, "."+n.Sel.Name)
			}
		case *ast.Ident:
			info.refs = append(info.refs, pkg+"."+n.Name)
		}
		return true
	})
	return info
}

// isOwner reports whether a composite literal's type is probe.Owner.
func isOwner(typ ast.Expr) bool {
	switch t := typ.(type) {
	case *ast.Ident:
		return t.Name == "Owner"
	case *ast.SelectorExpr:
		return t.Sel.Name == "Owner"
	}
	return false
}

// citesOf is every citation reachable from info.
func (src *source) citesOf(info *fnInfo) []citation {
	seen := map[*fnInfo]bool{}
	var out []citation
	var walk func(fi *fnInfo)
	walk = func(fi *fnInfo) {
		if fi == nil || seen[fi] {
			return
		}
		seen[fi] = true
		out = append(out, fi.cites...)
		for _, ref := range fi.refs {
			if name, ok := strings.CutPrefix(ref, "."); ok {
				for _, key := range src.methods[name] {
					walk(src.funcs[key])
				}
				continue
			}
			walk(src.funcs[ref])
		}
	}
	walk(info)
	return out
}

// citedUnder is the set of IDs the case's Run can cite under revision.
func (src *source) citedUnder(caseID, revision string) ([]string, bool) {
	info, ok := src.runs[caseID]
	if !ok {
		return nil, false
	}
	var ids []string
	for _, c := range src.citesOf(info) {
		if (c.only == "" || c.only == revision) && !slices.Contains(c.except, revision) && !slices.Contains(ids, c.id) {
			ids = append(ids, c.id)
		}
	}
	slices.Sort(ids)
	return ids, true
}
