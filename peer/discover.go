package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
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
// (ModernError), else as *jsonrpc.Error; a result whose resultType is not
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

// ErrStreamClosed is the error of a 2026-07-28 request over Streamable
// HTTP that was cancelled by closing its response stream (CAN-43): no
// response can arrive for it any more.
var ErrStreamClosed = errors.New("peer: the request's response stream was closed to cancel it; no response can arrive")

// StateStreamClosed is the state of a request cancelled by closing its
// response stream (2026-07-28 Streamable HTTP).
const StateStreamClosed State = "stream-closed"

// cancelByClose cancels c the 2026-07-28 way over Streamable HTTP: by
// closing its response stream (CAN-43, CAN-55); no notifications/cancelled
// is sent (HTTP-99). A response that came first stands.
func (s *Session) cancelByClose(rc transport.RequestCloser, c *Call) error {
	closed, err := rc.CloseRequest(c.ID)
	if err != nil {
		return err
	}
	seq := s.log.Len()
	c.mu.Lock()
	c.CancelSeq = seq
	c.mu.Unlock()
	if !closed {
		// The exchange had ended: its response (or its loss) is on the
		// way through the read loop, which finishes the call.
		return nil
	}
	s.mu.Lock()
	own := s.outgoing[c.ID.Key()] == c
	if own {
		delete(s.outgoing, c.ID.Key())
		if c.Token.IsValid() && s.tokens[c.Token.Key()] == c && !c.keepToken {
			delete(s.tokens, c.Token.Key())
			s.retiredTokens[c.Token.Key()] = c
		}
	}
	s.mu.Unlock()
	if !own {
		return nil
	}
	c.mu.Lock()
	from := c.state
	c.err, c.state = ErrStreamClosed, StateStreamClosed
	close(c.done)
	c.mu.Unlock()
	s.log.State("request "+c.ID.String(), string(from), string(StateStreamClosed))
	return nil
}

// lateAfterClose keeps m as the late response of a call cancelled by
// closing its stream, when it is the first; it reports whether it did.
func (c *Call) lateAfterClose(m *jsonrpc.Message, seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateStreamClosed || c.resp != nil {
		return false
	}
	c.resp, c.respSeq = m, seq
	return true
}

// ResultType is the resultType of the request's result on a 2026-07-28
// session: "complete" for an absent one (RPC-44), "" before a result or
// on a 2025-11-25 session.
func (c *Call) ResultType() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resultType
}

// Modern reports whether the request was sent on a 2026-07-28 session.
func (c *Call) Modern() bool { return c.modern }

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
