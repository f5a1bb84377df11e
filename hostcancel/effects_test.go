package hostcancel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/refserver"
)

// systemOfRecord is the reference server's record of effects:
// effectsApplied in mcpflight/counters (one task per test).
func (f *fixture) systemOfRecord() hostcancel.SystemOfRecord {
	return func(ctx context.Context, key string) (bool, string, error) {
		cs, err := f.ctl.Counters(ctx)
		if err != nil {
			return false, "", err
		}
		return cs.EffectsApplied > 0, fmt.Sprintf("effectsApplied %d", cs.EffectsApplied), nil
	}
}

func (f *fixture) effects() *hostcancel.Effects {
	return &hostcancel.Effects{Tools: []string{refserver.ToolTaskWorker}, Check: f.systemOfRecord()}
}

// TestCancelledStatusNeverHidesEffect: a cancel that comes after the
// effect committed reads cancelled, but the system of record says the
// effect happened, and the classification says so; a cancel before the
// effect is a plain verified cancel. Under the extension a cancel may
// also be acknowledged while the work finishes (TSX-44): then the
// completed result's receipt says the effect happened. Both revisions,
// against the reference server: its effectsApplied counter is the system
// of record, its worker counter proves the stop.
func TestCancelledStatusNeverHidesEffect(t *testing.T) {
	const ticks = 3
	type row struct {
		name     string
		only     hostcancel.Revision // run under this revision only
		args     map[string]any
		want     hostcancel.Classification
		effect   hostcancel.EffectState
		receipt  string // the receipt read from the result, "" for none
		status   string
		alerts   []hostcancel.Alert
		stopped  bool // the worker acknowledgement ran and said stopped
		afterAck bool // open the worker's gate once tasks/cancel is acknowledged
	}
	rows := []row{
		{name: "effect-before-cancel", args: map[string]any{"effectAt": 1}, want: hostcancel.EffectCommitted, effect: hostcancel.EffectApplied,
			status: "cancelled", alerts: []hostcancel.Alert{hostcancel.AlertCancelHidesEffect}, stopped: true},
		{name: "cancel-before-effect", args: map[string]any{"effectAt": 3}, want: hostcancel.CancelledVerified, effect: hostcancel.EffectNotApplied,
			status: "cancelled", stopped: true},
		// The cancel is acknowledged with the task working; the worker
		// then finishes instead (lateCancel "finish"), and the result
		// carries the receipt of the effect applied at tick 1: the
		// cancel did not take, and the effect is not hidden.
		{name: "acked-then-completed-with-receipt", only: hostcancel.RevTasksExtension, args: map[string]any{"effectAt": 1, "lateCancel": "finish"},
			want: hostcancel.CompletedBeforeCancel, effect: hostcancel.EffectApplied, receipt: "effect-1", status: "completed",
			alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, afterAck: true},
	}
	for _, rev := range revisions {
		for _, tc := range rows {
			if tc.only != "" && tc.only != rev {
				continue
			}
			t.Run(string(rev)+"/"+tc.name, func(t *testing.T) {
				f := newFixtureAt(t, rev)
				var late *afterAck
				if tc.afterAck {
					late = newAfterAck(func() { _ = f.ctl.Release(f.ctx, "k/tick/1") })
				}
				cfg := hostcancel.Config{Session: f.s, Grace: safety / 2, Ack: f.ack("k", ticks), Effects: f.effects()}
				if late != nil {
					cfg.OnEvent = late.event
				}
				c := hostcancel.New(cfg)
				args := map[string]any{"ticks": ticks}
				for k, v := range tc.args {
					args[k] = v
				}
				op, err := c.Start(f.ctx, f.call("k", args))
				if err != nil {
					t.Fatal(err)
				}
				f.release(t, "k/start")
				f.await(t, "k/tick/1") // tick 1 (and an effect at 1) is done
				atAbort, err := f.ctl.Worker(f.ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				r := op.Abort(f.ctx, "superseded")
				if late != nil {
					late.wait(f.ctx)
				}
				if r.Classification != tc.want || r.Effect != tc.effect || r.Task.Status != tc.status {
					t.Errorf("%s effect %s status %s (%s), want %s %s %s", r.Classification, r.Effect, r.Task.Status, r.Detail, tc.want, tc.effect, tc.status)
				}
				switch {
				case tc.receipt == "" && r.Receipt != nil:
					t.Errorf("receipt %+v from a cancelled task", r.Receipt)
				case tc.receipt != "" && (r.Receipt == nil || r.Receipt.ID != tc.receipt || !r.Receipt.Applied):
					t.Errorf("receipt %+v, want %s applied", r.Receipt, tc.receipt)
				}
				if !slices.Equal(r.Alerts, tc.alerts) {
					t.Errorf("alerts %v, want %v", r.Alerts, tc.alerts)
				}
				if tc.stopped && (r.WorkerStopped == nil || !*r.WorkerStopped) {
					t.Errorf("worker acknowledgement %v, want stopped", r.WorkerStopped)
				}
				open := c.Breaker().State(refserver.DefaultName, refserver.ToolTaskWorker).Open
				if want := slices.ContainsFunc(tc.alerts, hostcancel.NewBreaker().Opens); open != want {
					t.Errorf("circuit open %v, want %v", open, want)
				}
				e, ok := c.Ledger(op.Key)
				if !ok || !e.Reconciled() || e.Classification != tc.want {
					t.Errorf("ledger %+v", e)
				}
				// The key went out in _meta (the default placement).
				if !keyInMeta(f, op.Key) {
					t.Errorf("the idempotency key %q is not in the tools/call _meta", op.Key)
				}
				// The system of record and the worker counter, read once
				// every gate is open: one effect exactly when the row says
				// it committed, and no tick after the abort's.
				_, after, err := f.runOut(f.ctx, "k", ticks)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := f.ctl.Counters(f.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if applied := cs.EffectsApplied == 1; applied != (tc.effect == hostcancel.EffectApplied) {
					t.Errorf("effectsApplied %d, effect %s", cs.EffectsApplied, tc.effect)
				}
				if tc.stopped && after.Ticks != atAbort.Ticks {
					t.Errorf("worker counter %d at the abort, %d with every gate open: it did not stop", atAbort.Ticks, after.Ticks)
				}
			})
		}
	}
}

// keyInMeta reports whether the tools/call frame carries key in
// _meta[DefaultMetaKey].
func keyInMeta(f *fixture, key string) bool {
	for _, ev := range f.log.Events() {
		if ev.Dir != chrono.Out || ev.Summary == nil || ev.Summary.Method != "tools/call" {
			continue
		}
		m, err := ev.Message()
		if err != nil {
			continue
		}
		var p struct {
			Meta map[string]string `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Meta[hostcancel.DefaultMetaKey] == key {
			return true
		}
	}
	return false
}

// TestReceiptOnCompletion: the completed result's receipt is read.
func TestReceiptOnCompletion(t *testing.T) {
	f := newFixture(t)
	c := hostcancel.New(hostcancel.Config{Session: f.s, Effects: f.effects()})
	op, err := c.Start(f.ctx, f.call("k", map[string]any{"ticks": 1, "effectAt": 1}))
	if err != nil {
		t.Fatal(err)
	}
	f.release(t, "k/start", "k/tick/1")
	if _, err := op.Wait(f.ctx); err != nil {
		t.Fatal(err)
	}
	r := op.Settle(f.ctx)
	if r.Classification != hostcancel.CompletedBeforeCancel || r.Receipt == nil || !r.Receipt.Applied || r.Receipt.ID != "effect-1" || r.Effect != hostcancel.EffectApplied {
		t.Errorf("%s receipt %+v effect %s", r.Classification, r.Receipt, r.Effect)
	}
}

// TestReplacementRefusedUntilReconciled: no replacement operation is
// launched for a key until the previous one is reconciled; the refusal
// sends nothing. Detached is not reconciled; abandoning it is.
func TestReplacementRefusedUntilReconciled(t *testing.T) {
	f := newFixture(t)
	var ev events
	c := hostcancel.New(hostcancel.Config{Session: f.s, Policy: hostcancel.Detach, Effects: f.effects(), OnAlert: ev.alert})
	call := f.call("k", nil)
	call.Key = "order-42"
	op, err := c.Start(f.ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	retry := f.call("k-retry", nil)
	retry.Key = "order-42"
	calls := f.sent("tools/call")
	if _, err := c.Start(f.ctx, retry); !errors.Is(err, hostcancel.ErrNotReconciled) {
		t.Errorf("retry while in flight: %v, want ErrNotReconciled", err)
	}
	if r := op.Abort(f.ctx, "user left"); r.Classification != hostcancel.OutcomeUnknown || r.Unknown != hostcancel.UnknownDetached {
		t.Fatalf("%s/%s", r.Classification, r.Unknown)
	}
	if _, err := c.Start(f.ctx, retry); !errors.Is(err, hostcancel.ErrNotReconciled) {
		t.Errorf("retry after a detach: %v, want ErrNotReconciled", err)
	}
	if n := f.sent("tools/call") - calls; n != 0 {
		t.Errorf("%d tools/call sent for refused replacements", n)
	}
	if got := ev.alertNames(); !slices.Equal(got, []hostcancel.Alert{hostcancel.AlertReplacementBeforeReconcile, hostcancel.AlertReplacementBeforeReconcile}) {
		t.Errorf("alerts %v", got)
	}
	if c.Breaker().State(refserver.DefaultName, refserver.ToolTaskWorker).Open {
		t.Error("a refused replacement opened the circuit; nothing unsafe ran")
	}
	if err := c.Abandon("order-42", "operator checked the order system"); err != nil {
		t.Fatal(err)
	}
	op2, err := c.Start(f.ctx, retry)
	if err != nil {
		t.Fatalf("retry after Abandon: %v", err)
	}
	if op2.Key != "order-42" {
		t.Errorf("key %q", op2.Key)
	}
	if err := c.Abandon("never-used", ""); !errors.Is(err, hostcancel.ErrUnknownKey) {
		t.Errorf("Abandon of an unknown key: %v", err)
	}
}
