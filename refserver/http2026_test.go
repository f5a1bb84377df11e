package refserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// http2026 drives the reference server's endpoint with 2026-07-28 POSTs,
// raw bodies and headers.
type http2026 struct {
	t   *testing.T
	ts  *httptest.Server
	h   *HTTPHandler
	srv *Server
	// stderr is the server's diagnostics.
	stderr *lineSink

	mu      sync.Mutex
	nextID  int
	methods map[string]string
	frames  [][]byte
}

func newHTTP2026(t *testing.T, opts Options) *http2026 {
	t.Helper()
	stderr := newLineSink()
	opts.Stderr = stderr
	return newHTTP2026On(t, New(opts), stderr)
}

// newHTTP2026On serves srv's endpoint; stderr is srv's Stderr. When srv
// also serves other connections (shared), its goroutines are not counted
// at the endpoint's Close.
func newHTTP2026On(t *testing.T, srv *Server, stderr *lineSink, shared ...bool) *http2026 {
	t.Helper()
	isShared := len(shared) > 0 && shared[0]
	h := srv.HTTPHandler(HTTPOptions{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
		if n := srv.live.Load(); n != 0 && !isShared {
			t.Errorf("%d goroutines of the server left after Close", n)
		}
	})
	return &http2026{t: t, ts: ts, h: h, srv: srv, stderr: stderr, nextID: 100, methods: map[string]string{}}
}

// body builds a 2026-07-28 request and returns its ID and bytes.
func (c *http2026) body(method string, params, meta map[string]any) (jsonrpc.ID, []byte) {
	c.mu.Lock()
	c.nextID++
	id := jsonrpc.IntID(int64(c.nextID))
	c.methods[id.Key()] = method
	c.mu.Unlock()
	b, err := jsonrpc.EncodeRequest(id, method, withMeta(params, meta))
	if err != nil {
		c.t.Fatal(err)
	}
	return id, b
}

// headersFor are the headers a conforming client sends for body: the
// protocol version, the method and, where the method has one, the name.
func headersFor(body []byte) map[string]string {
	var m struct {
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	hdr := map[string]string{
		"Accept":                        "application/json, text/event-stream",
		"Content-Type":                  "application/json",
		transport.HeaderProtocolVersion: spec.V20260728,
		HeaderMethod:                    m.Method,
	}
	if src := nameSource(m.Method); src != "" {
		var v string
		if json.Unmarshal(m.Params[src], &v) == nil {
			hdr[HeaderName] = v
		}
	}
	return hdr
}

// open POSTs body with the conforming headers changed by hdr (an empty
// value deletes a header) and returns the response with its body unread.
func (c *http2026) open(ctx context.Context, method string, body []byte, hdr map[string]string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, c.ts.URL, strings.NewReader(string(body)))
	if body == nil {
		req.Body = nil
	}
	for k, v := range headersFor(body) {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.ts.Client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// exchange is one POST's answer: status, headers, the JSON-RPC frames of
// its body (one JSON body, or the data of each SSE event) and whether any
// SSE event carried an id.
type exchange struct {
	resp    *http.Response
	frames  []*jsonrpc.Message
	raw     string
	eventID bool
}

// response is the exchange's JSON-RPC response, or nil.
func (x exchange) response() *jsonrpc.Message {
	for _, m := range x.frames {
		if m.Kind.IsResponse() {
			return m
		}
	}
	return nil
}

// do POSTs body and reads the whole answer.
func (c *http2026) do(body []byte, hdr map[string]string) exchange {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safety) // safety net
	defer cancel()
	resp := c.open(ctx, http.MethodPost, body, hdr)
	defer resp.Body.Close()
	x := exchange{resp: resp}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rd := transport.NewSSEReader(resp.Body, 1<<20)
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			x.eventID = x.eventID || ev.HasID
			if ev.HasData {
				x.add(c, []byte(ev.Data))
			}
		}
		return x
	}
	b, _ := io.ReadAll(resp.Body)
	x.raw = string(b)
	if len(b) > 0 {
		x.add(c, b)
	}
	return x
}

