// Package hostcancel is a two-phase cancellation controller for hosts that
// run MCP tools as durable tasks (2025-11-25 tasks).
//
// Stopping to wait is a local event; stopping the server's work is a
// separate claim that needs evidence. notifications/cancelled names a
// request, tasks/cancel names a task (CAN-4), and a host that only aborts
// its own polling leaves the task working. The controller keeps the two
// apart:
//
//   - Phase one (Stop, or Wait whose context ends) stops waiting locally
//     and keeps what is needed later: the task ID, every request ID, the
//     server's identity and the last known status.
//   - Phase two (Settle) follows the policy. Detach sends nothing. Cancel
//     sends exactly one tasks/cancel, however many local signals race,
//     then verifies with tasks/get (and the worker acknowledgement, where
//     the host has one) for a bounded grace period. A -32602 answer means
//     the task was already terminal: the controller reconciles by fetching
//     its state and, where it completed or failed, its result.
//
// Every operation ends with one Classification, and the controller emits
// structured Events and keeps Counters for telemetry.
package hostcancel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// Policy says what phase two does.
type Policy string

// Policies.
const (
	// Detach leaves the task running: the host may recover it later.
	Detach Policy = "detach"
	// Cancel sends tasks/cancel and verifies that the task stopped.
	Cancel Policy = "cancel"
)

// Classification is how an operation ended.
type Classification string

// Classifications.
const (
	// CancelledVerified: tasks/cancel was accepted and tasks/get (and the
	// worker acknowledgement, when configured) confirmed the stop.
	CancelledVerified Classification = "cancelled-verified"
	// CompletedBeforeCancel: the task completed before the cancel took
	// effect (or before the host aborted); Result holds its result.
	CompletedBeforeCancel Classification = "completed-before-cancel"
	// Failed: the task failed; Result or ResultError holds what
	// tasks/result returned.
	Failed Classification = "failed"
	// StillWorkingPastGrace: after the cancel, the task or its worker was
	// still working when the grace period ended. This is an alert.
	StillWorkingPastGrace Classification = "still-working-past-grace"
	// OutcomeUnknown: the controller cannot tell (detached, no cancel
	// capability, the task vanished, the connection broke).
	OutcomeUnknown Classification = "outcome-unknown"
)

// Event names.
const (
	EventTaskCreated         = "task_created"
	EventStatus              = "task_status"
	EventProgress            = "progress"
	EventRequestCancelSignal = "request_cancel_signal"
	EventLocalAbort          = "local_abort"
	EventTaskCancelRequested = "task_cancel_requested"
	EventTaskCancelResponse  = "task_cancel_response"
	EventTaskCancelVerified  = "task_cancel_verified"
	EventWorkerAck           = "worker_ack"
	EventReconcile           = "reconcile"
	EventClassified          = "classified"
	EventAlert               = "alert"
)

// Sentinel errors.
var (
	// ErrAborted is returned by Wait when the operation was stopped
	// locally (phase one) before the task was terminal.
	ErrAborted = errors.New("hostcancel: stopped waiting locally; the task may still be working")
	// ErrNoTasks reports a server that does not declare
	// tasks.requests.tools.call.
	ErrNoTasks = errors.New("hostcancel: the server does not support task-augmented tools/call")
)

// Event is one structured telemetry event. Its strings may come from the
// server and are untrusted.
type Event struct {
	Name      string
	Time      time.Time
	TaskID    string
	RequestID string
	Status    string
	Reason    string
	Detail    string
}

// Counters are the controller's telemetry counters, over every operation.
type Counters struct {
	RequestCancelSignals int64
	LocalAborts          int64
	TaskCancelRequested  int64
	TaskCancelVerified   int64
	WorkerAcks           int64
	Reconciles           int64
	Alerts               int64
}

// WorkerAck asks receiver-specific evidence whether the task's work has
// really stopped (a worker counter, a job API). It may block until it
// knows or ctx ends; stopped false when ctx ends means "still running".
type WorkerAck func(ctx context.Context, op *Operation) (stopped bool, detail string, err error)

// Config configures a Controller.
type Config struct {
	// Session is the initialized session to the server.
	Session *peer.Session
	// Policy is what Settle does; Cancel if empty.
	Policy Policy
	// Grace bounds verification after tasks/cancel; 5s if zero.
	Grace time.Duration
	// MinPoll and MaxPoll bound the pause between polls around the task's
	// pollInterval (TSK-16); 10ms and 5s if zero.
	MinPoll, MaxPoll time.Duration
	// Ack, when set, is the receiver-specific worker acknowledgement.
	Ack WorkerAck
	// OnEvent receives every event, synchronously; it must not block.
	OnEvent func(Event)
}

