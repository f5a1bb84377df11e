package peer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// metaOf decodes the _meta of a request the fake server read.
func metaOf(t *testing.T, m *jsonrpc.Message) map[string]any {
	t.Helper()
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", m.Method, err)
	}
	return p.Meta
}

func envelope2026() Envelope {
	return Envelope{ProtocolVersion: spec.V20260728, ClientInfo: &Implementation{Name: "mcpflight", Version: "test"},
		ClientCapabilities: map[string]any{}}
}

// TestEnvelopeOnEveryRequest: a 2026-07-28 session puts the envelope in
// every request's _meta (RPC-51, RPC-54), keeps what the params' own
// _meta says (progressToken, a key of the caller's), adds logLevel only
// when asked for, lets one request override or drop any field, and sends
// no initialize.
func TestEnvelopeOnEveryRequest(t *testing.T) {
	info := map[string]any{"name": "mcpflight", "version": "test"}
	base := map[string]any{
		mcp.MetaProtocolVersion:    spec.V20260728,
		mcp.MetaClientInfo:         info,
		mcp.MetaClientCapabilities: map[string]any{},
	}
	with := func(extra map[string]any, drop ...string) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		for _, k := range drop {
			delete(out, k)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		params any
		opts   []CallOption
		want   map[string]any
	}{
		{"no params", nil, nil, base},
		{"params kept", map[string]any{"name": "x"}, nil, base},
		{"own _meta kept", map[string]any{"_meta": map[string]any{"com.example/k": 1.0, mcp.MetaProtocolVersion: "1999-01-01"}}, nil,
			with(map[string]any{"com.example/k": 1.0, mcp.MetaProtocolVersion: "1999-01-01"})},
		{"progress", map[string]any{}, []CallOption{WithProgressToken(jsonrpc.StringToken("p"))}, with(map[string]any{mcp.MetaProgressToken: "p"})},
		{"log level", nil, []CallOption{WithLogLevel("warning")}, with(map[string]any{mcp.MetaLogLevel: "warning"})},
		{"override capabilities", nil, []CallOption{WithMeta(mcp.MetaClientCapabilities, map[string]any{"roots": map[string]any{}})},
			with(map[string]any{mcp.MetaClientCapabilities: map[string]any{"roots": map[string]any{}}})},
		{"version wrong on purpose", nil, []CallOption{WithMeta(mcp.MetaProtocolVersion, 20260728)}, with(map[string]any{mcp.MetaProtocolVersion: 20260728.0})},
		{"missing version", nil, []CallOption{WithoutMeta(mcp.MetaProtocolVersion)}, with(nil, mcp.MetaProtocolVersion)},
		{"missing capabilities and info", nil, []CallOption{WithoutMeta(mcp.MetaClientCapabilities, mcp.MetaClientInfo)}, with(nil, mcp.MetaClientCapabilities, mcp.MetaClientInfo)},
		{"drop then set", nil, []CallOption{WithoutMeta(mcp.MetaLogLevel), WithLogLevel("debug")}, with(map[string]any{mcp.MetaLogLevel: "debug"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fs := newPair(t)
			ctx := testCtx(t)
			s.SetEnvelope(envelope2026())
			if _, err := s.Start(ctx, "tools/list", tc.params, tc.opts...); err != nil {
				t.Fatal(err)
			}
			m := fs.read()
			if m.Method != "tools/list" {
				t.Fatalf("first frame is %s, want tools/list (no initialize)", m.Method)
			}
			if diff := cmp.Diff(tc.want, metaOf(t, m)); diff != "" {
				t.Errorf("_meta (-want +got):\n%s", diff)
			}
		})
	}
}

// Test2025SessionHasNoEnvelope: without SetEnvelope nothing is added,
// and ClearEnvelope ends it (the fallback to initialize).
func Test2025SessionHasNoEnvelope(t *testing.T) {
	s, fs := newPair(t)
	ctx := testCtx(t)
	if _, err := s.Start(ctx, "tools/list", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if meta := metaOf(t, fs.read()); meta != nil {
		t.Errorf("legacy request has _meta %v", meta)
	}
	s.SetEnvelope(envelope2026())
	if got := s.Revision(); got != spec.V20260728 {
		t.Errorf("Revision = %q", got)
	}
	s.ClearEnvelope()
	if _, err := s.Start(ctx, "tools/list", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if meta := metaOf(t, fs.read()); meta != nil {
		t.Errorf("after ClearEnvelope the request has _meta %v", meta)
	}
	if got := s.Revision(); got != "" {
		t.Errorf("Revision after ClearEnvelope = %q", got)
	}
}

// TestResultTypeReadOnEveryResult: an absent resultType is complete
// (RPC-44) and recorded as such; an unknown one is invalid (RPC-43);
// input_required is recognised but not complete; task is recognised only
// when the request declared the tasks extension (RPC-42).
func TestResultTypeReadOnEveryResult(t *testing.T) {
	withTasks := WithMeta(mcp.MetaClientCapabilities, map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}})
	for _, tc := range []struct {
		name       string
		result     string
		opts       []CallOption
		wantType   string
		wantErr    error
		wantNoteOn string
	}{
		{"complete", `{"resultType":"complete","tools":[]}`, nil, "complete", nil, ""},
		{"absent", `{"tools":[]}`, nil, "complete", nil, "read as \"complete\" (RPC-44)"},
		{"unknown", `{"resultType":"bogus"}`, nil, "bogus", ErrInvalidResultType, "invalid (RPC-43)"},
		{"input required", `{"resultType":"input_required","inputRequests":{}}`, nil, "input_required", ErrIncompleteResult, ""},
		{"task without the extension", `{"resultType":"task","taskId":"t"}`, nil, "task", ErrInvalidResultType, "invalid (RPC-43)"},
		{"task with the extension", `{"resultType":"task","taskId":"t"}`, []CallOption{withTasks}, "task", ErrIncompleteResult, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fs := newPair(t)
			ctx := testCtx(t)
			s.SetEnvelope(envelope2026())
			done := make(chan error, 1)
			go func() { done <- s.Request(ctx, "tools/list", nil, nil, tc.opts...) }()
			m := fs.read()
			fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":` + tc.result + `}`)
			err := <-done
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Request error %v, want %v", err, tc.wantErr)
			}
			var rte *ResultTypeError
			if tc.wantErr != nil && (!errors.As(err, &rte) || rte.ResultType != tc.wantType) {
				t.Errorf("error %v is not a *ResultTypeError for %q", err, tc.wantType)
			}
			noted := ""
			for _, ev := range s.Log().Events() {
				if ev.Kind == chrono.KindDecision && ev.Text != "" && strings.Contains(ev.Text, "resultType") {
					noted = ev.Text
				}
			}
			if tc.wantNoteOn != "" && !strings.Contains(noted, tc.wantNoteOn) {
				t.Errorf("chronology decision %q, want one saying %q", noted, tc.wantNoteOn)
			}
			if tc.wantNoteOn == "" && noted != "" {
				t.Errorf("unexpected decision %q", noted)
			}
		})
	}
}

