package hostcancel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

const methodToolsCall = mcp.MethodToolsCall

// MaxTrail bounds the events an operation keeps for its decision trail;
// later ones are counted, not kept.
const MaxTrail = 256

// Result is how an operation ended, with what is known.
type Result struct {
	Classification Classification
	// Unknown says why, for OutcomeUnknown.
	Unknown UnknownReason
	// Revision, Server, TaskID and RequestIDs identify the operation
	// (TaskID is empty when no CreateTaskResult came).
	Revision   Revision
	Server     peer.Implementation
	TaskID     string
	RequestIDs []jsonrpc.ID
	// Task is the last task state known.
	Task Task
	// Result is the task's result (tasks/result, or inlined), when known.
	Result json.RawMessage
	// ResultError is the JSON-RPC error the task or the call ended with.
	ResultError *jsonrpc.Error
	// CancelSent reports whether this operation sent tasks/cancel.
	CancelSent bool
	// Alert is set when any alert fired; Alerts lists them.
	Alert  bool
	Alerts []Alert
	// Detail says why, in one line, sanitised.
	Detail string
	// AbortedAt and AbortReason are the local abort (phase one), zero
	// when Settle ran without Stop.
	AbortedAt   time.Time
	AbortReason string
	// LastProgress is the last progress notification for the task, when
	// the creating request asked for progress.
	LastProgress *peer.Progress
	// WorkerStopped is the worker acknowledgement, when one ran.
	WorkerStopped *bool
	// Key, Receipt and Effect are the consequential side: the
	// idempotency key, the execution receipt the server reported, and
	// what is known of the effect.
	Key     string
	Receipt *Receipt
	Effect  EffectState
}

// Operation is one task the controller follows.
type Operation struct {
	ctrl *Controller
	w    wire
	// Tool is the tool called.
	Tool string
	// circuit is the server name of the operation's circuit, fixed at
	// Begin (Allow and the alerts' trip use the same key).
	circuit string
	// Consequential and Key: the tool is marked consequential, and Key is
	// the operation's idempotency key.
	Consequential bool
	Key           string
	// Call is the tools/call request that creates the task.
	Call *peer.Call

	span *opSpan

	createOnce sync.Once
	createErr  error
	wake       chan struct{} // a status notification arrived

	mu     sync.Mutex
	server peer.Implementation
	taskID string
	direct *jsonrpc.Message // the call's own answer when it made no task
	// seen: the server reported the task's state after its
	// CreateTaskResult (tasks/get, a notification, tasks/cancel).
	seen        bool
	requestIDs  []jsonrpc.ID
	last        Task
	cancelSent  bool
	signals     int
	abortAt     time.Time
	abortReason string
	// implicitReason: the abort reason is Wait's own; a Stop replaces it.
	implicitReason bool
	listen         *peer.Call
	// subscribed: the server acknowledged the listen stream (SUB-2).
	subscribed bool
	trail      []Event
	trailLost  int
	alerted    map[Alert]bool
	alerts     []Alert

	stopped  chan struct{}
	stopOnce sync.Once

	settleOnce sync.Once
	settled    chan struct{}
	result     Result
}

// TaskID returns the task's ID, empty until the CreateTaskResult is in.
func (op *Operation) TaskID() string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.taskID
}

// Server returns the server's identity.
func (op *Operation) Server() peer.Implementation {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.server
}

// Revision returns the task revision the operation speaks.
func (op *Operation) Revision() Revision { return op.w.revision() }

// RequestIDs returns every request ID the operation used: the creating
// tools/call, each tasks/get, tasks/cancel, tasks/result and
// subscriptions/listen.
func (op *Operation) RequestIDs() []jsonrpc.ID {
	op.mu.Lock()
	defer op.mu.Unlock()
	return slices.Clone(op.requestIDs)
}

// LastKnown returns the last task state the operation saw.
func (op *Operation) LastKnown() Task {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.last
}

// LastProgress returns the last progress notification for the task, if
// the creating request asked for progress.
func (op *Operation) LastProgress() (peer.Progress, bool) {
	if op.Call == nil {
		return peer.Progress{}, false
	}
	ps := op.Call.ProgressSeen()
	if len(ps) == 0 {
		return peer.Progress{}, false
	}
	return ps[len(ps)-1], true
}

// Aborted returns when and why the operation was stopped locally.
func (op *Operation) Aborted() (time.Time, string) {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.abortAt, op.abortReason
}

// Trail returns the operation's events so far, in order (at most
// MaxTrail), and how many more were not kept.
func (op *Operation) Trail() ([]Event, int) {
	op.mu.Lock()
	defer op.mu.Unlock()
	return slices.Clone(op.trail), op.trailLost
}

func (op *Operation) record(e Event) {
	op.mu.Lock()
	if len(op.trail) < MaxTrail {
		op.trail = append(op.trail, e)
	} else {
		op.trailLost++
	}
	op.mu.Unlock()
	op.span.event(e)
}

func (op *Operation) emit(e Event) {
	if e.TaskID == "" {
		e.TaskID = op.TaskID()
	}
	op.ctrl.emit(op, e)
}

