package refserver

import (
	"fmt"
)

// task_worker's options for host tests (issue 15): a CreateTaskResult
// held at a gate, so that a host can abort before it knows the task ID
// (ambiguity A-6), and a side effect applied at one tick, with its receipt
// in the completed result, so that a host can reconcile a cancelled task
// whose effect already committed.

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
}

// taskHostSchema is the JSON Schema of taskHostArgs.
func taskHostSchema() map[string]any {
	return map[string]any{
		"holdCreate": map[string]any{"type": "boolean", "default": false,
			"description": "hold the CreateTaskResult at the gate KEY/created until released"},
		"effectAt": map[string]any{"type": "integer", "minimum": 1, "maximum": maxTicks,
			"description": "apply one side effect at this tick; the completed result carries its receipt"},
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
}

// parse checks a against the task's ticks.
func (o *taskHostOptions) parse(a taskHostArgs, ticks int) *rpcError {
	if a.HoldCreate != nil {
		o.holdCreate = *a.HoldCreate
	}
	if a.EffectAt != nil {
		if *a.EffectAt < 1 || *a.EffectAt > ticks {
			return invalidParams("Invalid params: effectAt must be 1..ticks (%d)", ticks)
		}
		o.effectAt = *a.EffectAt
	}
	return nil
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
