package refserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// The tasks extension, io.modelcontextprotocol/tasks (ext/tasks), served
// to 2026-07-28 requests.
//
// Task creation is server-directed: a tools/call of task_worker, or of
// slow when the request declares the extension, answers a
// CreateTaskResult (resultType "task") once the task is durable: an
// immediate tasks/get, on any connection of the scope, finds it (TSX-16,
// RPC-60). Without the declaration slow answers its plain result and
// task_worker -32021 (TSX-2, TSX-5, LIF-45). The worker is the one of
// 2025-11-25 (tasks.go: runTask, its checkpoints and counter) running on
// the realm's own session, so it outlives the request and the connection
// that created it. tasks/get inlines the result or error of a terminal
// task and the outstanding input requests (TSX-23..30); tasks/update
// answers them (TSX-39, TSX-42); tasks/cancel is an acknowledgement, also
// for a terminal task (TSX-44, A-17); notifications/tasks go to the
// subscriptions that asked for the task (listen.go). There is no
// tasks/result or tasks/list (TSX-65) and no progress (PRG-46).

// inputKey is the key of task_worker's one input request; it is never
// reused within a task (TSX-37).
const inputKey = "confirm"

// extTask is the extension's part of a task. Fields below modern and
// inputAt are guarded by taskStore.mu.
type extTask struct {
	is2026  bool
	inputAt int // the tick that asks for input; 0 for none
	// pending is the outstanding input request's key, "" when none;
	// answered is closed when it is answered, with answer.
	pending  string
	answered chan struct{}
	answer   json.RawMessage
	// hidden: not yet findable (FaultCreateBeforeDurable).
	hidden bool
}

// parse checks task_worker's inputAt against the task's ticks.
func (x *extTask) parse(inputAt *int, ticks int, is2026 bool) *rpcError {
	if inputAt == nil {
		return nil
	}
	if !is2026 {
		return invalidParams("Invalid params: inputAt needs the %s extension (2026-07-28)", TasksExtension)
	}
	if *inputAt < 1 || *inputAt > ticks {
		return invalidParams("Invalid params: inputAt must be 1..ticks (%d)", ticks)
	}
	x.inputAt = *inputAt
	return nil
}

// completed notes the input answer in a completed task's result. Caller
// holds taskStore.mu.
func (x *extTask) completed(r toolResult) toolResult {
	if x.answer != nil {
		var a struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(x.answer, &a)
		r.Content[0].Text += fmt.Sprintf("; input %s: %s", inputKey, strconv.Quote(a.Action))
	}
	return r
}

// isErrorStatus is the status of a task whose tool result has isError:
// failed under 2025-11-25 (TSK-76), completed with the result under the
// extension (TSX-14, TSX-59).
func (ss *session) isErrorStatus(t *task) string {
	if t.ext.is2026 && !ss.has(FaultIsErrorTaskFailed) {
		return mcp.TaskCompleted
	}
	if !t.ext.is2026 && ss.has(FaultIsErrorCompletesTask) {
		return mcp.TaskCompleted
	}
	return mcp.TaskFailed
}

// taskStatusChanged tells the client a task's status changed:
// notifications/tasks/status under 2025-11-25, notifications/tasks to the
// subscriptions that asked for it under the extension.
func (ss *session) taskStatusChanged(t *task, view taskWire) {
	if t.ext.is2026 {
		ss.publishTask(t)
		return
	}
	ss.notifyStatus(view)
}

// extTaskViewLocked is the DetailedTask of t (TSX-23..29): the Task, and the
// input requests, result or error its status calls for. Caller holds
// taskStore.mu.
func (ss *session) extTaskViewLocked(t *task) map[string]any {
	poll := int64(TaskPollInterval)
	if ss.has(FaultPollIntervalIgnored) {
		poll = 0
	}
	v := map[string]any{
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.Format(time.RFC3339Nano),
		"ttlMs":          t.ttl,
		"pollIntervalMs": poll,
	}
	if t.message != "" {
		v["statusMessage"] = t.message
	}
	inline := !ss.has(FaultTaskResultNotInlined)
	switch t.status {
	case mcp.TaskInputRequired:
		v["inputRequests"] = map[string]any{inputKey: inputRequest(t)}
	case mcp.TaskCompleted:
		if inline && t.result != nil {
			v["result"] = t.result
		}
	case mcp.TaskFailed:
		switch {
		case !inline:
		case t.rpcErr != nil:
			v["error"] = t.rpcErr
		default: // an isError result failed the task (FaultIsErrorTaskFailed)
			v["error"] = jsonrpc.Error{Code: codeInternalError, Message: "the tool reported an error"}
		}
	}
	return v
}

// inputRequest is task_worker's input request: an elicitation.
func inputRequest(t *task) map[string]any {
	return map[string]any{
		"method": mcp.MethodElicitationCreate,
		"params": map[string]any{
			"mode":    "form",
			"message": fmt.Sprintf("Go on with task %s after tick %d?", strconv.Quote(t.key), t.ext.inputAt),
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"answer": map[string]any{"type": "string"}},
			},
		},
	}
}

