package refserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// Each fault breaks one contract; these tests show its observable effect.

// cancelAtStep1 runs a gated slow operation "k" (request 1, token "c") to
// KEY/step/1, cancels it and returns.
func cancelAtStep1(h *harness) {
	h.t.Helper()
	h.slow(jsonrpc.IntID(1), json.RawMessage(`"c"`), map[string]any{"key": "k", "steps": 3})
	h.release("k/start")
	h.await("k/step/1")
	h.cancelReq(jsonrpc.IntID(1))
}

func TestFaultRespondAfterCancel(t *testing.T) {
	h := newHarness(t, FaultRespondAfterCancel)
	cancelAtStep1(h)
	h.await("k/end")
	if len(h.responsesTo(jsonrpc.IntID(1))) != 1 {
		t.Fatalf("want the cancelled request answered:\n%s", h.dump())
	}
}

func TestFaultProgressAfterCancel(t *testing.T) {
	h := newHarness(t, FaultProgressAfterCancel)
	cancelAtStep1(h)
	h.await("k/end")
	ps, _ := h.progressSeen()
	if len(ps) != 2 || ps[1].Progress != 2 {
		t.Fatalf("want one progress after the cancel, got %+v", ps)
	}
	if len(h.responsesTo(jsonrpc.IntID(1))) != 0 {
		t.Errorf("answered")
	}
}

func TestFaultProgressAfterResponse(t *testing.T) {
	h := newHarness(t, FaultProgressAfterResponse)
	h.slow(jsonrpc.IntID(1), json.RawMessage(`"p"`), map[string]any{"key": "k", "gated": false, "steps": 2})
	h.waitResponse(jsonrpc.IntID(1))
	h.await("k/end")
	ps, at := h.progressSeen()
	if len(ps) != 3 || at[2] < h.indexOfResponse(jsonrpc.IntID(1)) || ps[2].Progress <= ps[1].Progress {
		t.Fatalf("want a third, increasing progress after the response:\n%s", h.dump())
	}
}

func TestFaultNonIncreasingProgress(t *testing.T) {
	h := newHarness(t, FaultNonIncreasingProgress)
	h.slow(jsonrpc.IntID(1), json.RawMessage(`"p"`), map[string]any{"key": "k", "gated": false})
	h.waitResponse(jsonrpc.IntID(1))
	ps, _ := h.progressSeen()
	if len(ps) != 3 || ps[0].Progress != 1 || ps[1].Progress != 1 || ps[2].Progress != 3 {
		t.Fatalf("want progress 1, 1, 3; got %+v", ps)
	}
}

func TestFaultWrongToken(t *testing.T) {
	for token, want := range map[string]string{`"7"`: `7`, `7`: `"7"`, `0`: `"0"`, `"x"`: `"x-wrong"`} {
		h := newHarness(t, FaultWrongToken)
		h.slow(jsonrpc.IntID(1), json.RawMessage(token), map[string]any{"key": "k", "gated": false, "steps": 1})
		h.waitResponse(jsonrpc.IntID(1))
		if ps, _ := h.progressSeen(); len(ps) != 1 || string(ps[0].Token) != want {
			t.Errorf("token %s: progress %+v, want token %s", token, ps, want)
		}
	}
}

func TestFaultProgressWithoutToken(t *testing.T) {
	h := newHarness(t, FaultProgressWithoutToken)
	h.slow(jsonrpc.IntID(1), nil, map[string]any{"key": "k", "gated": false, "steps": 2})
	h.waitResponse(jsonrpc.IntID(1))
	ps, _ := h.progressSeen()
	if len(ps) != 2 || string(ps[0].Token) != `"mcpflight-invented"` {
		t.Fatalf("got %+v", ps)
	}
}

func TestFaultErrorOnNotification(t *testing.T) {
	h := newHarness(t, FaultErrorOnNotification)
	h.notify("notifications/initialized", nil)
	f, _ := h.next()
	if f.msg == nil || f.msg.Kind != jsonrpc.KindError || !f.msg.NullID {
		t.Fatalf("got %s, want an error with id null", f.raw)
	}
}

