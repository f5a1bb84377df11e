package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// discoverCases cover 2026-07-28's versioning and discovery
// (basic/versioning, server/discover) and the per-request envelope and
// result fields of basic/index: server/discover, -32022, the required
// envelope fields, the methods the revision removed, resultType and
// serverInfo on every result, and how initialize agrees with discover on
// a dual-era server.
func discoverCases() []probe.Case {
	return []probe.Case{
		// LIF-42 MUST: "Servers MUST implement `server/discover`."
		// LIF-40 MUST: "If the server does not implement the requested version (whether the
		//   version is unknown to the server, or is a known version the server has chosen not to
		//   support), it MUST respond with an `UnsupportedProtocolVersionError` listing the versions
		//   it does support:"
		{
			ID:       "discover/answers",
			Tidy:     true,
			Title:    "server/discover lists the server's versions and capabilities",
			Reqs:     []string{"LIF-42", "LIF-40"},
			Versions: only2026(),
			Sends:    "server/discover under the 2026-07-28 envelope",
			Expect:   "a result with supportedVersions (listing 2026-07-28, which it just served) and capabilities",
			Run:      discoverAnswers,
		},
		// RPC-56 SHOULD: "Servers SHOULD include the following `io.modelcontextprotocol/*` field
		//   in every result's `_meta`, unless specifically configured not to do so, to identify
		//   themselves without relying on any prior connection state:"
		// LIF-51 SHOULD: "Servers SHOULD include this field."
		{
			ID:       "rpc/server-info-in-meta",
			Tidy:     true,
			Title:    "every result names the server in _meta",
			Reqs:     []string{"RPC-56", "LIF-51"},
			Versions: only2026(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "server/discover, tools/list and a tools/call of the slow tool",
			Expect:   "_meta io.modelcontextprotocol/serverInfo {name, version} on each result, server/discover's first (LIF-51)",
			Run:      serverInfoInMeta,
		},
		// RPC-40 MUST: "The `result` MUST include a `resultType` field to indicate the type of the
		//   result."
		{
			ID:       "rpc/result-type-on-every-result",
			Tidy:     true,
			Title:    "every result carries resultType",
			Reqs:     []string{"RPC-40"},
			Versions: only2026(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "server/discover, tools/list and a tools/call of the slow tool",
			Expect:   "each result has a resultType member (an absent one is read as complete, RPC-44, but the server MUST send it)",
			Run:      resultTypeOnEveryResult,
		},
		// LIF-40 MUST: "If the server does not implement the requested version (whether the
		//   version is unknown to the server, or is a known version the server has chosen not to
		//   support), it MUST respond with an `UnsupportedProtocolVersionError` listing the versions
		//   it does support:"
		// RPC-57 MUST NOT: "Servers MUST NOT rely on prior requests over the same connection to
		//   establish context (e.g., capabilities, protocol version, client identity)."
		{
			ID:       "versioning/unknown-revision",
			Title:    "an unknown revision in the envelope gets -32022 naming the supported ones",
			Reqs:     []string{"LIF-40", "RPC-57"},
			Versions: only2026(),
			Sends:    `tools/list whose _meta protocolVersion is "1900-01-01" (over HTTP the MCP-Protocol-Version header too); over stdio then a tools/list under 2026-07-28 and the first request again`,
			Expect:   `error -32022 with data.supported (the server's versions) and data.requested "1900-01-01", each time: a connection that served a request does not lend the next one its version (RPC-57)`,
			// Not tidy: the first request needs a connection nothing was
			// served on yet, since a server that takes a request's version
			// from earlier ones (RPC-57) would serve it on a used one.
			Run: unknownRevision,
		},
		// RPC-52 MUST: "A request missing any required field is malformed; the server MUST reject
		//   it with JSON-RPC error code `-32602` (Invalid params)."
		// RPC-51 MUST: "fields marked as required MUST be included on every request."
		{
			ID:       "envelope/missing-required-field",
			Title:    "a request missing a required envelope field gets -32602",
			Reqs:     []string{"RPC-52", "RPC-51"},
			Versions: only2026(),
			Sends:    "tools/list without io.modelcontextprotocol/clientCapabilities, then without io.modelcontextprotocol/protocolVersion",
			Expect:   "error -32602 for each (without the protocol version, over HTTP, a -32020 for the header then naming a version the body lacks is recorded as info)",
			Run:      missingEnvelopeField,
		},
		// PNG-40 DEF: "Remove `ping`, `logging/setLevel`, and `notifications/roots/list_changed`."
		{
			ID:       "rpc/removed-methods",
			Title:    "ping and logging/setLevel are unknown methods in 2026-07-28",
			Reqs:     []string{"PNG-40"},
			Versions: only2026(),
			Sends:    `ping and logging/setLevel {"level":"debug"} under the 2026-07-28 envelope`,
			Expect:   "error -32601 (Method not found) for each",
			Tidy:     true,
			Run:      removedMethods,
		},
		// LIF-9 MUST (2025-11-25 only): "If the server supports the requested protocol version, it
		//   MUST respond with the same version."
		// LIF-47 MAY (2026-07-28 only): "A server that wishes to support both legacy clients
		//   (which expect an `initialize` handshake) and modern clients (which use per-request
		//   metadata) MAY implement both behaviors."
		{
			ID:        "lifecycle/initialize-agrees-to-listed-revision",
			Title:     "initialize agrees only to a revision server/discover lists",
			ReqsUnder: map[string][]string{spec.V20251125: {"LIF-9"}, spec.V20260728: {"LIF-47"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{NoHandshake: true, ListedRevisions: true},
			Sends:     "server/discover under the 2026-07-28 envelope, then initialize asking for 2025-11-25",
			Expect:    "the revision initialize agrees to is one server/discover lists (a server that does not speak 2025-11-25 or 2026-07-28 at all is skipped)",
			Run:       initializeAgreesToListed,
		},
		// LIF-49 SHOULD: "A server that supports only modern versions SHOULD name the protocol
		//   versions it supports in any error it returns to an `initialize` request, on any
		//   transport:"
		{
			ID:       "lifecycle/initialize-error-names-versions",
			Title:    "a modern-only server's initialize error names its versions",
			Reqs:     []string{"LIF-49"},
			Versions: only2026(),
			Needs:    probe.Needs{NoHandshake: true, InitializeRefused: true},
			Sends:    "initialize asking for 2025-11-25",
			Expect:   "an error naming the versions the server supports (-32022 with data.supported); a dual-era server that agrees is skipped",
			Run:      initializeErrorNamesVersions,
		},
	}
}

func discoverAnswers(ctx context.Context, e *probe.Env) verdict.Outcome {
	seq := e.Log.Len()
	d, err := e.S.Discover(ctx)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return e.Breaks("LIF-42", []string{"a DiscoverResult"}, fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), answerAfter(e, seq))
	case err != nil && d == nil:
		return verdict.Errorf("%v", err)
	case err != nil:
		return e.Breaks("LIF-42", []string{"a DiscoverResult"}, chrono.Sanitize(err.Error(), false), answerAfter(e, seq))
	}
	switch {
	case len(d.SupportedVersions) == 0:
		return e.Breaks("LIF-42", []string{"supportedVersions naming the revisions the server serves"}, "no supportedVersions: "+chrono.Sanitize(string(d.Raw), false), answerAfter(e, seq))
	case !d.Supports(spec.V20260728):
		return e.Breaks("LIF-40", []string{"server/discover answered under 2026-07-28 lists 2026-07-28, or the request gets -32022"},
			"supportedVersions "+sanitizedList(d.SupportedVersions), answerAfter(e, seq))
	case d.Capabilities == nil:
		return e.Breaks("LIF-42", []string{"the server's capabilities"}, "no capabilities: "+chrono.Sanitize(string(d.Raw), false), answerAfter(e, seq))
	}
	return verdict.Passf("server/discover lists %s and %d capabilities", sanitizedList(d.SupportedVersions), len(d.Capabilities))
}

// answerAfter is the sequence number of the first response read after
// seq, 0 when there is none.
func answerAfter(e *probe.Env, seq uint64) uint64 {
	ev, _ := e.FrameAfter(seq, probe.AnyResponse)
	return ev.Seq
}

// sanitizedList renders untrusted strings for a verdict.
func sanitizedList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%q", chrono.Sanitize(v, false))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// threeResults makes the server answer server/discover, tools/list and a
// tools/call of the slow tool, and returns the sequence numbers of the
// three results in that order.
func threeResults(ctx context.Context, e *probe.Env) ([]chrono.Event, *verdict.Outcome) {
	fail := func(err error) ([]chrono.Event, *verdict.Outcome) {
		o := verdict.Errorf("%v", err)
		return nil, &o
	}
	var calls []*peer.Call
	for _, m := range []string{mcp.MethodServerDiscover, mcp.MethodToolsList} {
		c, err := e.S.Start(ctx, m, nil)
		if err != nil {
			return fail(err)
		}
		if _, err := c.Await(ctx); err != nil {
			return fail(fmt.Errorf("%s: %w", m, err))
		}
		calls = append(calls, c)
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Free: true})
	if err != nil {
		return fail(err)
	}
	if _, err := op.Complete(ctx); err != nil {
		return fail(fmt.Errorf("the slow tool: %w", err))
	}
	calls = append(calls, op.Call)
	var out []chrono.Event
	for _, c := range calls {
		resp, seq := c.Response()
		if resp == nil || resp.Error != nil {
			return fail(fmt.Errorf("%s %s was not answered with a result: %s", c.Method, c.ID, probe.Describe(e.EventAt(seq))))
		}
		out = append(out, e.EventAt(seq))
	}
	return out, nil
}

func serverInfoInMeta(ctx context.Context, e *probe.Env) verdict.Outcome {
	evs, o := threeResults(ctx, e)
	if o != nil {
		return *o
	}
	for i, ev := range evs {
		m, err := ev.Message()
		if err != nil {
			return verdict.Errorf("reading seq %d: %v", ev.Seq, err)
		}
		var r struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(m.Result, &r)
		var info struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		}
		raw, ok := r.Meta[mcp.MetaServerInfo]
		if ok && json.Unmarshal(raw, &info) == nil && info.Name != nil && info.Version != nil {
			continue
		}
		want := []string{"_meta " + mcp.MetaServerInfo + " {name, version} on the result"}
		if i == 0 {
			return e.Breaks("LIF-51", want, probe.Describe(ev), ev.Seq)
		}
		return e.Breaks("RPC-56", want, probe.Describe(ev), ev.Seq)
	}
	return verdict.Passf("%d results, each naming the server in _meta", len(evs))
}

