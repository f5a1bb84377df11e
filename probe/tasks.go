package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/verdict"
)

// TaskSpec describes a durable task for a case to create.
type TaskSpec struct {
	// Key names the worker's checkpoints on a controlled target.
	Key string
	// Ticks is the worker's number of ticks on a controlled target.
	Ticks int
	// Free runs the worker without gates.
	Free bool
	// End is "complete", "fail" or "error" on a controlled target.
	End string
	// TTL is the requested ttl in milliseconds; 0 asks for 60000 and a
	// negative value asks for none.
	TTL int64
	// Progress sends a progress token that stays live for the task's
	// lifetime (PRG-9).
	Progress bool
}

// TaskOp is a task a case created.
type TaskOp struct {
	// Call is the task-augmented tools/call.
	Call *peer.Call
	// Task is the task of its CreateTaskResult.
	Task peer.Task
	// RespSeq is the sequence number of the CreateTaskResult.
	RespSeq uint64
	// Key names the worker's checkpoints, Ticks its number of ticks
	// (controlled targets only).
	Key   string
	Ticks int
	e     *Env
}

// errCreate is a task creation the target refused or answered wrongly.
type errCreate struct {
	o verdict.Outcome
}

func (e *errCreate) Error() string { return e.o.Summary }

// StartTask calls the profile's task tool as a task and waits for its
// CreateTaskResult. A target that answers with anything else yields an
// error whose outcome createOutcome extracts (TSK-44).
func (e *Env) StartTask(ctx context.Context, spec TaskSpec) (*TaskOp, error) {
	if e.Profile == nil || e.Profile.Task == nil {
		return nil, errors.New("profile names no task tool")
	}
	args := e.Profile.Task.CloneArgs()
	ticks := 0
	if e.Control != nil {
		args["key"] = spec.Key
		args["gated"] = !spec.Free
		ticks = 3
		if spec.Ticks > 0 {
			ticks = spec.Ticks
		}
		args["ticks"] = ticks
		if spec.End != "" {
			args["end"] = spec.End
		}
	}
	ttl := spec.TTL
	if ttl == 0 {
		ttl = 60000
	}
	var opts []peer.CallOption
	if spec.Progress {
		opts = append(opts, peer.WithProgress(), peer.KeepProgressToken())
	}
	call, err := e.S.Start(ctx, mcp.MethodToolsCall, peer.TaskParams(map[string]any{"name": e.Profile.Task.Name, "arguments": args}, ttl), opts...)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", e.Profile.Task.Name, err)
	}
	resp, err := call.Await(ctx)
	if err != nil {
		return nil, fmt.Errorf("awaiting the CreateTaskResult: %w", err)
	}
	_, seq := call.Response()
	if resp.Error != nil {
		return nil, &errCreate{e.Breaks("TSK-44", []string{"a CreateTaskResult for a task-augmented call to a tool that supports tasks"},
			fmt.Sprintf("error %d: %s", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), seq)}
	}
	task, err := peer.ParseCreateTaskResult(resp.Result)
	if err != nil || task.TaskID == "" {
		return nil, &errCreate{e.Breaks("TSK-44", []string{`a CreateTaskResult {"task": {"taskId": …, "status": "working", …}}`},
			Describe(e.EventAt(seq)), seq)}
	}
	return &TaskOp{Call: call, Task: task, RespSeq: seq, Key: spec.Key, Ticks: ticks, e: e}, nil
}

// CreateOutcome turns a StartTask error into the case's verdict.
func CreateOutcome(err error) verdict.Outcome {
	var ce *errCreate
	if errors.As(err, &ce) {
		return ce.o
	}
	return verdict.Errorf("%v", err)
}

// Release opens one of the worker's gates ("start", "tick/1").
func (t *TaskOp) Release(ctx context.Context, name string) error {
	if t.e.Control == nil {
		return ErrNoControl
	}
	return t.e.Control.Release(ctx, t.Key+"/"+name)
}

