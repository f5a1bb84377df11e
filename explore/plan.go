package explore

import (
	"fmt"
	"slices"
	"strings"
)

// Kind names one operation of the mix. The string is the "op" member of a
// step in a replay file.
type Kind string

// The operations a session draws from. Labels name what an operation acts
// on: "c3" is the third call of its session slot, "t2" the second task;
// a label is also the call's operation key on a server with the control
// extension, so checkpoints are "c3/start", "c3/step/1" … "c3/end".
const (
	// OpCall starts the slow tool without waiting: Steps steps, with a
	// progress token or not (Token), and a request ID of style ID. With the
	// control extension the call is gated: it waits at each checkpoint.
	OpCall Kind = "call"
	// OpAdvance releases the call's next gate and, unless NoWait, awaits
	// the checkpoint after it (the call's end and its response after the
	// last step). Without the control extension it waits for the next
	// progress notification instead.
	OpAdvance Kind = "advance"
	// OpCancel sends notifications/cancelled for a call in flight. With
	// Race, the call's next gate is released first, so that the cancel
	// and the call's next frames (its response, after the last step) race.
	// With the control extension the call's end is then awaited, which
	// says whether the cancel was accepted.
	OpCancel Kind = "cancel"
	// OpRecancel sends a second notifications/cancelled for a call already
	// cancelled (CAN-14: a duplicate is ignored).
	OpRecancel Kind = "recancel"
	// OpBadCancel sends a cancel that must be ignored (CAN-14): Target
	// says which (see the BadCancel* constants).
	OpBadCancel Kind = "badcancel"
	// OpReuse starts a call with the progress token of the completed call
	// From: a token is only unique among active requests (PRG-2).
	OpReuse Kind = "reuse"
	// OpPing sends ping, with a request ID of style ID ("zero": id 0);
	// under 2026-07-28, which removed ping, server/discover (see Label).
	OpPing Kind = "ping"
	// OpDrop drops the call's SSE stream as a network failure would,
	// without a cancel (Streamable HTTP only; HTTP-25).
	OpDrop Kind = "drop"
	// OpResume resumes a dropped stream with GET and Last-Event-ID (HTTP-42).
	OpResume Kind = "resume"
	// OpListen opens the session's GET stream (Streamable HTTP only).
	OpListen Kind = "listen"
	// OpClose ends the session (stdio: closes the server's input; HTTP:
	// DELETE) and opens a new one in the same slot.
	OpClose Kind = "close"
	// OpTask creates a durable task (task_worker with Ticks ticks, ending
	// as End says), with a progress token or not.
	OpTask Kind = "task"
	// OpTaskAdvance releases the task worker's next gate and, unless
	// NoWait, awaits the checkpoint after it.
	OpTaskAdvance Kind = "tadvance"
	// OpTaskGet sends tasks/get.
	OpTaskGet Kind = "tget"
	// OpTaskResult sends tasks/result, which blocks until the task is
	// terminal (TSK-47); it is awaited at once only when the task is
	// known to be terminal.
	OpTaskResult Kind = "tresult"
	// OpTaskCancel sends tasks/cancel, to a working task or a terminal one
	// (TSK-63: then -32602).
	OpTaskCancel Kind = "tcancel"
	// OpTaskList sends tasks/list and follows every page.
	OpTaskList Kind = "tlist"
)

// Label is how reports name the kind under revision: the kind itself,
// but OpPing is "discover" under 2026-07-28, where the liveness request
// it sends is server/discover. A plan and its replay file keep the kind.
func (k Kind) Label(revision string) string {
	if k == OpPing && revision == Revision20260728 {
		return "discover"
	}
	return string(k)
}

// Kinds lists every operation kind, in a stable order.
func Kinds() []Kind {
	return []Kind{OpCall, OpAdvance, OpCancel, OpRecancel, OpBadCancel, OpReuse, OpPing, OpDrop, OpResume,
		OpListen, OpClose, OpTask, OpTaskAdvance, OpTaskGet, OpTaskResult, OpTaskCancel, OpTaskList}
}

// Targets of OpBadCancel: each names a cancel the receiver should ignore
// (CAN-14), or one that must not cancel a task (CAN-4).
const (
	BadCancelUnknownInt    = "unknown-int"    // an integer ID never sent
	BadCancelUnknownString = "unknown-string" // a string ID never sent
	BadCancelCompleted     = "completed"      // the ID of the completed call Call
	BadCancelTaskRequest   = "task-request"   // the ID of the request that created task Task (CAN-4)
	BadCancelNoID          = "no-id"          // params without requestId
	BadCancelNullID        = "null-id"        // "requestId": null
	BadCancelFloatID       = "float-id"       // "requestId": 1.5
)

// Token styles of OpCall, OpTask and OpReuse.
const (
	TokenNone   = ""
	TokenString = "string"
	TokenInt    = "int"
)

