package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// SupportedVersions are the handshake versions we accept, newest first.
var SupportedVersions = []string{spec.V20251125, spec.V20250618, spec.V20250326}

// ErrVersionMismatch reports a server that answered initialize with a
// protocol version we do not support (LIF rules on version negotiation).
var ErrVersionMismatch = errors.New("peer: server chose an unsupported protocol version")

// Implementation is the name and version of a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitOptions configures the handshake.
type InitOptions struct {
	// ProtocolVersion is the version we ask for; spec.V20251125 if empty.
	ProtocolVersion string
	// Capabilities are the client capabilities we declare.
	Capabilities map[string]any
	// ClientInfo names us; "mcpflight" if empty.
	ClientInfo Implementation
}

// InitResult is the server's answer to initialize, kept raw as well.
type InitResult struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	ServerInfo      Implementation             `json:"serverInfo"`
	Instructions    string                     `json:"instructions,omitempty"`
	Raw             json.RawMessage            `json:"-"`
}

// HasCapability reports whether the server declared a top-level capability.
func (r *InitResult) HasCapability(name string) bool {
	_, ok := r.Capabilities[name]
	return ok
}

// HasExtension reports whether the server declared the extension name
// under capabilities.extensions (2026-07-28, server/discover).
func (r *InitResult) HasExtension(name string) bool {
	var exts map[string]json.RawMessage
	if r == nil || json.Unmarshal(r.Capabilities["extensions"], &exts) != nil {
		return false
	}
	_, ok := exts[name]
	return ok
}

// Experimental returns the raw value of an experimental capability.
func (r *InitResult) Experimental(name string) (json.RawMessage, bool) {
	raw, ok := r.Capabilities["experimental"]
	if !ok {
		return nil, false
	}
	var exp map[string]json.RawMessage
	if json.Unmarshal(raw, &exp) != nil {
		return nil, false
	}
	v, ok := exp[name]
	return v, ok
}

// Initialize runs the 2025-11-25 handshake: initialize, version check,
// then notifications/initialized. The server's capabilities and info are
// kept on the session.
func (s *Session) Initialize(ctx context.Context, opts InitOptions) (*InitResult, error) {
	if opts.ProtocolVersion == "" {
		opts.ProtocolVersion = spec.V20251125
	}
	if opts.ClientInfo.Name == "" {
		opts.ClientInfo = Implementation{Name: "mcpflight", Version: "dev"}
	}
	if opts.Capabilities == nil {
		opts.Capabilities = map[string]any{}
	}
	s.log.State("session", "new", "initializing")
	params := map[string]any{
		"protocolVersion": opts.ProtocolVersion,
		"capabilities":    opts.Capabilities,
		"clientInfo":      opts.ClientInfo,
	}
	c, err := s.Start(ctx, mcp.MethodInitialize, params)
	if err != nil {
		return nil, err
	}
	resp, err := c.Await(ctx)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		// A modern-only server names its versions in a -32022 (LIF-49).
		return nil, fmt.Errorf("initialize: %w", Error2026(resp.Error))
	}
	var res InitResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, fmt.Errorf("initialize: %w", decodeError("the initialize result", err))
	}
	res.Raw = resp.Result
	if !slices.Contains(SupportedVersions, res.ProtocolVersion) {
		s.log.Harness(chrono.KindDecision, "session", "server chose unsupported version "+chrono.Sanitize(res.ProtocolVersion, false))
		return &res, fmt.Errorf("%w: %q", ErrVersionMismatch, chrono.Sanitize(res.ProtocolVersion, false))
	}
	s.mu.Lock()
	s.init = &res
	s.mu.Unlock()
	if err := s.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		return nil, err
	}
	s.log.State("session", "initializing", "ready")
	return &res, nil
}

// Server returns the server's initialize result, or nil before the
// handshake. On a 2026-07-28 session it is the server/discover result in
// the same shape (the envelope's protocol version, the capabilities,
// _meta's serverInfo), or nil before Discover.
func (s *Session) Server() *InitResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.envelope != nil {
		if s.discovered == nil {
			return nil
		}
		return s.discovered.asInitResult(s.envelope.ProtocolVersion)
	}
	return s.init
}
