package refserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// HTTPOptions configures the reference server's Streamable HTTP endpoint.
type HTTPOptions struct {
	// AllowedOrigins are Origin values accepted besides loopback origins
	// (http://localhost, http://127.0.0.1, http://[::1], any port).
	AllowedOrigins []string
	// RetryMillis, when positive, is sent as the retry field of every
	// priming event (HTTP-19).
	RetryMillis int
	// MaxSessions bounds the sessions open at once; 0 means
	// DefaultMaxSessions, a negative value means no limit. An initialize
	// over it gets 503 until a session ends (DELETE).
	MaxSessions int
	// BodyTimeout bounds the time a POST body may take to arrive once the
	// handler starts reading it; 0 means DefaultBodyTimeout. A body that
	// is slower gets 400 and its connection is closed.
	BodyTimeout time.Duration
	// MaxRetainedStreams bounds the finished request streams a session
	// keeps for resumption (each with its events); 0 means
	// DefaultMaxRetainedStreams, a negative value means no limit. Past
	// it the oldest finished, detached stream is forgotten, and a resume
	// from one of its event IDs gets 400 like any unknown ID.
	MaxRetainedStreams int
}

// DefaultMaxRetainedStreams is the default of
// HTTPOptions.MaxRetainedStreams.
const DefaultMaxRetainedStreams = 1000

// DefaultMaxSessions is the default of HTTPOptions.MaxSessions.
const DefaultMaxSessions = 1024

// DefaultBodyTimeout is the default of HTTPOptions.BodyTimeout.
const DefaultBodyTimeout = 30 * time.Second

// HTTPHandler serves the reference server over Streamable HTTP: stateless
// 2026-07-28 POSTs (http2026.go) and, as described here, 2025-11-25
// sessions, with one endpoint for POST, GET and DELETE. Each MCP session
// (created by a POSTed initialize, named by a random MCP-Session-Id) is
// one session of the same message handling that Serve drives over stdio,
// so checkpoints, counters and faults work unchanged. Its output is routed
// to streams: a response and the progress and log messages of a request
// go to that request's POST stream, anything else to the GET stream.
//
// Every stream keeps its events, so that a client that lost a stream can
// resume it with GET and Last-Event-ID; a disconnection never cancels the
// work (HTTP-25).
type HTTPHandler struct {
	srv  *Server
	opts HTTPOptions
	ctx  context.Context
	stop context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession
	latest   *httpSession
	closed   bool
	wg       sync.WaitGroup
	// realms2026 are the realms the endpoint's 2026-07-28 POSTs used, by
	// control scope; the endpoint holds them until Close (http2026.go).
	realms2026 map[string]*realm
	// dead is set once the endpoint died of bad input
	// (FaultDieOnMalformedInput, faults_robust.go).
	dead atomic.Bool
}

// HTTPHandler returns the Streamable HTTP endpoint of s. Close it to end
// every session.
func (s *Server) HTTPHandler(opts HTTPOptions) *HTTPHandler {
	ctx, stop := context.WithCancel(context.Background())
	return &HTTPHandler{srv: s, opts: opts, ctx: ctx, stop: stop, sessions: map[string]*httpSession{}}
}

// Close ends every session, as DELETE would, tears down the 2026-07-28
// subscriptions, and waits for their work to stop.
func (h *HTTPHandler) Close() {
	h.mu.Lock()
	h.closed = true
	all := make([]*httpSession, 0, len(h.sessions))
	for _, hs := range h.sessions {
		all = append(all, hs)
	}
	h.sessions = map[string]*httpSession{}
	h.latest = nil
	realms := make([]*realm, 0, len(h.realms2026))
	for _, r := range h.realms2026 {
		realms = append(realms, r)
	}
	h.realms2026 = nil
	h.mu.Unlock()
	for _, hs := range all {
		hs.end()
	}
	h.close2026(realms, func() {
		h.stop()
		h.wg.Wait()
	})
}

// Sessions is the number of live sessions.
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// hevent is one SSE event of a stream.
type hevent struct {
	id   string
	seq  int // session-wide order
	data []byte
	// retry is the retry field in milliseconds, 0 for none.
	retry int
}

// hstream is one SSE stream, live or detached, with every event it ever
// carried (the event store).
type hstream struct {
	n      int
	reqKey string // "" for the GET stream
	// reqText is the request ID without JSON quoting.
	reqText string
	// untilEnd: the stream ends when its operation reaches KEY/end (after
	// its last frame), not at its response, so that whatever the
	// operation writes after a cancel or a response stays on it.
	untilEnd bool
	// endKey is the operation key whose KEY/end untilEnd waits for, and
	// unwatch stops that wait (settle).
	endKey  string
	unwatch chan struct{}
	events  []hevent
	ended   bool
	// cancelled is the request a POSTed cancel named while the stream was
	// open, and faultSent whether FaultResponseAfterCancelOnStream's
	// response was written for it: whichever ends the stream first, the
	// cancel's handling or the operation's KEY/end, writes it
	// (faultResponseLocked).
	cancelled *call
	faultSent bool
	// gen counts attachments; a connection serves the stream only while
	// its generation is current, so a message is never sent twice.
	gen int
	// attached is true while a connection serves the stream.
	attached bool
	// noIDs: the stream's events carry no event ID
	// (FaultUnresumableCancelOnDisconnect), so it cannot be resumed.
	noIDs bool
}

