package clientcases

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// metaVersion is the request's _meta io.modelcontextprotocol/protocolVersion.
func metaVersion(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	var v string
	_ = json.Unmarshal(p.Meta[mcp.MetaProtocolVersion], &v)
	return v
}

// probeCase is a dual-era client's fallback from a legacy server's
// answer to server/discover.
func probeCase(slug, title string, pa clientrun.ProbeAnswer, httpStatus int) clientrun.Case {
	var transports []string
	if pa.Silent {
		// Over HTTP no rule asks for a fallback on silence (a deployed
		// server that does not answer is an outage); stdio's does (STD-49).
		transports = stdio
	}
	return clientrun.Case{
		Transports:    transports,
		ID:            "versioning/probe-fallback-" + slug,
		Title:         "a dual-era client falls back to initialize when the probe " + title,
		Reqs:          []string{"STD-48", "STD-49", "LIF-52", "HTTP-106"},
		Versions:      only(v2026),
		BothRevisions: true,
		Sends:         "plays a legacy (2025-11-25) server whose answer to server/discover " + title + "; then serves initialize and one tools/call",
		Expect:        "server/discover first (stdio), then, whatever the failure, initialize and the call",
		Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
			answer := pa
			if e.Transport == clientrun.TransportHTTP {
				answer.HTTPStatus = httpStatus
			}
			p := e.Play(ctx, clientrun.Told{Connect: clientrun.Connect{TimeoutMs: silenceBudgetMs}, Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "quick"})}},
				clientrun.Script{Serve2025: &answer, Tools: []clientrun.Tool{{Name: "quick"}}})
			if o := p.Unusable(); o != nil {
				return *o
			}
			if len(p.Requests) == 0 {
				return verdict.Errorf("the client sent no request at all (%s)", reportsText(p))
			}
			first := p.Requests[0]
			onStdio := e.Transport == clientrun.TransportStdio
			if first.Msg.Method == mcp.MethodInitialize {
				if onStdio {
					return verdict.Broken(e.Revision, verdict.Req("STD-48"), []string{"server/discover before any other request"},
						"the client sent initialize without probing first (a client that supports only legacy servers should be run with --protocol 2025-11-25)", first.Seq)
				}
				return verdict.Infof("the client sent initialize without a modern request first (HTTP-106: it MAY probe)")
			}
			if first.Msg.Method != mcp.MethodServerDiscover && onStdio {
				return verdict.Broken(e.Revision, verdict.Req("STD-48"), []string{"server/discover before any other request"},
					fmt.Sprintf("the first request was %s", chrono.Sanitize(first.Msg.Method, false)), first.Seq)
			}
			inits := requests(p, mcp.MethodInitialize)
			rule := verdict.Req("STD-49")
			if !onStdio {
				rule = verdict.Req("HTTP-106").Clause("SHOULD")
			}
			if len(inits) == 0 && pa.Silent {
				// STD-49's MUST NOT names error codes; silence is in its
				// explanation ("or not at all") and in the outcome list
				// ("does not respond within a reasonable timeout: ... Fall
				// back"), which has no keyword of its own: the evidence
				// cannot prove the MUST NOT broken.
				return verdict.Broken(e.Revision, rule.Except(verdict.Warn,
					"the sentence's MUST NOT is about error codes; a silent legacy server is named only in its explanation and in the outcome list, which has no keyword"),
					[]string{"initialize after the probe goes unanswered for a reasonable timeout"},
					fmt.Sprintf("the probe is never answered and the client spent its whole connect budget (%d ms) waiting on it without falling back to initialize: "+
						"it has no probe timeout of its own, or one longer than the budget (%s)", silenceBudgetMs, reportsText(p)), 0)
			}
			if len(inits) == 0 {
				return verdict.Broken(e.Revision, rule, []string{"initialize after the failed probe, whatever the failure"},
					fmt.Sprintf("the probe %s and the client never fell back to initialize (%s)", title, reportsText(p)), 0)
			}
			if r, _ := p.Report(1, 0); r.Outcome != clientrun.OutcomeResult {
				return verdict.Broken(e.Revision, rule, []string{"the call served over the legacy session"},
					"the client fell back, but its call did not succeed: "+chrono.Sanitize(r.String(), false), reportSeq(e.Log, 1))
			}
			return verdict.Passf("the probe %s; the client fell back to initialize at seq %d and its call succeeded", title, inits[0].Seq)
		},
	}
}

