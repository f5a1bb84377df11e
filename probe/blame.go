package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/verdict"
)

// Owner names the case of the catalogue that judges the rule a helper
// step relies on: when the step fails while a case's own subject behaved,
// that case carries the fail and the other ends blocked, pointing at
// it (verdict.Blamed).
type Owner struct {
	// Requirement is the rule the helper step relies on.
	Requirement string
	// Case is the ID of the case that judges it.
	Case string
}

// PingOwner: a ping, used as a liveness probe or as the request that
// carries an ID under test, relies on PNG-1, which ping/empty-result
// judges.
var PingOwner = Owner{Requirement: "PNG-1", Case: "ping/empty-result"}

// Blame is the outcome of a case whose helper step failed (blocked): step names it,
// owner the rule and the case that judges it, detail what happened.
func (e *Env) Blame(step string, owner Owner, detail string) verdict.Outcome {
	return verdict.Blamed(step, owner.Requirement, owner.Case, detail)
}

// Healthy pings the target after a race and judges whether the session
// is still usable (CAN-11: both parties MUST handle races gracefully). A
// ping that goes unanswered, or a target that closed the session, fails
// the case. A ping answered with an error shows a usable session whose
// ping is broken: that is PNG-1's, which ping/empty-result judges, so the
// case ends blocked by that case. It returns nil when the ping
// succeeded.
func (e *Env) Healthy(ctx context.Context, after string) *verdict.Outcome {
	if e.Is2026() {
		return e.healthy2026(ctx, after)
	}
	pctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	seq := e.Log.Len()
	err := e.S.Ping(pctx)
	if err == nil {
		return nil
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		o := e.Blame("liveness ping after "+after, PingOwner,
			fmt.Sprintf("the session answered, with error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)))
		return &o
	}
	o := e.Breaks("CAN-11",
		[]string{"ping answered with an empty result after " + after},
		"ping failed: "+chrono.Sanitize(err.Error(), false), seq+1)
	return &o
}

// ExchangeWithoutWork is what a case that uses the slow tool when the
// profile names one (Needs.UsesSlowTool) does without it: a tools/list,
// so that the target has written something to judge (an answer that is an
// error is an answer too: not every server serves tools). It returns what
// was sent, for the case's summary, or the error of a request that was
// not answered at all.
func (e *Env) ExchangeWithoutWork(ctx context.Context) (string, *verdict.Outcome) {
	var raw json.RawMessage
	err := e.S.Request(ctx, mcp.MethodToolsList, map[string]any{}, &raw)
	if _, isRPC := RPCCode(err); err != nil && !isRPC {
		o := verdict.Errorf("%s: %v", mcp.MethodToolsList, err)
		return "", &o
	}
	return mcp.MethodToolsList + " (the profile names no slow tool)", nil
}

// CallableTool is a tool a case may call when it needs a tool but no work
// in flight: the profile's slow, then log tool (the user named them for
// the catalogue to call), else the first tool of tools/list whose
// annotations say it only reads (peer.Tool.ReadOnly), with the minimal
// arguments its inputSchema accepts, else the profile's effect tool.
// mcpflight never calls a tool that may write unless the user named it.
// It returns the tool, or why there is none (a skip's reason).
func (e *Env) CallableTool(ctx context.Context) (*profile.Tool, string, error) {
	if e.Profile != nil {
		for _, t := range []*profile.Tool{e.Profile.Slow, e.Profile.Log} {
			if t != nil {
				return e.toolArgs(t), "", nil
			}
		}
	}
	tools, err := e.S.ListTools(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", mcp.MethodToolsList, err)
	}
	for _, t := range tools {
		if t.ReadOnly() && t.Execution.TaskSupport != "required" {
			return &profile.Tool{Name: t.Name, Arguments: profile.MinimalArguments(t.InputSchema)}, "", nil
		}
	}
	if e.Profile != nil && e.Profile.Effect != nil {
		return e.toolArgs(e.Profile.Effect), "", nil
	}
	return nil, "the profile names no tool, and tools/list has none whose annotations say it only reads (readOnlyHint): mcpflight calls no tool that may write unless the profile names it", nil
}

// toolArgs is t with a copy of its arguments; on a target with the
// control extension an operation of its own runs free.
func (e *Env) toolArgs(t *profile.Tool) *profile.Tool {
	args := t.CloneArgs()
	if e.Control != nil && e.Profile != nil && t == e.Profile.Slow {
		args["key"], args["gated"] = "callable", false
	}
	return &profile.Tool{Name: t.Name, Arguments: args}
}
