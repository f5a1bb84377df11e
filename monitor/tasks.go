package monitor

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// taskObject is what the rules read of a task a message shows: a
// tasks/get or tasks/cancel result, a status notification, a tasks/list
// entry, a CreateTaskResult. Of the inlined result and error (2026-07-28)
// only their presence is kept.
type taskObject struct {
	TaskID     string         `json:"taskId"`
	Status     string         `json:"status"`
	Created    string         `json:"createdAt"`
	Updated    string         `json:"lastUpdatedAt"`
	TTL        presence       `json:"ttl"`
	TTLMs      optionalNumber `json:"ttlMs"`
	ResultType string         `json:"resultType"`
	Result     presence       `json:"result"`
	Error      presence       `json:"error"`
}

// presence records that a member is there, null included, without
// keeping its value.
type presence bool

// UnmarshalJSON notes the member, whatever its value.
func (p *presence) UnmarshalJSON([]byte) error { *p = true; return nil }

// optionalNumber is a number that may be absent or null.
type optionalNumber struct {
	present, null bool
	value         float64
}

// UnmarshalJSON reads the number, null, or (another type) nothing.
func (n *optionalNumber) UnmarshalJSON(b []byte) error {
	n.present = true
	if string(b) == "null" {
		n.null = true
		return nil
	}
	if json.Unmarshal(b, &n.value) != nil {
		n.present = false // not a number: the schema check's
	}
	return nil
}