// Controller runs operations over one session.
type Controller struct {
	cfg Config
	c   struct {
		signals, aborts, requested, verified, acks, reconciles, alerts atomic.Int64
	}
}

// New returns a controller.
func New(cfg Config) *Controller {
	if cfg.Policy == "" {
		cfg.Policy = Cancel
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Second
	}
	if cfg.MinPoll <= 0 {
		cfg.MinPoll = 10 * time.Millisecond
	}
	if cfg.MaxPoll <= 0 {
		cfg.MaxPoll = 5 * time.Second
	}
	return &Controller{cfg: cfg}
}

// Counters returns a snapshot of the counters.
func (c *Controller) Counters() Counters {
	return Counters{
		RequestCancelSignals: c.c.signals.Load(),
		LocalAborts:          c.c.aborts.Load(),
		TaskCancelRequested:  c.c.requested.Load(),
		TaskCancelVerified:   c.c.verified.Load(),
		WorkerAcks:           c.c.acks.Load(),
		Reconciles:           c.c.reconciles.Load(),
		Alerts:               c.c.alerts.Load(),
	}
}

// emit sends e to the sink, its server-supplied text sanitised.
func (c *Controller) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Status = chrono.Sanitize(e.Status, false)
	e.Detail = chrono.Sanitize(e.Detail, false)
	e.Reason = chrono.Sanitize(e.Reason, false)
	e.TaskID = chrono.Sanitize(e.TaskID, false)
	if c.cfg.OnEvent != nil {
		c.cfg.OnEvent(e)
	}
}

// Result is how an operation ended.
type Result struct {
	Classification Classification
	// Task is the last task state known.
	Task peer.Task
	// Result is the tasks/result result, when one was fetched.
	Result json.RawMessage
	// ResultError is the JSON-RPC error tasks/result returned, if any.
	ResultError *jsonrpc.Error
	// CancelSent reports whether this operation sent tasks/cancel.
	CancelSent bool
	// Alert is set for StillWorkingPastGrace and for a consequential
	// gap (no cancel capability).
	Alert bool
	// Detail says why, in one line, sanitised.
	Detail string
	// AbortedAt and AbortReason are the local abort (phase one), zero
	// when Settle ran without Stop.
	AbortedAt   time.Time
	AbortReason string
	// LastProgress is the last progress notification for the task, when
	// the creating request asked for progress.
	LastProgress *peer.Progress
}

// Operation is one task the controller follows.
type Operation struct {
	ctrl *Controller
	// Server is the server's identity from its initialize result.
	Server peer.Implementation
	// TaskID is the durable task's ID.
	TaskID string
	// Call is the task-augmented request that created the task.
	Call *peer.Call

	mu          sync.Mutex
	requestIDs  []jsonrpc.ID
	last        peer.Task
	lastPoll    time.Time
	abortAt     time.Time
	abortReason string
	stopped     chan struct{}
	stopOnce    sync.Once

	settleOnce sync.Once
	settled    chan struct{}
	result     Result
}