func resultTypeOnEveryResult(ctx context.Context, e *probe.Env) verdict.Outcome {
	if _, o := threeResults(ctx, e); o != nil {
		return *o
	}
	n := 0
	for _, ev := range e.Log.Events() {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame || ev.Summary == nil || ev.Summary.Kind != "result" {
			continue
		}
		m, err := ev.Message()
		if err != nil {
			continue
		}
		if _, ok := peer.ResultType(m.Result); !ok {
			return e.Breaks("RPC-40", []string{"a resultType member on every result"}, probe.Describe(ev), ev.Seq)
		}
		n++
	}
	return verdict.Passf("%d results, each with a resultType", n)
}

// unknownRevision asks with an unknown revision on a connection that has
// served nothing yet; over stdio, where a connection lives on, it asks
// again once the connection served a tools/list of the run's revision:
// a server that pins a connection to its first request's version (the
// TypeScript SDK v2's serveStdio) then serves it (RPC-57). Over HTTP each
// request is an exchange of its own.
func unknownRevision(ctx context.Context, e *probe.Env) verdict.Outcome {
	first := askUnknownRevision(ctx, e, false)
	if first.Verdict != verdict.Pass || e.SeparateStreams() {
		return first
	}
	if err := e.S.Request(ctx, mcp.MethodToolsList, nil, nil); err != nil {
		return verdict.Errorf("tools/list under %s, between the two requests: %v", e.Revision, err)
	}
	if again := askUnknownRevision(ctx, e, true); again.Verdict != verdict.Pass {
		return again
	}
	return verdict.Passf("%s, before and after the connection served a tools/list under %s", first.Summary, e.Revision)
}

