package cases

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/verdict"
)

// unpromptedOwner: a task case relies on a task that runs until someone
// cancels it; TSK-D1 (cancelled means the request was cancelled) is the
// rule, tasks/not-cancelled-unprompted the case that judges it, so that
// a server whose tasks end cancelled at once is not blamed under CAN-4
// or TSK-48, whose premise it broke.
var unpromptedOwner = probe.Owner{Requirement: "TSK-D1", Case: "tasks/not-cancelled-unprompted"}

// cancelSent reports whether the case sent a cancel for the task: a
// tasks/cancel naming its ID or a notifications/cancelled naming the
// request that created it, and the sequence number of the first.
func cancelSent(e *probe.Env, op *probe.TaskOp) (uint64, bool) {
	return cancelSentBefore(e, op, 0)
}

// cancelSentBefore is cancelSent for the frames before seq (0: all).
func cancelSentBefore(e *probe.Env, op *probe.TaskOp, seq uint64) (uint64, bool) {
	reqID := op.Call.ID.String()
	for _, ev := range e.Log.Events() {
		if seq != 0 && ev.Seq >= seq {
			break
		}
		if ev.Dir != chrono.Out || ev.Kind != chrono.KindFrame || ev.Summary == nil {
			continue
		}
		switch ev.Summary.Method {
		case mcp.NotificationCancelled:
			if ev.Summary.RequestID == reqID {
				return ev.Seq, true
			}
		case mcp.MethodTasksCancel:
			var m struct {
				Params struct {
					TaskID string `json:"taskId"`
				} `json:"params"`
			}
			if json.Unmarshal(ev.Raw, &m) == nil && m.Params.TaskID == op.Task.TaskID {
				return ev.Seq, true
			}
		}
	}
	return 0, false
}

// firstStatusSeq is the sequence number of the first inbound frame that
// shows task id in status (a tasks/get or tasks/cancel result, a status
// notification), 0 when none does.
func firstStatusSeq(e *probe.Env, id, status string, after uint64) uint64 {
	for _, ev := range e.Log.Since(after) {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame {
			continue
		}
		m, err := ev.Message()
		if err != nil {
			continue
		}
		raw := m.Result
		if len(raw) == 0 {
			raw = m.Params
		}
		if t, err := peer.ParseTask(raw); err == nil && t.TaskID == id && t.Status == status {
			return ev.Seq
		}
	}
	return 0
}

// unprompted is the error of a case whose task ended cancelled although
// the case sent no cancel for it: the premise (a task that runs) failed,
// and tasks/not-cancelled-unprompted carries the fail. nil when the task
// is not cancelled, or when the case did cancel it.
func unprompted(e *probe.Env, op *probe.TaskOp, status, step string) *verdict.Outcome {
	return unpromptedBefore(e, op, status, step, 0)
}

// unpromptedBefore is unprompted for a task seen cancelled before the
// case's cancel at seq took effect: a tasks/cancel refused because the
// task was already terminal (0: any cancel counts).
func unpromptedBefore(e *probe.Env, op *probe.TaskOp, status, step string, seq uint64) *verdict.Outcome {
	if status != mcp.TaskCancelled {
		return nil
	}
	if _, sent := cancelSentBefore(e, op, seq); sent {
		return nil
	}
	at := firstStatusSeq(e, op.Task.TaskID, mcp.TaskCancelled, op.RespSeq)
	o := e.Blame(step, unpromptedOwner, fmt.Sprintf("task %s is cancelled (seq %d) though the case had sent neither tasks/cancel nor notifications/cancelled for it: the premise, a task that runs until cancelled, failed",
		chrono.Sanitize(op.Task.TaskID, false), at))
	return &o
}

// unpromptedNow reads the task and returns unprompted's error when it is
// cancelled with nobody asking.
func unpromptedNow(ctx context.Context, e *probe.Env, op *probe.TaskOp, step string, before uint64) *verdict.Outcome {
	got, err := e.S.GetTask(ctx, op.Task.TaskID)
	if err != nil {
		return nil
	}
	return unpromptedBefore(e, op, got.Status, step, before)
}

// taskNotCancelledUnprompted runs a task nobody cancels to its end: it
// must not end cancelled (TSK-D1).
func taskNotCancelledUnprompted(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "nu"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	final, seen, err := op.RunToEnd(ctx)
	if err != nil {
		return verdict.Errorf("running the task: %v", err)
	}
	if final.Status == mcp.TaskCancelled {
		if seq, sent := cancelSent(e, op); sent {
			return verdict.HarnessBug(fmt.Errorf("the case sent a cancel at seq %d", seq))
		}
		seq := firstStatusSeq(e, op.Task.TaskID, mcp.TaskCancelled, op.RespSeq)
		return e.Breaks("TSK-D1", []string{"the task ends completed or failed: nobody cancelled it (no tasks/cancel, no notifications/cancelled was sent)"},
			fmt.Sprintf("task %s went %s with nobody cancelling it; first seen cancelled at seq %d", chrono.Sanitize(op.Task.TaskID, false), chrono.Sanitize(fmt.Sprint(seen), false), seq), seq)
	}
	return verdict.Passf("the task nobody cancelled ended %s", chrono.Sanitize(final.Status, false))
}
