package peer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// server2026 is a scripted 2026-07-28 Streamable HTTP endpoint: it
// records every request's headers and body, mints an Mcp-Session-Id on
// every answer (which a modern client must never send back), answers GET
// and DELETE 405, and answers POSTs by method and tool name:
//
//   - server/discover, tools/list (name "ok"): a JSON result;
//   - tools/call "slow": an SSE stream with one progress notification,
//     then nothing until the client goes away, which it reports on gone;
//   - tools/call "cut": an SSE event with an ID, then the end of the
//     stream without a response;
//   - tools/call "v": 400 with a -32022 JSON-RPC error;
//   - tools/call "text": 400 with a plain-text body;
//   - anything else: a JSON result, and a notification 202.
type server2026 struct {
	mu    sync.Mutex
	seen  []seenRequest
	gone  chan string
	first chan struct{}
}

type seenRequest struct {
	method string
	header http.Header
	body   []byte
}

func newServer2026() *server2026 {
	return &server2026{gone: make(chan string, 8), first: make(chan struct{}, 8)}
}

func (m *server2026) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.seen = append(m.seen, seenRequest{r.Method, r.Header.Clone(), body})
	m.mu.Unlock()
	w.Header().Set(mcp.HeaderSessionID, "minted-by-the-server")
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if msg.Kind == jsonrpc.KindNotification {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var p struct {
		Name string `json:"name"`
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	id := msg.ID.String()
	result := func(res string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + res + `}` }
	sse := func() http.Flusher {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		f.Flush()
		return f
	}
	switch {
	case msg.Method == mcp.MethodServerDiscover:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, result(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`))
	case p.Name == "slow":
		f := sse()
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":1}}\n\n", p.Meta.Token)
		f.Flush()
		m.first <- struct{}{}
		<-r.Context().Done()
		m.gone <- id
	case p.Name == "cut":
		f := sse()
		fmt.Fprint(w, "id: e-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
		f.Flush()
	case p.Name == "v":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`)
	case p.Name == "text":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "Bad Request: no session")
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, result(`{"resultType":"complete"}`))
	}
}

func (m *server2026) requests() []seenRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]seenRequest(nil), m.seen...)
}

