package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// State is where an outgoing request stands.
type State string

// Request states. Completed means a response arrived; Failed means the
// connection ended first.
const (
	StatePending         State = "pending"
	StateCancelRequested State = "cancel-requested"
	StateCompleted       State = "completed"
	StateFailed          State = "failed"
)

// Progress is one validated notifications/progress.
type Progress struct {
	Seq      uint64
	Token    jsonrpc.ProgressToken
	Progress float64
	Total    *float64
	Message  string
}

// ViolationRule names the rule a progress notification broke.
type ViolationRule string

// Progress rules checked on every notification.
const (
	RuleNotIncreasing ViolationRule = "PRG-4"  // progress MUST increase
	RuleAfterResponse ViolationRule = "PRG-14" // progress MUST stop after completion
	RuleAfterCancel   ViolationRule = "CAN-8"  // receivers SHOULD stop after cancel
)

// Violation is a progress notification that broke a rule.
type Violation struct {
	Rule   ViolationRule
	Seq    uint64
	Detail string
}

// Call is one request we sent, with its progress collector.
type Call struct {
	session *Session
	// ID is the request ID, exactly as sent.
	ID jsonrpc.ID
	// Method is the request method.
	Method string
	// Token is the progress token sent, or absent.
	Token jsonrpc.ProgressToken
	// TaskAugmented is set when the request carried a "task" member; it
	// can then only be cancelled with tasks/cancel (CAN-4).
	TaskAugmented bool
	// keepToken keeps Token live after the response (KeepProgressToken).
	keepToken bool
	// is2026 is set for a request of a 2026-07-28 session, extTasks when
	// its clientCapabilities declared the tasks extension (is2026.go).
	is2026, extTasks bool
	// chapter is the session's chapter when the call was sent (HandOver).
	chapter int

	mu sync.Mutex
	// SentSeq is the chronology sequence number of the request frame.
	SentSeq uint64
	// CancelSeq is the sequence number of our notifications/cancelled.
	CancelSeq    uint64
	state        State
	cancelled    bool
	resultType   string
	resp         *jsonrpc.Message
	respSeq      uint64
	err          error
	progress     []Progress
	lateProgress []Progress
	violations   []Violation
	// nProgress counts every progress notification in flight, kept or
	// not; last is the latest of them, which the next must exceed.
	nProgress, nLate, nViolations int
	last                          Progress
	done                          chan struct{}
}

// Bounds on what a Call keeps of its progress, so that a flood of
// progress notifications stays bounded: the first ones are kept, every
// one is checked and counted.
const (
	// MaxProgressKept is how many progress notifications (in flight, and
	// late) a call keeps.
	MaxProgressKept = 10_000
	// MaxViolationsKept is how many violations a call keeps.
	MaxViolationsKept = 1000
)

// Done is closed when the request has ended.
func (c *Call) Done() <-chan struct{} { return c.done }

// State returns the request's state.
func (c *Call) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// CancelRequested reports whether we sent notifications/cancelled for it.
func (c *Call) CancelRequested() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelled
}

// Response returns the response and its sequence number, if one arrived.
func (c *Call) Response() (*jsonrpc.Message, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resp, c.respSeq
}

// LateResponse reports whether the response arrived after we cancelled;
// such a response is to be ignored by the application (CAN-10).
func (c *Call) LateResponse() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelled && c.resp != nil
}

// ProgressSeen returns the progress notifications received while the
// request was in flight: the first MaxProgressKept of them (see
// ProgressCount).
func (c *Call) ProgressSeen() []Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Progress(nil), c.progress...)
}

// ProgressCount is how many progress notifications arrived while the
// request was in flight, including those past MaxProgressKept; every one
// of them was checked for the progress rules (Violations).
func (c *Call) ProgressCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nProgress
}

// LastProgress is the latest progress notification received while the
// request was in flight; ok is false when none arrived.
func (c *Call) LastProgress() (p Progress, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.nProgress > 0
}

// LateProgress returns progress received for this call's token after the
// request had ended (PRG-14).
func (c *Call) LateProgress() []Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Progress(nil), c.lateProgress...)
}