// alert raises a once per operation: counters, hook, event, span, and the
// breaker.
func (op *Operation) alert(a Alert, detail string) {
	op.mu.Lock()
	if op.alerted[a] {
		op.mu.Unlock()
		return
	}
	op.alerted[a] = true
	op.alerts = append(op.alerts, a)
	task := op.taskID
	op.mu.Unlock()
	c := op.ctrl
	c.countAlert(a)
	ev := AlertEvent{Alert: a, Time: time.Now(), Server: op.circuit, Tool: op.Tool, TaskID: task, Detail: chrono.Sanitize(detail, false)}
	op.emit(Event{Name: EventAlert, Reason: string(a), Detail: detail})
	op.span.alert(a)
	c.cfg.Breaker.trip(ev)
	if c.cfg.OnAlert != nil {
		c.cfg.OnAlert(ev)
	}
}

// awaitCreated waits for the answer to the creating tools/call and reads
// it once. It returns ErrAborted when ctx ends or Stop is called first.
func (op *Operation) awaitCreated(ctx context.Context) error {
	select {
	case <-op.Call.Done():
	default:
		select {
		case <-op.Call.Done():
		case <-ctx.Done():
			op.stop(fmt.Sprintf("local wait ended before the CreateTaskResult: %v", context.Cause(ctx)), true)
			return fmt.Errorf("%w: %w", ErrAborted, ctx.Err())
		case <-op.stopped:
			return ErrAborted
		}
	}
	op.createOnce.Do(func() { op.createErr = op.readCreated(ctx) })
	return op.createErr
}

// readCreated reads the tools/call answer.
func (op *Operation) readCreated(ctx context.Context) error {
	resp, _ := op.Call.Response()
	switch {
	case resp == nil:
		return fmt.Errorf("hostcancel: awaiting the CreateTaskResult: %w", peer.ErrConnectionClosed)
	case resp.Error != nil:
		op.mu.Lock()
		op.direct = resp
		op.mu.Unlock()
		return fmt.Errorf("%w: %w", ErrRefused, resp.Error)
	}
	if impl, ok := op.w.server(resp.Result); ok {
		op.mu.Lock()
		op.server = impl
		op.mu.Unlock()
	}
	t, isTask, err := op.w.created(resp.Result)
	if err != nil {
		return fmt.Errorf("hostcancel: %w", err)
	}
	if !isTask {
		op.mu.Lock()
		op.direct = resp
		op.mu.Unlock()
		return nil
	}
	op.mu.Lock()
	op.taskID, op.last = t.TaskID, t
	op.mu.Unlock()
	select {
	case <-op.settled:
		// Learned after the settlement gave up on it: nothing follows the
		// task any more, so nothing routes its notifications.
		op.emit(Event{Name: EventTaskCreated, TaskID: t.TaskID, RequestID: op.Call.ID.String(), Method: methodToolsCall, Status: t.Status, Detail: "after the settlement"})
		return nil
	default:
	}
	op.ctrl.register(op, t.TaskID)
	if op.Key != "" {
		if err := op.ctrl.ledger.created(op.Key, t.TaskID); err != nil {
			op.emit(Event{Name: EventEffect, Reason: "ledger", Detail: "the task ID was not recorded: " + err.Error()})
		}
	}
	op.emit(Event{Name: EventTaskCreated, TaskID: t.TaskID, RequestID: op.Call.ID.String(), Method: methodToolsCall, Status: t.Status})
	op.subscribe(ctx)
	return nil
}

// subscribe opens the extension's subscriptions/listen stream for the task
// (TSX-48). Its answer is not awaited: the stream is long-lived.
func (op *Operation) subscribe(ctx context.Context) {
	if op.ctrl.cfg.NoListen {
		return
	}
	params, ok := op.w.listenParams(op.TaskID())
	if !ok {
		return
	}
	s := op.ctrl.cfg.Session
	id := s.NewID()
	// Known to the router before it is sent, as it is in the trail: the
	// acknowledgement may come before Start returns.
	op.ctrl.registerListen(op, id)
	op.mu.Lock()
	op.requestIDs = append(op.requestIDs, id)
	op.mu.Unlock()
	op.emit(Event{Name: EventRequest, RequestID: id.String(), Method: MethodListen})
	call, err := s.Start(context.WithoutCancel(ctx), MethodListen, params, peer.WithID(id))
	if err != nil {
		op.ctrl.unregisterListen(id)
		op.mu.Lock()
		op.requestIDs = slices.DeleteFunc(op.requestIDs, func(x jsonrpc.ID) bool { return x == id })
		op.mu.Unlock()
		op.emit(Event{Name: EventListen, Method: MethodListen, Detail: "not opened: " + err.Error()})
		return
	}
	op.mu.Lock()
	op.listen = call
	op.mu.Unlock()
}

// listenAcked records the subscription's acknowledgement (SUB-2): from
// now on a status change of the task is sent on it (TSX-48).
func (op *Operation) listenAcked() {
	op.mu.Lock()
	op.subscribed = true
	op.mu.Unlock()
	op.emit(Event{Name: EventListen, Method: mcp.NotificationSubscriptionsAcknowledged, Detail: "subscription acknowledged"})
}

