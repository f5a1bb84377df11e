package transport

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// Streamable HTTP as MCP 2026-07-28 defines it (the modern era). A
// connection starts in the 2025-11-25 shape; Set2026 switches it. In
// the modern shape:
//
//   - every POST carries the request metadata headers, mirrored from the
//     body (HTTP-84, HTTP-95, HTTP-100): MCP-Protocol-Version from
//     _meta's io.modelcontextprotocol/protocolVersion (HTTP-96), Mcp-Method
//     from method, and Mcp-Name from params.name (tools/call,
//     prompts/get), params.uri (resources/read) or params.taskId
//     (tasks/get, tasks/update, tasks/cancel: TSX-52), Base64-encoded when
//     it cannot go as plain ASCII (HTTP-101);
//   - there is no session (no Mcp-Session-Id is sent or learned), no GET
//     stream and no resumption: a response stream that ends before its
//     response loses the request at once (HTTP-93, HTTP-94);
//   - each request's exchange is its own, and CloseRequest closes it: that
//     is how a client cancels a request over 2026-07-28 HTTP (CAN-43,
//     CAN-55), and no notifications/cancelled is sent;
//   - an error status with a JSON-RPC error body (400 with -32022, 404
//     with -32601) is the request's answer: the body is delivered as its
//     response and StatusOf tells the status.
//
// A case that must send something wrong on purpose (a header that does
// not match the body, a legacy header on a modern request, a missing
// header) gives SendHeaders its overrides.

// ErrNoGET2026 reports an attempt to open the GET stream or resume one
// on a 2026-07-28 connection, which has neither (HTTP-80, HTTP-93).
var ErrNoGET2026 = errors.New("transport: 2026-07-28 Streamable HTTP has no GET stream and no resumption (send a deliberate GET with Raw)")

// HeaderSender is a Conn that can send one frame with header overrides:
// a name with values replaces the transport's own header, a name with no
// values removes it. The HTTP transport is one; stdio has no headers.
type HeaderSender interface {
	SendHeaders(ctx context.Context, raw []byte, headers http.Header) error
}

// RequestCloser is a Conn on which a request is cancelled by closing its
// exchange (2026-07-28 Streamable HTTP, CAN-43). Closable reports whether
// the connection is in that mode; CloseRequest closes the exchange of the
// request with id and reports whether one was still open.
type RequestCloser interface {
	Closable() bool
	CloseRequest(id jsonrpc.ID) (bool, error)
}

// Switcher2026 is a Conn that can be switched between the 2025-11-25 and
// the 2026-07-28 shape of its transport; "" is 2025-11-25.
type Switcher2026 interface {
	Set2026(revision string)
}

// exchange is one 2026-07-28 request's POST, from before its headers to
// the end of its body or stream.
type exchange struct {
	channel string
	cancel  context.CancelFunc
	done    chan struct{}
	// answered and closed are guarded by HTTP.mu: answered is set once
	// the request's response is on its way to Inbound, closed by
	// CloseRequest.
	answered bool
	closed   bool
}

// markAnswered records that the response to id is being delivered, so
// that CloseRequest no longer takes the exchange for one in flight.
func (t *HTTP) markAnswered(id jsonrpc.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x := t.exchanges[id.Key()]; x != nil {
		x.answered = true
	}
}

// Set2026 switches the connection to the 2026-07-28 shape of
// Streamable HTTP for revision (a modern revision, "2026-07-28"), or back
// to the 2025-11-25 shape for "". Nothing is sent. The switch is
// recorded in the chronology.
func (t *HTTP) Set2026(revision string) {
	t.mu.Lock()
	changed := t.rev2026 != revision
	t.rev2026 = revision
	t.mu.Unlock()
	if !changed {
		return
	}
	if revision == "" {
		t.cfg.Log.Harness(chrono.KindState, "http", "2025-11-25 Streamable HTTP: sessions, the GET stream and resumption")
		return
	}
	t.cfg.Log.Harness(chrono.KindState, "http", chrono.Sanitize(revision, false)+" Streamable HTTP: no session, no GET stream, no resumption; request metadata in headers; closing a request's stream cancels it")
}

// Revision2026 is the modern revision set with Set2026, "" for 2025-11-25.
func (t *HTTP) Revision2026() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rev2026
}

// Closable reports whether a request is cancelled by closing its
// exchange: true once Set2026 has switched to 2026-07-28.
func (t *HTTP) Closable() bool { return t.Revision2026() != "" }

