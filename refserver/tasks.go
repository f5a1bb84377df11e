package refserver

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// Durable tasks (MCP 2025-11-25, basic/utilities/tasks).
//
// The server declares tasks.list, tasks.cancel and
// tasks.requests.tools.call. The tool "task_worker" requires task
// augmentation, "slow" accepts it, and "effect" and "log" forbid it
// (tools/list says so in execution.taskSupport). A task's worker is a
// synthetic counter: it advances one tick at a time, and on a gated task
// each tick waits at the checkpoint KEY/tick/i (KEY/step/i for a slow
// task) until mcpflight/release opens it. mcpflight/counters reports every
// task's counter, so a checker can tell whether the work really stopped
// after tasks/cancel.

// Task wire names and limits.
const (
	// ToolTaskWorker is the tool whose taskSupport is "required".
	ToolTaskWorker = "task_worker"
	// DefaultTaskTTL is the ttl, in milliseconds, of a task whose request
	// asked for none; MaxTaskTTL caps a requested ttl (TSK-40, TSK-86).
	DefaultTaskTTL = 300_000
	MaxTaskTTL     = 3_600_000
	// TaskPollInterval is the pollInterval, in milliseconds, every task
	// suggests (TSK-43).
	TaskPollInterval = 25
	// TaskPageSize is how many tasks one tasks/list page holds; it is
	// small so that pagination is exercised (TSK-59, TSK-60).
	TaskPageSize = 2
	// maxTicks bounds task_worker's ticks argument.
	maxTicks = 1000
)

// task is one durable task of a session.
type task struct {
	// tick paces an ungated worker in real time (tickMs): interactive
	// use only, as for the slow tool.
	tick   time.Duration
	id     string
	key    string
	seq    uint64 // creation order within the store
	reqID  jsonrpc.ID
	reqKey string
	owner  *session
	// Worker configuration, fixed at creation.
	stepName string // "tick" or "step": checkpoints are KEY/<stepName>/i
	ticks    int
	unit     float64
	noTotal  bool
	gated    bool
	end      string // "complete", "fail" or "error"
	token    jsonrpc.ProgressToken
	hasToken bool
	created  time.Time
	ttl      int64 // milliseconds
	// host are the host-test options (taskhost.go).
	host taskHostOptions
	// ext is the tasks extension's part of a 2026-07-28 task (tasksext.go).
	ext extTask
	// stop is closed when the task is cancelled or deleted: the worker
	// stops at its next checkpoint.
	stop chan struct{}
	// done is closed when a blocked tasks/result may answer.
	done chan struct{}

	// Guarded by taskStore.mu.
	status         string
	message        string
	updated        time.Time
	counter        int
	running        bool
	result         json.RawMessage // CallToolResult, when the worker returned one
	rpcErr         *jsonrpc.Error  // the JSON-RPC error the worker ended with
	deleted        bool
	progressSent   int
	cancelRequests int
	stopClosed     bool
	doneClosed     bool
	// getsCompleted counts tasks/get answers since it completed
	// (FaultCompletedTaskReopens).
	getsCompleted int
}

// closeStop closes stop once. Caller holds taskStore.mu.
func (t *task) closeStop() {
	if !t.stopClosed {
		t.stopClosed = true
		close(t.stop)
	}
}

// closeDone closes done once. Caller holds taskStore.mu.
func (t *task) closeDone() {
	if !t.doneClosed {
		t.doneClosed = true
		close(t.done)
	}
}

// taskStore holds a session's tasks. Lock order: session.mu before
// taskStore.mu; nothing that takes session.mu runs under taskStore.mu.
type taskStore struct {
	mu     sync.Mutex
	salt   string
	seq    uint64
	byID   map[string]*task
	byKey  map[string]*task
	byReq  map[string]*task
	tasks  []*task // creation order
	joined bool    // registered with the server's registry
}

func newTaskStore() *taskStore {
	return &taskStore{
		salt:  randomHex(6),
		byID:  map[string]*task{},
		byKey: map[string]*task{},
		byReq: map[string]*task{},
	}
}

// randomHex returns n random bytes in hex; task IDs come from it (TSK-81).
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("refserver: crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b)
}