func (x *exchange) add(c *http2026, raw []byte) {
	m, err := decode2026(raw)
	if err != nil {
		c.t.Errorf("not JSON-RPC: %q", raw)
		return
	}
	x.frames = append(x.frames, m)
	c.mu.Lock()
	c.frames = append(c.frames, raw)
	c.mu.Unlock()
}

// call POSTs a conforming request and returns the exchange.
func (c *http2026) call(method string, params, meta map[string]any) exchange {
	c.t.Helper()
	_, b := c.body(method, params, meta)
	return c.do(b, nil)
}

// result is call for a 200 with a success result, decoded into v.
func (c *http2026) result(method string, params, meta map[string]any, v any) {
	c.t.Helper()
	x := c.call(method, params, meta)
	m := x.response()
	if x.resp.StatusCode != http.StatusOK || m == nil || m.Kind != jsonrpc.KindResult {
		c.t.Fatalf("%s: %d %s", method, x.resp.StatusCode, x.raw)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
	}
}

func (c *http2026) await(cp string, meta map[string]any) mcp.ControlReached {
	c.t.Helper()
	var r mcp.ControlReached
	c.result(mcp.MethodControlAwait, map[string]any{"checkpoint": cp}, meta, &r)
	return r
}

func (c *http2026) release(cp string, meta map[string]any) {
	c.t.Helper()
	c.result(mcp.MethodControlRelease, map[string]any{"checkpoint": cp}, meta, nil)
}

func (c *http2026) counters(meta map[string]any) mcp.ControlCounters {
	c.t.Helper()
	var r mcp.ControlCounters
	c.result(mcp.MethodControlCounters, map[string]any{}, meta, &r)
	return r
}

// stream is a streamed POST being read event by event.
type stream struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan transport.SSEEvent
}

// start POSTs body and reads its SSE events as they come; close drops the
// connection.
func (c *http2026) start(body []byte) *stream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp := c.open(ctx, http.MethodPost, body, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		c.t.Fatalf("streamed POST: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &stream{resp: resp, cancel: cancel, events: make(chan transport.SSEEvent, 64)}
	go func() {
		defer close(s.events)
		rd := transport.NewSSEReader(resp.Body, 1<<20)
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			if ev.HasData {
				c.mu.Lock()
				c.frames = append(c.frames, []byte(ev.Data))
				c.mu.Unlock()
			}
			s.events <- ev
		}
	}()
	c.t.Cleanup(s.close)
	return s
}

// next returns the stream's next message, or nil at its end.
func (s *stream) next(t *testing.T) *jsonrpc.Message {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			return nil
		}
		m, err := jsonrpc.Decode([]byte(ev.Data))
		if err != nil {
			t.Fatalf("event %q: %v", ev.Data, err)
		}
		return m
	case <-time.After(safety):
		t.Fatal("no event within the safety bound")
	}
	return nil
}

// close drops the stream's connection, as a client that cancels.
func (s *stream) close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// wantHTTPError checks an exchange's status and JSON-RPC error code.
func wantHTTPError(t *testing.T, x exchange, status, code int) {
	t.Helper()
	m := x.response()
	if x.resp.StatusCode != status || m == nil || m.Kind != jsonrpc.KindError || m.Error.Code != code {
		t.Errorf("got %d %s, want %d with error %d", x.resp.StatusCode, x.raw, status, code)
	}
}