// silenceBudgetMs is the connect budget of the probe cases: the probe's
// "reasonable timeout" (2026-07-28 stdio, Backward Compatibility) must fit
// in it with the fallback after it.
const silenceBudgetMs = 8000

func versioningCases() []clientrun.Case {
	return []clientrun.Case{
		probeCase("method-not-found", "fails with -32601", clientrun.ProbeAnswer{Code: jsonrpc.CodeMethodNotFound}, 400),
		probeCase("invalid-params", "fails with -32602", clientrun.ProbeAnswer{Code: jsonrpc.CodeInvalidParams}, 400),
		probeCase("other-error", "fails with -32000", clientrun.ProbeAnswer{Code: -32000}, 400),
		probeCase("silence", "is never answered", clientrun.ProbeAnswer{Silent: true}, 0),
		{
			ID:       "versioning/no-removed-methods",
			Title:    "no ping or logging/setLevel on a 2026-07-28 session",
			Reqs:     []string{"PNG-40"},
			Versions: only(v2026),
			Sends:    `a modern server: answers server/discover; the client is told to set the log level "warning" (its library's way), then to make one tools/call`,
			Expect:   "neither ping nor logging/setLevel, which 2026-07-28 removed (the level goes in the call's _meta io.modelcontextprotocol/logLevel)",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{{Op: clientrun.OpSetLogLevel, Level: "warning"}, step(clientrun.CallStep{Tool: "quick"})}},
					clientrun.Script{Tools: []clientrun.Tool{{Name: "quick"}}})
				if o := p.Unusable(); o != nil {
					return *o
				}
				for _, r := range p.Requests {
					if r.Msg.Method == mcp.MethodPing || r.Msg.Method == mcp.MethodLoggingSetLevel {
						return verdict.Broken(e.Revision, verdict.Req("PNG-40"), []string{"no " + r.Msg.Method + " (removed in 2026-07-28)"},
							fmt.Sprintf("%s on a 2026-07-28 session", r.Msg.Method), r.Seq)
					}
				}
				calls := callsTo(p, "quick")
				if len(calls) == 0 {
					return noCall(p, "quick")
				}
				level := "no io.modelcontextprotocol/logLevel in its _meta, so the server sends it no log (LOG-41)"
				var params struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				}
				if json.Unmarshal(calls[0].In.Msg.Params, &params) == nil && len(params.Meta[mcp.MetaLogLevel]) > 0 {
					level = "logLevel " + chrono.Sanitize(string(params.Meta[mcp.MetaLogLevel]), false) + " in its _meta"
				}
				return verdict.Passf("%d requests, none of them a removed method; the call carried %s", len(p.Requests), level)
			},
		},
		{
			ID:       "versioning/envelope-on-every-request",
			Title:    "every 2026-07-28 request carries the per-request _meta envelope",
			Reqs:     []string{"RPC-51", "RPC-54"},
			Versions: only(v2026),
			Sends:    "a modern server: answers server/discover and one tools/call",
			Expect:   "io.modelcontextprotocol/protocolVersion and clientCapabilities in every request's _meta (clientInfo too, SHOULD)",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p, o := playQuick(ctx, e)
				if o != nil {
					return *o
				}
				for _, r := range p.Requests {
					var params struct {
						Meta map[string]json.RawMessage `json:"_meta"`
					}
					_ = json.Unmarshal(r.Msg.Params, &params)
					for _, key := range []string{mcp.MetaProtocolVersion, mcp.MetaClientCapabilities} {
						if _, ok := params.Meta[key]; !ok {
							return verdict.Broken(e.Revision, verdict.Req("RPC-51"), []string{"_meta." + key + " on every request"},
								fmt.Sprintf("%s without _meta.%s", chrono.Sanitize(r.Msg.Method, false), key), r.Seq)
						}
					}
					if _, ok := params.Meta[mcp.MetaClientInfo]; !ok {
						return verdict.Broken(e.Revision, verdict.Req("RPC-54"), []string{"_meta." + mcp.MetaClientInfo + " on every request"},
							fmt.Sprintf("%s without _meta.%s", chrono.Sanitize(r.Msg.Method, false), mcp.MetaClientInfo), r.Seq)
					}
				}
				return verdict.Passf("all %d requests carried the envelope", len(p.Requests))
			},
		},
	}
}