// Start calls a tool as a task (params are tools/call params; ttl in ms,
// negative for none) and returns the operation once the CreateTaskResult
// is in. Progress, when asked for with peer.WithProgress, stays routed for
// the task's lifetime (PRG-9).
func (c *Controller) Start(ctx context.Context, params map[string]any, ttl int64, opts ...peer.CallOption) (*Operation, error) {
	s := c.cfg.Session
	init := s.Server()
	if init == nil || !init.Tasks().ToolsCall {
		return nil, ErrNoTasks
	}
	opts = append(opts, peer.KeepProgressToken())
	call, err := s.Start(ctx, mcp.MethodToolsCall, peer.TaskParams(params, ttl), opts...)
	if err != nil {
		return nil, fmt.Errorf("hostcancel: starting the task: %w", err)
	}
	resp, err := call.Await(ctx)
	if err != nil {
		return nil, fmt.Errorf("hostcancel: awaiting the CreateTaskResult: %w", err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("hostcancel: the server refused the task: %w", resp.Error)
	}
	task, err := peer.ParseCreateTaskResult(resp.Result)
	if err != nil {
		return nil, fmt.Errorf("hostcancel: %w", err)
	}
	op := &Operation{ctrl: c, Server: init.ServerInfo, TaskID: task.TaskID, Call: call, last: task,
		requestIDs: []jsonrpc.ID{call.ID}, stopped: make(chan struct{}), settled: make(chan struct{})}
	c.emit(Event{Name: EventTaskCreated, TaskID: task.TaskID, RequestID: call.ID.String(), Status: task.Status})
	return op, nil
}

// RequestIDs returns every request ID the operation used: the creating
// tools/call, each tasks/get, tasks/cancel and tasks/result.
func (op *Operation) RequestIDs() []jsonrpc.ID {
	op.mu.Lock()
	defer op.mu.Unlock()
	return append([]jsonrpc.ID(nil), op.requestIDs...)
}

// LastKnown returns the last task state the operation saw.
func (op *Operation) LastKnown() peer.Task {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.last
}

// LastProgress returns the last progress notification for the task, if
// the creating request asked for progress.
func (op *Operation) LastProgress() (peer.Progress, bool) {
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

// request sends method with params and records its ID.
func (op *Operation) request(ctx context.Context, method string, params any) (*jsonrpc.Message, jsonrpc.ID, error) {
	s := op.ctrl.cfg.Session
	call, err := s.Start(ctx, method, params)
	if err != nil {
		return nil, jsonrpc.ID{}, err
	}
	op.mu.Lock()
	op.requestIDs = append(op.requestIDs, call.ID)
	op.mu.Unlock()
	resp, err := call.Await(ctx)
	return resp, call.ID, err
}

// taskCall sends method {"taskId"} and decodes a Task; a JSON-RPC error
// comes back as *jsonrpc.Error.
func (op *Operation) taskCall(ctx context.Context, method string) (peer.Task, error) {
	resp, id, err := op.request(ctx, method, map[string]any{"taskId": op.TaskID})
	if err != nil {
		return peer.Task{}, err
	}
	if resp.Error != nil {
		return peer.Task{}, resp.Error
	}
	t, err := peer.ParseTask(resp.Result)
	if err != nil {
		return t, err
	}
	op.observe(t, id)
	return t, nil
}

// observe records a task state.
func (op *Operation) observe(t peer.Task, id jsonrpc.ID) {
	op.mu.Lock()
	changed := t.Status != op.last.Status
	op.last = t
	op.lastPoll = time.Now()
	op.mu.Unlock()
	if changed {
		op.ctrl.emit(Event{Name: EventStatus, TaskID: op.TaskID, RequestID: id.String(), Status: t.Status, Detail: t.StatusMessage})
	}
}

// pollDelay is the pause before the next poll: the task's pollInterval
// within [MinPoll, MaxPoll].
func (op *Operation) pollDelay() time.Duration {
	t := op.LastKnown()
	d := op.ctrl.cfg.MinPoll
	if t.PollInterval != nil {
		d = time.Duration(*t.PollInterval * float64(time.Millisecond))
	}
	return min(max(d, op.ctrl.cfg.MinPoll), op.ctrl.cfg.MaxPoll)
}

// Poll sends one tasks/get.
func (op *Operation) Poll(ctx context.Context) (peer.Task, error) {
	return op.taskCall(ctx, mcp.MethodTasksGet)
}

// Wait polls tasks/get, respecting pollInterval, until the task is
// terminal, and returns its last state. When ctx ends first, or Stop is
// called, Wait runs phase one (the local abort) and returns ErrAborted:
// nothing is sent to the server, so the task may well still be working.
func (op *Operation) Wait(ctx context.Context) (peer.Task, error) {
	for {
		t := op.LastKnown()
		if t.Terminal() {
			return t, nil
		}
		timer := time.NewTimer(op.pollDelay())
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			op.Stop(fmt.Sprintf("local wait ended: %v", context.Cause(ctx)))
			return op.LastKnown(), fmt.Errorf("%w: %w", ErrAborted, ctx.Err())
		case <-op.stopped:
			timer.Stop()
			return op.LastKnown(), ErrAborted
		}
		if _, err := op.Poll(ctx); err != nil {
			if ctx.Err() != nil {
				op.Stop(fmt.Sprintf("local wait ended: %v", context.Cause(ctx)))
				return op.LastKnown(), fmt.Errorf("%w: %w", ErrAborted, ctx.Err())
			}
			return op.LastKnown(), fmt.Errorf("hostcancel: polling task: %w", err)
		}
	}
}

// Stop is phase one: it records a local cancel signal and, the first
// time, stops local waiting and records the abort time and reason. It
// sends nothing. Every call counts as a request_cancel_signal.
func (op *Operation) Stop(reason string) {
	c := op.ctrl
	c.c.signals.Add(1)
	c.emit(Event{Name: EventRequestCancelSignal, TaskID: op.TaskID, Reason: reason})
	op.stopOnce.Do(func() {
		op.mu.Lock()
		op.abortAt, op.abortReason = time.Now(), reason
		status := op.last.Status
		op.mu.Unlock()
		c.c.aborts.Add(1)
		c.emit(Event{Name: EventLocalAbort, TaskID: op.TaskID, Status: status, Reason: reason})
		close(op.stopped)
	})
}

// Abort is phase one then phase two: Stop(reason), then Settle.
func (op *Operation) Abort(ctx context.Context, reason string) Result {
	op.Stop(reason)
	return op.Settle(ctx)
}

// Settle is phase two, by policy. It runs once per operation: concurrent
// and later calls wait for the first and return its Result, so at most
// one tasks/cancel is ever sent.
func (op *Operation) Settle(ctx context.Context) Result {
	op.settleOnce.Do(func() {
		op.result = op.settle(ctx)
		op.result.Detail = chrono.Sanitize(op.result.Detail, false)
		op.result.AbortedAt, op.result.AbortReason = op.Aborted()
		if p, ok := op.LastProgress(); ok {
			op.result.LastProgress = &p
			op.ctrl.emit(Event{Name: EventProgress, TaskID: op.TaskID, Detail: fmt.Sprintf("progress %v %s", p.Progress, p.Message)})
		}
		c := op.ctrl
		if op.result.Alert {
			c.c.alerts.Add(1)
			c.emit(Event{Name: EventAlert, TaskID: op.TaskID, Status: op.result.Task.Status, Detail: op.result.Detail})
		}
		c.emit(Event{Name: EventClassified, TaskID: op.TaskID, Status: op.result.Task.Status,
			Reason: string(op.result.Classification), Detail: op.result.Detail})
		op.ctrl.cfg.Session.EndProgress(op.Call)
		close(op.settled)
	})
	select {
	case <-op.settled:
	case <-ctx.Done():
		return Result{Classification: OutcomeUnknown, Task: op.LastKnown(), Detail: "stopped waiting for the settlement: " + ctx.Err().Error()}
	}
	return op.result
}

// Done is closed once the operation is settled.
func (op *Operation) Done() <-chan struct{} { return op.settled }

func (op *Operation) settle(ctx context.Context) Result {
	last := op.LastKnown()
	if last.Terminal() {
		return op.fromTerminal(ctx, last, false, "the task was already "+last.Status+" when settled")
	}
	if op.ctrl.cfg.Policy == Detach {
		return Result{Classification: OutcomeUnknown, Task: last, Detail: "detached: the task was left " + last.Status}
	}
	if init := op.ctrl.cfg.Session.Server(); init == nil || !init.Tasks().Cancel {
		return Result{Classification: OutcomeUnknown, Task: last, Alert: true,
			Detail: "the server does not declare tasks.cancel; the task was left " + last.Status}
	}
	return op.cancel(ctx)
}

// cancel sends the one tasks/cancel and verifies.
func (op *Operation) cancel(ctx context.Context) Result {
	c := op.ctrl
	vctx, stop := context.WithTimeout(ctx, c.cfg.Grace)
	defer stop()
	c.c.requested.Add(1)
	c.emit(Event{Name: EventTaskCancelRequested, TaskID: op.TaskID, Status: op.LastKnown().Status})
	resp, id, err := op.request(vctx, mcp.MethodTasksCancel, map[string]any{"taskId": op.TaskID})
	switch {
	case err != nil:
		return Result{Classification: OutcomeUnknown, Task: op.LastKnown(), CancelSent: true, Detail: "tasks/cancel got no answer: " + err.Error()}
	case resp.Error != nil && resp.Error.Code == jsonrpc.CodeInvalidParams:
		// the task was already terminal (or is gone). Reconcile.
		c.c.reconciles.Add(1)
		c.emit(Event{Name: EventReconcile, TaskID: op.TaskID, RequestID: id.String(), Detail: fmt.Sprintf("tasks/cancel: error %d %s", resp.Error.Code, resp.Error.Message)})
		t, gerr := op.Poll(vctx)
		if gerr != nil {
			return Result{Classification: OutcomeUnknown, Task: op.LastKnown(), CancelSent: true, Detail: "tasks/cancel was refused and tasks/get failed: " + gerr.Error()}
		}
		if !t.Terminal() {
			return Result{Classification: OutcomeUnknown, Task: t, CancelSent: true, Detail: "tasks/cancel was refused with -32602 but the task is " + t.Status}
		}
		return op.fromTerminal(vctx, t, true, "tasks/cancel refused: the task was already "+t.Status)
	case resp.Error != nil:
		return Result{Classification: OutcomeUnknown, Task: op.LastKnown(), CancelSent: true, Detail: fmt.Sprintf("tasks/cancel failed: error %d", resp.Error.Code)}
	}
	t, err := peer.ParseTask(resp.Result)
	if err != nil {
		return Result{Classification: OutcomeUnknown, Task: op.LastKnown(), CancelSent: true, Detail: err.Error()}
	}
	op.observe(t, id)
	c.emit(Event{Name: EventTaskCancelResponse, TaskID: op.TaskID, RequestID: id.String(), Status: t.Status})
	// Verify: tasks/get until cancelled (or terminal), within the grace.
	for !t.Terminal() {
		timer := time.NewTimer(op.pollDelay())
		select {
		case <-timer.C:
		case <-vctx.Done():
			timer.Stop()
			return Result{Classification: StillWorkingPastGrace, Task: t, CancelSent: true, Alert: true,
				Detail: fmt.Sprintf("the task was still %s %v after tasks/cancel", t.Status, c.cfg.Grace)}
		}
		got, err := op.Poll(vctx)
		if err != nil {
			var rpc *jsonrpc.Error
			if errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams {
				break // deleted after the cancel (TSK-66)
			}
			return Result{Classification: OutcomeUnknown, Task: t, CancelSent: true, Detail: "verifying: " + err.Error()}
		}
		t = got
	}
	if t.Terminal() && t.Status != mcp.TaskCancelled {
		return op.fromTerminal(vctx, t, true, "the task ended "+t.Status+" before the cancel took effect")
	}
	if after, err := op.Poll(vctx); err == nil && after.Status != mcp.TaskCancelled {
		return Result{Classification: OutcomeUnknown, Task: after, CancelSent: true, Alert: true,
			Detail: "the task left cancelled for " + after.Status + " (TSK-65)"}
	}
	c.c.verified.Add(1)
	c.emit(Event{Name: EventTaskCancelVerified, TaskID: op.TaskID, Status: mcp.TaskCancelled})
	if c.cfg.Ack != nil {
		stopped, detail, err := c.cfg.Ack(vctx, op)
		c.c.acks.Add(1)
		c.emit(Event{Name: EventWorkerAck, TaskID: op.TaskID, Status: fmt.Sprint(stopped), Detail: detail})
		switch {
		case err != nil && vctx.Err() == nil:
			return Result{Classification: OutcomeUnknown, Task: op.LastKnown(), CancelSent: true, Detail: "worker acknowledgement failed: " + err.Error()}
		case !stopped:
			return Result{Classification: StillWorkingPastGrace, Task: op.LastKnown(), CancelSent: true, Alert: true,
				Detail: "cancelled, but the worker had not stopped within " + c.cfg.Grace.String() + ": " + detail}
		}
	}
	return Result{Classification: CancelledVerified, Task: op.LastKnown(), CancelSent: true, Detail: "tasks/cancel accepted and verified"}
}

// fromTerminal classifies a terminal task, fetching its result for
// completed and failed tasks.
func (op *Operation) fromTerminal(ctx context.Context, t peer.Task, sent bool, detail string) Result {
	r := Result{Task: t, CancelSent: sent, Detail: detail}
	switch t.Status {
	case mcp.TaskCancelled:
		r.Classification = CancelledVerified
		return r
	case mcp.TaskCompleted:
		r.Classification = CompletedBeforeCancel
	default:
		r.Classification = Failed
	}
	resp, _, err := op.request(ctx, mcp.MethodTasksResult, map[string]any{"taskId": op.TaskID})
	switch {
	case err != nil:
		r.Detail += "; tasks/result: " + err.Error()
	case resp.Error != nil:
		r.ResultError = resp.Error
	default:
		r.Result = resp.Result
	}
	return r
}
