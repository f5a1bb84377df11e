package hostcancel

import (
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
)

// wireExtension is the io.modelcontextprotocol/tasks extension of MCP
// 2026-07-28 (ext-tasks specification_draft_tasks.md). The tests drive it
// against the reference server (refext_test.go) and, for what a
// conforming server does not do by itself, a scripted one (ext_test.go).
type wireExtension struct{}

func (wireExtension) revision() Revision { return RevTasksExtension }

// support: task creation is server-directed (TSX-1) and tasks/cancel is
// part of the extension, so a client that declares it can always ask;
// a server that does not make a task answers with the tool's result
// (TSX-3).
func (wireExtension) support(*peer.Session) (bool, bool) { return true, true }

// requestMeta is the _meta every 2026-07-28 request carries (RPC-51),
// declaring the extension on the request itself (TSX-2, TSX-56).
func requestMeta() map[string]any {
	return map[string]any{
		MetaProtocolVersion:    string(RevTasksExtension),
		MetaClientCapabilities: map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}},
	}
}

// callParams carries no "task" member: the extension removed it (TSX-66);
// the client only declares the extension and the server decides (TSX-1).
// ttl has no request-side field in the extension and is ignored.
func (wireExtension) callParams(tool string, args, meta map[string]any, _ int64) map[string]any {
	p := map[string]any{"name": tool}
	if args != nil {
		p["arguments"] = args
	}
	p = mergeMeta(p, requestMeta())
	return mergeMeta(p, meta)
}

func (wireExtension) taskParams(taskID string) map[string]any {
	return mergeMeta(map[string]any{"taskId": taskID}, requestMeta())
}

// extTask is the extension's flat Task (CreateTaskResult, DetailedTask).
type extTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *float64        `json:"ttlMs"`
	PollIntervalMs *float64        `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeExtTask reads a flat task object: the task fields sit at the top
// level, not under "task" (TSX-23).
func decodeExtTask(raw json.RawMessage) (Task, string, error) {
	var e extTask
	if err := json.Unmarshal(raw, &e); err != nil {
		return Task{}, "", fmt.Errorf("hostcancel: decoding an extension task: %w", err)
	}
	if e.TaskID == "" || e.Status == "" {
		return Task{}, e.ResultType, fmt.Errorf("hostcancel: an extension task needs taskId and status")
	}
	t := Task{Task: peer.Task{TaskID: e.TaskID, Status: e.Status, StatusMessage: e.StatusMessage,
		CreatedAt: e.CreatedAt, LastUpdatedAt: e.LastUpdatedAt, TTL: e.TTLMs, PollInterval: e.PollIntervalMs, Raw: raw}}
	if len(e.Result) > 0 && string(e.Result) != "null" {
		t.Result = e.Result
	}
	t.Error = e.Error
	return t, e.ResultType, nil
}

// created: resultType "task" marks a CreateTaskResult (TSX-8); any other
// result is the tool's own (TSX-3). The seed status need not be working
// (TSX-13).
func (wireExtension) created(result json.RawMessage) (Task, bool, error) {
	var rt struct {
		ResultType string `json:"resultType"`
	}
	if err := json.Unmarshal(result, &rt); err != nil {
		return Task{}, false, fmt.Errorf("hostcancel: decoding the tools/call result: %w", err)
	}
	if rt.ResultType != "task" {
		return Task{}, false, nil
	}
	t, _, err := decodeExtTask(result)
	return t, err == nil, err
}

// task reads a GetTaskResult: Result & DetailedTask (TSX-23..30).
func (wireExtension) task(result json.RawMessage) (Task, error) {
	t, _, err := decodeExtTask(result)
	return t, err
}

// cancelled: the ack is an empty result (TSX-44); it says nothing of the
// task's state, which may stay working and may end other than cancelled.
func (wireExtension) cancelled(result json.RawMessage) (*Task, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(result, &obj); err != nil {
		return nil, fmt.Errorf("hostcancel: decoding the tasks/cancel ack: %w", err)
	}
	return nil, nil
}

// fetchesResult is false: tasks/result is removed (TSX-65); tasks/get
// inlines the result or the error (TSX-27, TSX-29).
func (wireExtension) fetchesResult() bool { return false }

// progressForTasks is false: progress is not supported on tasks (PRG-46).
func (wireExtension) progressForTasks() bool { return false }

// notification decodes notifications/tasks: a complete DetailedTask
// (TSX-50).
func (wireExtension) notification(m *jsonrpc.Message) (Task, bool) {
	if m.Method != NotificationTasks {
		return Task{}, false
	}
	t, _, err := decodeExtTask(m.Params)
	return t, err == nil
}

// notificationsAreState: each notification is identical to what tasks/get
// would have returned at that moment (TSX-50), and clients need not poll
// as well (TSX-51).
func (wireExtension) notificationsAreState() bool { return true }

// listenParams subscribes to notifications/tasks for one task (TSX-48).
func (wireExtension) listenParams(taskID string) (map[string]any, bool) {
	return mergeMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{taskID}}}, requestMeta()), true
}

// server reads _meta["io.modelcontextprotocol/serverInfo"], which servers
// SHOULD put on every result.
func (wireExtension) server(result json.RawMessage) (peer.Implementation, bool) {
	var r struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(result, &r) != nil {
		return peer.Implementation{}, false
	}
	raw, ok := r.Meta[MetaServerInfo]
	if !ok {
		return peer.Implementation{}, false
	}
	var impl peer.Implementation
	if json.Unmarshal(raw, &impl) != nil || impl.Name == "" {
		return peer.Implementation{}, false
	}
	return impl, true
}