// subscribedNow reports whether the task's subscription is acknowledged.
func (op *Operation) subscribedNow() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.subscribed
}

// unsubscribe ends the listen stream: a client cancels it with
// notifications/cancelled naming the listen request (SUB-10), which is not
// a task request.
func (op *Operation) unsubscribe(ctx context.Context) {
	op.mu.Lock()
	call := op.listen
	op.mu.Unlock()
	if call == nil {
		return
	}
	select {
	case <-call.Done():
		return
	default:
	}
	_ = op.ctrl.cfg.Session.Cancel(ctx, call, "hostcancel: operation settled")
}

// notified takes a status notification for the task. 2025-11-25 only
// wakes the poller (TSK-22); the extension's notification is the state
// itself (TSX-50).
func (op *Operation) notified(t Task) {
	op.emit(Event{Name: EventNotification, Method: notificationMethod(op.w), Status: t.Status, Detail: t.StatusMessage})
	if op.w.notificationsAreState() {
		op.observe(t, "", "notification")
	}
	select {
	case op.wake <- struct{}{}:
	default:
	}
}

func notificationMethod(w wire) string {
	if w.notificationsAreState() {
		return NotificationTasks
	}
	return mcp.NotificationTaskStatus
}

// request sends method with params and records its ID.
func (op *Operation) request(ctx context.Context, method string, params any) (*jsonrpc.Message, jsonrpc.ID, error) {
	s := op.ctrl.cfg.Session
	id := s.NewID()
	// Recorded before the frame goes out, so that the trail never shows
	// its answer's notifications first.
	op.mu.Lock()
	op.requestIDs = append(op.requestIDs, id)
	op.mu.Unlock()
	op.emit(Event{Name: EventRequest, RequestID: id.String(), Method: method})
	call, err := s.Start(ctx, method, params, peer.WithID(id))
	if err != nil {
		op.mu.Lock()
		op.requestIDs = slices.DeleteFunc(op.requestIDs, func(x jsonrpc.ID) bool { return x == id })
		op.mu.Unlock()
		op.emit(Event{Name: EventReconcile, RequestID: id.String(), Method: method, Detail: "not sent: " + err.Error()})
		return nil, id, err
	}
	resp, err := call.Await(ctx)
	return resp, call.ID, err
}

// observe records a task state the server reported (a tasks/get answer,
// a notification, a tasks/cancel answer). A terminal state is never
// replaced by a non-terminal one: terminal states are final (TSK-65,
// TSX-15), so a non-terminal state read after one is stale, as a
// notification on the subscription stream can be when it overtakes, or is
// overtaken by, a tasks/get answer on another HTTP exchange. The
// terminal state read later (a status that left cancelled) is kept, so
// that verify can judge it.
func (op *Operation) observe(t Task, id, source string) {
	op.mu.Lock()
	op.seen = true
	if op.last.Terminal() && !t.Terminal() {
		op.mu.Unlock()
		op.emit(Event{Name: EventStatus, RequestID: id, Status: t.Status, Reason: source,
			Detail: "stale: the task was already " + op.last.Status + "; kept " + op.last.Status})
		return
	}
	changed := t.Status != op.last.Status
	op.last = t
	op.mu.Unlock()
	if changed {
		op.emit(Event{Name: EventStatus, RequestID: id, Status: t.Status, Reason: source, Detail: t.StatusMessage})
	}
}

// Poll sends one tasks/get. A JSON-RPC error comes back as *jsonrpc.Error.
func (op *Operation) Poll(ctx context.Context) (Task, error) {
	id := op.TaskID()
	if id == "" {
		return Task{}, fmt.Errorf("hostcancel: no task yet")
	}
	resp, rid, err := op.request(ctx, mcp.MethodTasksGet, op.w.taskParams(id))
	if err != nil {
		return Task{}, err
	}
	if resp.Error != nil {
		return Task{}, resp.Error
	}
	t, err := op.w.task(resp.Result)
	if err != nil {
		return t, err
	}
	op.observe(t, rid.String(), mcp.MethodTasksGet)
	return t, nil
}

// pollDelay is the pause before the next poll: the task's poll interval
// within [MinPoll, MaxPoll].
func (op *Operation) pollDelay() time.Duration {
	t := op.LastKnown()
	cfg := op.ctrl.cfg
	d := cfg.MinPoll
	if t.PollInterval != nil {
		d = time.Duration(*t.PollInterval * float64(time.Millisecond))
	}
	return min(max(d, cfg.MinPoll), cfg.MaxPoll)
}

// next waits for the next moment to poll: the poll delay, or a status
// notification. It reports false, with the reason, when ctx ends or the
// operation is stopped.
func (op *Operation) next(ctx context.Context, stopToo bool) (poll bool, err error) {
	timer := time.NewTimer(op.pollDelay())
	defer timer.Stop()
	var stopped <-chan struct{}
	if stopToo {
		stopped = op.stopped
	}
	select {
	case <-timer.C:
		return true, nil
	case <-op.wake:
		return !op.w.notificationsAreState(), nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-stopped:
		return false, ErrAborted
	}
}

