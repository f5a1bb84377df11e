package refserver

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// controlRequest handles the control extension's requests, the same in
// both eras, and reports whether method was one of them.
func (ss *session) controlRequest(id jsonrpc.ID, method string, params map[string]json.RawMessage) bool {
	switch method {
	case mcp.MethodControlAwait:
		ss.await(id, params)
	case mcp.MethodControlRelease:
		rerr := ss.release(params)
		ss.spawnReq(id, func() { ss.answer(id, struct{}{}, rerr) })
	case mcp.MethodControlCounters:
		snap := ss.snapshot()
		ss.spawnReq(id, func() { ss.reply(id, snap) })
	default:
		return false
	}
	return true
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
		res := mcp.ControlReached{Checkpoint: name, RequestID: cp.requestID, Outcome: cp.outcome}
		ss.mu.Unlock()
		ss.reply(id, res)
	})
}

// snapshot is the mcpflight/counters result, taken now.
func (ss *session) snapshot() mcp.ControlCounters {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := mcp.ControlCounters{
		OperationsStarted:   ss.started,
		OperationsActive:    ss.active,
		OperationsCompleted: ss.completed,
		OperationsCancelled: ss.cancelledN,
		ResourcesReleased:   ss.released,
		ProgressTokensLive:  len(ss.tokens),
		EffectsApplied:      ss.effects,
		Operations:          make(map[string]mcp.ControlOperation, len(ss.ops)),
		Tasks:               ss.taskCounters(),
		SubscriptionsOpen:   len(ss.subs),
	}
	for key, c := range ss.ops {
		out.Operations[key] = mcp.ControlOperation{
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
	switch c.kind {
	case kindAwait:
		return "await of " + strconv.Quote(c.cpName)
	case kindCreate:
		return "creation of task " + strconv.Quote(c.key)
	case kindListen:
		return "subscription " + c.id.String()
	}
	return "operation " + strconv.Quote(c.key)
}
