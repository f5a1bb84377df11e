package clientcases

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

func taskCases() []clientrun.Case {
	return []clientrun.Case{
		{
			ID:    "tasks/cancel-with-tasks-cancel",
			Title: "a durable task is cancelled with tasks/cancel, never with notifications/cancelled",
			Reqs:  []string{"CAN-4", "CAN-7", "CAN-57", "TSX-52"},
			// 2026-07-28: the tasks extension. The scripted server
			// declares it in server/discover, and makes a task of a call
			// whose _meta declares it (TSX-1, TSX-2).
			Versions: both,
			Sends:    "2025-11-25: declares tasks.requests.tools.call and a tool with taskSupport optional, and answers the task-augmented call with a working task; 2026-07-28: declares the io.modelcontextprotocol/tasks extension and answers a call that declares it with a CreateTaskResult (resultType task). The task stays working until tasks/cancel",
			Expect:   "the adapter aborts the task once created: tasks/cancel naming the task (over 2026-07-28 HTTP with Mcp-Name set to its ID), and no notifications/cancelled for the tools/call",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "task_worker", Task: true, AbortAfterTaskCreated: true})}, Linger: e.Linger()},
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
					how := "without task augmentation"
					if e.Revision == v2026 {
						how = "without declaring the io.modelcontextprotocol/tasks extension in its _meta"
					}
					return verdict.Skipf("the client called the tool %s, so there was no task to cancel (%s)", how, reportsText(p))
				}
				rule := verdict.Req("CAN-4").Under(v2026, "CAN-57")
				if cs := cancelsOf(p, c); len(cs) > 0 {
					return verdict.Broken(e.Revision, rule, []string{"tasks/cancel with taskId " + c.Task.ID},
						fmt.Sprintf("notifications/cancelled for the task-augmented request %s", c.ID), cs[0].Seq)
				}
				for _, r := range requests(p, mcp.MethodTasksCancel) {
					var params struct {
						TaskID string `json:"taskId"`
					}
					_ = json.Unmarshal(r.Msg.Params, &params)
					if params.TaskID != c.Task.ID {
						continue
					}
					if http2026(e) {
						if name := r.Header.Get(mcp.HeaderName); name != c.Task.ID {
							return verdict.Broken(e.Revision, verdict.Req("TSX-52"), []string{mcp.HeaderName + ": " + c.Task.ID},
								fmt.Sprintf("tasks/cancel for %s was POSTed with %s %q", c.Task.ID, mcp.HeaderName, chrono.Sanitize(name, false)), r.Seq)
						}
						return verdict.Passf("the task %s was cancelled with tasks/cancel at seq %d, with %s set to its ID", c.Task.ID, r.Seq, mcp.HeaderName)
					}
					return verdict.Passf("the task %s was cancelled with tasks/cancel at seq %d", c.Task.ID, r.Seq)
				}
				return verdict.Broken(e.Revision, rule.Except(verdict.Info,
					"the client sent no cancel of either kind: the task was left working, which no rule forbids"),
					[]string{"tasks/cancel with taskId " + c.Task.ID}, "the task was abandoned without any cancel ("+reportsText(p)+")", 0)
			},
		},
	}
}
