package hostcancel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// ErrInFlight refuses to reconcile a key that an operation of this
// controller still runs: its own settlement will.
var ErrInFlight = errors.New("hostcancel: an operation of this controller still runs with this idempotency key")

// Reconcile settles, from what can be known now and without launching a
// replacement, the operation with idempotency key that a previous run of
// the host left unreconciled (Ledger.Unreconciled after OpenLedger: the
// host died between the call and its settlement, perhaps between the
// effect and its receipt). It reads the task the ledger recorded with
// tasks/get — the extension's tasks outlive the connection that created
// them (RPC-60); a 2025-11-25 task lives with its session, which a new
// run rarely has — then its result and receipt, then the system of record
// (Effects.Check). When that reconciles the entry (completed, failed,
// effect committed, or cancelled with the system of record showing no
// effect) the outcome is recorded; otherwise the entry stays open (the
// task still working, or nothing known), the Result says what is known,
// and the host may call Reconcile again later or Abandon the key.
func (c *Controller) Reconcile(ctx context.Context, key string) (Result, error) {
	if c.wErr != nil {
		return Result{}, c.wErr
	}
	e, ok := c.ledger.get(key)
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownKey, key)
	}
	c.mu.Lock()
	live := c.live[key]
	c.mu.Unlock()
	if live {
		return Result{}, fmt.Errorf("%w: %q", ErrInFlight, key)
	}
	r := Result{Revision: c.w.revision(), Key: key, TaskID: e.TaskID, Server: c.cfg.Server,
		Classification: e.Classification, Effect: e.Effect}
	if e.Reconciled() {
		r.Detail = "already reconciled"
		return r, nil
	}
	emit := func(ev Event) {
		ev.TaskID = e.TaskID
		c.emit(nil, ev)
	}
	r.Classification = OutcomeUnknown
	if e.TaskID == "" {
		r.Unknown = UnknownNoCreateResult
		r.Detail = "no task ID was recorded: the previous run ended before the CreateTaskResult"
	} else {
		c.readRecovered(ctx, e.TaskID, &r)
	}
	if c.cfg.Effects != nil {
		reconcileEffect(ctx, c.cfg.Effects, key, &r, emit)
	}
	if r.Classification == OutcomeUnknown && r.Task.Status == mcp.TaskCancelled && r.Effect == EffectNotApplied {
		// Cancelled, and the system of record shows no effect: nothing
		// happened and nothing will (a terminal status is final).
		r.Classification, r.Unknown = CancelledVerified, ""
		r.Detail += "; the system of record shows no effect"
	}
	r.Detail = chrono.Sanitize(r.Detail, false)
	if (Entry{Settled: true, Classification: r.Classification}).Reconciled() {
		if err := c.ledger.settle(key, r.TaskID, r.Classification, r.Effect); err != nil {
			return r, err
		}
	}
	emit(Event{Name: EventClassified, Status: r.Task.Status, Reason: string(r.Classification), Detail: "reconciled after a restart: " + r.Detail})
	return r, nil
}

// readRecovered reads the recovered task taskID into r: its state and,
// when terminal, its outcome.
func (c *Controller) readRecovered(ctx context.Context, taskID string, r *Result) {
	resp, _, err := c.send(ctx, mcp.MethodTasksGet, c.w.taskParams(taskID))
	var rpc *jsonrpc.Error
	switch {
	case err == nil && resp.Error != nil:
		rpc = resp.Error
	case err != nil:
		r.Unknown, r.Detail = UnknownVerifyFailed, "tasks/get of the recorded task: "+err.Error()
		return
	}
	if rpc != nil {
		r.Unknown = UnknownTaskVanished
		r.Detail = fmt.Sprintf("tasks/get of the recorded task %s: error %d %s (expired, deleted, or another session's)", taskID, rpc.Code, rpc.Message)
		return
	}
	t, err := c.w.task(resp.Result)
	if err != nil {
		r.Unknown, r.Detail = UnknownVerifyFailed, "tasks/get of the recorded task: "+err.Error()
		return
	}
	r.Task = t
	switch t.Status {
	case mcp.TaskCompleted:
		r.Classification = CompletedBeforeCancel
	case mcp.TaskFailed:
		r.Classification = Failed
	case mcp.TaskCancelled:
		// Cancelled on paper: the effect decides (below).
		r.Unknown, r.Detail = UnknownEffect, "the recorded task is cancelled"
		return
	default:
		r.Unknown, r.Detail = UnknownDetached, "the recorded task is still "+t.Status
		return
	}
	r.Detail = "the recorded task is " + t.Status
	readOutcome(ctx, c.w, c.send, taskID, t, r)
	r.Detail = strings.TrimPrefix(r.Detail, "; ")
}

// send is a request of the controller's own, outside any operation.
func (c *Controller) send(ctx context.Context, method string, params any) (*jsonrpc.Message, jsonrpc.ID, error) {
	call, err := c.cfg.Session.Start(ctx, method, params)
	if err != nil {
		return nil, jsonrpc.ID{}, err
	}
	resp, err := call.Await(ctx)
	return resp, call.ID, err
}
