package monitor

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// The task rules of 2025-11-25 that read what the server says of a task
// beyond its status (tasks.go): its timestamps, its ttl, the task its
// answers name, tasks/result's answer against the task's end, and who
// cancelled it. Each judges only what the wire decides; where it cannot,
// it says nothing.

// taskEvidence is what the task rules keep of one task.
type taskEvidence struct {
	// latestUpdate is the latest lastUpdatedAt read, at latestUpdateSeq;
	// updatedBeforeCreated is set once a lastUpdatedAt before createdAt
	// was reported (timestamps).
	latestUpdate         time.Time
	latestUpdateSeq      uint64
	updatedBeforeCreated bool
	// resultSeq is tasks/result's successful answer (0: none yet),
	// resultIsError whether its result has isError; resultJudged is set
	// once it was judged against the task's end (resultFitsStatus).
	resultSeq     uint64
	resultIsError bool
	resultJudged  bool
	// resultRefusedSeq is the first tasks/result refused with -32602
	// while the task was not seen terminal, resultRefusedJudged set once
	// a later answer showed the task still working
	// (workingAfterResultRefused).
	resultRefusedSeq    uint64
	resultRefusedJudged bool
	// found: a tasks/get answer or a notification showed the task after
	// its CreateTaskResult; lostReported: a tasks/get that could not find
	// it was reported (2026-07-28, notFoundAfterCreate). ttl is the ttlMs
	// the CreateTaskResult gave, 0 for unlimited, when ttlKnown.
	found        bool
	lostReported bool
	ttl          time.Duration
	ttlKnown     bool
}

// taskPolled takes the answer to tasks/get or tasks/result: under
// 2025-11-25 the task's ttl and the task the answer names (tasks/get), and
// the result's related-task _meta and its fit with the task's end
// (tasks/result); under 2026-07-28 the extension's tasks/get
// (extensionGetAnswered).
func (s *session) taskPolled(r *request, ev chrono.Event, m *jsonrpc.Message) {
	t := s.tasks[r.taskID]
	switch {
	case r.method == mcp.MethodTasksResult:
		s.taskResultAnswered(t, r, ev, m)
	case s.is2026():
		if t != nil {
			s.extensionGetAnswered(t, r, ev, m)
		}
	case m.Error == nil:
		s.taskGetAnswered(t, r, ev, m.Result)
	}
}

// taskGetAnswered judges a successful tasks/get answer (2025-11-25): it
// gives the task's ttl, null for unlimited (TSK-41), and is about the
// task the request named (TSK-51).
func (s *session) taskGetAnswered(t *task, r *request, ev chrono.Event, result json.RawMessage) {
	o := readTask(result)
	if o.TaskID == "" && o.Status == "" {
		return // no task at all: the schema check's
	}
	s.exercise(RuleTaskGetAnswer, Server)
	if !o.TTL {
		s.find(RuleTaskGetAnswer, Server, verdict.Req("TSK-41"), ev.Seq, false,
			"the tasks/get answer for task %s (request %s) has no ttl: it gives the task's actual ttl, or null for unlimited", quote(r.taskID), r.id)
	}
	if t == nil || s.otherTask(t, r, o, ev) {
		return
	}
	s.sighted(t, o, ev, r.method, r.seq)
}

// otherTask reports whether o, the task an answer to r shows, is another
// task than the one r's taskId names, which TSK-51 makes the source of
// truth; the answer is then a sighting of that other task, if followed.
func (s *session) otherTask(t *task, r *request, o taskObject, ev chrono.Event) bool {
	if s.is2026() || o.TaskID == "" {
		return false
	}
	s.exercise(RuleTaskIDTruth, Server)
	if o.TaskID == r.taskID {
		return false
	}
	s.find(RuleTaskIDTruth, Server, verdict.Req("TSK-51"), ev.Seq, false,
		"%s for task %s (request %s) answered about task %s: the request's taskId names the task", r.method, quote(r.taskID), r.id, quote(o.TaskID))
	if other := s.tasks[o.TaskID]; other != nil && other != t {
		s.sighted(other, o, ev, r.method, r.seq)
	}
	return true
}

