package hostcancel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// TestCrashBetweenEffectAndReceipt: a host runs a consequential tool as
// an extension task with a file-backed ledger and dies after the server
// applied the effect but before the host read the receipt. A restarted
// host reloads the ledger: the key is unreconciled, so a replacement is
// refused (nothing sent); Reconcile reads the recorded task over another
// connection (RPC-60), finds it completed with its receipt, and records
// the reconciliation, which a third load of the file still knows. The
// server's effect count stays 1: no replacement ran.
func TestCrashBetweenEffectAndReceipt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	srv := refserver.New(refserver.Options{})
	open := func() *fixture {
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		log := chrono.New()
		conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
		return fixture2026(t, ctx, cancel, peer.New(conn, peer.Options{Log: log}), log)
	}
	a, b := open(), open() // b holds the scope while a dies
	effects := &hostcancel.Effects{Tools: []string{refserver.ToolTaskWorker}}

	first, err := hostcancel.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	ca := hostcancel.New(hostcancel.Config{Session: a.s, Effects: effects, Ledger: first})
	call := a.call("k", map[string]any{"ticks": 2, "effectAt": 1})
	call.Key = "order-7"
	op, err := ca.Start(a.ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	a.release(t, "k/start", "k/tick/1", "k/tick/2")
	a.await(t, "k/end") // the effect is applied, the receipt waits in the result
	// The host dies: no settlement; the file ends in a record cut short.
	cctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	a.s.Close(cctx)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"op":"settle","key":"order-7","classifi`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	second, err := hostcancel.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	open1 := second.Unreconciled()
	if len(open1) != 1 || open1[0].Key != "order-7" || open1[0].TaskID != op.TaskID() || open1[0].Settled {
		t.Fatalf("unreconciled after the reload: %+v (task %s)", open1, op.TaskID())
	}
	var ev events
	cb := hostcancel.New(hostcancel.Config{Session: b.s, Effects: effects, Ledger: second, OnAlert: ev.alert})
	calls := b.sent(mcp.MethodToolsCall)
	retry := b.call("k2", map[string]any{"ticks": 2})
	retry.Key = "order-7"
	if _, err := cb.Start(b.ctx, retry); !errors.Is(err, hostcancel.ErrNotReconciled) {
		t.Errorf("replacement before reconciliation: %v, want ErrNotReconciled", err)
	}
	if n := b.sent(mcp.MethodToolsCall) - calls; n != 0 {
		t.Errorf("%d tools/call sent for a refused replacement", n)
	}
	r, err := cb.Reconcile(b.ctx, "order-7")
	if err != nil {
		t.Fatal(err)
	}
	if r.Classification != hostcancel.CompletedBeforeCancel || r.Effect != hostcancel.EffectApplied || r.Receipt == nil || !r.Receipt.Applied || r.TaskID != op.TaskID() {
		t.Errorf("reconciled as %s effect %s receipt %+v task %q (%s)", r.Classification, r.Effect, r.Receipt, r.TaskID, r.Detail)
	}
	if e, _ := second.Entry("order-7"); !e.Reconciled() {
		t.Errorf("entry after Reconcile %+v", e)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	third, err := hostcancel.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	e, ok := third.Entry("order-7")
	want := hostcancel.Entry{Key: "order-7", TaskID: op.TaskID(), Settled: true, Classification: hostcancel.CompletedBeforeCancel, Effect: hostcancel.EffectApplied}
	if diff := cmp.Diff(want, e); !ok || diff != "" {
		t.Errorf("the third load (-want +got):\n%s", diff)
	}
	if cs, err := b.ctl.Counters(b.ctx); err != nil || cs.EffectsApplied != 1 {
		t.Errorf("effectsApplied %d (%v), want 1", cs.EffectsApplied, err)
	}
	if got := ev.alertNames(); len(got) != 1 || got[0] != hostcancel.AlertReplacementBeforeReconcile {
		t.Errorf("alerts %v", got)
	}
}

// TestCrashBeforeCreateTaskResult: the host dies while the tools/call
// waits for its CreateTaskResult, so no task ID was recorded; the system
// of record shows no effect, but a task may exist that has yet to apply
// it, so Reconcile leaves the key open until the caller abandons it.
func TestCrashBeforeCreateTaskResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	f := newFixtureAt(t, hostcancel.RevTasksExtension)
	l, err := hostcancel.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	effects := &hostcancel.Effects{Tools: []string{refserver.ToolTaskWorker}, Check: f.systemOfRecord()}
	c := hostcancel.New(hostcancel.Config{Session: f.s, Effects: effects, Ledger: l})
	call := f.call("k", map[string]any{"holdCreate": true})
	call.Key = "order-8"
	if _, err := c.Begin(f.ctx, call); err != nil {
		t.Fatal(err)
	}
	f.await(t, "k/created")
	l.Close() // the host dies here

	l2, err := hostcancel.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	c2 := hostcancel.New(hostcancel.Config{Session: f.s, Effects: effects, Ledger: l2})
	r, err := c2.Reconcile(f.ctx, "order-8")
	if err != nil {
		t.Fatal(err)
	}
	if r.Classification != hostcancel.OutcomeUnknown || r.Unknown != hostcancel.UnknownNoCreateResult || r.Effect != hostcancel.EffectNotApplied {
		t.Errorf("%s/%s effect %s (%s)", r.Classification, r.Unknown, r.Effect, r.Detail)
	}
	if e, _ := l2.Entry("order-8"); e.Reconciled() {
		t.Errorf("reconciled without knowing: %+v", e)
	}
	if err := c2.Abandon("order-8", "operator found no order"); err != nil {
		t.Fatal(err)
	}
	if u := l2.Unreconciled(); len(u) != 0 {
		t.Errorf("unreconciled after Abandon: %+v", u)
	}
}

// TestLedgerFile: a torn last line is dropped and cut off, so later
// records append after the last whole one; any other bad line is an
// error, not a guess.
func TestLedgerFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl")
	whole := `{"op":"reserve","key":"a","time":"2026-07-28T00:00:00Z"}` + "\n"
	if err := os.WriteFile(path, []byte(whole+`{"op":"abandon","key":"a","rea`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := hostcancel.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if u := l.Unreconciled(); len(u) != 1 || u[0].Key != "a" {
		t.Errorf("unreconciled %+v", u)
	}
	l.Close()
	if raw, _ := os.ReadFile(path); string(raw) != whole {
		t.Errorf("file after the reload %q, want the whole record only", raw)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not json\n"+whole), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := hostcancel.OpenLedger(bad); !errors.Is(err, hostcancel.ErrLedger) {
		t.Errorf("a corrupt line: %v, want ErrLedger", err)
	}
}
