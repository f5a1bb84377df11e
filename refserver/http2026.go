package refserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// Streamable HTTP under 2026-07-28 (basic/transports/streamable-http):
// stateless. Every POST is one request or notification, served on its own
// by a session of its control scope's realm; there is no session ID, no GET
// stream, no event ID and no resumption (HTTP-107: GET and DELETE get
// 405, Mcp-Session-Id and Last-Event-ID are ignored). The headers must
// mirror the body: MCP-Protocol-Version the envelope's version, Mcp-Method
// the method, Mcp-Name the tool, resource or task (HTTP-96, HTTP-103; 400
// and -32020 otherwise). A request's SSE stream carries only its own
// notifications, then its response, which ends it (HTTP-89, HTTP-91), with
// X-Accel-Buffering: no (HTTP-92). Closing that stream cancels the request
// (CAN-43, CAN-55), whether or not it had anything to write: net/http
// cancels the request's context when the client's connection closes, so
// the server need not wait for a failed write.
//
// A POST is 2026-07-28 when its body carries the per-request envelope or
// its MCP-Protocol-Version header is a modern version; initialize always
// selects 2025-11-25 (on a server that has that era).

// Header names of 2026-07-28 (HTTP-100).
const (
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
)

// post2026 reports whether a POSTed message is served under 2026-07-28.
func (h *HTTPHandler) post2026(r *http.Request, msg *jsonrpc.Message) bool {
	srv := h.srv
	switch {
	case !srv.serves2026():
		return false
	case !srv.serves2025():
		return true
	case msg.Kind == jsonrpc.KindRequest && msg.Method == mcp.MethodInitialize:
		return false
	case slices.Contains(ProtocolVersions2026(), r.Header.Get(transport.HeaderProtocolVersion)):
		return true
	case msg.Kind != jsonrpc.KindRequest && msg.Kind != jsonrpc.KindNotification:
		return false
	}
	params, err := objectParams(msg.Params)
	return err == nil && hasEnvelope(metaObject(params))
}

// other2026 answers a request that is not a POST under 2026-07-28 with
// 405 (HTTP-107, HTTP-80) and reports whether it did: on a server without
// the legacy era, or when the request's MCP-Protocol-Version is modern.
func (h *HTTPHandler) other2026(w http.ResponseWriter, r *http.Request) bool {
	srv := h.srv
	if !srv.serves2026() || (srv.serves2025() && !slices.Contains(ProtocolVersions2026(), r.Header.Get(transport.HeaderProtocolVersion))) {
		return false
	}
	if h.has(FaultGetOn2026) && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
		h.srv.opts.logf("http: 2026-07-28 %s served (fault %s)", r.Method, FaultGetOn2026)
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(http.StatusOK)
		return true
	}
	w.Header().Set("Allow", http.MethodPost)
	httpError2026(w, http.StatusMethodNotAllowed, codeInvalidRequest, "Method Not Allowed: a 2026-07-28 endpoint serves POST only (no GET stream, no session to DELETE)")
	return true
}