// TestResultTypeNotCheckedOn2025Sessions: 2025-11-25 results have no
// resultType, and nothing is said about it.
func TestResultTypeNotCheckedOn2025Sessions(t *testing.T) {
	s, fs := newPair(t)
	ctx := testCtx(t)
	done := make(chan error, 1)
	go func() { done <- s.Request(ctx, "tools/list", nil, nil) }()
	m := fs.read()
	fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"resultType":"bogus"}}`)
	if err := <-done; err != nil {
		t.Fatalf("legacy Request: %v", err)
	}
}

// TestErrors2026Typed: -32022, -32020 and -32021 come back as typed
// errors that name what the server said and unwrap to the JSON-RPC error;
// data that is missing or misshapen is said so, never trusted.
func TestErrors2026Typed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		error string
		check func(t *testing.T, err error)
	}{
		{"unsupported version", `{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}`,
			func(t *testing.T, err error) {
				var e *UnsupportedVersionError
				if !errors.As(err, &e) {
					t.Fatalf("%v is not an *UnsupportedVersionError", err)
				}
				if diff := cmp.Diff([]string{"2026-07-28"}, e.Supported); diff != "" || e.Requested != "2025-11-25" || e.Malformed != "" {
					t.Errorf("supported %v requested %q malformed %q", e.Supported, e.Requested, e.Malformed)
				}
				if !e.Offers(spec.V20260728) || e.Offers(spec.V20251125) {
					t.Error("Offers disagrees with data.supported")
				}
				want := "the server does not support protocol version 2025-11-25 (-32022 UnsupportedProtocolVersion: Unsupported protocol version); it supports 2026-07-28"
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q, want it to contain %q", err, want)
				}
			}},
		{"unsupported version without data", `{"code":-32022,"message":"no"}`,
			func(t *testing.T, err error) {
				var e *UnsupportedVersionError
				if !errors.As(err, &e) || e.Malformed != "the error has no data" || len(e.Supported) != 0 {
					t.Fatalf("%v: %+v", err, e)
				}
			}},
		{"unsupported version with bad data", `{"code":-32022,"message":"no","data":{"supported":"2026-07-28","requested":5}}`,
			func(t *testing.T, err error) {
				var e *UnsupportedVersionError
				if !errors.As(err, &e) || e.Malformed != "data.supported is not an array of strings" || e.Supported != nil {
					t.Fatalf("%v: %+v", err, e)
				}
			}},
		{"header mismatch", `{"code":-32020,"message":"Mcp-Method does not match"}`,
			func(t *testing.T, err error) {
				var e *HeaderMismatchError
				if !errors.As(err, &e) || !strings.Contains(err.Error(), "-32020 HeaderMismatch: Mcp-Method does not match") {
					t.Fatalf("%v", err)
				}
			}},
		{"missing capability", `{"code":-32021,"message":"needs elicitation","data":{"requiredCapabilities":{"sampling":{},"elicitation":{}}}}`,
			func(t *testing.T, err error) {
				var e *MissingCapabilityError
				if !errors.As(err, &e) {
					t.Fatalf("%v", err)
				}
				if diff := cmp.Diff([]string{"elicitation", "sampling"}, e.Names); diff != "" {
					t.Error(diff)
				}
			}},
		{"other code stays a jsonrpc error", `{"code":-32601,"message":"Method not found"}`,
			func(t *testing.T, err error) {
				if IsError2026(err) {
					t.Errorf("%v taken for a modern error", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fs := newPair(t)
			ctx := testCtx(t)
			s.SetEnvelope(envelope2026())
			done := make(chan error, 1)
			go func() { done <- s.Request(ctx, "tools/list", nil, nil) }()
			m := fs.read()
			fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":` + tc.error + `}`)
			err := <-done
			var je *jsonrpc.Error
			if !errors.As(err, &je) {
				t.Fatalf("%v does not unwrap to *jsonrpc.Error", err)
			}
			tc.check(t, err)
		})
	}
}

