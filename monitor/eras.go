package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// The rules of 2026-07-28's versions and envelope that the wire decides,
// each judged on the requests whose own envelope names the version (a
// dual-era server answers a legacy request as 2025-11-25 asks, LIF-47):
// the methods the revision removed (PNG-40; the tasks extension's
// tasks/result, TSX-65), serverInfo in every result's _meta (RPC-56;
// server/discover's, LIF-51), a request naming a version the server's
// own server/discover does not list refused with -32022 (LIF-40; over
// HTTP with 400, HTTP-97), and a modern-only server's error to
// initialize naming its versions (LIF-49).

// Bounds of what the version rules keep: the versions of one
// server/discover answer, and the length of each.
const (
	maxSupported      = 32
	maxVersionLength  = 64
	maxUnlistedLength = 64
)

// era is what the version rules keep of a session.
type era struct {
	// supported are the versions the server's latest server/discover
	// answer listed, read at supportedSeq; nil when none was read.
	// discoverVersion is the version that server/discover request named:
	// the server served it, whatever its list says.
	supported       []string
	supportedSeq    uint64
	discoverVersion string
	// discoverInfoReported and infoReported are set once a result
	// without serverInfo was reported: server/discover's (LIF-51), and
	// another's (RPC-56). One of each says it; the others add nothing.
	discoverInfoReported, infoReported bool
}

// serverInfoKey is the _meta member that names the server.
var serverInfoKey = []byte(`"` + mcp.MetaServerInfo + `"`)

// removedMethod reports whether 2026-07-28 removed method (PNG-40:
// "Remove ping, logging/setLevel, and notifications/roots/list_changed").
func removedMethod(method string) bool {
	return method == mcp.MethodPing || method == mcp.MethodLoggingSetLevel
}

// versionNamed judges the version a client's request names in its
// envelope: a 2026-07-28 request that is ping or logging/setLevel uses
// a method the revision removed (PNG-40), one without clientCapabilities
// lacks a required member of the envelope (RPC-51; a request without
// protocolVersion may be a legacy one, to a dual-era server); and one
// naming a version the server's server/discover did not list is marked
// for its answer (versionAnswered), unless the wire leaves the server's
// support of it open: the rest of the envelope missing (the request may
// be refused for that first, RPC-52), a legacy revision (a dual-era
// server may serve it in its legacy era and list only the modern ones,
// LIF-47), or the version the server/discover request itself named and
// was served under (then the list, not the server's support, is in
// doubt).
func (s *session) versionNamed(r *request, ev chrono.Event, version string, capabilities bool) {
	r.modern = version == spec.V20260728
	if r.modern {
		s.exercise(RuleRemovedMethods, Client)
		if removedMethod(r.method) {
			s.find(RuleRemovedMethods, Client, verdict.Req("PNG-40"), ev.Seq, false,
				"request %s is %s under 2026-07-28, which removed it", r.id, quote(r.method))
		}
		s.exercise(RuleEnvelopeComplete, Client)
		if !capabilities {
			s.find(RuleEnvelopeComplete, Client, verdict.Req("RPC-51"), ev.Seq, false,
				"request %s (%s) names 2026-07-28 in its _meta without %s, a required member of every request's envelope", r.id, quote(r.method), mcp.MetaClientCapabilities)
		}
	}
	switch {
	case r.method == mcp.MethodServerDiscover:
		r.discoverVersion = chrono.Clip(version, maxVersionLength)
	case version != "" && capabilities && s.era.supported != nil && !slices.Contains(s.era.supported, version) &&
		!legacyRevision(version) && version != s.era.discoverVersion:
		r.unlisted = chrono.Clip(version, maxUnlistedLength)
	}
}

// legacyRevision reports whether version is a published revision of the
// legacy era (2025-11-25 and earlier).
func legacyRevision(version string) bool {
	return slices.Contains(spec.Published(), version) && !spec.Modern(version)
}

// discovered takes the server's answer to r, a server/discover: the
// versions it supports.
func (s *session) discovered(r *request, ev chrono.Event, result json.RawMessage) {
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(result, &d) != nil || d.SupportedVersions == nil || len(d.SupportedVersions) > maxSupported ||
		slices.ContainsFunc(d.SupportedVersions, func(v string) bool { return len(v) > maxVersionLength }) {
		return
	}
	s.era.supported, s.era.supportedSeq, s.era.discoverVersion = d.SupportedVersions, ev.Seq, r.discoverVersion
}

// modernAnswered judges the server's answer to a client's request that
// named 2026-07-28, or a version the server did not list.
func (s *session) modernAnswered(r *request, ev chrono.Event, m *jsonrpc.Message, isError bool) {
	if r.unlisted != "" {
		s.versionAnswered(r, ev, m, isError)
		return // not a request of a revision the server serves: the revision's other rules do not bind its answer
	}
	if removedMethod(r.method) || r.method == mcp.MethodTasksResult && r.declared {
		s.exercise(RuleRemovedMethods, Server)
	}
	if isError {
		return
	}
	switch {
	case removedMethod(r.method):
		s.find(RuleRemovedMethods, Server, verdict.Req("PNG-40"), ev.Seq, false,
			"request %s (%s, sent at #%d) under 2026-07-28 was served with a result: the revision removed %s, so it is an unknown method (-32601)", r.id, quote(r.method), r.seq, quote(r.method))
	case r.method == mcp.MethodTasksResult && r.declared:
		s.find(RuleRemovedMethods, Server, verdict.Req("TSX-65"), ev.Seq, false,
			"tasks/result %s (sent at #%d) under 2026-07-28, declaring the %s extension, was served with a result: the extension removed it, and a client calling it receives -32601", r.id, r.seq, mcp.ExtensionTasks)
	}
	s.serverInfoGiven(r, ev)
}

