package hostcancel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

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
	// CancelledVerified: the task reads cancelled, stays cancelled, and
	// the worker acknowledgement (when configured) says the work stopped.
	CancelledVerified Classification = "cancelled-verified"
	// CompletedBeforeCancel: the task completed (before any cancel took
	// effect, or with no cancel at all); Result holds its result.
	CompletedBeforeCancel Classification = "completed-before-cancel"
	// Failed: the task (or the call) failed; Result or ResultError holds
	// what the server returned.
	Failed Classification = "failed"
	// StillWorkingPastGrace: after the cancel, the task was still not
	// terminal when the grace period ended. An alert.
	StillWorkingPastGrace Classification = "still-working-past-grace"
	// WorkerStillRunning: the task reads cancelled but the worker
	// acknowledgement says the work went on. An alert.
	WorkerStillRunning Classification = "cancelled-worker-running"
	// EffectCommitted: the task did not complete (cancelled, failed,
	// unknown, still working) but a receipt or the system of record says
	// its side effect happened.
	EffectCommitted Classification = "effect-committed"
	// OutcomeUnknown: the controller cannot tell; Result.Unknown says why
	// and the Result carries what is known.
	OutcomeUnknown Classification = "outcome-unknown"
)

// UnknownReason says why an outcome is unknown.
type UnknownReason string

// Reasons for OutcomeUnknown.
const (
	UnknownDetached         UnknownReason = "detached"
	UnknownNoCancel         UnknownReason = "no-cancel-capability"
	UnknownNoCreateResult   UnknownReason = "no-create-task-result"
	UnknownCancelUnanswered UnknownReason = "cancel-unanswered"
	UnknownCancelRefused    UnknownReason = "cancel-refused"
	UnknownTaskVanished     UnknownReason = "task-vanished"
	UnknownVerifyFailed     UnknownReason = "verification-failed"
	UnknownLeftCancelled    UnknownReason = "status-left-cancelled"
	UnknownInterrupted      UnknownReason = "settlement-interrupted"
	UnknownConnectionLost   UnknownReason = "connection-lost"
	// UnknownNotFound: the task was announced by a CreateTaskResult but
	// the server never found it (not durable when announced).
	UnknownNotFound UnknownReason = "task-not-found"
	// UnknownResultMissing: the task completed, but its result is not
	// inlined and cannot be asked for (the extension).
	UnknownResultMissing UnknownReason = "result-missing"
	// UnknownEffect: the task was cancelled (or its state is lost), and
	// neither a receipt nor the system of record says whether its effect
	// happened (Reconcile).
	UnknownEffect UnknownReason = "effect-unknown"
)

// Event names.
const (
	EventRequest             = "jsonrpc_request"
	EventTaskCreated         = "task_created"
	EventStatus              = "task_status"
	EventNotification        = "status_notification"
	EventListen              = "status_subscription"
	EventProgress            = "progress"
	EventRequestCancelSignal = "request_cancel_signal"
	EventLocalAbort          = "local_abort"
	EventTaskCancelRequested = "task_cancel_requested"
	EventTaskCancelResponse  = "task_cancel_response"
	EventTaskCancelVerified  = "task_cancel_verified"
	EventWorkerAck           = "worker_ack"
	EventReconcile           = "reconcile"
	EventEffect              = "effect"
	EventAbandoned           = "abandoned"
	EventClassified          = "classified"
	EventAlert               = "alert"
)

// Sentinel errors.
var (
	// ErrAborted is returned by Wait (and Start) when the operation was
	// stopped locally (phase one) before the task was terminal.
	ErrAborted = errors.New("hostcancel: stopped waiting locally; the task may still be working")
	// ErrNoTasks reports a server that does not declare
	// tasks.requests.tools.call (2025-11-25).
	ErrNoTasks = errors.New("hostcancel: the server does not support task-augmented tools/call")
	// ErrRefused reports a tools/call the server answered with an error.
	ErrRefused = errors.New("hostcancel: the server refused the call")
)