// StatusOf is the HTTP status of the exchange that answered the request
// with id, 0 while none is known: on a 2026-07-28 connection for every
// request, on a 2025-11-25 one for those answered with a JSON body.
func (t *HTTP) StatusOf(id jsonrpc.ID) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.statusOf[id.Key()]
}

// SendHeaders sends raw as Send does, with headers overriding the
// transport's own for this POST only (see HeaderSender).
func (t *HTTP) SendHeaders(ctx context.Context, raw []byte, headers http.Header) error {
	return t.send(ctx, raw, headers)
}

// CloseRequest closes the exchange of the request with id, whatever it
// is waiting for (its response headers, its JSON body, events on its
// stream): over 2026-07-28 Streamable HTTP that is the cancellation of
// the request (CAN-43, CAN-55). It returns once the exchange has stopped,
// and reports false when there was nothing left to cancel: the response
// is already on its way to Inbound, or the exchange ended (lost). On a 2025-11-25 connection closing a stream is a
// disconnection, not a cancellation (HTTP-25): use Drop.
func (t *HTTP) CloseRequest(id jsonrpc.ID) (bool, error) {
	t.mu.Lock()
	if t.rev2026 == "" {
		t.mu.Unlock()
		return false, errors.New("transport: on 2025-11-25 Streamable HTTP closing a stream is not a cancellation (HTTP-25); send notifications/cancelled, or Drop the stream")
	}
	x := t.exchanges[id.Key()]
	open := false
	if x != nil && !x.answered {
		select {
		case <-x.done:
		default:
			open = true
			x.closed = true
		}
	}
	t.mu.Unlock()
	if !open {
		return false, nil
	}
	t.cfg.Log.Harness(chrono.KindDecision, x.channel, chrono.TextStreamClosed+id.String()+
		": the cancellation signal of 2026-07-28 Streamable HTTP (CAN-43, CAN-55); no notifications/cancelled is sent")
	x.cancel()
	<-x.done
	return true, nil
}

