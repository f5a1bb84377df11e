package cases

import (
	"context"

	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/wireschema"
)

// schemaCases are the cases that make the target send what the schema
// check judges: every inbound frame of every case is checked after the
// case (runner), but a target is only asked for its tools when a case
// needs a tool; this case asks for them, so that the tools' shapes are
// checked against any server that declares tools.
func schemaCases() []probe.Case {
	return []probe.Case{
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-40 MUST (2026-07-28 only): "The `result` MUST include a `resultType` field to
		//   indicate the type of the result."
		{
			ID:    "rpc/tools-list-schema",
			Tidy:  true,
			Title: "every tools/list page matches the schema's ListToolsResult",
			Reqs:  []string{wireschema.BaseRule},
			// Under 2026-07-28 a page without resultType breaks
			// ListToolsResult, and the schema check names RPC-40 for it
			// (wireschema.Requirement): the case declares every rule that
			// check can name for a result.
			ReqsUnder: map[string][]string{spec.V20260728: {"RPC-40"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{Capabilities: []string{"tools"}},
			Sends:     "tools/list, following nextCursor (peer.ListTools: at most 100 pages)",
			Expect:    "each page's result matches ListToolsResult of the run's revision's schema.json (every tool an object with a string name and an object inputSchema; under 2026-07-28 a resultType)",
			Run:       toolsListSchema,
		},
	}
}

func toolsListSchema(ctx context.Context, e *probe.Env) verdict.Outcome {
	from := e.Log.Len()
	tools, listErr := e.S.ListTools(ctx)
	found, err := wireschema.Check(e.Revision, e.Log.Events())
	if err != nil {
		return verdict.Errorf("loading the schema: %v", err)
	}
	for _, v := range found.Violations {
		// The pages of tools/list: the tracker checks them as
		// ListToolsResult (and a page of the wrong kind as its envelope).
		if v.Seq > from && (v.Definition == "ListToolsResult" || v.Definition == "JSONRPCResultResponse") {
			return e.Breaks(v.Requirement, []string{"every tools/list page's result matches the " + e.Revision + " schema's ListToolsResult"}, v.String(), v.Seq)
		}
	}
	if listErr != nil {
		return verdict.Errorf("%v", listErr)
	}
	return verdict.Passf("tools/list listed %d tools, every page matching ListToolsResult", len(tools))
}
