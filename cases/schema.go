package cases

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/wireschema"
)

// maxListPages bounds how many tools/list pages a case follows.
const maxListPages = 100

// schemaCases are the cases that make the target send what the schema
// check judges: every inbound frame of every case is checked after the
// case (runner), but a target is only asked for its tools when a case
// needs a tool; this case asks for them, so that the tools' shapes are
// checked against any server that declares tools.
func schemaCases() []Case {
	return []Case{
		{
			ID:       "rpc/tools-list-schema",
			Title:    "every tools/list page matches the schema's ListToolsResult",
			Reqs:     []string{"RPC-2"},
			Versions: []string{V20251125},
			Needs:    Needs{Capabilities: []string{"tools"}},
			Sends:    fmt.Sprintf("tools/list, following nextCursor (at most %d pages)", maxListPages),
			Expect:   "each page's result matches ListToolsResult of the 2025-11-25 schema.json (every tool an object with a string name and an object inputSchema)",
			Run:      toolsListSchema,
		},
	}
}

func toolsListSchema(ctx context.Context, e *Env) Outcome {
	var seqs []uint64
	cursor := ""
	for range maxListPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		call, err := e.S.Start(ctx, "tools/list", params)
		if err != nil {
			return Errorf("sending tools/list: %v", err)
		}
		resp, err := call.Await(ctx)
		if err != nil {
			return Errorf("no answer to tools/list: %v", err)
		}
		_, seq := call.Response()
		if resp.Error != nil {
			return Errorf("tools/list answered error %d (%s) although the server declares tools", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false))
		}
		seqs = append(seqs, seq)
		var page struct {
			NextCursor any `json:"nextCursor"`
		}
		_ = json.Unmarshal(resp.Result, &page)
		if cursor, _ = page.NextCursor.(string); cursor == "" {
			break
		}
	}
	found, err := wireschema.Check(V20251125, e.Log.Events())
	if err != nil {
		return Errorf("loading the schema: %v", err)
	}
	for _, v := range found.Violations {
		if slices.Contains(seqs, v.Seq) {
			return Violation(Fail, v.Requirement, []string{"every tools/list page's result matches the 2025-11-25 schema's ListToolsResult"}, v.String(), v.Seq)
		}
	}
	return Passf("tools/list answered %d page(s), each matching ListToolsResult", len(seqs))
}
