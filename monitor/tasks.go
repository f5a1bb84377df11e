package monitor

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/verdict"
)

// taskStatus is the status of the task a result or a status notification
// carries ("working", …), "" when it carries none. A tasks/get result is
// the task itself; a CreateTaskResult or a tasks/cancel result holds it
// under "task" in some shapes.
func taskStatus(raw json.RawMessage) string {
	var t struct {
		Status string `json:"status"`
		Task   *struct {
			Status string `json:"status"`
		} `json:"task"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	if t.Status == "" && t.Task != nil {
		return t.Task.Status
	}
	return t.Status
}

// taskStatusID is the task ID a result or a status notification names.
func taskStatusID(raw json.RawMessage) string {
	var t struct {
		TaskID string `json:"taskId"`
		Task   *struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	if t.TaskID == "" && t.Task != nil {
		return t.Task.TaskID
	}
	return t.TaskID
}

// taskCreated takes the CreateTaskResult of a task-augmented request.
func (s *session) taskCreated(r *request, ev chrono.Event, result json.RawMessage) {
	id := taskStatusID(result)
	if id == "" {
		return // not a CreateTaskResult: the server ignored the task field
	}
	s.m.counts[CountTasks]++
	r.created = id
	if len(s.tasks) >= maxTasks {
		s.forgetTask()
	}
	t := &task{id: id, create: r}
	s.tasks[id] = t
	s.status(t, taskStatus(result), ev, "CreateTaskResult")
}

// forgetTask drops the oldest terminal task, else the oldest task.
func (s *session) forgetTask() {
	var oldest *task
	older := func(a, b *task) bool {
		if (a.terminal != "") != (b.terminal != "") {
			return a.terminal != ""
		}
		return a.create.seq < b.create.seq
	}
	for _, t := range s.tasks {
		if oldest == nil || older(t, oldest) {
			oldest = t
		}
	}
	if oldest != nil {
		delete(s.tasks, oldest.id)
	}
}

// status judges a status the server reported for t (a tasks/get result,
// a status notification, a CreateTaskResult): a terminal status is final
// (TSK-31; once cancelled, TSK-65), and a task the host had cancelled that
// still works after the grace is one of seed 002's alerts.
func (s *session) status(t *task, status string, ev chrono.Event, via string) {
	if status == "" {
		return
	}
	s.exercise(RuleTaskTerminalStable, Server)
	if t.terminal != "" && status != t.terminal {
		rule := verdict.Req("TSK-31")
		if t.terminal == "cancelled" {
			rule = verdict.Req("TSK-65")
		}
		s.find(RuleTaskTerminalStable, Server, rule, ev.Seq, false,
			"task %s was %s at #%d, and %s now says %s", quote(t.id), t.terminal, t.statusSeq, via, quote(status))
	}
	if !isTerminal(status) && t.cancelAck > 0 && ev.Offset-t.cancelAckAt > s.m.opts.Grace && !t.alerted {
		t.alerted = true
		s.alert(ev.Seq, t.id, t.requests(), "task %s was still %s %v after tasks/cancel was acknowledged (#%d): the cancel stopped the record, not the work",
			quote(t.id), quote(status), (ev.Offset - t.cancelAckAt).Round(time.Millisecond), t.cancelAck)
	}
	if t.terminal == "" && status != t.status {
		s.observe(Activity{Kind: ActTask, Side: Client, ID: t.create.id.String(), Method: t.create.method, Seq: ev.Seq, At: ev.Offset,
			Sent: t.create.at, TaskID: t.id, Status: status})
	}
	if t.terminal == "" {
		t.status, t.statusSeq, t.statusAt = status, ev.Seq, ev.Offset
		if isTerminal(status) {
			t.terminal, t.terminalSeq, t.terminalChan = status, ev.Seq, ev.Channel
		}
	}
	s.graceTasks()
}

// taskCancelAnswered judges the answer to tasks/cancel: a terminal task's
// cancel is refused with -32602 (TSK-63); an accepted one answers the
// task as cancelled (TSK-64, its MUST).
func (s *session) taskCancelAnswered(r *request, ev chrono.Event, m *jsonrpc.Message) {
	t := s.tasks[r.taskID]
	if t == nil {
		return
	}
	// Terminal when the cancel was sent: a task that ended while the
	// cancel was on its way (its status notification may come before the
	// cancel's answer) was cancelled in a race, not after its end.
	wasTerminal := t.terminal
	if t.terminalSeq > r.seq {
		wasTerminal = ""
	}
	s.exercise(RuleTaskCancelTerminal, Server)
	switch {
	case wasTerminal != "" && m.Error == nil:
		s.find(RuleTaskCancelTerminal, Server, verdict.Req("TSK-63"), ev.Seq, false,
			"tasks/cancel of task %s, %s since #%d, was accepted: a terminal task's cancel is refused with -32602", quote(t.id), wasTerminal, t.statusSeq)
	case wasTerminal != "" && m.Error.Code != jsonrpc.CodeInvalidParams:
		s.find(RuleTaskCancelTerminal, Server, verdict.Req("TSK-63"), ev.Seq, false,
			"tasks/cancel of task %s, %s since #%d, was refused with %s, not -32602", quote(t.id), wasTerminal, t.statusSeq, errText(m))
	case m.Error == nil:
		s.exercise(RuleTaskCancelResult, Server)
		status := taskStatus(m.Result)
		if status != "cancelled" {
			s.find(RuleTaskCancelResult, Server, verdict.Req("TSK-64").Clause("MUST"), ev.Seq, false,
				"tasks/cancel of task %s was accepted with status %s, not cancelled", quote(t.id), quote(status))
		}
		t.cancelAck, t.cancelAckAt = ev.Seq, ev.Offset
		s.status(t, status, ev, "the tasks/cancel result")
	}
}

// requests are the IDs of the requests about t: the one that created it,
// its latest polls, its local abort.
func (t *task) requests() []string {
	out := []string{t.create.id.String()}
	for _, p := range t.polls {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if t.abortReq != "" && !slices.Contains(out, t.abortReq) {
		out = append(out, t.abortReq)
	}
	return out
}

// graceTasks makes seed 002's alert about a task the host stopped waiting
// for (it cancelled the request that created it, or a poll, and sent no
// tasks/cancel) once the grace has passed and the task was last seen
// working after the abort.
func (s *session) graceTasks() {
	for _, t := range s.tasks {
		if t.alerted || t.abortSeq == 0 || t.cancelAsked || t.terminal != "" || s.now-t.abortAt <= s.m.opts.Grace {
			continue
		}
		if t.statusAt > t.abortAt+s.m.opts.Grace {
			t.alerted = true
			s.alert(t.statusSeq, t.id, t.requests(), "task %s was still %s %v after the host stopped waiting for it (it cancelled request %s at #%d) without tasks/cancel: a local abort does not stop a durable task",
				quote(t.id), quote(t.status), (t.statusAt - t.abortAt).Round(time.Millisecond), t.abortReq, t.abortSeq)
		}
	}
}

// endTasks makes, at the end of the session, seed 002's alert about each
// task the host left working without tasks/cancel: whether it still works
// cannot be seen without polling it, and the alert says so.
func (s *session) endTasks() {
	for _, t := range s.tasks {
		if t.alerted || t.cancelAsked || t.terminal != "" {
			continue
		}
		t.alerted = true
		why := "the session ended"
		if t.abortSeq > 0 {
			why = fmt.Sprintf("the host stopped waiting for it (it cancelled request %s at #%d)", t.abortReq, t.abortSeq)
		}
		s.alert(t.statusSeq, t.id, t.requests(), "task %s was %s when last seen (#%d), and %s without tasks/cancel: whether it still works is not on the wire (poll it, or read the server's observer, to know)",
			quote(t.id), quote(t.status), t.statusSeq, why)
	}
}