// headers2026 are the request metadata headers of one 2026-07-28 POST
// (HTTP-95, HTTP-100), mirrored from its body; fallback is the
// connection's revision, used when the body carries no protocol version
// of its own (a request missing it on purpose, a notification).
func headers2026(msg *jsonrpc.Message, fallback string) http.Header {
	h := http.Header{}
	version := fallback
	if msg != nil && msg.Kind.IsResponse() {
		h.Set(mcp.HeaderProtocolVersion, version)
		return h
	}
	if msg == nil {
		h.Set(mcp.HeaderProtocolVersion, version)
		return h
	}
	var p struct {
		Meta   map[string]json.RawMessage `json:"_meta"`
		Name   json.RawMessage            `json:"name"`
		URI    json.RawMessage            `json:"uri"`
		TaskID json.RawMessage            `json:"taskId"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	var v string
	if raw, ok := p.Meta[mcp.MetaProtocolVersion]; ok && json.Unmarshal(raw, &v) == nil && v != "" && headerValueOK(v) {
		version = v
	}
	h.Set(mcp.HeaderProtocolVersion, version)
	if headerValueOK(msg.Method) {
		h.Set(mcp.HeaderMethod, msg.Method)
	} else {
		h.Set(mcp.HeaderMethod, EncodeHeaderValue(msg.Method))
	}
	var source json.RawMessage
	switch msg.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		source = p.Name
	case mcp.MethodResourcesRead:
		source = p.URI
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		source = p.TaskID
	}
	var name string
	if source != nil && json.Unmarshal(source, &name) == nil {
		h.Set(mcp.HeaderName, EncodeHeaderValue(name))
	}
	return h
}

// EncodeHeaderValue is s as an MCP header value (HTTP-101): as it is when
// it is plain ASCII (visible characters and inner spaces), otherwise
// "=?base64?…?=" around the Base64 of its UTF-8 bytes. A plain value that
// looks like that sentinel is encoded too, so that it cannot be mistaken
// for one.
func EncodeHeaderValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' '
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && strings.HasPrefix(s, mcp.Base64Prefix) && strings.HasSuffix(s, mcp.Base64Suffix) {
		plain = false
	}
	if plain || s == "" {
		return s
	}
	return mcp.Base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + mcp.Base64Suffix
}

// DecodeHeaderValue undoes EncodeHeaderValue: a sentinel-enclosed value
// is decoded, any other returned as it is.
func DecodeHeaderValue(v string) (string, error) {
	if !strings.HasPrefix(v, mcp.Base64Prefix) || !strings.HasSuffix(v, mcp.Base64Suffix) || len(v) < len(mcp.Base64Prefix)+len(mcp.Base64Suffix) {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[len(mcp.Base64Prefix) : len(v)-len(mcp.Base64Suffix)])
	if err != nil {
		return "", fmt.Errorf("transport: header value %q: %w", chrono.Sanitize(v, false), err)
	}
	return string(b), nil
}

// sendRequest2026 POSTs one 2026-07-28 request. The frame is recorded
// before Send returns; the exchange then goes on in a goroutine of its
// own, so that it can be closed at any point (CloseRequest), and
// whatever ends it without its response reaches Inbound with For set.
func (t *HTTP) sendRequest2026(channel string, raw []byte, msg *jsonrpc.Message, extra http.Header) error {
	ctx, cancel := context.WithCancel(t.ctx)
	req, err := t.newRequest(ctx, http.MethodPost, raw, "application/json, text/event-stream", extra)
	if err != nil {
		cancel()
		return err
	}
	if !t.track() {
		cancel()
		return ErrClosed
	}
	x := &exchange{channel: channel, cancel: cancel, done: make(chan struct{})}
	// A reused ID (a negative case) replaces the earlier exchange.
	key := msg.ID.Key()
	t.mu.Lock()
	t.exchanges[key] = x
	t.mu.Unlock()
	t.logRequest(req, channel, raw)
	go func() {
		defer t.wg.Done()
		defer close(x.done)
		resp, guard, stop, err := t.do(req, channel)
		if err != nil {
			if t.closedByUs(msg.ID) {
				t.cfg.Log.Harness(chrono.KindNote, channel, "exchange closed by the client before the response headers: request "+msg.ID.String()+" cancelled")
				return
			}
			if t.ctx.Err() != nil {
				return
			}
			e := t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(fmt.Sprintf("request %s: %v", msg.ID, err), false))
			t.deliver(Inbound{Err: fmt.Errorf("transport: %s: %w: %w", channel, ErrNoAnswer, err), Seq: e.Seq, For: msg.ID})
			return
		}
		t.mu.Lock()
		t.statusOf[key] = resp.StatusCode
		t.mu.Unlock()
		t.answer2026(resp, guard, stop, channel, msg)
	}()
	return nil
}

// closedByUs reports whether CloseRequest closed the exchange of the
// request with id.
func (t *HTTP) closedByUs(id jsonrpc.ID) bool {
	if !id.IsValid() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.exchanges[id.Key()]
	return x != nil && x.closed
}

// answer2026 reads the answer to a 2026-07-28 request, from the
// exchange's own goroutine.
func (t *HTTP) answer2026(resp *http.Response, guard *stallGuard, stop context.CancelFunc, channel string, msg *jsonrpc.Message) {
	mt := mediaType(resp.Header)
	lose := func(err error) {
		e := t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(err.Error(), false))
		t.deliver(Inbound{Err: err, Seq: e.Seq, For: msg.ID})
	}
	switch {
	case resp.StatusCode/100 == 2 && mt == "text/event-stream":
		s := t.newStream(channel, stop)
		t.mu.Lock()
		t.byRequest[msg.ID.Key()] = channel
		s.reqKey, s.reqID = msg.ID.Key(), msg.ID
		t.mu.Unlock()
		t.wg.Add(1)
		t.readSSE(s, resp, guard)
	case mt == "application/json":
		// A JSON-RPC error body with a 4xx is the answer too (-32022 with
		// 400, -32601 with 404: HTTP-81, HTTP-97).
		defer stop()
		t.readJSON(resp, channel, msg)
	case resp.StatusCode == http.StatusAccepted:
		t.readRest(resp, stop, channel)
		lose(fmt.Errorf("transport: %s: %w: 202 Accepted answered a request (HTTP-88 wants a JSON body or an event stream)", channel, ErrNoAnswer))
	case resp.StatusCode/100 != 2:
		body := t.readRest(resp, stop, channel)
		lose(fmt.Errorf("transport: %s: %w: %w", channel, ErrNoAnswer, newStatusError(channel, resp, body)))
	default:
		body := t.readRest(resp, stop, channel)
		lose(fmt.Errorf("transport: %s: %w: %w %q for HTTP %d (HTTP-88 wants application/json or text/event-stream), body: %s",
			channel, ErrNoAnswer, ErrBadContentType, resp.Header.Get("Content-Type"), resp.StatusCode, truncate(string(body), maxStatusBody)))
	}
}
