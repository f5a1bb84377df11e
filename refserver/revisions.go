package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// Eras and the per-request envelope of MCP 2026-07-28 (basic/index §_meta,
// basic/versioning).

// ProtocolVersions2026 lists the revisions served per request, with the
// _meta envelope, newest first.
func ProtocolVersions2026() []string { return []string{spec.V20260728} }

// ListenTeardown is what the server sends when it ends a
// subscriptions/listen stream on its own initiative. The revision
// contradicts itself here (REQUIREMENTS.md ambiguity A-11): the
// cancellation page says the server MUST send notifications/cancelled
// naming the listen request (CAN-41), the subscriptions page that it
// SHOULD answer the listen request with a result, then close (SUB-6,
// SUB-7).
type ListenTeardown string

const (
	// TeardownResult answers the listen request with a
	// SubscriptionsListenResult carrying the subscription ID (SUB-6,
	// SUB-7), then ends the stream. The reference server's default: the
	// page about subscriptions is the specific one, and the schema's
	// SubscriptionsListenResult says the same.
	TeardownResult ListenTeardown = "result"
	// TeardownCancelled sends notifications/cancelled with the listen
	// request's ID (CAN-41, CAN-47) and no response, then ends the stream.
	TeardownCancelled ListenTeardown = "cancelled"
)

// ParseListenTeardown reads a ListenTeardown flag value.
func ParseListenTeardown(s string) (ListenTeardown, error) {
	switch t := ListenTeardown(strings.TrimSpace(s)); t {
	case TeardownResult, TeardownCancelled:
		return t, nil
	}
	return "", fmt.Errorf("refserver: unknown listen teardown %q (valid: %s, %s)", s, TeardownResult, TeardownCancelled)
}

// ParseProtocols reads a comma-separated list of revisions for
// Options.Protocols: 2026-07-28 (modern), 2025-11-25 (legacy; its
// initialize also agrees to 2025-06-18 and 2025-03-26), or both.
func ParseProtocols(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case spec.V20260728, spec.V20251125:
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		default:
			return nil, fmt.Errorf("refserver: protocol %q is not served (valid: %s, %s)", p, spec.V20260728, spec.V20251125)
		}
	}
	return out, nil
}