// Created waits for the CreateTaskResult and returns the task's first
// state; under the extension a call the server answered without a task
// returns a zero Task and no error.
func (op *Operation) Created(ctx context.Context) (Task, error) {
	if err := op.awaitCreated(ctx); err != nil {
		return Task{}, err
	}
	return op.LastKnown(), nil
}

// Wait polls tasks/get, respecting the poll interval and woken by status
// notifications, until the task is terminal, and returns its last state.
// When ctx ends first, or Stop is called, Wait runs phase one (the local
// abort) and returns ErrAborted: nothing is sent to the server, so the task
// may well still be working.
func (op *Operation) Wait(ctx context.Context) (Task, error) {
	if err := op.awaitCreated(ctx); err != nil {
		return op.LastKnown(), err
	}
	op.mu.Lock()
	direct := op.direct
	op.mu.Unlock()
	if direct != nil {
		return Task{}, nil
	}
	for {
		t := op.LastKnown()
		if t.Terminal() {
			return t, nil
		}
		poll, err := op.next(ctx, true)
		switch {
		case errors.Is(err, ErrAborted):
			return op.LastKnown(), ErrAborted
		case err != nil:
			op.stop(fmt.Sprintf("local wait ended: %v", context.Cause(ctx)), true)
			return op.LastKnown(), fmt.Errorf("%w: %w", ErrAborted, err)
		case !poll:
			continue
		}
		if _, err := op.Poll(ctx); err != nil {
			if ctx.Err() != nil {
				op.stop(fmt.Sprintf("local wait ended: %v", context.Cause(ctx)), true)
				return op.LastKnown(), fmt.Errorf("%w: %w", ErrAborted, ctx.Err())
			}
			return op.LastKnown(), fmt.Errorf("hostcancel: polling task: %w", err)
		}
	}
}

// Stop is phase one: it records a local cancel signal and, the first
// time, stops local waiting and records the abort time and reason. It
// sends nothing. Every call counts as a request_cancel_signal; a second
// call raises AlertRepeatedCancel (still only one tasks/cancel is sent).
// The stop Wait makes itself when its context ends does not count as a
// request for that alert, and a later Stop gives the abort its reason.
func (op *Operation) Stop(reason string) { op.stop(reason, false) }

func (op *Operation) stop(reason string, implicit bool) {
	c := op.ctrl
	c.c.signals.Add(1)
	op.span.signal()
	op.mu.Lock()
	n := op.signals
	if !implicit {
		op.signals++
		n = op.signals
		if op.implicitReason {
			op.abortReason, op.implicitReason = reason, false
		}
	}
	op.mu.Unlock()
	op.emit(Event{Name: EventRequestCancelSignal, Reason: reason})
	if !implicit && n == 2 {
		op.alert(AlertRepeatedCancel, fmt.Sprintf("a second cancellation request for the task (%s); one tasks/cancel at most is sent", reason))
	}
	op.stopOnce.Do(func() {
		op.mu.Lock()
		op.abortAt, op.abortReason, op.implicitReason = time.Now(), reason, implicit
		status := op.last.Status
		op.mu.Unlock()
		c.c.aborts.Add(1)
		op.emit(Event{Name: EventLocalAbort, Status: status, Reason: reason})
		close(op.stopped)
	})
}

// Abort is phase one then phase two: Stop(reason), then Settle.
func (op *Operation) Abort(ctx context.Context, reason string) Result {
	op.Stop(reason)
	return op.Settle(ctx)
}

// Done is closed once the operation is settled.
func (op *Operation) Done() <-chan struct{} { return op.settled }

// Settle is phase two, by policy. It runs once per operation: concurrent
// and later calls wait for the first and return its Result, so at most
// one tasks/cancel is ever sent.
func (op *Operation) Settle(ctx context.Context) Result {
	op.settleOnce.Do(func() {
		defer close(op.settled)
		r := op.settle(ctx)
		op.finish(ctx, &r)
		op.result = r
	})
	select {
	case <-op.settled:
	case <-ctx.Done():
		r := op.known(OutcomeUnknown, "stopped waiting for the settlement: "+ctx.Err().Error())
		r.Unknown = UnknownInterrupted
		return r
	}
	return op.result
}

// known is a Result with what the operation knows.
func (op *Operation) known(cl Classification, detail string) Result {
	op.mu.Lock()
	defer op.mu.Unlock()
	return Result{Classification: cl, Revision: op.w.revision(), Server: op.server, TaskID: op.taskID,
		RequestIDs: slices.Clone(op.requestIDs), Task: op.last, CancelSent: op.cancelSent, Detail: detail,
		AbortedAt: op.abortAt, AbortReason: op.abortReason, Key: op.Key}
}

func (op *Operation) unknown(why UnknownReason, detail string) Result {
	r := op.known(OutcomeUnknown, detail)
	r.Unknown = why
	return r
}