func TestFaultCrashOnMalformedCancel(t *testing.T) {
	h := newHarness(t, FaultCrashOnMalformedCancel)
	h.slow(jsonrpc.IntID(1), nil, map[string]any{"key": "k"})
	h.await("k/start")
	// A well-formed cancel of an unknown request is fine.
	h.cancelReq(jsonrpc.IntID(99))
	h.result("ping", nil, nil)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`)
	if err := h.waitServed(); !errors.Is(err, ErrCrash) {
		t.Fatalf("Serve returned %v, want ErrCrash", err)
	}
	// Without the fault the same line is ignored.
	h2 := newHarness(t)
	h2.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`)
	h2.result("ping", nil, nil)
}

func TestFaultCancelUnknownHitsOther(t *testing.T) {
	h := newHarness(t, FaultCancelUnknownHitsOther)
	h.slow(jsonrpc.IntID(1), nil, map[string]any{"key": "old"})
	h.slow(jsonrpc.IntID(2), nil, map[string]any{"key": "new"})
	h.await("old/start")
	h.await("new/start")
	h.cancelReq(jsonrpc.IntID(999))
	if end := h.await("new/end"); end.Outcome != mcp.OutcomeCancelled {
		t.Fatalf("new/end %+v", end)
	}
	if c := h.counters(); c.Operations["old"].State != "running" {
		t.Errorf("the older operation was hit: %+v", c)
	}
}

func TestFaultLeakOnCancel(t *testing.T) {
	h := newHarness(t, FaultLeakOnCancel)
	cancelAtStep1(h)
	h.await("k/end")
	c := h.counters()
	if c.OperationsActive != 1 || c.ResourcesReleased != 0 || c.Operations["k"].Releases != 0 || c.OperationsCancelled != 1 {
		t.Fatalf("counters %+v", c)
	}
}

func TestFaultDoubleCleanup(t *testing.T) {
	h := newHarness(t, FaultDoubleCleanup)
	cancelAtStep1(h)
	h.await("k/end")
	c := h.counters()
	if c.ResourcesReleased != 2 || c.Operations["k"].Releases != 2 || c.OperationsActive != 0 {
		t.Fatalf("counters %+v", c)
	}
}

func TestFaultIDTypeConfusion(t *testing.T) {
	h := newHarness(t, FaultIDTypeConfusion)
	h.request(jsonrpc.StringID("7"), "ping", nil)
	if m := h.waitResponse(jsonrpc.IntID(7)); m.Kind != jsonrpc.KindResult {
		t.Fatalf("got %s", m.Raw)
	}
	h.request(jsonrpc.StringID("x"), "ping", nil)
	h.waitResponse(jsonrpc.StringID("x")) // non-numeric strings survive
	// The string "5" cancels the integer 5.
	h.slow(jsonrpc.IntID(5), nil, map[string]any{"key": "k"})
	h.await("k/start")
	h.cancelReq(jsonrpc.StringID("5"))
	if end := h.await("k/end"); end.Outcome != mcp.OutcomeCancelled {
		t.Fatalf("k/end %+v", end)
	}
}

func TestFaultIDZeroAbsent(t *testing.T) {
	h := newHarness(t, FaultIDZeroAbsent)
	h.request(jsonrpc.IntID(0), "ping", nil)
	h.request(jsonrpc.IntID(1), "ping", nil)
	// id 0 is dropped before the next frame is read, so ping 1's answer is
	// the first frame.
	if f, _ := h.next(); f.msg == nil || f.msg.ID != jsonrpc.IntID(1) {
		t.Fatalf("got %s", f.raw)
	}
	h.request(jsonrpc.StringID("0"), "ping", nil)
	h.waitResponse(jsonrpc.StringID("0"))
	if err := h.finish(); err != nil {
		t.Fatal(err)
	}
	if len(h.responsesTo(jsonrpc.IntID(0))) != 0 {
		t.Errorf("id 0 answered")
	}
}