// normalProtocols is Options.Protocols as New keeps it: both eras when
// empty, newest first.
func normalProtocols(ps []string) []string {
	var out []string
	for _, v := range []string{spec.V20260728, spec.V20251125} {
		if len(ps) == 0 || slices.Contains(ps, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return []string{spec.V20260728, spec.V20251125}
	}
	return out
}

// serves2026 reports whether the server serves 2026-07-28 requests.
func (s *Server) serves2026() bool { return slices.Contains(s.opts.Protocols, spec.V20260728) }

// serves2025 reports whether the server answers initialize.
func (s *Server) serves2025() bool { return slices.Contains(s.opts.Protocols, spec.V20251125) }

// supportedVersions are every revision the server serves, newest first:
// the modern ones per request, the legacy ones after initialize. discover
// lists them, and an UnsupportedProtocolVersionError repeats them.
func (s *Server) supportedVersions() []string {
	var out []string
	if s.serves2026() {
		out = append(out, ProtocolVersions2026()...)
	}
	if s.serves2025() {
		out = append(out, SupportedProtocolVersions()...)
	}
	return out
}

// envelopeKeys are the per-request keys of _meta; a request that carries
// any of them is a 2026-07-28 request, well formed or not.
func envelopeKeys() []string {
	return []string{mcp.MetaProtocolVersion, mcp.MetaClientCapabilities, mcp.MetaClientInfo, mcp.MetaLogLevel}
}

// MetaScope is the _meta key that names a 2026-07-28 request's control
// scope (realm.go): a string of 1 to 128 visible ASCII characters. The
// control extension's state of the requests that carry the same scope is
// shared; without it, the default scope's.
const MetaScope = mcp.MetaControlScope

// metaObject is params._meta as an object, nil when absent, null or not
// an object.
func metaObject(params map[string]json.RawMessage) map[string]json.RawMessage {
	raw, ok := params[mcp.MetaKey]
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// hasEnvelope reports whether a request's _meta (metaObject of its
// params) carries any per-request protocol field, which makes it a
// 2026-07-28 request.
func hasEnvelope(meta map[string]json.RawMessage) bool {
	for _, k := range envelopeKeys() {
		if _, ok := meta[k]; ok {
			return true
		}
	}
	return false
}

// requestScope reads the control scope of a request's _meta (metaObject
// of its params).
func requestScope(meta map[string]json.RawMessage) (string, *rpcError) {
	raw, ok := meta[MetaScope]
	if !ok {
		return "", nil
	}
	var scope string
	if json.Unmarshal(raw, &scope) != nil || scope == "" || len(scope) > 128 || strings.IndexFunc(scope, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return "", invalidParams("Invalid params: _meta %s must be 1 to 128 visible ASCII characters", MetaScope)
	}
	return scope, nil
}

// envelope is a 2026-07-28 request's per-request metadata, checked.
type envelope struct {
	version string
	// caps is io.modelcontextprotocol/clientCapabilities.
	caps map[string]json.RawMessage
	// tasks: the request declares the tasks extension
	// (clientCapabilities.extensions["io.modelcontextprotocol/tasks"]);
	// the legacy tasks capability alone does not count (TSX-67).
	tasks bool
	// logFloor is the index of io.modelcontextprotocol/logLevel in
	// logLevels, or -1 when absent: nothing is logged then (LOG-41).
	logFloor int
}

// TasksExtension is the tasks extension's identifier.
const TasksExtension = mcp.ExtensionTasks

// parseEnvelope checks a 2026-07-28 request's _meta (RPC-51, RPC-52,
// LIF-40, LOG-45): the protocol version first (without one the rest of
// the request cannot be read), then the client capabilities, the client
// identity when present, and the log level.
func (ss *session) parseEnvelope(params map[string]json.RawMessage) (envelope, *rpcError) {
	env := envelope{logFloor: -1}
	meta := metaObject(params)
	if raw, ok := params[mcp.MetaKey]; ok && meta == nil && string(raw) != "null" {
		return env, invalidParams("Invalid params: _meta must be an object")
	}
	raw, ok := meta[mcp.MetaProtocolVersion]
	if !ok {
		return env, invalidParams("Invalid params: _meta lacks the required %s (RPC-52)", mcp.MetaProtocolVersion)
	}
	if json.Unmarshal(raw, &env.version) != nil {
		return env, invalidParams("Invalid params: _meta %s must be a string", mcp.MetaProtocolVersion)
	}
	if !slices.Contains(ProtocolVersions2026(), env.version) || !ss.srv.serves2026() {
		pinned := ss.pinnedVersion()
		if pinned == "" {
			return env, ss.unsupportedVersion(env.version)
		}
		ss.logf("protocol version %q served as %q, an earlier request's (fault %s)", env.version, pinned, FaultStickyVersion)
		env.version = pinned
	}
	raw, ok = meta[mcp.MetaClientCapabilities]
	switch {
	case !ok && ss.has(FaultEnvelopeNotChecked):
		ss.logf("request without %s served (fault %s)", mcp.MetaClientCapabilities, FaultEnvelopeNotChecked)
	case !ok:
		return env, invalidParams("Invalid params: _meta lacks the required %s (RPC-52)", mcp.MetaClientCapabilities)
	case json.Unmarshal(raw, &env.caps) != nil || env.caps == nil:
		return env, invalidParams("Invalid params: _meta %s must be an object", mcp.MetaClientCapabilities)
	}
	if raw, ok := env.caps["extensions"]; ok {
		var exts map[string]json.RawMessage
		if json.Unmarshal(raw, &exts) != nil {
			return env, invalidParams("Invalid params: clientCapabilities.extensions must be an object")
		}
		if v, ok := exts[TasksExtension]; ok {
			var settings map[string]json.RawMessage
			env.tasks = json.Unmarshal(v, &settings) == nil && settings != nil
		}
	}
	if raw, ok := meta[mcp.MetaClientInfo]; ok {
		var info struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		}
		if json.Unmarshal(raw, &info) != nil || info.Name == nil || info.Version == nil {
			return env, invalidParams("Invalid params: _meta %s must be an Implementation {name, version}", mcp.MetaClientInfo)
		}
	}
	if raw, ok := meta[mcp.MetaLogLevel]; ok {
		var level string
		_ = json.Unmarshal(raw, &level)
		env.logFloor = levelIndex(level)
		if env.logFloor < 0 {
			if !ss.has(FaultAcceptUnknownLogLevel) {
				return env, invalidParams("Invalid params: _meta %s %s is not a log level (LOG-45)", mcp.MetaLogLevel, strconv.Quote(string(raw)))
			}
			ss.logf("unknown log level %s taken for debug (fault %s)", raw, FaultAcceptUnknownLogLevel)
			env.logFloor = 0
		}
	}
	return env, nil
}

// unsupportedVersion is the UnsupportedProtocolVersionError for requested
// (LIF-40, HTTP-97): the versions the server supports and the one asked
// for. A legacy version in the envelope is unsupported too: this server
// serves it only after initialize, and the message says so.
func (ss *session) unsupportedVersion(requested string) *rpcError {
	return ss.srv.unsupportedVersion(requested)
}

func (s *Server) unsupportedVersion(requested string) *rpcError {
	if s.has(FaultWrongVersionError) {
		return invalidParams("Invalid params: unsupported protocol version %s", strconv.Quote(requested))
	}
	msg := "Unsupported protocol version " + strconv.Quote(requested)
	if slices.Contains(SupportedProtocolVersions(), requested) && s.serves2025() {
		msg += " in the per-request _meta: it is served only after initialize"
	}
	return &rpcError{code: mcp.CodeUnsupportedProtocolVersion, message: msg,
		data: map[string]any{"supported": s.supportedVersions(), "requested": requested}}
}

// missingCapability is the MissingRequiredClientCapabilityError for the
// tasks extension (RPC-55, TSX-5, TSX-49, TSX-56).
func missingTasksCapability(what string) *rpcError {
	return &rpcError{code: mcp.CodeMissingRequiredClientCapability,
		message: "Missing required client capability: " + what + " needs the " + TasksExtension + " extension declared in this request's clientCapabilities",
		data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}}
}

