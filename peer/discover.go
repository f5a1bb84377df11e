package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/mcp"
)

// DiscoverResult is the server's answer to server/discover (26/discover):
// the versions it supports, its capabilities, and its identity from
// _meta. Raw keeps the result; its strings are untrusted.
type DiscoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      map[string]json.RawMessage `json:"capabilities"`
	Instructions      string                     `json:"instructions,omitempty"`
	// ServerInfo is _meta's io.modelcontextprotocol/serverInfo, which
	// servers SHOULD include (LIF-51); nil when absent.
	ServerInfo *Implementation `json:"-"`
	// ResultType is the result's resultType, "" when absent.
	ResultType string          `json:"-"`
	Raw        json.RawMessage `json:"-"`
}

// Supports reports whether the server lists version.
func (d *DiscoverResult) Supports(version string) bool {
	return slices.Contains(d.SupportedVersions, version)
}

// ParseDiscoverResult decodes a server/discover result.
func ParseDiscoverResult(raw json.RawMessage) (*DiscoverResult, error) {
	var d DiscoverResult
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, decodeError("the server/discover result", err)
	}
	d.Raw = raw
	d.ResultType, _ = ResultType(raw)
	var m struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &m) == nil {
		if info, ok := m.Meta[mcp.MetaServerInfo]; ok {
			var impl Implementation
			if err := json.Unmarshal(info, &impl); err != nil {
				return &d, decodeError("the server/discover result's serverInfo", err)
			}
			d.ServerInfo = &impl
		}
	}
	return &d, nil
}

// Discover sends server/discover and returns the parsed result. On a
// 2026-07-28 session the result is kept: Server then answers from it. A
// JSON-RPC error comes back typed where 2026-07-28 defines its code
// (Error2026), else as *jsonrpc.Error; a result whose resultType is not
// complete is a *ResultTypeError.
func (s *Session) Discover(ctx context.Context, opts ...CallOption) (*DiscoverResult, error) {
	var raw json.RawMessage
	if err := s.Request(ctx, mcp.MethodServerDiscover, nil, &raw, opts...); err != nil {
		return nil, fmt.Errorf("server/discover: %w", err)
	}
	d, err := ParseDiscoverResult(raw)
	if err != nil {
		return d, fmt.Errorf("server/discover: %w", err)
	}
	s.KeepDiscovered(d)
	return d, nil
}

// KeepDiscovered keeps d as the session's server/discover result, for a
// caller that sent server/discover itself (with Start, to be able to
// cancel it); on a 2026-07-28 session Server then answers from it.
func (s *Session) KeepDiscovered(d *DiscoverResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.envelope != nil {
		s.discovered = d
	}
}

// Discovered returns the result of the session's last successful
// Discover, or nil.
func (s *Session) Discovered() *DiscoverResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discovered
}

// asInitResult is the discover result in the shape of an initialize
// result, for what reads a session's server the same way in both eras
// (capabilities, serverInfo, the experimental control extension).
func (d *DiscoverResult) asInitResult(version string) *InitResult {
	r := &InitResult{ProtocolVersion: version, Capabilities: d.Capabilities, Instructions: d.Instructions, Raw: d.Raw}
	if d.ServerInfo != nil {
		r.ServerInfo = *d.ServerInfo
	}
	return r
}