// TestDiscover: server/discover's result is parsed (versions,
// capabilities, serverInfo from _meta) and, on a 2026-07-28 session, is
// what Server reports in initialize's shape.
func TestDiscover(t *testing.T) {
	s, fs := newPair(t)
	ctx := testCtx(t)
	s.SetEnvelope(envelope2026())
	if s.Server() != nil {
		t.Fatal("Server before Discover is not nil")
	}
	type res struct {
		d   *DiscoverResult
		err error
	}
	done := make(chan res, 1)
	go func() {
		d, err := s.Discover(ctx)
		done <- res{d, err}
	}()
	m := fs.read()
	if m.Method != mcp.MethodServerDiscover || metaOf(t, m)[mcp.MetaProtocolVersion] != spec.V20260728 {
		t.Fatalf("sent %s with _meta %v", m.Method, metaOf(t, m))
	}
	fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],` +
		`"capabilities":{"tools":{},"experimental":{"io.mcpflight/control":{}}},"instructions":"hi",` +
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}}}}`)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff([]string{"2026-07-28", "2025-11-25"}, r.d.SupportedVersions); diff != "" {
		t.Error(diff)
	}
	if r.d.ServerInfo == nil || r.d.ServerInfo.Name != "srv" || !r.d.Supports(spec.V20251125) {
		t.Errorf("discover %+v", r.d)
	}
	init := s.Server()
	if init == nil || init.ProtocolVersion != spec.V20260728 || init.ServerInfo.Name != "srv" || !init.HasCapability("tools") {
		t.Fatalf("Server() = %+v", init)
	}
	if _, ok := init.Experimental("io.mcpflight/control"); !ok {
		t.Error("the experimental capability is not seen through Server()")
	}
}

// TestStdio2026Cancel: over stdio a 2026-07-28 request is cancelled
// with notifications/cancelled naming it (CAN-44, CAN-51, CAN-53).
func TestStdio2026Cancel(t *testing.T) {
	s, fs := newPair(t)
	ctx := testCtx(t)
	s.SetEnvelope(envelope2026())
	c, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow"})
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	if err := s.Cancel(ctx, c, "enough"); err != nil {
		t.Fatal(err)
	}
	n := fs.read()
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		t.Fatal(err)
	}
	if n.Method != mcp.NotificationCancelled || string(p.RequestID) != c.ID.String() || p.Reason != "enough" {
		t.Errorf("sent %s %s", n.Method, n.Params)
	}
	if c.State() != StateCancelRequested {
		t.Errorf("state %s", c.State())
	}
}

// TestWithHeadersNeedsHTTP: header overrides on stdio are refused, not
// silently dropped.
func TestWithHeadersNeedsHTTP(t *testing.T) {
	s, _ := newPair(t)
	ctx := testCtx(t)
	if _, err := s.Start(ctx, "tools/list", nil, WithHeaders(map[string][]string{"Mcp-Method": {"x"}})); !errors.Is(err, ErrNoHeaders) {
		t.Errorf("Start = %v, want ErrNoHeaders", err)
	}
}

// TestRemovedMethodsCanBeSent: a 2026-07-28 session does not stop a case
// from sending what the revision removed (ping, logging/setLevel,
// initialize): each goes with the envelope, for the server to refuse.
func TestRemovedMethodsCanBeSent(t *testing.T) {
	s, fs := newPair(t)
	ctx := testCtx(t)
	s.SetEnvelope(envelope2026())
	for _, send := range []func() error{
		func() error { _, err := s.Start(ctx, mcp.MethodPing, nil); return err },
		func() error {
			_, err := s.Start(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": "debug"})
			return err
		},
		func() error {
			_, err := s.Start(ctx, mcp.MethodInitialize, map[string]any{"protocolVersion": spec.V20251125})
			return err
		},
	} {
		if err := send(); err != nil {
			t.Fatal(err)
		}
		m := fs.read()
		if metaOf(t, m)[mcp.MetaProtocolVersion] != spec.V20260728 {
			t.Errorf("%s went without the envelope: %s", m.Method, m.Params)
		}
	}
}