// serverInfoGiven judges a result to a 2026-07-28 request: its _meta
// names the server (RPC-56; server/discover's, LIF-51), unless the
// server is configured not to, which the wire does not say (both are
// SHOULDs). A result cut short is not judged.
func (s *session) serverInfoGiven(r *request, ev chrono.Event) {
	discover := r.method == mcp.MethodServerDiscover
	if ev.Truncated || discover && s.era.discoverInfoReported || !discover && s.era.infoReported {
		return
	}
	s.exercise(RuleServerInfo, Server)
	if bytes.Contains(ev.Raw, serverInfoKey) {
		return
	}
	// The key may be written with escapes: the result's _meta decides.
	var res struct {
		Result struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if json.Unmarshal(ev.Raw, &res) != nil {
		return
	}
	if _, ok := res.Result.Meta[mcp.MetaServerInfo]; ok {
		return
	}
	rule := verdict.Req("RPC-56")
	if discover {
		rule, s.era.discoverInfoReported = verdict.Req("LIF-51"), true
	} else {
		s.era.infoReported = true
	}
	s.find(RuleServerInfo, Server, rule, ev.Seq, false,
		"the result of request %s (%s) has no %s in its _meta: a server names itself in every result (the first such result; later ones are not reported)", r.id, quote(r.method), mcp.MetaServerInfo)
}

// versionAnswered judges the answer to a request naming a version the
// server's server/discover did not list: the server does not implement
// that version, and refuses the request with -32022 listing those it
// supports (LIF-40), over HTTP with 400 (HTTP-97). A -32020 is not
// judged: over HTTP a header that does not match the body may be checked
// first (HTTP-103).
func (s *session) versionAnswered(r *request, ev chrono.Event, m *jsonrpc.Message, isError bool) {
	s.exercise(RuleVersionRefused, Server)
	asked := fmt.Sprintf("request %s (%s, sent at #%d) names protocol version %q, which the server's server/discover (#%d) does not list (it lists %s)",
		r.id, quote(r.method), r.seq, quote(r.unlisted), s.era.supportedSeq, quote(strings.Join(s.era.supported, ", ")))
	switch {
	case !isError:
		s.find(RuleVersionRefused, Server, verdict.Req("LIF-40"), ev.Seq, false,
			"%s, and was served with a result: a version the server does not implement is refused with -32022 listing the supported ones", asked)
	case m.Error == nil || m.Error.Code == mcp.CodeHeaderMismatch:
	case m.Error.Code != mcp.CodeUnsupportedProtocolVersion:
		s.find(RuleVersionRefused, Server, verdict.Req("LIF-40"), ev.Seq, false,
			"%s, and was refused with %s: a version the server does not implement is refused with -32022 listing the supported ones", asked, errText(m))
	case !listsVersions(m.Error.Data):
		s.find(RuleVersionRefused, Server, verdict.Req("LIF-40"), ev.Seq, false,
			"%s, and was refused with -32022 whose data lists no supported version", asked)
	case s.http() && r.status != 0 && r.status != 400:
		s.find(RuleVersionRefused, Server, verdict.Req("HTTP-97"), ev.Seq, false,
			"%s, and was refused with -32022 in an HTTP %d: over HTTP the refusal is a 400 Bad Request", asked, r.status)
	}
}

// listsVersions reports whether an UnsupportedProtocolVersionError's data
// lists at least one supported version.
func listsVersions(data json.RawMessage) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	return json.Unmarshal(data, &d) == nil && len(d.Supported) > 0
}

// initializeRefused judges the server's error to initialize: a server
// that supports only modern versions names them in it (LIF-49). The wire
// shows a server modern-only when it answers initialize with -32601 (it
// has no initialize, which every legacy version begins with) or its
// server/discover listed only modern versions; an error naming a
// revision, in its message or its data, names them.
func (s *session) initializeRefused(r *request, ev chrono.Event, m *jsonrpc.Message) {
	if m.Error == nil {
		return
	}
	noInitialize := m.Error.Code == jsonrpc.CodeMethodNotFound
	modernOnly := len(s.era.supported) > 0 && !slices.ContainsFunc(s.era.supported, func(v string) bool { return !spec.Modern(v) })
	if !noInitialize && !modernOnly {
		return
	}
	s.exercise(RuleInitializeNamesVers, Server)
	if spec.NamesRevision(m.Error.Message) || spec.NamesRevision(string(m.Error.Data)) {
		return
	}
	why := "it has no initialize, so it supports no legacy version"
	if !noInitialize {
		why = fmt.Sprintf("its server/discover (#%d) lists only modern versions", s.era.supportedSeq)
	}
	s.find(RuleInitializeNamesVers, Server, verdict.Req("LIF-49"), ev.Seq, false,
		"initialize %s (sent at #%d) was refused with %s, which names no protocol version: a server that supports only modern versions (%s) names them in any error to initialize",
		r.id, r.seq, errText(m), why)
}