func TestFaultStaleToken(t *testing.T) {
	for _, fault := range []bool{false, true} {
		var h *harness
		if fault {
			h = newHarness(t, FaultStaleToken)
		} else {
			h = newHarness(t)
		}
		h.slow(jsonrpc.IntID(1), json.RawMessage(`"t"`), map[string]any{"key": "a", "gated": false, "steps": 1})
		h.waitResponse(jsonrpc.IntID(1))
		if live := h.counters().ProgressTokensLive; live != map[bool]int{false: 0, true: 1}[fault] {
			t.Errorf("fault %v: %d tokens live", fault, live)
		}
		h.slow(jsonrpc.IntID(2), json.RawMessage(`"t"`), map[string]any{"key": "b", "gated": false, "steps": 1})
		m := h.waitResponse(jsonrpc.IntID(2))
		if fault {
			wantError(t, m, jsonrpc.CodeInvalidParams)
		} else if m.Kind != jsonrpc.KindResult {
			t.Errorf("token reuse after completion refused: %s", m.Raw)
		}
	}
}

func TestFaultStdoutNoise(t *testing.T) {
	h := newHarness(t, FaultStdoutNoise)
	f, _ := h.next()
	if f.msg != nil || json.Valid(f.raw) {
		t.Fatalf("first line %q is JSON", f.raw)
	}
	h.result("ping", nil, nil)
}

func TestFaultPingBroken(t *testing.T) {
	h := newHarness(t, FaultPingBroken)
	wantError(t, h.call("ping", nil), jsonrpc.CodeInternalError)
}

func TestFaultIgnoreStdinEOF(t *testing.T) {
	h := newHarness(t, FaultIgnoreStdinEOF)
	h.result("ping", nil, nil)
	_ = h.in.Close()
	h.stderr.wait(t, "end of input ignored")
	select {
	case err := <-h.served:
		t.Fatalf("Serve returned %v at end of input", err)
	default:
	}
	h.cancel()
	if err := h.waitServed(); err == nil {
		t.Errorf("Serve returned nil after its context was cancelled")
	}
	// Without the fault, end of input ends Serve with nil.
	if err := newHarness(t).finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestFaultVersionMismatch(t *testing.T) {
	h := newHarness(t, FaultVersionMismatch)
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	h.result("initialize", map[string]any{"protocolVersion": "2025-11-25"}, &r)
	if r.ProtocolVersion != "1999-01-01" {
		t.Fatalf("protocolVersion %q", r.ProtocolVersion)
	}
}

func TestFaultLogLevelIgnored(t *testing.T) {
	h := newHarness(t, FaultLogLevelIgnored)
	h.result("logging/setLevel", map[string]any{"level": "error"}, nil)
	h.result("tools/call", map[string]any{"name": "log", "arguments": map[string]any{"messages": []map[string]any{
		{"level": "debug", "data": 1}, {"level": "error", "data": 2},
	}}}, nil)
	n := 0
	for _, f := range h.seen {
		if f.msg != nil && f.msg.Method == "notifications/message" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d messages, want 2 (the debug one too)", n)
	}
}

func TestFaultHangAfterCancel(t *testing.T) {
	h := newHarness(t, FaultHangAfterCancel)
	cancelAtStep1(h)
	h.request(jsonrpc.StringID("end"), mcp.MethodControlAwait, map[string]any{"checkpoint": "k/end"})
	h.stderr.wait(t, `operation "k" hangs after cancel`)
	// The operation will not move again, so what counters say now stays.
	c := h.counters()
	if c.OperationsActive != 1 || c.ResourcesReleased != 0 || c.Operations["k"].State != "cancelled" {
		t.Fatalf("counters %+v", c)
	}
	if err := h.finish(); err != nil {
		t.Fatal(err)
	}
	if len(h.responsesTo(jsonrpc.StringID("end"))) != 0 || len(h.responsesTo(jsonrpc.IntID(1))) != 0 {
		t.Errorf("output after the cancel:\n%s", h.dump())
	}
	if strings.Contains(h.stderr.text(), "checkpoint k/end reached") {
		t.Errorf("k/end reached")
	}
}

// TestFaultsDocumentTheirRequirements: every fault names, as data, the
// requirements it breaks, each a row of the registry.
func TestFaultsDocumentTheirRequirements(t *testing.T) {
	for _, f := range AllFaults() {
		breaks := f.Breaks()
		if len(breaks) == 0 {
			t.Errorf("%s documents no requirement it breaks", f)
		}
		for _, id := range breaks {
			if _, ok := spec.Lookup(id); !ok {
				t.Errorf("%s breaks %s, which is not in the registry", f, id)
			}
		}
		if !strings.HasSuffix(f.Description(), "("+strings.Join(breaks, ", ")+")") {
			t.Errorf("%s: description %q does not end with its requirements", f, f.Description())
		}
	}
}

// TestOneFaultTable: every fault constant declared in the package has
// exactly one row in the fault table, with a revision and a transport,
// so a fault cannot exist that the matrix, ParseFault and the docs do
// not know.
func TestOneFaultTable(t *testing.T) {
	declared := map[Fault]string{}
	_, files := packageFiles(t)
	for _, file := range slices.Sorted(maps.Keys(files)) {
		f := files[file]
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Fault" {
					continue
				}
				for i, name := range vs.Names {
					lit := vs.Values[i].(*ast.BasicLit)
					value, _ := strconv.Unquote(lit.Value)
					declared[Fault(value)] = name.Name + " in " + file
				}
			}
		}
	}
	if len(declared) < 100 {
		t.Fatalf("found %d fault constants: the walk is broken", len(declared))
	}
	rows := map[Fault]int{}
	for _, r := range FaultTable() {
		rows[r.Fault]++
		if _, ok := declared[r.Fault]; !ok {
			t.Errorf("row %s names no declared constant", r.Fault)
		}
		if r.Revision != spec.V20251125 && r.Revision != spec.V20260728 {
			t.Errorf("%s: revision %q", r.Fault, r.Revision)
		}
		if r.On != OnAny && r.On != OnStdio && r.On != OnHTTP {
			t.Errorf("%s: transport %q", r.Fault, r.On)
		}
		if r.Does == "" {
			t.Errorf("%s says nothing of what it does", r.Fault)
		}
	}
	for f, where := range declared {
		if rows[f] != 1 {
			t.Errorf("%s (%s) has %d rows in the fault table, want 1", f, where, rows[f])
		}
	}
}

