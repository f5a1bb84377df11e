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