// Event is one structured telemetry event. Its strings may come from the
// server and are sanitised.
type Event struct {
	Name      string
	Time      time.Time
	TaskID    string
	RequestID string
	Method    string
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
	StatusNotifications  int64
	Alerts               int64
	ByAlert              map[Alert]int64
}

// WorkerAck asks receiver-specific evidence whether the task's work has
// really stopped (a worker counter, a job API). It may block until it
// knows or ctx ends; stopped false when ctx ends means "still running".
type WorkerAck func(ctx context.Context, op *Operation) (stopped bool, detail string, err error)

// Config configures a Controller.
type Config struct {
	// Session is the session to the server: initialized for 2025-11-25.
	Session *peer.Session
	// Revision is the task wire; when empty, the session's negotiated
	// protocol version, or Rev20251125 without one.
	Revision Revision
	// Server is the server's identity where the revision has no
	// initialize (the extension); results' _meta serverInfo refines what
	// the Result reports. Circuits are keyed by the name known when an
	// operation starts: set it under the extension.
	Server peer.Implementation
	// Policy is what Settle does; Cancel if empty.
	Policy Policy
	// Grace bounds the wait for a CreateTaskResult after an early abort,
	// and the verification after tasks/cancel; 5s if zero.
	Grace time.Duration
	// MinPoll and MaxPoll bound the pause between polls around the task's
	// poll interval (TSK-16, TSX-19); 10ms and 5s if zero.
	MinPoll, MaxPoll time.Duration
	// Ack, when set, is the receiver-specific worker acknowledgement.
	Ack WorkerAck
	// NoListen keeps the extension from opening a subscriptions/listen
	// stream per task: status then comes from polling alone.
	NoListen bool
	// Effects marks consequential tools and configures their keys,
	// receipts and system of record.
	Effects *Effects
	// Ledger holds the idempotency keys of consequential operations; an
	// in-memory ledger of the controller's own if nil. OpenLedger makes
	// one that survives the host (Controller.Reconcile after a restart).
	Ledger *Ledger
	// Breaker is consulted by Start and opened by alerts; a breaker of
	// the controller's own (DefaultBreakerAlerts) if nil.
	Breaker *Breaker
	// OnEvent receives every event, synchronously; it must not block.
	OnEvent func(Event)
	// OnAlert receives every alert, synchronously; it must not block.
	OnAlert func(AlertEvent)
	// TracerProvider and MeterProvider receive the OpenTelemetry record;
	// with neither, no OpenTelemetry call is made.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// Controller runs operations over one session.
type Controller struct {
	cfg    Config
	w      wire
	wErr   error
	tel    *telemetry
	ledger *Ledger
	c      struct {
		signals, aborts, requested, verified, acks, reconciles, notes, alerts atomic.Int64
	}
	mu      sync.Mutex
	byAlert map[Alert]int64
	byTask  map[string]*Operation
	// byListen routes subscription acknowledgements, by listen request.
	byListen map[string]*Operation
	// live holds the idempotency keys of this controller's operations
	// that have not settled.
	live map[string]bool
}

// New returns a controller. It watches the session's notifications for
// task status (a controller per session).
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
	if cfg.Breaker == nil {
		cfg.Breaker = NewBreaker()
	}
	if cfg.Ledger == nil {
		cfg.Ledger = NewLedger()
	}
	rev := cfg.Revision
	if rev == "" {
		rev = Rev20251125
		if cfg.Session != nil {
			if init := cfg.Session.Server(); init != nil && init.ProtocolVersion != "" {
				rev = Revision(init.ProtocolVersion)
			}
		}
	}
	c := &Controller{cfg: cfg, ledger: cfg.Ledger, live: map[string]bool{}, tel: newTelemetry(cfg.TracerProvider, cfg.MeterProvider),
		byAlert: map[Alert]int64{}, byTask: map[string]*Operation{}, byListen: map[string]*Operation{}}
	c.w, c.wErr = wireFor(rev)
	if cfg.Session != nil && c.wErr == nil {
		cfg.Session.OnNotification(c.onNotification)
	}
	return c
}