// httpSession is one MCP session over HTTP.
type httpSession struct {
	h  *HTTPHandler
	id string
	ss *session
	// handleMu serialises message handling, as Serve's single reader does.
	handleMu sync.Mutex

	mu      sync.Mutex
	changed chan struct{}
	streams []*hstream
	// opened counts the streams ever opened: the next stream's number.
	opened   int
	byReq    map[string]*hstream
	byToken  map[string]*hstream
	logCalls []*hstream
	get      *hstream
	eventSeq int
	perID    map[int]int
	ended    bool
	// related maps an output frame about to be written to the request
	// keys it belongs to (notifyFor).
	related map[string][]string
	// capture, while a notification is handled, collects the frames
	// that answer it (they belong in its POST's response body).
	capture *[][]byte
}

// errTooManySessions refuses an initialize over HTTPOptions.MaxSessions.
var errTooManySessions = errors.New("too many sessions")

func newSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("refserver: session ID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil // visible ASCII (HTTP-47, HTTP-48)
}

// has reports whether the server runs with fault f.
func (h *HTTPHandler) has(f Fault) bool { return h.srv.has(f) }

func (h *HTTPHandler) newSession() (*httpSession, error) {
	id, err := newSessionID()
	if err != nil {
		return nil, err
	}
	if h.has(FaultSessionIDInvisible) {
		id = "session " + id + " \u00e9" // legal in a header, not in a session ID
	}
	hs := &httpSession{h: h, id: id, changed: make(chan struct{}), byReq: map[string]*hstream{}, byToken: map[string]*hstream{}, perID: map[int]int{}, related: map[string][]string{}}
	hs.ss = newSession(h.ctx, h.srv, routerWriter{hs})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		hs.ss.cancel()
		return nil, errors.New("refserver: HTTP handler closed")
	}
	limit := h.opts.MaxSessions
	if limit == 0 {
		limit = DefaultMaxSessions
	}
	if limit > 0 && len(h.sessions) >= limit {
		hs.ss.cancel() // its context must not outlive the refusal
		return nil, fmt.Errorf("%w: %d sessions open (limit %d); end one with DELETE", errTooManySessions, len(h.sessions), limit)
	}
	h.sessions[id] = hs
	h.latest = hs
	return hs, nil
}

// end stops the session's work and every stream.
func (hs *httpSession) end() {
	hs.mu.Lock()
	if hs.ended {
		hs.mu.Unlock()
		return
	}
	hs.ended = true
	hs.signal()
	hs.mu.Unlock()
	hs.ss.abort()
	hs.ss.cancel()
	hs.ss.wg.Wait()
}

// signal wakes every connection of the session. Caller holds hs.mu.
func (hs *httpSession) signal() {
	close(hs.changed)
	hs.changed = make(chan struct{})
}

// routerWriter is the session's output: each Write is one frame plus a
// newline (session.writeLine), routed to the stream it belongs to.
type routerWriter struct{ hs *httpSession }