// finish completes r: effects, progress, alerts, ledger, telemetry.
func (op *Operation) finish(ctx context.Context, r *Result) {
	c := op.ctrl
	if op.Consequential {
		op.reconcileEffect(ctx, r)
	}
	r.Detail = chrono.Sanitize(r.Detail, false)
	if p, ok := op.LastProgress(); ok {
		r.LastProgress = &p
		op.emit(Event{Name: EventProgress, Detail: fmt.Sprintf("last progress %v %s", p.Progress, p.Message)})
	}
	op.mu.Lock()
	r.Alerts = slices.Clone(op.alerts)
	r.RequestIDs = slices.Clone(op.requestIDs)
	r.Server = op.server
	op.mu.Unlock()
	r.Alert = len(r.Alerts) > 0
	if r.Classification == CancelledVerified {
		c.c.verified.Add(1)
		op.span.verified()
		op.emit(Event{Name: EventTaskCancelVerified, Status: r.Task.Status})
	}
	op.emit(Event{Name: EventClassified, Status: r.Task.Status, Reason: string(r.Classification), Detail: r.Detail})
	if op.Call != nil && op.w.progressForTasks() {
		c.cfg.Session.EndProgress(op.Call)
	}
	op.unsubscribe(context.WithoutCancel(ctx))
	op.mu.Lock()
	listen := op.listen
	op.mu.Unlock()
	if listen != nil {
		c.unregisterListen(listen.ID)
	}
	if id := op.TaskID(); id != "" {
		c.unregister(id)
	}
	if op.Key != "" {
		if err := c.ledger.settle(op.Key, r.TaskID, r.Classification, r.Effect); err != nil {
			op.emit(Event{Name: EventEffect, Reason: "ledger", Detail: "the settlement was not recorded: " + err.Error()})
		}
		c.settledKey(op.Key)
	}
	op.span.end(op, *r)
}

// reconcileEffect decides what is known of a consequential operation's
// effect: the receipt first, then the system of record. A cancelled (or
// unknown) outcome whose effect committed becomes EffectCommitted.
func (op *Operation) reconcileEffect(ctx context.Context, r *Result) {
	if reconcileEffect(ctx, op.ctrl.cfg.Effects, op.Key, r, op.emit) {
		op.alert(AlertCancelHidesEffect, r.Detail)
	}
}

// reconcileEffect completes r with what the receipt, then the system of
// record, say of key's effect; a classification other than completed
// whose effect committed becomes EffectCommitted. It reports whether a
// committed effect was hidden by a non-failed outcome (an alert).
func reconcileEffect(ctx context.Context, eff *Effects, key string, r *Result, emit func(Event)) (hidden bool) {
	r.Effect = EffectUnknown
	if rec, ok := eff.receipt(r.Result); ok {
		r.Receipt = &rec
		r.Effect = EffectNotApplied
		if rec.Applied {
			r.Effect = EffectApplied
		}
		emit(Event{Name: EventEffect, Reason: "receipt", Detail: fmt.Sprintf("receipt %q applied %v", rec.ID, rec.Applied)})
	}
	if r.Effect != EffectApplied && eff.Check != nil && !(r.Classification == CompletedBeforeCancel && r.Receipt != nil) {
		applied, detail, err := eff.Check(ctx, key)
		switch {
		case err != nil:
			emit(Event{Name: EventEffect, Reason: "system of record", Detail: "check failed: " + err.Error()})
		case applied:
			r.Effect = EffectApplied
			emit(Event{Name: EventEffect, Reason: "system of record", Detail: "applied: " + detail})
		default:
			r.Effect = EffectNotApplied
			emit(Event{Name: EventEffect, Reason: "system of record", Detail: "not applied: " + detail})
		}
	}
	if r.Effect == EffectApplied && r.Classification != CompletedBeforeCancel {
		was := r.Classification
		r.Classification, r.Unknown = EffectCommitted, ""
		r.Detail = fmt.Sprintf("%s, but the effect committed: %s", was, r.Detail)
		return was != Failed
	}
	return false
}

// settle is phase two.
func (op *Operation) settle(ctx context.Context) Result {
	c := op.ctrl
	gctx, stop := context.WithTimeoutCause(ctx, c.cfg.Grace, errGraceEnded)
	defer stop()
	if err := op.awaitCreatedSettling(gctx); err != nil {
		return *err
	}
	op.mu.Lock()
	direct := op.direct
	op.mu.Unlock()
	if direct != nil {
		return op.fromDirect(direct)
	}
	last := op.LastKnown()
	if last.Terminal() {
		return op.fromTerminal(gctx, last, "the task was already "+last.Status+" when settled")
	}
	if c.cfg.Policy == Detach {
		return op.unknown(UnknownDetached, "detached: the task was left "+last.Status)
	}
	if _, cancel := op.w.support(c.cfg.Session); !cancel {
		op.alert(AlertConsequentialWithoutCancel, "the server does not declare tasks.cancel")
		return op.unknown(UnknownNoCancel, "the server does not declare tasks.cancel; the task was left "+last.Status)
	}
	return op.cancel(ctx)
}