// ID styles of OpCall and OpPing: an integer by default, a string, a
// string of digits ("7", never to be confused with 7: RPC-8), or 0 (a
// valid ID: RPC-4).
const (
	IDInt     = ""
	IDString  = "string"
	IDNumeric = "numeric"
	IDZero    = "zero"
)

// Ends of a task's worker (the task_worker tool's "end" argument).
const (
	EndComplete = ""
	EndFail     = "fail"
	EndError    = "error"
)

// Op is one operation with its arguments. Fields that do not apply to
// its kind are empty.
type Op struct {
	Kind Kind `json:"op"`
	// Call labels the call the operation starts or acts on; Task the task.
	Call string `json:"call,omitempty"`
	Task string `json:"task,omitempty"`
	// Steps is the slow tool's number of steps (OpCall, OpReuse); Ticks
	// the task worker's (OpTask).
	Steps int `json:"steps,omitempty"`
	Ticks int `json:"ticks,omitempty"`
	// Token and ID are styles (TokenNone…, IDInt…).
	Token string `json:"token,omitempty"`
	ID    string `json:"id,omitempty"`
	// From is the completed call whose token OpReuse reuses.
	From string `json:"from,omitempty"`
	// Race releases the call's next gate just before the cancel.
	Race bool `json:"race,omitempty"`
	// NoWait does not await the checkpoint after a release.
	NoWait bool `json:"noWait,omitempty"`
	// Target says which bad cancel OpBadCancel sends.
	Target string `json:"target,omitempty"`
	// End is how the task's worker ends.
	End string `json:"end,omitempty"`
}

// String describes the operation in one line, as the chronology's
// operation notes show it.
func (o Op) String() string {
	var b strings.Builder
	b.WriteString(string(o.Kind))
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	add("call", o.Call)
	add("task", o.Task)
	if o.Steps > 0 {
		add("steps", fmt.Sprint(o.Steps))
	}
	if o.Ticks > 0 {
		add("ticks", fmt.Sprint(o.Ticks))
	}
	add("token", o.Token)
	add("id", o.ID)
	add("from", o.From)
	if o.Race {
		b.WriteString(" race")
	}
	if o.NoWait {
		b.WriteString(" nowait")
	}
	add("target", o.Target)
	add("end", o.End)
	return b.String()
}

// Step is one operation of one session of a plan.
type Step struct {
	// Session is the session slot, 0-based.
	Session int `json:"s"`
	Op
}

// Plan is one trial: how many sessions are open at once and the
// operations, in the order the explorer performs them. The explorer runs
// them one at a time, so that a plan and a server that advances only at
// its checkpoints give the same interleaving on every run.
type Plan struct {
	Sessions int    `json:"sessions"`
	Steps    []Step `json:"steps"`
}

// Clone returns a deep copy of the plan.
func (p Plan) Clone() Plan {
	return Plan{Sessions: p.Sessions, Steps: slices.Clone(p.Steps)}
}

// Validate checks what a replay file could get wrong: the session count,
// each step's session and kind, and the arguments' ranges.
func (p Plan) Validate() error {
	if p.Sessions < 1 || p.Sessions > MaxSessions {
		return fmt.Errorf("%w: sessions must be 1..%d, not %d", ErrBadPlan, MaxSessions, p.Sessions)
	}
	if len(p.Steps) > MaxPlanSteps {
		return fmt.Errorf("%w: %d steps, more than %d", ErrBadPlan, len(p.Steps), MaxPlanSteps)
	}
	for i, st := range p.Steps {
		if st.Session < 0 || st.Session >= p.Sessions {
			return fmt.Errorf("%w: step %d names session %d of %d", ErrBadPlan, i, st.Session, p.Sessions)
		}
		if !slices.Contains(Kinds(), st.Kind) {
			return fmt.Errorf("%w: step %d: unknown op %q", ErrBadPlan, i, st.Kind)
		}
		if st.Steps < 0 || st.Steps > maxSteps || st.Ticks < 0 || st.Ticks > maxSteps {
			return fmt.Errorf("%w: step %d: steps and ticks must be 0..%d", ErrBadPlan, i, maxSteps)
		}
		if !validLabel(st.Call) || !validLabel(st.Task) || !validLabel(st.From) {
			return fmt.Errorf("%w: step %d: a label is letters, digits and '-' only, at most 32", ErrBadPlan, i)
		}
	}
	return nil
}

// validLabel accepts "" and short labels that are safe as checkpoint
// name parts.
func validLabel(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Bounds of a plan.
const (
	// MaxSessions bounds the sessions of one plan.
	MaxSessions = 64
	// MaxPlanSteps bounds the steps of one plan.
	MaxPlanSteps = 100_000
	// maxSteps bounds a call's steps and a task's ticks in a plan.
	maxSteps = 100
)
