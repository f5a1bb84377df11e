package refserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// extTaskResult is the part of a CreateTaskResult or GetTaskResult the
// tests read.
type extTaskResult struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	TTL           *int64                     `json:"ttlMs"`
	PollInterval  *int64                     `json:"pollIntervalMs"`
	Result        json.RawMessage            `json:"result"`
	Error         *jsonrpc.Error             `json:"error"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Task2025      json.RawMessage            `json:"task"`
	Meta          map[string]json.RawMessage `json:"_meta"`
}

// taskMeta is meta2026 declaring the tasks extension.
func taskMeta(kv ...any) map[string]any {
	return meta2026(append([]any{mcp.MetaClientCapabilities, tasksCaps()}, kv...)...)
}

// startWorker calls task_worker with args and returns the CreateTaskResult.
func (c *client2026) startWorker(args map[string]any) extTaskResult {
	c.t.Helper()
	var r extTaskResult
	c.result2026(mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": args}, taskMeta(), &r)
	if r.ResultType != mcp.ResultTypeTask || r.TaskID == "" || r.Status != mcp.TaskWorking || r.TTL == nil || r.PollInterval == nil || r.Task2025 != nil {
		c.t.Fatalf("CreateTaskResult %+v", r)
	}
	return r
}

func (c *client2026) getTask(id string) extTaskResult {
	c.t.Helper()
	var r extTaskResult
	c.result2026(mcp.MethodTasksGet, map[string]any{"taskId": id}, taskMeta(), &r)
	if r.ResultType != mcp.ResultTypeComplete || r.TaskID != id {
		c.t.Fatalf("GetTaskResult %+v", r)
	}
	return r
}

// TestTaskLifecycle2026: task_worker under the extension: the task is
// durable before its CreateTaskResult, so a tasks/get sent at once finds
// it, on this connection and on another one of the same server (TSX-16,
// RPC-60); its worker ticks at the gates; the terminal tasks/get inlines
// the result or error, and an isError result completes the task (TSX-27,
// TSX-29, TSX-59, TSX-60); tasks/cancel acknowledges a terminal task too
// (TSX-44).
func TestTaskLifecycle2026(t *testing.T) {
	tests := []struct {
		end, status, text string
		code              int
	}{
		{"complete", mcp.TaskCompleted, "done after 2 ticks", 0},
		{"fail", mcp.TaskCompleted, "failed after 2 ticks", 0},
		{"error", mcp.TaskFailed, "", jsonrpc.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.end, func(t *testing.T) {
			c := newClient2026(newHarness(t))
			created := c.startWorker(map[string]any{"key": "w", "ticks": 2, "end": tt.end})
			if got := c.getTask(created.TaskID); got.Status != mcp.TaskWorking {
				t.Fatalf("tasks/get right after creation: %+v", got)
			}
			other := newClient2026(c.second())
			if got := other.getTask(created.TaskID); got.Status != mcp.TaskWorking {
				t.Fatalf("tasks/get on another connection: %+v", got)
			}
			for _, cp := range []string{"w/start", "w/tick/1", "w/tick/2"} {
				other.release2026(cp, nil)
			}
			if end := c.await2026("w/end", nil); end.Outcome == mcp.OutcomeCancelled {
				t.Fatalf("w/end %+v", end)
			}
			got := c.getTask(created.TaskID)
			if got.Status != tt.status {
				t.Fatalf("status %q, want %q: %+v", got.Status, tt.status, got)
			}
			if tt.code != 0 {
				if got.Error == nil || got.Error.Code != tt.code || got.Result != nil {
					t.Errorf("failed task: error %+v result %s", got.Error, got.Result)
				}
			} else if !strings.Contains(string(got.Result), tt.text) || got.Error != nil {
				t.Errorf("completed task: result %s", got.Result)
			}
			if ack := c.call2026(mcp.MethodTasksCancel, map[string]any{"taskId": created.TaskID}, taskMeta()); ack.Kind != jsonrpc.KindResult {
				t.Errorf("tasks/cancel of a terminal task: %s (TSX-44)", ack.Raw)
			}
			if got := c.getTask(created.TaskID); got.Status != tt.status {
				t.Errorf("the cancel changed a terminal task: %+v", got)
			}
			task := c.counters2026(nil).Tasks["w"]
			if task.Ticks != 2 || task.WorkerRunning || task.CancelRequests != 1 {
				t.Errorf("counters %+v", task)
			}
			schemaCheck(t, c.seenFrames(), c.methods)
		})
	}
}

// TestTaskCancel2026: tasks/cancel of a working task is acknowledged with an
// empty result (TSX-44, TSX-47); the task is cancelled and its worker
// stops: later releases do not move its counter. Under
// cancel-does-not-stop-worker the counter shows the worker going on,
// which is how the host library's proof tells the two apart.
func TestTaskCancel2026(t *testing.T) {
	for _, fault := range []Fault{"", FaultCancelDoesNotStopWorker} {
		t.Run("fault="+string(fault), func(t *testing.T) {
			c := newClient2026(newHarness(t, fault))
			created := c.startWorker(map[string]any{"key": "w", "ticks": 3})
			c.release2026("w/start", nil)
			c.await2026("w/tick/1", nil)
			ack := resultObject(t, c.call2026(mcp.MethodTasksCancel, map[string]any{"taskId": created.TaskID}, taskMeta()))
			delete(ack, mcp.MetaKey)
			if diff := cmp.Diff(map[string]json.RawMessage{"resultType": json.RawMessage(`"complete"`)}, ack); diff != "" {
				t.Errorf("the acknowledgement is not empty (-want +got):\n%s", diff)
			}
			if got := c.getTask(created.TaskID); got.Status != mcp.TaskCancelled {
				t.Errorf("status after the cancel %+v", got)
			}
			c.release2026("w/tick/1", nil)
			c.release2026("w/tick/2", nil)
			c.release2026("w/tick/3", nil)
			if end := c.await2026("w/end", nil); end.Outcome != mcp.OutcomeCancelled {
				t.Errorf("w/end %+v", end)
			}
			ticks := c.counters2026(nil).Tasks["w"].Ticks
			if want := map[Fault]int{"": 1, FaultCancelDoesNotStopWorker: 3}[fault]; ticks != want {
				t.Errorf("the worker counted %d ticks, want %d", ticks, want)
			}
			wantError(t, c.call2026(mcp.MethodTasksCancel, map[string]any{"taskId": "task-unknown"}, taskMeta()), jsonrpc.CodeInvalidParams)
			wantError(t, c.call2026(mcp.MethodTasksGet, map[string]any{"taskId": "task-unknown"}, taskMeta()), jsonrpc.CodeInvalidParams)
			schemaCheck(t, c.seenFrames(), c.methods)
		})
	}
}

// TestTaskInput2026: inputAt moves the task to input_required with the input
// request in tasks/get (TSX-25, TSX-26); tasks/update is acknowledged at
// once, ignoring keys that are not outstanding (TSX-39, TSX-42, TSX-43);
// the worker takes the answer and the task goes on to completed.
func TestTaskInput2026(t *testing.T) {
	c := newClient2026(newHarness(t))
	created := c.startWorker(map[string]any{"key": "w", "ticks": 2, "gated": false, "inputAt": 1})
	c.await2026("w/input", nil)
	got := c.getTask(created.TaskID)
	if got.Status != mcp.TaskInputRequired || !strings.Contains(string(got.InputRequests[inputKey]), `"method":"elicitation/create"`) {
		t.Fatalf("input_required task %+v", got)
	}
	update := func(responses map[string]any) *jsonrpc.Message {
		return c.call2026(mcp.MethodTasksUpdate, map[string]any{"taskId": created.TaskID, "inputResponses": responses}, taskMeta())
	}
	if m := update(map[string]any{"never-asked": map[string]any{"action": "accept"}}); m.Kind != jsonrpc.KindResult {
		t.Fatalf("tasks/update with an unknown key: %s", m.Raw)
	}
	if got := c.getTask(created.TaskID); got.Status != mcp.TaskInputRequired {
		t.Fatalf("an unknown key answered the input: %+v", got)
	}
	if m := update(map[string]any{inputKey: map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}}); m.Kind != jsonrpc.KindResult {
		t.Fatalf("tasks/update: %s", m.Raw)
	}
	if end := c.await2026("w/end", nil); end.Outcome != mcp.OutcomeCompleted {
		t.Fatalf("w/end %+v", end)
	}
	if got := c.getTask(created.TaskID); got.Status != mcp.TaskCompleted || !strings.Contains(string(got.Result), `input confirm: \"accept\"`) {
		t.Errorf("completed task %+v %s", got, got.Result)
	}
	wantError(t, update(nil), jsonrpc.CodeInvalidParams)
	schemaCheck(t, c.seenFrames(), c.methods)
}

