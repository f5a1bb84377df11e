package monitor

import (
	"bytes"
	"encoding/json"
	"math"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28): the
// server answers a tools/call with a CreateTaskResult (resultType "task")
// at its own discretion, to a request that declared the extension; the
// task is then polled with tasks/get, which inlines its result or error
// once it is terminal, and cancelled with tasks/cancel, which is an
// acknowledgement whatever the task's status.

// taskWord is in every CreateTaskResult ("resultType":"task"): a
// tools/call answer without it is no task and is not decoded.
var taskWord = []byte("task")

// declaration is a capability a request declares: present and not null.
type declaration bool

// UnmarshalJSON notes the declaration unless it is null.
func (d *declaration) UnmarshalJSON(b []byte) error { *d = string(b) != "null"; return nil }

// mayCreateTask reports whether the answer ev to r may be a
// CreateTaskResult of the extension, and so must be decoded.
func (s *session) mayCreateTask(r *request, ev chrono.Event) bool {
	return s.is2026() && r.method == mcp.MethodToolsCall && bytes.Contains(ev.Raw, taskWord)
}

// extensionTaskCreated takes a successful answer to a 2026-07-28
// tools/call (result nil when it was not decoded, holding no
// CreateTaskResult): a
// CreateTaskResult goes only to a request that declared the extension
// (TSX-2), and starts the task's record.
func (s *session) extensionTaskCreated(r *request, ev chrono.Event, result json.RawMessage) {
	if !r.declared {
		s.exercise(RuleTaskDeclared, Server)
	}
	if result == nil {
		return
	}
	o := readTask(result)
	if o.ResultType != mcp.ResultTypeTask {
		return
	}
	if !r.declared {
		s.find(RuleTaskDeclared, Server, verdict.Req("TSX-2"), ev.Seq, false,
			"request %s (tools/call) did not declare the %s extension, yet was answered with a CreateTaskResult (task %s)", r.id, mcp.ExtensionTasks, quote(o.TaskID))
	}
	t := s.newTask(r, ev, o)
	if t == nil || !o.TTLMs.present {
		return
	}
	t.evidence.ttlKnown = true
	if ms := o.TTLMs.value; !o.TTLMs.null && ms > 0 && ms < math.MaxInt64/float64(time.Millisecond) {
		t.evidence.ttl = time.Duration(ms * float64(time.Millisecond))
	}
}

// extensionMethodAnswered judges the server's answer to one of the
// extension's task methods (tasks/get, tasks/update, tasks/cancel) under
// 2026-07-28: a request that did not declare the extension gets -32021
// (TSX-56), whatever an earlier request declared (RPC-57), so a result
// serves what it may not. An error is not judged: which check a server
// makes first (an unknown task's -32602, a malformed request's) decides
// its code, and it serves nothing.
func (s *session) extensionMethodAnswered(r *request, ev chrono.Event, isError bool) {
	switch r.method {
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
	default:
		return
	}
	if r.side != Client || r.declared {
		return
	}
	s.exercise(RuleTaskDeclared, Server)
	if !isError {
		s.find(RuleTaskDeclared, Server, verdict.Req("TSX-56"), ev.Seq, false,
			"request %s (%s) did not declare the %s extension, yet was answered with a result: a request that does not declare it gets -32021", r.id, r.method, mcp.ExtensionTasks)
	}
}

// withinTTL reports whether, at, the task's ttlMs had surely not run out:
// less than it has passed since the request that created the task was
// sent, which was before the task was created. A ttl not given decides
// nothing.
func (t *task) withinTTL(at time.Duration) bool {
	e := t.evidence
	return e.ttlKnown && (e.ttl == 0 || at-t.create.at < e.ttl)
}

