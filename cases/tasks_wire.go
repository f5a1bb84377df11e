package cases

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/verdict"
)

// resultBlocksOnWire judges TSK-47 without the control extension: a
// tasks/result sent while the task works must not be answered while a
// tasks/get sent after that answer still says working. The task runs on
// its own; tasks/get polls it (TSK-20: served meanwhile), respecting
// pollInterval, until tasks/result is answered and the task is terminal.
func resultBlocksOnWire(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartTask(ctx, probe.TaskSpec{Key: "rb"})
	if err != nil {
		return probe.CreateOutcome(err)
	}
	c, err := e.S.StartTaskResult(ctx, op.Task.TaskID)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	bctx, cancel := context.WithTimeout(ctx, e.TaskBudget())
	defer cancel()
	last := op.Task
	working, lastWorkingSeq := 0, uint64(0)
	for {
		from := e.Log.Len() + 1 // the poll's request comes at or after this
		got, err := e.S.GetTask(bctx, op.Task.TaskID)
		if err != nil {
			if ctx.Err() != nil || bctx.Err() != nil {
				return verdict.Errorf("task %s still %s after %v: %v", op.Task.TaskID, last.Status, e.TaskBudget(), err)
			}
			return e.Breaks("TSK-20", []string{"tasks/get is served while tasks/result blocks"}, chrono.Sanitize(err.Error(), false), 0)
		}
		last = got
		answered := c.Done()
		select {
		case <-answered:
			_, rseq := c.Response()
			if !got.Terminal() && rseq < from {
				return e.Breaks("TSK-47", []string{"no answer to tasks/result while the task is working"},
					fmt.Sprintf("tasks/result was answered at seq %d, and a tasks/get sent after that answer (at seq %d or later) still says %s: %s",
						rseq, from, chrono.Sanitize(got.Status, false), probe.Describe(e.EventAt(rseq))), rseq)
			}
		default:
		}
		if !got.Terminal() {
			working++
			lastWorkingSeq = from
		} else {
			break
		}
		t := time.NewTimer(probe.PollDelay(got))
		select {
		case <-t.C:
		case <-bctx.Done():
			t.Stop()
			return verdict.Errorf("task %s still %s after %v", op.Task.TaskID, last.Status, e.TaskBudget())
		}
	}
	if o := unprompted(e, op, last.Status, "the task tasks/result waits for"); o != nil {
		return *o
	}
	wctx, wcancel, wait := e.WithPatience(ctx)
	defer wcancel()
	resp, err := c.Await(wctx)
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return e.Breaks("TSK-47", []string{"tasks/result answered once the task reached a terminal status"},
				fmt.Sprintf("no answer to tasks/result %s within %v of tasks/get saying %s", c.ID, wait, chrono.Sanitize(last.Status, false)), 0)
		}
		return verdict.Errorf("%v", err)
	}
	_, rseq := c.Response()
	if resp.Error != nil && last.Status == mcp.TaskCompleted {
		return e.Breaks("TSK-48", []string{"the underlying result of the completed task"}, probe.Describe(e.EventAt(rseq)), rseq)
	}
	if working == 0 {
		// The task moved faster than the case could poll it (the target,
		// or the machine's load): nothing about blocking was judged.
		return verdict.Unexercised("the task was %s at the first poll: whether tasks/result blocked while it worked was not seen (%s)", chrono.Sanitize(last.Status, false), wireNote)
	}
	return verdict.Passf("tasks/result was answered (seq %d) only after %d polls said working (the last sent at seq %d or later) and one said %s; %s",
		rseq, working, lastWorkingSeq, chrono.Sanitize(last.Status, false), wireNote)
}
