package peer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/mcp"
)

// Tool is one entry of tools/list, as far as mcpflight uses it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Execution   struct {
		// TaskSupport is "forbidden", "optional" or "required"; empty
		// means forbidden (2025-11-25 tasks).
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
	// InputSchema is the tool's inputSchema as listed (untrusted).
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Annotations are the tool's hints about its behaviour; absent
	// hints are nil (untrusted, and hints only).
	Annotations struct {
		ReadOnlyHint    *bool `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
	} `json:"annotations"`
}

// ReadOnly reports whether the tool's annotations say it does not modify
// its environment: readOnlyHint true, and destructiveHint not true. A
// tool without the hint may write (its default is false), and is never
// called by mcpflight unless the user names it.
func (t Tool) ReadOnly() bool {
	a := t.Annotations
	return a.ReadOnlyHint != nil && *a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint)
}

// maxToolPages bounds how many tools/list pages ListTools follows, so a
// server whose cursor never ends cannot hold it forever.
const maxToolPages = 100

// ListTools follows tools/list pagination and returns every tool.
func (s *Session) ListTools(ctx context.Context) ([]Tool, error) {
	var all []Tool
	cursor := ""
	for range maxToolPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			Tools      []Tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := s.Request(ctx, mcp.MethodToolsList, params, &res); err != nil {
			return all, fmt.Errorf("tools/list: %w", err)
		}
		all = append(all, res.Tools...)
		if cursor = res.NextCursor; cursor == "" {
			return all, nil
		}
	}
	return all, fmt.Errorf("tools/list: still paginating after %d pages", maxToolPages)
}
