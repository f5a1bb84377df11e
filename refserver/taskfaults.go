package refserver

// Faults of durable tasks (2025-11-25 basic/utilities/tasks) beyond the
// cancel path. Each breaks one rule that a task case checks; the
// requirements are in the fault table (faulttable.go).
const (
	// FaultTaskListNotObject: capabilities.tasks.list is true instead of
	// an object (TSK-2).
	FaultTaskListNotObject Fault = "task-list-capability-not-object"
	// FaultTaskSupportMissing: tools/list gives task_worker no
	// execution.taskSupport, so no client may call it as a task (TSK-8).
	FaultTaskSupportMissing Fault = "task-support-missing"
	// FaultRequiredTaskRunsPlain: task_worker called without a task gets
	// a CallToolResult with isError instead of error -32601 (TSK-12).
	FaultRequiredTaskRunsPlain Fault = "required-task-runs-plain"
	// FaultForbiddenRunsPlain: a tool whose taskSupport is forbidden,
	// called as a task, runs as an ordinary call instead of -32601
	// (TSK-9).
	FaultForbiddenRunsPlain Fault = "forbidden-tool-runs-plain"
	// FaultTaskWithoutTTL: task objects have no ttl member (TSK-41).
	FaultTaskWithoutTTL Fault = "task-without-ttl"
	// FaultLastUpdatedBeforeCreated: lastUpdatedAt is a second before
	// createdAt (TSK-39).
	FaultLastUpdatedBeforeCreated Fault = "last-updated-before-created"
	// FaultSequentialTaskIDs: task IDs count up, "task-1", "task-2", …
	// across the server (TSK-81).
	FaultSequentialTaskIDs Fault = "sequential-task-ids"
	// FaultCompletedTaskReopens: the second tasks/get after a task
	// completed says working again (TSK-31).
	FaultCompletedTaskReopens Fault = "completed-task-reopens"
	// FaultCancelAnswersBeforeTransition: tasks/cancel answers with the
	// task still working, and moves it to cancelled after (TSK-64).
	FaultCancelAnswersBeforeTransition Fault = "cancel-answers-before-transition"
	// FaultIsErrorCompletesTask: a task whose tool result has isError
	// ends completed, not failed (TSK-76).
	FaultIsErrorCompletesTask Fault = "iserror-completes-task"
	// FaultFailedResultNotError: tasks/result of a task whose request
	// ended in a JSON-RPC error answers a CallToolResult instead of that
	// error (TSK-77).
	FaultFailedResultNotError Fault = "failed-result-not-error"
	// FaultResultAnswersEarly: tasks/result of a working task is answered
	// at once with -32602 instead of blocking (TSK-47).
	FaultResultAnswersEarly Fault = "result-answers-early"
	// FaultUnknownTaskInternalError: a task ID that names no task gets
	// -32603 instead of -32602 (TSK-68).
	FaultUnknownTaskInternalError Fault = "unknown-task-internal-error"
	// FaultRelatedTaskMetaWins: the task methods take the task from the
	// request's related-task _meta over params.taskId (TSK-51, TSK-52).
	FaultRelatedTaskMetaWins Fault = "related-task-meta-wins"
	// FaultBogusCursorAccepted: tasks/list with a cursor it never issued
	// answers the first page instead of -32602 (TSK-69).
	FaultBogusCursorAccepted Fault = "bogus-cursor-accepted"
	// FaultStatusNotificationMeta: notifications/tasks/status carries
	// io.modelcontextprotocol/related-task _meta (TSK-58).
	FaultStatusNotificationMeta Fault = "status-notification-related-task-meta"
	// FaultTaskProgressOtherToken: a task's progress after its
	// CreateTaskResult carries another token than the request's
	// (PRG-10; so it names a token no active request carried, PRG-7).
	FaultTaskProgressOtherToken Fault = "task-progress-other-token"
)
