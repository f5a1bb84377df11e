package cases

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// jsonrpcCases cover the JSON-RPC base messages (2025-11-25 basic):
// request IDs and notifications.
func jsonrpcCases() []probe.Case {
	// The IDs the two ID cases choose themselves: a session that has sent
	// none of them yet may serve them after other cases (probe.Case.IDs).
	zero := []jsonrpc.ID{jsonrpc.IntID(0)}
	mixed := []jsonrpc.ID{jsonrpc.StringID("7"), jsonrpc.IntID(7), jsonrpc.StringID("-1"), jsonrpc.IntID(-1)}
	return []probe.Case{
		// RPC-4 MUST: "Requests MUST include a string or integer ID."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		{
			ID:       "rpc/id-zero",
			Title:    "request id 0 is answered",
			Reqs:     []string{"RPC-4", "RPC-8"},
			Versions: bothRevisions(),
			Sends:    "ping with id 0",
			Expect:   "a response with the integer id 0",
			Tidy:     true,
			IDs:      zero,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return pingIDs(ctx, e, zero...)
			},
		},
		// RPC-4 MUST: "Requests MUST include a string or integer ID."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		{
			ID:       "rpc/string-and-integer-ids",
			Title:    `ids "7" and 7 are different requests`,
			Reqs:     []string{"RPC-4", "RPC-8"},
			Versions: bothRevisions(),
			Sends:    `ping with id "7", ping with id 7, ping with id "-1" and -1, concurrently`,
			Expect:   "each answered once, with its id's exact JSON type",
			Tidy:     true,
			IDs:      mixed,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return pingIDs(ctx, e, mixed...)
			},
		},
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// RPC-57 MUST NOT (2026-07-28 only): "Servers MUST NOT rely on prior requests over the
		//   same connection to establish context (e.g., capabilities, protocol version, client
		//   identity)."
		{
			ID:        "rpc/no-response-to-notifications",
			Title:     "notifications are never answered",
			Reqs:      []string{"RPC-15", "CAN-14", "CAN-11", "RPC-8"},
			ReqsUnder: map[string][]string{spec.V20260728: {"RPC-57"}},
			Versions:  bothRevisions(),
			Sends:     "notifications/initialized again, cancelled for an unknown id, progress for an unknown token, and an unknown notification",
			Expect:    "no response of any kind; the session stays usable",
			Run:       noResponseToNotifications,
		},
	}
}

// pingIDs sends a request per id and judges that each is answered with
// its exact id. The request is ping under 2025-11-25 and server/discover
// under 2026-07-28, where ping is removed (PNG-40).
func pingIDs(ctx context.Context, e *probe.Env, ids ...jsonrpc.ID) verdict.Outcome {
	method, owner := mcp.MethodPing, probe.PingOwner
	if e.Is2026() {
		method, owner = mcp.MethodServerDiscover, probe.DiscoverOwner
	}
	calls := make([]*peer.Call, 0, len(ids))
	for _, id := range ids {
		c, err := e.S.Start(ctx, method, nil, peer.WithID(id))
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		calls = append(calls, c)
	}
	brokenPing := ""
	for _, c := range calls {
		wctx, cancel, _ := e.WithPatience(ctx)
		resp, err := c.Await(wctx)
		cancel()
		if err != nil {
			want := []string{fmt.Sprintf("a response whose id is exactly %s", c.ID)}
			if ev, ok := e.FrameAfter(c.SentSeq, probe.AnyResponse); ok {
				return e.Breaks("RPC-8", want, fmt.Sprintf("no response with id %s; the nearest response was %s", c.ID, probe.Describe(ev)), ev.Seq)
			}
			// Nothing answered the request at all: a valid string or
			// integer ID was taken for none (RPC-4), the request for a
			// notification.
			return e.Breaks("RPC-4", want, fmt.Sprintf("no response at all for the request with id %s: it was treated as if it had no id", c.ID), 0)
		}
		if resp.Error != nil && brokenPing == "" {
			// An error answer with the exact id still answers the id:
			// what broke is the method, which its owner judges.
			_, seq := c.Response()
			brokenPing = probe.Describe(e.EventAt(seq))
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.ExtraResponses(); o != nil {
		return *o
	}
	if brokenPing != "" {
		return e.Blame(method+" carrying the ids under test", owner,
			"every id was answered with its exact type, but with an error: "+brokenPing)
	}
	return verdict.Passf("%d requests answered with their exact ids", len(ids))
}

func noResponseToNotifications(ctx context.Context, e *probe.Env) verdict.Outcome {
	first := e.Log.Len()
	notes := []struct {
		method string
		params any
	}{
		{mcp.NotificationInitialized, nil},
		{mcp.NotificationCancelled, map[string]any{"requestId": "mcpflight-never-sent", "reason": "probe"}},
		{mcp.NotificationProgress, map[string]any{"progressToken": "mcpflight-never-issued", "progress": 1}},
		{"notifications/mcpflight/unknown", map[string]any{"probe": true}},
	}
	var refused []string
	for _, n := range notes {
		if n.method == mcp.NotificationInitialized && e.Is2026() {
			continue // 2026-07-28 has no handshake to acknowledge
		}
		_, se, err := e.Notify(ctx, n.method, n.params)
		if err != nil {
			return verdict.Errorf("sending %s: %v", n.method, err)
		}
		if se != nil {
			refused = append(refused, fmt.Sprintf("%s with HTTP %d", n.method, se.Status))
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(first); o != nil {
		return *o
	}
	if e.Is2026() && e.S.Discovered() != nil {
		// The runner's server/discover was answered on this connection
		// before the notifications (which carry no envelope in
		// 2026-07-28): the same request must be answered the same way
		// after them, or the server took its context from them.
		seq := e.Log.Len()
		pctx, cancel := context.WithTimeout(ctx, e.Patience())
		_, err := e.S.Discover(pctx)
		cancel()
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			// Only a 2026-07-28 session gets here: RPC-57 is the rule.
			return e.Broke(verdict.Req("CAN-11").Under(spec.V20260728, "RPC-57"), []string{"server/discover answered as it was before the notifications, on the same connection"},
				fmt.Sprintf("server/discover, answered before the notifications, now gets error %d: %s: the server took the envelope-less notifications for a change of era",
					rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), seq+1)
		}
	}
	if h := e.Healthy(ctx, "unsolicited notifications"); h != nil {
		return *h
	}
	if len(refused) > 0 {
		// HTTP-12 (2025-11-25) and HTTP-87 (2026-07-28) let a server refuse
		// with an HTTP error what it cannot accept; the refusal's body is
		// no JSON-RPC answer.
		return verdict.Passf("notifications sent (seq %d on), none answered; refused: %s (an HTTP error status for a notification the server cannot accept is allowed)", first+1, strings.Join(refused, ", "))
	}
	return verdict.Passf("notifications sent (seq %d on), none answered", first+1)
}