// taskResultAnswered judges the answer to tasks/result (2025-11-25): a
// result carries io.modelcontextprotocol/related-task naming the task
// (TSK-55; naming another, TSK-51) and must fit how the task ended
// (resultFitsStatus); a -32602 while the task is not seen terminal is
// kept, for a later answer that shows it still working
// (workingAfterResultRefused). An error carries no _meta, so TSK-55
// judges results only.
func (s *session) taskResultAnswered(t *task, r *request, ev chrono.Event, m *jsonrpc.Message) {
	if s.is2026() {
		return // no tasks/result in the extension (TSX-65)
	}
	if t != nil {
		s.exercise(RuleTaskResultBlocks, Server)
	}
	if m.Error != nil {
		if t != nil && m.Error.Code == jsonrpc.CodeInvalidParams && r.cancelSeq == 0 && t.terminal == "" && t.evidence.resultRefusedSeq == 0 {
			t.evidence.resultRefusedSeq = ev.Seq
		}
		return
	}
	var res struct {
		Meta struct {
			Related *struct {
				TaskID string `json:"taskId"`
			} `json:"io.modelcontextprotocol/related-task"`
		} `json:"_meta"`
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return // not an object: the schema check's
	}
	s.exercise(RuleTaskResultMeta, Server)
	switch {
	case res.Meta.Related == nil:
		s.find(RuleTaskResultMeta, Server, verdict.Req("TSK-55"), ev.Seq, false,
			"the result of tasks/result for task %s (request %s) has no io.modelcontextprotocol/related-task _meta: nothing else in it names its task", quote(r.taskID), r.id)
	case res.Meta.Related.TaskID != r.taskID:
		s.exercise(RuleTaskIDTruth, Server)
		s.find(RuleTaskIDTruth, Server, verdict.Req("TSK-51"), ev.Seq, false,
			"tasks/result for task %s (request %s) answered with the result of task %s, as its related-task _meta says: the request's taskId names the task",
			quote(r.taskID), r.id, quote(res.Meta.Related.TaskID))
		return
	}
	if t == nil {
		return
	}
	t.evidence.resultSeq, t.evidence.resultIsError = ev.Seq, res.IsError
	s.resultFitsStatus(t, ev.Seq)
}

// resultFitsStatus judges, once both are known, the result tasks/result
// gave against the status the task ended in (2025-11-25; the status is
// final, TSK-31, so the order they were read in does not matter): a tool
// result with isError ends the task failed (TSK-76, a lower-case
// should), and a failed task's tasks/result is the request's JSON-RPC
// error (TSK-77) or its tool result with isError (TSK-78), never a
// successful result without isError. A cancelled task's result is
// undefined (ambiguity A-4) and not judged.
func (s *session) resultFitsStatus(t *task, seq uint64) {
	e := &t.evidence
	if s.is2026() || e.resultSeq == 0 || t.terminal == "" || e.resultJudged {
		return
	}
	e.resultJudged = true
	s.exercise(RuleTaskResultStatus, Server)
	switch {
	case t.terminal == mcp.TaskCompleted && e.resultIsError && t.create.method == mcp.MethodToolsCall:
		s.find(RuleTaskResultStatus, Server, verdict.Req("TSK-76"), seq, false,
			"task %s ended completed (#%d), though its tool result has isError (tasks/result at #%d): a tool result with isError ends the task failed",
			quote(t.id), t.terminalSeq, e.resultSeq)
	case t.terminal == mcp.TaskFailed && !e.resultIsError:
		s.find(RuleTaskResultStatus, Server, verdict.Req("TSK-77"), seq, false,
			"task %s ended failed (#%d), yet tasks/result (#%d) answered a result without isError: a failed task's request ended in a JSON-RPC error, which tasks/result returns as that error (or in a tool result with isError, returned as it is)",
			quote(t.id), t.terminalSeq, e.resultSeq)
	}
}

// workingAfterResultRefused judges a sighting of t in a status that is
// not terminal, read in the answer to request asked: when tasks/result
// had been refused with -32602 before that request was sent, the answer
// shows the task was still working after the refusal (a terminal status
// is final, TSK-31), so tasks/result answered before its end instead of
// waiting for it (TSK-47). A sighting that does not answer a request
// sent after the refusal was read may predate it, and decides nothing.
func (s *session) workingAfterResultRefused(t *task, o taskObject, ev chrono.Event, via string, asked uint64) {
	e := &t.evidence
	if s.is2026() || e.resultRefusedSeq == 0 || e.resultRefusedJudged || asked <= e.resultRefusedSeq {
		return
	}
	e.resultRefusedJudged = true
	s.find(RuleTaskResultBlocks, Server, verdict.Req("TSK-47"), ev.Seq, false,
		"tasks/result for task %s was refused with -32602 at #%d, and %s (#%d), answering a request sent after that, shows the task still %s: tasks/result of a task not yet terminal waits for its end",
		quote(t.id), e.resultRefusedSeq, via, ev.Seq, quote(o.Status))
}

