package explore

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// observe takes one sighting of a task's status, in the order of
// arrival: only tasks/cancel cancels a task (CAN-4), and the first
// terminal status is what tasks/result must answer (TSK-46) and what
// tasks/cancel races (the figures). Whether a terminal task changed
// status (TSK-31, TSK-65) is the monitor's.
func (c *checker) observe(s *sessState, t peer.Task, seq uint64, source string) {
	nt := s.tasks[t.TaskID]
	if nt == nil {
		return
	}
	if t.Status == mcp.TaskCancelled && nt.cancelReq == 0 && nt.notifCancel > 0 && nt.terminal == "" {
		c.violate(s, InvTaskNotifCancel, "CAN-4", seq, false,
			"task %s is cancelled (%s), and no tasks/cancel named it: notifications/cancelled at #%d named the request that created it; "+
				"that notification cancelled it, or the server cancelled it unprompted (TSK-D1), which the wire cannot tell apart",
			nt.key, source, nt.notifCancel)
	}
	if mcp.TaskTerminal(t.Status) && nt.terminal == "" {
		nt.terminal, nt.terminalSeq = t.Status, seq
	}
}

func (c *checker) taskAnswer(s *sessState, r *req, ev chrono.Event, m *jsonrpc.Message) {
	switch r.method {
	case mcp.MethodTasksList:
		if m.Error != nil {
			return
		}
		var res struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if json.Unmarshal(m.Result, &res) != nil {
			return
		}
		for _, raw := range res.Tasks {
			t, err := peer.ParseTask(raw)
			if err != nil {
				continue
			}
			if s.tasks[t.TaskID] == nil {
				whose := "a task this session never created"
				if o := c.other(s, c.taskOwner, t.TaskID); o != "" {
					whose = "a task of session " + o
				}
				c.violate(s, InvTaskListOwn, "TSK-84", ev.Seq, false, "tasks/list %s lists %s: %s", r.id, chrono.Clip(t.TaskID, 80), whose)
				continue
			}
			c.observe(s, t, ev.Seq, mcp.MethodTasksList)
		}
		return
	case mcp.MethodTasksResult:
		c.taskResult(s, r, ev, m)
		return
	}
	nt := s.tasks[r.taskID]
	if nt == nil {
		return
	}
	if r.method == mcp.MethodTasksCancel {
		terminalBefore := nt.terminal != "" && nt.terminalSeq < r.seq
		switch {
		case m.Error != nil && terminalBefore:
			c.fig.Counts[CountTaskCancelDone]++
			return
		case m.Error != nil:
			c.fig.Races[RaceTaskEndFirst]++
			return
		}
		// An accepted cancel of a task terminal before it (TSK-63), or
		// one that answers the task in another status than cancelled
		// (TSK-64), is the monitor's.
		t, err := peer.ParseTask(m.Result)
		if err != nil {
			return
		}
		if !terminalBefore {
			nt.cancelOK = ev.Seq
			c.fig.Races[RaceTaskCancelFirst]++
		}
		c.observe(s, t, ev.Seq, mcp.MethodTasksCancel)
		return
	}
	if m.Error == nil {
		if t, err := peer.ParseTask(m.Result); err == nil {
			c.observe(s, t, ev.Seq, r.method)
		}
	}
}

// taskProgress judges progress under a task's token: it may follow the
// CreateTaskResult (PRG-9) but stops when the task is terminal (PRG-11):
// after an accepted tasks/cancel no more than the gates released before
// it allowed, and never more than the task's ticks.
func (c *checker) taskProgress(s *sessState, r *req, ev chrono.Event, p peer.Progress) {
	var nt *task
	for _, t := range s.tasks {
		if t.create == r {
			nt = t
		}
	}
	if nt == nil {
		return
	}
	nt.progress++
	switch {
	case nt.progress > nt.ticks:
		c.violate(s, InvProgressAfterEnd, "PRG-11", ev.Seq, false,
			"progress number %d for task %s, which has %d ticks", nt.progress, nt.key, nt.ticks)
	case nt.cancelOK > 0 && nt.progress > min(nt.released, nt.ticks):
		c.violate(s, InvProgressAfterEnd, "PRG-11", ev.Seq, false,
			"progress number %d for task %s after it was cancelled at #%d, when its worker had been allowed %d",
			nt.progress, nt.key, nt.cancelOK, min(nt.released, nt.ticks))
	}
}

// taskResult checks one tasks/result answer: its related-task _meta
// (TSK-55), and that it is what every other answer for the task was
// (TSK-48).
func (c *checker) taskResult(s *sessState, r *req, ev chrono.Event, m *jsonrpc.Message) {
	nt := s.tasks[r.taskID]
	if nt == nil {
		return
	}
	if nt.terminal == "" || nt.terminalSeq > r.seq {
		c.fig.Counts[CountResultBlocked]++
	}
	var answer string
	if m.Error != nil {
		answer = fmt.Sprintf("error %d %s", m.Error.Code, m.Error.Message)
	} else {
		if id, ok := peer.RelatedTaskID(m.Result); !ok || id != nt.id {
			c.violate(s, InvTaskResult, "TSK-55", ev.Seq, false,
				"the tasks/result answer for task %s lacks _meta %q with its taskId", nt.key, mcp.MetaRelatedTask)
		}
		answer = withoutMeta(m.Result)
	}
	if len(nt.results) > 0 && answer != nt.results[0] {
		c.violate(s, InvTaskResult, "TSK-48", ev.Seq, false,
			"tasks/result for task %s answered %s, and at #%d %s", nt.key, chrono.Clip(answer, 200), nt.resultSeq[0], chrono.Clip(nt.results[0], 200))
	}
	nt.results = append(nt.results, answer)
	nt.resultSeq = append(nt.resultSeq, ev.Seq)
}

// withoutMeta is a result without its _meta, re-encoded with sorted keys.
func withoutMeta(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return string(bytes.TrimSpace(raw))
	}
	delete(obj, "_meta")
	out, _ := json.Marshal(obj)
	return string(out)
}

// taskResults checks, at the end, that the answers of tasks/result match
// the status the task ended in (TSK-46): completed is a result that is
// not an error, failed an error result or a JSON-RPC error. What a
// cancelled task's tasks/result answers is open (ambiguity A-4).
func (c *checker) taskResults(s *sessState, nt *task) {
	if len(nt.results) == 0 || nt.terminal == "" {
		return
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	answer := nt.results[0]
	isRPCError := len(answer) > 6 && answer[:6] == "error "
	if !isRPCError {
		_ = json.Unmarshal([]byte(answer), &res)
	}
	switch {
	case nt.terminal == mcp.TaskCompleted && (isRPCError || res.IsError):
		c.violate(s, InvTaskResult, "TSK-46", nt.resultSeq[0], false,
			"task %s completed, yet tasks/result answered %s", nt.key, chrono.Clip(answer, 200))
	case nt.terminal == mcp.TaskFailed && !isRPCError && !res.IsError:
		c.violate(s, InvTaskResult, "TSK-46", nt.resultSeq[0], false,
			"task %s failed, yet tasks/result answered a result that is not an error: %s", nt.key, chrono.Clip(answer, 200))
	}
}