// askUnknownRevision sends tools/list with protocolVersion "1900-01-01"
// and judges the answer; used says the connection served a request of
// the run's revision before, so that a result breaks RPC-57.
func askUnknownRevision(ctx context.Context, e *probe.Env, used bool) verdict.Outcome {
	const asked = "1900-01-01"
	opts := []peer.CallOption{peer.WithMeta(mcp.MetaProtocolVersion, asked)}
	if e.SeparateStreams() {
		opts = append(opts, peer.WithHeaders(http.Header{mcp.HeaderProtocolVersion: {asked}}))
	}
	seq := e.Log.Len()
	err := e.S.Request(ctx, mcp.MethodToolsList, nil, nil, opts...)
	want := []string{fmt.Sprintf("error -32022 with data.supported and data.requested %q", asked)}
	var uve *peer.UnsupportedVersionError
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &uve):
		switch {
		case uve.Malformed != "":
			return e.Breaks("LIF-40", want, "-32022, but "+uve.Malformed, answerAfter(e, seq))
		case len(uve.Supported) == 0:
			return e.Breaks("LIF-40", want, "-32022 listing no supported version", answerAfter(e, seq))
		case uve.Requested != asked:
			return e.Breaks("LIF-40", want, fmt.Sprintf("-32022 whose data.requested is %q", chrono.Sanitize(uve.Requested, false)), answerAfter(e, seq))
		}
		return verdict.Passf("-32022: the server supports %s", sanitizedList(uve.Supported))
	case errors.As(err, &rpcErr):
		return e.Breaks("LIF-40", want, fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), answerAfter(e, seq))
	}
	if se, refused := probe.HTTPRefusal(err); refused {
		// An HTTP refusal without the JSON-RPC error: the status is right
		// (HTTP-97 asks 400), the UnsupportedProtocolVersionError is not
		// there, so the client learns nothing of the supported versions.
		_, status, _ := e.StatusAfter(seq + 1)
		return e.Breaks("LIF-40", want, fmt.Sprintf("HTTP %d with no JSON-RPC error: %s", se.Status, statusBody(se)), status.Seq)
	}
	if err != nil {
		return verdict.Errorf("tools/list: %v", err)
	}
	if used {
		return e.Breaks("RPC-57", []string{want[0] + ", as on a connection that served nothing yet: the request's version is its own"},
			fmt.Sprintf("the request was served with a result: refused with -32022 on a fresh connection, served once the connection had served a tools/list under %s, so the server took the version from the earlier request", e.Revision),
			answerAfter(e, seq))
	}
	return e.Breaks("LIF-40", want, "the request was served with a result", answerAfter(e, seq))
}

