package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// tasks2026Cases cover the tasks extension (io.modelcontextprotocol/tasks)
// of 2026-07-28, from the extension's text: server-directed task
// creation, declared per request; tasks/get with the result inlined;
// tasks/update and tasks/cancel as acknowledgements; tasks/result and
// tasks/list removed.
func tasks2026Cases() []probe.Case {
	return []probe.Case{
		// TSX-8 MUST: "Servers MUST set `resultType` to `"task"` when returning a
		//   `CreateTaskResult` so that clients can distinguish it from a standard result."
		// TSX-16 MUST NOT: "A server MUST NOT return `CreateTaskResult` until the task is durably
		//   created — that is, until a `tasks/get` for the returned `taskId` would resolve."
		{
			ID:       "tasks26/declared-call-gets-durable-task",
			Title:    "a tools/call that declares the extension gets a task that tasks/get finds at once",
			Reqs:     []string{"TSX-8", "TSX-16"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    "tools/call of the profile's task tool, declaring io.modelcontextprotocol/tasks in the request's clientCapabilities; at once tasks/get of the task ID",
			Expect:   `resultType "task" with a taskId, and tasks/get finds the task (no -32602); an ordinary result is the server's choice (TSX-1)`,
			Run:      declaredCallGetsDurableTask,
		},
		// TSX-2 MUST NOT: "A server MUST NOT return `CreateTaskResult` to a client that did not
		//   include the extension capability on its request, regardless of prior declarations."
		// TSX-5 MUST: "If a server is unable to service a request to a client that does not
		//   declare this extension capability without returning `CreateTaskResult`, the server MUST
		//   return an error with the code `-32021` (Missing Required Client Capability), indicating
		//   the required extension in the error response:"
		{
			ID:       "tasks26/undeclared-call-no-task",
			Title:    "a tools/call that does not declare the extension gets no task",
			Reqs:     []string{"TSX-2", "TSX-5"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    "tools/call of the task tool, and of the slow tool, without the extension in clientCapabilities",
			Expect:   "an ordinary result, or -32021 naming the extension in data.requiredCapabilities; never resultType \"task\"",
			Run:      undeclaredCallNoTask,
		},
		// TSX-56 MUST: "Servers MUST return this error for non-declaring clients issuing
		//   `tasks/get`, `tasks/update`, and `tasks/cancel` requests."
		// RPC-55 MUST: "A server MUST NOT rely on capabilities the client has not declared. If
		//   processing a request requires a capability the client did not include in
		//   `io.modelcontextprotocol/clientCapabilities`, the server MUST return a
		//   `MissingRequiredClientCapabilityError` (`-32021`) whose `data.requiredCapabilities`
		//   lists the missing capabilities."
		// RPC-53 MUST (2026-07-28 only): "On HTTP, the response status MUST be `400 Bad Request`."
		{
			ID:        "tasks26/methods-need-extension",
			Title:     "tasks/get, tasks/update and tasks/cancel without the extension declared get -32021",
			Reqs:      []string{"TSX-56", "RPC-55"},
			ReqsUnder: map[string][]string{spec.V20260728: {"RPC-53"}},
			Versions:  []string{spec.V20260728},
			Needs:     probe.Needs{TasksExtension: true},
			Sends:     "a task created with the extension declared; then tasks/get, tasks/update and tasks/cancel of it without the declaration",
			Expect:    "each answered -32021 with data.requiredCapabilities (HTTP 400)",
			Run:       methodsNeedExtension,
		},
		// TSX-65 MUST: "`tasks/result` is removed; clients calling it MUST receive `-32601`
		//   (Method Not Found)."
		// HTTP-81 MUST: "If the server does not implement the requested RPC method, it MUST
		//   respond with `404 Not Found` and a JSON-RPC error with code `-32601` (`Method not
		//   found`)."
		{
			ID:       "tasks26/removed-methods",
			Title:    "tasks/result and tasks/list are unknown methods",
			Reqs:     []string{"TSX-65", "HTTP-81"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{},
			Sends:    "tasks/list and tasks/result (of a task ID never issued), declaring the extension",
			Expect:   "-32601 for both (over HTTP with 404)",
			Run:      removedTaskMethods,
		},
		// TSX-44 MUST: "On success, the server MUST acknowledge the request with an empty result.
		//   Servers SHOULD return a JSON-RPC error if the `taskId` does not correspond to a known
		//   task. Cancellation processing is _eventually consistent_ — the task's observable status
		//   MAY remain `working` (or some other non-terminal status) after the ack, and MAY
		//   ultimately reach a terminal status other than `cancelled` if the work finished before
		//   cancellation could take effect."
		// TSX-47 MUST: "The `resultType` field MUST be set to `"complete"` on `CancelTaskResult`
		//   as it is the standard result shape for the `tasks/cancel` request."
		{
			ID:       "tasks26/cancel-acknowledged",
			Title:    "tasks/cancel is acknowledged with an empty result, also for a terminal task",
			Reqs:     []string{"TSX-44", "TSX-47"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    "tasks/cancel of a working task; tasks/get until it is terminal (its worker released); tasks/cancel again; tasks/cancel of a task that completed",
			Expect:   `each cancel answered with an empty result (resultType "complete"); whatever status the task reaches (eventually consistent: cancelled, completed or still working) is not a violation`,
			Run:      cancelAcknowledged,
		},
		// TSX-27 MUST: "If the status is `completed`, the server MUST return a `Task` object with
		//   status `completed` and a `result` field containing the final result of the task."
		// TSX-29 MUST: "If the status is `failed`, the server MUST return a `Task` object with
		//   status `failed` and the error that occurred during execution."
		// TSX-60 MUST: "If the underlying request resulted in a JSON-RPC error, the task uses
		//   `failed` status and the `error` field MUST contain that JSON-RPC error."
		// TSX-30 MUST: "The `resultType` field MUST be set to `"complete"` on this object as it is
		//   the standard result shape for the `tasks/get` request."
		{
			ID:       "tasks26/get-inlines-terminal-result",
			Title:    "tasks/get of a terminal task inlines its result or error and answers resultType complete",
			Reqs:     []string{"TSX-27", "TSX-29", "TSX-60", "TSX-30"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    "a task run to completion; with the control extension also one whose tool fails with a JSON-RPC error; tasks/get of each, while working and once terminal",
			Expect:   `resultType "complete" on every tasks/get; completed with a result, failed with the JSON-RPC error`,
			Run:      getInlinesTerminalResult,
		},
		// TSX-14 MUST NOT: "The `failed` status MUST NOT be used to represent non-JSON-RPC errors,
		//   such as a tool result that completed with `isError: true`."
		// TSX-59 MUST: "Errors within the context of a protocol method result MUST use the
		//   `completed` status with the error details in the `result` field."
		// TSX-61 MUST: "If the request completed with a result (even if `isError: true` for tool
		//   results), the task uses `completed` status and the `result` field MUST contain that
		//   result."
		// TSX-27 MUST: "If the status is `completed`, the server MUST return a `Task` object with
		//   status `completed` and a `result` field containing the final result of the task."
		{
			ID:       "tasks26/iserror-completes",
			Title:    "a tool result with isError completes the task",
			Reqs:     []string{"TSX-14", "TSX-59", "TSX-61", "TSX-27"},
			Versions: []string{spec.V20260728},
			Needs: probe.Needs{TasksExtension: true, Control: true,
				ControlFor: "the task tool's end=\"fail\" (a task whose tool result has isError): the wire cannot make a task's tool fail, and the profile has no field naming a tool that fails"},
			Sends:  `the reference task tool with end "fail" (a result with isError), run to its end`,
			Expect: "the task ends completed, its result inlined with isError true; never failed",
			Run:    isErrorCompletes,
		},
		// TSX-42 SHOULD/MAY: "A server SHOULD ignore any `inputResponses` responses mapped to a
		//   key that is not currently outstanding for the task — including keys that were never
		//   issued, keys that have already been answered, and keys whose corresponding request has
		//   been superseded. A server MAY accept a partial set of responses (a strict subset of
		//   currently-outstanding keys); in that case the task remains in `input_required` until the
		//   remaining responses arrive."
		// TSX-43 MUST: "The `resultType` field MUST be set to `"complete"` on `UpdateTaskResult`
		//   as it is the standard result shape for the `tasks/update` request."
		{
			ID:       "tasks26/update-unknown-key-acknowledged",
			Title:    "tasks/update with a key that is not outstanding is acknowledged",
			Reqs:     []string{"TSX-42", "TSX-43"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    "tasks/update of a working task with inputResponses for a key the server never issued",
			Expect:   `an empty result with resultType "complete" (the response is ignored), not an error`,
			Run:      updateUnknownKeyAcknowledged,
		},
		// TSX-2 MUST NOT: "A server MUST NOT return `CreateTaskResult` to a client that did not
		//   include the extension capability on its request, regardless of prior declarations."
		// RPC-57 MUST NOT: "Servers MUST NOT rely on prior requests over the same connection to
		//   establish context (e.g., capabilities, protocol version, client identity)."
		{
			ID:       "tasks26/capabilities-per-request",
			Title:    "a tasks extension declared on one request does not stick to later ones",
			Reqs:     []string{"TSX-2", "RPC-57"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true, SlowTool: true},
			Sends:    "tools/call of the slow tool without the declaration; tools/list with it; tools/call of the slow tool without it again",
			Expect:   "neither undeclared call gets resultType \"task\": each request is served on its own clientCapabilities",
			Run:      capabilitiesPerRequest,
		},
		// TSX-52 MUST: "When `tasks/get`, `tasks/update`, or `tasks/cancel` is sent over the
		//   Streamable HTTP transport, the client MUST set the `Mcp-Name` header to the value of
		//   `params.taskId`."
		// HTTP-103 MUST: "Servers that process the request body MUST reject requests where the
		//   values specified in the headers do not match the corresponding values in the request
		//   body."
		// HTTP-104 MUST: "When rejecting a request due to header validation failure, servers MUST
		//   return HTTP status `400 Bad Request` and MUST include a JSON-RPC error response using
		//   the following error code:"
		{
			ID:       "tasks26/mcp-name-task-id",
			Title:    "over HTTP, Mcp-Name carries the task ID of tasks/get and is checked against it",
			Reqs:     []string{"TSX-52", "HTTP-103", "HTTP-104"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true, HTTP: true},
			Sends:    "tasks/get of a task with Mcp-Name naming another task ID; then tasks/get with Mcp-Name set to params.taskId",
			Expect:   "400 and -32020 for the mismatch; the task for the matching header",
			Run:      mcpNameTaskID,
		},
		// SUB-1 MUST NOT: "The server MUST NOT send notification types the client has not
		//   explicitly requested."
		// TSX-48 MAY: "Servers MAY push status updates via `notifications/tasks` notifications in
		//   addition to servicing client polls:"
		// TSX-50 DEF: "Each notification carries a complete `DetailedTask` for the current status,
		//   identical to what `tasks/get` would have returned at that moment."
		{
			ID:       "tasks26/status-on-listen-stream",
			Title:    "notifications/tasks come on a subscriptions/listen stream only for the tasks it asked for",
			Reqs:     []string{"SUB-1", "TSX-48", "TSX-50"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    "two tasks A and B; subscriptions/listen with notifications.taskIds [A]; tasks/cancel of B, then of A",
			Expect:   "no notifications/tasks for B on the stream; for A (MAY) a DetailedTask as tasks/get shows it",
			Run:      statusOnListenStream,
		},
	}
}

// declareTasks declares the tasks extension in this request's
// clientCapabilities only (RPC-57: the next request declares nothing).
func declareTasks() peer.CallOption {
	return peer.WithMeta(mcp.MetaClientCapabilities, map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}})
}

// needTaskTool is the skip of a case that creates tasks with a profile
// that names no task tool, or nil. Needs.TasksExtension skipped the
// servers that do not list the extension.
func needTaskTool(e *probe.Env) *verdict.Outcome {
	if e.Profile.Task != nil {
		return nil
	}
	o := verdict.Skipf("profile names no task tool; pass --profile")
	return &o
}

// extTaskView is a DetailedTask as tasks/get (or a CreateTaskResult, or
// notifications/tasks) carries it: the Task at the top level.
type extTaskView struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	PollIntervalMs *float64        `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
	ResultType     *string         `json:"resultType"`
}

// resultType is the view's resultType, "complete" when absent (RPC-44).
func (v extTaskView) resultType() string {
	if v.ResultType == nil {
		return mcp.ResultTypeComplete
	}
	return *v.ResultType
}

func parseExtTaskView(raw json.RawMessage) (extTaskView, error) {
	var v extTaskView
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("the task is not a JSON object: %w", err)
	}
	return v, nil
}

// extTask is a task a case created.
type extTask struct {
	ID    string
	Key   string
	Ticks int
}

// taskArgs are the task tool's arguments: on a controlled target with the
// operation key, gated, two ticks and the extra arguments.
func taskArgs(e *probe.Env, key string, extra map[string]any) (map[string]any, int) {
	args := e.Profile.Task.CloneArgs()
	if e.Control == nil {
		return args, 0
	}
	args["key"], args["gated"], args["ticks"] = key, true, 2
	for k, v := range extra {
		args[k] = v
	}
	return args, 2
}

// durableOwner: a task a case creates must be found by tasks/get at once
// (TSX-16), which tasks26/declared-call-gets-durable-task judges.
var durableOwner = probe.Owner{Requirement: "TSX-16", Case: "tasks26/declared-call-gets-durable-task"}

// typedOwner: a CreateTaskResult has resultType "task" (TSX-8), which
// tasks26/declared-call-gets-durable-task judges.
var typedOwner = probe.Owner{Requirement: "TSX-8", Case: "tasks26/declared-call-gets-durable-task"}

// startExtTask creates a task (createExtTask) and makes sure tasks/get finds
// it at once: a task that cannot be found is TSX-16's, which another case
// judges, so the case ends blocked by that case.
func startExtTask(ctx context.Context, e *probe.Env, key string, extra map[string]any) (*extTask, *verdict.Outcome) {
	t, u := createExtTask(ctx, e, key, extra)
	switch {
	case u != nil && u.o != nil:
		return nil, u.o
	case u != nil:
		o := e.Blame("the task-creating tools/call", typedOwner, u.what)
		return nil, &o
	}
	if _, _, err := getExtTask(ctx, e, t.ID); err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			o := e.Blame("tasks/get of the task just created", durableOwner, chrono.Sanitize(err.Error(), false))
			return nil, &o
		}
		o := verdict.Errorf("tasks/get of the task just created: %v", err)
		return nil, &o
	}
	return t, nil
}

// untypedTask is how createExtTask ended without a task: an outcome (o),
// or a CreateTaskResult without resultType "task" (what, at seq), which
// breaks TSX-8 for the case that judges it and is a helper step's failure
// for the rest.
type untypedTask struct {
	o    *verdict.Outcome
	what string
	seq  uint64
}

// createExtTask calls the task tool declaring the extension and returns the
// task of its CreateTaskResult, or the outcome that ends the case: an
// ordinary result is the server's choice (TSX-1), never a violation.
func createExtTask(ctx context.Context, e *probe.Env, key string, extra map[string]any) (*extTask, *untypedTask) {
	args, ticks := taskArgs(e, key, extra)
	call, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Task.Name, "arguments": args}, declareTasks())
	if err != nil {
		o := verdict.Errorf("%v", err)
		return nil, &untypedTask{o: &o}
	}
	resp, err := awaitAnswer(ctx, e, call)
	if err != nil {
		o := verdict.Errorf("no answer to the task-creating tools/call: %v", err)
		return nil, &untypedTask{o: &o}
	}
	if resp.Error != nil {
		o := verdict.Errorf("the task-creating tools/call was refused: %s", chrono.Sanitize(peer.Error2026(resp.Error).Error(), false))
		return nil, &untypedTask{o: &o}
	}
	v, err := parseExtTaskView(resp.Result)
	_, rseq := call.Response()
	switch {
	case err != nil:
		o := verdict.Errorf("the CreateTaskResult: %v", err)
		return nil, &untypedTask{o: &o}
	case call.ResultType() != mcp.ResultTypeTask && v.TaskID != "":
		return nil, &untypedTask{what: fmt.Sprintf("a result with taskId %q and resultType %q", chrono.Sanitize(v.TaskID, false), chrono.Sanitize(call.ResultType(), false)), seq: rseq}
	case call.ResultType() != mcp.ResultTypeTask:
		o := verdict.Infof("the server answered the declared tools/call with an ordinary result (resultType %q): creating a task is its choice (TSX-1)", chrono.Sanitize(call.ResultType(), false))
		return nil, &untypedTask{o: &o}
	case v.TaskID == "":
		o := verdict.Errorf(`a resultType "task" result without a taskId (seq %d)`, rseq)
		return nil, &untypedTask{o: &o}
	}
	return &extTask{ID: v.TaskID, Key: key, Ticks: ticks}, nil
}

// releaseAll opens every gate of a controlled task's worker.
func (t *extTask) releaseAll(ctx context.Context, e *probe.Env) error {
	if e.Control == nil {
		return nil
	}
	gates := []string{t.Key + "/start"}
	for i := 1; i <= t.Ticks; i++ {
		gates = append(gates, fmt.Sprintf("%s/tick/%d", t.Key, i))
	}
	for _, g := range gates {
		if err := e.Control.Release(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// taskCall sends one task method for id and waits for its answer.
func taskCall(ctx context.Context, e *probe.Env, method string, params map[string]any, opts ...peer.CallOption) (*peer.Call, *jsonrpc.Message, error) {
	call, err := e.S.Start(ctx, method, params, opts...)
	if err != nil {
		return nil, nil, err
	}
	resp, err := awaitAnswer(ctx, e, call)
	if err != nil {
		return call, nil, fmt.Errorf("no answer to %s: %w", method, err)
	}
	return call, resp, nil
}

// getExtTask sends a declared tasks/get and parses the DetailedTask.
func getExtTask(ctx context.Context, e *probe.Env, id string) (extTaskView, uint64, error) {
	call, resp, err := taskCall(ctx, e, mcp.MethodTasksGet, map[string]any{"taskId": id}, declareTasks())
	if err != nil {
		return extTaskView{}, 0, err
	}
	_, seq := call.Response()
	if resp.Error != nil {
		return extTaskView{}, seq, peer.Error2026(resp.Error)
	}
	v, err := parseExtTaskView(resp.Result)
	return v, seq, err
}

// pollExtTaskTerminal polls tasks/get, at the task's pollIntervalMs (bounded),
// until it is terminal or Env.TaskBudget has passed; it returns the last
// view, its sequence number, and whether it is terminal.
func pollExtTaskTerminal(ctx context.Context, e *probe.Env, id string) (extTaskView, uint64, bool, error) {
	wctx, cancel := context.WithTimeout(ctx, e.TaskBudget())
	defer cancel()
	for {
		v, seq, err := getExtTask(wctx, e, id)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return v, seq, false, nil
			}
			return v, seq, false, err
		}
		if mcp.TaskTerminal(v.Status) {
			return v, seq, true, nil
		}
		t := time.NewTimer(probe.PollDelay(peer.Task{PollInterval: v.PollIntervalMs}))
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return v, seq, false, ctx.Err()
			}
			e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("task %s still %s after %v", chrono.Sanitize(id, false), chrono.Sanitize(v.Status, false), e.TaskBudget()))
			return v, seq, false, nil
		}
	}
}

// runExtTaskToEnd releases a task's worker and polls until it is terminal.
func runExtTaskToEnd(ctx context.Context, e *probe.Env, t *extTask) (extTaskView, uint64, *verdict.Outcome) {
	if err := t.releaseAll(ctx, e); err != nil {
		o := verdict.Errorf("%v", err)
		return extTaskView{}, 0, &o
	}
	v, seq, terminal, err := pollExtTaskTerminal(ctx, e, t.ID)
	if err != nil {
		o := verdict.Errorf("polling task %s: %s", chrono.Sanitize(t.ID, false), chrono.Sanitize(err.Error(), false))
		return v, seq, &o
	}
	if !terminal {
		o := verdict.Errorf("task %s was still %s after %v", chrono.Sanitize(t.ID, false), chrono.Sanitize(v.Status, false), e.TaskBudget())
		return v, seq, &o
	}
	return v, seq, nil
}

func declaredCallGetsDurableTask(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, u := createExtTask(ctx, e, "w", nil)
	switch {
	case u != nil && u.o != nil:
		return *u.o
	case u != nil:
		return e.Breaks("TSX-8", []string{`resultType "task" on a CreateTaskResult`}, u.what, u.seq)
	}
	v, seq, err := getExtTask(ctx, e, t.ID)
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return e.Breaks("TSX-16", []string{"tasks/get of the task ID of the CreateTaskResult, sent at once, finds the task"},
				fmt.Sprintf("tasks/get of %s answered %s", chrono.Sanitize(t.ID, false), chrono.Sanitize(err.Error(), false)), seq)
		}
		return verdict.Errorf("%v", err)
	}
	if v.TaskID != t.ID {
		return e.Breaks("TSX-16", []string{"tasks/get, sent at once, finds the task " + t.ID},
			fmt.Sprintf("tasks/get answered the task %q", chrono.Sanitize(v.TaskID, false)), seq)
	}
	if err := t.releaseAll(ctx, e); err != nil {
		return verdict.Errorf("%v", err)
	}
	return verdict.Passf(`resultType "task" with task %s, which tasks/get found at once (%s)`, chrono.Sanitize(t.ID, false), chrono.Sanitize(v.Status, false))
}

// undeclaredCall judges one tools/call of tool without the declaration:
// a task is TSX-2 broken; -32021 must name the extension (TSX-5).
func undeclaredCall(ctx context.Context, e *probe.Env, tool string, args map[string]any, mayRefuse bool) (string, *verdict.Outcome) {
	call, resp, err := taskCall(ctx, e, mcp.MethodToolsCall, map[string]any{"name": tool, "arguments": args})
	if err != nil {
		o := verdict.Errorf("%v", err)
		return "", &o
	}
	_, seq := call.Response()
	if resp.Error != nil {
		var mc *peer.MissingCapabilityError
		if !errors.As(peer.Error2026(resp.Error), &mc) {
			if !mayRefuse {
				return fmt.Sprintf("%s: error %d", tool, resp.Error.Code), nil
			}
			o := e.Breaks("TSX-5", []string{"an ordinary result, or -32021 naming " + mcp.ExtensionTasks},
				fmt.Sprintf("%s answered error %d %s", tool, resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)
			return "", &o
		}
		var req struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		_ = json.Unmarshal(mc.Required, &req)
		if _, ok := req.Extensions[mcp.ExtensionTasks]; !ok {
			o := e.Breaks("TSX-5", []string{"-32021 whose data.requiredCapabilities.extensions names " + mcp.ExtensionTasks},
				"-32021 with data "+chrono.Sanitize(string(resp.Error.Data), false), seq)
			return "", &o
		}
		return tool + ": -32021 naming the extension", nil
	}
	if call.ResultType() == mcp.ResultTypeTask {
		o := e.Breaks("TSX-2", []string{"no CreateTaskResult for a request that did not declare " + mcp.ExtensionTasks},
			fmt.Sprintf(`%s answered resultType "task"`, tool), seq)
		return "", &o
	}
	return tool + ": an ordinary result", nil
}

// slowArgs are the slow tool's arguments for a call that runs to its end
// at once on a controlled target.
func slowArgs(e *probe.Env, key string) map[string]any {
	args := e.Profile.Slow.CloneArgs()
	if e.Control != nil {
		args["key"], args["gated"], args["steps"] = key, false, 1
	}
	return args
}

func undeclaredCallNoTask(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	args, _ := taskArgs(e, "w", map[string]any{"gated": false})
	var seen []string
	got, o := undeclaredCall(ctx, e, e.Profile.Task.Name, args, true)
	if o != nil {
		return *o
	}
	seen = append(seen, got)
	if e.Profile.Slow != nil {
		got, o := undeclaredCall(ctx, e, e.Profile.Slow.Name, slowArgs(e, "s"), false)
		if o != nil {
			return *o
		}
		seen = append(seen, got)
	}
	return verdict.Passf("no task without the declaration: %s", strings.Join(seen, "; "))
}

func methodsNeedExtension(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, o := startExtTask(ctx, e, "w", nil)
	if o != nil {
		return *o
	}
	h, _ := e.S.Conn().(*transport.HTTP)
	for _, m := range []struct {
		method string
		params map[string]any
	}{
		{mcp.MethodTasksGet, map[string]any{"taskId": t.ID}},
		{mcp.MethodTasksUpdate, map[string]any{"taskId": t.ID, "inputResponses": map[string]any{}}},
		{mcp.MethodTasksCancel, map[string]any{"taskId": t.ID}},
	} {
		call, resp, err := taskCall(ctx, e, m.method, m.params)
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		_, seq := call.Response()
		expected := []string{m.method + " without the extension declared answered -32021 (MissingRequiredClientCapability)"}
		if resp.Error == nil {
			return e.Breaks("TSX-56", expected, m.method+" was served without the declaration: either the server does not require it, or the declaration of the request that created the task stuck to this one (RPC-57)", seq)
		}
		var mc *peer.MissingCapabilityError
		if !errors.As(peer.Error2026(resp.Error), &mc) {
			return e.Breaks("TSX-56", expected, fmt.Sprintf("error %d %s", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)
		}
		if mc.Malformed != "" || len(mc.Names) == 0 {
			return e.Breaks("RPC-55", []string{"-32021 whose data.requiredCapabilities lists the missing capabilities"},
				"-32021 with data "+chrono.Sanitize(string(resp.Error.Data), false), seq)
		}
		if h != nil && h.StatusOf(call.ID) != http.StatusBadRequest {
			return e.Breaks("RPC-53", []string{"HTTP 400 for the -32021 of " + m.method}, fmt.Sprintf("HTTP %d", h.StatusOf(call.ID)), seq)
		}
	}
	if err := t.releaseAll(ctx, e); err != nil {
		return verdict.Errorf("%v", err)
	}
	return verdict.Passf("tasks/get, tasks/update and tasks/cancel without the declaration each got -32021")
}

func removedTaskMethods(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, _ := e.S.Conn().(*transport.HTTP)
	for _, m := range []struct {
		method string
		params map[string]any
	}{
		{mcp.MethodTasksList, map[string]any{}},
		{mcp.MethodTasksResult, map[string]any{"taskId": "mcpflight-no-such-task"}},
	} {
		call, resp, err := taskCall(ctx, e, m.method, m.params, declareTasks())
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		_, seq := call.Response()
		expected := []string{m.method + " answered -32601 (Method not found): 2026-07-28 removed it"}
		switch {
		case resp.Error == nil:
			return e.Breaks("TSX-65", expected, m.method+" was served", seq)
		case resp.Error.Code != jsonrpc.CodeMethodNotFound:
			return e.Breaks("TSX-65", expected, fmt.Sprintf("error %d %s", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)
		case h != nil && h.StatusOf(call.ID) != http.StatusNotFound:
			return e.Breaks("HTTP-81", []string{"HTTP 404 with the -32601 of " + m.method}, fmt.Sprintf("HTTP %d", h.StatusOf(call.ID)), seq)
		}
	}
	return verdict.Passf("tasks/list and tasks/result answered -32601")
}

// judgeAck judges a tasks/cancel or tasks/update answer: an empty result
// (nothing but resultType and _meta), whose resultType is "complete".
func judgeAck(e *probe.Env, call *peer.Call, resp *jsonrpc.Message, emptyRule, typeRule string) *verdict.Outcome {
	_, seq := call.Response()
	what := call.Method + " of a task"
	if resp.Error != nil {
		o := e.Breaks(emptyRule, []string{what + " acknowledged with an empty result"},
			fmt.Sprintf("error %d %s", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)
		return &o
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(resp.Result, &members); err != nil {
		o := e.Breaks(emptyRule, []string{what + " acknowledged with an empty result"}, "a result that is not an object", seq)
		return &o
	}
	var extra []string
	for k := range members {
		if k != mcp.ResultTypeKey && k != mcp.MetaKey {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		o := e.Breaks(emptyRule, []string{what + " acknowledged with an empty result"},
			"a result with "+chrono.Sanitize(strings.Join(extra, ", "), false), seq)
		return &o
	}
	if rt := call.ResultType(); rt != mcp.ResultTypeComplete {
		o := e.Breaks(typeRule, []string{`resultType "complete" on the ` + call.Method + " result"}, fmt.Sprintf("resultType %q", chrono.Sanitize(rt, false)), seq)
		return &o
	}
	return nil
}

// cancelExtTask sends a declared tasks/cancel and judges its acknowledgement.
func cancelExtTask(ctx context.Context, e *probe.Env, id string) *verdict.Outcome {
	call, resp, err := taskCall(ctx, e, mcp.MethodTasksCancel, map[string]any{"taskId": id}, declareTasks())
	if err != nil {
		o := verdict.Errorf("%v", err)
		return &o
	}
	return judgeAck(e, call, resp, "TSX-44", "TSX-47")
}

func cancelAcknowledged(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, o := startExtTask(ctx, e, "w", nil)
	if o != nil {
		return *o
	}
	if o := cancelExtTask(ctx, e, t.ID); o != nil {
		return *o
	}
	// The worker is let go, so that one that ignores the cancel could
	// complete: eventual consistency allows that too (TSX-44, TSX-45).
	if err := t.releaseAll(ctx, e); err != nil {
		return verdict.Errorf("%v", err)
	}
	v, _, terminal, err := pollExtTaskTerminal(ctx, e, t.ID)
	if err != nil {
		return verdict.Errorf("polling task %s: %s", chrono.Sanitize(t.ID, false), chrono.Sanitize(err.Error(), false))
	}
	after := fmt.Sprintf("after the cancel the task ended %s", chrono.Sanitize(v.Status, false))
	if !terminal {
		after = fmt.Sprintf("after the cancel the task stayed %s for %v (eventually consistent: allowed)", chrono.Sanitize(v.Status, false), e.TaskBudget())
	}
	if o := cancelExtTask(ctx, e, t.ID); o != nil {
		return *o
	}
	done, o := startExtTask(ctx, e, "d", nil)
	if o != nil {
		return *o
	}
	end, _, o := runExtTaskToEnd(ctx, e, done)
	if o != nil {
		return *o
	}
	if o := cancelExtTask(ctx, e, done.ID); o != nil {
		return *o
	}
	return verdict.Passf("every tasks/cancel got an empty result: %s, it was acknowledged again, and so was the cancel of a task already %s", after, chrono.Sanitize(end.Status, false))
}

// cancelOwner: tasks/cancel is acknowledged (TSX-44), which
// tasks26/cancel-acknowledged judges.
var cancelOwner = probe.Owner{Requirement: "TSX-44", Case: "tasks26/cancel-acknowledged"}

// judgeGetType judges a tasks/get answer's resultType (TSX-30).
func judgeGetType(e *probe.Env, v extTaskView, seq uint64) *verdict.Outcome {
	if rt := v.resultType(); rt != mcp.ResultTypeComplete {
		o := e.Breaks("TSX-30", []string{`resultType "complete" on every tasks/get result`}, fmt.Sprintf("resultType %q (status %s)", chrono.Sanitize(rt, false), chrono.Sanitize(v.Status, false)), seq)
		return &o
	}
	return nil
}

func getInlinesTerminalResult(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, o := startExtTask(ctx, e, "w", map[string]any{"end": "complete"})
	if o != nil {
		return *o
	}
	working, seq, err := getExtTask(ctx, e, t.ID)
	if err != nil {
		return verdict.Errorf("tasks/get: %v", err)
	}
	if o := judgeGetType(e, working, seq); o != nil {
		return *o
	}
	v, seq, o := runExtTaskToEnd(ctx, e, t)
	if o != nil {
		return *o
	}
	if o := judgeGetType(e, v, seq); o != nil {
		return *o
	}
	switch v.Status {
	case mcp.TaskCompleted:
		if len(v.Result) == 0 || string(v.Result) == "null" {
			return e.Breaks("TSX-27", []string{"tasks/get of a completed task with its result inlined"}, "status completed without a result field", seq)
		}
	case mcp.TaskFailed:
		if len(v.Error) == 0 || string(v.Error) == "null" {
			return e.Breaks("TSX-29", []string{"tasks/get of a failed task with its error"}, "status failed without an error field", seq)
		}
	}
	summary := fmt.Sprintf("tasks/get of task %s: %s with its %s inlined", chrono.Sanitize(t.ID, false), v.Status, map[bool]string{true: "result", false: "error"}[v.Status == mcp.TaskCompleted])
	if e.Control == nil {
		return verdict.Passf("%s (a tool error needs the control extension's task tool)", summary)
	}
	f, o := startExtTask(ctx, e, "f", map[string]any{"end": "error"})
	if o != nil {
		return *o
	}
	fv, fseq, o := runExtTaskToEnd(ctx, e, f)
	if o != nil {
		return *o
	}
	if o := judgeGetType(e, fv, fseq); o != nil {
		return *o
	}
	var rpcErr struct {
		Code *int `json:"code"`
	}
	switch {
	case fv.Status != mcp.TaskFailed:
		return e.Breaks("TSX-60", []string{"a task whose request ended in a JSON-RPC error is failed, with that error"},
			fmt.Sprintf("status %s", chrono.Sanitize(fv.Status, false)), fseq)
	case len(fv.Error) == 0 || json.Unmarshal(fv.Error, &rpcErr) != nil || rpcErr.Code == nil:
		return e.Breaks("TSX-29", []string{"tasks/get of a failed task with the JSON-RPC error in its error field"},
			"status failed with error "+chrono.Sanitize(string(fv.Error), false), fseq)
	}
	return verdict.Passf("%s; the task whose tool failed with a JSON-RPC error: failed with error %d inlined; resultType complete on every tasks/get", summary, *rpcErr.Code)
}

func isErrorCompletes(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, o := startExtTask(ctx, e, "w", map[string]any{"end": "fail"})
	if o != nil {
		return *o
	}
	v, seq, o := runExtTaskToEnd(ctx, e, t)
	if o != nil {
		return *o
	}
	if v.Status == mcp.TaskFailed {
		return e.Breaks("TSX-14", []string{"a tool result with isError: true ends the task completed, the result inlined"}, "the task ended failed", seq)
	}
	if v.Status == mcp.TaskCompleted && (len(v.Result) == 0 || string(v.Result) == "null") {
		return e.Breaks("TSX-27", []string{"tasks/get of the completed task with its result (isError: true) inlined"}, "status completed without a result field", seq)
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if v.Status != mcp.TaskCompleted || json.Unmarshal(v.Result, &r) != nil || !r.IsError {
		return e.Breaks("TSX-61", []string{"status completed with the result (isError: true) in the result field"},
			fmt.Sprintf("status %s, result %s", chrono.Sanitize(v.Status, false), chrono.Sanitize(string(v.Result), false)), seq)
	}
	return verdict.Passf("the isError result completed the task, inlined with isError true")
}

func updateUnknownKeyAcknowledged(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, o := startExtTask(ctx, e, "w", nil)
	if o != nil {
		return *o
	}
	call, resp, err := taskCall(ctx, e, mcp.MethodTasksUpdate, map[string]any{"taskId": t.ID,
		"inputResponses": map[string]any{"mcpflight-never-issued": map[string]any{"action": "accept", "content": map[string]any{}}}}, declareTasks())
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if resp.Error != nil {
		_, seq := call.Response()
		return e.Broke(verdict.Req("TSX-42").Clause("SHOULD"), []string{"a response to a key that is not outstanding ignored: the update acknowledged"},
			fmt.Sprintf("error %d %s", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)
	}
	if o := judgeAck(e, call, resp, "TSX-42", "TSX-43"); o != nil {
		return *o
	}
	if err := t.releaseAll(ctx, e); err != nil {
		return verdict.Errorf("%v", err)
	}
	return verdict.Passf("tasks/update with a key never issued was acknowledged with an empty result")
}

func capabilitiesPerRequest(ctx context.Context, e *probe.Env) verdict.Outcome {
	slowCall := func(key string) (*peer.Call, error) {
		call, resp, err := taskCall(ctx, e, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Slow.Name, "arguments": slowArgs(e, key)})
		if err == nil && resp.Error != nil {
			err = peer.Error2026(resp.Error)
		}
		return call, err
	}
	first, err := slowCall("p1")
	if err != nil {
		return verdict.Errorf("the first tools/call: %v", err)
	}
	if first.ResultType() == mcp.ResultTypeTask {
		_, seq := first.Response()
		return e.Breaks("TSX-2", []string{"no CreateTaskResult for a request that did not declare " + mcp.ExtensionTasks},
			`the first undeclared tools/call answered resultType "task"`, seq)
	}
	if _, _, err := taskCall(ctx, e, mcp.MethodToolsList, map[string]any{}, declareTasks()); err != nil {
		return verdict.Errorf("the declared tools/list: %v", err)
	}
	second, err := slowCall("p2")
	if err != nil {
		return verdict.Errorf("the second tools/call: %v", err)
	}
	if second.ResultType() == mcp.ResultTypeTask {
		_, seq := second.Response()
		return e.Breaks("RPC-57", []string{"each request served on its own clientCapabilities: the undeclared tools/call gets an ordinary result, as before the declaration"},
			`the same undeclared tools/call answered resultType "task" once an earlier request had declared the extension`, seq)
	}
	return verdict.Passf("the undeclared tools/call got an ordinary result before and after a request that declared the extension")
}

func mcpNameTaskID(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	if o := needTaskTool(e); o != nil {
		return *o
	}
	t, o := startExtTask(ctx, e, "w", nil)
	if o != nil {
		return *o
	}
	call, resp, err := taskCall(ctx, e, mcp.MethodTasksGet, map[string]any{"taskId": t.ID}, declareTasks(),
		peer.WithHeaders(http.Header{mcp.HeaderName: {"mcpflight-other-task"}}))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	_, seq := call.Response()
	status := h.StatusOf(call.ID)
	expected := []string{"HTTP 400 and -32020 for tasks/get whose Mcp-Name is not its params.taskId"}
	var hm *peer.HeaderMismatchError
	switch {
	case resp.Error == nil:
		return e.Breaks("HTTP-103", expected, fmt.Sprintf("HTTP %d, served", status), seq)
	case !errors.As(peer.Error2026(resp.Error), &hm):
		return e.Breaks("HTTP-103", expected, fmt.Sprintf("HTTP %d with error %d %s", status, resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)
	case status != http.StatusBadRequest:
		return e.Breaks("HTTP-104", expected, fmt.Sprintf("-32020 with HTTP %d", status), seq)
	}
	if _, _, err := getExtTask(ctx, e, t.ID); err != nil {
		return verdict.Errorf("tasks/get with Mcp-Name %s: %v", chrono.Sanitize(t.ID, false), err)
	}
	if err := t.releaseAll(ctx, e); err != nil {
		return verdict.Errorf("%v", err)
	}
	return verdict.Passf("tasks/get with another task ID in Mcp-Name got 400 and -32020; with its own task ID it was served")
}

// taskNotification is a notifications/tasks frame read on the listen
// stream, with the task it names.
func taskNotification(ev chrono.Event) (extTaskView, bool) {
	if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame || ev.Summary == nil || ev.Summary.Method != mcp.NotificationTasks {
		return extTaskView{}, false
	}
	m, err := jsonrpc.Decode(ev.Raw)
	if err != nil {
		return extTaskView{}, false
	}
	v, err := parseExtTaskView(m.Params)
	return v, err == nil
}

func statusOnListenStream(ctx context.Context, e *probe.Env) verdict.Outcome {
	if o := needTaskTool(e); o != nil {
		return *o
	}
	a, o := startExtTask(ctx, e, "a", nil)
	if o != nil {
		return *o
	}
	b, o := startExtTask(ctx, e, "b", nil)
	if o != nil {
		return *o
	}
	from := e.Log.Len()
	listen, err := e.S.Start(ctx, mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"taskIds": []string{a.ID}}}, declareTasks())
	if err != nil {
		return verdict.Errorf("subscriptions/listen: %v", err)
	}
	onStream := func(ev chrono.Event) bool { return true }
	if h, ok := e.S.Conn().(*transport.HTTP); ok {
		onStream = func(ev chrono.Event) bool { return ev.Channel == "SSE "+h.StreamOf(listen.ID) }
	}
	wctx, cancel, d := e.WithPatience(ctx)
	_, err = e.Log.WaitFor(wctx, from, func(ev chrono.Event) bool {
		return ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == mcp.NotificationSubscriptionsAcknowledged
	})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return verdict.Errorf("%v", ctx.Err())
		}
		return verdict.Infof("no notifications/subscriptions/acknowledged within %v: whether status notifications follow the filter cannot be seen (the acknowledgement is judged by the subscription cases)", d)
	}
	// B first: its notification, if the server sends one to a stream
	// that did not ask for it, comes on the stream before A's. The
	// cancels change the tasks' status; their acknowledgement is
	// tasks26/cancel-acknowledged's to judge.
	for _, t := range []*extTask{b, a} {
		_, resp, err := taskCall(ctx, e, mcp.MethodTasksCancel, map[string]any{"taskId": t.ID}, declareTasks())
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		if resp.Error != nil {
			return e.Blame("tasks/cancel of a working task", cancelOwner, chrono.Sanitize(peer.Error2026(resp.Error).Error(), false))
		}
	}
	aNote := func(ev chrono.Event) bool {
		v, ok := taskNotification(ev)
		return ok && onStream(ev) && v.TaskID == a.ID && mcp.TaskTerminal(v.Status)
	}
	wctx, cancel, _ = e.WithPatience(ctx)
	aEv, aErr := e.Log.WaitFor(wctx, from, aNote)
	cancel()
	if aErr != nil && ctx.Err() == nil {
		if err := e.Observe(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	for _, ev := range e.Log.Since(from) {
		if v, ok := taskNotification(ev); ok && v.TaskID == b.ID {
			return e.Breaks("SUB-1", []string{"notifications/tasks only for the tasks the subscription asked for (" + a.ID + ")"},
				probe.Describe(ev), ev.Seq)
		}
	}
	if err := e.S.Cancel(ctx, listen, "mcpflight: done"); err != nil && !errors.Is(err, peer.ErrNotPending) {
		return verdict.Errorf("ending the subscription: %v", err)
	}
	if aErr != nil {
		return verdict.Infof("no notifications/tasks for the task the subscription asked for (TSX-48 is MAY), and none for the other")
	}
	v, _ := taskNotification(aEv)
	now, _, err := getExtTask(ctx, e, a.ID)
	if err != nil {
		return verdict.Errorf("tasks/get: %v", err)
	}
	if now.Status != v.Status {
		return e.Breaks("TSX-50", []string{"the notification's DetailedTask identical to what tasks/get shows"},
			fmt.Sprintf("notification status %s, tasks/get status %s", chrono.Sanitize(v.Status, false), chrono.Sanitize(now.Status, false)), aEv.Seq)
	}
	return verdict.Passf("notifications/tasks came for the task asked for (%s), none for the other", chrono.Sanitize(v.Status, false))
}