// taskRegistry is the set of task stores of a Server's live sessions. A
// conforming server never reads another session's store; the fault
// FaultListLeaksOtherSessions does.
type taskRegistry struct {
	mu     sync.Mutex
	stores map[*taskStore]bool
}

func (r *taskRegistry) add(ts *taskStore) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stores == nil {
		r.stores = map[*taskStore]bool{}
	}
	r.stores[ts] = true
}

func (r *taskRegistry) remove(ts *taskStore) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stores, ts)
}

func (r *taskRegistry) others(ts *taskStore) []*taskStore {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*taskStore
	for o := range r.stores {
		if o != ts {
			out = append(out, o)
		}
	}
	return out
}

// taskCapability is the server's tasks capability (TSK-1, TSK-2).
func (ss *session) taskCapability() map[string]any {
	var list any = map[string]any{}
	if ss.has(FaultTaskListNotObject) {
		list = true
	}
	return map[string]any{
		"list":     list,
		"cancel":   map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
	}
}

// taskSupport is each tool's execution.taskSupport.
func taskSupport(tool string) string {
	switch tool {
	case ToolTaskWorker:
		return "required"
	case ToolSlow:
		return "optional"
	}
	return "forbidden"
}

// toolListWithTasks is toolList plus task_worker, each tool with its
// execution.taskSupport.
func toolListWithTasks() []map[string]any {
	tools := toolList()
	tools = append(tools, map[string]any{
		"name": ToolTaskWorker,
		"description": "Must be called as a task. Its worker counts `ticks` ticks (sending progress i of ticks when the request has a progress token), " +
			"then ends as `end` says: complete (a result), fail (a result with isError, so the task fails) or error (a JSON-RPC error). " +
			"Checkpoints KEY/start, KEY/tick/i and KEY/end; when gated, KEY/start and KEY/tick/i wait for mcpflight/release. " +
			"tasks/cancel stops it at its next checkpoint; mcpflight/counters reports its counter.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"key":   map[string]any{"type": "string", "description": "names the task's worker and prefixes its checkpoints"},
				"ticks": map[string]any{"type": "integer", "minimum": 1, "maximum": maxTicks, "default": 3},
				"gated": map[string]any{"type": "boolean", "default": true, "description": "checkpoints wait for mcpflight/release"},
				"end":   map[string]any{"type": "string", "enum": []string{"complete", "fail", "error"}, "default": "complete"},
			},
			"required":             []string{"key"},
			"additionalProperties": false,
		},
	})
	addTaskHostSchema(tools[len(tools)-1])
	for _, t := range tools {
		name, _ := t["name"].(string)
		t["execution"] = map[string]any{"taskSupport": taskSupport(name)}
	}
	return tools
}

// listTools is the tools/list result: with task support unless the
// server was started with NoTasks.
func (ss *session) listTools() []map[string]any {
	if ss.srv.opts.NoTasks {
		return toolList()
	}
	tools := toolListWithTasks()
	if ss.has(FaultTaskSupportMissing) {
		for _, t := range tools {
			if t["name"] == ToolTaskWorker {
				delete(t, "execution")
			}
		}
	}
	return tools
}