// TestHTTP2026Requests: a 2026-07-28 POST is answered on its own: no session
// is minted, and an Mcp-Session-Id or Last-Event-ID it carries is ignored
// (HTTP-107); JSON for quick requests, an SSE stream that carries the
// request's progress and log messages and ends with its response, with
// X-Accel-Buffering: no and no event IDs (HTTP-89, HTTP-91..93).
func TestHTTP2026Requests(t *testing.T) {
	c := newHTTP2026(t, Options{})
	_, b := c.body(mcp.MethodServerDiscover, nil, nil)
	x := c.do(b, map[string]string{transport.HeaderSessionID: "not-a-session", transport.HeaderLastEventID: "1-1"})
	if x.resp.StatusCode != 200 || x.resp.Header.Get(transport.HeaderSessionID) != "" || !strings.Contains(x.raw, `"supportedVersions"`) {
		t.Fatalf("discover: %d %v %s", x.resp.StatusCode, x.resp.Header, x.raw)
	}
	_, b = c.body(mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a", "steps": 2, "gated": false, "logSteps": true}},
		meta2026(mcp.MetaProgressToken, 7, mcp.MetaLogLevel, "info"))
	x = c.do(b, nil)
	var kinds []string
	for _, m := range x.frames {
		if m.Kind == jsonrpc.KindNotification {
			kinds = append(kinds, m.Method)
		} else {
			kinds = append(kinds, m.Kind.String())
		}
	}
	want := "notifications/message notifications/progress notifications/message notifications/progress result"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("the stream carried %s, want %s", got, want)
	}
	if x.eventID || x.resp.Header.Get("X-Accel-Buffering") != "no" || x.resp.Header.Get(transport.HeaderSessionID) != "" {
		t.Errorf("event IDs %v, headers %v", x.eventID, x.resp.Header)
	}
	if c.h.Sessions() != 0 {
		t.Errorf("%d sessions", c.h.Sessions())
	}
	schemaCheck(t, c.frames, c.methods)
}