// Revision returns the wire the controller speaks.
func (c *Controller) Revision() Revision {
	if c.w == nil {
		return c.cfg.Revision
	}
	return c.w.revision()
}

// Breaker returns the controller's circuit breaker.
func (c *Controller) Breaker() *Breaker { return c.cfg.Breaker }

// Counters returns a snapshot of the counters.
func (c *Controller) Counters() Counters {
	c.mu.Lock()
	by := make(map[Alert]int64, len(c.byAlert))
	for k, v := range c.byAlert {
		by[k] = v
	}
	c.mu.Unlock()
	return Counters{
		RequestCancelSignals: c.c.signals.Load(),
		LocalAborts:          c.c.aborts.Load(),
		TaskCancelRequested:  c.c.requested.Load(),
		TaskCancelVerified:   c.c.verified.Load(),
		WorkerAcks:           c.c.acks.Load(),
		Reconciles:           c.c.reconciles.Load(),
		StatusNotifications:  c.c.notes.Load(),
		Alerts:               c.c.alerts.Load(),
		ByAlert:              by,
	}
}

// emit sanitises e's server-supplied text, records it on op (its trail and
// span) and sends it to the sink.
func (c *Controller) emit(op *Operation, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Status = chrono.Sanitize(e.Status, false)
	e.Detail = chrono.Sanitize(e.Detail, false)
	e.Reason = chrono.Sanitize(e.Reason, false)
	e.TaskID = chrono.Sanitize(e.TaskID, false)
	if op != nil {
		op.record(e)
	}
	if c.cfg.OnEvent != nil {
		c.cfg.OnEvent(e)
	}
}

// Call is one logical tool call to run as a task.
type Call struct {
	Tool      string
	Arguments map[string]any
	// Meta is merged into params._meta.
	Meta map[string]any
	// TTL is the requested task ttl (2025-11-25 task.ttl); zero leaves it
	// to the server. The extension has no request-side ttl.
	TTL time.Duration
	// Progress asks for progress notifications (2025-11-25 keeps the
	// token for the task's lifetime, PRG-9; the extension has none for
	// tasks, PRG-46).
	Progress bool
	// Key is the idempotency key of the logical operation, for a
	// consequential tool; a fresh one when empty.
	Key string
}

// Start sends the call and waits for its CreateTaskResult. It returns the
// operation once the task exists (or, under the extension, once the server
// answered with the tool's result instead, TSX-3). When ctx ends before
// the CreateTaskResult, Start returns the operation with an error wrapping
// ErrAborted: the request stays in flight, and Settle learns the task ID
// if it comes and then applies the policy. Any other error comes
// with a nil operation.
func (c *Controller) Start(ctx context.Context, call Call) (*Operation, error) {
	op, err := c.Begin(ctx, call)
	if err != nil {
		return nil, err
	}
	if err := op.awaitCreated(ctx); err != nil {
		if errors.Is(err, ErrAborted) {
			return op, err
		}
		op.Settle(context.WithoutCancel(ctx))
		return nil, err
	}
	return op, nil
}

