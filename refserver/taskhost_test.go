package refserver_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
)

// TestTaskHoldCreate: with holdCreate the CreateTaskResult waits at
// KEY/created, and the task is already durable (TSK-44): tasks/list finds
// it, and the worker has not started.
func TestTaskHoldCreate(t *testing.T) {
	e := newTaskEnv(t)
	c, err := e.s.Start(e.ctx, "tools/call", peer.TaskParams(map[string]any{"name": refserver.ToolTaskWorker,
		"arguments": map[string]any{"key": "h", "holdCreate": true}}, 60000))
	if err != nil {
		t.Fatal(err)
	}
	e.await("h/created")
	select {
	case <-c.Done():
		t.Fatal("the CreateTaskResult came before its gate opened")
	default:
	}
	page, err := e.s.ListTasks(e.ctx, "")
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Status != mcp.TaskWorking {
		t.Fatalf("tasks/list while held: %+v %v", page, err)
	}
	if w := e.worker("h"); w.Ticks != 0 || w.TaskID != page.Tasks[0].TaskID {
		t.Errorf("worker %+v", w)
	}
	e.release("h/created")
	resp, err := c.Await(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	task, err := peer.ParseCreateTaskResult(resp.Result)
	if err != nil || task.TaskID != page.Tasks[0].TaskID {
		t.Errorf("CreateTaskResult %s: %v", resp.Result, err)
	}
}

// TestTaskEffect: effectAt applies one effect at that tick (counted in
// effectsApplied) and the completed result carries its receipt; a task
// cancelled before the tick applies none; effectAt outside 1..ticks is
// refused.
func TestTaskEffect(t *testing.T) {
	e := newTaskEnv(t)
	_, done := e.create("e", map[string]any{"ticks": 2, "effectAt": 1})
	e.release("e/start", "e/tick/1", "e/tick/2")
	e.await("e/end")
	res, err := e.s.StartTaskResult(e.ctx, done.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := res.Await(e.ctx)
	if err != nil || resp.Error != nil {
		t.Fatalf("tasks/result: %v %v", err, resp)
	}
	var r struct {
		StructuredContent struct {
			Receipt string `json:"receipt"`
			Applied bool   `json:"applied"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.StructuredContent.Receipt != "effect-1" || !r.StructuredContent.Applied {
		t.Errorf("result %s", resp.Result)
	}
	_, cancelled := e.create("c", map[string]any{"ticks": 2, "effectAt": 2})
	e.release("c/start")
	e.await("c/tick/1")
	if _, err := e.s.CancelTask(e.ctx, cancelled.TaskID); err != nil {
		t.Fatal(err)
	}
	e.release("c/tick/1", "c/tick/2")
	e.await("c/end")
	cs, err := e.ctl.Counters(e.ctx)
	if err != nil || cs.EffectsApplied != 1 {
		t.Errorf("effectsApplied %d (%v), want 1: the cancelled task applied none", cs.EffectsApplied, err)
	}
	c, err := e.s.Start(e.ctx, "tools/call", peer.TaskParams(map[string]any{"name": refserver.ToolTaskWorker,
		"arguments": map[string]any{"key": "bad", "ticks": 2, "effectAt": 3}}, 60000))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = c.Await(e.ctx)
	if err != nil || resp.Error == nil || resp.Error.Code != -32602 {
		t.Errorf("effectAt past ticks: %v %+v", err, resp)
	}
}

// TestTaskHostSchema: tools/list declares holdCreate, effectAt and lateCancel in
// task_worker's inputSchema, which refuses other members.
func TestTaskHostSchema(t *testing.T) {
	e := newTaskEnv(t)
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := e.s.Request(e.ctx, "tools/list", map[string]any{}, &r); err != nil {
		t.Fatal(err)
	}
	for _, tool := range r.Tools {
		if tool.Name != refserver.ToolTaskWorker {
			continue
		}
		for _, p := range []string{"key", "ticks", "gated", "end", "holdCreate", "effectAt", "lateCancel"} {
			if tool.InputSchema.Properties[p] == nil {
				t.Errorf("task_worker's inputSchema has no %s", p)
			}
		}
		return
	}
	t.Fatal("tools/list has no task_worker")
}