// TestTaskCreationPerRequest2026: the server decides per request (TSX-1,
// TSX-2): slow becomes a task for a request that declares the extension
// and answers its plain result for one that does not, whatever an earlier
// request declared (RPC-57); a params.task member is ignored (TSX-66).
func TestTaskCreationPerRequest2026(t *testing.T) {
	c := newClient2026(newHarness(t))
	slow := func(key string, meta map[string]any) map[string]json.RawMessage {
		params := map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": key, "steps": 1, "gated": false}, "task": map[string]any{"ttl": 1000}}
		return resultObject(t, c.call2026(mcp.MethodToolsCall, params, meta))
	}
	if r := slow("a", taskMeta()); str(r["resultType"]) != mcp.ResultTypeTask {
		t.Errorf("declared: %v", r)
	}
	if r := slow("b", nil); str(r["resultType"]) != mcp.ResultTypeComplete || r["content"] == nil {
		t.Errorf("not declared after a declaration: %v (TSX-2)", r)
	}
	// The legacy tasks capability alone is no declaration (TSX-67).
	if r := slow("c", meta2026(mcp.MetaClientCapabilities, map[string]any{"tasks": map[string]any{}})); str(r["resultType"]) != mcp.ResultTypeComplete {
		t.Errorf("legacy capability: %v (TSX-67)", r)
	}
	schemaCheck(t, c.seenFrames(), c.methods)
}

