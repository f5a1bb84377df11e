package hostcancel

import (
	"encoding/json"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// wire2025 is MCP 2025-11-25 (basic/utilities/tasks).
type wire2025 struct{}

func (wire2025) revision() Revision { return Rev20251125 }

// support reads tasks.requests.tools.call and tasks.cancel (TSK-2, TSK-6).
func (wire2025) support(s *peer.Session) (bool, bool) {
	init := s.Server()
	if init == nil {
		return false, false
	}
	c := init.Tasks()
	return c.ToolsCall, c.Cancel
}

// callParams adds "task": {"ttl"} (TSK-10); the requestor asks for a task.
func (wire2025) callParams(tool string, args, meta map[string]any, ttl int64) map[string]any {
	p := map[string]any{"name": tool}
	if args != nil {
		p["arguments"] = args
	}
	return mergeMeta(peer.TaskParams(p, ttl), meta)
}

func (wire2025) taskParams(taskID string) map[string]any { return map[string]any{"taskId": taskID} }

// created reads {"task": Task}; anything else is not a CreateTaskResult,
// which a task-augmented request must get (TSK-44).
func (wire2025) created(result json.RawMessage) (Task, bool, error) {
	t, err := peer.ParseCreateTaskResult(result)
	if err != nil {
		return Task{}, false, err
	}
	return Task{Task: t}, true, nil
}

func (wire2025) task(result json.RawMessage) (Task, error) {
	t, err := peer.ParseTask(result)
	return Task{Task: t}, err
}

// cancelled reads the Task a tasks/cancel answers with; it should already
// be cancelled (TSK-64).
func (w wire2025) cancelled(result json.RawMessage) (*Task, error) {
	t, err := w.task(result)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func (wire2025) fetchesResult() bool    { return true }
func (wire2025) progressForTasks() bool { return true }

// notification decodes notifications/tasks/status: the full Task (TSK-21).
func (wire2025) notification(m *jsonrpc.Message) (Task, bool) {
	if m.Method != mcp.NotificationTaskStatus {
		return Task{}, false
	}
	t, err := peer.ParseTask(m.Params)
	if err != nil || t.TaskID == "" {
		return Task{}, false
	}
	return Task{Task: t}, true
}

// notificationsAreState is false: requestors MUST NOT rely on the
// notification (TSK-22), so it only prompts a tasks/get.
func (wire2025) notificationsAreState() bool { return false }

// listenParams: status notifications need no subscription in 2025-11-25.
func (wire2025) listenParams(string) (map[string]any, bool) { return nil, false }

// server: the identity comes from initialize, not from results.
func (wire2025) server(json.RawMessage) (peer.Implementation, bool) {
	return peer.Implementation{}, false
}
