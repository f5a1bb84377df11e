package refserver

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
)

// Methods of the io.mcpflight/control extension (docs/control-extension.md).
const (
	// MethodAwait blocks until a checkpoint has been reached.
	MethodAwait = "mcpflight/await"
	// MethodRelease opens a gate, now or in advance.
	MethodRelease = "mcpflight/release"
	// MethodCounters returns the server's accounting.
	MethodCounters = "mcpflight/counters"
)

// Outcomes reported for a KEY/end checkpoint.
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
)

// AwaitResult is the result of mcpflight/await.
type AwaitResult struct {
	// Checkpoint is the name awaited.
	Checkpoint string `json:"checkpoint"`
	// RequestID is the ID of the tools/call that reached it.
	RequestID jsonrpc.ID `json:"requestId"`
	// Outcome is OutcomeCompleted or OutcomeCancelled for KEY/end, and
	// empty for every other checkpoint.
	Outcome string `json:"outcome"`
}

// OperationCounters is one operation's entry in Counters.Operations.
type OperationCounters struct {
	// RequestID is the ID of the tools/call that started the operation.
	RequestID jsonrpc.ID `json:"requestId"`
	// State is "running", "completed" or "cancelled" (a cancel was
	// accepted, whether or not the operation has ended since).
	State string `json:"state"`
	// Releases counts releases of the operation's resource; exactly 1
	// once it has ended.
	Releases int `json:"releases"`
	// ProgressSent counts progress notifications sent for it.
	ProgressSent int `json:"progressSent"`
}

// Counters is the result of mcpflight/counters.
type Counters struct {
	// OperationsStarted counts operations registered in the session.
	OperationsStarted int `json:"operationsStarted"`
	// OperationsActive counts operations holding their resource.
	OperationsActive int `json:"operationsActive"`
	// OperationsCompleted counts operations that sent their result.
	OperationsCompleted int `json:"operationsCompleted"`
	// OperationsCancelled counts cancelled operations that have ended.
	OperationsCancelled int `json:"operationsCancelled"`
	// ResourcesReleased counts resource releases, one per ended
	// operation on a conforming server.
	ResourcesReleased int `json:"resourcesReleased"`
	// ProgressTokensLive counts progress tokens still bound to a request.
	ProgressTokensLive int `json:"progressTokensLive"`
	// EffectsApplied counts side effects of the effect tool.
	EffectsApplied int `json:"effectsApplied"`
	// Operations is keyed by operation key.
	Operations map[string]OperationCounters `json:"operations"`
	// Tasks is keyed by the task's operation key (tasks.go).
	Tasks map[string]TaskCounters `json:"tasks,omitempty"`
}

// checkpointName reads {"checkpoint": NAME}.
func checkpointName(params map[string]json.RawMessage) (string, *rpcError) {
	var name string
	raw, ok := params["checkpoint"]
	if !ok || json.Unmarshal(raw, &name) != nil || name == "" {
		return "", invalidParams("Invalid params: checkpoint must be a non-empty string")
	}
	return name, nil
}

// checkpointLocked returns the checkpoint name, creating it. Caller holds mu.
func (ss *session) checkpointLocked(name string) *checkpoint {
	cp := ss.checkpoints[name]
	if cp == nil {
		cp = &checkpoint{reachedCh: make(chan struct{}), releasedCh: make(chan struct{})}
		ss.checkpoints[name] = cp
	}
	return cp
}

// mark records that c reached the checkpoint name, with the outcome for
// KEY/end, and wakes its awaiters. The first reacher wins.
func (ss *session) mark(c *call, name, outcome string) *checkpoint {
	ss.mu.Lock()
	cp := ss.checkpointLocked(name)
	first := !cp.reached
	if first {
		cp.reached = true
		cp.requestID = c.id
		cp.outcome = outcome
	}
	ss.mu.Unlock()
	if first {
		if outcome != "" {
			ss.logf("checkpoint %s reached (%s)", name, outcome)
		} else {
			ss.logf("checkpoint %s reached", name)
		}
		close(cp.reachedCh)
	}
	return cp
}