func missingEnvelopeField(ctx context.Context, e *probe.Env) verdict.Outcome {
	var notes []string
	for _, key := range []string{mcp.MetaClientCapabilities, mcp.MetaProtocolVersion} {
		seq := e.Log.Len()
		err := e.S.Request(ctx, mcp.MethodToolsList, nil, nil, peer.WithoutMeta(key))
		want := []string{"error -32602 (Invalid params) for a request without " + key}
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
			notes = append(notes, "without "+key+": -32602")
		case errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeHeaderMismatch && key == mcp.MetaProtocolVersion && e.SeparateStreams():
			// The MCP-Protocol-Version header names a version the body
			// lacks: a header that does not match the body is -32020
			// (HTTP-103), and a server may check it first.
			notes = append(notes, "without "+key+": -32020, the header checked first")
		case errors.As(err, &rpcErr):
			return e.Breaks("RPC-52", want, fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), answerAfter(e, seq))
		case err != nil:
			return verdict.Errorf("tools/list without %s: %v", key, err)
		case key == mcp.MetaProtocolVersion && shaped2025(e, seq):
			// Without the protocol version the request has the shape of a
			// legacy one; a server that implements both eras (LIF-47)
			// may serve it as such, and the spec does not say how a
			// dual-era server tells them apart.
			return e.Broke(verdict.Req("RPC-52").Except(verdict.Warn,
				"the evidence fits two readings: the server served a malformed 2026-07-28 request (RPC-52), or, implementing both eras (LIF-47), took a request without the protocol version for a legacy one, which the spec does not rule out"),
				want, "the request was served with a result without resultType, as a 2025-11-25 server would answer it", answerAfter(e, seq))
		default:
			return e.Breaks("RPC-52", want, "the request was served with a result", answerAfter(e, seq))
		}
	}
	return verdict.Passf("%s", strings.Join(notes, "; "))
}