// taskParams reads params.task. present is false when the request is not
// task-augmented.
func taskParams(params map[string]json.RawMessage) (ttl int64, present bool, rerr *rpcError) {
	raw, ok := params["task"]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var meta struct {
		TTL *float64 `json:"ttl"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return 0, true, invalidParams("Invalid params: task must be an object with an optional numeric ttl")
	}
	ttl = DefaultTaskTTL
	if meta.TTL != nil {
		if *meta.TTL < 0 {
			return 0, true, invalidParams("Invalid params: task.ttl must not be negative")
		}
		ttl = min(int64(*meta.TTL), MaxTaskTTL) // TSK-40: the receiver may override
	}
	return ttl, true, nil
}

// taskCall handles the task side of tools/call. It reports whether it
// answered the request; when it did not, the call is an ordinary one.
func (ss *session) taskCall(id jsonrpc.ID, name string, params map[string]json.RawMessage, token jsonrpc.ProgressToken) bool {
	if ss.srv.opts.NoTasks {
		return false // TSK-24: processed normally, the task field ignored
	}
	fail := func(rerr *rpcError) bool { ss.spawnReq(id, func() { ss.answer(id, nil, rerr) }); return true }
	ttl, augmented, rerr := taskParams(params)
	support := taskSupport(name)
	switch {
	case rerr != nil:
		return fail(rerr)
	case !augmented && support == "required" && ss.has(FaultRequiredTaskRunsPlain):
		r := textResult("MCP error -32601: tool " + strconv.Quote(name) + " must be called as a task")
		r.IsError = true
		ss.spawnReq(id, func() { ss.reply(id, r) })
		return true
	case !augmented && support == "required":
		// TSK-12 (MUST -32601; TSK-72's -32600 is only a MAY).
		return fail(&rpcError{code: codeMethodNotFound, message: "Method not found: tool " + strconv.Quote(name) + " must be called as a task (taskSupport required)"})
	case !augmented:
		return false
	case (name == ToolLog || name == ToolEffect) && ss.has(FaultForbiddenRunsPlain):
		return false // the task field ignored, as if the tool allowed it
	case name == ToolLog || name == ToolEffect:
		return fail(&rpcError{code: codeMethodNotFound, message: "Method not found: tool " + strconv.Quote(name) + " cannot be called as a task (taskSupport forbidden)"}) // TSK-9
	case name != ToolTaskWorker && name != ToolSlow:
		return false // unknown tool: the ordinary path says so
	}
	t, rerr := ss.buildTask(id, name, params["arguments"], token, ttl, false)
	if rerr != nil {
		return fail(rerr)
	}
	if rerr := ss.registerTask(t); rerr != nil {
		return fail(rerr)
	}
	ss.logf("task %s (%s) created by request %s, ttl %dms", t.id, strconv.Quote(t.key), id, t.ttl)
	ss.spawnReq(id, func() {
		// The task is durable before CreateTaskResult is written (TSK-44),
		// and CreateTaskResult precedes every frame of the worker.
		ss.holdCreateTaskResult(t)
		ss.reply(id, map[string]any{"task": ss.taskView(t)})
		ss.runTask(t)
	})
	return true
}

// buildTask makes the task of a task_worker or slow call from its
// arguments (modern: a 2026-07-28 task, which may also ask for input).
func (ss *session) buildTask(id jsonrpc.ID, name string, args json.RawMessage, token jsonrpc.ProgressToken, ttl int64, is2026 bool) (*task, *rpcError) {
	t := &task{reqID: id, reqKey: ss.idKey(id), owner: ss, token: token, hasToken: token.IsValid(),
		ttl: ttl, unit: 1, gated: true, end: "complete", stop: make(chan struct{}), done: make(chan struct{})}
	if is2026 {
		// No progress for a task of the extension (PRG-46).
		t.ext.is2026, t.hasToken = true, false
	}
	if name == ToolTaskWorker {
		var a struct {
			Key    *string `json:"key"`
			Ticks  *int    `json:"ticks"`
			Gated  *bool   `json:"gated"`
			End    *string `json:"end"`
			TickMs *int    `json:"tickMs"`
			// InputAt asks for input at that tick (2026-07-28 only).
			InputAt *int `json:"inputAt"`
			taskHostArgs
		}
		if err := strictDecode(args, &a); err != nil {
			return nil, invalidParams("Invalid params: task_worker arguments: %v", err)
		}
		if a.Key == nil || *a.Key == "" {
			return nil, invalidParams("Invalid params: task_worker needs a non-empty key")
		}
		t.key, t.stepName, t.ticks = *a.Key, "tick", 3
		if a.Ticks != nil {
			if *a.Ticks < 1 || *a.Ticks > maxTicks {
				return nil, invalidParams("Invalid params: ticks must be 1..%d", maxTicks)
			}
			t.ticks = *a.Ticks
		}
		if a.Gated != nil {
			t.gated = *a.Gated
		}
		if a.End != nil {
			if !slices.Contains([]string{"complete", "fail", "error"}, *a.End) {
				return nil, invalidParams("Invalid params: end must be complete, fail or error")
			}
			t.end = *a.End
		}
		if rerr := t.host.parse(a.taskHostArgs, t.ticks, is2026); rerr != nil {
			return nil, rerr
		}
		if rerr := t.ext.parse(a.InputAt, t.ticks, is2026); rerr != nil {
			return nil, rerr
		}
	} else {
		a, rerr := parseSlowArgs(args)
		if rerr != nil {
			return nil, rerr
		}
		t.key, t.stepName, t.ticks, t.unit, t.noTotal = a.key, "step", a.steps, a.unit, a.noTotal
		t.gated, t.tick = a.gated, a.tick
	}
	if tickMs := taskTickMs(args); tickMs > 0 {
		if tickMs > 60000 {
			return nil, invalidParams("Invalid params: tickMs must be 0..60000")
		}
		t.tick, t.gated = time.Duration(tickMs)*time.Millisecond, false
	}
	return t, nil
}

// registerTask stores t under a fresh ID, before the next frame is read.
func (ss *session) registerTask(t *task) *rpcError {
	ts := ss.tasks
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	// A server that hides the control extension takes no key from its
	// client (a profile's fixed arguments name the same one every call):
	// the task runs under a free one, as an operation does.
	t.key = ss.srv.freeKey(t.key, func(k string) bool { return ss.ops[k] != nil || ts.byKey[k] != nil })
	if ss.ops[t.key] != nil || ts.byKey[t.key] != nil {
		return invalidParams("Invalid params: key %s is already used in this session", strconv.Quote(t.key))
	}
	if !ts.joined {
		ts.joined = true
		ss.srv.tasks.add(ts)
		ss.spawnAux(func() {
			<-ss.ctx.Done()
			ss.srv.tasks.remove(ts)
		})
	}
	t.id = "task-" + randomHex(16) // TSK-26..28, TSK-81
	if ss.has(FaultSequentialTaskIDs) {
		t.id = "task-" + strconv.FormatInt(ss.srv.taskIDs.Add(1), 10)
	}
	ts.seq++
	t.seq = ts.seq
	t.created = time.Now().UTC()
	t.updated = t.created
	t.status = mcp.TaskWorking // TSK-29
	t.message = "The worker is starting."
	t.running = true
	ts.byID[t.id] = t
	ts.byKey[t.key] = t
	ts.byReq[t.reqKey] = t
	ts.tasks = append(ts.tasks, t)
	return nil
}

// taskWire is the Task object.
type taskWire struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
	// noTTL leaves ttl out (FaultTaskWithoutTTL); null would be there.
	noTTL bool
}

// MarshalJSON writes the Task, without its ttl member under
// FaultTaskWithoutTTL.
func (w taskWire) MarshalJSON() ([]byte, error) {
	type plain taskWire
	if !w.noTTL {
		return json.Marshal(plain(w))
	}
	return json.Marshal(struct {
		plain
		TTL *int64 `json:"ttl,omitempty"`
	}{plain: plain(w)})
}

// taskViewLocked renders t. Caller holds taskStore.mu.
func (ss *session) taskViewLocked(t *task) taskWire {
	ttl := t.ttl
	poll := int64(TaskPollInterval)
	if ss.has(FaultPollIntervalIgnored) {
		poll = 0
	}
	updated := t.updated
	if ss.has(FaultLastUpdatedBeforeCreated) {
		updated = t.created.Add(-time.Second)
	}
	return taskWire{
		TaskID:        t.id,
		Status:        t.status,
		StatusMessage: t.message,
		CreatedAt:     t.created.Format(time.RFC3339Nano),
		LastUpdatedAt: updated.Format(time.RFC3339Nano),
		TTL:           &ttl,
		PollInterval:  &poll,
		noTTL:         ss.has(FaultTaskWithoutTTL),
	}
}

// getView is the Task tasks/get answers: the task as it is, except that
// under FaultCompletedTaskReopens the second tasks/get after it completed
// says working.
func (ss *session) getView(t *task) taskWire {
	ss.tasks.mu.Lock()
	defer ss.tasks.mu.Unlock()
	view := ss.taskViewLocked(t)
	if ss.has(FaultCompletedTaskReopens) && t.status == mcp.TaskCompleted {
		t.getsCompleted++
		if t.getsCompleted == 2 {
			view.Status = mcp.TaskWorking
		}
	}
	return view
}

func (ss *session) taskView(t *task) taskWire {
	ss.tasks.mu.Lock()
	defer ss.tasks.mu.Unlock()
	return ss.taskViewLocked(t)
}

// setStatusLocked moves t to status with message; lastUpdatedAt never goes
// backwards (TSK-39). Caller holds taskStore.mu.
func (t *task) setStatusLocked(status, message string) {
	t.status, t.message = status, message
	now := time.Now().UTC()
	if now.After(t.updated) {
		t.updated = now
	}
}

// notifyStatus sends notifications/tasks/status with the full task and no
// related-task metadata (TSK-21, TSK-58).
func (ss *session) notifyStatus(view taskWire) {
	if ss.has(FaultStatusNotificationMeta) {
		raw, _ := json.Marshal(view)
		var params map[string]any
		_ = json.Unmarshal(raw, &params)
		params[mcp.MetaKey] = map[string]any{mcp.MetaRelatedTask: map[string]string{"taskId": view.TaskID}}
		ss.notify(mcp.NotificationTaskStatus, params)
		return
	}
	ss.notify(mcp.NotificationTaskStatus, view)
}

// taskGate reaches the checkpoint name and, for a gated task, waits for
// its release, for the task to stop, or for the session to end.
func (ss *session) taskGate(t *task, name string) {
	cp := ss.mark(&call{id: t.reqID}, name, "")
	if !t.gated {
		if t.tick > 0 {
			timer := time.NewTimer(t.tick)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-t.stop:
			case <-ss.ctx.Done():
			}
		}
		return
	}
	stop := t.stop
	if ss.has(FaultCancelDoesNotStopWorker) {
		stop = nil // a nil channel never fires: the cancel is not heard
	}
	select {
	case <-cp.releasedCh:
	case <-stop:
	case <-ss.ctx.Done():
	}
}

// runTask is the worker: KEY/start, then per tick the counter, progress
// and KEY/<step>/i, then the end the task asked for, then KEY/end.
func (ss *session) runTask(t *task) {
	ts := ss.tasks
	outcome := mcp.OutcomeCompleted
	defer func() {
		ts.mu.Lock()
		t.running = false
		ts.mu.Unlock()
		if ss.ctx.Err() == nil {
			ss.mark(&call{id: t.reqID}, t.key+"/end", outcome)
		}
	}()
	ts.mu.Lock()
	if t.status == mcp.TaskWorking { // a cancel may already have come
		t.setStatusLocked(mcp.TaskWorking, "The worker is running.")
	}
	ts.mu.Unlock()
	ss.cancelUnprompted(t)
	ss.taskGate(t, t.key+"/start")
	for i := 1; i <= t.ticks; i++ {
		if ss.ctx.Err() != nil {
			return
		}
		if ss.lateCancelTick(t) { // taskhost.go
			break
		}
		// The stop check and the tick are one step under the store's
		// lock, which tasks/cancel also takes: once a cancel has been
		// answered, the counter of a conforming worker never moves again.
		ts.mu.Lock()
		if t.stopClosed && !ss.has(FaultCancelDoesNotStopWorker) {
			ts.mu.Unlock()
			break
		}
		t.counter++
		live := !mcp.TaskTerminal(t.status) || ss.has(FaultCancelDoesNotStopWorker)
		ts.mu.Unlock()
		if live {
			ss.applyTaskEffect(t, i)
			ss.taskProgress(t, i)
			ss.taskTick(t, i) // tasksext.go
		}
		ss.taskGate(t, fmt.Sprintf("%s/%s/%d", t.key, t.stepName, i))
	}
	if ss.ctx.Err() != nil {
		return
	}
	outcome = ss.finishTask(t)
}

// taskProgress sends progress for tick i under the token of the request
// that created the task, which stays valid for the task's lifetime (PRG-9).
func (ss *session) taskProgress(t *task, i int) {
	if !t.hasToken {
		return
	}
	token := t.token
	if ss.has(FaultTaskProgressOtherToken) {
		token = jsonrpc.StringToken("mcpflight-other-" + t.id)
	}
	p := progressParams{ProgressToken: token, Progress: float64(i) * t.unit, Message: fmt.Sprintf("tick %d of %d", i, t.ticks)}
	if !t.noTotal {
		total := float64(t.ticks) * t.unit
		p.Total = &total
	}
	ss.tasks.mu.Lock()
	t.progressSent++
	ss.tasks.mu.Unlock()
	ss.notify(mcp.NotificationProgress, p)
}

// finishTask ends the task as its worker says, unless it is already
// terminal: a cancelled task stays cancelled (TSK-65) unless
// FaultStatusChangesAfterCancelled overwrites it. It returns the KEY/end
// outcome.
func (ss *session) finishTask(t *task) string {
	ts := ss.tasks
	ts.mu.Lock()
	if t.deleted {
		ts.mu.Unlock()
		return mcp.OutcomeExpired
	}
	if mcp.TaskTerminal(t.status) && !ss.has(FaultStatusChangesAfterCancelled) {
		ts.mu.Unlock()
		return mcp.OutcomeCancelled
	}
	wasCancelled := t.status == mcp.TaskCancelled
	switch t.end {
	case "fail":
		r := textResult(fmt.Sprintf("failed after %d ticks", t.counter))
		r.IsError = true
		t.result, _ = json.Marshal(r)
		t.setStatusLocked(ss.isErrorStatus(t), fmt.Sprintf("Tool execution failed after %d ticks.", t.counter)) // TSK-75, TSK-76; TSX-59
	case "error":
		t.rpcErr = &jsonrpc.Error{Code: codeInternalError, Message: fmt.Sprintf("Internal error: the worker broke after %d ticks", t.counter)}
		t.setStatusLocked(mcp.TaskFailed, "The worker ended with a JSON-RPC error: "+t.rpcErr.Message)
	default:
		t.result, _ = json.Marshal(t.host.completed(t.ext.completed(textResult(fmt.Sprintf("done after %d ticks", t.counter)))))
		t.setStatusLocked(mcp.TaskCompleted, fmt.Sprintf("Completed after %d ticks.", t.counter))
	}
	t.closeDone()
	view := ss.taskViewLocked(t)
	ts.mu.Unlock()
	if wasCancelled {
		ss.logf("task %s changed from cancelled to %s (fault %s)", t.id, view.Status, FaultStatusChangesAfterCancelled)
	}
	ss.taskStatusChanged(t, view)
	if view.Status == mcp.TaskCompleted {
		return mcp.OutcomeCompleted
	}
	return "failed"
}

// expireLocked deletes the tasks whose ttl has elapsed (TSK-42). Caller
// holds taskStore.mu.
func (ts *taskStore) expireLocked(now time.Time) {
	for _, t := range ts.tasks {
		if t.deleted || now.Sub(t.created) < time.Duration(t.ttl)*time.Millisecond {
			continue
		}
		t.deleted = true
		delete(ts.byID, t.id)
		t.closeStop()
		t.closeDone()
	}
}

// lookupTask finds a live task by params.taskId; the related-task _meta of
// the request is ignored (TSK-51, TSK-52).
func (ss *session) lookupTask(params map[string]json.RawMessage) (*task, *rpcError) {
	var id string
	raw, ok := params["taskId"]
	if !ok || json.Unmarshal(raw, &id) != nil {
		return nil, invalidParams("Invalid params: taskId must be a string")
	}
	if ss.has(FaultRelatedTaskMetaWins) {
		var meta map[string]struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(params[mcp.MetaKey], &meta) == nil && meta[mcp.MetaRelatedTask].TaskID != "" {
			id = meta[mcp.MetaRelatedTask].TaskID
		}
	}
	ts := ss.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.expireLocked(time.Now())
	t := ts.byID[id]
	if t == nil && ss.has(FaultUnknownTaskInternalError) {
		return nil, &rpcError{code: codeInternalError, message: "Internal error: no such task"}
	}
	if t == nil {
		return nil, invalidParams("Failed to retrieve task: Task not found") // TSK-68, TSK-74
	}
	return t, nil
}

// taskMethod handles the task methods and reports whether method was one.
// State changes happen before the next frame is read.
func (ss *session) taskMethod(id jsonrpc.ID, method string, params map[string]json.RawMessage) bool {
	if ss.srv.opts.NoTasks {
		return false
	}
	switch method {
	case mcp.MethodTasksGet:
		t, rerr := ss.lookupTask(params)
		var view taskWire
		if rerr == nil {
			view = ss.getView(t)
		}
		ss.spawnReq(id, func() { ss.answer(id, view, rerr) })
	case mcp.MethodTasksList:
		res, rerr := ss.listTasks(params)
		ss.spawnReq(id, func() { ss.answer(id, res, rerr) })
	case mcp.MethodTasksCancel:
		view, rerr := ss.cancelTask(params)
		ss.spawnReq(id, func() { ss.answer(id, view, rerr) })
	case mcp.MethodTasksResult:
		t, rerr := ss.lookupTask(params)
		if rerr == nil && ss.has(FaultResultAnswersEarly) && !mcp.TaskTerminal(ss.taskView(t).Status) {
			// At once: written by the reader, so that it comes before the
			// answer to any later request (which a goroutine's write
			// would not, under load), and a client sees it was sent
			// while the task was working.
			ss.replyError(id, codeInvalidParams, "Invalid params: the task has not finished", nil)
			return true
		}
		if rerr != nil {
			ss.spawnReq(id, func() { ss.answer(id, nil, rerr) })
			return true
		}
		ss.spawnReq(id, func() { ss.taskResult(id, t) })
	default:
		return false
	}
	return true
}

// cancelTask applies tasks/cancel: a working task becomes cancelled before
// the response is written (TSK-64); a terminal one is refused with -32602
// (TSK-63) unless FaultCancelTerminalSucceeds.
func (ss *session) cancelTask(params map[string]json.RawMessage) (any, *rpcError) {
	t, rerr := ss.lookupTask(params)
	if rerr != nil {
		return nil, rerr
	}
	ts := ss.tasks
	ts.mu.Lock()
	t.cancelRequests++
	if mcp.TaskTerminal(t.status) && !ss.has(FaultCancelTerminalSucceeds) {
		status := t.status
		ts.mu.Unlock()
		return nil, invalidParams("Cannot cancel task: already in terminal status %s", strconv.Quote(status))
	}
	before := ss.taskViewLocked(t)
	t.setStatusLocked(mcp.TaskCancelled, "The task was cancelled by tasks/cancel.")
	t.closeStop()
	if !ss.has(FaultResultHangsAfterCancel) {
		t.closeDone()
	}
	view := ss.taskViewLocked(t)
	if ss.has(FaultCancelAnswersBeforeTransition) {
		ts.mu.Unlock()
		ss.notifyStatus(view)
		return before, nil
	}
	ts.mu.Unlock()
	ss.logf("task %s cancelled by tasks/cancel", t.id)
	ss.notifyStatus(view)
	return view, nil
}

// cancelTaskByRequest is FaultNotificationCancelsTask: a
// notifications/cancelled naming the request that created a task cancels
// the task, which CAN-4 says it must not.
func (ss *session) cancelTaskByRequest(key string) bool {
	ts := ss.tasks
	ts.mu.Lock()
	t := ts.byReq[key]
	if t == nil || t.deleted || mcp.TaskTerminal(t.status) {
		ts.mu.Unlock()
		return false
	}
	t.setStatusLocked(mcp.TaskCancelled, "The task was cancelled by notifications/cancelled.")
	t.closeStop()
	t.closeDone()
	view := ss.taskViewLocked(t)
	ts.mu.Unlock()
	ss.logf("task %s cancelled by notifications/cancelled (fault %s)", t.id, FaultNotificationCancelsTask)
	ss.notifyStatus(view)
	return true
}

// taskResult answers tasks/result once the task is terminal (TSK-47): the
// underlying result with related-task metadata (TSK-48, TSK-55), or the
// same JSON-RPC error (TSK-77). For a cancelled task, whose underlying
// request has no result (ambiguity A-4), it answers a CallToolResult with
// isError true.
func (ss *session) taskResult(id jsonrpc.ID, t *task) {
	select {
	case <-t.done:
	case <-ss.ctx.Done():
		return
	}
	ts := ss.tasks
	ts.mu.Lock()
	deleted, result, rpcErr, status := t.deleted, t.result, t.rpcErr, t.status
	ts.mu.Unlock()
	switch {
	case deleted:
		ss.replyError(id, codeInvalidParams, "Failed to retrieve task: Task has expired", nil)
		return
	case rpcErr != nil && status != mcp.TaskCancelled && ss.has(FaultFailedResultNotError):
		result, _ = json.Marshal(textResult("The worker broke: " + rpcErr.Message))
	case rpcErr != nil && status != mcp.TaskCancelled:
		ss.replyError(id, rpcErr.Code, rpcErr.Message, nil)
		return
	case result == nil || status == mcp.TaskCancelled:
		r := textResult("The task was cancelled before it completed.")
		r.IsError = true
		result, _ = json.Marshal(r)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(result, &obj); err != nil {
		ss.replyError(id, codeInternalError, "Internal error: stored result is not an object", nil)
		return
	}
	if !ss.has(FaultMissingRelatedTaskMeta) {
		meta, _ := json.Marshal(map[string]any{mcp.MetaRelatedTask: map[string]string{"taskId": t.id}})
		obj[mcp.MetaKey] = meta
	}
	ss.reply(id, obj)
}

// listTasks answers tasks/list: this session's tasks in creation order,
// TaskPageSize per page, with an opaque cursor (TSK-59..62, TSK-69).
// FaultListLeaksOtherSessions appends the other sessions' tasks (TSK-84).
func (ss *session) listTasks(params map[string]json.RawMessage) (any, *rpcError) {
	ts := ss.tasks
	var after uint64
	if raw, ok := params["cursor"]; ok && string(raw) != "null" {
		var cursor string
		if json.Unmarshal(raw, &cursor) != nil {
			return nil, invalidParams("Invalid params: cursor must be a string")
		}
		salt, n, ok := strings.Cut(cursor, ".")
		v, err := strconv.ParseUint(n, 10, 64)
		switch {
		case (!ok || salt != ts.salt || err != nil) && ss.has(FaultBogusCursorAccepted):
			// the first page, as if there had been no cursor
		case !ok || salt != ts.salt || err != nil:
			return nil, invalidParams("Invalid params: unknown cursor") // TSK-69
		default:
			after = v
		}
	}
	ts.mu.Lock()
	ts.expireLocked(time.Now())
	var page []taskWire
	next := ""
	var last uint64
	for _, t := range ts.tasks {
		if t.deleted || t.seq <= after {
			continue
		}
		if len(page) == TaskPageSize {
			next = ts.salt + "." + strconv.FormatUint(last, 10)
			break
		}
		page = append(page, ss.taskViewLocked(t))
		last = t.seq
	}
	ts.mu.Unlock()
	if ss.has(FaultListLeaksOtherSessions) && after == 0 {
		for _, other := range ss.srv.tasks.others(ts) {
			other.mu.Lock()
			for _, t := range other.tasks {
				if !t.deleted {
					page = append(page, t.owner.taskViewLocked(t))
				}
			}
			other.mu.Unlock()
		}
	}
	if page == nil {
		page = []taskWire{}
	}
	res := map[string]any{"tasks": page}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

// taskCounters is the tasks part of mcpflight/counters. Caller holds
// session.mu (lock order session.mu, then taskStore.mu).
func (ss *session) taskCounters() map[string]mcp.ControlTask {
	ts := ss.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.tasks) == 0 {
		return nil
	}
	out := make(map[string]mcp.ControlTask, len(ts.tasks))
	for _, t := range ts.tasks {
		out[t.key] = mcp.ControlTask{
			TaskID:         t.id,
			RequestID:      t.reqID,
			Status:         t.status,
			Ticks:          t.counter,
			WorkerRunning:  t.running,
			ProgressSent:   t.progressSent,
			CancelRequests: t.cancelRequests,
			Deleted:        t.deleted,
		}
	}
	return out
}

// taskTickMs reads the optional tickMs argument of a task-augmented call.
func taskTickMs(args json.RawMessage) int {
	var a struct {
		TickMs int `json:"tickMs"`
	}
	_ = json.Unmarshal(args, &a)
	return a.TickMs
}