// reach marks the checkpoint; for a gated operation it then waits until
// the gate is released, c is cancelled, or the session ends. Cancellation
// wins over a release that happens at the same time.
func (ss *session) reach(c *call, name string) outcome {
	cp := ss.mark(c, name, "")
	switch {
	case c.gated:
		select {
		case <-cp.releasedCh:
		case <-c.cancelled:
		case <-ss.ctx.Done():
		}
	case c.tick > 0:
		t := time.NewTimer(c.tick)
		select {
		case <-t.C:
		case <-c.cancelled:
		case <-ss.ctx.Done():
		}
		t.Stop()
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.status(c)
}

// release opens the gate name, now or for when it is reached.
func (ss *session) release(params map[string]json.RawMessage) *rpcError {
	name, rerr := checkpointName(params)
	if rerr != nil {
		return rerr
	}
	ss.mu.Lock()
	cp := ss.checkpointLocked(name)
	first := !cp.released
	cp.released = true
	reached := cp.reached
	ss.mu.Unlock()
	if first {
		if reached {
			ss.logf("checkpoint %s released", name)
		} else {
			ss.logf("checkpoint %s released in advance", name)
		}
		close(cp.releasedCh)
	}
	return nil
}

// await registers a cancellable wait for a checkpoint.
func (ss *session) await(id jsonrpc.ID, params map[string]json.RawMessage) {
	name, rerr := checkpointName(params)
	c := &call{kind: kindAwait, id: id, idKey: ss.idKey(id), cpName: name, cancelled: make(chan struct{})}
	var cp *checkpoint
	if rerr == nil {
		ss.mu.Lock()
		if ss.inflight[c.idKey] != nil {
			rerr = &rpcError{code: codeInvalidRequest, message: "Invalid Request: request id " + id.String() + " is already in flight"}
		} else {
			ss.seq++
			c.seq = ss.seq
			ss.inflight[c.idKey] = c
			cp = ss.checkpointLocked(name)
		}
		ss.mu.Unlock()
	}
	if rerr != nil {
		ss.spawnReq(id, func() { ss.answer(id, nil, rerr) })
		return
	}
	ss.spawnReq(id, func() {
		select {
		case <-cp.reachedCh:
		case <-c.cancelled:
			return
		case <-ss.ctx.Done():
			return
		}
		c.sendMu.Lock()
		defer c.sendMu.Unlock()
		ss.mu.Lock()
		if ss.status(c) != goOn {
			ss.mu.Unlock()
			return
		}
		c.state = stateCompleted
		if ss.inflight[c.idKey] == c {
			delete(ss.inflight, c.idKey)
		}
		res := AwaitResult{Checkpoint: name, RequestID: cp.requestID, Outcome: cp.outcome}
		ss.mu.Unlock()
		ss.reply(id, res)
	})
}

// snapshot is the mcpflight/counters result, taken now.
func (ss *session) snapshot() Counters {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := Counters{
		OperationsStarted:   ss.started,
		OperationsActive:    ss.active,
		OperationsCompleted: ss.completed,
		OperationsCancelled: ss.cancelledN,
		ResourcesReleased:   ss.released,
		ProgressTokensLive:  len(ss.tokens),
		EffectsApplied:      ss.effects,
		Operations:          make(map[string]OperationCounters, len(ss.ops)),
		Tasks:               ss.taskCounters(),
	}
	for key, c := range ss.ops {
		out.Operations[key] = OperationCounters{
			RequestID:    c.id,
			State:        c.state.String(),
			Releases:     c.releases,
			ProgressSent: c.progressSent,
		}
	}
	return out
}

// describe names a call in diagnostics.
func (c *call) describe() string {
	if c.kind == kindAwait {
		return "await of " + strconv.Quote(c.cpName)
	}
	return "operation " + strconv.Quote(c.key)
}