// endedAs judges the first terminal status t is seen in (2025-11-25,
// over stdio): a task ends cancelled only when tasks/cancel asked for it.
// "cancelled" means the request was cancelled (TSK-D1), and a server may
// not take notifications/cancelled of the request that created it for a
// cancel of the task (CAN-4): only tasks/cancel cancels a task. A cancel
// of the creating request before its CreateTaskResult (ambiguity A-6) is
// not judged. Over Streamable HTTP another session of the same client
// may have sent the tasks/cancel (tasks are bound to an authorization
// context, not to a session), so the rule does not hold there.
func (s *session) endedAs(t *task, status string, ev chrono.Event, via string) {
	if s.is2026() || s.http() {
		return
	}
	s.exercise(RuleTaskCancelledAsked, Server)
	if status != mcp.TaskCancelled || t.cancelAsked || t.create.cancelSeq > 0 {
		return
	}
	if t.abortSeq > 0 && t.abortReq == t.create.id.String() {
		s.find(RuleTaskCancelledAsked, Server, verdict.Req("CAN-4"), ev.Seq, false,
			"task %s ended cancelled (%s, #%d) with no tasks/cancel: the client sent only notifications/cancelled for request %s, which created it (#%d), and that notification does not cancel a task",
			quote(t.id), via, ev.Seq, t.create.id, t.abortSeq)
		return
	}
	s.find(RuleTaskCancelledAsked, Server, verdict.Req("TSK-D1"), ev.Seq, false,
		"task %s ended cancelled (%s, #%d), though nothing asked for it: no tasks/cancel, and no notifications/cancelled for request %s, which created it",
		quote(t.id), via, ev.Seq, t.create.id)
}

// timestamps judges the lastUpdatedAt of a task an answer or notification
// shows (2025-11-25, TSK-39): never before its createdAt, and never
// earlier than one read before the request it answers was sent (that
// answer shows the task as it was after the request, so after the
// earlier sighting was written). Sightings not ordered that way (two
// notifications, a notification and an answer to an earlier request)
// decide nothing: a snapshot may be written after a newer one.
func (s *session) timestamps(t *task, o taskObject, ev chrono.Event, via string, asked uint64) {
	if s.is2026() {
		return
	}
	updated, err := time.Parse(time.RFC3339Nano, o.Updated)
	if err != nil {
		return // absent or not a timestamp: the schema check's
	}
	e := &t.evidence
	s.exercise(RuleTaskTimestamps, Server)
	if created, err := time.Parse(time.RFC3339Nano, o.Created); err == nil && updated.Before(created) && !e.updatedBeforeCreated {
		e.updatedBeforeCreated = true
		s.find(RuleTaskTimestamps, Server, verdict.Req("TSK-39"), ev.Seq, false,
			"task %s: %s gives lastUpdatedAt %s, before its createdAt %s", quote(t.id), via, quote(o.Updated), quote(o.Created))
	}
	if asked > 0 && e.latestUpdateSeq > 0 && asked > e.latestUpdateSeq && updated.Before(e.latestUpdate) {
		s.find(RuleTaskTimestamps, Server, verdict.Req("TSK-39"), ev.Seq, false,
			"task %s: %s, answering a request sent after #%d was read, gives lastUpdatedAt %s, earlier than the %s #%d gave: it went back",
			quote(t.id), via, e.latestUpdateSeq, quote(o.Updated), e.latestUpdate.Format(time.RFC3339Nano), e.latestUpdateSeq)
	}
	if e.latestUpdateSeq == 0 || updated.After(e.latestUpdate) {
		e.latestUpdate, e.latestUpdateSeq = updated, ev.Seq
	}
}

// relatedTaskKey marks params that may carry related-task _meta.
var relatedTaskKey = []byte(mcp.MetaRelatedTask)

// taskNotified takes a task status notification: 2025-11-25's
// notifications/tasks/status carries no related-task _meta (TSK-58: its
// taskId says it), and either revision's is a sighting of its task.
func (s *session) taskNotified(ev chrono.Event, m *jsonrpc.Message) {
	o := readTask(m.Params)
	if m.Method == mcp.NotificationTaskStatus && !s.is2026() {
		s.exercise(RuleTaskStatusMeta, Server)
		if bytes.Contains(m.Params, relatedTaskKey) {
			var p struct {
				Meta struct {
					Related json.RawMessage `json:"io.modelcontextprotocol/related-task"`
				} `json:"_meta"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.Meta.Related != nil {
				s.find(RuleTaskStatusMeta, Server, verdict.Req("TSK-58"), ev.Seq, false,
					"notifications/tasks/status for task %s carries io.modelcontextprotocol/related-task _meta, which its taskId makes redundant", quote(o.TaskID))
			}
		}
	}
	t := s.tasks[o.TaskID]
	if t == nil {
		return
	}
	if s.is2026() {
		t.evidence.found = true
	}
	s.sighted(t, o, ev, m.Method, 0)
}