func removedMethods(ctx context.Context, e *probe.Env) verdict.Outcome {
	for _, m := range []struct {
		method string
		params any
	}{{mcp.MethodPing, nil}, {mcp.MethodLoggingSetLevel, map[string]any{"level": "debug"}}} {
		seq := e.Log.Len()
		err := e.S.Request(ctx, m.method, m.params, nil)
		want := []string{"error -32601 (Method not found): " + m.method + " does not exist in 2026-07-28"}
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeMethodNotFound:
		case errors.As(err, &rpcErr):
			return e.Breaks("PNG-40", want, fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), answerAfter(e, seq))
		case err != nil:
			return verdict.Errorf("%s: %v", m.method, err)
		default:
			return e.Breaks("PNG-40", want, m.method+" was served with a result", answerAfter(e, seq))
		}
	}
	return verdict.Passf("ping and logging/setLevel answered -32601")
}

// initializeAgreesToListed judges what negotiate.SurveyTarget reports as
// an inconsistency: initialize agreeing to a revision server/discover
// does not list. The evidence fits two readings and the spec settles
// neither, so it is a warn that names both.
func initializeAgreesToListed(ctx context.Context, e *probe.Env) verdict.Outcome {
	opts := []peer.CallOption{peer.WithMeta(mcp.MetaProtocolVersion, spec.V20260728), peer.WithMeta(mcp.MetaClientCapabilities, map[string]any{})}
	if !e.Is2026() && e.SeparateStreams() {
		// A 2025-11-25 session sends no request-metadata headers.
		opts = append(opts, peer.WithHeaders(http.Header{mcp.HeaderProtocolVersion: {spec.V20260728}, mcp.HeaderMethod: {mcp.MethodServerDiscover}}))
	}
	// An answer that never comes is a verdict, not the case's deadline:
	// the wait is bounded by the target's pace (Patience).
	dctx, cancel, bound := e.WithPatience(ctx)
	d, err := e.S.Discover(dctx, opts...)
	cancel()
	if err != nil {
		detail := chrono.Sanitize(err.Error(), false)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			detail = fmt.Sprintf("no answer within %v", bound.Round(time.Millisecond))
		}
		if e.Is2026() {
			return e.Blame(mcp.MethodServerDiscover, probe.DiscoverOwner, detail)
		}
		return verdict.Skipf("the server serves no server/discover (%s): a legacy server lists no revisions to compare with", detail)
	}
	// initialize is 2025-11-25's: the session leaves the envelope behind
	// (over HTTP its session is then a 2025-11-25 one). A 2025-11-25
	// session had its handshake already: a second initialize is one the
	// server may refuse (go-sdk: "duplicate initialize received").
	// After a server/discover the connection may be a modern one to the
	// server (go-sdk v1.8.0 then refuses initialize as a duplicate), so
	// initialize goes on a connection of its own when the case can open
	// one.
	init, err := e.S.Server(), error(nil)
	if e.Is2026() || init == nil {
		x := e.S
		if e.Open != nil {
			if x, err = e.Open(ctx); err != nil {
				if !e.Is2026() {
					// The second session's handshake is initialize itself.
					return e.Blame("initialize asking for 2025-11-25", versionOwner, chrono.Sanitize(err.Error(), false))
				}
				return verdict.Errorf("opening a second connection for initialize: %v", err)
			}
			defer func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
				defer cancel()
				x.Close(cctx)
			}()
		}
		// A second session of a 2025-11-25 run comes initialized.
		if init = x.Server(); init == nil {
			x.ClearEnvelope()
			init, err = x.Initialize(ctx, peer.InitOptions{ProtocolVersion: spec.V20251125})
		}
	}
	if err != nil {
		if !e.Is2026() {
			// initialize's own rules are lifecycle/version-echo's.
			return e.Blame("initialize asking for 2025-11-25", versionOwner, chrono.Sanitize(err.Error(), false))
		}
		return verdict.Skipf("initialize failed (%s): a modern-only server agrees to nothing to compare", chrono.Sanitize(err.Error(), false))
	}
	agreed := init.ProtocolVersion
	if d.Supports(agreed) {
		return verdict.Passf("initialize agreed to %q, which server/discover lists (%s)", chrono.Sanitize(agreed, false), sanitizedList(d.SupportedVersions))
	}
	return e.Broke(verdict.Req("LIF-9").Under(spec.V20260728, "LIF-47").Except(verdict.Warn,
		"the evidence fits two readings and the spec settles neither: the server agrees to a revision it does not list as supported (LIF-9), or its supportedVersions names only the revisions of the per-request era although it implements both behaviours (LIF-47)"),
		[]string{"initialize agrees to a revision server/discover lists"},
		fmt.Sprintf("initialize agreed to %q, which server/discover does not list (it lists %s)", chrono.Sanitize(agreed, false), sanitizedList(d.SupportedVersions)), 0)
}