// awaitCreatedSettling waits, within the grace, for the CreateTaskResult
// of an operation aborted before it came. It never sends
// notifications/cancelled (CAN-4, CAN-7).
func (op *Operation) awaitCreatedSettling(gctx context.Context) *Result {
	select {
	case <-op.Call.Done():
	default:
		op.emit(Event{Name: EventReconcile, RequestID: op.Call.ID.String(),
			Detail: "no CreateTaskResult yet: keeping the request and waiting for the task ID (A-6; no notifications/cancelled, CAN-4)"})
		select {
		case <-op.Call.Done():
		case <-gctx.Done():
			if !graceEnded(gctx) {
				r := op.unknown(UnknownInterrupted, fmt.Sprintf("stopped waiting for the CreateTaskResult: %v (request %s kept, A-6)", context.Cause(gctx), op.Call.ID))
				return &r
			}
			r := op.unknown(UnknownNoCreateResult, fmt.Sprintf("no CreateTaskResult within %v after the abort; the server may have created a task (request %s kept, A-6)", op.ctrl.cfg.Grace, op.Call.ID))
			return &r
		}
	}
	op.createOnce.Do(func() { op.createErr = op.readCreated(gctx) })
	if err := op.createErr; err != nil {
		op.mu.Lock()
		direct := op.direct
		op.mu.Unlock()
		if direct != nil {
			r := op.fromDirect(direct)
			return &r
		}
		r := op.unknown(UnknownConnectionLost, err.Error())
		return &r
	}
	return nil
}

// fromDirect classifies a call that made no task: an error answer, or the
// tool's result (extension, TSX-3).
func (op *Operation) fromDirect(resp *jsonrpc.Message) Result {
	if resp.Error != nil {
		r := op.known(Failed, fmt.Sprintf("the server refused the call: error %d %s", resp.Error.Code, resp.Error.Message))
		r.ResultError = resp.Error
		return r
	}
	r := op.known(CompletedBeforeCancel, "the server answered with the tool's result; no task was created")
	r.Result = resp.Result
	return r
}

// cancel sends the one tasks/cancel and verifies.
func (op *Operation) cancel(ctx context.Context) Result {
	c := op.ctrl
	vctx, stop := context.WithTimeoutCause(ctx, c.cfg.Grace, errGraceEnded)
	defer stop()
	before := op.LastKnown().Status
	op.mu.Lock()
	op.cancelSent = true
	op.mu.Unlock()
	c.c.requested.Add(1)
	op.span.cancelStart(op.TaskID(), before)
	op.emit(Event{Name: EventTaskCancelRequested, Method: mcp.MethodTasksCancel, Status: before})
	resp, id, err := op.request(vctx, mcp.MethodTasksCancel, op.w.taskParams(op.TaskID()))
	switch {
	case err != nil:
		op.span.cancelEnd(id.String(), "no answer: "+err.Error(), "", true)
		if vctx.Err() != nil && !graceEnded(vctx) {
			return op.unknown(UnknownInterrupted, "stopped waiting for the tasks/cancel answer: "+context.Cause(vctx).Error())
		}
		return op.unknown(UnknownCancelUnanswered, "tasks/cancel got no answer: "+err.Error())
	case resp.Error != nil && resp.Error.Code == jsonrpc.CodeInvalidParams:
		op.span.cancelEnd(id.String(), fmt.Sprintf("error %d", resp.Error.Code), "", false)
		op.emit(Event{Name: EventTaskCancelResponse, RequestID: id.String(), Method: mcp.MethodTasksCancel,
			Detail: fmt.Sprintf("error %d %s", resp.Error.Code, resp.Error.Message)})
		return op.reconcile(vctx, resp.Error)
	case resp.Error != nil:
		op.span.cancelEnd(id.String(), fmt.Sprintf("error %d", resp.Error.Code), "", true)
		return op.unknown(UnknownCancelRefused, fmt.Sprintf("tasks/cancel failed: error %d %s", resp.Error.Code, resp.Error.Message))
	}
	acked, err := op.w.cancelled(resp.Result)
	if err != nil {
		op.span.cancelEnd(id.String(), "malformed", "", true)
		return op.unknown(UnknownCancelRefused, err.Error())
	}
	after := ""
	if acked != nil {
		op.observe(*acked, id.String(), mcp.MethodTasksCancel)
		after = acked.Status
	}
	op.span.cancelEnd(id.String(), "accepted", after, false)
	op.emit(Event{Name: EventTaskCancelResponse, RequestID: id.String(), Method: mcp.MethodTasksCancel, Status: after,
		Detail: ackDetail(acked)})
	return op.verify(vctx, acked)
}

func ackDetail(acked *Task) string {
	if acked == nil {
		return "acknowledged (empty result: eventually consistent, TSX-44)"
	}
	if acked.Status != mcp.TaskCancelled {
		return "answered with status " + acked.Status + ", not cancelled (TSK-64)"
	}
	return "answered with the cancelled task (TSK-64)"
}