// TestFaultQueried: the server tells FaultQueried each fault it asks
// about, on or off: a ping meets ping-broken whether the fault is on or
// not, and a session that only pings never asks about a cancel's fault.
func TestFaultQueried(t *testing.T) {
	for _, on := range []bool{false, true} {
		var mu sync.Mutex
		asked := map[Fault]bool{}
		opts := Options{FaultQueried: func(f Fault) {
			mu.Lock()
			asked[f] = true
			mu.Unlock()
		}}
		if on {
			opts.Faults = FaultSet{FaultPingBroken: true}
		}
		h := newHarnessWith(t, opts)
		mu.Lock()
		before := asked[FaultPingBroken]
		mu.Unlock()
		resp := h.call("ping", nil)
		if on {
			wantError(t, resp, jsonrpc.CodeInternalError)
		}
		mu.Lock()
		if before || !asked[FaultPingBroken] {
			t.Errorf("fault on=%t: ping-broken asked before the ping %t, after %t; want false, true", on, before, asked[FaultPingBroken])
		}
		if asked[FaultRespondAfterCancel] {
			t.Errorf("fault on=%t: a session that only pings asked about %s", on, FaultRespondAfterCancel)
		}
		mu.Unlock()
	}
}

// TestEveryFaultQuestionIsSeen: the server asks about its faults only
// through Server.has, so that FaultQueried sees every question (the
// mutation matrix leaves a case out of a fault's row when its conforming
// run never asked about the fault). A FaultSet.Has or a FaultSet indexed
// by a fault anywhere else fails.
func TestEveryFaultQuestionIsSeen(t *testing.T) {
	fset, files := packageFiles(t)
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if fn.Name.Name == "has" && fn.Recv != nil && strings.Contains(fmt.Sprint(fn.Recv.List[0].Type), "Server") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Has" && len(n.Args) == 1 {
						t.Errorf("%s: %s asks FaultSet.Has directly: ask through Server.has, which FaultQueried sees", fset.Position(n.Pos()), fn.Name.Name)
					}
				case *ast.IndexExpr:
					if id, ok := n.Index.(*ast.Ident); ok && strings.HasPrefix(id.Name, "Fault") {
						t.Errorf("%s: %s reads a fault set by %s directly: ask through Server.has", fset.Position(n.Pos()), fn.Name.Name, id.Name)
					}
				}
				return true
			})
		}
	}
}

// packageFiles parses the package's non-test files, by file name.
func packageFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	return fset, files
}