func (rw routerWriter) Write(p []byte) (int, error) {
	rw.hs.route(bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// route appends one output frame to its stream.
func (hs *httpSession) route(frame []byte) {
	msg, err := jsonrpc.Decode(frame)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	var st *hstream
	isResponse := false
	if keys := hs.related[string(frame)]; len(keys) > 0 {
		st = hs.byReq[keys[0]]
		if len(keys) == 1 {
			delete(hs.related, string(frame))
		} else {
			hs.related[string(frame)] = keys[1:]
		}
	}
	if st == nil && err == nil {
		switch {
		case msg.Kind.IsResponse() && msg.ID.IsValid():
			isResponse = true
			st = hs.byReq[msg.ID.Key()]
			if st == nil {
				// An ID echoed with another type (a fault) still
				// belongs to the request whose ID has the same text.
				for _, s := range hs.byReq {
					if s.reqText == idText(msg.ID) {
						st = s
					}
				}
			}
		case msg.Method == mcp.NotificationProgress:
			var p struct {
				Token json.RawMessage `json:"progressToken"`
			}
			if json.Unmarshal(msg.Params, &p) == nil {
				if tok, terr := jsonrpc.ParseToken(p.Token); terr == nil {
					st = hs.byToken[tok.Key()]
					if st == nil {
						// A token the wrong-token fault mangled (type
						// flipped, "-wrong" added) still comes from the
						// call it names: the fault breaks the token, not
						// the stream it travels on.
						text := strings.TrimSuffix(tokenText(tok), "-wrong")
						for k, s := range hs.byToken {
							if tokenKeyText(k) == text {
								st = s
							}
						}
					}
				}
			}
			if st == nil {
				// Progress naming no token of ours (a fault) comes from
				// the latest call still running.
				st = hs.latestOpen()
			}
		case msg.Method == mcp.NotificationMessage:
			for _, s := range hs.logCalls {
				if !s.ended {
					st = s
					break
				}
			}
		}
	}
	if err == nil && msg.Method == mcp.NotificationProgress && hs.h.has(FaultProgressOnGETStream) && hs.get != nil && hs.get.attached && !hs.get.ended {
		st = hs.get
	}
	if (st == nil || st.ended) && hs.capture != nil && !isResponse {
		// An answer to the notification being handled goes in the body
		// of its POST's response.
		*hs.capture = append(*hs.capture, bytes.Clone(frame))
		return
	}
	if err == nil && msg.Kind.IsResponse() && !msg.ID.IsValid() && hs.capture != nil {
		*hs.capture = append(*hs.capture, bytes.Clone(frame))
		return
	}
	if st == nil || st.ended {
		// Anything unrelated to an open request goes to the GET stream.
		st = hs.get
	}
	if st == nil || st.ended {
		hs.ss.logf("http: no stream for output frame %s; dropped", strconv.Quote(string(truncate(frame, 120))))
		return
	}
	hs.appendEvent(st, frame)
	if isResponse && st.reqKey != "" && !st.untilEnd {
		hs.endStream(st)
	}
}

// latestOpen is the most recent request stream that has not ended.
// Caller holds hs.mu.
func (hs *httpSession) latestOpen() *hstream {
	for i := len(hs.streams) - 1; i >= 0; i-- {
		if s := hs.streams[i]; s.reqKey != "" && !s.ended {
			return s
		}
	}
	return nil
}

// tokenKeyText is the text of a token key ("s:7", "n:7") without its
// type prefix.
func tokenKeyText(k string) string {
	if _, text, ok := strings.Cut(k, ":"); ok {
		return text
	}
	return k
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// appendEvent stores one event with a session-unique ID (HTTP-40) that
// names its stream (HTTP-41), or none on a stream without IDs. Caller
// holds hs.mu.
func (hs *httpSession) appendEvent(st *hstream, data []byte) {
	hs.eventSeq++
	id := fmt.Sprintf("%d-%d", st.n, hs.eventSeq)
	switch {
	case st.noIDs:
		id = ""
	case hs.h.has(FaultDuplicateEventIDs):
		hs.perID[st.n]++
		id = strconv.Itoa(hs.perID[st.n])
	}
	st.events = append(st.events, hevent{id: id, seq: hs.eventSeq, data: bytes.Clone(data)})
	hs.signal()
}

// endStream marks a request's stream finished. Caller holds hs.mu.
func (hs *httpSession) endStream(st *hstream) {
	st.ended = true
	if hs.byReq[st.reqKey] == st {
		delete(hs.byReq, st.reqKey)
	}
	hs.signal()
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A request counts in wg only if it came before Close: wg.Add never
	// runs concurrently with Close's wg.Wait (the race detector's rule).
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		httpError(w, http.StatusServiceUnavailable, codeInternalError, "Service Unavailable: the endpoint is closed")
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()
	if !h.originAllowed(r.Header.Get("Origin")) {
		h.srv.opts.logf("http: %s with Origin %s refused (HTTP-3)", r.Method, strconv.Quote(r.Header.Get("Origin")))
		httpError(w, http.StatusForbidden, codeInvalidRequest, "Forbidden: Origin not allowed")
		return
	}
	if h.robustHTTP(w) {
		return
	}
	if r.Method == http.MethodPost {
		body, msg, ok := h.readPOST(w, r)
		if !ok {
			return
		}
		if h.post2026(r, msg) {
			h.serveRequest2026(w, r, msg, body) // 2026-07-28 (http2026.go)
			return
		}
		if !h.versionHeaderOK(w, r) {
			return
		}
		h.post(w, r, body, msg)
		return
	}
	if h.other2026(w, r) {
		return // GET, DELETE and the rest under 2026-07-28: 405 (http2026.go)
	}
	if !h.versionHeaderOK(w, r) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.getStream(w, r)
	case http.MethodDelete:
		hs := h.lookup(w, r)
		if hs == nil {
			return
		}
		if h.has(FaultNoSessionCheck) {
			// A server that checks no session does not end one either.
			w.WriteHeader(http.StatusOK)
			return
		}
		h.mu.Lock()
		delete(h.sessions, hs.id)
		if h.latest == hs {
			h.latest = nil
		}
		h.mu.Unlock()
		hs.end()
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, codeInvalidRequest, "Method Not Allowed")
	}
}

// versionHeaderOK refuses a 2025-11-25 message whose MCP-Protocol-Version
// header names a version this era does not support (HTTP-59).
func (h *HTTPHandler) versionHeaderOK(w http.ResponseWriter, r *http.Request) bool {
	if v := r.Header.Get(transport.HeaderProtocolVersion); v != "" && !supported(v) && !h.has(FaultNoProtocolVersionCheck) {
		httpError(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+strconv.Quote(v))
		return false
	}
	return true
}

func (o Options) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(o.Stderr, format+"\n", args...)
}

