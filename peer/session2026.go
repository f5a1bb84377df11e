package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// A 2026-07-28 session (the modern era). There is no initialize: every
// request carries the envelope in its _meta (RPC-51), and the server
// answers each request on its own (RPC-57). SetEnvelope switches a
// session to it; the transport follows (transport.Switcher2026: over HTTP
// the request metadata headers, no session, no GET stream, and closing a
// request's stream as its cancellation).
//
// Every field of the envelope can be changed for one request, or sent
// wrong on purpose: WithMeta, WithoutMeta, WithLogLevel and WithHeaders.

// Envelope is the per-request metadata of a 2026-07-28 request (26/index
// §Per-request protocol fields).
type Envelope struct {
	// ProtocolVersion is io.modelcontextprotocol/protocolVersion
	// (required); it is also sent as MCP-Protocol-Version over HTTP.
	ProtocolVersion string
	// ClientInfo is io.modelcontextprotocol/clientInfo; clients SHOULD
	// send it (RPC-54). Nil leaves it out.
	ClientInfo *Implementation
	// ClientCapabilities is io.modelcontextprotocol/clientCapabilities
	// (required); nil is sent as {}.
	ClientCapabilities map[string]any
	// LogLevel is io.modelcontextprotocol/logLevel; "" leaves it out, and
	// then the server MUST NOT log for the request (LOG-41).
	LogLevel string
	// Extra are further _meta members sent on every request, such as the
	// control extension's scope (mcp.MetaControlScope); the envelope's
	// own members win over a key of the same name.
	Extra map[string]any
}

// meta is the envelope as _meta members.
func (e Envelope) meta() map[string]any {
	m := make(map[string]any, len(e.Extra)+4)
	for k, v := range e.Extra {
		m[k] = v
	}
	m[mcp.MetaProtocolVersion] = e.ProtocolVersion
	caps := e.ClientCapabilities
	if caps == nil {
		caps = map[string]any{}
	}
	m[mcp.MetaClientCapabilities] = caps
	if e.ClientInfo != nil {
		m[mcp.MetaClientInfo] = *e.ClientInfo
	}
	if e.LogLevel != "" {
		m[mcp.MetaLogLevel] = e.LogLevel
	}
	return m
}

// declaresTasks reports whether capabilities declare the tasks extension,
// which makes resultType "task" one the client recognises (RPC-42).
func declaresTasks(caps any) bool {
	raw, err := json.Marshal(caps)
	if err != nil {
		return false
	}
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return false
	}
	_, ok := c.Extensions[mcp.ExtensionTasks]
	return ok
}

// SetEnvelope makes s a 2026-07-28 session: from now on every request
// carries env in its _meta, members the request's own _meta already has
// left as they are, and the transport speaks the revision's shape. The
// switch is recorded in the chronology. A session that ran the
// initialize handshake can be switched too (a case that mixes the eras on
// purpose); ClearEnvelope switches back.
func (s *Session) SetEnvelope(env Envelope) {
	s.mu.Lock()
	e := env
	s.envelope = &e
	s.mu.Unlock()
	if m, ok := s.conn.(transport.Switcher2026); ok {
		m.Set2026(env.ProtocolVersion)
	}
	s.log.State("session", "new", "modern "+chrono.Sanitize(env.ProtocolVersion, false)+": no handshake, the envelope on every request")
}

// ClearEnvelope ends a 2026-07-28 session's envelope: requests go as
// 2025-11-25 sends them, and the transport speaks 2025-11-25 again (the
// fallback to initialize after a failed server/discover probe).
func (s *Session) ClearEnvelope() {
	s.mu.Lock()
	was := s.envelope != nil
	s.envelope, s.discovered = nil, nil
	s.mu.Unlock()
	if m, ok := s.conn.(transport.Switcher2026); ok {
		m.Set2026("")
	}
	if was {
		s.log.State("session", "modern", "legacy")
	}
}

// SetLogLevel changes the log level of a 2026-07-28 session's envelope:
// every later request carries it ("" leaves it out, LOG-41). It reports
// false on a session without an envelope.
func (s *Session) SetLogLevel(level string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.envelope == nil {
		return false
	}
	e := *s.envelope
	e.LogLevel = level
	s.envelope = &e
	return true
}