// extensionGetAnswered judges the answer to a tasks/get of the
// extension: a task is durable once its CreateTaskResult is sent, so a
// tasks/get sent after it finds it (TSX-16) until its ttl runs out; the
// answer has resultType "complete" (TSX-30; "task" belongs to a
// CreateTaskResult alone, TSX-9), and a terminal task's inlines its
// result (completed, TSX-27) or its error (failed, TSX-29).
func (s *session) extensionGetAnswered(t *task, r *request, ev chrono.Event, m *jsonrpc.Message) {
	e := &t.evidence
	if m.Error != nil {
		s.notFoundAfterCreate(t, r, ev, m.Error)
		return
	}
	o := readTask(m.Result)
	if o.TaskID == "" && o.Status == "" {
		return // no task at all: the schema check's
	}
	if !e.found && r.seq > t.create.respSeq {
		e.found = true
		s.exercise(RuleTaskDurable, Server)
	}
	s.exercise(RuleTaskGetAnswer, Server)
	if o.ResultType != "" && o.ResultType != mcp.ResultTypeComplete {
		s.find(RuleTaskGetAnswer, Server, verdict.Req("TSX-30"), ev.Seq, false,
			"tasks/get of task %s (request %s) answered resultType %s: a GetTaskResult's is \"complete\" (\"task\" marks a CreateTaskResult alone)", quote(t.id), r.id, quote(o.ResultType))
	}
	if o.Status == mcp.TaskCompleted && !o.Result {
		s.find(RuleTaskGetAnswer, Server, verdict.Req("TSX-27"), ev.Seq, false,
			"tasks/get of task %s (request %s) answered it completed without its result", quote(t.id), r.id)
	}
	if o.Status == mcp.TaskFailed && !o.Error {
		s.find(RuleTaskGetAnswer, Server, verdict.Req("TSX-29"), ev.Seq, false,
			"tasks/get of task %s (request %s) answered it failed without the error that failed it", quote(t.id), r.id)
	}
	s.sighted(t, o, ev, r.method, r.seq)
}

// notFoundAfterCreate judges a tasks/get refused with -32602 (the task
// is unknown, TSX-53): when no answer had found the task since its
// CreateTaskResult, the request was sent after that result was read,
// declared the extension and was not cancelled, and the task's ttl had
// surely not run out, the CreateTaskResult came before the task was
// durable (TSX-16). Once some tasks/get has found it, a later refusal is
// not this rule's.
func (s *session) notFoundAfterCreate(t *task, r *request, ev chrono.Event, rpcErr *jsonrpc.Error) {
	e := &t.evidence
	if e.found || e.lostReported || rpcErr.Code != jsonrpc.CodeInvalidParams || r.seq < t.create.respSeq || !r.declared || r.cancelSeq > 0 || !t.withinTTL(ev.Offset) {
		return
	}
	e.lostReported = true
	s.exercise(RuleTaskDurable, Server)
	s.find(RuleTaskDurable, Server, verdict.Req("TSX-16"), ev.Seq, false,
		"tasks/get of task %s (request %s), sent after its CreateTaskResult (#%d), was refused with %s: the CreateTaskResult came before the task was durable",
		quote(t.id), r.id, t.create.respSeq, rpcErrText(rpcErr))
}

// extensionCancelAnswered judges the answer to a tasks/cancel of the
// extension: it is an acknowledgement whatever the task's status
// (TSX-44; the extension has no refusal of a terminal task's cancel,
// ambiguity A-17), so a task already terminal when the cancel was sent,
// within its ttl, refused with -32602 (unknown task) breaks it. Other
// errors are not judged: -32021 for a request that did not declare the
// extension is right, and an internal error says nothing of the rule.
func (s *session) extensionCancelAnswered(t *task, r *request, ev chrono.Event, m *jsonrpc.Message) {
	wasTerminal := t.terminal
	if t.terminalSeq > r.seq {
		wasTerminal = ""
	}
	if wasTerminal == "" || !r.declared {
		return
	}
	s.exercise(RuleTaskCancelTerminal, Server)
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams || !t.withinTTL(ev.Offset) {
		return
	}
	s.find(RuleTaskCancelTerminal, Server, verdict.Req("TSX-44"), ev.Seq, false,
		"tasks/cancel of task %s, %s since #%d, was refused with %s: a cancel is acknowledged, whether or not the task is terminal", quote(t.id), wasTerminal, t.terminalSeq, rpcErrText(m.Error))
}

// rpcErrText is an error's code and message.
func rpcErrText(e *jsonrpc.Error) string { return errText(&jsonrpc.Message{Error: e}) }
