package clientcases

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

func taskCases() []clientrun.Case {
	return []clientrun.Case{
		{
			ID:    "tasks/cancel-with-tasks-cancel",
			Title: "a durable task is cancelled with tasks/cancel, never with notifications/cancelled",
			Reqs:  []string{"CAN-4", "CAN-7"},
			// TODO(merge with rev26s/rev26c): under 2026-07-28 the same
			// rule is CAN-57 with Mcp-Name set to the task ID over HTTP
			// (TSX-52); the scripted server does not speak the tasks
			// extension yet.
			Versions: only(v25),
			Sends:    "declares tasks.requests.tools.call and a tool with taskSupport optional; answers the task-augmented call with a working task that stays working until tasks/cancel",
			Expect:   "the adapter aborts the task once created: tasks/cancel naming the task, and no notifications/cancelled for the tools/call",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "task_worker", Task: true, AbortAfterTaskCreated: true})}},
					clientrun.Script{Tasks: true, Tools: []clientrun.Tool{{Name: "task_worker", TaskSupport: "optional"}}})
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "task_worker")
				if len(calls) == 0 {
					return noCall(p, "task_worker")
				}
				c := calls[0]
				if c.Task == nil {
					return verdict.Skipf("the client called the tool without task augmentation, so there was no task to cancel (%s)", reportsText(p))
				}
				if cs := cancelsOf(p, c); len(cs) > 0 {
					return verdict.Broken(e.Revision, verdict.Req("CAN-4"), []string{"tasks/cancel with taskId " + c.Task.ID},
						fmt.Sprintf("notifications/cancelled for the task-augmented request %s", c.ID), cs[0].Seq)
				}
				for _, r := range requests(p, mcp.MethodTasksCancel) {
					var params struct {
						TaskID string `json:"taskId"`
					}
					_ = json.Unmarshal(r.Msg.Params, &params)
					if params.TaskID == c.Task.ID {
						return verdict.Passf("the task %s was cancelled with tasks/cancel at seq %d", c.Task.ID, r.Seq)
					}
				}
				return verdict.Broken(e.Revision, verdict.Req("CAN-4").Except(verdict.Info,
					"the client sent no cancel of either kind: the task was left working, which no rule forbids"),
					[]string{"tasks/cancel with taskId " + c.Task.ID}, "the task was abandoned without any cancel ("+reportsText(p)+")", 0)
			},
		},
	}
}