// TestHTTP2026Refusals: what a 2026-07-28 endpoint refuses, and how: the
// headers must be there and mirror the body (400, -32020: HTTP-95, HTTP-96,
// HTTP-103, HTTP-104; Mcp-Name decoded from Base64 first, HTTP-101), an
// unsupported version is 400 and -32022 (HTTP-97), a missing envelope
// field 400 and -32602 (RPC-53), a missing capability 400 and -32021
// (RPC-55), an unknown or removed method 404 and -32601 (HTTP-81, PNG-40).
func TestHTTP2026Refusals(t *testing.T) {
	c := newHTTP2026(t, Options{})
	slow := map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "x", "steps": 1, "gated": false}}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct {
		name         string
		method       string
		params, meta map[string]any
		hdr          map[string]string
		status, code int
	}{
		{"no MCP-Protocol-Version", mcp.MethodToolsList, nil, nil, map[string]string{transport.HeaderProtocolVersion: ""}, 400, mcp.CodeHeaderMismatch},
		{"version header differs", mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, "1900-01-01"), nil, 400, mcp.CodeHeaderMismatch},
		{"unsupported version", mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, "1900-01-01"), map[string]string{transport.HeaderProtocolVersion: "1900-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
		{"no Mcp-Method", mcp.MethodToolsList, nil, nil, map[string]string{HeaderMethod: ""}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Method differs", mcp.MethodToolsCall, slow, nil, map[string]string{HeaderMethod: mcp.MethodToolsList}, 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Name", mcp.MethodToolsCall, slow, nil, map[string]string{HeaderName: ""}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name differs", mcp.MethodToolsCall, slow, nil, map[string]string{HeaderName: ToolEffect}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name in Base64 differs", mcp.MethodToolsCall, slow, nil, map[string]string{HeaderName: b64(ToolEffect)}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name bad Base64", mcp.MethodToolsCall, slow, nil, map[string]string{HeaderName: "=?base64?***?="}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name for a task differs", mcp.MethodTasksGet, map[string]any{"taskId": "t1"}, taskMeta(), map[string]string{HeaderName: "t2"}, 400, mcp.CodeHeaderMismatch},
		{"no clientCapabilities", mcp.MethodToolsList, nil, meta2026(mcp.MetaClientCapabilities, nil), nil, 400, jsonrpc.CodeInvalidParams},
		{"unknown logLevel", mcp.MethodToolsCall, slow, meta2026(mcp.MetaLogLevel, "loud"), nil, 400, jsonrpc.CodeInvalidParams},
		{"task_worker undeclared", mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": map[string]any{"key": "w"}}, nil, nil, 400, mcp.CodeMissingRequiredClientCapability},
		{"tasks/get undeclared", mcp.MethodTasksGet, map[string]any{"taskId": "t1"}, nil, nil, 400, mcp.CodeMissingRequiredClientCapability},
		{"unknown task", mcp.MethodTasksGet, map[string]any{"taskId": "t1"}, taskMeta(), nil, 200, jsonrpc.CodeInvalidParams},
		{"ping", mcp.MethodPing, nil, nil, nil, 404, jsonrpc.CodeMethodNotFound},
		{"logging/setLevel", mcp.MethodLoggingSetLevel, map[string]any{"level": "info"}, nil, nil, 404, jsonrpc.CodeMethodNotFound},
		{"tasks/result", mcp.MethodTasksResult, map[string]any{"taskId": "t1"}, taskMeta(), nil, 404, jsonrpc.CodeMethodNotFound},
		{"unknown method", "nope/nothing", nil, nil, nil, 404, jsonrpc.CodeMethodNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, b := c.body(tt.method, tt.params, tt.meta)
			wantHTTPError(t, c.do(b, tt.hdr), tt.status, tt.code)
		})
	}
	t.Run("Mcp-Name in Base64 matches", func(t *testing.T) {
		_, b := c.body(mcp.MethodToolsCall, slow, nil)
		if x := c.do(b, map[string]string{HeaderName: b64(ToolSlow)}); x.resp.StatusCode != 200 || x.response().Kind != jsonrpc.KindResult {
			t.Errorf("%d %s", x.resp.StatusCode, x.raw)
		}
	})
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		t.Run(m+" 405", func(t *testing.T) {
			resp := c.open(context.Background(), m, nil, nil)
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("%d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
			}
		})
	}
	t.Run("notifications/cancelled 202", func(t *testing.T) {
		b, _ := jsonrpc.EncodeNotification(mcp.NotificationCancelled, map[string]any{"requestId": 1})
		x := c.do(b, nil)
		if x.resp.StatusCode != http.StatusAccepted || x.raw != "" {
			t.Errorf("%d %q", x.resp.StatusCode, x.raw)
		}
	})
	t.Run("a response 400", func(t *testing.T) {
		if x := c.do([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil); x.resp.StatusCode != 400 {
			t.Errorf("%d %s", x.resp.StatusCode, x.raw)
		}
	})
	schemaCheck(t, c.frames, c.methods)
}

// TestHTTP2026BothRevisions: the endpoint serves both eras at once: initialize
// starts a 2025-11-25 session as before, while a server without the legacy
// era refuses initialize with 400 and -32022 naming its version (LIF-49)
// and answers GET 405 even without the version header (HTTP-107).
func TestHTTP2026BothRevisions(t *testing.T) {
	initBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	noHeaders2026 := map[string]string{transport.HeaderProtocolVersion: "", HeaderMethod: ""}
	dual := newHTTP2026(t, Options{})
	if x := dual.do(initBody, noHeaders2026); x.resp.StatusCode != 200 || x.resp.Header.Get(transport.HeaderSessionID) == "" {
		t.Errorf("dual-era initialize: %d %s", x.resp.StatusCode, x.raw)
	}
	is2026 := newHTTP2026(t, Options{Protocols: []string{spec.V20260728}})
	x := is2026.do(initBody, noHeaders2026)
	wantHTTPError(t, x, 400, mcp.CodeUnsupportedProtocolVersion)
	if m := x.response(); m == nil || string(m.Error.Data) != `{"requested":"2025-11-25","supported":["2026-07-28"]}` {
		t.Errorf("initialize refused with %s", x.raw)
	}
	resp := is2026.open(context.Background(), http.MethodGet, nil, map[string]string{transport.HeaderProtocolVersion: ""})
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET on a modern-only server: %d", resp.StatusCode)
	}
	is2025 := newHTTP2026(t, Options{Protocols: []string{spec.V20251125}})
	_, b := is2025.body(mcp.MethodServerDiscover, nil, nil)
	if x := is2025.do(b, nil); x.resp.StatusCode != http.StatusBadRequest || strings.Contains(x.raw, "supportedVersions") {
		t.Errorf("a legacy-only server served discover: %d %s", x.resp.StatusCode, x.raw)
	}
}

