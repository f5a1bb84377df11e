package refserver

import "github.com/mcpflight/mcpflight/mcp"

// FaultTaskCancelledUnprompted: a task ends cancelled right after its
// CreateTaskResult, though nobody cancelled it: no tasks/cancel, no
// notifications/cancelled (TSK-D1: cancelled means the request was
// cancelled). Its worker stops, as a cancelled one does. Real servers do
// this, and a careless diagnosis blames CAN-4 and TSK-48 for it.
const FaultTaskCancelledUnprompted Fault = "task-cancelled-unprompted"

// cancelUnprompted is FaultTaskCancelledUnprompted, called by the worker
// of a 2025-11-25 task as it starts, after its CreateTaskResult: the task
// is moved to cancelled with nobody asking. It reports whether it did.
func (ss *session) cancelUnprompted(t *task) bool {
	if !ss.has(FaultTaskCancelledUnprompted) || t.ext.is2026 {
		return false
	}
	ts := ss.tasks
	ts.mu.Lock()
	if t.deleted || mcp.TaskTerminal(t.status) {
		ts.mu.Unlock()
		return false
	}
	t.setStatusLocked(mcp.TaskCancelled, "The task was cancelled.")
	t.closeStop()
	t.closeDone()
	view := ss.taskViewLocked(t)
	ts.mu.Unlock()
	ss.logf("task %s cancelled with nobody asking (fault %s)", t.id, FaultTaskCancelledUnprompted)
	ss.notifyStatus(view)
	return true
}
