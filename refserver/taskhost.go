package refserver

import (
	"fmt"

	"github.com/mcpflight/mcpflight/mcp"
)

// task_worker's options for the host tests (package hostcancel): a
// CreateTaskResult held at a gate, so that a host can abort before it knows the task ID
// (ambiguity A-6); a side effect applied at one tick, with its receipt
// in the completed result, so that a host can reconcile a cancelled task
// whose effect already committed; and, under the tasks extension, a
// tasks/cancel that takes effect late, so that a host meets the eventual
// consistency the extension allows (TSX-44, TSX-45).

// taskHostArgs are the optional task_worker arguments, decoded with the
// others (strictly).
type taskHostArgs struct {
	// HoldCreate holds the CreateTaskResult at the gate KEY/created until
	// mcpflight/release opens it. The task is durable before (TSK-44): a
	// tasks/get for its ID, or tasks/list, already finds it.
	HoldCreate *bool `json:"holdCreate"`
	// EffectAt applies one side effect (effectsApplied++ in
	// mcpflight/counters) at tick n, before the checkpoint KEY/tick/n; the
	// completed result then carries its receipt in structuredContent, as
	// the effect tool's does.
	EffectAt *int `json:"effectAt"`
	// LateCancel (tasks extension only) acknowledges tasks/cancel at once
	// but leaves the task working until the worker's next tick: "cancel"
	// makes it cancelled there and stops the worker, "finish" lets the
	// worker end the task as end says (completed, or failed) instead.
	// Either way the counter does not move after the acknowledgement.
	LateCancel *string `json:"lateCancel"`
}

// Values of taskHostArgs.LateCancel.
const (
	lateCancelCancel = "cancel"
	lateCancelFinish = "finish"
)

// taskHostSchema is the JSON Schema of taskHostArgs.
func taskHostSchema() map[string]any {
	return map[string]any{
		"holdCreate": map[string]any{"type": "boolean", "default": false,
			"description": "hold the CreateTaskResult at the gate KEY/created until released"},
		"effectAt": map[string]any{"type": "integer", "minimum": 1, "maximum": maxTicks,
			"description": "apply one side effect at this tick; the completed result carries its receipt"},
		"lateCancel": map[string]any{"type": "string", "enum": []string{lateCancelCancel, lateCancelFinish},
			"description": "2026-07-28 only: tasks/cancel takes effect at the next tick, cancelling the task or letting it finish"},
	}
}

// addTaskHostSchema adds taskHostArgs to task_worker's inputSchema.
func addTaskHostSchema(tool map[string]any) {
	props := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	for k, v := range taskHostSchema() {
		props[k] = v
	}
}

// taskHostOptions are the parsed options; receipt is guarded by
// taskStore.mu.
type taskHostOptions struct {
	holdCreate bool
	effectAt   int
	receipt    string
	lateCancel string
	// cancelAsked: a tasks/cancel was acknowledged and waits for the
	// worker's next tick (lateCancel). Guarded by taskStore.mu.
	cancelAsked bool
}

// parse checks a against the task's ticks and era.
func (o *taskHostOptions) parse(a taskHostArgs, ticks int, is2026 bool) *rpcError {
	if a.HoldCreate != nil {
		o.holdCreate = *a.HoldCreate
	}
	if a.EffectAt != nil {
		if *a.EffectAt < 1 || *a.EffectAt > ticks {
			return invalidParams("Invalid params: effectAt must be 1..ticks (%d)", ticks)
		}
		o.effectAt = *a.EffectAt
	}
	if a.LateCancel != nil {
		switch {
		case !is2026:
			// 2025-11-25 wants the task cancelled before tasks/cancel
			// answers (TSK-64).
			return invalidParams("Invalid params: lateCancel needs the %s extension (2026-07-28)", TasksExtension)
		case *a.LateCancel != lateCancelCancel && *a.LateCancel != lateCancelFinish:
			return invalidParams("Invalid params: lateCancel must be %s or %s", lateCancelCancel, lateCancelFinish)
		}
		o.lateCancel = *a.LateCancel
	}
	return nil
}

// deferCancelLocked is tasks/cancel of a running task with lateCancel: it
// is acknowledged, and the task stays as it is until the worker's next
// tick. It reports whether the cancel was deferred. Caller holds
// taskStore.mu.
func (o *taskHostOptions) deferCancelLocked() bool {
	if o.lateCancel == "" {
		return false
	}
	o.cancelAsked = true
	return true
}

// lateCancelTick runs before each tick of t's worker: a deferred cancel
// takes effect now. It reports whether the worker stops ticking; with
// "finish" the task then ends as its worker says (finishTask).
func (ss *session) lateCancelTick(t *task) bool {
	ts := ss.tasks
	ts.mu.Lock()
	if !t.host.cancelAsked || mcp.TaskTerminal(t.status) {
		ts.mu.Unlock()
		return false
	}
	if t.host.lateCancel == lateCancelFinish {
		ts.mu.Unlock()
		ss.logf("task %s finishes instead of being cancelled (lateCancel)", t.id)
		return true
	}
	t.setStatusLocked(mcp.TaskCancelled, "The task was cancelled by tasks/cancel, at the worker's next tick.")
	t.closeStop()
	t.closeDone()
	ts.mu.Unlock()
	ss.logf("task %s cancelled at its worker's next tick (lateCancel)", t.id)
	ss.publishTask(t)
	return true
}

// holdCreateTaskResult waits at KEY/created for a task created with
// holdCreate.
func (ss *session) holdCreateTaskResult(t *task) {
	if t.host.holdCreate {
		ss.taskGate(t, t.key+"/created")
	}
}

// applyTaskEffect applies the task's effect at tick i. Lock order:
// session.mu, then taskStore.mu, each taken alone here.
func (ss *session) applyTaskEffect(t *task, i int) {
	if t.host.effectAt != i {
		return
	}
	ss.mu.Lock()
	ss.effects++
	n := ss.effects
	ss.mu.Unlock()
	ss.tasks.mu.Lock()
	t.host.receipt = fmt.Sprintf("effect-%d", n)
	ss.tasks.mu.Unlock()
	ss.logf("task %s applied effect %d at tick %d", t.id, n, i)
}

// completed adds the receipt to a completed task's result. Caller holds
// taskStore.mu.
func (o *taskHostOptions) completed(r toolResult) toolResult {
	if o.effectAt > 0 {
		r.StructuredContent = &receipt{Receipt: o.receipt, Applied: o.receipt != ""}
	}
	return r
}
