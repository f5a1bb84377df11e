package refserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// safety bounds every wait; nothing synchronises on it.
const safety = 5 * time.Second

type taskEnv struct {
	t   *testing.T
	ctx context.Context
	s   *peer.Session
	ctl *control.Client
}

func newTaskEnv(t *testing.T, faults ...refserver.Fault) *taskEnv {
	t.Helper()
	fs := refserver.FaultSet{}
	for _, f := range faults {
		fs[f] = true
	}
	return newTaskEnvOn(t, refserver.New(refserver.Options{Faults: fs}))
}

func newTaskEnvOn(t *testing.T, srv *refserver.Server) *taskEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	t.Cleanup(cancel)
	log := chrono.New()
	conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	t.Cleanup(func() {
		cctx, c := context.WithTimeout(context.Background(), safety)
		defer c()
		s.Close(cctx)
	})
	init, err := s.Initialize(ctx, peer.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tc := init.Tasks(); !tc.ToolsCall || !tc.List || !tc.Cancel {
		t.Fatalf("tasks capability %+v", tc)
	}
	return &taskEnv{t: t, ctx: ctx, s: s, ctl: control.Detect(s)}
}

// create starts task_worker as a task and returns its call and task.
func (e *taskEnv) create(key string, args map[string]any, opts ...peer.CallOption) (*peer.Call, peer.Task) {
	e.t.Helper()
	a := map[string]any{"key": key}
	for k, v := range args {
		a[k] = v
	}
	c, err := e.s.Start(e.ctx, "tools/call", peer.TaskParams(map[string]any{"name": refserver.ToolTaskWorker, "arguments": a}, 60000), opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := c.Await(e.ctx)
	if err != nil || resp.Error != nil {
		e.t.Fatalf("create %s: %v %v", key, err, resp)
	}
	task, err := peer.ParseCreateTaskResult(resp.Result)
	if err != nil {
		e.t.Fatalf("create %s: %v in %s", key, err, resp.Result)
	}
	return c, task
}

func (e *taskEnv) release(names ...string) {
	e.t.Helper()
	for _, n := range names {
		if err := e.ctl.Release(e.ctx, n); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *taskEnv) await(name string) control.Reached {
	e.t.Helper()
	r, err := e.ctl.Await(e.ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *taskEnv) get(id string) peer.Task {
	e.t.Helper()
	task, err := e.s.GetTask(e.ctx, id)
	if err != nil {
		e.t.Fatalf("tasks/get %s: %v", id, err)
	}
	return task
}

func (e *taskEnv) worker(key string) control.TaskWorker {
	e.t.Helper()
	w, err := e.ctl.Worker(e.ctx, key)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != code {
		t.Errorf("got %v, want JSON-RPC error %d", err, code)
	}
}

func TestTaskLifecycleWithProgress(t *testing.T) {
	e := newTaskEnv(t)
	call, task := e.create("w", map[string]any{"ticks": 2}, peer.WithProgress(), peer.KeepProgressToken())
	if task.Status != mcp.TaskWorking || task.TaskID == "" || task.TTL == nil || *task.TTL != 60000 || task.PollInterval == nil {
		t.Fatalf("CreateTaskResult task %s", task.Raw)
	}
	if got := e.get(task.TaskID); got.Status != mcp.TaskWorking || got.CreatedAt != task.CreatedAt {
		t.Errorf("tasks/get %s", got.Raw)
	}
	res, err := e.s.StartTaskResult(e.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	e.release("w/start", "w/tick/1")
	e.await("w/tick/2")
	if w := e.worker("w"); w.Ticks != 2 || !w.WorkerRunning || w.Status != mcp.TaskWorking {
		t.Errorf("worker %+v", w)
	}
	e.release("w/tick/2")
	if r := e.await("w/end"); r.Outcome != mcp.OutcomeCompleted {
		t.Errorf("end outcome %q", r.Outcome)
	}
	resp, err := res.Await(e.ctx)
	if err != nil || resp.Error != nil {
		t.Fatalf("tasks/result: %v %v", err, resp)
	}
	if id, ok := peer.RelatedTaskID(resp.Result); !ok || id != task.TaskID {
		t.Errorf("tasks/result has related task %q %v: %s", id, ok, resp.Result)
	}
	if got := e.get(task.TaskID); got.Status != mcp.TaskCompleted {
		t.Errorf("tasks/get after the end: %s", got.Raw)
	}
	// PRG-9: the progress came after CreateTaskResult under the kept token.
	if p := call.ProgressSeen(); len(p) != 2 || len(call.Violations()) != 0 {
		t.Errorf("progress %+v violations %+v", p, call.Violations())
	}
	statuses := 0
	for _, n := range e.s.Notifications() {
		if n.Method == mcp.NotificationTaskStatus {
			statuses++
			if _, ok := peer.RelatedTaskID(n.Params); ok {
				t.Errorf("status notification carries related-task meta (TSK-58): %s", n.Raw)
			}
		}
	}
	if statuses == 0 {
		t.Error("no notifications/tasks/status")
	}
}

func TestTaskSupportNegotiation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tool     string
		args     map[string]any
		withTask bool
		code     int  // 0: success
		isTask   bool // a CreateTaskResult
	}{
		{"required-without-task", refserver.ToolTaskWorker, map[string]any{"key": "r"}, false, jsonrpc.CodeMethodNotFound, false},
		{"required-with-task", refserver.ToolTaskWorker, map[string]any{"key": "r", "gated": false}, true, 0, true},
		{"optional-with-task", refserver.ToolSlow, map[string]any{"key": "o", "gated": false}, true, 0, true},
		{"optional-without-task", refserver.ToolSlow, map[string]any{"key": "o", "gated": false}, false, 0, false},
		{"forbidden-effect", refserver.ToolEffect, map[string]any{"key": "f"}, true, jsonrpc.CodeMethodNotFound, false},
		{"forbidden-log", refserver.ToolLog, map[string]any{"messages": []any{}}, true, jsonrpc.CodeMethodNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTaskEnv(t)
			params := map[string]any{"name": tc.tool, "arguments": tc.args}
			if tc.withTask {
				params = peer.TaskParams(params, -1)
			}
			var raw json.RawMessage
			err := e.s.Request(e.ctx, "tools/call", params, &raw)
			if tc.code != 0 {
				wantCode(t, err, tc.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			task, err := peer.ParseCreateTaskResult(raw)
			if tc.isTask != (err == nil) {
				t.Fatalf("CreateTaskResult %v, want %v: %s", err == nil, tc.isTask, raw)
			}
			if tc.isTask && (task.TTL == nil || *task.TTL != refserver.DefaultTaskTTL) {
				t.Errorf("default ttl: %s", task.Raw)
			}
		})
	}
}

func TestTaskCancel(t *testing.T) {
	e := newTaskEnv(t)
	_, task := e.create("c", map[string]any{"ticks": 5})
	res, err := e.s.StartTaskResult(e.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	e.release("c/start")
	e.await("c/tick/1")
	got, err := e.s.CancelTask(e.ctx, task.TaskID)
	if err != nil || got.Status != mcp.TaskCancelled {
		t.Fatalf("tasks/cancel: %v %s", err, got.Raw)
	}
	if r := e.await("c/end"); r.Outcome != mcp.OutcomeCancelled {
		t.Errorf("end outcome %q", r.Outcome)
	}
	// The blocked tasks/result is answered (A-4: here an isError result).
	resp, err := res.Await(e.ctx)
	if err != nil {
		t.Fatalf("blocked tasks/result: %v", err)
	}
	if resp.Error != nil {
		t.Errorf("tasks/result: %v", resp.Error)
	}
	e.release("c/tick/1", "c/tick/2", "c/tick/3")
	if w := e.worker("c"); w.Ticks != 1 || w.WorkerRunning || w.Status != mcp.TaskCancelled || w.CancelRequests != 1 {
		t.Errorf("worker after cancel %+v", w)
	}
	_, err = e.s.CancelTask(e.ctx, task.TaskID)
	wantCode(t, err, jsonrpc.CodeInvalidParams) // TSK-63
	if got := e.get(task.TaskID); got.Status != mcp.TaskCancelled {
		t.Errorf("after a second cancel %s", got.Raw)
	}
	_, done := e.create("d", map[string]any{"gated": false, "ticks": 1})
	e.await("d/end")
	_, err = e.s.CancelTask(e.ctx, done.TaskID)
	wantCode(t, err, jsonrpc.CodeInvalidParams)
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksResult} {
		wantCode(t, e.s.Request(e.ctx, m, map[string]any{"taskId": "task-nope"}, nil), jsonrpc.CodeInvalidParams)
	}
}

func TestTaskEnds(t *testing.T) {
	for _, tc := range []struct {
		end, status string
		rpcErr      bool
	}{
		{"complete", mcp.TaskCompleted, false},
		{"fail", mcp.TaskFailed, false},
		{"error", mcp.TaskFailed, true},
	} {
		t.Run(tc.end, func(t *testing.T) {
			e := newTaskEnv(t)
			_, task := e.create("x", map[string]any{"gated": false, "ticks": 1, "end": tc.end})
			e.await("x/end")
			got := e.get(task.TaskID)
			if got.Status != tc.status || got.StatusMessage == "" {
				t.Errorf("status %s", got.Raw)
			}
			var raw json.RawMessage
			err := e.s.Request(e.ctx, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID}, &raw)
			if tc.rpcErr {
				wantCode(t, err, jsonrpc.CodeInternalError) // TSK-77
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				IsError bool `json:"isError"`
			}
			_ = json.Unmarshal(raw, &r)
			if r.IsError != (tc.end == "fail") {
				t.Errorf("isError %v: %s", r.IsError, raw)
			}
		})
	}
}

func TestTaskListPagination(t *testing.T) {
	e := newTaskEnv(t)
	want := map[string]bool{}
	for i := range 5 {
		_, task := e.create(fmt.Sprintf("l%d", i), nil)
		want[task.TaskID] = true
	}
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		page, err := e.s.ListTasks(e.ctx, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, task := range page.Tasks {
			seen[task.TaskID] = true
		}
		if !page.HasNext {
			break
		}
		cursor = page.NextCursor
	}
	if pages != 3 || len(seen) != 5 {
		t.Errorf("%d pages, %d tasks", pages, len(seen))
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("task %s not listed", id)
		}
	}
	_, err := e.s.ListTasks(e.ctx, "bogus")
	wantCode(t, err, jsonrpc.CodeInvalidParams)
}

func TestTaskTTLExpiry(t *testing.T) {
	e := newTaskEnv(t)
	c, err := e.s.Start(e.ctx, "tools/call", peer.TaskParams(map[string]any{"name": refserver.ToolTaskWorker, "arguments": map[string]any{"key": "e"}}, 1))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Await(e.ctx)
	if err != nil || resp.Error != nil {
		t.Fatal(err, resp)
	}
	task, _ := peer.ParseCreateTaskResult(resp.Result)
	// The ttl is one millisecond; poll until the task is gone (the safety
	// deadline turns a task that never expires into a failure).
	for {
		_, err := e.s.GetTask(e.ctx, task.TaskID)
		if err != nil {
			wantCode(t, err, jsonrpc.CodeInvalidParams)
			break
		}
	}
	if r := e.await("e/end"); r.Outcome != mcp.OutcomeExpired {
		t.Errorf("end outcome %q", r.Outcome)
	}
}

// TestTaskFaults shows each task fault doing what it says.
func TestTaskFaults(t *testing.T) {
	cancelWorking := func(e *taskEnv, key string) peer.Task {
		_, task := e.create(key, map[string]any{"ticks": 3})
		e.release(key + "/start")
		e.await(key + "/tick/1")
		if _, err := e.s.CancelTask(e.ctx, task.TaskID); err != nil {
			e.t.Fatal(err)
		}
		return task
	}
	for _, tc := range []struct {
		fault refserver.Fault
		check func(t *testing.T, e *taskEnv)
	}{
		{refserver.FaultCancelDoesNotStopWorker, func(t *testing.T, e *taskEnv) {
			cancelWorking(e, "k")
			e.release("k/tick/1")
			e.await("k/tick/2")
			if w := e.worker("k"); w.Ticks != 2 || w.Status != mcp.TaskCancelled {
				t.Errorf("worker %+v", w)
			}
		}},
		{refserver.FaultStatusChangesAfterCancelled, func(t *testing.T, e *taskEnv) {
			task := cancelWorking(e, "k")
			e.await("k/end")
			if got := e.get(task.TaskID); got.Status != mcp.TaskCompleted {
				t.Errorf("status %s", got.Raw)
			}
		}},
		{refserver.FaultCancelTerminalSucceeds, func(t *testing.T, e *taskEnv) {
			_, task := e.create("k", map[string]any{"gated": false, "ticks": 1})
			e.await("k/end")
			if got, err := e.s.CancelTask(e.ctx, task.TaskID); err != nil || got.Status != mcp.TaskCancelled {
				t.Errorf("cancel of a completed task: %v %s", err, got.Raw)
			}
		}},
		{refserver.FaultResultHangsAfterCancel, func(t *testing.T, e *taskEnv) {
			task := cancelWorking(e, "k")
			e.await("k/end")
			c, err := e.s.StartTaskResult(e.ctx, task.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			// A control round trip is a barrier: had the server answered
			// tasks/result, the answer would be on the wire before it.
			e.worker("k")
			select {
			case <-c.Done():
				t.Error("tasks/result was answered")
			default:
			}
		}},
		{refserver.FaultNotificationCancelsTask, func(t *testing.T, e *taskEnv) {
			call, task := e.create("k", nil)
			if err := e.s.Notify(e.ctx, "notifications/cancelled", map[string]any{"requestId": call.ID}); err != nil {
				t.Fatal(err)
			}
			if got := e.get(task.TaskID); got.Status != mcp.TaskCancelled {
				t.Errorf("status %s", got.Raw)
			}
		}},
		{refserver.FaultMissingRelatedTaskMeta, func(t *testing.T, e *taskEnv) {
			_, task := e.create("k", map[string]any{"gated": false, "ticks": 1})
			var raw json.RawMessage
			if err := e.s.Request(e.ctx, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID}, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := peer.RelatedTaskID(raw); ok {
				t.Errorf("related-task present: %s", raw)
			}
		}},
		{refserver.FaultPollIntervalIgnored, func(t *testing.T, e *taskEnv) {
			_, task := e.create("k", nil)
			if task.PollInterval == nil || *task.PollInterval != 0 {
				t.Errorf("pollInterval %s", task.Raw)
			}
		}},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			tc.check(t, newTaskEnv(t, tc.fault))
		})
	}
}

