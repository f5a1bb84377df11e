package refserver

import (
	"testing"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// TestTaskLateCancel2026: with lateCancel the extension's tasks/cancel is
// acknowledged while the task stays working (TSX-44: the server need not
// have stopped it yet); at the worker's next tick the cancel takes
// effect, cancelling the task ("cancel") or letting it finish as end
// says ("finish", a terminal status other than cancelled). The counter
// never moves after the acknowledgement. 2025-11-25 refuses the option:
// there the task is cancelled before tasks/cancel answers (TSK-64).
func TestTaskLateCancel2026(t *testing.T) {
	for _, tt := range []struct{ late, status, end string }{
		{lateCancelCancel, mcp.TaskCancelled, mcp.OutcomeCancelled},
		{lateCancelFinish, mcp.TaskCompleted, mcp.OutcomeCompleted},
	} {
		t.Run(tt.late, func(t *testing.T) {
			c := newClient2026(newHarness(t))
			created := c.startWorker(map[string]any{"key": "w", "ticks": 3, "lateCancel": tt.late})
			c.release2026("w/start", nil)
			c.await2026("w/tick/1", nil)
			if m := c.call2026(mcp.MethodTasksCancel, map[string]any{"taskId": created.TaskID}, taskMeta()); m.Kind != jsonrpc.KindResult {
				t.Fatalf("tasks/cancel: %s", m.Raw)
			}
			if got := c.getTask(created.TaskID); got.Status != mcp.TaskWorking {
				t.Errorf("status after the acknowledgement %q, want working until the next tick", got.Status)
			}
			c.release2026("w/tick/1", nil)
			if r := c.await2026("w/end", nil); r.Outcome != tt.end {
				t.Errorf("w/end outcome %q, want %q", r.Outcome, tt.end)
			}
			c.release2026("w/tick/2", nil)
			c.release2026("w/tick/3", nil)
			got := c.getTask(created.TaskID)
			w := c.counters2026(nil).Tasks["w"]
			if got.Status != tt.status || w.Ticks != 1 || w.WorkerRunning || w.CancelRequests != 1 {
				t.Errorf("status %q, worker %+v; want %s, counter 1, stopped", got.Status, w, tt.status)
			}
		})
	}
	h := newHarness(t)
	h.result(mcp.MethodInitialize, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}, nil)
	h.notify("notifications/initialized", nil)
	m := h.call(mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "task": map[string]any{"ttl": 60000},
		"arguments": map[string]any{"key": "w", "lateCancel": lateCancelCancel}})
	if m.Kind != jsonrpc.KindError || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("lateCancel under 2025-11-25: %s, want -32602", m.Raw)
	}
}
