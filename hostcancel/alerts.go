package hostcancel

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Alert names one condition seed 002 says a host must alert on.
type Alert string

// The alerts. Each fires at most once per operation, increments its
// counter, reaches Config.OnAlert, and, for those in DefaultBreakerAlerts,
// opens the circuit of the operation's (server, tool).
const (
	// AlertStillWorkingPastGrace: after tasks/cancel the task was still
	// not terminal when the cancellation grace period ended.
	AlertStillWorkingPastGrace Alert = "still-working-past-grace"
	// AlertConsequentialWithoutCancel: a consequential tool on a server
	// that does not declare the cancel capability (tasks.cancel).
	AlertConsequentialWithoutCancel Alert = "consequential-without-cancel"
	// AlertCancelAckedWorkerRunning: tasks/cancel was acknowledged (and
	// the task reads cancelled) but the worker acknowledgement says the
	// work did not stop.
	AlertCancelAckedWorkerRunning Alert = "cancel-acked-worker-running"
	// AlertTerminalRace: the task reached completed or failed while the
	// cancel was on its way (2025-11-25: -32602, TSK-63, A-15; the
	// extension: a terminal status other than cancelled after the ack,
	// TSX-44), or a cancelled task later read otherwise (TSK-65).
	AlertTerminalRace Alert = "terminal-state-race"
	// AlertRepeatedCancel: more than one cancellation request for one
	// task reached the controller (only one tasks/cancel is sent).
	AlertRepeatedCancel Alert = "repeated-cancel-request"
	// AlertNotificationCountedAsCancel: the task became cancelled without
	// this controller's tasks/cancel after notifications/cancelled named
	// one of its requests: a request notification was counted as task
	// cancellation (CAN-4).
	AlertNotificationCountedAsCancel Alert = "notification-counted-as-cancel"
	// AlertCancelHidesEffect: the task reads cancelled (or its outcome is
	// unknown) but a receipt or the system of record says its effect
	// committed.
	AlertCancelHidesEffect Alert = "cancel-hides-committed-effect"
	// AlertReplacementBeforeReconcile: a consequential call was retried
	// with the key of an operation not yet reconciled; it was refused.
	AlertReplacementBeforeReconcile Alert = "replacement-before-reconcile"
)

// AllAlerts lists the alerts in a stable order.
func AllAlerts() []Alert {
	return []Alert{AlertStillWorkingPastGrace, AlertConsequentialWithoutCancel, AlertCancelAckedWorkerRunning,
		AlertTerminalRace, AlertRepeatedCancel, AlertNotificationCountedAsCancel, AlertCancelHidesEffect,
		AlertReplacementBeforeReconcile}
}

// DefaultBreakerAlerts are the alerts that open a circuit (seed 002:
// circuit-break when tasks remain working after the grace period, request
// notifications are counted as task cancellation, cancelled state can hide
// committed side effects; keep consequential tasks supervised when the
// cancel capability or the worker acknowledgement is absent). A terminal
// race and a repeated cancel are legal and only alert; a replacement
// before reconciliation is refused by the controller, so nothing unsafe
// ran.
func DefaultBreakerAlerts() []Alert {
	return []Alert{AlertStillWorkingPastGrace, AlertConsequentialWithoutCancel, AlertCancelAckedWorkerRunning,
		AlertNotificationCountedAsCancel, AlertCancelHidesEffect}
}

// AlertEvent is one alert as the hook receives it. Its strings may come
// from the server and are sanitised.
type AlertEvent struct {
	Alert  Alert
	Time   time.Time
	Server string
	Tool   string
	TaskID string
	Detail string
}

// ErrCircuitOpen is returned by Start when the circuit of the (server,
// tool) is open.
var ErrCircuitOpen = errors.New("hostcancel: circuit open")

// Circuit is the state of one (server, tool) circuit.
type Circuit struct {
	Open bool
	// Since, Alert, TaskID and Detail describe the alert that opened it.
	Since  time.Time
	Alert  Alert
	TaskID string
	Detail string
}

type circuitKey struct{ server, tool string }

// Breaker is a circuit breaker per (server, tool). An alert in its set
// opens the circuit; Start then refuses new operations on it with
// ErrCircuitOpen. There is no automatic half-open state: seed 002 asks to
// roll back until the abort, explicit cancel, completion race, result race
// and reconnect cases pass again under the exact server, SDK and transport,
// so the reset is explicit — Reset (or ResetAll) once that evidence is in
// (for example `mcpflight check --case 'tasks/*'` against the server).
// A Breaker may be shared by controllers; it is safe for concurrent use.
type Breaker struct {
	opens map[Alert]bool
	mu    sync.Mutex
	state map[circuitKey]Circuit
}

// NewBreaker returns a breaker opened by the given alerts, or by
// DefaultBreakerAlerts when none are given.
func NewBreaker(opensOn ...Alert) *Breaker {
	if len(opensOn) == 0 {
		opensOn = DefaultBreakerAlerts()
	}
	b := &Breaker{opens: map[Alert]bool{}, state: map[circuitKey]Circuit{}}
	for _, a := range opensOn {
		b.opens[a] = true
	}
	return b
}

// Opens reports whether alert a opens a circuit.
func (b *Breaker) Opens(a Alert) bool { return b.opens[a] }

// Allow returns nil when the circuit of (server, tool) is closed, or an
// error wrapping ErrCircuitOpen that says why it opened.
func (b *Breaker) Allow(server, tool string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.state[circuitKey{server, tool}]
	if !c.Open {
		return nil
	}
	return fmt.Errorf("%w for server %q tool %q since %s: %s (task %s): %s", ErrCircuitOpen, server, tool,
		c.Since.Format(time.RFC3339), c.Alert, c.TaskID, c.Detail)
}

// State returns the circuit of (server, tool).
func (b *Breaker) State(server, tool string) Circuit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state[circuitKey{server, tool}]
}

// trip opens the circuit when a opens circuits; it reports whether it did.
// The first opening alert is kept until Reset.
func (b *Breaker) trip(e AlertEvent) bool {
	if !b.opens[e.Alert] {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := circuitKey{e.Server, e.Tool}
	if !b.state[k].Open {
		b.state[k] = Circuit{Open: true, Since: e.Time, Alert: e.Alert, TaskID: e.TaskID, Detail: e.Detail}
	}
	return true
}

// Reset closes the circuit of (server, tool).
func (b *Breaker) Reset(server, tool string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.state, circuitKey{server, tool})
}

// ResetAll closes every circuit.
func (b *Breaker) ResetAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.state)
}
