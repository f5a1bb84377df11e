package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/mcp"
)

// ErrNotTask reports a result that is not a CreateTaskResult.
var ErrNotTask = errors.New("peer: the result is not a CreateTaskResult")

// Task is the Task object, as tasks/get, tasks/cancel, tasks/list,
// notifications/tasks/status and CreateTaskResult carry it. Raw keeps the
// bytes read; its strings are untrusted.
type Task struct {
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage,omitempty"`
	CreatedAt     string          `json:"createdAt"`
	LastUpdatedAt string          `json:"lastUpdatedAt"`
	TTL           *float64        `json:"ttl"`
	PollInterval  *float64        `json:"pollInterval,omitempty"`
	Raw           json.RawMessage `json:"-"`
}

// Terminal reports whether the task is in a terminal status.
func (t Task) Terminal() bool { return mcp.TaskTerminal(t.Status) }

// ParseTask decodes a Task object and keeps its bytes.
func ParseTask(raw json.RawMessage) (Task, error) {
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, decodeError("a task", err)
	}
	t.Raw = raw
	return t, nil
}

// ParseCreateTaskResult decodes {"task": Task}. A result without a task
// object (an ordinary CallToolResult, say) is ErrNotTask.
func ParseCreateTaskResult(raw json.RawMessage) (Task, error) {
	var r struct {
		Task json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Task{}, fmt.Errorf("%w: %w", ErrNotTask, decodeError("the result", err))
	}
	if len(r.Task) == 0 || string(r.Task) == "null" {
		return Task{}, ErrNotTask
	}
	return ParseTask(r.Task)
}

// TaskCapabilities is what the server declared under capabilities.tasks.
type TaskCapabilities struct {
	// Declared is true when capabilities.tasks is present at all.
	Declared bool
	// List and Cancel are tasks.list and tasks.cancel (TSK-6).
	List, Cancel bool
	// ToolsCall is tasks.requests.tools.call (TSK-2, TSK-7).
	ToolsCall bool
}

// Tasks returns the server's task capabilities.
func (r *InitResult) Tasks() TaskCapabilities {
	var out TaskCapabilities
	raw, ok := r.Capabilities["tasks"]
	if !ok {
		return out
	}
	out.Declared = true
	var c struct {
		List     json.RawMessage `json:"list"`
		Cancel   json.RawMessage `json:"cancel"`
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return out
	}
	present := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	out.List, out.Cancel, out.ToolsCall = present(c.List), present(c.Cancel), present(c.Requests.Tools.Call)
	return out
}

// TaskParams returns params with "task": {"ttl": ttl} added; ttl < 0
// leaves the ttl out.
func TaskParams(params map[string]any, ttl int64) map[string]any {
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		out[k] = v
	}
	meta := map[string]any{}
	if ttl >= 0 {
		meta["ttl"] = ttl
	}
	out["task"] = meta
	return out
}

// taskRequest sends method {"taskId": id} and decodes a Task result.
func (s *Session) taskRequest(ctx context.Context, method, id string) (Task, error) {
	var raw json.RawMessage
	if err := s.Request(ctx, method, map[string]any{"taskId": id}, &raw); err != nil {
		return Task{}, err
	}
	return ParseTask(raw)
}

// GetTask sends tasks/get. A JSON-RPC error comes back as *jsonrpc.Error.
func (s *Session) GetTask(ctx context.Context, id string) (Task, error) {
	return s.taskRequest(ctx, mcp.MethodTasksGet, id)
}

// CancelTask sends tasks/cancel. A JSON-RPC error (-32602 for a terminal
// or unknown task) comes back as *jsonrpc.Error.
func (s *Session) CancelTask(ctx context.Context, id string) (Task, error) {
	return s.taskRequest(ctx, mcp.MethodTasksCancel, id)
}

// TaskPage is one tasks/list page.
type TaskPage struct {
	Tasks      []Task
	NextCursor string
	HasNext    bool
}

// ListTasks sends tasks/list with cursor ("" for the first page).
func (s *Session) ListTasks(ctx context.Context, cursor string) (TaskPage, error) {
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	var r struct {
		Tasks      []json.RawMessage `json:"tasks"`
		NextCursor *string           `json:"nextCursor"`
	}
	if err := s.Request(ctx, mcp.MethodTasksList, params, &r); err != nil {
		return TaskPage{}, err
	}
	var page TaskPage
	for _, raw := range r.Tasks {
		t, err := ParseTask(raw)
		if err != nil {
			return page, err
		}
		page.Tasks = append(page.Tasks, t)
	}
	if r.NextCursor != nil {
		page.NextCursor, page.HasNext = *r.NextCursor, true
	}
	return page, nil
}

// StartTaskResult sends tasks/result without waiting: it blocks on the
// server until the task is terminal (TSK-47).
func (s *Session) StartTaskResult(ctx context.Context, id string) (*Call, error) {
	return s.Start(ctx, mcp.MethodTasksResult, map[string]any{"taskId": id})
}

// RelatedTaskID returns _meta[mcp.MetaRelatedTask].taskId
// of a result or params object, and whether it was there.
func RelatedTaskID(raw json.RawMessage) (string, bool) {
	var r struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	rel, ok := r.Meta[mcp.MetaRelatedTask]
	if !ok {
		return "", false
	}
	var v struct {
		TaskID *string `json:"taskId"`
	}
	if json.Unmarshal(rel, &v) != nil || v.TaskID == nil {
		return "", false
	}
	return *v.TaskID, true
}
