package cases

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// lifecycleCases cover the initialize handshake's version negotiation
// (2025-11-25 basic/lifecycle) and ping (basic/utilities/ping).
func lifecycleCases() []probe.Case {
	return []probe.Case{
		// LIF-9 MUST: "If the server supports the requested protocol version, it MUST respond with
		//   the same version."
		// LIF-3 MUST: "The server MUST respond with its own capabilities and information:"
		// LIF-10 MUST: "Otherwise, the server MUST respond with another protocol version it
		//   supports."
		{
			ID:       "lifecycle/version-echo",
			Title:    "initialize answers the requested version",
			Reqs:     []string{"LIF-9", "LIF-3", "LIF-10"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{NoHandshake: true},
			Sends:    `initialize with protocolVersion "2025-11-25"`,
			Expect:   `protocolVersion "2025-11-25", or (info) an older published version the server prefers`,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return versionProbe(ctx, e, spec.V20251125)
			},
		},
		// LIF-10 MUST: "Otherwise, the server MUST respond with another protocol version it
		//   supports."
		// LIF-11 SHOULD: "This SHOULD be the _latest_ version supported by the server."
		// LIF-3 MUST: "The server MUST respond with its own capabilities and information:"
		// LIF-9 MUST: "If the server supports the requested protocol version, it MUST respond with
		//   the same version."
		{
			ID:       "lifecycle/unsupported-version",
			Title:    "initialize with an unknown version gets a supported one",
			Reqs:     []string{"LIF-10", "LIF-11", "LIF-3", "LIF-9"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{NoHandshake: true},
			Sends:    `initialize with protocolVersion "1900-01-01"`,
			Expect:   "a published protocol version the server supports (an error is recorded as info: ambiguity A-2)",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return versionProbe(ctx, e, "1900-01-01")
			},
		},
		// PNG-1 MUST: "The receiver MUST respond promptly with an empty response:"
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		{
			ID:       "ping/empty-result",
			Tidy:     true,
			Title:    "ping is answered with an empty result",
			Reqs:     []string{"PNG-1", "RPC-8"},
			Versions: []string{spec.V20251125},
			Sends:    mcp.MethodPing,
			Expect:   "{} with the same id",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				seq := e.Log.Len()
				if err := e.S.Ping(ctx); err != nil {
					ev, _ := e.FrameAfter(seq, probe.AnyResponse)
					return e.Breaks("PNG-1", []string{`{"result":{}} with the ping's id`}, chrono.Sanitize(err.Error(), false)+"; "+probe.Describe(ev), ev.Seq)
				}
				if err := e.Quiesce(ctx); err != nil {
					return verdict.Errorf("%v", err)
				}
				if o := e.ExtraResponses(); o != nil {
					return *o
				}
				return verdict.Passf("ping answered with an empty result")
			},
		},
	}
}

func versionProbe(ctx context.Context, e *probe.Env, asked string) verdict.Outcome {
	var res peer.InitResult
	err := e.S.Request(ctx, mcp.MethodInitialize, map[string]any{
		"protocolVersion": asked,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpflight", "version": "dev"},
	}, &res)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		if asked != spec.V20251125 {
			return verdict.Infof("initialize with %q was refused with error %d %q (the spec's error example allows it: ambiguity A-2)",
				asked, rpcErr.Code, chrono.Sanitize(rpcErr.Message, false))
		}
		return e.Breaks("LIF-3", []string{"a result with the server's capabilities and information"},
			fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), 0)
	case err != nil:
		return verdict.Errorf("initialize: %v", err)
	}
	got := res.ProtocolVersion
	switch {
	case got == asked:
		return verdict.Passf("the server answered %q", got)
	case !slices.Contains(spec.Published(), got):
		req := "LIF-10"
		if asked == spec.V20251125 {
			req = "LIF-9"
		}
		return e.Breaks(req, []string{fmt.Sprintf("%q, or another published version the server supports: %v", asked, spec.Published())},
			fmt.Sprintf("protocolVersion %q, which no server can support", chrono.Sanitize(got, false)), 0)
	case asked == spec.V20251125:
		return verdict.Infof("the server prefers the older version %q over %q", got, asked)
	}
	return verdict.Passf("asked for %q, the server offered %q", asked, got)
}