// session2026 opens a 2026-07-28 session over Streamable HTTP to m.
func session2026(t *testing.T, m *server2026) (*peer.Session, *transport.HTTP, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // safety net
	t.Cleanup(cancel)
	ts := httptest.NewServer(m)
	t.Cleanup(ts.Close)
	log := chrono.New()
	conn, err := transport.DialHTTP(ctx, transport.HTTPConfig{URL: ts.URL, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	s := peer.New(conn, peer.Options{Log: log})
	t.Cleanup(func() { s.Close(context.Background()) })
	s.SetEnvelope(peer.Envelope{ProtocolVersion: spec.V20260728, ClientInfo: &peer.Implementation{Name: "mcpflight", Version: "test"}})
	return s, conn, ctx
}

// TestHTTP2026Headers: every 2026-07-28 POST carries MCP-Protocol-Version
// equal to the envelope's version (HTTP-95, HTTP-96), Mcp-Method, and
// Mcp-Name where the spec asks for it (HTTP-100, TSX-52), Base64-encoded
// when it is not plain ASCII (HTTP-101); never the session ID the server
// minted (HTTP-107). Each can be sent wrong on purpose with WithHeaders.
func TestHTTP2026Headers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
		opts   []peer.CallOption
		want   map[string]string // "" means absent
	}{
		{"discover", mcp.MethodServerDiscover, nil, nil,
			map[string]string{"Mcp-Protocol-Version": spec.V20260728, "Mcp-Method": "server/discover", "Mcp-Name": ""}},
		{"tools/call", "tools/call", map[string]any{"name": "echo"}, nil,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
		{"tools/call non-ASCII", "tools/call", map[string]any{"name": "grüß"}, nil,
			map[string]string{"Mcp-Name": "=?base64?Z3LDvMOf?="}},
		{"tools/call sentinel-looking", "tools/call", map[string]any{"name": "=?base64?x?="}, nil,
			map[string]string{"Mcp-Name": "=?base64?PT9iYXNlNjQ/eD89?="}},
		{"resources/read", mcp.MethodResourcesRead, map[string]any{"uri": "file:///a b"}, nil,
			map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "file:///a b"}},
		{"prompts/get", mcp.MethodPromptsGet, map[string]any{"name": "p"}, nil, map[string]string{"Mcp-Name": "p"}},
		{"tasks/get", mcp.MethodTasksGet, map[string]any{"taskId": "t-1"}, nil, map[string]string{"Mcp-Name": "t-1"}},
		{"tasks/cancel", mcp.MethodTasksCancel, map[string]any{"taskId": "t-2"}, nil, map[string]string{"Mcp-Name": "t-2"}},
		{"tools/list", mcp.MethodToolsList, nil, nil, map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": ""}},
		{"version follows the body", mcp.MethodToolsList, nil, []peer.CallOption{peer.WithMeta(mcp.MetaProtocolVersion, "2099-01-01")},
			map[string]string{"Mcp-Protocol-Version": "2099-01-01"}},
		{"missing version in the body", mcp.MethodToolsList, nil, []peer.CallOption{peer.WithoutMeta(mcp.MetaProtocolVersion)},
			map[string]string{"Mcp-Protocol-Version": spec.V20260728}},
		{"header differs from envelope", mcp.MethodToolsList, nil, []peer.CallOption{peer.WithHeaders(http.Header{"MCP-Protocol-Version": {spec.V20251125}})},
			map[string]string{"Mcp-Protocol-Version": spec.V20251125}},
		{"wrong Mcp-Method", "tools/call", map[string]any{"name": "echo"}, []peer.CallOption{peer.WithHeaders(http.Header{"Mcp-Method": {"tools/list"}})},
			map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": "echo"}},
		{"wrong Mcp-Name", "tools/call", map[string]any{"name": "echo"}, []peer.CallOption{peer.WithHeaders(http.Header{"Mcp-Name": {"other"}})},
			map[string]string{"Mcp-Name": "other"}},
		{"no Mcp-Method", "tools/call", map[string]any{"name": "echo"}, []peer.CallOption{peer.WithHeaders(http.Header{"Mcp-Method": nil})},
			map[string]string{"Mcp-Method": ""}},
		{"2025-11-25 headers on a 2026-07-28 request", mcp.MethodToolsList, nil,
			[]peer.CallOption{peer.WithHeaders(http.Header{"Mcp-Session-Id": {"s-1"}, "Last-Event-ID": {"e-9"}})},
			map[string]string{"Mcp-Session-Id": "s-1", "Last-Event-Id": "e-9", "Mcp-Method": "tools/list"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newServer2026()
			s, _, ctx := session2026(t, m)
			// A first request, so that the server's minted session ID
			// would be sent back by a client that kept it.
			if err := s.Request(ctx, mcp.MethodToolsList, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Request(ctx, tc.method, tc.params, nil, tc.opts...); err != nil {
				t.Fatal(err)
			}
			reqs := m.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			got := reqs[1].header
			want := map[string]string{"Mcp-Session-Id": "", "Last-Event-Id": "", "Mcp-Protocol-Version": spec.V20260728}
			for k, v := range tc.want {
				want[k] = v
			}
			for name, v := range want {
				if g := got.Get(name); g != v {
					t.Errorf("%s: %q, want %q", name, g, v)
				}
			}
			if reqs[0].header.Get("Mcp-Session-Id") != "" {
				t.Error("the first request carried a session ID")
			}
		})
	}
}

// TestHTTP2026CancelClosesStream: cancelling a 2026-07-28 request over
// Streamable HTTP closes its response stream, which the server sees as
// the request's end (CAN-43, CAN-55); no notifications/cancelled is sent
// (HTTP-99); the call ends at once with ErrStreamClosed, and the
// chronology says why.
func TestHTTP2026CancelClosesStream(t *testing.T) {
	m := newServer2026()
	s, conn, ctx := session2026(t, m)
	c, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow"}, peer.WithProgress())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.first:
	case <-ctx.Done():
		t.Fatal("no progress sent")
	}
	if err := s.Cancel(ctx, c, "enough"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-m.gone:
		if id != c.ID.String() {
			t.Errorf("the server saw request %s go, want %s", id, c.ID)
		}
	case <-ctx.Done():
		t.Fatal("the server never saw the stream close")
	}
	if _, err := c.Await(ctx); !errors.Is(err, peer.ErrStreamClosed) {
		t.Errorf("Await = %v, want ErrStreamClosed", err)
	}
	if c.State() != peer.StateStreamClosed || !c.CancelRequested() {
		t.Errorf("state %s, cancel requested %v", c.State(), c.CancelRequested())
	}
	for _, r := range m.requests() {
		if strings.Contains(string(r.body), "notifications/cancelled") {
			t.Errorf("a notifications/cancelled was POSTed: %s", r.body)
		}
	}
	if cancelsSent(s.Log()) != 0 {
		t.Error("the chronology has a notifications/cancelled")
	}
	decided := false
	for _, ev := range s.Log().Events() {
		if ev.Kind == chrono.KindDecision && strings.Contains(ev.Text, "closing the response stream of request "+c.ID.String()) {
			decided = true
		}
	}
	if !decided {
		t.Error("the chronology does not say the stream was closed to cancel")
	}
	if closed, err := conn.CloseRequest(c.ID); closed || err != nil {
		t.Errorf("a second close: %v, %v", closed, err)
	}
}

// TestHTTP2026Answers: a -32022 with 400 is the request's answer (typed,
// with the status kept, HTTP-97); a 400 without a JSON-RPC body fails the
// request with the status; a stream that ends before its response loses
// the request at once, and nothing tries to resume it (HTTP-93, HTTP-94):
// there is no GET.
func TestHTTP2026Answers(t *testing.T) {
	m := newServer2026()
	s, conn, ctx := session2026(t, m)
	c, err := s.Start(ctx, "tools/call", map[string]any{"name": "v"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var uve *peer.UnsupportedVersionError
	if !errors.As(peer.Error2026(resp.Error), &uve) || !uve.Offers(spec.V20260728) {
		t.Errorf("answer %+v is not a -32022 offering 2026-07-28", resp.Error)
	}
	if got := conn.StatusOf(c.ID); got != http.StatusBadRequest {
		t.Errorf("StatusOf = %d, want 400", got)
	}

	err = s.Request(ctx, "tools/call", map[string]any{"name": "text"}, nil)
	var se *transport.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest || !errors.Is(err, transport.ErrNoAnswer) {
		t.Errorf("plain-text 400: %v", err)
	}

	err = s.Request(ctx, "tools/call", map[string]any{"name": "cut"}, nil)
	if !errors.Is(err, transport.ErrNoAnswer) {
		t.Errorf("cut stream: %v, want ErrNoAnswer", err)
	}
	var methods []string
	for _, r := range m.requests() {
		methods = append(methods, r.method)
	}
	if diff := cmp.Diff([]string{"POST", "POST", "POST"}, methods); diff != "" {
		t.Errorf("HTTP methods (-want +got):\n%s", diff)
	}
	if _, err := conn.OpenGET(ctx); !errors.Is(err, transport.ErrNoGET2026) {
		t.Errorf("OpenGET = %v", err)
	}
}