// readTask is the task raw shows: the result or params itself, or (a
// 2025-11-25 CreateTaskResult, and a tasks/cancel result in some shapes)
// the object under "task". Its Status is "" when it shows none.
func readTask(raw json.RawMessage) taskObject {
	var t struct {
		taskObject
		Task *taskObject `json:"task"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return taskObject{}
	}
	if t.Status == "" && t.Task != nil {
		return *t.Task
	}
	return t.taskObject
}

// sighting is one status a message showed a task in.
type sighting struct {
	status  string
	updated time.Time
	timed   bool
	seq     uint64
	via     string
}

// maxStatuses bounds the statuses a task's sightings are kept for.
const maxStatuses = 8

// later reports whether sighting a shows a later state of its task than
// b: by the lastUpdatedAt both carry, else (and when they are equal) in
// the order read. The order read is not the order of the task's states:
// over Streamable HTTP two streams are not read in the order they were
// written, and on one stream a server's answer to tasks/get may be
// written after a status notification that its snapshot of the task
// predates.
func (s *session) later(a, b sighting) bool {
	if a.timed && b.timed && !a.updated.Equal(b.updated) {
		return a.updated.After(b.updated)
	}
	return a.seq > b.seq
}

// stable judges a task's sightings: once terminal, the same status ever
// after (TSK-31; once cancelled, TSK-65), in the order of later. Each
// sighting that shows another status after the task's first terminal one
// is a finding; a terminal sighting read late but older than the first
// terminal one taken so far becomes the first, and the latest sighting of
// another status after it is a finding.
func (s *session) stable(t *task, x sighting) {
	if t.latest == nil {
		t.latest = map[string]sighting{}
	}
	if l, ok := t.latest[x.status]; ok && s.later(x, l) || !ok && len(t.latest) < maxStatuses {
		t.latest[x.status] = x
	}
	if isTerminal(x.status) && (t.first == nil || s.later(*t.first, x)) {
		t.first = &x
		for _, st := range slices.Sorted(maps.Keys(t.latest)) {
			if l := t.latest[st]; st != x.status && s.later(l, x) {
				s.unstable(t, x, l)
				return
			}
		}
		return
	}
	if t.first != nil && x.status != t.first.status && s.later(x, *t.first) {
		s.unstable(t, *t.first, x)
	}
}

// unstable reports task t shown in status x after its terminal status
// term.
func (s *session) unstable(t *task, term, x sighting) {
	rule := verdict.Req("TSK-31").Under(spec.V20260728, "TSX-15")
	if term.status == "cancelled" {
		rule = verdict.Req("TSK-65").Under(spec.V20260728, "TSX-15")
	}
	order := ""
	if term.timed && x.timed {
		order = fmt.Sprintf(" (lastUpdatedAt %s, then %s)", term.updated.Format(time.RFC3339Nano), x.updated.Format(time.RFC3339Nano))
	}
	s.find(RuleTaskTerminalStable, Server, rule, x.seq, false,
		"task %s was %s at #%d (%s), and %s at #%d says %s%s", quote(t.id), term.status, term.seq, term.via, x.via, x.seq, quote(x.status), order)
}

// taskCreated takes the CreateTaskResult of a task-augmented request.
func (s *session) taskCreated(r *request, ev chrono.Event, result json.RawMessage) {
	s.newTask(r, ev, readTask(result))
}

// newTask starts the record of the task o, which a CreateTaskResult
// answering r shows, and returns it; nil when o names no task (the
// server ignored the task field).
func (s *session) newTask(r *request, ev chrono.Event, o taskObject) *task {
	if o.TaskID == "" {
		return nil
	}
	s.m.counts[CountTasks]++
	r.created = o.TaskID
	if len(s.tasks) >= maxTasks {
		s.forgetTask()
	}
	t := &task{id: o.TaskID, create: r}
	s.tasks[o.TaskID] = t
	s.sighted(t, o, ev, "CreateTaskResult", r.seq)
	return t
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

// sighted judges the task o the server showed t as (a tasks/get result,
// a tasks/list entry, a status notification, a CreateTaskResult, a
// tasks/cancel result): its timestamps; a terminal status is final
// (stable); what a status says of the task's result and of who cancelled
// it; and a task the host had cancelled that still works after the grace
// is one of seed 002's alerts. asked is the sequence number of the
// request the message answers, 0 for a notification: an answer shows the
// task as it was after that request was sent.
func (s *session) sighted(t *task, o taskObject, ev chrono.Event, via string, asked uint64) {
	status := o.Status
	if status == "" {
		return
	}
	s.timestamps(t, o, ev, via, asked)
	s.exercise(RuleTaskTerminalStable, Server)
	at, err := time.Parse(time.RFC3339Nano, o.Updated)
	s.stable(t, sighting{status: status, updated: at, timed: err == nil, seq: ev.Seq, via: via})
	if !isTerminal(status) {
		s.workingAfterResultRefused(t, o, ev, via, asked)
	} else if t.terminal == "" {
		s.endedAs(t, status, ev, via)
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
			s.resultFitsStatus(t, ev.Seq)
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
	if s.is2026() {
		s.extensionCancelAnswered(t, r, ev, m)
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
		o := readTask(m.Result)
		if s.otherTask(t, r, o, ev) {
			return
		}
		status := o.Status
		if status != "cancelled" {
			s.find(RuleTaskCancelResult, Server, verdict.Req("TSK-64").Clause("MUST"), ev.Seq, false,
				"tasks/cancel of task %s was accepted with status %s, not cancelled", quote(t.id), quote(status))
		}
		t.cancelAck, t.cancelAckAt = ev.Seq, ev.Offset
		s.sighted(t, o, ev, "the tasks/cancel result", r.seq)
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
	if s.aborts == 0 || s.is2026() {
		return
	}
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
	if s.is2026() {
		return // a durable task outlives its session by design (TSX-22)
	}
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

// listed takes the tasks a tasks/list result shows.
func (s *session) listed(ev chrono.Event, result json.RawMessage, asked uint64) {
	var res struct {
		Tasks []taskObject `json:"tasks"`
	}
	_ = json.Unmarshal(result, &res) // an entry of another shape is no sighting
	for _, e := range res.Tasks {
		if t := s.tasks[e.TaskID]; t != nil {
			s.sighted(t, e, ev, mcp.MethodTasksList, asked)
		}
	}
}
