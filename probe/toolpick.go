package probe

import (
	"context"

	"github.com/mcpflight/mcpflight/profile"
)

// Zero configuration where tools/list suffices: a case that
// needs only what tools/list says of a tool (its execution.taskSupport)
// takes the profile's tool when it qualifies, and otherwise picks one
// from tools/list, with the minimal arguments its inputSchema accepts.

// PickedTool is the tool a case calls.
type PickedTool struct {
	Name      string
	Arguments map[string]any
	// Support is its execution.taskSupport as listed ("" when absent).
	Support string
	// FromProfile is set when the profile named it; otherwise it was
	// picked from tools/list.
	FromProfile bool
}

// ForbidsTasks accepts a tool that must not be called as a task: its
// taskSupport is "forbidden" or absent (TSK-8).
func ForbidsTasks(support string) bool { return support == "" || support == "forbidden" }

// AcceptsTasks accepts a tool that may be called as a task: its
// taskSupport is "optional" or "required" (TSK-10, TSK-11).
func AcceptsTasks(support string) bool { return support == "optional" || support == "required" }

// RequiresTasks accepts a tool that must be called as a task (TSK-11).
func RequiresTasks(support string) bool { return support == "required" }

// PickTool returns named (a profile's tool, or nil) when tools/list lists
// it with a taskSupport that want accepts; otherwise the first listed
// tool, in tools/list order, that want accepts. ok is false when no tool
// qualifies.
func (e *Env) PickTool(ctx context.Context, named *profile.Tool, want func(support string) bool) (PickedTool, bool, error) {
	tools, err := e.S.ListTools(ctx)
	if err != nil {
		return PickedTool{}, false, err
	}
	if named != nil {
		for _, t := range tools {
			if t.Name == named.Name && want(t.Execution.TaskSupport) {
				return PickedTool{Name: t.Name, Arguments: named.CloneArgs(), Support: t.Execution.TaskSupport, FromProfile: true}, true, nil
			}
		}
	}
	for _, t := range tools {
		if want(t.Execution.TaskSupport) {
			return PickedTool{Name: t.Name, Arguments: profile.MinimalArguments(t.InputSchema), Support: t.Execution.TaskSupport}, true, nil
		}
	}
	return PickedTool{}, false, nil
}