// versionOwner: initialize asking for 2025-11-25 relies on LIF-9, which
// lifecycle/version-echo judges.
var versionOwner = probe.Owner{Requirement: "LIF-9", Case: "lifecycle/version-echo"}

func initializeErrorNamesVersions(ctx context.Context, e *probe.Env) verdict.Outcome {
	e.S.ClearEnvelope()
	seq := e.Log.Len()
	init, err := e.S.Initialize(ctx, peer.InitOptions{ProtocolVersion: spec.V20251125})
	if err == nil {
		return verdict.Skipf("initialize agreed to %q: a dual-era server; LIF-49 is for servers that support only modern versions", chrono.Sanitize(init.ProtocolVersion, false))
	}
	var uve *peer.UnsupportedVersionError
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &uve) && len(uve.Supported) > 0:
		return verdict.Passf("initialize refused with -32022 naming %s", sanitizedList(uve.Supported))
	case errors.As(err, &rpcErr) && (spec.NamesRevision(rpcErr.Message) || spec.NamesRevision(string(rpcErr.Data))):
		return verdict.Passf("initialize refused with error %d naming a revision: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false))
	case errors.As(err, &rpcErr):
		return e.Breaks("LIF-49", []string{"an error naming the versions the server supports (-32022 with data.supported)"},
			fmt.Sprintf("error %d naming no version: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), answerAfter(e, seq))
	}
	return verdict.Errorf("initialize: %v", err)
}

// shaped2025 reports whether the first result received after seq has no
// resultType: the answer of a 2025-11-25 server (RPC-40 is 2026-07-28's).
func shaped2025(e *probe.Env, seq uint64) bool {
	for _, ev := range e.Log.Since(seq) {
		if ev.Dir != chrono.In || ev.Summary.Kind != "result" {
			continue
		}
		var m struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if json.Unmarshal(ev.Raw, &m) != nil {
			return false
		}
		_, typed := m.Result[mcp.ResultTypeKey]
		return !typed
	}
	return false
}

// statusBody says what an HTTP refusal's body held, from its sanitised
// start: "body: …", or "an empty body".
func statusBody(se *transport.StatusError) string {
	if se.Body == "" {
		return "an empty body"
	}
	return "body: " + se.Body
}