// createTask answers a 2026-07-28 tools/call with a task. The task is
// registered now, before the next frame is read; the call stays in flight
// (a cancel finds it) until its CreateTaskResult is written.
func (ss *session) createTask(id jsonrpc.ID, name string, args json.RawMessage) {
	fail := func(rerr *rpcError) { ss.spawnReq(id, func() { ss.answer(id, nil, rerr) }) }
	t, rerr := ss.buildTask(id, name, args, jsonrpc.ProgressToken{}, DefaultTaskTTL, true)
	if rerr != nil {
		fail(rerr)
		return
	}
	c := &call{kind: kindCreate, id: id, idKey: ss.idKey(id), key: t.key, cancelled: make(chan struct{})}
	ss.mu.Lock()
	dup := ss.inflight[c.idKey] != nil
	if !dup {
		ss.inflight[c.idKey] = c
	}
	ss.mu.Unlock()
	if dup {
		fail(&rpcError{code: codeInvalidRequest, message: "Invalid Request: request id " + id.String() + " is already in flight"})
		return
	}
	if rerr := ss.registerTask(t); rerr != nil {
		ss.mu.Lock()
		delete(ss.inflight, c.idKey)
		ss.mu.Unlock()
		fail(rerr)
		return
	}
	if ss.has(FaultCreateBeforeDurable) {
		ss.tasks.mu.Lock()
		delete(ss.tasks.byID, t.id)
		t.ext.hidden = true
		ss.tasks.mu.Unlock()
		ss.logf("task %s hidden until its worker starts (fault %s)", t.id, FaultCreateBeforeDurable)
	}
	ss.logf("task %s (%s) created by request %s (%s), ttl %dms", t.id, strconv.Quote(t.key), id, TasksExtension, t.ttl)
	ss.spawnReq(id, func() { ss.deliverCreate(t, c) })
}

// deliverCreate writes the CreateTaskResult of t, after its hold
// (holdCreate) when it has one, then starts its worker on the realm.
// A cancel of the creating request before that cancels the task: the
// request it would have answered is gone, and so is the work.
func (ss *session) deliverCreate(t *task, c *call) {
	if t.host.holdCreate {
		cp := ss.mark(&call{id: t.reqID}, t.key+"/created", "")
		select {
		case <-cp.releasedCh:
		case <-t.stop:
		case <-c.cancelled:
		case <-ss.ctx.Done():
		}
	}
	c.sendMu.Lock()
	ss.mu.Lock()
	o := ss.status(c)
	if o == goOn {
		c.state = stateCompleted
		if ss.inflight[c.idKey] == c {
			delete(ss.inflight, c.idKey)
		}
	}
	ss.mu.Unlock()
	if o == wasCancelled {
		c.sendMu.Unlock()
		ss.dropUndelivered(t)
		return
	}
	if o == goOn {
		ts := ss.tasks
		ts.mu.Lock()
		res := ss.extTaskViewLocked(t)
		ts.mu.Unlock()
		delete(res, "result")
		delete(res, "error")
		delete(res, "inputRequests")
		res["resultType"] = mcp.ResultTypeTask // TSX-8
		ss.reply(c.id, res)
	}
	c.sendMu.Unlock()
	bg := ss.realm.bg
	bg.spawnReq(t.reqID, func() { bg.runTask(t) })
}

// dropUndelivered cancels a task whose creating request was cancelled
// before its CreateTaskResult: its worker never starts.
func (ss *session) dropUndelivered(t *task) {
	ts := ss.tasks
	ts.mu.Lock()
	if !mcp.TaskTerminal(t.status) {
		t.setStatusLocked(mcp.TaskCancelled, "The request that created the task was cancelled before its CreateTaskResult.")
	}
	t.closeStop()
	t.closeDone()
	t.running = false
	ts.mu.Unlock()
	ss.logf("task %s cancelled with the request that created it", t.id)
	ss.publishTask(t)
	ss.mark(&call{id: t.reqID}, t.key+"/end", mcp.OutcomeCancelled)
}

// taskTick is the extension's part of tick i of t's worker: a hidden task
// becomes findable (FaultCreateBeforeDurable), and at inputAt the worker
// asks for input.
func (ss *session) taskTick(t *task, i int) {
	if !t.ext.is2026 {
		return
	}
	ts := ss.tasks
	ts.mu.Lock()
	if t.ext.hidden {
		t.ext.hidden = false
		if !t.deleted {
			ts.byID[t.id] = t
		}
	}
	ts.mu.Unlock()
	if t.ext.inputAt == i {
		ss.awaitInput(t)
	}
}