// Begin sends the call and returns at once; the CreateTaskResult is
// awaited by Wait, Created or Settle.
func (c *Controller) Begin(ctx context.Context, call Call) (*Operation, error) {
	if c.wErr != nil {
		return nil, c.wErr
	}
	s := c.cfg.Session
	tasks, cancel := c.w.support(s)
	if !tasks {
		return nil, ErrNoTasks
	}
	server := c.cfg.Server
	if init := s.Server(); init != nil && init.ServerInfo.Name != "" {
		server = init.ServerInfo
	}
	if err := c.cfg.Breaker.Allow(server.Name, call.Tool); err != nil {
		return nil, err
	}
	op := &Operation{ctrl: c, w: c.w, Tool: call.Tool, server: server, circuit: server.Name,
		stopped: make(chan struct{}), settled: make(chan struct{}), wake: make(chan struct{}, 1), alerted: map[Alert]bool{}}
	args, meta := call.Arguments, call.Meta
	if c.cfg.Effects.consequential(call.Tool) {
		op.Consequential = true
		op.Key = call.Key
		if op.Key == "" {
			op.Key = newKey()
		}
		if err := c.ledger.reserve(op.Key); err != nil {
			if errors.Is(err, ErrNotReconciled) {
				op.alert(AlertReplacementBeforeReconcile, err.Error())
			}
			return nil, err
		}
		c.mu.Lock()
		c.live[op.Key] = true
		c.mu.Unlock()
		if !cancel {
			op.alert(AlertConsequentialWithoutCancel, "tool "+call.Tool+" is consequential and the server does not declare tasks.cancel")
			if !c.cfg.Effects.AllowWithoutCancel {
				c.settledKey(op.Key)
				c.ledger.release(op.Key)
				return nil, fmt.Errorf("%w: %s", ErrNoCancelCapability, call.Tool)
			}
		}
		args, meta = c.cfg.Effects.place(op.Key, args, meta)
	}
	ttl := int64(-1)
	if call.TTL > 0 {
		ttl = call.TTL.Milliseconds()
	}
	var opts []peer.CallOption
	if call.Progress && c.w.progressForTasks() {
		opts = append(opts, peer.WithProgress(), peer.KeepProgressToken())
	}
	op.span = c.tel.start(ctx, call.Tool, server.Name, c.w.revision())
	pc, err := s.Start(ctx, methodToolsCall, c.w.callParams(call.Tool, args, meta, ttl), opts...)
	if err != nil {
		if op.Key != "" {
			c.settledKey(op.Key)
			c.ledger.release(op.Key)
		}
		op.span.end(op, Result{Classification: OutcomeUnknown, Detail: err.Error()})
		return nil, fmt.Errorf("hostcancel: starting the task: %w", err)
	}
	op.Call = pc
	op.requestIDs = []jsonrpc.ID{pc.ID}
	c.emit(op, Event{Name: EventRequest, RequestID: pc.ID.String(), Method: methodToolsCall})
	return op, nil
}

// settledKey forgets that an operation of this controller holds key.
func (c *Controller) settledKey(key string) {
	c.mu.Lock()
	delete(c.live, key)
	c.mu.Unlock()
}

// register makes op's task ID known to the notification router.
func (c *Controller) register(op *Operation, taskID string) {
	c.mu.Lock()
	c.byTask[taskID] = op
	c.mu.Unlock()
}

func (c *Controller) unregister(taskID string) {
	c.mu.Lock()
	delete(c.byTask, taskID)
	c.mu.Unlock()
}

func (c *Controller) registerListen(op *Operation, id jsonrpc.ID) {
	c.mu.Lock()
	c.byListen[id.Key()] = op
	c.mu.Unlock()
}

func (c *Controller) unregisterListen(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.byListen, id.Key())
	c.mu.Unlock()
}

// onNotification routes a status notification, or a subscription's
// acknowledgement, to its operation. It runs on the session's read loop
// and does not block.
func (c *Controller) onNotification(m *jsonrpc.Message) {
	if m.Method == mcp.NotificationSubscriptionsAcknowledged {
		c.onListenAck(m)
		return
	}
	t, ok := c.w.notification(m)
	if !ok {
		return
	}
	c.mu.Lock()
	op := c.byTask[t.TaskID]
	c.mu.Unlock()
	if op == nil {
		return
	}
	c.c.notes.Add(1)
	op.notified(t)
}

// onListenAck marks the operation whose listen request the
// acknowledgement names (_meta subscriptionId, SUB-5) as subscribed.
func (c *Controller) onListenAck(m *jsonrpc.Message) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	id, err := jsonrpc.ParseID(p.Meta[mcp.MetaSubscriptionID])
	if err != nil {
		return
	}
	c.mu.Lock()
	op := c.byListen[id.Key()]
	c.mu.Unlock()
	if op != nil {
		op.listenAcked()
	}
}

// countAlert counts an alert.
func (c *Controller) countAlert(a Alert) {
	c.c.alerts.Add(1)
	c.mu.Lock()
	c.byAlert[a]++
	c.mu.Unlock()
}