// Violations returns every progress rule this call's notifications broke.
func (c *Call) Violations() []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Violation(nil), c.violations...)
}

// Await waits for the response. When ctx ends first, the deadline is
// recorded in the chronology and ctx's error is returned; the call stays
// in flight.
func (c *Call) Await(ctx context.Context) (*jsonrpc.Message, error) {
	select {
	case <-c.done:
	case <-ctx.Done():
		c.session.log.Harness(chrono.KindDeadline, "request "+c.ID.String(), "stopped waiting: "+ctx.Err().Error())
		return nil, fmt.Errorf("awaiting %s %s: %w", c.Method, c.ID, ctx.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	return c.resp, nil
}

func (c *Call) markCancelRequested() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StatePending {
		return false
	}
	c.state = StateCancelRequested
	c.cancelled = true
	return true
}

func (c *Call) complete(resp *jsonrpc.Message, seq uint64, err error) (from, to State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	from = c.state
	c.resp, c.respSeq, c.err = resp, seq, err
	if err != nil {
		c.state = StateFailed
	} else {
		c.state = StateCompleted
	}
	close(c.done)
	return from, c.state
}

func (c *Call) addProgress(p Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nProgress > 0 && p.Progress <= c.last.Progress {
		c.addViolation(Violation{Rule: RuleNotIncreasing, Seq: p.Seq,
			Detail: fmt.Sprintf("progress %v after %v", p.Progress, c.last.Progress)})
	}
	if c.cancelled {
		c.addViolation(Violation{Rule: RuleAfterCancel, Seq: p.Seq,
			Detail: fmt.Sprintf("progress %v after notifications/cancelled", p.Progress)})
	}
	c.nProgress++
	c.last = p
	if len(c.progress) < MaxProgressKept {
		c.progress = append(c.progress, p)
	}
}

func (c *Call) addLateProgress(p Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nLate++
	if len(c.lateProgress) < MaxProgressKept {
		c.lateProgress = append(c.lateProgress, p)
	}
	c.addViolation(Violation{Rule: RuleAfterResponse, Seq: p.Seq,
		Detail: fmt.Sprintf("progress %v after the request ended", p.Progress)})
}

// addViolation keeps v if there is room; c.mu is held.
func (c *Call) addViolation(v Violation) {
	c.nViolations++
	if len(c.violations) < MaxViolationsKept {
		c.violations = append(c.violations, v)
	}
}

// ViolationCount is how many progress rules were broken, including
// violations past MaxViolationsKept.
func (c *Call) ViolationCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nViolations
}

// ErrBadProgress reports notifications/progress params that break the schema.
var ErrBadProgress = errors.New("invalid notifications/progress params")

// ParseProgress validates notifications/progress params against the
// schema: a string or integer token (PRG-1), a numeric progress, and
// optional numeric total and string message (PRG-5: floats allowed).
func ParseProgress(params json.RawMessage) (Progress, error) {
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress json.RawMessage `json:"progress"`
		Total    json.RawMessage `json:"total"`
		Message  *string         `json:"message"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return Progress{}, fmt.Errorf("%w: %w", ErrBadProgress, decodeError("the params", err))
	}
	tok, err := jsonrpc.ParseToken(p.Token)
	if p.Token == nil || err != nil {
		return Progress{}, fmt.Errorf("%w: progressToken must be a string or integer (PRG-1)", ErrBadProgress)
	}
	out := Progress{Token: tok}
	if p.Message != nil {
		out.Message = *p.Message
	}
	if err := json.Unmarshal(p.Progress, &out.Progress); p.Progress == nil || err != nil || math.IsNaN(out.Progress) {
		return Progress{}, fmt.Errorf("%w: progress must be a number", ErrBadProgress)
	}
	if p.Total != nil {
		var total float64
		if err := json.Unmarshal(p.Total, &total); err != nil {
			return Progress{}, fmt.Errorf("%w: total must be a number", ErrBadProgress)
		}
		out.Total = &total
	}
	return out, nil
}