func supported(v string) bool {
	for _, s := range SupportedProtocolVersions() {
		if s == v {
			return true
		}
	}
	return false
}

// originAllowed accepts an absent Origin, loopback origins and the
// configured ones (HTTP-2, HTTP-3).
func (h *HTTPHandler) originAllowed(origin string) bool {
	if origin == "" || h.has(FaultNoOriginCheck) {
		return true
	}
	for _, o := range h.opts.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpError writes an HTTP error with a JSON-RPC error body without id
// (HTTP-4, HTTP-13).
func httpError(w http.ResponseWriter, status, code int, message string) {
	frame, _ := jsonrpc.EncodeError(jsonrpc.ID{}, &jsonrpc.Error{Code: code, Message: message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame)
}

// lookup finds the request's session: 400 without a session ID (HTTP-51),
// 404 for an unknown or ended one (HTTP-52). Under FaultNoSessionCheck
// the latest session serves any request.
func (h *HTTPHandler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(transport.HeaderSessionID)
	h.mu.Lock()
	hs := h.sessions[id]
	if hs == nil && h.has(FaultNoSessionCheck) {
		hs = h.latest
	}
	h.mu.Unlock()
	switch {
	case hs != nil:
		return hs
	case id == "":
		httpError(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: MCP-Session-Id header required")
	default:
		httpError(w, http.StatusNotFound, codeInvalidRequest, "Not Found: unknown or terminated session")
	}
	return nil
}

// streamed says whether a request is answered with an SSE stream. Requests
// answered at once get a JSON body, so that clients meet both (HTTP-14,
// HTTP-15); anything that may block or send progress gets a stream.
func streamed(method string) bool {
	switch method {
	case mcp.MethodInitialize, mcp.MethodPing, mcp.MethodToolsList, mcp.MethodLoggingSetLevel, mcp.MethodControlRelease, mcp.MethodControlCounters:
		return false
	}
	return true
}

// readPOST reads and decodes a POST body, a single JSON-RPC message
// (HTTP-10), within the size and time limits; ok is false when it
// answered the POST itself.
func (h *HTTPHandler) readPOST(w http.ResponseWriter, r *http.Request) (body []byte, msg *jsonrpc.Message, ok bool) {
	limit := h.srv.opts.MaxFrame
	if r.ContentLength > int64(limit) {
		h.srv.opts.logf("http: POST body of %d bytes refused, limit %d", r.ContentLength, limit)
		httpError(w, http.StatusRequestEntityTooLarge, codeParseError, "Request Entity Too Large: the body exceeds "+strconv.Itoa(limit)+" bytes")
		return nil, nil, false
	}
	// A slow body must not hold the handler: the read has a deadline
	// (ignored where the ResponseWriter cannot set one).
	rc := http.NewResponseController(w)
	timeout := h.opts.BodyTimeout
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	_ = rc.SetReadDeadline(time.Now().Add(timeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		h.srv.opts.logf("http: reading a POST body: %v", err)
		w.Header().Set("Connection", "close")
		httpError(w, http.StatusBadRequest, codeParseError, "Bad Request: cannot read the body")
		return nil, nil, false
	}
	if len(body) > limit {
		h.srv.opts.logf("http: POST body over %d bytes refused", limit)
		httpError(w, http.StatusRequestEntityTooLarge, codeParseError, "Request Entity Too Large: the body exceeds "+strconv.Itoa(limit)+" bytes")
		return nil, nil, false
	}
	msg, derr := jsonrpc.Decode(body)
	if derr != nil {
		var de *jsonrpc.DecodeError
		code := codeInvalidRequest
		if errors.As(derr, &de) && (de.Class == jsonrpc.ClassParse || de.Class == jsonrpc.ClassInvalidUTF8) {
			code = codeParseError
		}
		h.malformedPOST(w, code, "Bad Request: not a single JSON-RPC message (HTTP-10)")
		return nil, nil, false
	}
	return body, msg, true
}

// post serves a 2025-11-25 POST.
func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request, body []byte, msg *jsonrpc.Message) {
	var err error
	var hs *httpSession
	if msg.Kind == jsonrpc.KindRequest && msg.Method == mcp.MethodInitialize && r.Header.Get(transport.HeaderSessionID) == "" {
		if hs, err = h.newSession(); err != nil {
			code := codeInternalError
			if errors.Is(err, errTooManySessions) {
				code = mcp.CodeTooManyRequests
				w.Header().Set("Retry-After", "1")
			}
			h.srv.opts.logf("http: initialize refused: %v", err)
			httpError(w, http.StatusServiceUnavailable, code, "Service Unavailable: "+err.Error())
			return
		}
		w.Header().Set(transport.HeaderSessionID, hs.id)
	} else if hs = h.lookup(w, r); hs == nil {
		return
	}
	if msg.Kind == jsonrpc.KindRequest && msg.ID == jsonrpc.IntID(0) && h.has(FaultIDZeroAbsent) {
		// The fault takes the request for a notification, so over HTTP
		// it is accepted like one.
		hs.handle(body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if msg.Kind != jsonrpc.KindRequest {
		answers := hs.notification(msg, body)
		if len(answers) > 0 {
			// The session answered a notification (a fault): the answer
			// is the POST's response.
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answers[0])
			return
		}
		if h.has(FaultJSONBodyForNotification) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		w.WriteHeader(http.StatusAccepted) // HTTP-11
		return
	}
	// Admission and handling under one handleMu: no other request can
	// be started in between, so an admitted request is never refused by
	// the session, and a refused one opens no stream (nothing waits for
	// its end).
	st, rerr := hs.admitAndHandle(msg, body)
	if rerr != nil && rerr.code == mcp.CodeTooManyRequests && hs.ss.answersPingOverLimit(msg.Method) {
		frame, _ := jsonrpc.EncodeResult(hs.ss.respID(msg.ID), struct{}{}) // PNG-1
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(frame)
		return
	}
	if rerr != nil {
		hs.ss.logf("http: request %s (%s) refused: %s", msg.ID, strconv.Quote(msg.Method), rerr.message)
		var data json.RawMessage
		if rerr.code != codeInvalidRequest {
			data, _ = json.Marshal(map[string]int{"limit": h.srv.opts.MaxInFlight})
		}
		frame, _ := jsonrpc.EncodeError(hs.ss.respID(msg.ID), &jsonrpc.Error{Code: rerr.code, Message: rerr.message, Data: data})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(frame)
		return
	}
	if streamed(msg.Method) {
		hs.serveSSE(w, r, st, 0)
	} else {
		hs.serveJSON(w, r, st)
	}
}

// admitAndHandle admits a request, opens its stream and handles it, all
// under handleMu (released even if something panics). A refused request
// opens nothing and is not handled.
func (hs *httpSession) admitAndHandle(msg *jsonrpc.Message, body []byte) (*hstream, *rpcError) {
	hs.handleMu.Lock()
	defer hs.handleMu.Unlock()
	if rerr := hs.ss.admit(); rerr != nil {
		return nil, rerr
	}
	if rerr := hs.duplicateRefusal(msg.ID); rerr != nil {
		return nil, rerr
	}
	st := hs.openRequest(msg, streamed(msg.Method))
	hs.handleLocked(body)
	hs.settle(st, msg.ID)
	return st, nil
}

// settle runs once a request was handled. A tools/call whose stream waits
// for KEY/end but that started no operation or task under KEY (an unknown
// tool, bad arguments, a key already taken) will never reach it: its
// stream ends with its response, like any other, and the wait stops.
// Without this, such a POST stayed open, and its watcher alive, until the
// session ended.
func (hs *httpSession) settle(st *hstream, id jsonrpc.ID) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !st.untilEnd || st.ended {
		return
	}
	ss := hs.ss
	ss.mu.Lock()
	started := false
	if c := ss.ops[st.endKey]; c != nil && c.id == id {
		started = true
	}
	ss.tasks.mu.Lock()
	if t := ss.tasks.byKey[st.endKey]; t != nil && t.reqID == id {
		started = true
	}
	ss.tasks.mu.Unlock()
	ss.mu.Unlock()
	if started {
		return
	}
	st.untilEnd = false
	close(st.unwatch)
	for _, e := range st.events {
		if m, err := jsonrpc.Decode(e.data); err == nil && m.Kind.IsResponse() {
			hs.endStream(st) // the response came first
			return
		}
	}
}

// openRequest creates the request's stream before the request is
// handled, so that no output can miss it.
// A streamed request's stream starts with the priming event: an event ID
// and empty data (HTTP-16), with the configured retry (HTTP-19).
func (hs *httpSession) openRequest(msg *jsonrpc.Message, prime bool) *hstream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.forgetRetired()
	hs.opened++
	st := &hstream{n: hs.opened, reqKey: msg.ID.Key(), reqText: idText(msg.ID)}
	hs.streams = append(hs.streams, st)
	hs.byReq[st.reqKey] = st
	// A stream without event IDs has no priming event either: there is
	// no ID to prime the client with.
	st.noIDs = prime && hs.h.has(FaultUnresumableCancelOnDisconnect)
	if prime && !st.noIDs && !hs.h.has(FaultNoPrimingEvent) {
		hs.appendEvent(st, nil)
		st.events[0].retry = hs.h.opts.RetryMillis
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Key *string `json:"key"`
		} `json:"arguments"`
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(msg.Params, &p) == nil {
		if msg.Method == mcp.MethodToolsCall && p.Arguments.Key != nil {
			hs.watchEnd(st, *p.Arguments.Key+"/end")
		}
		if tok, err := jsonrpc.ParseToken(p.Meta.Token); err == nil {
			hs.byToken[tok.Key()] = st
		}
		if msg.Method == mcp.MethodToolsCall && p.Name == "log" {
			hs.logCalls = append(hs.logCalls, st)
		}
	}
	return st
}

// forgetRetired drops the oldest finished, detached request streams
// beyond HTTPOptions.MaxRetainedStreams, with their events and every
// reference to them, so that a long session's memory follows the work in
// flight, not all the work ever done. Caller holds hs.mu.
func (hs *httpSession) forgetRetired() {
	limit := hs.h.opts.MaxRetainedStreams
	if limit == 0 {
		limit = DefaultMaxRetainedStreams
	}
	if limit < 0 {
		return
	}
	retired := func(s *hstream) bool { return s != hs.get && s.ended && !s.attached }
	over := -limit
	for _, s := range hs.streams {
		if retired(s) {
			over++
		}
	}
	if over <= 0 {
		return
	}
	forgotten := make(map[*hstream]bool, over)
	kept := hs.streams[:0]
	for _, s := range hs.streams {
		if len(forgotten) < over && retired(s) {
			forgotten[s] = true
			continue
		}
		kept = append(kept, s)
	}
	clear(hs.streams[len(kept):])
	hs.streams = kept
	for k, s := range hs.byToken {
		if forgotten[s] {
			delete(hs.byToken, k)
		}
	}
	for k, s := range hs.byReq {
		if forgotten[s] {
			delete(hs.byReq, k)
		}
	}
	hs.logCalls = slices.DeleteFunc(hs.logCalls, func(s *hstream) bool { return forgotten[s] })
}

// watchEnd makes st end when the checkpoint end is reached, unless it
// already was (a key used twice), or the key is in use on a server that
// hides the control extension: the request's operation then runs under
// another key (freeKey), and KEY/end is the other operation's, which
// would end st before its response if reached first. Caller holds hs.mu.
func (hs *httpSession) watchEnd(st *hstream, end string) {
	ss := hs.ss
	key := strings.TrimSuffix(end, "/end")
	ss.mu.Lock()
	cp := ss.checkpointLocked(end)
	reached := cp.reached
	taken := ss.srv.opts.HideControl && ss.ops[key] != nil
	ss.tasks.mu.Lock()
	taken = taken || ss.srv.opts.HideControl && ss.tasks.byKey[key] != nil
	ss.tasks.mu.Unlock()
	ss.mu.Unlock()
	if reached || taken {
		return
	}
	st.untilEnd = true
	st.endKey = strings.TrimSuffix(end, "/end")
	st.unwatch = make(chan struct{})
	hs.ss.spawnAux(func() {
		select {
		case <-cp.reachedCh:
		case <-hs.ss.ctx.Done():
		case <-st.unwatch:
			return
		}
		hs.mu.Lock()
		hs.faultResponseLocked(st)
		hs.endStream(st)
		hs.mu.Unlock()
	})
}

// handle runs one message through the session, in arrival order.
func (hs *httpSession) handle(raw []byte) {
	hs.handleMu.Lock()
	defer hs.handleMu.Unlock()
	hs.handleLocked(raw)
}

// handleLocked is handle with handleMu held.
func (hs *httpSession) handleLocked(raw []byte) {
	if err := hs.ss.handleFrame(raw); err != nil {
		hs.ss.logf("http: session ends: %v", err)
		go hs.h.endSession(hs)
	}
}

func (h *HTTPHandler) endSession(hs *httpSession) {
	h.mu.Lock()
	if h.sessions[hs.id] == hs {
		delete(h.sessions, hs.id)
	}
	h.mu.Unlock()
	hs.end()
}

// notification handles a POSTed notification or response. An accepted
// cancel ends the cancelled request's stream without a response.
func (hs *httpSession) notification(msg *jsonrpc.Message, raw []byte) (answers [][]byte) {
	hs.handleMu.Lock()
	defer hs.handleMu.Unlock()
	hs.mu.Lock()
	hs.capture = &answers
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		hs.capture = nil
		hs.mu.Unlock()
	}()
	var target *call
	var key string
	if msg.Method == mcp.NotificationCancelled {
		if id, _, ok := parseCancel(msg.Params); ok {
			key = id.Key()
			hs.ss.mu.Lock()
			target = hs.ss.inflight[hs.ss.idKey(id)]
			hs.ss.mu.Unlock()
		}
	}
	if target != nil {
		hs.mu.Lock()
		if st := hs.byReq[key]; st != nil && !st.ended {
			st.cancelled = target
		}
		hs.mu.Unlock()
	}
	hs.handleLocked(raw)
	if target == nil {
		return answers
	}
	hs.ss.mu.Lock()
	cancelled := target.state == stateCancelled
	hs.ss.mu.Unlock()
	if !cancelled {
		return answers
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	st := hs.byReq[key]
	if st == nil || st.ended {
		return answers
	}
	hs.faultResponseLocked(st)
	if !st.untilEnd {
		hs.endStream(st)
	}
	return answers
}

// faultResponseLocked writes, under FaultResponseAfterCancelOnStream, the
// error response of the request whose accepted cancel st saw, once. The
// operation of a stream that waits for KEY/end may reach it as soon as
// the cancel is accepted, so both the cancel's handling and that end call
// it, and the first writes. Caller holds hs.mu.
func (hs *httpSession) faultResponseLocked(st *hstream) {
	c := st.cancelled
	if c == nil || st.faultSent || st.ended {
		return
	}
	hs.ss.mu.Lock()
	cancelled := c.state == stateCancelled
	hs.ss.mu.Unlock()
	if !cancelled || !hs.h.has(FaultResponseAfterCancelOnStream) {
		return
	}
	st.faultSent = true
	frame, _ := jsonrpc.EncodeError(c.id, &jsonrpc.Error{Code: codeInternalError, Message: "Request cancelled"})
	hs.appendEvent(st, frame)
}

// serveJSON answers with the request's response as one JSON body.
func (hs *httpSession) serveJSON(w http.ResponseWriter, r *http.Request, st *hstream) {
	for {
		hs.mu.Lock()
		ended, gone := st.ended, hs.ended
		ch := hs.changed
		var resp []byte
		for _, e := range st.events {
			if m, err := jsonrpc.Decode(e.data); err == nil && m.Kind.IsResponse() {
				resp = e.data
			}
		}
		hs.mu.Unlock()
		if ended || gone {
			if resp == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(resp)
			return
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			hs.disconnected(st)
			return
		}
	}
}

// serveSSE serves st from event index from on, until the stream ends, the session ends or the
// client goes away. A newer attachment of the same stream takes over.
func (hs *httpSession) serveSSE(w http.ResponseWriter, r *http.Request, st *hstream, from int) {
	hs.mu.Lock()
	st.gen++
	gen := st.gen
	st.attached = true
	hs.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	next := from
	for {
		hs.mu.Lock()
		if st.gen != gen {
			hs.mu.Unlock()
			return
		}
		pending := append([]hevent(nil), st.events[min(next, len(st.events)):]...)
		next = len(st.events)
		ended, gone := st.ended, hs.ended
		ch := hs.changed
		hs.mu.Unlock()
		for _, e := range pending {
			if err := writeEvent(w, e); err != nil {
				hs.disconnected(st)
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if ended || gone {
			hs.detach(st, gen)
			return
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			hs.detach(st, gen)
			hs.disconnected(st)
			return
		}
	}
}

// writeEvent writes one event, without an id field when it has no ID;
// data lines are split so that a frame with newlines stays one event.
func writeEvent(w io.Writer, e hevent) error {
	var b strings.Builder
	if e.id != "" {
		b.WriteString("id: " + e.id + "\n")
	}
	if e.retry > 0 {
		b.WriteString("retry: " + strconv.Itoa(e.retry) + "\n")
	}
	for _, line := range strings.Split(string(e.data), "\n") {
		b.WriteString("data: " + strings.TrimSuffix(line, "\r") + "\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (hs *httpSession) detach(st *hstream, gen int) {
	hs.mu.Lock()
	if st.gen == gen {
		st.attached = false
	}
	hs.mu.Unlock()
}

// disconnected is a client going away from a request's stream. It is not
// a cancellation (HTTP-25), unless FaultCancelOnDisconnect or, on a
// stream without event IDs, FaultUnresumableCancelOnDisconnect.
func (hs *httpSession) disconnected(st *hstream) {
	hs.mu.Lock()
	ended, key, noIDs := st.ended, st.reqKey, st.noIDs
	hs.mu.Unlock()
	if ended || key == "" {
		return
	}
	hs.ss.mu.Lock()
	var c *call
	for _, in := range hs.ss.inflight {
		if in.id.Key() == key {
			c = in
		}
	}
	hs.ss.mu.Unlock()
	if c == nil || c.key == "" {
		return
	}
	// KEY/disconnected is reached once the disconnection has been dealt
	// with: a checker awaits it, then reads the operation's state, instead
	// of watching a window for a cancellation that must not come.
	defer hs.ss.mark(c, c.key+"/disconnected", "")
	hs.ss.logf("http: client disconnected from stream %d; the request goes on", st.n)
	var fault Fault
	switch {
	case hs.h.has(FaultCancelOnDisconnect):
		fault = FaultCancelOnDisconnect
	case noIDs: // asked when the stream opened
		fault = FaultUnresumableCancelOnDisconnect
	default:
		return
	}
	hs.ss.logf("http: disconnection taken for a cancellation (fault %s)", fault)
	frame, _ := jsonrpc.EncodeNotification(mcp.NotificationCancelled, map[string]any{"requestId": c.id, "reason": "client disconnected"})
	msg, _ := jsonrpc.Decode(frame)
	_ = hs.notification(msg, frame)
}

// getStream serves GET: a resume when Last-Event-ID is present (HTTP-42
// to HTTP-45), otherwise the session's own stream (HTTP-30, HTTP-31).
func (h *HTTPHandler) getStream(w http.ResponseWriter, r *http.Request) {
	if a := r.Header.Get("Accept"); a != "" && !strings.Contains(a, "text/event-stream") && !strings.Contains(a, "*/*") {
		httpError(w, http.StatusNotAcceptable, codeInvalidRequest, "Not Acceptable: GET needs Accept: text/event-stream")
		return
	}
	hs := h.lookup(w, r)
	if hs == nil {
		return
	}
	last := r.Header.Get(transport.HeaderLastEventID)
	if last == "" {
		hs.mu.Lock()
		if hs.get != nil && hs.get.attached && !hs.get.ended {
			hs.mu.Unlock()
			httpError(w, http.StatusConflict, codeInvalidRequest, "Conflict: the session's GET stream is already open")
			return
		}
		if hs.get == nil {
			hs.opened++
			hs.get = &hstream{n: hs.opened}
			hs.streams = append(hs.streams, hs.get)
		}
		st := hs.get
		from := len(st.events)
		hs.mu.Unlock()
		hs.serveSSE(w, r, st, from)
		return
	}
	hs.mu.Lock()
	var st *hstream
	idx := -1
	var seq int
	for _, s := range hs.streams {
		for i, e := range s.events {
			if e.id == last && st == nil {
				st, idx, seq = s, i, e.seq
			}
		}
	}
	if st == nil {
		hs.mu.Unlock()
		httpError(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: unknown Last-Event-ID "+strconv.Quote(last))
		return
	}
	from := idx + 1
	if h.has(FaultLoseEventsOnResume) {
		from = len(st.events)
	}
	var foreign []hevent
	if h.has(FaultReplayCrossesStreams) {
		for _, s := range hs.streams {
			if s == st {
				continue
			}
			for _, e := range s.events {
				if e.seq > seq && len(e.data) > 0 {
					foreign = append(foreign, e)
				}
			}
		}
	}
	hs.mu.Unlock()
	hs.ss.logf("http: resuming stream %d after event %s", st.n, last)
	if len(foreign) > 0 {
		// The fault writes other streams' events first, then the resumed
		// stream's own.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range foreign {
			_ = writeEvent(w, e)
		}
		hs.serveSSEAfterHeaders(w, r, st, from)
		return
	}
	hs.serveSSE(w, r, st, from)
}

// serveSSEAfterHeaders is serveSSE for a response whose headers are out.
func (hs *httpSession) serveSSEAfterHeaders(w http.ResponseWriter, r *http.Request, st *hstream, from int) {
	hs.serveSSE(headerSent{w}, r, st, from)
}

// headerSent ignores a second WriteHeader.
type headerSent struct{ http.ResponseWriter }

func (headerSent) WriteHeader(int) {}
func (h headerSent) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// notifyFor writes a notification that belongs to the request id: over
// HTTP it travels on that request's stream (HTTP-22), whatever token it
// carries; over stdio it is notify.
func (ss *session) notifyFor(id jsonrpc.ID, method string, params any) {
	frame, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		ss.logf("cannot encode %s: %v", method, err)
		return
	}
	if rw, ok := ss.w.(routerWriter); ok {
		rw.hs.relate(frame, id)
	}
	ss.writeLine(frame)
}

// relate records that the next output frame with exactly these bytes
// belongs to the request id.
func (hs *httpSession) relate(frame []byte, id jsonrpc.ID) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.related[string(frame)] = append(hs.related[string(frame)], id.Key())
}
