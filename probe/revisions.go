package probe

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// The rules of a cancelled request differ by revision. In
// 2025-11-25 one SHOULD covers them all (CAN-8: stop, free, no response).
// In 2026-07-28 stopping work and freeing resources stay a SHOULD
// (CAN-48), but sending anything further for the request is a MUST NOT:
// CAN-54 on stdio (and on an in-process pipe, which frames messages as
// stdio does), CAN-56 over Streamable HTTP.

// Is2026 reports whether the run tests 2026-07-28.
func (e *Env) Is2026() bool { return e.Revision == spec.V20260728 }

// NoFurtherMessageRule is the rule broken by a message for a request
// after its cancel: CAN-8 under 2025-11-25; CAN-54 (stdio) or CAN-56
// (Streamable HTTP) under 2026-07-28.
func (e *Env) NoFurtherMessageRule() verdict.Rule {
	if e.Transport == "http" {
		return verdict.Req("CAN-8").Under(spec.V20260728, "CAN-56")
	}
	return verdict.Req("CAN-8").Under(spec.V20260728, "CAN-54")
}

// StopWorkRule is the rule broken by a cancelled operation that goes on
// working or keeps its resources: CAN-8 under 2025-11-25, CAN-48 under
// 2026-07-28. Over 2026-07-28 Streamable HTTP the cancel is the closing
// of the request's stream, which the server MUST treat as cancellation
// (CAN-55): the counters showing the operation not cancelled say it did
// not.
func (e *Env) StopWorkRule() verdict.Rule {
	if e.Transport == "http" {
		return verdict.Req("CAN-8").Under(spec.V20260728, "CAN-55")
	}
	return verdict.Req("CAN-8").Under(spec.V20260728, "CAN-48")
}

// TrackTokensRule is "track active progress tokens": PRG-12 under
// 2025-11-25, PRG-44 under 2026-07-28.
func (e *Env) TrackTokensRule() verdict.Rule {
	return verdict.Req("PRG-12").Under(spec.V20260728, "PRG-44")
}

// DiscoverOwner: under 2026-07-28 the liveness probe is server/discover
// (ping is removed, PNG-40), which relies on LIF-42, judged by
// discover/answers.
var DiscoverOwner = Owner{Requirement: "LIF-42", Case: "discover/answers"}

// healthy2026 is Healthy under 2026-07-28: server/discover stands in
// for the removed ping.
func (e *Env) healthy2026(ctx context.Context, after string) *verdict.Outcome {
	pctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	seq := e.Log.Len()
	_, err := e.S.Discover(pctx)
	if err == nil {
		return nil
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		o := e.Blame("liveness server/discover after "+after, DiscoverOwner,
			fmt.Sprintf("the session answered, with error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)))
		return &o
	}
	o := e.Breaks("CAN-11",
		[]string{"server/discover answered after " + after},
		"server/discover failed: "+chrono.Sanitize(err.Error(), false), seq+1)
	return &o
}