// Envelope returns the session's envelope, and false on a session that
// is not a 2026-07-28 one.
func (s *Session) Envelope() (Envelope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.envelope == nil {
		return Envelope{}, false
	}
	e := *s.envelope
	e.ClientCapabilities = maps.Clone(e.ClientCapabilities)
	return e, true
}

// Revision is the protocol revision the session speaks: the envelope's
// for a 2026-07-28 session, the one initialize agreed on otherwise, ""
// before either.
func (s *Session) Revision() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.envelope != nil:
		return s.envelope.ProtocolVersion
	case s.init != nil:
		return s.init.ProtocolVersion
	}
	return ""
}

// WithMeta sets _meta[key] of this request to value, over the envelope
// and over the params' own _meta: to override one envelope field for one
// request (another clientCapabilities, RPC-57), or to send it wrong on
// purpose (a number where the protocol version belongs).
func WithMeta(key string, value any) CallOption {
	return func(c *callConfig) {
		if c.setMeta == nil {
			c.setMeta = map[string]any{}
		}
		c.setMeta[key] = value
		c.dropMeta = slices.DeleteFunc(c.dropMeta, func(k string) bool { return k == key })
	}
}

// WithoutMeta leaves _meta[key] out of this request, whoever set it: a
// request missing a required envelope field (RPC-52) is sent with
// WithoutMeta(mcp.MetaProtocolVersion).
func WithoutMeta(keys ...string) CallOption {
	return func(c *callConfig) {
		for _, k := range keys {
			delete(c.setMeta, k)
			c.dropMeta = append(c.dropMeta, k)
		}
	}
}

// WithLogLevel asks for log messages at level and above for this request
// only (io.modelcontextprotocol/logLevel, LOG-43).
func WithLogLevel(level string) CallOption { return WithMeta(mcp.MetaLogLevel, level) }

// WithHeaders overrides the transport's HTTP headers for this request: a
// name with values replaces the header (Mcp-Method: tools/list on a
// tools/call, an MCP-Protocol-Version that differs from the envelope's,
// a legacy Mcp-Session-Id on a modern request), a name with no values
// removes it. It needs a transport that sends headers
// (transport.HeaderSender).
func WithHeaders(h http.Header) CallOption {
	return func(c *callConfig) {
		if c.headers == nil {
			c.headers = http.Header{}
		}
		for n, vs := range h {
			c.headers[http.CanonicalHeaderKey(n)] = slices.Clone(vs)
		}
	}
}

// ErrNoHeaders reports WithHeaders on a transport without headers.
var ErrNoHeaders = errors.New("peer: header overrides need a transport with headers (Streamable HTTP)")

// applyEnvelope returns params with the session's envelope and the
// call's _meta edits applied; on a session without an envelope only the
// edits. It reports whether the session has an envelope (the request is
// a 2026-07-28 one) and whether the request's clientCapabilities declare
// the tasks extension.
func (s *Session) applyEnvelope(params any, cfg *callConfig) (p any, is2026, tasks bool, err error) {
	s.mu.Lock()
	env := s.envelope
	s.mu.Unlock()
	is2026 = env != nil
	if env == nil && len(cfg.setMeta) == 0 && len(cfg.dropMeta) == 0 {
		return params, false, false, nil
	}
	obj := map[string]json.RawMessage{}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, is2026, false, err
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, is2026, false, fmt.Errorf("peer: params must be an object to carry _meta: %w", err)
		}
	}
	if obj == nil {
		obj = map[string]json.RawMessage{} // params: null
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj[mcp.MetaKey]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, is2026, false, fmt.Errorf("peer: _meta must be an object: %w", err)
		}
	}
	set := func(k string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("peer: _meta %s: %w", k, err)
		}
		meta[k] = raw
		return nil
	}
	if env != nil {
		for k, v := range env.meta() {
			if _, own := meta[k]; !own {
				if err := set(k, v); err != nil {
					return nil, is2026, false, err
				}
			}
		}
	}
	for k, v := range cfg.setMeta {
		if err := set(k, v); err != nil {
			return nil, is2026, false, err
		}
	}
	for _, k := range cfg.dropMeta {
		delete(meta, k)
	}
	if raw, ok := meta[mcp.MetaClientCapabilities]; ok {
		tasks = declaresTasks(raw)
	}
	metaRaw, err := json.Marshal(meta)
	if err != nil {
		return nil, is2026, false, err
	}
	obj[mcp.MetaKey] = metaRaw
	return obj, is2026, tasks, nil
}