// awaitInput moves t to input_required with the input request "confirm"
// (KEY/input), waits for tasks/update to answer it, a cancel, or the end
// of the realm, then goes back to working (KEY/answered).
func (ss *session) awaitInput(t *task) {
	ts := ss.tasks
	ts.mu.Lock()
	if mcp.TaskTerminal(t.status) || t.stopClosed {
		ts.mu.Unlock()
		return
	}
	t.ext.pending = inputKey
	t.ext.answered = make(chan struct{})
	answered := t.ext.answered
	t.setStatusLocked(mcp.TaskInputRequired, "The worker waits for the answer to the input request \"confirm\".")
	ts.mu.Unlock()
	ss.publishTask(t)
	ss.mark(&call{id: t.reqID}, t.key+"/input", "")
	select {
	case <-answered:
	case <-t.stop:
		return
	case <-ss.ctx.Done():
		return
	}
	ts.mu.Lock()
	back := t.status == mcp.TaskInputRequired
	if back {
		t.setStatusLocked(mcp.TaskWorking, "The worker goes on with the answer.")
	}
	ts.mu.Unlock()
	if back {
		ss.publishTask(t)
	}
	ss.mark(&call{id: t.reqID}, t.key+"/answered", "")
}

// extGetTask answers tasks/get with the task's DetailedTask (TSX-23..30).
func (ss *session) extGetTask(params map[string]json.RawMessage) (any, *rpcError) {
	if rerr := ss.extTaskIDFault(params); rerr != nil {
		return nil, rerr
	}
	t, rerr := ss.lookupTask(params)
	if rerr != nil {
		return nil, rerr // TSX-53
	}
	ts := ss.tasks
	ts.mu.Lock()
	v := ss.extTaskViewLocked(t)
	ts.mu.Unlock()
	if ss.has(FaultGetTaskResultTypeTask) {
		v["resultType"] = mcp.ResultTypeTask
	}
	return v, nil
}

// extUpdateTask applies tasks/update: an answer to the outstanding input
// request wakes the worker, which then moves the task back to working
// (the acknowledgement comes first: TSX-39); keys that are not
// outstanding are ignored (TSX-42).
func (ss *session) extUpdateTask(params map[string]json.RawMessage) *rpcError {
	if rerr := ss.extTaskIDFault(params); rerr != nil {
		return rerr
	}
	t, rerr := ss.lookupTask(params)
	if rerr != nil {
		return rerr // TSX-54
	}
	var responses map[string]json.RawMessage
	if raw, ok := params["inputResponses"]; !ok || json.Unmarshal(raw, &responses) != nil || responses == nil {
		return invalidParams("Invalid params: inputResponses must be an object")
	}
	ts := ss.tasks
	ts.mu.Lock()
	var ignored []string
	for k, v := range responses {
		if k != "" && k == t.ext.pending {
			t.ext.pending, t.ext.answer = "", v
			close(t.ext.answered)
			continue
		}
		ignored = append(ignored, k)
	}
	ts.mu.Unlock()
	if len(ignored) > 0 {
		slices.Sort(ignored)
		if ss.has(FaultTaskUpdateRejectsUnknownKey) {
			return invalidParams("Invalid params: no outstanding input request %s", strings.Join(ignored, ", "))
		}
		ss.logf("tasks/update of %s: ignoring responses to %s (not outstanding)", t.id, strings.Join(ignored, ", "))
	}
	return nil
}

// extCancelTask applies tasks/cancel: an acknowledgement whatever the task's
// status (TSX-44; A-17); a task still running becomes cancelled and its
// worker stops at its next checkpoint.
func (ss *session) extCancelTask(params map[string]json.RawMessage) *rpcError {
	if rerr := ss.extTaskIDFault(params); rerr != nil {
		return rerr
	}
	t, rerr := ss.lookupTask(params)
	if rerr != nil {
		return rerr // TSX-54
	}
	ts := ss.tasks
	ts.mu.Lock()
	t.cancelRequests++
	if mcp.TaskTerminal(t.status) {
		status := t.status
		ts.mu.Unlock()
		if ss.has(FaultTaskCancelErrorOnTerminal) {
			return invalidParams("Cannot cancel task: already in terminal status %s", strconv.Quote(status))
		}
		ss.logf("tasks/cancel of %s acknowledged: it is already %s", t.id, status)
		return nil
	}
	if t.host.deferCancelLocked() { // taskhost.go
		ts.mu.Unlock()
		ss.logf("tasks/cancel of %s acknowledged; it takes effect at the worker's next tick", t.id)
		return nil
	}
	t.setStatusLocked(mcp.TaskCancelled, "The task was cancelled by tasks/cancel.")
	t.closeStop()
	t.closeDone()
	ts.mu.Unlock()
	ss.logf("task %s cancelled by tasks/cancel", t.id)
	ss.publishTask(t)
	return nil
}

// extTaskIDFault is FaultExtTaskIDInternalError: -32603 for a request
// whose taskId is not a string (TSX-53, TSX-54), or nil.
func (ss *session) extTaskIDFault(params map[string]json.RawMessage) *rpcError {
	if !ss.has(FaultExtTaskIDInternalError) {
		return nil
	}
	var id string
	if raw, ok := params["taskId"]; ok && string(raw) != "null" && json.Unmarshal(raw, &id) == nil {
		return nil
	}
	ss.logf("task request without a string taskId: -32603 (fault %s)", FaultExtTaskIDInternalError)
	return &rpcError{code: codeInternalError, message: "Internal error"}
}