// httpError2026 writes an HTTP error with a JSON-RPC error body without
// an id: 2026-07-28 leaves the member out (the schema has no null id).
func httpError2026(w http.ResponseWriter, status, code int, message string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "error": jsonrpc.Error{Code: code, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// rpcErrorBody writes rerr as the JSON-RPC error response to id, with the
// HTTP status.
func rpcErrorBody(w http.ResponseWriter, status int, id jsonrpc.ID, rerr *rpcError) {
	e := &jsonrpc.Error{Code: rerr.code, Message: rerr.message}
	if rerr.data != nil {
		e.Data, _ = json.Marshal(rerr.data)
	}
	frame, _ := jsonrpc.EncodeError(id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame)
}

// statusOf is the HTTP status of a request refused before it was handled:
// 404 for an unknown method (HTTP-81), 400 for the rest (RPC-53, HTTP-97,
// HTTP-104).
func (h *HTTPHandler) statusOf(rerr *rpcError) int {
	if rerr.code == codeMethodNotFound && !h.has(FaultUnknownMethod200) {
		return http.StatusNotFound
	}
	if rerr.code == codeMethodNotFound {
		return http.StatusOK
	}
	return http.StatusBadRequest
}

// serveRequest2026 serves one 2026-07-28 POST.
func (h *HTTPHandler) serveRequest2026(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, body []byte) {
	logf := h.srv.opts.logf
	switch msg.Kind {
	case jsonrpc.KindNotification:
		if msg.Method == mcp.NotificationCancelled {
			// No request of another POST can be named: there is no
			// session, and closing the stream is the cancel (CAN-43).
			logf("http: notifications/cancelled accepted and ignored: over Streamable HTTP 2026-07-28 closing the request's response stream is the cancellation (CAN-43)")
		} else {
			logf("http: notification %s accepted and ignored", strconv.Quote(msg.Method))
		}
		if h.has(FaultJSONBodyForNotification) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		w.WriteHeader(http.StatusAccepted) // HTTP-86
		return
	case jsonrpc.KindRequest:
	default:
		httpError2026(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: a 2026-07-28 client sends no JSON-RPC responses (HTTP-85)")
		return
	}
	params, perr := objectParams(msg.Params)
	if perr != nil {
		rpcErrorBody(w, http.StatusBadRequest, msg.ID, invalidParams("Invalid params: %v", perr))
		return
	}
	if msg.Method == mcp.MethodInitialize {
		// Only a server without the legacy era gets here (LIF-49).
		rpcErrorBody(w, http.StatusBadRequest, msg.ID, h.srv.initializeRefused(params))
		return
	}
	if rerr := checkHeaders(r, msg, params); rerr != nil {
		if !h.has(FaultHeaderMismatchAccepted) {
			logf("http: request %s refused: %s", msg.ID, rerr.message)
			rpcErrorBody(w, http.StatusBadRequest, msg.ID, rerr)
			return
		}
		logf("http: %s; served anyway (fault %s)", rerr.message, FaultHeaderMismatchAccepted)
	}
	scope, rerr := requestScope(metaObject(params))
	if rerr != nil {
		rpcErrorBody(w, http.StatusBadRequest, msg.ID, rerr)
		return
	}
	rlm, err := h.realm2026(scope)
	if err != nil {
		logf("http: request %s refused: %v", msg.ID, err)
		rpcErrorBody(w, http.StatusServiceUnavailable, msg.ID, &rpcError{code: mcp.CodeTooManyRequests, message: "Service Unavailable: " + err.Error()})
		return
	}
	ps := newPostStream(msg.ID, h.has(FaultStreamStaysOpen), logf)
	ss := newSession2026(rlm, h.srv, &output{w: ps}, nil)
	ss.post = ps
	env, rerr := ss.parseEnvelope(params)
	if rerr != nil {
		rpcErrorBody(w, http.StatusBadRequest, msg.ID, rerr)
		return
	}
	ss.stickyTasks(&env)
	if rerr := ss.gate2026(msg.Method, params, env); rerr != nil {
		rpcErrorBody(w, h.statusOf(rerr), msg.ID, rerr)
		return
	}
	rlm.handleMu.Lock()
	herr := ss.handleDecoded(body, msg)
	rlm.handleMu.Unlock()
	if herr != nil {
		logf("http: request %s: %v", msg.ID, herr)
	}
	if h.has(FaultSessionOn2026) {
		if id, err := newSessionID(); err == nil {
			w.Header().Set(transport.HeaderSessionID, id)
		}
	}
	switch msg.Method {
	case mcp.MethodToolsCall, mcp.MethodSubscriptionsListen, mcp.MethodControlAwait:
		h.serveSSE2026(w, r, ss)
	default:
		h.serveJSON2026(w, r, ss)
	}
}

// nameSource is the body member Mcp-Name mirrors for method (HTTP-100,
// TSX-52), or "".
func nameSource(method string) string {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		return "name"
	case mcp.MethodResourcesRead:
		return "uri"
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return "taskId"
	}
	return ""
}

// checkHeaders checks that the standard headers are there and mirror the
// body (HTTP-95, HTTP-96, HTTP-100, HTTP-103): MCP-Protocol-Version the
// envelope's version (when the body has one; a body without it is refused
// by the envelope check), Mcp-Method the method, and Mcp-Name, decoded
// from its Base64 form, the member nameSource names.
func checkHeaders(r *http.Request, msg *jsonrpc.Message, params map[string]json.RawMessage) *rpcError {
	mismatch := func(format string, args ...any) *rpcError {
		return &rpcError{code: mcp.CodeHeaderMismatch, message: "Header mismatch: " + fmt.Sprintf(format, args...)}
	}
	for _, name := range []string{transport.HeaderProtocolVersion, HeaderMethod, HeaderName} {
		for _, v := range r.Header.Values(name) {
			if !headerSafe(v) {
				return mismatch("%s holds characters outside visible ASCII", name)
			}
		}
	}
	hv := r.Header.Get(transport.HeaderProtocolVersion)
	if hv == "" {
		return mismatch("the MCP-Protocol-Version header is required")
	}
	var version string
	if raw, ok := metaObject(params)[mcp.MetaProtocolVersion]; ok && json.Unmarshal(raw, &version) == nil && version != hv {
		return mismatch("MCP-Protocol-Version header value %s does not match body value %s", strconv.Quote(hv), strconv.Quote(version))
	}
	hm := r.Header.Get(HeaderMethod)
	if hm == "" {
		return mismatch("the Mcp-Method header is required")
	}
	if hm != msg.Method {
		return mismatch("Mcp-Method header value %s does not match body value %s", strconv.Quote(hm), strconv.Quote(msg.Method))
	}
	member := nameSource(msg.Method)
	if member == "" {
		return nil
	}
	var want string
	raw, inBody := params[member]
	if inBody && json.Unmarshal(raw, &want) != nil {
		inBody = false
	}
	hn, present := r.Header.Get(HeaderName), len(r.Header.Values(HeaderName)) > 0
	switch {
	case !present && inBody:
		return mismatch("the Mcp-Name header is required for %s", msg.Method)
	case !present:
		return nil // the body lacks it too; the handler refuses the request
	}
	got, err := decodeHeaderValue(hn)
	if err != nil {
		return mismatch("Mcp-Name: %v", err)
	}
	if !inBody || got != want {
		return mismatch("Mcp-Name header value %s does not match body value %s", strconv.Quote(got), strconv.Quote(want))
	}
	return nil
}

// headerSafe reports whether v holds only visible ASCII, spaces and tabs.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// decodeHeaderValue decodes the Base64 sentinel form =?base64?…?= of a
// header value (HTTP-101); a plain value is returned as it is.
func decodeHeaderValue(v string) (string, error) {
	const prefix, suffix = "=?base64?", "?="
	if !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) || len(v) < len(prefix)+len(suffix) {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil || !utf8.Valid(b) {
		return "", fmt.Errorf("the Base64 value is not valid Base64 of UTF-8")
	}
	return string(b), nil
}

// realm2026 returns the realm of scope for this endpoint, taking the
// endpoint's hold on it at first use.
func (h *HTTPHandler) realm2026(scope string) (*realm, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("refserver: HTTP handler closed")
	}
	if r := h.realms2026[scope]; r != nil && !r.isClosed() {
		return r, nil
	}
	r, err := h.srv.realm2026(scope)
	if err != nil {
		return nil, err
	}
	if old := h.realms2026[scope]; old != nil {
		h.srv.releaseRealm(old)
	}
	if h.realms2026 == nil {
		h.realms2026 = map[string]*realm{}
	}
	h.realms2026[scope] = r
	return r, nil
}

// close2026 ends the endpoint's 2026-07-28 work: every subscription is
// torn down (its stream gets Options.ListenTeardown, SUB-6), then, once
// the POSTs have returned, the realms are given back.
func (h *HTTPHandler) close2026(realms []*realm, afterPOSTs func()) {
	for _, r := range realms {
		r.endHTTP()
	}
	afterPOSTs()
	for _, r := range realms {
		h.srv.releaseRealm(r)
	}
}

// serveSSE2026 serves a request's response stream: its own
// notifications, then its response, which ends the stream (HTTP-89,
// HTTP-91). A closed stream cancels the request (streamClosed).
func (h *HTTPHandler) serveSSE2026(w http.ResponseWriter, r *http.Request, ss *session) {
	ps := ss.post
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if !h.has(FaultNoAccelBuffering) {
		w.Header().Set("X-Accel-Buffering", "no") // HTTP-92
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	next, n := 0, 0
	closing := false
	for {
		frames, done, changed := ps.from(next)
		next += len(frames)
		for _, f := range frames {
			n++
			var b strings.Builder
			if h.has(FaultEventIDsOn2026) {
				b.WriteString("id: " + strconv.Itoa(n) + "\n")
			}
			b.WriteString("data: " + string(f) + "\n\n")
			if _, err := w.Write([]byte(b.String())); err != nil {
				ps.close()
				h.streamClosed(ss)
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if done || closing {
			ps.close()
			return
		}
		switch h.waitPOST(r, ss, changed) {
		case postGone:
			return
		case postClosing:
			closing = true // write what came (a subscription's last frames), then end
		}
	}
}

// What waitPOST saw.
const (
	postChanged = iota // the stream has more
	postGone           // the client closed it: the request is cancelled
	postClosing        // the endpoint is closing
)

// waitPOST waits for the POST's stream to change, for the client to close
// it (which cancels the request) or for the endpoint to close.
func (h *HTTPHandler) waitPOST(r *http.Request, ss *session, changed <-chan struct{}) int {
	select {
	case <-changed:
		return postChanged
	case <-r.Context().Done():
		ss.post.close()
		h.streamClosed(ss)
		return postGone
	case <-h.ctx.Done():
		return postClosing
	}
}

// serveJSON2026 answers with the request's response as one JSON body.
func (h *HTTPHandler) serveJSON2026(w http.ResponseWriter, r *http.Request, ss *session) {
	ps := ss.post
	for closing := false; ; {
		resp, changed := ps.response()
		if resp != nil {
			ps.close()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(resp)
			return
		}
		if closing {
			ps.close()
			httpError2026(w, http.StatusServiceUnavailable, codeInternalError, "Service Unavailable: the endpoint is closing")
			return
		}
		switch h.waitPOST(r, ss, changed) {
		case postGone:
			return
		case postClosing:
			closing = true
		}
	}
}

// streamClosed is the client closing a request's response stream: the
// cancellation of that request (CAN-43, CAN-55), unless
// FaultStreamCloseNotCancel. An operation's KEY/disconnected is reached
// once that has been dealt with.
func (h *HTTPHandler) streamClosed(ss *session) {
	ss.mu.Lock()
	var calls []*call
	for _, c := range ss.inflight {
		if c.state == stateRunning {
			calls = append(calls, c)
		}
	}
	ss.mu.Unlock()
	for _, c := range calls {
		switch {
		case h.has(FaultStreamCloseNotCancel) && c.kind != kindListen:
			ss.logf("http: the client closed the stream of request %s; not taken for a cancellation (fault %s)", c.id, FaultStreamCloseNotCancel)
		default:
			ss.acceptCancel(c, c.id, "the client closed the response stream (CAN-43)")
		}
		if c.key != "" && (c.kind == kindSlow || c.kind == kindEffect) {
			ss.mark(c, c.key+"/disconnected", "")
		}
	}
}

// endPost ends a POST's response stream after its last frame, when that
// frame is not the response (a subscription ended by
// notifications/cancelled). It does nothing on stdio.
func (ss *session) endPost() {
	if ss.post != nil {
		ss.post.finish()
	}
}

// postStream is the output of one 2026-07-28 POST: the frames of its
// request, in order, until its response (done) or until the client went
// away (gone), after which frames are dropped.
type postStream struct {
	id       jsonrpc.ID
	keepOpen bool // FaultStreamStaysOpen
	logf     func(format string, args ...any)

	mu      sync.Mutex
	frames  [][]byte
	done    bool
	gone    bool
	changed chan struct{}
}

func newPostStream(id jsonrpc.ID, keepOpen bool, logf func(string, ...any)) *postStream {
	return &postStream{id: id, keepOpen: keepOpen, logf: logf, changed: make(chan struct{})}
}

// Write takes one frame and its newline (session.writeLine).
func (p *postStream) Write(b []byte) (int, error) {
	frame := bytes.Clone(bytes.TrimRight(b, "\n"))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone || p.done {
		p.logf("http: a frame for request %s dropped: its response stream is over: %s", p.id, strconv.Quote(string(truncate(frame, 120))))
		return len(b), nil
	}
	p.frames = append(p.frames, frame)
	if m, err := jsonrpc.Decode(frame); err == nil && m.Kind.IsResponse() && idText(m.ID) == idText(p.id) {
		if p.keepOpen {
			p.logf("http: the response stream of request %s stays open after its response (fault %s)", p.id, FaultStreamStaysOpen)
		} else {
			p.logf("http: the response stream of request %s ends with its response", p.id)
			p.done = true
		}
	}
	p.signalLocked()
	return len(b), nil
}

func (p *postStream) signalLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// finish ends the stream after the frames it has.
func (p *postStream) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.done = true
		p.signalLocked()
	}
}

// close marks the stream gone: the POST is over.
func (p *postStream) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = true
}

// from returns the frames from index i on, whether the stream is done,
// and a channel closed at the next change.
func (p *postStream) from(i int) ([][]byte, bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.frames[min(i, len(p.frames)):]), p.done, p.changed
}

// response returns the response frame, once written.
func (p *postStream) response() ([]byte, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.frames {
		if m, err := jsonrpc.Decode(f); err == nil && m.Kind.IsResponse() {
			return f, nil
		}
	}
	return nil, p.changed
}
