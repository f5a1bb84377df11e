package probe

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
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
	if e.Modern() {
		return e.healthyModern(ctx, after)
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