// TestTaskHeldCreation2026: a CreateTaskResult held at KEY/created
// (holdCreate) is already durable (TSX-16); cancelling the tools/call
// before it is written sends nothing for the request and cancels the
// task: its worker never starts.
func TestTaskHeldCreation2026(t *testing.T) {
	c := newClient2026(newHarness(t))
	id := c.id()
	c.send2026(id, mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": map[string]any{"key": "w", "holdCreate": true}}, taskMeta())
	c.await2026("w/created", nil)
	task := c.counters2026(nil).Tasks["w"]
	if got := c.getTask(task.TaskID); got.Status != mcp.TaskWorking {
		t.Fatalf("held task %+v", got)
	}
	before := len(c.seen)
	c.cancelReq(id)
	if end := c.await2026("w/end", nil); end.Outcome != mcp.OutcomeCancelled {
		t.Fatalf("w/end %+v", end)
	}
	if got := c.getTask(task.TaskID); got.Status != mcp.TaskCancelled {
		t.Errorf("status %+v", got)
	}
	for _, f := range c.seen[before:] {
		if f.msg != nil && f.msg.ID == id {
			t.Errorf("a frame for the cancelled tools/call: %s", f.raw)
		}
	}
	if task := c.counters2026(nil).Tasks["w"]; task.Ticks != 0 || task.WorkerRunning {
		t.Errorf("worker %+v", task)
	}
}