// serverInfo is the server's Implementation.
func (ss *session) serverInfo() map[string]any {
	return map[string]any{"name": ss.srv.opts.Name, "version": ss.srv.opts.Version}
}

// decorate gives a 2026-07-28 result its resultType, "complete" unless
// the result says otherwise (RPC-40), and the server's identity in
// _meta (RPC-56). The faults no-resulttype and no-server-info leave them
// out.
func (ss *session) decorate(result any) any {
	info := ss.serverInfo()
	if m, ok := result.(map[string]any); ok {
		// The results built as maps may carry a resultType ("task") or a
		// _meta of their own (a subscription's).
		out := make(map[string]any, len(m)+2)
		for k, v := range m {
			out[k] = v
		}
		if _, ok := out["resultType"]; !ok {
			out["resultType"] = mcp.ResultTypeComplete
		}
		if ss.has(FaultNoResultType) {
			delete(out, "resultType")
		}
		if !ss.has(FaultNoServerInfo) {
			meta := map[string]any{mcp.MetaServerInfo: info}
			if old, ok := out[mcp.MetaKey].(map[string]any); ok {
				for k, v := range old {
					meta[k] = v
				}
			}
			out[mcp.MetaKey] = meta
		}
		return out
	}
	raw, err := json.Marshal(result)
	if err != nil || len(raw) < 2 || raw[0] != '{' {
		return result
	}
	if bytes.Contains(raw, []byte(`"resultType"`)) || bytes.Contains(raw, []byte(mcp.MetaKey)) {
		// It may have them already, at the top or deeper down: read it
		// as a map (rare; the results of this package do not).
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // request IDs and counters stay exact
		if dec.Decode(&obj) != nil {
			return result
		}
		return ss.decorate(obj)
	}
	// The usual result is a struct of this package without resultType or
	// _meta members: the two are spliced in front of its members.
	var head []byte
	if !ss.has(FaultNoResultType) {
		head = append(head, `"resultType":"complete",`...)
	}
	if !ss.has(FaultNoServerInfo) {
		meta, _ := json.Marshal(map[string]any{mcp.MetaServerInfo: info})
		head = append(append(append(head, `"_meta":`...), meta...), ',')
	}
	if len(head) == 0 {
		return result
	}
	body := raw[1:]
	if len(body) == 1 { // "}": no members
		head = head[:len(head)-1]
	}
	return json.RawMessage(append(append([]byte{'{'}, head...), body...))
}

// DiscoverTTL is the ttlMs of server/discover and tools/list results: the
// server's identity, versions and tools never change while it runs.
const DiscoverTTL = 60_000

// capabilities2026 are the server's capabilities under 2026-07-28: the
// tasks extension instead of the legacy tasks capability (TSX-69).
func (ss *session) capabilities2026() map[string]any {
	caps := ss.srv.capabilities()
	if !ss.srv.opts.NoTasks {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	return caps
}

// discover answers server/discover (LIF-42, LIF-51): the supported
// versions, capabilities and, in _meta, the server's identity.
func (ss *session) discover() map[string]any {
	versions := ss.srv.supportedVersions()
	if ss.has(FaultDiscoverMissingVersion) {
		// The list a modern-only server would give, while initialize
		// still agrees to the legacy versions.
		versions = slices.DeleteFunc(versions, func(v string) bool { return !slices.Contains(ProtocolVersions2026(), v) })
	}
	return map[string]any{
		"supportedVersions": versions,
		"capabilities":      ss.capabilities2026(),
		"instructions":      "mcpflight's reference server: tools slow, effect, log and task_worker; the io.mcpflight/control extension holds them at checkpoints.",
		"ttlMs":             DiscoverTTL,
		"cacheScope":        "public",
	}
}
