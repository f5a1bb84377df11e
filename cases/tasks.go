package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// taskCases cover durable tasks (2025-11-25 basic/utilities/tasks) and
// the line between request cancellation and task cancellation (CAN-4).
func taskCases() []probe.Case {
	return []probe.Case{
		// TSK-1 MUST: "Servers and clients that support task-augmented requests MUST declare a
		//   `tasks` capability during initialization."
		// TSK-2 MUST: "Task augmentation is subject to capability negotiation - receivers MUST
		//   declare support for task augmentation of specific request types in their capabilities."
		// TSK-6 DEF: "`capabilities.tasks.list` controls if the `tasks/list` operation is
		//   supported by the party."
		{
			ID:       "tasks/capability-shape",
			Tidy:     true,
			Title:    "the tasks capability is declared by request category",
			Reqs:     []string{"TSK-1", "TSK-2", "TSK-6"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    mcp.MethodInitialize,
			Expect:   "capabilities.tasks.requests.tools.call is an object; list and cancel, when present, are objects",
			Run:      taskCapabilityShape,
		},
		// TSK-8 MUST NOT: "If `execution.taskSupport` is not present or `"forbidden"`, clients
		//   MUST NOT attempt to invoke the tool as a task."
		// TSK-10 MAY: "If `execution.taskSupport` is `"optional"`, clients MAY invoke the tool as
		//   a task or as a normal request."
		// TSK-11 MUST: "If `execution.taskSupport` is `"required"`, clients MUST invoke the tool
		//   as a task."
		{
			ID:       "tasks/tool-task-support",
			Tidy:     true,
			Title:    "the task tool advertises execution.taskSupport",
			Reqs:     []string{"TSK-8", "TSK-10", "TSK-11"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    mcp.MethodToolsList,
			Expect:   `the profile's task tool (else one tool of tools/list) has execution.taskSupport "required" or "optional"; none in tools/list is info`,
			Run:      taskToolSupport,
		},
		// TSK-12 MUST: "Servers MUST return a `-32601` (Method not found) error if a client does
		//   not attempt to do so."
		// TSK-72 MAY: "Additionally, receivers MAY return the following errors: ▸
		//   Non-task-augmented request when receiver requires task augmentation for that request
		//   type: `-32600` (Invalid request)"
		{
			ID:       "tasks/required-without-task",
			Title:    "a required-task tool called without a task is refused",
			Reqs:     []string{"TSK-12", "TSK-72"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    "tools/call of a taskSupport:required tool without params.task",
			Expect:   "error -32601 (-32600 is recorded as info: ambiguity A-3)",
			Tidy:     true,
			Run:      taskRequiredWithoutTask,
		},
		// TSK-9 SHOULD: "Servers SHOULD return a `-32601` (Method not found) error if a client
		//   attempts to do so."
		// TSK-8 MUST NOT: "If `execution.taskSupport` is not present or `"forbidden"`, clients
		//   MUST NOT attempt to invoke the tool as a task."
		{
			ID:       "tasks/forbidden-with-task",
			Title:    "a forbidden-task tool called as a task is refused",
			Reqs:     []string{"TSK-9", "TSK-8"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    "tools/call of a tool whose taskSupport is forbidden or absent (the profile's effect tool, else one from tools/list) with params.task",
			Expect:   "error -32601",
			Tidy:     true,
			Run:      taskForbiddenWithTask,
		},
		// TSK-24 MUST: "Receivers that do not declare the task capability for a request type MUST
		//   process requests of that type normally, ignoring any task-augmentation metadata if
		//   present."
		// TSK-4 SHOULD NOT: "If `capabilities.tasks` is not defined, the peer SHOULD NOT attempt
		//   to create tasks during requests."
		{
			ID:       "tasks/ignored-without-capability",
			Title:    "without the tasks capability the task field is ignored",
			Reqs:     []string{"TSK-24", "TSK-4"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{NoTasks: true},
			Sends:    "to a server that declares no tasks capability, tools/call of a tool it may call (the profile's slow or log tool, else one tools/list annotates readOnlyHint, else the profile's effect tool) without params.task, then with it",
			Expect:   "with params.task, an ordinary CallToolResult as without it: not a CreateTaskResult and not an error",
			Run:      taskIgnoredWithoutCapability,
		},
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-26 MUST: "Task IDs MUST be a string value."
		// TSK-27 MUST: "Task IDs MUST be generated by the receiver when creating a task."
		// TSK-29 MUST: "Tasks MUST begin in the `working` status when created."
		// TSK-38 MUST: "Receivers MUST include a `createdAt` ISO 8601-formatted timestamp in all
		//   task responses to indicate when the task was created."
		// TSK-39 MUST: "Receivers MUST include a `lastUpdatedAt` ISO 8601-formatted timestamp in
		//   all task responses to indicate when the task was last updated."
		// TSK-41 MUST: "Receivers MUST include the actual `ttl` duration (or `null` for unlimited)
		//   in `tasks/get` responses."
		{
			ID:          "tasks/create-result-shape",
			Title:       "creation returns a working task with a receiver-generated string id",
			Reqs:        []string{"TSK-44", "TSK-26", "TSK-27", "TSK-29", "TSK-38", "TSK-39", "TSK-41"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "a task-augmented tools/call",
			Expect:      "CreateTaskResult.task: string taskId, status working, RFC 3339 createdAt and lastUpdatedAt, ttl present",
			Run:         taskCreateShape,
		},
		// TSK-28 MUST: "Task IDs MUST be unique among all tasks controlled by the receiver."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-62 MUST: "If a task is retrievable via `tasks/get` for a requestor, it MUST be
		//   retrievable via `tasks/list` for that requestor."
		// TSK-51 MUST: "For the `tasks/get`, `tasks/result`, and `tasks/cancel` operations, the
		//   `taskId` parameter in the request MUST be used as the source of truth for identifying
		//   the target task."
		{
			ID:          "tasks/durable-id",
			Title:       "a task exists as soon as it is created, under a unique id",
			Reqs:        []string{"TSK-28", "TSK-44", "TSK-62", "TSK-51"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "two task-augmented tools/call, then tasks/get on each at once",
			Expect:      "both found, with distinct ids",
			Run:         taskDurableID,
		},
		// TSK-81 MUST: "If context-binding is unavailable, receivers MUST generate
		//   cryptographically secure task IDs with enough entropy to prevent guessing and should
		//   consider using shorter TTL durations to reduce the exposure window."
		// TSK-28 MUST: "Task IDs MUST be unique among all tasks controlled by the receiver."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:          "tasks/unguessable-ids",
			Title:       "task ids are not guessable",
			Reqs:        []string{"TSK-81", "TSK-28", "TSK-44"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "three task-augmented tools/call",
			Expect:      "ids of at least 16 characters that are not a counter (a heuristic: a warn, never a fail)",
			Run:         taskUnguessableIDs,
		},
		// TSK-38 MUST: "Receivers MUST include a `createdAt` ISO 8601-formatted timestamp in all
		//   task responses to indicate when the task was created."
		// TSK-39 MUST: "Receivers MUST include a `lastUpdatedAt` ISO 8601-formatted timestamp in
		//   all task responses to indicate when the task was last updated."
		// TSK-26 MUST: "Task IDs MUST be a string value."
		// TSK-41 MUST: "Receivers MUST include the actual `ttl` duration (or `null` for unlimited)
		//   in `tasks/get` responses."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/timestamps-monotonic",
			Title:         "createdAt is stable and lastUpdatedAt never goes back",
			Reqs:          []string{"TSK-38", "TSK-39", "TSK-26", "TSK-41", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task polled with tasks/get until terminal",
			Expect:        "the same createdAt on every poll; lastUpdatedAt ≥ createdAt and non-decreasing",
			Run:           taskTimestamps,
		},
		// TSK-30 MUST: "Receivers MUST only transition tasks through the following valid paths: ▸
		//   From `working`: may move to `input_required`, `completed`, `failed`, or `cancelled` ▸
		//   From `input_required`: may move to `working`, `completed`, `failed`, or `cancelled`"
		// TSK-31 MUST NOT: "Tasks with a `completed`, `failed`, or `cancelled` status are in a
		//   terminal state and MUST NOT transition to any other status"
		// TSK-29 MUST: "Tasks MUST begin in the `working` status when created."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/status-transitions",
			Title:         "statuses follow the task state machine and terminal states stay put",
			Reqs:          []string{"TSK-30", "TSK-31", "TSK-29", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task polled to its end, then polled twice more",
			Expect:        "only valid transitions; the terminal status does not change",
			Run:           taskTransitions,
		},
		// TSK-21 MAY: "When a task status changes, receivers MAY send a
		//   `notifications/tasks/status` notification to inform the requestor of the change."
		// TSK-58 SHOULD NOT: "When sent, the `notifications/tasks/status` notification SHOULD NOT
		//   include the `io.modelcontextprotocol/related-task` metadata, as the task ID is already
		//   present in the notification parameters."
		// TSK-30 MUST: "Receivers MUST only transition tasks through the following valid paths: ▸
		//   From `working`: may move to `input_required`, `completed`, `failed`, or `cancelled` ▸
		//   From `input_required`: may move to `working`, `completed`, `failed`, or `cancelled`"
		// TSK-22 MUST NOT: "Requestors MUST NOT rely on receiving this notifications, as it is
		//   optional."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/status-notifications",
			Title:         "status notifications carry the full task and follow the state machine",
			Reqs:          []string{"TSK-21", "TSK-58", "TSK-30", "TSK-22", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task run to its end while watching notifications/tasks/status",
			Expect:        "each is a Task of that id, without related-task _meta, in a valid order (none at all is info: they are optional)",
			Run:           taskStatusNotifications,
		},
		// TSK-64 SHOULD / MUST: "Upon receiving a valid cancellation request, receivers SHOULD
		//   attempt to stop the task execution and MUST transition the task to `cancelled` status
		//   before sending the response."
		// TSK-66 MAY: "However, receivers MAY delete cancelled tasks at their discretion at any
		//   time, including immediately after cancellation or after the task `ttl` expires."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-65 MUST: "Once a task is cancelled, it MUST remain in `cancelled` status even if
		//   execution continues to completion or fails."
		{
			ID:          "tasks/cancel-working",
			Title:       "tasks/cancel answers with the task already cancelled",
			Reqs:        []string{"TSK-64", "TSK-66", "TSK-44", "TSK-65"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "tasks/cancel on a working task, then tasks/get",
			Expect:      "the cancel result says cancelled; tasks/get says cancelled (or -32602: deleted, TSK-66)",
			Run:         taskCancelWorking,
		},
		// TSK-65 MUST: "Once a task is cancelled, it MUST remain in `cancelled` status even if
		//   execution continues to completion or fails."
		// TSK-31 MUST NOT: "Tasks with a `completed`, `failed`, or `cancelled` status are in a
		//   terminal state and MUST NOT transition to any other status"
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-64 SHOULD / MUST: "Upon receiving a valid cancellation request, receivers SHOULD
		//   attempt to stop the task execution and MUST transition the task to `cancelled` status
		//   before sending the response."
		{
			ID:          "tasks/cancelled-stays-cancelled",
			Title:       "a cancelled task stays cancelled after its worker ends",
			Reqs:        []string{"TSK-65", "TSK-31", "TSK-44", "TSK-64"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "tasks/cancel mid-work, the worker's end awaited, then tasks/get",
			Expect:      "cancelled",
			Run:         taskCancelledSticky,
		},
		// TSK-63 MUST: "Receivers MUST reject cancellation requests for tasks already in a
		//   terminal status (`completed`, `failed`, or `cancelled`) with error code `-32602`
		//   (Invalid params)."
		// TSK-70 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Attempt to cancel a task already in a terminal status: `-32602` (Invalid
		//   params)"
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-64 SHOULD / MUST: "Upon receiving a valid cancellation request, receivers SHOULD
		//   attempt to stop the task execution and MUST transition the task to `cancelled` status
		//   before sending the response."
		{
			ID:          "tasks/second-cancel-rejected",
			Title:       "cancelling a cancelled task is refused",
			Reqs:        []string{"TSK-63", "TSK-70", "TSK-44", "TSK-64"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "tasks/cancel twice on the same task",
			Expect:      "the first returns the cancelled task, the second error -32602",
			Run:         taskSecondCancel,
		},
		// TSK-63 MUST: "Receivers MUST reject cancellation requests for tasks already in a
		//   terminal status (`completed`, `failed`, or `cancelled`) with error code `-32602`
		//   (Invalid params)."
		// TSK-70 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Attempt to cancel a task already in a terminal status: `-32602` (Invalid
		//   params)"
		// TSK-31 MUST NOT: "Tasks with a `completed`, `failed`, or `cancelled` status are in a
		//   terminal state and MUST NOT transition to any other status"
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/cancel-completed-rejected",
			Title:         "cancelling a completed task is refused",
			Reqs:          []string{"TSK-63", "TSK-70", "TSK-31", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task run to completion, then tasks/cancel",
			Expect:        "error -32602; tasks/get still says completed",
			Run:           taskCancelCompleted,
		},
		// CAN-4 MUST: "For task-augmented requests, the `tasks/cancel` request MUST be used
		//   instead of the `notifications/cancelled` notification."
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/notification-does-not-cancel",
			Title:         "notifications/cancelled for the creating request leaves the task alone",
			Reqs:          []string{"CAN-4", "CAN-14", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task-augmented tools/call, then notifications/cancelled naming its request id",
			Expect:        "the task stays working and then completes",
			Run:           taskNotificationDoesNotCancel,
		},
		// TSK-D1 DEF: "`cancelled`: The request was cancelled before completion."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/not-cancelled-unprompted",
			Title:         "a task nobody cancels does not end cancelled",
			Reqs:          []string{"TSK-D1", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task-augmented tools/call run to its end, with no tasks/cancel and no notifications/cancelled",
			Expect:        "the task ends completed or failed, never cancelled",
			Run:           taskNotCancelledUnprompted,
		},
		// TSK-47 MUST: "When a receiver receives a `tasks/result` request for a task in any other
		//   non-terminal status (`working` or `input_required`), it MUST block the response until
		//   the task reaches a terminal status."
		// TSK-46 MUST: "When a receiver receives a `tasks/result` request for a task in a terminal
		//   status (`completed`, `failed`, or `cancelled`), it MUST return the final result of the
		//   underlying request, whether that is a successful result or a JSON-RPC error."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:          "tasks/result-answered-after-cancel",
			Title:       "a blocked tasks/result is answered when the task is cancelled",
			Reqs:        []string{"TSK-47", "TSK-46", "TSK-44"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "tasks/result on a working task, then tasks/cancel",
			Expect:      "tasks/result is answered, not left hanging; an error or a result (recorded as info: ambiguity A-4)",
			Run:         taskResultAfterCancel,
		},
		// TSK-64 SHOULD / MUST: "Upon receiving a valid cancellation request, receivers SHOULD
		//   attempt to stop the task execution and MUST transition the task to `cancelled` status
		//   before sending the response."
		// CAN-4 MUST: "For task-augmented requests, the `tasks/cancel` request MUST be used
		//   instead of the `notifications/cancelled` notification."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:       "tasks/worker-stops-after-cancel",
			Title:    "tasks/cancel stops the work itself",
			Reqs:     []string{"TSK-64", "CAN-4", "TSK-44"},
			Versions: []string{spec.V20251125},
			Needs: probe.Needs{Tasks: true, Control: true,
				ControlFor: "the task worker's counter: whether the work itself stopped after tasks/cancel cannot be seen on the wire, and an observer counts tool handlers, not task workers"},
			Sends:  "a gated worker at tick 1; tasks/cancel; every later gate released",
			Expect: "the worker's counter stays at 1 and the worker ends",
			Run:    taskWorkerStops,
		},
		// TSK-48 MUST: "For tasks in a terminal status, receivers MUST return from `tasks/result`
		//   exactly what the underlying request would have returned, whether that is a successful
		//   result or a JSON-RPC error."
		// TSK-78 MUST: "If the request completed with a JSON-RPC response, `tasks/result` MUST
		//   return a successful JSON-RPC response containing that result."
		// TSK-55 MUST: "The `tasks/result` operation MUST include this metadata in its response,
		//   as the result structure itself does not contain the task ID."
		// TSK-46 MUST: "When a receiver receives a `tasks/result` request for a task in a terminal
		//   status (`completed`, `failed`, or `cancelled`), it MUST return the final result of the
		//   underlying request, whether that is a successful result or a JSON-RPC error."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/result-equivalence",
			Title:         "tasks/result returns the underlying result with related-task metadata",
			Reqs:          []string{"TSK-48", "TSK-78", "TSK-55", "TSK-46", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task run to completion, then tasks/result",
			Expect:        "a CallToolResult whose _meta io.modelcontextprotocol/related-task.taskId is the task's id",
			Run:           taskResultEquivalence,
		},
		// TSK-77 MUST: "If the underlying request resulted in a JSON-RPC error, `tasks/result`
		//   MUST return that same JSON-RPC error."
		// TSK-75 SHOULD: "The `tasks/get` response SHOULD include a `statusMessage` field with
		//   diagnostic information about the failure."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:       "tasks/result-error-equivalence",
			Title:    "a task whose request failed returns the same JSON-RPC error",
			Reqs:     []string{"TSK-77", "TSK-75", "TSK-44"},
			Versions: []string{spec.V20251125},
			Needs: probe.Needs{Tasks: true, Control: true,
				ControlFor: "a task whose request ends with a JSON-RPC error (its task_worker, end=\"error\"): nothing on the wire makes a task fail, and no profile field names a tool that does"},
			AwaitsTaskEnd: true,
			Sends:         "a worker that ends with a JSON-RPC error, then tasks/get and tasks/result",
			Expect:        "status failed with a statusMessage; tasks/result answers a JSON-RPC error",
			Run:           taskResultError,
		},
		// TSK-76 should (lc): "For tasks that wrap tool call requests, when the tool result has
		//   `isError` set to `true`, the task should reach `failed` status."
		// TSK-78 MUST: "If the request completed with a JSON-RPC response, `tasks/result` MUST
		//   return a successful JSON-RPC response containing that result."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:       "tasks/iserror-fails-task",
			Title:    "a tool result with isError makes the task failed",
			Reqs:     []string{"TSK-76", "TSK-78", "TSK-44"},
			Versions: []string{spec.V20251125},
			Needs: probe.Needs{Tasks: true, Control: true,
				ControlFor: "a task whose tool ends with an isError result (its task_worker, end=\"fail\"): nothing on the wire makes a task fail, and no profile field names a tool that does"},
			AwaitsTaskEnd: true,
			Sends:         "a worker that ends with isError true",
			Expect:        "status failed; tasks/result is a successful response with isError true",
			Run:           taskIsErrorFails,
		},
		// TSK-47 MUST: "When a receiver receives a `tasks/result` request for a task in any other
		//   non-terminal status (`working` or `input_required`), it MUST block the response until
		//   the task reaches a terminal status."
		// TSK-20 DEF: "While `tasks/result` blocks until the task reaches a terminal status,
		//   requestors can continue polling via `tasks/get` in parallel if they are not actively
		//   blocked waiting for the result, such as if their previous `tasks/result` request failed
		//   or was cancelled."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-48 MUST: "For tasks in a terminal status, receivers MUST return from `tasks/result`
		//   exactly what the underlying request would have returned, whether that is a successful
		//   result or a JSON-RPC error."
		{
			ID:            "tasks/result-blocks-while-working",
			Title:         "tasks/result waits for a working task",
			Reqs:          []string{"TSK-47", "TSK-20", "TSK-44", "TSK-48"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "tasks/result on a gated worker, tasks/get meanwhile, then the gates released",
			Expect:        "no answer while working; tasks/get served meanwhile; the result once completed",
			Run:           taskResultBlocks,
		},
		// TSK-68 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Invalid or nonexistent `taskId` in `tasks/get`, `tasks/result`, or
		//   `tasks/cancel`: `-32602` (Invalid params)"
		{
			ID:       "tasks/unknown-id",
			Title:    "unknown task ids are invalid params",
			Reqs:     []string{"TSK-68"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    "tasks/get, tasks/result and tasks/cancel for a task id never issued",
			Expect:   "error -32602 for each",
			Tidy:     true,
			Run:      taskUnknownID,
		},
		// TSK-51 MUST: "For the `tasks/get`, `tasks/result`, and `tasks/cancel` operations, the
		//   `taskId` parameter in the request MUST be used as the source of truth for identifying
		//   the target task."
		// TSK-52 SHOULD NOT / MUST: "Requestors SHOULD NOT include
		//   `io.modelcontextprotocol/related-task` metadata in these requests, and receivers MUST
		//   ignore such metadata if present in favor of the RPC method parameter."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:          "tasks/task-id-is-source-of-truth",
			Title:       "params.taskId wins over related-task metadata",
			Reqs:        []string{"TSK-51", "TSK-52", "TSK-44"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "tasks/get with params.taskId A and _meta related-task B",
			Expect:      "the task A",
			Run:         taskIDSourceOfTruth,
		},
		// TSK-60 MUST: "Receivers MUST include a `nextCursor` in the response if more tasks are
		//   available."
		// TSK-62 MUST: "If a task is retrievable via `tasks/get` for a requestor, it MUST be
		//   retrievable via `tasks/list` for that requestor."
		// TSK-59 SHOULD: "Receivers SHOULD use cursor-based pagination to limit the number of
		//   tasks returned in a single response."
		// TSK-69 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Invalid or nonexistent cursor in `tasks/list`: `-32602` (Invalid params)"
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:       "tasks/list-pagination",
			Title:    "tasks/list pages through every task",
			Reqs:     []string{"TSK-60", "TSK-62", "TSK-59", "TSK-69", "TSK-44"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{Tasks: true},
			Sends:    "three tasks, tasks/list followed by nextCursor, then a bogus cursor",
			Expect:   "every task listed exactly once; the bogus cursor gets -32602",
			Run:      taskListPagination,
		},
		// TSK-84 MUST: "For `tasks/list` requests, receivers MUST ensure the returned task list
		//   includes only tasks associated with the requestor's authorization context."
		// TSK-62 MUST: "If a task is retrievable via `tasks/get` for a requestor, it MUST be
		//   retrievable via `tasks/list` for that requestor."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:       "tasks/list-isolation",
			Title:    "tasks/list shows only the requestor's tasks",
			Reqs:     []string{"TSK-84", "TSK-62", "TSK-44"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{Tasks: true, OneServer: true},
			Sends:    "a task created in a second session, then tasks/list in the first",
			Expect:   "the other session's task is not listed",
			Run:      taskListIsolation,
		},
		// TSK-42 MAY: "After a task's `ttl` lifetime has elapsed, receivers MAY delete the task
		//   and its results, regardless of the task status."
		// TSK-74 DEF: "Receivers are not required to retain tasks indefinitely. It is compliant
		//   behavior for a receiver to return an error stating the task cannot be found if it has
		//   purged an expired task."
		// TSK-40 MAY: "Receivers MAY override the requested `ttl` duration."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		// TSK-68 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Invalid or nonexistent `taskId` in `tasks/get`, `tasks/result`, or
		//   `tasks/cancel`: `-32602` (Invalid params)"
		{
			ID:          "tasks/ttl-expiry",
			Title:       "a task past its ttl may be deleted",
			Reqs:        []string{"TSK-42", "TSK-74", "TSK-40", "TSK-44", "TSK-68"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "a task with ttl 1 ms, then tasks/get until it is gone or the budget ends",
			Expect:      "-32602 once deleted; a task kept longer is recorded as info",
			Run:         taskTTLExpiry,
		},
		// TSK-43 MAY/SHOULD: "Receivers MAY include a `pollInterval` value (in milliseconds) in
		//   `tasks/get` responses to suggest polling intervals. Requestors SHOULD respect this value
		//   when provided."
		// TSK-16 SHOULD: "Requestors SHOULD respect the `pollInterval` provided in responses when
		//   determining polling frequency."
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:          "tasks/poll-interval",
			Title:       "pollInterval, when present, is a usable interval",
			Reqs:        []string{"TSK-43", "TSK-16", "TSK-44"},
			Versions:    []string{spec.V20251125},
			Needs:       probe.Needs{Tasks: true},
			LeavesTasks: true,
			Sends:       "a task-augmented tools/call and tasks/get",
			Expect:      "pollInterval absent or a positive number of milliseconds",
			Run:         taskPollInterval,
		},
		// PRG-9 MUST: "For task-augmented requests, the `progressToken` provided in the original
		//   request MUST continue to be used for progress notifications throughout the task's
		//   lifetime, even after the `CreateTaskResult` has been returned."
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// TSK-44 MUST: "Receivers that accept a task-augmented request MUST return a
		//   `CreateTaskResult` as the response."
		{
			ID:            "tasks/progress-token-lifetime",
			Title:         "the request's progress token stays valid for the task's lifetime",
			Reqs:          []string{"PRG-9", "PRG-14", "PRG-1", "PRG-4", "PRG-7", "TSK-44"},
			Versions:      []string{spec.V20251125},
			Needs:         probe.Needs{Tasks: true},
			LeavesTasks:   true,
			AwaitsTaskEnd: true,
			Sends:         "a task-augmented tools/call with a progress token, run to its end",
			Expect:        "progress after the CreateTaskResult carries the token; none after the task is terminal (no progress at all is info)",
			Run:           taskProgressLifetime,
		},
	}
}

func taskCapabilityShape(_ context.Context, e *probe.Env) verdict.Outcome {
	init := e.S.Server()
	var c struct {
		List     json.RawMessage `json:"list"`
		Cancel   json.RawMessage `json:"cancel"`
		Requests map[string]json.RawMessage
	}
	if err := json.Unmarshal(init.Capabilities["tasks"], &c); err != nil {
		return e.Breaks("TSK-1", []string{"capabilities.tasks is an object"}, chrono.Sanitize(string(init.Capabilities["tasks"]), false), 0)
	}
	for name, raw := range map[string]json.RawMessage{"list": c.List, "cancel": c.Cancel, "requests.tools": c.Requests["tools"]} {
		if len(raw) > 0 && !strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
			return e.Breaks("TSK-2", []string{"tasks." + name + " is an object when present"}, chrono.Sanitize(string(raw), false), 0)
		}
	}
	tcs := init.Tasks()
	return verdict.Passf("tasks declared: tools/call %v, list %v, cancel %v", tcs.ToolsCall, tcs.List, tcs.Cancel)
}

func taskToolSupport(ctx context.Context, e *probe.Env) verdict.Outcome {
	if e.Profile.Task == nil {
		// Zero configuration: tools/list alone says which
		// tools accept a task.
		tool, ok, err := e.PickTool(ctx, nil, probe.AcceptsTasks)
		switch {
		case err != nil:
			return verdict.Errorf("tools/list: %v", err)
		case !ok:
			return verdict.Infof(`the server declares tasks.requests.tools.call, but no tool of tools/list has execution.taskSupport "required" or "optional": no tool can be called as a task (no rule forbids this; the profile names no task tool)`)
		}
		return verdict.Passf("%s has taskSupport %q (picked from tools/list; the profile names no task tool)", chrono.Sanitize(tool.Name, false), tool.Support)
	}
	support, listed, err := probe.ToolTaskSupport(ctx, e, e.Profile.Task.Name)
	switch {
	case err != nil:
		return verdict.Errorf("tools/list: %v", err)
	case !listed:
		return verdict.Errorf("tools/list does not list the profile's task tool %q", e.Profile.Task.Name)
	case support == "required" || support == "optional":
		return verdict.Passf("%s has taskSupport %q", e.Profile.Task.Name, support)
	}
	return e.Breaks("TSK-8", []string{`taskSupport "required" or "optional" for a tool that runs as a task`},
		fmt.Sprintf("taskSupport %q", chrono.Sanitize(support, false)), 0)
}

func taskRequiredWithoutTask(ctx context.Context, e *probe.Env) verdict.Outcome {
	tool, ok, err := e.PickTool(ctx, e.Profile.Task, probe.RequiresTasks)
	if err != nil {
		return verdict.Errorf("tools/list: %v", err)
	}
	if !ok {
		return verdict.Skipf("no tool of tools/list has taskSupport \"required\"")
	}
	args := tool.Arguments
	if e.Control != nil && tool.FromProfile {
		args["key"], args["gated"] = "plain", false
	}
	call, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": tool.Name, "arguments": args})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := call.Await(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	_, seq := call.Response()
	switch {
	case resp.Error != nil && resp.Error.Code == jsonrpc.CodeMethodNotFound:
		return verdict.Passf("refused with -32601")
	case resp.Error != nil && resp.Error.Code == jsonrpc.CodeInvalidRequest:
		return verdict.Infof("refused with -32600, which TSK-72 allows and TSK-12 does not (ambiguity A-3)")
	case resp.Error != nil:
		return e.Breaks("TSK-12", []string{"error -32601 (Method not found)", "error -32600 (TSK-72, ambiguity A-3)"}, probe.Describe(e.EventAt(seq)), seq)
	}
	return e.Breaks("TSK-12", []string{"error -32601 (Method not found)", "error -32600 (TSK-72, ambiguity A-3)"},
		"a result, not a JSON-RPC error: "+probe.Describe(e.EventAt(seq)), seq)
}

func taskForbiddenWithTask(ctx context.Context, e *probe.Env) verdict.Outcome {
	tool, ok, err := e.PickTool(ctx, e.Profile.Effect, probe.ForbidsTasks)
	if err != nil {
		return verdict.Errorf("tools/list: %v", err)
	}
	if !ok {
		return verdict.Skipf("no tool of tools/list forbids tasks (every taskSupport is optional or required)")
	}
	args := tool.Arguments
	if e.Control != nil && tool.FromProfile {
		args["key"], args["gated"] = "forbidden", false
	}
	call, err := e.S.Start(ctx, mcp.MethodToolsCall, peer.TaskParams(map[string]any{"name": tool.Name, "arguments": args}, 60000))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := call.Await(ctx)
	_, seq := call.Response()
	code, isRPC := probe.RPCCode(err)
	if err == nil && resp.Error != nil {
		code, isRPC = resp.Error.Code, true
	}
	switch {
	case isRPC && code == jsonrpc.CodeMethodNotFound:
		return verdict.Passf("%s refused with -32601", chrono.Sanitize(tool.Name, false))
	case isRPC:
		return e.Breaks("TSK-9", []string{"error -32601 (Method not found)"}, fmt.Sprintf("%s: %s", chrono.Sanitize(tool.Name, false), probe.Describe(e.EventAt(seq))), seq)
	case err != nil:
		return verdict.Errorf("%v", err)
	}
	return e.Breaks("TSK-9", []string{"error -32601 (Method not found)"}, fmt.Sprintf("%s: a result: %s", chrono.Sanitize(tool.Name, false), probe.Describe(e.EventAt(seq))), seq)
}

func taskIgnoredWithoutCapability(ctx context.Context, e *probe.Env) verdict.Outcome {
	tool, none, err := e.CallableTool(ctx)
	switch {
	case err != nil:
		return verdict.Errorf("%v", err)
	case tool == nil:
		return verdict.Skipf("%s", none)
	}
	params := func(key string) map[string]any {
		args := tool.CloneArgs()
		if _, ok := args["key"]; ok && e.Control != nil {
			args["key"] = key // an operation of its own for each call
		}
		return map[string]any{"name": tool.Name, "arguments": args}
	}
	// The call without the task field first: a tool that fails on its own
	// says nothing about what the field does.
	if err := e.S.Request(ctx, mcp.MethodToolsCall, params("plain"), nil); err != nil {
		if code, isRPC := probe.RPCCode(err); isRPC {
			return verdict.Skipf("tool %q fails without params.task too (error %d: %s), so its answer with one says nothing of the task field; name a tool that works in the profile",
				chrono.Sanitize(tool.Name, false), code, chrono.Sanitize(chrono.Clip(err.Error(), 200), false))
		}
		return verdict.Errorf("tools/call of %q without params.task: %v", chrono.Sanitize(tool.Name, false), err)
	}
	call, err := e.S.Start(ctx, mcp.MethodToolsCall, peer.TaskParams(params("with-task"), 60000))
	if err != nil {
		return verdict.Errorf("sending tools/call with params.task: %v", err)
	}
	msg, err := call.Await(ctx)
	if err != nil {
		return verdict.Errorf("tools/call of %q with params.task: %v", chrono.Sanitize(tool.Name, false), err)
	}
	_, seq := call.Response()
	if msg.Error != nil {
		return e.Breaks("TSK-24", []string{fmt.Sprintf("an ordinary CallToolResult, as %q gave without params.task: the task field is ignored", chrono.Sanitize(tool.Name, false))},
			probe.Describe(e.EventAt(seq)), seq)
	}
	if _, err := peer.ParseCreateTaskResult(msg.Result); err == nil {
		return e.Breaks("TSK-24", []string{"an ordinary CallToolResult, not a CreateTaskResult"}, chrono.Sanitize(string(msg.Result), false), seq)
	}
	return verdict.Passf("the task field was ignored: tool %q answered an ordinary result with it, as without it", chrono.Sanitize(tool.Name, false))
}

// rfc3339 reports whether s is an RFC 3339 timestamp.
func rfc3339(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// taskShape checks one Task object (TSK-26, TSK-38, TSK-39, TSK-41).
func taskShape(e *probe.Env, t peer.Task, seq uint64) *verdict.Outcome {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(t.Raw, &raw)
	fail := func(req, want string) *verdict.Outcome {
		o := e.Breaks(req, []string{want}, chrono.Sanitize(string(t.Raw), false), seq)
		return &o
	}
	if id := strings.TrimSpace(string(raw["taskId"])); !strings.HasPrefix(id, `"`) {
		return fail("TSK-26", "taskId is a string")
	}
	created, ok := rfc3339(t.CreatedAt)
	if !ok {
		return fail("TSK-38", "createdAt is an ISO 8601 (RFC 3339) timestamp")
	}
	updated, ok := rfc3339(t.LastUpdatedAt)
	if !ok {
		return fail("TSK-39", "lastUpdatedAt is an ISO 8601 (RFC 3339) timestamp")
	}
	if updated.Before(created) {
		return fail("TSK-39", "lastUpdatedAt is not before createdAt")
	}
	if _, ok := raw["ttl"]; !ok {
		return fail("TSK-41", "ttl is present (a number, or null for unlimited)")
	}
	return nil
}

func taskCreateShape(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "shape"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	defer op.ReleaseAll(context.WithoutCancel(ctx))
	if op.Task.Status != mcp.TaskWorking {
		return e.Breaks("TSK-29", []string{`status "working" at creation`}, fmt.Sprintf("status %q", chrono.Sanitize(op.Task.Status, false)), op.RespSeq)
	}
	if o := taskShape(e, op.Task, op.RespSeq); o != nil {
		return *o
	}
	return verdict.Passf("task %s created working", chrono.Sanitize(op.Task.TaskID, false))
}

func taskDurableID(ctx context.Context, e *probe.Env) verdict.Outcome {
	a, err := e.StartTask(ctx, probe.TaskSpec{Key: "d1"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	b, err := e.StartTask(ctx, probe.TaskSpec{Key: "d2"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	defer func() { _ = a.ReleaseAll(context.WithoutCancel(ctx)); _ = b.ReleaseAll(context.WithoutCancel(ctx)) }()
	if a.Task.TaskID == b.Task.TaskID {
		return e.Breaks("TSK-28", []string{"distinct task ids"}, "both tasks are "+chrono.Sanitize(a.Task.TaskID, false), b.RespSeq)
	}
	for _, op := range []*probe.TaskOp{a, b} {
		got, err := e.S.GetTask(ctx, op.Task.TaskID)
		if err != nil {
			return e.Breaks("TSK-44", []string{"the task just created is found by tasks/get"}, chrono.Sanitize(err.Error(), false), 0)
		}
		if got.TaskID != op.Task.TaskID {
			return e.Breaks("TSK-51", []string{"tasks/get answers about the task asked for"}, chrono.Sanitize(string(got.Raw), false), 0)
		}
	}
	return verdict.Passf("two tasks with distinct ids, both found at once")
}

// guessable says why a set of task ids looks guessable, or "": an id
// shorter than 16 characters, or ids that differ only in a decimal
// counter after a common prefix (TSK-81).
func guessable(ids []string) string {
	for _, id := range ids {
		if len(id) < 16 {
			return fmt.Sprintf("id %q has %d characters", id, len(id))
		}
	}
	if len(ids) < 2 {
		return ""
	}
	prefix := ids[0]
	for _, id := range ids[1:] {
		for !strings.HasPrefix(id, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	var prev int64 = -1
	for i, id := range ids {
		var n int64
		rest := id[len(prefix):]
		if rest == "" || strings.TrimLeft(rest, "0123456789") != "" {
			return ""
		}
		if _, err := fmt.Sscan(rest, &n); err != nil {
			return ""
		}
		if i > 0 && n != prev+1 {
			return ""
		}
		prev = n
	}
	return fmt.Sprintf("ids %q count up after the prefix %q", ids, prefix)
}

func taskUnguessableIDs(ctx context.Context, e *probe.Env) verdict.Outcome {
	var ids []string
	for i := range 3 {
		op, err := e.StartTask(ctx, probe.TaskSpec{Key: fmt.Sprintf("g%d", i), Free: true, Ticks: 1})
		if err != nil {
			return probe.CreateOutcome(err)
		}
		ids = append(ids, op.Task.TaskID)
	}
	if why := guessable(ids); why != "" {
		return e.Broke(verdict.Req("TSK-81").Except(verdict.Warn,
			"a heuristic (S~ in the registry): short or counting ids suggest guessable ones, but cannot prove the entropy insufficient"),
			[]string{"cryptographically random task ids when tasks are not bound to an authorization context"},
			chrono.Sanitize(why, false), 0)
	}
	return verdict.Passf("%d ids, none short or sequential", len(ids))
}

func taskTimestamps(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "ts", Ticks: 1, Free: e.Control == nil})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	prev := op.Task
	polls := 0
	poll := func() (peer.Task, *verdict.Outcome) {
		got, err := e.S.GetTask(ctx, op.Task.TaskID)
		if err != nil {
			o := verdict.Errorf("tasks/get: %v", err)
			return got, &o
		}
		polls++
		if o := taskShape(e, got, 0); o != nil {
			return got, o
		}
		if got.CreatedAt != op.Task.CreatedAt {
			o := e.Breaks("TSK-38", []string{"the same createdAt " + op.Task.CreatedAt}, "createdAt "+chrono.Sanitize(got.CreatedAt, false), 0)
			return got, &o
		}
		pu, _ := rfc3339(prev.LastUpdatedAt)
		gu, _ := rfc3339(got.LastUpdatedAt)
		if gu.Before(pu) {
			o := e.Breaks("TSK-39", []string{"lastUpdatedAt never goes back"}, fmt.Sprintf("%s after %s", chrono.Sanitize(got.LastUpdatedAt, false), chrono.Sanitize(prev.LastUpdatedAt, false)), 0)
			return got, &o
		}
		prev = got
		return got, nil
	}
	if e.Control != nil {
		// The worker moves only when released: a poll while it waits at
		// its start (or has already ended, on a server that ends it
		// unprompted), then, its gates open and its end reached
		// (KEY/end, which every worker reaches), the loop's, so the polls
		// are the same in every run.
		if _, o := poll(); o != nil {
			return *o
		}
		if err := op.Settle(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	for {
		got, o := poll()
		if o != nil {
			return *o
		}
		if got.Terminal() || polls > 200 {
			break
		}
		t := time.NewTimer(probe.PollDelay(got))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return verdict.Errorf("%v", ctx.Err())
		}
	}
	return verdict.Passf("%d polls: createdAt stable, lastUpdatedAt non-decreasing", polls)
}

func taskTransitions(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "tr"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	final, seen, err := op.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("running the task: %v", err)
	}
	for i := 1; i < len(seen); i++ {
		if !probe.ValidTransition(seen[i-1], seen[i]) {
			return e.Breaks("TSK-30", []string{"working → input_required | terminal; input_required → working | terminal; terminal stays"},
				fmt.Sprintf("%q then %q", chrono.Sanitize(seen[i-1], false), chrono.Sanitize(seen[i], false)), 0)
		}
	}
	for range 2 {
		got, err := e.S.GetTask(ctx, op.Task.TaskID)
		if err != nil {
			return verdict.Infof("the task was gone after it ended (%s); TSK-42 allows deletion", chrono.Sanitize(err.Error(), false))
		}
		if got.Status != final.Status {
			return e.Breaks("TSK-31", []string{"the terminal status " + final.Status + " stays"}, "status "+chrono.Sanitize(got.Status, false), 0)
		}
	}
	return verdict.Passf("statuses %s; the terminal status stayed", chrono.Sanitize(strings.Join(seen, " → "), false))
}

func taskStatusNotifications(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "sn"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	if _, _, err := op.RunToEnd(ctx); err != nil {
		return verdict.Errorf("running the task: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	prev, n := mcp.TaskWorking, 0
	for _, ev := range e.Log.Since(op.RespSeq) {
		if ev.Dir != chrono.In || ev.Summary == nil || ev.Summary.Method != mcp.NotificationTaskStatus {
			continue
		}
		m, err := ev.Message()
		if err != nil {
			continue
		}
		t, err := peer.ParseTask(m.Params)
		if err != nil || t.TaskID == "" {
			return e.Broke(verdict.Req("TSK-21").Except(verdict.Fail,
				"TSK-21 makes the notification optional (MAY); one that is sent is held to the schema, whose TaskStatusNotification carries a Task: params that are no Task are not that notification"),
				[]string{"notifications/tasks/status params are a Task"}, probe.Describe(ev), ev.Seq)
		}
		if t.TaskID != op.Task.TaskID {
			continue
		}
		n++
		if _, ok := peer.RelatedTaskID(m.Params); ok {
			return e.Breaks("TSK-58", []string{"no io.modelcontextprotocol/related-task _meta in a status notification"}, probe.Describe(ev), ev.Seq)
		}
		if !probe.ValidTransition(prev, t.Status) {
			return e.Breaks("TSK-30", []string{"status notifications follow the task state machine"},
				fmt.Sprintf("%q after %q: %s", chrono.Sanitize(t.Status, false), chrono.Sanitize(prev, false), probe.Describe(ev)), ev.Seq)
		}
		prev = t.Status
	}
	if n == 0 {
		return verdict.Infof("no notifications/tasks/status for the task (they are optional, TSK-21)")
	}
	return verdict.Passf("%d status notifications, ending %s", n, chrono.Sanitize(prev, false))
}

// cancelMid creates a task, brings it to work (tick 1 on a controlled
// target), and cancels it with tasks/cancel.
func cancelMid(ctx context.Context, e *probe.Env, key string) (*probe.TaskOp, peer.Task, *verdict.Outcome) {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: key, Ticks: 3})
	if err != nil {
		o := probe.CreateOutcome(err)
		return nil, peer.Task{}, &o
	}
	if e.Control != nil {
		if err := op.Release(ctx, "start"); err != nil {
			o := verdict.Errorf("%v", err)
			return nil, peer.Task{}, &o
		}
		if err := op.Checkpoint(ctx, "tick/1"); err != nil {
			if o := unpromptedNow(ctx, e, op, "bringing the task to work", 0); o != nil {
				return nil, peer.Task{}, o
			}
			o := verdict.Errorf("%v", err)
			return nil, peer.Task{}, &o
		}
	}
	seq := e.Log.Len() + 1
	got, err := e.S.CancelTask(ctx, op.Task.TaskID)
	if code, isRPC := probe.RPCCode(err); isRPC {
		if o := unpromptedNow(ctx, e, op, "the task tasks/cancel was for (refused: already terminal)", seq); o != nil {
			return nil, peer.Task{}, o
		}
		if code == jsonrpc.CodeInvalidParams && e.Control == nil {
			o := verdict.Unexercised("the task ended before tasks/cancel arrived (-32602, A-15), so no cancel of a working task was judged")
			return nil, peer.Task{}, &o
		}
		o := e.Broke(verdict.Req("TSK-64").Clause("MUST"), []string{"tasks/cancel on a working task returns the task, cancelled"}, fmt.Sprintf("error %d", code), seq)
		return nil, peer.Task{}, &o
	} else if err != nil {
		o := verdict.Errorf("tasks/cancel: %v", err)
		return nil, peer.Task{}, &o
	}
	if got.Status != mcp.TaskCancelled {
		o := e.Broke(verdict.Req("TSK-64").Clause("MUST"), []string{`the tasks/cancel result has status "cancelled"`}, "status "+chrono.Sanitize(got.Status, false), seq)
		return nil, peer.Task{}, &o
	}
	return op, got, nil
}

func taskCancelWorking(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, _, o := cancelMid(ctx, e, "cw")
	if o != nil {
		return *o
	}
	got, err := e.S.GetTask(ctx, op.Task.TaskID)
	if code, isRPC := probe.RPCCode(err); isRPC && code == jsonrpc.CodeInvalidParams {
		return verdict.Infof("the cancelled task was deleted at once (TSK-66 allows it)")
	} else if err != nil {
		return verdict.Errorf("tasks/get: %v", err)
	}
	if got.Status != mcp.TaskCancelled {
		// The cancel's answer already said cancelled (cancelMid), so the
		// task left the cancelled status (TSK-65); that the answer came
		// before a transition that never happened (TSK-64) would fit
		// too, and is said in the expected line.
		return e.Breaks("TSK-65", []string{"tasks/get after the cancel says cancelled, as the cancel's answer did (TSK-64: the transition comes before that answer; TSK-65: a cancelled task stays cancelled)"},
			"the cancel answered cancelled, then tasks/get said "+chrono.Sanitize(got.Status, false), 0)
	}
	return verdict.Passf("cancelled before the reply; tasks/get agrees")
}

func taskCancelledSticky(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, _, o := cancelMid(ctx, e, "cs")
	if o != nil {
		return *o
	}
	if err := op.Settle(ctx); err != nil && !errors.Is(err, probe.ErrNotReached) {
		return verdict.Errorf("%v", err)
	}
	for range 2 {
		got, err := e.S.GetTask(ctx, op.Task.TaskID)
		if code, isRPC := probe.RPCCode(err); isRPC && code == jsonrpc.CodeInvalidParams {
			return verdict.Infof("the cancelled task was deleted (TSK-66 allows it)")
		} else if err != nil {
			return verdict.Errorf("tasks/get: %v", err)
		}
		if got.Status != mcp.TaskCancelled {
			return e.Breaks("TSK-65", []string{"the task stays cancelled after its work ends"}, "status "+chrono.Sanitize(got.Status, false), 0)
		}
	}
	return verdict.Passf("still cancelled after the worker ended")
}

func taskSecondCancel(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, _, o := cancelMid(ctx, e, "sc")
	if o != nil {
		return *o
	}
	seq := e.Log.Len() + 1
	got, err := e.S.CancelTask(ctx, op.Task.TaskID)
	code, isRPC := probe.RPCCode(err)
	switch {
	case isRPC && code == jsonrpc.CodeInvalidParams:
		return verdict.Passf("the second cancel was refused with -32602")
	case isRPC:
		return e.Breaks("TSK-63", []string{"error -32602 for a task already cancelled"}, fmt.Sprintf("error %d", code), seq)
	case err != nil:
		return verdict.Errorf("%v", err)
	}
	return e.Breaks("TSK-63", []string{"error -32602 for a task already cancelled"}, "a result: "+chrono.Sanitize(string(got.Raw), false), seq)
}

func taskCancelCompleted(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "cc", Free: true, Ticks: 1})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	final, _, err := op.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("running the task: %v", err)
	}
	seq := e.Log.Len() + 1
	got, err := e.S.CancelTask(ctx, op.Task.TaskID)
	code, isRPC := probe.RPCCode(err)
	switch {
	case isRPC && code == jsonrpc.CodeInvalidParams:
	case isRPC:
		return e.Breaks("TSK-63", []string{"error -32602 for a task already " + final.Status}, fmt.Sprintf("error %d", code), seq)
	case err != nil:
		return verdict.Errorf("%v", err)
	default:
		return e.Breaks("TSK-63", []string{"error -32602 for a task already " + final.Status}, "a result: "+chrono.Sanitize(string(got.Raw), false), seq)
	}
	after, err := e.S.GetTask(ctx, op.Task.TaskID)
	if err == nil && after.Status != final.Status {
		return e.Breaks("TSK-31", []string{"the status stays " + final.Status}, "status "+chrono.Sanitize(after.Status, false), 0)
	}
	return verdict.Passf("cancel of a %s task refused with -32602", final.Status)
}

func taskNotificationDoesNotCancel(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "nc"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	// A second task that nobody cancels is the control: a server whose
	// tasks end cancelled on their own cancels it too, and the
	// notification is then not what cancelled the first, and the case
	// blames TSK-D1 rather than the cancel's rules.
	ctl, err := e.StartTask(ctx, probe.TaskSpec{Key: "nc-control"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	defer ctl.ReleaseAll(context.WithoutCancel(ctx))
	if o := unpromptedNow(ctx, e, op, "the task before the cancel", 0); o != nil {
		return *o
	}
	seq, err := e.CancelRaw(ctx, map[string]any{"requestId": op.Call.ID, "reason": "mcpflight: request-level cancel of a task-creating request"})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	got, err := e.S.GetTask(ctx, op.Task.TaskID)
	if err != nil {
		return verdict.Errorf("tasks/get: %v", err)
	}
	final := got
	if !got.Terminal() {
		if final, _, err = op.RunToEnd(ctx); err != nil {
			return verdict.Errorf("running the task: %v", err)
		}
	}
	if final.Status != mcp.TaskCancelled {
		return verdict.Passf("the request-level cancel at seq %d left the task alone; it ended %s", seq, final.Status)
	}
	ctlFinal, _, err := ctl.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("running the control task: %v", err)
	}
	if o := unprompted(e, ctl, ctlFinal.Status, "the control task, which nobody cancelled"); o != nil {
		return *o
	}
	at := firstStatusSeq(e, op.Task.TaskID, mcp.TaskCancelled, seq)
	if got.Status == mcp.TaskCancelled {
		return e.Breaks("CAN-4", []string{"the task is untouched: only tasks/cancel cancels a task (the control task nobody cancelled ended " + ctlFinal.Status + ")"},
			"the task became cancelled after notifications/cancelled", at)
	}
	return e.Breaks("CAN-4", []string{"the task ends on its own, not cancelled (as the control task nobody cancelled did: " + ctlFinal.Status + ")"}, "it ended cancelled", at)
}

func taskResultAfterCancel(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "rc"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	res, err := e.S.StartTaskResult(ctx, op.Task.TaskID)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	// The tasks/result must be in the server's hands before the cancel:
	// the counters say so on a controlled target; elsewhere a prompt
	// request behind it does (a window would let the task run out).
	if e.Control != nil {
		if err := e.Quiesce(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
	} else {
		e.Barrier(ctx)
	}
	if _, err := e.S.CancelTask(ctx, op.Task.TaskID); err != nil {
		if code, isRPC := probe.RPCCode(err); isRPC && code == jsonrpc.CodeInvalidParams {
			return verdict.Unexercised("the task ended before the cancel (A-15)")
		}
		return verdict.Errorf("tasks/cancel: %v", err)
	}
	wctx, cancel, wait := e.WithPatience(ctx)
	defer cancel()
	resp, err := res.Await(wctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return e.Breaks("TSK-47", []string{"the blocked tasks/result is answered once tasks/cancel made the task terminal (an error or a result)"},
				fmt.Sprintf("no answer to tasks/result %s within %v of the cancel", res.ID, wait), 0)
		}
		return verdict.Errorf("%v", err)
	}
	if resp.Error != nil {
		return verdict.Infof("the blocked tasks/result was answered with error %d %q (ambiguity A-4)", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false))
	}
	return verdict.Infof("the blocked tasks/result was answered with a result (ambiguity A-4): %s", chrono.Sanitize(clip(string(resp.Result), 120), false))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func taskWorkerStops(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, _, o := cancelMid(ctx, e, "ws")
	if o != nil {
		return *o
	}
	before, _, err := op.Counter(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	ended := op.Checkpoint(ctx, "end")
	after, running, err := op.Counter(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	switch {
	case after > before:
		return e.Broke(verdict.Req("TSK-64").Clause("SHOULD"), []string{"the worker stops: its counter stays at " + fmt.Sprint(before) + " after tasks/cancel"},
			fmt.Sprintf("the counter went from %d to %d after the cancel", before, after), 0)
	case ended != nil || running:
		return e.Broke(verdict.Req("TSK-64").Clause("SHOULD"), []string{"the worker ends after tasks/cancel"}, "the worker is still running", 0)
	}
	return verdict.Passf("the counter stayed at %d and the worker ended", after)
}

func taskResultEquivalence(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "re"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	final, _, err := op.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("running the task: %v", err)
	}
	if o := unprompted(e, op, final.Status, "running the task to its end"); o != nil {
		return *o
	}
	c, err := e.S.StartTaskResult(ctx, op.Task.TaskID)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := c.Await(ctx)
	if err != nil {
		return verdict.Errorf("tasks/result: %v", err)
	}
	_, seq := c.Response()
	if resp.Error != nil {
		if final.Status == mcp.TaskCompleted {
			return e.Breaks("TSK-48", []string{"the successful result of the underlying tools/call"}, fmt.Sprintf("error %d", resp.Error.Code), seq)
		}
		return verdict.Infof("the task ended %s and tasks/result answered error %d", final.Status, resp.Error.Code)
	}
	var r struct {
		Content *json.RawMessage `json:"content"`
	}
	if json.Unmarshal(resp.Result, &r) != nil || r.Content == nil {
		return e.Breaks("TSK-48", []string{"a CallToolResult (with content)"}, probe.Describe(e.EventAt(seq)), seq)
	}
	id, ok := peer.RelatedTaskID(resp.Result)
	if !ok || id != op.Task.TaskID {
		return e.Breaks("TSK-55", []string{fmt.Sprintf("_meta %q.taskId = %q", mcp.MetaRelatedTask, op.Task.TaskID)}, probe.Describe(e.EventAt(seq)), seq)
	}
	return verdict.Passf("tasks/result returned a CallToolResult tied to task %s", chrono.Sanitize(id, false))
}

func taskResultError(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "er", Free: true, Ticks: 1, End: "error"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	final, _, err := op.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := unprompted(e, op, final.Status, "running the task to its end"); o != nil {
		return *o
	}
	if final.Status != mcp.TaskFailed {
		return e.Breaks("TSK-77", []string{"status failed for a request that ended in a JSON-RPC error"}, "status "+chrono.Sanitize(final.Status, false), 0)
	}
	if final.StatusMessage == "" {
		return e.Breaks("TSK-75", []string{"a statusMessage with diagnostic information"}, "no statusMessage", 0)
	}
	err = e.S.Request(ctx, mcp.MethodTasksResult, map[string]any{"taskId": op.Task.TaskID}, nil)
	if _, isRPC := probe.RPCCode(err); !isRPC {
		return e.Breaks("TSK-77", []string{"tasks/result returns the same JSON-RPC error"}, fmt.Sprintf("%v", err), 0)
	}
	return verdict.Passf("failed with a statusMessage; tasks/result answered the error")
}

func taskIsErrorFails(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "ie", Free: true, Ticks: 1, End: "fail"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	final, _, err := op.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := unprompted(e, op, final.Status, "running the task to its end"); o != nil {
		return *o
	}
	var raw json.RawMessage
	rerr := e.S.Request(ctx, mcp.MethodTasksResult, map[string]any{"taskId": op.Task.TaskID}, &raw)
	if rerr != nil {
		return e.Breaks("TSK-78", []string{"a successful response with the CallToolResult (isError true)"}, chrono.Sanitize(rerr.Error(), false), 0)
	}
	if final.Status != mcp.TaskFailed {
		return e.Breaks("TSK-76", []string{"status failed for a tool result with isError true"}, "status "+chrono.Sanitize(final.Status, false), 0)
	}
	return verdict.Passf("failed; tasks/result returned the isError result")
}

func taskResultBlocks(ctx context.Context, e *probe.Env) verdict.Outcome {
	if e.Control == nil {
		return resultBlocksOnWire(ctx, e)
	}
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "rb", Ticks: 2})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	c, err := e.S.StartTaskResult(ctx, op.Task.TaskID)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if got, err := e.S.GetTask(ctx, op.Task.TaskID); err != nil {
		return e.Breaks("TSK-20", []string{"tasks/get is served while tasks/result blocks"}, chrono.Sanitize(err.Error(), false), 0)
	} else if got.Terminal() {
		if o := unprompted(e, op, got.Status, "the gated task tasks/result waits for"); o != nil {
			return *o
		}
		return verdict.Errorf("the gated task ended on its own")
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	select {
	case <-c.Done():
		_, seq := c.Response()
		return e.Breaks("TSK-47", []string{"no answer to tasks/result while the task is working"}, probe.Describe(e.EventAt(seq)), seq)
	default:
	}
	if err := op.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, e.TaskBudget())
	defer cancel()
	resp, err := c.Await(wctx)
	if err != nil {
		return e.Breaks("TSK-47", []string{"tasks/result answered once the task completed"}, chrono.Sanitize(err.Error(), false), 0)
	}
	if resp.Error != nil {
		return e.Breaks("TSK-48", []string{"the underlying result"}, fmt.Sprintf("error %d", resp.Error.Code), 0)
	}
	return verdict.Passf("tasks/result waited for the task and then answered")
}

func taskUnknownID(ctx context.Context, e *probe.Env) verdict.Outcome {
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		seq := e.Log.Len() + 1
		err := e.S.Request(ctx, m, map[string]any{"taskId": "mcpflight-no-such-task"}, nil)
		code, isRPC := probe.RPCCode(err)
		if !isRPC || code != jsonrpc.CodeInvalidParams {
			actual := "a result"
			if err != nil {
				actual = chrono.Sanitize(err.Error(), false)
			}
			return e.Breaks("TSK-68", []string{m + " for an unknown taskId gets -32602"}, actual, seq)
		}
	}
	return verdict.Passf("tasks/get, tasks/result and tasks/cancel answered -32602")
}

func taskIDSourceOfTruth(ctx context.Context, e *probe.Env) verdict.Outcome {
	a, err := e.StartTask(ctx, probe.TaskSpec{Key: "sa"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	b, err := e.StartTask(ctx, probe.TaskSpec{Key: "sb"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	defer func() { _ = a.ReleaseAll(context.WithoutCancel(ctx)); _ = b.ReleaseAll(context.WithoutCancel(ctx)) }()
	call, err := e.S.Start(ctx, mcp.MethodTasksGet, map[string]any{
		"taskId":    a.Task.TaskID,
		mcp.MetaKey: map[string]any{mcp.MetaRelatedTask: map[string]any{"taskId": b.Task.TaskID}},
	})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, wait, err := e.AwaitAnswer(ctx, call)
	switch {
	case errors.Is(err, probe.ErrUnanswered):
		return e.Broke(verdict.Req("TSK-52").Clause("MUST"), []string{"the related-task metadata is ignored; tasks/get answers about task A"},
			fmt.Sprintf("no answer to tasks/get %s (seq %d) within %v: %v", call.ID, call.SentSeq, wait.Round(time.Millisecond), err), call.SentSeq)
	case err != nil:
		return verdict.Errorf("%v", err)
	}
	_, seq := call.Response()
	if resp.Error != nil {
		return e.Broke(verdict.Req("TSK-52").Clause("MUST"), []string{"the related-task metadata is ignored; task A is returned"}, probe.Describe(e.EventAt(seq)), seq)
	}
	got, _ := peer.ParseTask(resp.Result)
	if got.TaskID != a.Task.TaskID {
		return e.Breaks("TSK-51", []string{"task " + a.Task.TaskID}, probe.Describe(e.EventAt(seq)), seq)
	}
	return verdict.Passf("params.taskId won over the related-task metadata")
}

func taskListPagination(ctx context.Context, e *probe.Env) verdict.Outcome {
	if !e.S.Server().Tasks().List {
		return verdict.Skipf("the server does not declare tasks.list")
	}
	ids := map[string]int{}
	for i := range 3 {
		op, err := e.StartTask(ctx, probe.TaskSpec{Key: fmt.Sprintf("lp%d", i), Free: true, Ticks: 1})
		if err != nil {
			return probe.CreateOutcome(err)
		}
		ids[op.Task.TaskID] = 0
	}
	all, pages, err := probe.ListAllTasks(ctx, e.S)
	if err != nil {
		return e.Breaks("TSK-60", []string{"tasks/list pages end with no nextCursor"}, chrono.Sanitize(err.Error(), false), 0)
	}
	for _, t := range all {
		if _, ok := ids[t.TaskID]; ok {
			ids[t.TaskID]++
		}
	}
	for id, n := range ids {
		if n != 1 {
			return e.Breaks("TSK-62", []string{"every task retrievable by tasks/get is listed exactly once"}, fmt.Sprintf("task %s listed %d times over %d pages", chrono.Sanitize(id, false), n, pages), 0)
		}
	}
	_, err = e.S.ListTasks(ctx, "mcpflight-bogus-cursor")
	if code, isRPC := probe.RPCCode(err); !isRPC || code != jsonrpc.CodeInvalidParams {
		return e.Breaks("TSK-69", []string{"error -32602 for an invalid cursor"}, fmt.Sprintf("%v", err), 0)
	}
	return verdict.Passf("%d tasks over %d pages, each once; a bogus cursor got -32602", len(all), pages)
}

func taskListIsolation(ctx context.Context, e *probe.Env) verdict.Outcome {
	if !e.S.Server().Tasks().List {
		return verdict.Skipf("the server does not declare tasks.list")
	}
	if e.Open == nil {
		return verdict.Skipf("the runner offers no second session")
	}
	other, err := e.Open(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	oe := *e
	oe.S = other
	oe.Control = control.Detect(other)
	op, err := oe.StartTask(ctx, probe.TaskSpec{Key: "iso", Free: true, Ticks: 1})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	all, _, err := probe.ListAllTasks(ctx, e.S)
	if err != nil {
		return verdict.Errorf("tasks/list: %v", err)
	}
	for _, t := range all {
		if t.TaskID == op.Task.TaskID {
			return e.Breaks("TSK-84", []string{"tasks/list lists only the requestor's own tasks"}, "it listed task "+chrono.Sanitize(t.TaskID, false)+" of another session", 0)
		}
	}
	return verdict.Passf("the other session's task was not listed (%d tasks listed)", len(all))
}

func taskTTLExpiry(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "ttl", TTL: 1})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	if op.Task.TTL != nil && *op.Task.TTL != 1 {
		return verdict.Infof("the server overrode the ttl of 1 ms with %v (TSK-40)", *op.Task.TTL)
	}
	wctx, cancel := context.WithTimeout(ctx, e.Grace)
	defer cancel()
	for {
		_, err := e.S.GetTask(wctx, op.Task.TaskID)
		if code, isRPC := probe.RPCCode(err); isRPC && code == jsonrpc.CodeInvalidParams {
			return verdict.Passf("the task was gone after its ttl (-32602)")
		} else if isRPC {
			return e.Breaks("TSK-68", []string{"-32602 for a task that no longer exists"}, fmt.Sprintf("error %d", code), 0)
		}
		if wctx.Err() != nil {
			return verdict.Infof("the task was kept past its ttl of 1 ms (deletion is a MAY, TSK-42)")
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
		}
	}
}

func taskPollInterval(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "pi"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	defer op.ReleaseAll(context.WithoutCancel(ctx))
	got, err := e.S.GetTask(ctx, op.Task.TaskID)
	if err != nil {
		return verdict.Errorf("tasks/get: %v", err)
	}
	for _, t := range []peer.Task{op.Task, got} {
		if t.PollInterval != nil && *t.PollInterval <= 0 {
			return e.Broke(verdict.Req("TSK-43").Clause("MAY").Except(verdict.Warn,
				"including pollInterval is a MAY, but a value of 0 or less turns a requestor that respects it (TSK-16, SHOULD) into a busy poll"),
				[]string{"pollInterval absent, or a positive number of milliseconds a requestor can respect (TSK-16)"},
				fmt.Sprintf("pollInterval %v", *t.PollInterval), 0)
		}
	}
	if got.PollInterval == nil {
		return verdict.Infof("no pollInterval suggested")
	}
	return verdict.Passf("pollInterval %v ms", *got.PollInterval)
}

func taskProgressLifetime(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "pt", Progress: true})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	if _, _, err := op.RunToEnd(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	e.S.EndProgress(op.Call)
	after := 0
	for _, p := range op.Call.ProgressSeen() {
		if p.Seq > op.RespSeq {
			after++
		}
	}
	if o := e.JudgeProgress(op.Call); o != nil {
		return *o
	}
	if after == 0 {
		return verdict.Infof("no progress after the CreateTaskResult (progress is optional)")
	}
	return verdict.Passf("%d progress notifications after the CreateTaskResult under token %s", after, op.Call.Token)
}