// TestHTTP2026StreamCloseCancels: closing a 2026-07-28 request's response
// stream cancels it (CAN-43, CAN-55): while progress flows, and for a
// silent handler with nothing to write (held at its first gate), which
// net/http notices from the closed connection without a write. Its
// cleanup counter shows it; no notifications/cancelled is needed. Under
// stream-close-not-cancel the operation is still running once the server
// has dealt with the close (KEY/disconnected).
func TestHTTP2026StreamCloseCancels(t *testing.T) {
	for _, fault := range []Fault{"", FaultStreamCloseNotCancel} {
		for _, at := range []string{"start", "step/1"} {
			t.Run(string(fault)+"/"+at, func(t *testing.T) {
				c := newHTTP2026(t, Options{Faults: FaultSet{fault: fault != ""}})
				_, b := c.body(mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a", "steps": 2}}, meta2026(mcp.MetaProgressToken, "p"))
				s := c.start(b)
				if at == "step/1" {
					c.release("a/start", nil)
					if m := s.next(t); m == nil || m.Method != mcp.NotificationProgress {
						t.Fatalf("first event %v", m)
					}
				}
				c.await("a/"+at, nil)
				s.close()
				c.await("a/disconnected", nil)
				op := c.counters(nil).Operations["a"]
				if fault != "" {
					if op.State != "running" {
						t.Errorf("under the fault the operation is %+v", op)
					}
					return
				}
				if end := c.await("a/end", nil); end.Outcome != mcp.OutcomeCancelled {
					t.Errorf("a/end %+v", end)
				}
				cnt := c.counters(nil)
				if op := cnt.Operations["a"]; op.State != "cancelled" || op.Releases != 1 || cnt.OperationsActive != 0 || cnt.ProgressTokensLive != 0 {
					t.Errorf("counters %+v", cnt)
				}
			})
		}
	}
}

// TestHTTP2026Stateless: nothing ties a request to the one before: a task
// created by one POST is found by a tasks/get on a new connection
// (RPC-60, TSX-16); control scopes keep apart what their requests do, so
// two runs may use the same keys (a request's _meta io.mcpflight/scope).
func TestHTTP2026Stateless(t *testing.T) {
	c := newHTTP2026(t, Options{})
	var created extTaskResult
	c.result(mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": map[string]any{"key": "w", "ticks": 1, "gated": false}}, taskMeta(), &created)
	if created.ResultType != mcp.ResultTypeTask {
		t.Fatalf("CreateTaskResult %+v", created)
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, b := c.body(mcp.MethodTasksGet, map[string]any{"taskId": created.TaskID}, taskMeta())
	req, _ := http.NewRequest(http.MethodPost, c.ts.URL, strings.NewReader(string(b)))
	for k, v := range headersFor(b) {
		req.Header.Set(k, v)
	}
	resp, err := fresh.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), created.TaskID) {
		t.Errorf("tasks/get on a new connection: %d %s", resp.StatusCode, got)
	}
	for _, scope := range []string{"run-1", "run-2"} {
		meta := meta2026(MetaScope, scope)
		c.result(mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a", "steps": 1, "gated": false}}, meta, nil)
		if cnt := c.counters(meta); cnt.OperationsStarted != 1 || cnt.Operations["a"].State != "completed" {
			t.Errorf("scope %s: counters %+v", scope, cnt)
		}
	}
	if cnt := c.counters(nil); cnt.OperationsStarted != 0 || len(cnt.Tasks) != 1 {
		t.Errorf("default scope: counters %+v", cnt)
	}
}

// TestHTTP2026Listen: the subscriptions/listen stream over HTTP carries the
// acknowledgement and the status of the tasks asked for; the endpoint's
// shutdown answers it before closing (SUB-6, SUB-7); a client that closes
// the stream ends the subscription (SUB-10).
func TestHTTP2026Listen(t *testing.T) {
	c := newHTTP2026(t, Options{})
	var created extTaskResult
	c.result(mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": map[string]any{"key": "w", "ticks": 1}}, taskMeta(), &created)
	listen := func() (jsonrpc.ID, *stream) {
		id, b := c.body(mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"taskIds": []string{created.TaskID}}}, taskMeta())
		s := c.start(b)
		if m := s.next(t); m == nil || m.Method != mcp.NotificationSubscriptionsAcknowledged {
			t.Fatalf("first event %v", m)
		}
		return id, s
	}
	gone, s1 := listen()
	s1.close()
	if end := c.await(subscriptionCheckpoint(gone), nil); end.Outcome != mcp.OutcomeCancelled {
		t.Errorf("closed subscription %+v", end)
	}
	id, s := listen()
	c.release("w/start", nil)
	c.release("w/tick/1", nil)
	if m := s.next(t); m == nil || m.Method != mcp.NotificationTasks || !strings.Contains(string(m.Params), `"status":"completed"`) {
		t.Fatalf("task status %v", m)
	}
	c.h.Close()
	m := s.next(t)
	if m == nil || m.Kind != jsonrpc.KindResult || m.ID != id || !strings.Contains(string(m.Result), mcp.MetaSubscriptionID) {
		t.Fatalf("the shutdown's answer %v", m)
	}
	if m := s.next(t); m != nil {
		t.Errorf("the stream goes on after the answer: %s", m.Raw)
	}
	schemaCheck(t, c.frames, c.methods)

}

// TestCrossTransport2026: one Server serves 2026-07-28 over stdio and HTTP
// at once, from the same default scope: a task created over HTTP is read
// over stdio (RPC-60); the endpoint's Close ends the subscriptions opened
// over HTTP and leaves the stdio connection's open.
func TestCrossTransport2026(t *testing.T) {
	c := newClient2026(newHarness(t))
	w := newHTTP2026On(t, c.srv, c.stderr, true)
	var created extTaskResult
	w.result(mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": map[string]any{"key": "w", "ticks": 1, "gated": false}}, taskMeta(), &created)
	c.await2026("w/end", nil)
	if got := c.getTask(created.TaskID); got.Status != mcp.TaskCompleted {
		t.Errorf("the HTTP task over stdio: %+v", got)
	}
	sub := c.id()
	c.send2026(sub, mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)
	_, b := w.body(mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)
	s := w.start(b)
	if m := s.next(t); m == nil || m.Method != mcp.NotificationSubscriptionsAcknowledged {
		t.Fatalf("HTTP acknowledgement %v", m)
	}
	if n := c.counters2026(nil).SubscriptionsOpen; n != 2 {
		t.Fatalf("subscriptionsOpen %d, want 2", n)
	}
	w.h.Close()
	if m := s.next(t); m == nil || m.Kind != jsonrpc.KindResult {
		t.Errorf("the HTTP subscription's end %v", m)
	}
	if n := c.counters2026(nil).SubscriptionsOpen; n != 1 {
		t.Errorf("subscriptionsOpen %d after the endpoint closed, want the stdio one", n)
	}
	if len(c.responsesTo(sub)) != 0 {
		t.Errorf("the stdio subscription was answered")
	}
}