// ReleaseAll opens every gate of the worker.
func (t *TaskOp) ReleaseAll(ctx context.Context) error {
	if t.e.Control == nil {
		return nil
	}
	if err := t.Release(ctx, "start"); err != nil {
		return err
	}
	for i := 1; i <= t.Ticks; i++ {
		if err := t.Release(ctx, fmt.Sprintf("tick/%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoint awaits one of the worker's checkpoints, within
// Env.Patience; ErrNotReached when it is not reached in time.
func (t *TaskOp) Checkpoint(ctx context.Context, name string) error {
	if t.e.Control == nil {
		return ErrNoControl
	}
	wctx, cancel := context.WithTimeout(ctx, t.e.Patience())
	defer cancel()
	_, err := t.e.Control.Await(wctx, t.Key+"/"+name)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return fmt.Errorf("%w: %s within %v", ErrNotReached, name, t.e.Patience())
	}
	return err
}

// Counter reads the worker's counter and whether it still runs, on a
// controlled target.
func (t *TaskOp) Counter(ctx context.Context) (int, bool, error) {
	if t.e.Control == nil {
		return 0, false, ErrNoControl
	}
	w, err := t.e.Control.Worker(ctx, t.Key)
	return w.Ticks, w.WorkerRunning, err
}

// PollDelay is the pause between polls: the task's pollInterval, bounded
// to [10ms, 1s] (TSK-16).
func PollDelay(t peer.Task) time.Duration {
	d := 100 * time.Millisecond
	if t.PollInterval != nil {
		d = time.Duration(*t.PollInterval) * time.Millisecond
	}
	return min(max(d, 10*time.Millisecond), time.Second)
}

// TaskBudget bounds how long a case waits for a task to end.
func (e *Env) TaskBudget() time.Duration { return 10*e.Grace + 10*time.Second }

// PollUntilTerminal polls tasks/get, respecting pollInterval, until the task
// is terminal or the budget ends. It returns every status seen, in order.
func (e *Env) PollUntilTerminal(ctx context.Context, id string, first peer.Task) (peer.Task, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, e.TaskBudget())
	defer cancel()
	seen := []string{first.Status}
	last := first
	for !last.Terminal() {
		t := time.NewTimer(PollDelay(last))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return last, seen, fmt.Errorf("task %s still %s: %w", id, last.Status, ctx.Err())
		}
		got, err := e.S.GetTask(ctx, id)
		if err != nil {
			return last, seen, err
		}
		last = got
		seen = append(seen, got.Status)
	}
	return last, seen, nil
}

// RunToEnd releases every gate (controlled) and polls until terminal.
func (t *TaskOp) RunToEnd(ctx context.Context) (peer.Task, []string, error) {
	if err := t.ReleaseAll(ctx); err != nil {
		return peer.Task{}, nil, err
	}
	return t.e.PollUntilTerminal(ctx, t.Task.TaskID, t.Task)
}

// rpcCode returns the JSON-RPC error code in err, and whether there was one.
func RPCCode(err error) (int, bool) {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc.Code, true
	}
	return 0, false
}

// ValidTransition reports whether from → to is allowed (TSK-30, TSK-31).
func ValidTransition(from, to string) bool {
	if from == to {
		return true
	}
	switch from {
	case mcp.TaskWorking:
		return to == mcp.TaskInputRequired || mcp.TaskTerminal(to)
	case mcp.TaskInputRequired:
		return to == mcp.TaskWorking || mcp.TaskTerminal(to)
	}
	return false
}

// ToolTaskSupport returns the execution.taskSupport the target lists for
// tool ("" when absent), and whether the tool was listed.
func ToolTaskSupport(ctx context.Context, e *Env, tool string) (string, bool, error) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	cursor := ""
	for range 20 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if err := e.S.Request(ctx, mcp.MethodToolsList, params, &r); err != nil {
			return "", false, err
		}
		for _, t := range r.Tools {
			if t.Name == tool {
				if t.Execution == nil {
					return "", true, nil
				}
				return t.Execution.TaskSupport, true, nil
			}
		}
		if r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
	}
	return "", false, nil
}

// Settle waits until the task's worker has ended: its end checkpoint
// on a controlled target (gates released), the grace window elsewhere.
func (t *TaskOp) Settle(ctx context.Context) error {
	if t.e.Control == nil {
		return t.e.Observe(ctx)
	}
	if err := t.ReleaseAll(ctx); err != nil {
		return err
	}
	return t.Checkpoint(ctx, "end")
}

// ListAllTasks pages through tasks/list.
func ListAllTasks(ctx context.Context, s *peer.Session) ([]peer.Task, int, error) {
	var all []peer.Task
	cursor := ""
	for pages := 1; pages <= 100; pages++ {
		page, err := s.ListTasks(ctx, cursor)
		if err != nil {
			return all, pages, err
		}
		all = append(all, page.Tasks...)
		if !page.HasNext {
			return all, pages, nil
		}
		cursor = page.NextCursor
	}
	return all, 100, errors.New("more than 100 pages")
}