func TestTaskListIsolation(t *testing.T) {
	for _, leak := range []bool{false, true} {
		t.Run(fmt.Sprint("leak=", leak), func(t *testing.T) {
			fs := refserver.FaultSet{refserver.FaultListLeaksOtherSessions: leak}
			srv := refserver.New(refserver.Options{Faults: fs})
			a, b := newTaskEnvOn(t, srv), newTaskEnvOn(t, srv)
			a.create("a", nil)
			page, err := b.s.ListTasks(b.ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(page.Tasks) > 0; got != leak {
				t.Errorf("session b lists %d tasks", len(page.Tasks))
			}
		})
	}
}

// TestNoTasks: a server without the tasks capability ignores the task
// field (TSK-24) and knows no task methods.
func TestNoTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	log := chrono.New()
	conn, _ := refserver.InProcess(ctx, refserver.Options{NoTasks: true}, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	defer s.Close(ctx)
	init, err := s.Initialize(ctx, peer.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if init.Tasks().Declared {
		t.Fatalf("tasks declared: %s", init.Raw)
	}
	var raw json.RawMessage
	err = s.Request(ctx, "tools/call", peer.TaskParams(map[string]any{"name": refserver.ToolSlow, "arguments": map[string]any{"key": "n", "gated": false}}, 1000), &raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := peer.ParseCreateTaskResult(raw); err == nil {
		t.Errorf("a CreateTaskResult without the capability: %s", raw)
	}
	wantCode(t, s.Request(ctx, mcp.MethodTasksList, map[string]any{}, nil), jsonrpc.CodeMethodNotFound)
}

// BenchmarkTaskLifecycle measures one task end to end over the in-process
// transport: task-augmented tools/call, one ungated tick, tasks/result.
func BenchmarkTaskLifecycle(b *testing.B) {
	ctx := context.Background()
	log := chrono.New(chrono.WithMaxRaw(64))
	conn, _ := refserver.InProcess(ctx, refserver.Options{}, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	defer s.Close(ctx)
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		var raw json.RawMessage
		params := peer.TaskParams(map[string]any{"name": refserver.ToolTaskWorker,
			"arguments": map[string]any{"key": fmt.Sprintf("b%d", i), "ticks": 1, "gated": false}}, 60000)
		if err := s.Request(ctx, "tools/call", params, &raw); err != nil {
			b.Fatal(err)
		}
		task, err := peer.ParseCreateTaskResult(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Request(ctx, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