// reconcile handles a -32602 to tasks/cancel: 2025-11-25 says the task was
// already terminal (TSK-63, A-15) or is unknown; the extension says it is
// unknown (TSX-54). The state decides.
func (op *Operation) reconcile(ctx context.Context, rerr *jsonrpc.Error) Result {
	op.ctrl.c.reconciles.Add(1)
	op.emit(Event{Name: EventReconcile, Detail: fmt.Sprintf("tasks/cancel: error %d %s; reading the state", rerr.Code, rerr.Message)})
	t, err := op.Poll(ctx)
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams && !op.wasSeen():
		// Never read since its CreateTaskResult: it was announced before
		// it was durable (TSK-44, TSX-16), and its work may yet start.
		return op.unknown(UnknownNotFound, "the server answered a CreateTaskResult, but tasks/cancel and tasks/get do not find the task: "+
			"it was not durable when announced (TSK-44, TSX-16), so its work may still start")
	case errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams:
		return op.unknown(UnknownTaskVanished, "tasks/cancel and tasks/get both say the task is unknown (expired or deleted)")
	case err != nil:
		return op.unknown(UnknownVerifyFailed, "tasks/cancel was refused and tasks/get failed: "+err.Error())
	case !t.Terminal():
		return op.unknown(UnknownCancelRefused, "tasks/cancel was refused with -32602 but the task is "+t.Status)
	}
	why := "(TSK-63, A-15)"
	if !op.w.fetchesResult() {
		// The extension acknowledges a cancel of a terminal task (TSX-44,
		// A-17); -32602 is the 2025-11-25 answer, and the state decides.
		why = "(the extension acknowledges that cancel, TSX-44; this server refused it with -32602 as 2025-11-25 does)"
	}
	if t.Status == mcp.TaskCancelled {
		op.checkForeignCancel()
	} else {
		op.alert(AlertTerminalRace, "the task was already "+t.Status+" when tasks/cancel arrived "+why)
	}
	return op.fromTerminal(ctx, t, "tasks/cancel refused: the task was already "+t.Status+" "+why)
}

func (op *Operation) wasSeen() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.seen
}

// checkForeignCancel is called when the task turned out cancelled without
// this controller's tasks/cancel taking effect: if notifications/cancelled
// named one of the operation's requests, the server counted a request
// notification as task cancellation (CAN-4).
func (op *Operation) checkForeignCancel() {
	ids := map[string]bool{}
	for _, id := range op.RequestIDs() {
		ids[id.String()] = true
	}
	for _, ev := range op.ctrl.cfg.Session.Log().Events() {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil &&
			ev.Summary.Method == mcp.NotificationCancelled && ids[ev.Summary.RequestID] {
			op.alert(AlertNotificationCountedAsCancel, fmt.Sprintf(
				"the task was cancelled before tasks/cancel, after notifications/cancelled for request %s (seq %d): a request notification counted as task cancellation (CAN-4)",
				ev.Summary.RequestID, ev.Seq))
			return
		}
	}
}

// verify follows an accepted tasks/cancel: tasks/get (and notifications)
// until terminal within the grace, the status sticky, then the worker.
func (op *Operation) verify(ctx context.Context, acked *Task) Result {
	c := op.ctrl
	t := op.LastKnown()
	if acked != nil {
		t = *acked
	}
	// The extension's empty ack says nothing of the state, which a server
	// that cancels at once (most do) already shows: without an
	// acknowledged subscription to tell the change (TSX-48), read it now
	// rather than after a poll interval (never wait longer than the
	// evidence needs). 2025-11-25's ack is the state itself (TSK-64).
	pollNow := acked == nil && !op.subscribedNow()
	for !t.Terminal() {
		if !pollNow {
			poll, err := op.next(ctx, false)
			if err != nil && !graceEnded(ctx) {
				r := op.unknown(UnknownInterrupted, "verification stopped before the grace ended: "+context.Cause(ctx).Error())
				r.Task = t
				return r
			}
			if err != nil {
				op.alert(AlertStillWorkingPastGrace, fmt.Sprintf("the task was still %s %v after tasks/cancel", t.Status, c.cfg.Grace))
				r := op.known(StillWorkingPastGrace, fmt.Sprintf("the task was still %s %v after tasks/cancel", t.Status, c.cfg.Grace))
				r.Task = t
				return r
			}
			if !poll {
				t = op.LastKnown()
				continue
			}
		}
		pollNow = false
		got, err := op.Poll(ctx)
		if err != nil {
			var rpc *jsonrpc.Error
			if errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams {
				return op.unknown(UnknownTaskVanished, "the task was deleted after tasks/cancel before it read terminal")
			}
			if ctx.Err() != nil {
				continue // the grace ended during the poll: the loop says so
			}
			return op.unknown(UnknownVerifyFailed, "verifying: "+err.Error())
		}
		t = got
	}
	if t.Status != mcp.TaskCancelled {
		// 2025-11-25: a cancelled ack followed by another status breaks
		// TSK-65; the extension allows it (TSX-44).
		if acked != nil && acked.Status == mcp.TaskCancelled {
			op.alert(AlertTerminalRace, "the task left cancelled for "+t.Status+" (TSK-65)")
			r := op.unknown(UnknownLeftCancelled, "the task left cancelled for "+t.Status+" (TSK-65)")
			r.Task = t
			return r
		}
		op.alert(AlertTerminalRace, "the task ended "+t.Status+" after tasks/cancel (the work finished first, TSX-44)")
		return op.fromTerminal(ctx, t, "the task ended "+t.Status+" before the cancel took effect")
	}
	// Cancelled: it must stay so (TSK-65, TSX-15).
	after, err := op.Poll(ctx)
	switch {
	case err == nil && after.Status != mcp.TaskCancelled:
		op.alert(AlertTerminalRace, "the task left cancelled for "+after.Status+" (TSK-65)")
		r := op.unknown(UnknownLeftCancelled, "the task left cancelled for "+after.Status+" (TSK-65)")
		r.Task = after
		return r
	case err == nil:
		t = after
	}
	return op.fromTerminal(ctx, t, "tasks/cancel accepted and verified")
}