// ErrInvalidResultType is wrapped by the error of a 2026-07-28 result
// whose resultType the client does not recognise: it MUST be considered
// invalid (RPC-43).
var ErrInvalidResultType = errors.New("peer: the result's resultType is not one this client recognises, so the result is invalid (RPC-43)")

// ErrIncompleteResult is wrapped by the error of a 2026-07-28 result that
// is recognised but not complete (resultType "input_required", or "task"
// under the tasks extension), where Request wanted a complete one.
var ErrIncompleteResult = errors.New("peer: the result is not complete")

// ResultTypeError is a result Request could not take as complete: its
// resultType is unrecognised (ErrInvalidResultType) or not "complete"
// (ErrIncompleteResult). Raw is the result.
type ResultTypeError struct {
	Method     string
	ResultType string
	Recognised bool
	Raw        json.RawMessage
}

func (e *ResultTypeError) Error() string {
	if e.Recognised {
		return fmt.Sprintf("peer: the %s result has resultType %q, not %q", e.Method, chrono.Sanitize(e.ResultType, false), mcp.ResultTypeComplete)
	}
	return fmt.Sprintf("peer: the %s result has resultType %q, which this client does not recognise: the result is invalid (RPC-43)", e.Method, chrono.Sanitize(e.ResultType, false))
}

// Unwrap makes errors.Is hold for ErrInvalidResultType or
// ErrIncompleteResult.
func (e *ResultTypeError) Unwrap() error {
	if e.Recognised {
		return ErrIncompleteResult
	}
	return ErrInvalidResultType
}

// ResultType reads a result's resultType: absent (and any result that is
// not an object with a string there) is "", which a client MUST treat as
// "complete" (RPC-44); present reports true.
func ResultType(result json.RawMessage) (string, bool) {
	var r struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(result, &r) != nil || r.ResultType == nil {
		return "", false
	}
	return *r.ResultType, true
}

// recognisedResultType reports whether a client recognises rt (RPC-42,
// RPC-43): the core's complete and input_required, and task when the
// request declared the tasks extension.
func recognisedResultType(rt string, tasks bool) bool {
	switch rt {
	case mcp.ResultTypeComplete, mcp.ResultTypeInputRequired:
		return true
	case mcp.ResultTypeTask:
		return tasks
	}
	return false
}

// judgeResultType records, for a result of a 2026-07-28 request, how its
// resultType is read: absent as complete (RPC-44), unrecognised as
// invalid (RPC-43). It returns the value the call keeps.
func (s *Session) judgeResultType(c *Call, result json.RawMessage, seq uint64) string {
	rt, present := ResultType(result)
	switch {
	case !present:
		s.log.Harness(chrono.KindDecision, "session", fmt.Sprintf("the result of %s %s (seq %d) has no resultType: read as %q (RPC-44)", c.Method, c.ID, seq, mcp.ResultTypeComplete))
		return mcp.ResultTypeComplete
	case !recognisedResultType(rt, c.extTasks):
		s.log.Harness(chrono.KindDecision, "session", fmt.Sprintf("the result of %s %s (seq %d) has resultType %q, which this client does not recognise: invalid (RPC-43)", c.Method, c.ID, seq, chrono.Sanitize(rt, false)))
	}
	return rt
}

// checkResult is Request's reading of a result: on a 2026-07-28 request
// anything but a complete result is an error (*ResultTypeError).
func (c *Call) checkResult(result json.RawMessage) error {
	if !c.is2026 {
		return nil
	}
	rt := c.ResultType()
	if rt == mcp.ResultTypeComplete {
		return nil
	}
	return &ResultTypeError{Method: c.Method, ResultType: rt, Recognised: recognisedResultType(rt, c.extTasks), Raw: result}
}

// ResultType is the resultType of the request's result on a 2026-07-28
// session: "complete" for an absent one (RPC-44), "" before a result or
// on a 2025-11-25 session.
func (c *Call) ResultType() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resultType
}

// Is2026 reports whether the request was sent on a 2026-07-28 session.
func (c *Call) Is2026() bool { return c.is2026 }