// errGraceEnded is the cause of a verification context whose grace ended.
var errGraceEnded = errors.New("hostcancel: the cancellation grace period ended")

// graceEnded reports whether ctx ended because the grace did, not because
// the caller stopped the settlement.
func graceEnded(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errGraceEnded) }

// workerAck runs the worker acknowledgement. ok is false when it could
// not run or failed; then r says why.
func (op *Operation) workerAck(ctx context.Context, r *Result) bool {
	c := op.ctrl
	if c.cfg.Ack == nil {
		return true
	}
	stopped, detail, err := c.cfg.Ack(ctx, op)
	c.c.acks.Add(1)
	op.emit(Event{Name: EventWorkerAck, Status: fmt.Sprintf("stopped=%v", stopped), Detail: detail})
	if err != nil && ctx.Err() == nil {
		*r = op.unknown(UnknownVerifyFailed, "worker acknowledgement failed: "+err.Error())
		return false
	}
	if !stopped && ctx.Err() != nil && !graceEnded(ctx) {
		*r = op.unknown(UnknownInterrupted, "the worker acknowledgement was stopped before the grace ended")
		return false
	}
	r.WorkerStopped = &stopped
	if !stopped {
		op.alert(AlertCancelAckedWorkerRunning, "the task reads cancelled but the worker did not stop: "+detail)
		r.Classification = WorkerStillRunning
		r.Detail = "the task reads cancelled but the worker did not stop: " + detail
		return false
	}
	return true
}

// fromTerminal classifies a terminal task, reading its outcome: inlined
// (extension) or by tasks/result (2025-11-25, for completed and failed
// tasks, and for a cancelled consequential one, whose result may carry a
// receipt).
func (op *Operation) fromTerminal(ctx context.Context, t Task, detail string) Result {
	r := op.known("", detail)
	r.Task = t
	switch t.Status {
	case mcp.TaskCancelled:
		r.Classification = CancelledVerified
		if !op.cancelSentNow() {
			op.checkForeignCancel()
		}
		if !op.workerAck(ctx, &r) {
			if r.Classification == WorkerStillRunning {
				r.Task = t
			}
			return r
		}
		if !op.Consequential || !op.w.fetchesResult() {
			r.Result = t.Result
			return r
		}
	case mcp.TaskCompleted:
		r.Classification = CompletedBeforeCancel
	default:
		r.Classification = Failed
	}
	readOutcome(ctx, op.w, op.request, op.TaskID(), t, &r)
	return r
}

// sender sends one request and awaits its answer: an operation's (which
// records the request ID) or the controller's own (Reconcile).
type sender func(ctx context.Context, method string, params any) (*jsonrpc.Message, jsonrpc.ID, error)

// readOutcome completes r, classified from the terminal task t, with its
// outcome: inlined (extension) or by tasks/result (2025-11-25).
func readOutcome(ctx context.Context, w wire, send sender, taskID string, t Task, r *Result) {
	if !w.fetchesResult() {
		r.Result, r.ResultError = t.Result, t.Error
		switch {
		case t.Status == mcp.TaskCompleted && t.Result == nil:
			// There is no tasks/result to ask (TSX-65): the outcome the
			// task completed with is lost.
			r.Classification, r.Unknown = OutcomeUnknown, UnknownResultMissing
			r.Detail += "; the completed task carries no result (TSX-27), and the extension has no tasks/result to ask"
			return
		case t.Status == mcp.TaskFailed && t.Error == nil:
			r.Detail += "; the failed task carries no error (TSX-29)"
		}
		toolError(r)
		return
	}
	resp, _, err := send(ctx, mcp.MethodTasksResult, w.taskParams(taskID))
	switch {
	case err != nil:
		r.Detail += "; tasks/result: " + err.Error()
	case resp.Error != nil:
		r.ResultError = resp.Error
	default:
		r.Result = resp.Result
	}
	toolError(r)
}

// toolError classifies a completed task whose tool result has isError as
// Failed: the tool failed, which 2025-11-25 says with the failed status
// (TSK-76) and the extension with completed and the result (TSX-14,
// TSX-59), so that one host reads one outcome under both.
func toolError(r *Result) {
	if r.Classification != CompletedBeforeCancel || !isToolError(r.Result) {
		return
	}
	r.Classification = Failed
	r.Detail += "; the tool reported an error (isError)"
}

// isToolError reports whether a CallToolResult has isError true.
func isToolError(result json.RawMessage) bool {
	var v struct {
		IsError bool `json:"isError"`
	}
	return len(result) > 0 && json.Unmarshal(result, &v) == nil && v.IsError
}

func (op *Operation) cancelSentNow() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.cancelSent
}
