package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// StepDelete is the teardown rung of a Streamable HTTP connection: the
// session was ended with DELETE (HTTP-54), or there was none to end.
const StepDelete Step = "delete"

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderLastEventID     = "Last-Event-Id"
)

// Defaults of the HTTP transport's bounds.
const (
	// DefaultMaxBody bounds a JSON response body and the total bytes of
	// one SSE stream: 16 MiB.
	DefaultMaxBody = 16 << 20
	// DefaultStallTimeout is how long a response may send nothing at all.
	DefaultStallTimeout = 30 * time.Second
	// maxStatusBody bounds the start of an error body quoted in a
	// *StatusError.
	maxStatusBody = 120
)

// Sentinel errors of the HTTP transport.
var (
	// ErrHTTPStatus reports a status code that is not the expected one;
	// see *StatusError.
	ErrHTTPStatus = errors.New("unexpected HTTP status")
	// ErrBodyTooLarge reports a response body or stream over MaxBody.
	ErrBodyTooLarge = errors.New("HTTP response exceeds the maximum body size")
	// ErrStalled reports a response that sent nothing for StallTimeout.
	ErrStalled = errors.New("HTTP response stalled")
	// ErrBadContentType reports a response whose Content-Type is neither
	// application/json nor text/event-stream.
	ErrBadContentType = errors.New("unexpected Content-Type")
	// ErrSessionGone reports that the server answered 404 to our
	// session ID: the session ended (HTTP-52), and the connection with it.
	ErrSessionGone = errors.New("the server ended the session (HTTP 404 for its session ID)")
	// ErrNoStream reports a stream name or event ID the transport does
	// not know.
	ErrNoStream = errors.New("no such SSE stream")
	// ErrRedirect reports a 3xx answer. Redirects are never followed: a
	// conformant endpoint does not redirect, and following one could
	// carry the request and its credentials to another origin.
	ErrRedirect = errors.New("HTTP redirect (not followed)")
	// ErrNoAnswer reports that the exchange that was to carry a
	// request's response ended without it; see Inbound.For.
	ErrNoAnswer = errors.New("the exchange ended without the request's response")
)

// StatusError is an HTTP exchange that ended with an unexpected status.
type StatusError struct {
	Channel string
	Status  int
	// Location is the Location header of a redirect, sanitised.
	Location string
	// Body is the start of the response body, sanitised, "" if none.
	Body string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d %s", e.Channel, e.Status, http.StatusText(e.Status))
	if e.Status/100 == 3 {
		s += fmt.Sprintf(" to Location %q, not followed (a redirect could carry the request and its credentials to another origin)", e.Location)
	}
	if e.Body != "" {
		s += ", body: " + e.Body
	}
	return s
}

// Unwrap makes errors.Is(err, ErrHTTPStatus) hold, and
// errors.Is(err, ErrRedirect) for a 3xx status.
func (e *StatusError) Unwrap() []error {
	if e.Status/100 == 3 {
		return []error{ErrHTTPStatus, ErrRedirect}
	}
	return []error{ErrHTTPStatus}
}

// newStatusError describes resp, whose body start is body.
func newStatusError(channel string, resp *http.Response, body []byte) *StatusError {
	e := &StatusError{Channel: channel, Status: resp.StatusCode}
	if resp.StatusCode/100 == 3 {
		e.Location = truncate(resp.Header.Get("Location"), 200)
	}
	e.Body = truncate(string(body), maxStatusBody)
	return e
}

// truncate sanitises s and cuts it to about n bytes, with a marker.
func truncate(s string, n int) string {
	cut := len(s) > n
	if cut {
		s = s[:n]
	}
	s = chrono.Sanitize(s, false)
	if cut {
		s += "…[truncated]"
	}
	return s
}

// headerValueOK reports whether s can be sent as an HTTP field value: no
// control byte but horizontal tab (RFC 9110 §5.5; obs-text is allowed).
func headerValueOK(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

// VisibleASCII reports whether s is non-empty and only of the bytes 0x21
// to 0x7E, as a session ID must be (HTTP-48).
func VisibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

// HTTPConfig configures a Streamable HTTP client connection.
type HTTPConfig struct {
	// URL is the MCP endpoint. Required.
	URL string
	// Log receives every HTTP exchange, frame and SSE event. Required.
	Log *chrono.Log
	// Headers are added to every request (for example Authorization).
	// Their values, and those of credential-looking headers
	// (CredentialHeader), are redacted where the chronology shows
	// headers; to keep them out of recorded bodies and texts too, give
	// Log a Redactor that knows them (chrono.Log.SetRedactor).
	Headers http.Header
	// MaxBody bounds a JSON body and the total bytes of one SSE stream;
	// DefaultMaxBody if zero.
	MaxBody int64
	// MaxEvent bounds one SSE event; DefaultMaxEvent if zero.
	MaxEvent int64
	// StallTimeout bounds the silence of a response once its headers are
	// in; DefaultStallTimeout if zero.
	StallTimeout time.Duration
	// HeaderTimeout bounds the wait for a response's headers; StallTimeout
	// if zero.
	HeaderTimeout time.Duration
	// Client performs the requests; a client of its own if nil. Its
	// Timeout should be zero, since SSE streams are long-lived. Its
	// CheckRedirect is replaced: redirects are never followed.
	Client *http.Client
	// InboundBuffer is the capacity of the inbound channel; 64 if zero.
	InboundBuffer int
}

// StreamEvent is one SSE event as received, with its chronology sequence
// number.
type StreamEvent struct {
	SSEEvent
	Seq uint64
}

// sseStream is one SSE response the transport reads.
type sseStream struct {
	name   string // "POST #3", "GET #1"
	cancel context.CancelFunc
	done   chan struct{}
	// reqKey is the key of the request whose answer the stream carries
	// ("" for the GET stream), reqID that request's ID; a resumed stream
	// inherits both.
	reqKey string
	reqID  jsonrpc.ID
	// attempts counts automatic reconnections in the chain so far.
	attempts int
	// Guarded by HTTP.mu.
	answered bool
	events   []StreamEvent
	lastID   string
	retry    time.Duration
	dropped  bool
	err      error
	// capped is set once events reached MaxStreamEvents.
	capped bool
}

// MaxStreamEvents bounds the events one stream keeps for Events: a flood
// of tiny events (a comment line is three bytes) within MaxBody would
// otherwise cost far more memory than its bytes.
const MaxStreamEvents = 10_000

// HTTP is a Conn over the Streamable HTTP transport (2025-11-25): every
// frame is a POST; a JSON body or an SSE stream answers it. The extra
// methods let cases drive the transport itself: open the GET stream, drop
// a stream on purpose, resume with Last-Event-ID, DELETE the session and
// send raw requests.
type HTTP struct {
	cfg     HTTPConfig
	client  *http.Client
	inbound chan Inbound
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup

	mu        sync.Mutex
	sessionID string
	version   string
	initKeys  map[string]bool
	posts     int
	gets      int
	streams   map[string]*sseStream
	byEventID map[string]*sseStream
	byRequest map[string]string // request ID key -> stream name
	cancelled map[string]bool   // request ID keys we sent a cancel for
	// rev2026 is the 2026-07-28 revision the connection speaks, "" for
	// 2025-11-25 (http2026.go); exchanges are its requests' POSTs.
	rev2026   string
	exchanges map[string]*exchange
	// statusOf is the HTTP status that answered each request, by ID key.
	statusOf map[string]int
	closed   bool
	err      error

	// inMu guards closing inbound against a late delivery.
	inMu     sync.RWMutex
	inClosed bool

	closeOnce sync.Once
	endOnce   sync.Once
	result    Teardown
	// afterClose are the functions AfterClose registered; guarded by mu,
	// nil once Close has run them.
	afterClose []func()
	closeDone  bool
}

// DialHTTP returns a connection to the MCP endpoint at cfg.URL. Nothing is
// sent until the first Send.
func DialHTTP(ctx context.Context, cfg HTTPConfig) (*HTTP, error) {
	if cfg.Log == nil {
		return nil, errors.New("transport: HTTPConfig.Log is required")
	}
	if cfg.URL == "" {
		return nil, errors.New("transport: HTTPConfig.URL is required")
	}
	if len(cfg.Headers) > 0 {
		h := make(http.Header, len(cfg.Headers))
		for n, vs := range cfg.Headers {
			k := http.CanonicalHeaderKey(n)
			h[k] = append(h[k], vs...)
		}
		cfg.Headers = h
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxEvent <= 0 {
		cfg.MaxEvent = DefaultMaxEvent
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = cfg.StallTimeout
	}
	if cfg.InboundBuffer <= 0 {
		cfg.InboundBuffer = 64
	}
	var client http.Client
	if cfg.Client != nil {
		client = *cfg.Client
	}
	// A redirect comes back as the 3xx it is (see ErrRedirect).
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	// The connection lives as long as ctx (the run) or until Close.
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	t := &HTTP{
		cfg: cfg, client: &client, ctx: base, stop: stop,
		inbound:   make(chan Inbound, cfg.InboundBuffer),
		initKeys:  map[string]bool{},
		streams:   map[string]*sseStream{},
		byEventID: map[string]*sseStream{},
		byRequest: map[string]string{},
		cancelled: map[string]bool{},
		exchanges: map[string]*exchange{},
		statusOf:  map[string]int{},
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-base.Done():
		}
	}()
	return t, nil
}

// Inbound delivers frames from every response body and stream, each
// stream in order.
func (t *HTTP) Inbound() <-chan Inbound { return t.inbound }

// Err is the first error that ended a stream the session depended on.
func (t *HTTP) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// SessionID is the MCP-Session-Id learned from the server, or "".
func (t *HTTP) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID
}

// ProtocolVersion is the version learned from the initialize response,
// sent as MCP-Protocol-Version on later requests; "" before.
func (t *HTTP) ProtocolVersion() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

// Events returns the SSE events received so far on the stream named
// stream ("POST #3", "GET #1"), the first MaxStreamEvents of them.
func (t *HTTP) Events(stream string) []StreamEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.streams[stream]; s != nil {
		return append([]StreamEvent(nil), s.events...)
	}
	return nil
}

// Streams names every SSE stream opened so far, in a stable order.
func (t *HTTP) Streams() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.streams))
	for n := range t.streams {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LastEventID is the last event ID seen on stream, as Resume wants it.
func (t *HTTP) LastEventID(stream string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.streams[stream]; s != nil {
		return s.lastID
	}
	return ""
}

// StreamOf names the SSE stream that answered the request with id, or ""
// when it was answered otherwise or not sent.
func (t *HTTP) StreamOf(id jsonrpc.ID) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byRequest[id.Key()]
}

// StreamDone is closed when the named stream has ended; nil if unknown.
func (t *HTTP) StreamDone(stream string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.streams[stream]; s != nil {
		return s.done
	}
	return nil
}

// StreamStalled reports whether the named stream ended because it was
// silent for StallTimeout (ErrStalled): the server held it open, and the
// harness closed it. A stream the server ended, or the client dropped or
// closed, did not stall.
func (t *HTTP) StreamStalled(stream string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.streams[stream]
	return s != nil && errors.Is(s.err, ErrStalled)
}

// PostNumber is the number of POSTs sent so far; the next Send is POST
// #PostNumber()+1.
func (t *HTTP) PostNumber() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.posts
}

// CredentialHeader reports whether a header's value is a credential by
// its name: Authorization, Proxy-Authorization, Cookie, Set-Cookie,
// X-API-Key, and any name containing auth, token, secret, passw, key,
// cookie or credential. The challenge headers WWW-Authenticate and
// Proxy-Authenticate carry no credential and stay visible.
func CredentialHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Www-Authenticate", "Proxy-Authenticate":
		return false
	}
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "cookie", "token", "secret", "passw", "key", "credential", "x-api"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactedValue is how the chronology shows the value of a redacted
// header: "[redacted]", or "Scheme [redacted]" for an Authorization
// value with an authentication scheme ("Bearer [redacted]").
func RedactedValue(name, value string) string {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Proxy-Authorization":
		scheme, rest, ok := strings.Cut(strings.TrimSpace(value), " ")
		if ok && rest != "" && len(scheme) <= 20 && strings.IndexFunc(scheme, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
		}) < 0 {
			return scheme + " " + chrono.Redacted
		}
	}
	return chrono.Redacted
}

// describeHeaders renders headers for the chronology: the transport's own
// headers and any configured ones, sanitised. The values of credential
// headers and of every header configured in HTTPConfig.Headers are
// redacted, in requests and responses alike.
func (t *HTTP) describeHeaders(h http.Header) string {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		switch http.CanonicalHeaderKey(n) {
		case "Accept-Encoding", "User-Agent", "Date", "Content-Length", "Cache-Control", "Connection", "X-Content-Type-Options":
			continue
		}
		v := strings.Join(h[n], ", ")
		if _, configured := t.cfg.Headers[http.CanonicalHeaderKey(n)]; configured || CredentialHeader(n) {
			v = RedactedValue(n, v)
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(n + ": " + v)
	}
	return chrono.Sanitize(b.String(), false)
}

// newRequest builds a request with the transport's headers; extra
// overrides them, and a name in extra with no values removes it.
func (t *HTTP) newRequest(ctx context.Context, method string, body []byte, accept string, extra http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.cfg.URL, rd)
	if err != nil {
		return nil, fmt.Errorf("transport: building %s request: %w", method, err)
	}
	for n, vs := range t.cfg.Headers {
		req.Header[http.CanonicalHeaderKey(n)] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	t.mu.Lock()
	rev2026 := t.rev2026
	if t.sessionID != "" && rev2026 == "" {
		req.Header.Set(HeaderSessionID, t.sessionID)
	}
	if t.version != "" && rev2026 == "" {
		req.Header.Set(HeaderProtocolVersion, t.version)
	}
	t.mu.Unlock()
	if rev2026 != "" && method == http.MethodPost {
		// The request metadata headers mirror the body (HTTP-84).
		msg, _ := jsonrpc.Decode(body)
		for n, vs := range headers2026(msg, rev2026) {
			req.Header[n] = vs
		}
	}
	for n, vs := range extra {
		if len(vs) == 0 {
			req.Header.Del(n)
			continue
		}
		req.Header[http.CanonicalHeaderKey(n)] = append([]string(nil), vs...)
	}
	return req, nil
}

// stallGuard cancels a request when its response is silent for too long.
type stallGuard struct {
	timer   *time.Timer
	d       time.Duration
	mu      sync.Mutex
	stalled bool
}

// newStallGuard arms a guard that fires after first, and after d once
// kicked.
func newStallGuard(first, d time.Duration, cancel context.CancelFunc) *stallGuard {
	g := &stallGuard{d: d}
	g.timer = time.AfterFunc(first, func() {
		g.mu.Lock()
		g.stalled = true
		g.mu.Unlock()
		cancel()
	})
	return g
}

func (g *stallGuard) kick() { g.timer.Reset(g.d) }
func (g *stallGuard) stop() { g.timer.Stop() }
func (g *stallGuard) fired() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stalled
}

// guardedBody counts bytes, kicks the stall guard and enforces MaxBody.
type guardedBody struct {
	r     io.Reader
	g     *stallGuard
	n     int64
	limit int64
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.g.kick()
		b.n += int64(n)
		if b.n > b.limit {
			return n, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, b.limit)
		}
	}
	return n, err
}

// exchange sends req and returns the response with its body guarded.
// The returned cleanup stops the guard and cancels the request.
func (t *HTTP) exchange(req *http.Request, channel string, body []byte) (*http.Response, *stallGuard, context.CancelFunc, error) {
	t.logRequest(req, channel, body)
	return t.do(req, channel)
}

// logRequest records an outgoing request: its frame, with its method and
// headers, or the bare exchange when it has no body.
func (t *HTTP) logRequest(req *http.Request, channel string, body []byte) {
	text := req.Method + " " + t.describeHeaders(req.Header)
	if body != nil {
		t.cfg.Log.Append(chrono.Event{Dir: chrono.Out, Channel: channel, Kind: chrono.KindFrame, Raw: body,
			Summary: chrono.Summarize(jsonrpc.Decode(body)), Text: text})
	} else {
		t.cfg.Log.Append(chrono.Event{Dir: chrono.Out, Channel: channel, Kind: chrono.KindHTTP, Text: text})
	}
}

// do performs a request logRequest recorded and returns the response with
// its body guarded (see exchange).
func (t *HTTP) do(req *http.Request, channel string) (*http.Response, *stallGuard, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(req.Context())
	req = req.WithContext(ctx)
	guard := newStallGuard(t.cfg.HeaderTimeout, t.cfg.StallTimeout, cancel)
	resp, err := t.client.Do(req)
	if err != nil {
		guard.stop()
		cancel()
		if guard.fired() {
			err = fmt.Errorf("%w: no response headers within %s", ErrStalled, t.cfg.HeaderTimeout)
		}
		err = fmt.Errorf("transport: %s: %w", channel, err)
		t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(err.Error(), false))
		if errors.Is(err, ErrStalled) {
			t.mu.Lock()
			if t.err == nil {
				t.err = err // a limit was hit: Err names it
			}
			t.mu.Unlock()
		}
		return nil, nil, nil, err
	}
	guard.kick()
	t.cfg.Log.Append(chrono.Event{Dir: chrono.In, Channel: channel, Kind: chrono.KindHTTP,
		Text: fmt.Sprintf("HTTP %d %s", resp.StatusCode, t.describeHeaders(resp.Header))})
	resp.Body = struct {
		io.Reader
		io.Closer
	}{&guardedBody{r: resp.Body, g: guard, limit: t.cfg.MaxBody}, resp.Body}
	return resp, guard, func() { guard.stop(); cancel() }, nil
}

// mediaType is the response's media type, lower case, without parameters.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(h.Get("Content-Type")))
	}
	return mt
}

// Send POSTs one frame (HTTP-7, HTTP-8) with Accept listing both media
// types (HTTP-9), the session ID once known (HTTP-50) and the protocol
// version once initialize has answered (HTTP-56). It returns once the
// response headers are in: a JSON body or an SSE stream is then read in
// the background and feeds Inbound. A status other than 2xx returns a
// *StatusError; a JSON body of such a response is still delivered. A 404
// on a request that carried a session ID forgets the session, so that
// the next initialize starts a new one (HTTP-53).
//
// On a 2026-07-28 connection (Set2026) a request is answered in the
// background instead: Send returns once its frame is recorded (see
// http2026.go).
func (t *HTTP) Send(ctx context.Context, raw []byte) error { return t.send(ctx, raw, nil) }

// send is Send with header overrides (SendHeaders).
func (t *HTTP) send(ctx context.Context, raw []byte, extra http.Header) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	t.posts++
	n := t.posts
	msg, derr := jsonrpc.Decode(raw)
	if derr == nil && msg.Kind == jsonrpc.KindRequest && msg.Method == mcp.MethodInitialize {
		t.initKeys[msg.ID.Key()] = true
	}
	if derr == nil && msg.Kind == jsonrpc.KindNotification && msg.Method == mcp.NotificationCancelled {
		// A request we cancelled expects no answer: its stream is not
		// reconnected when it ends.
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			if id, err := jsonrpc.ParseID(p.RequestID); err == nil {
				t.cancelled[id.Key()] = true
			}
		}
	}
	rev2026 := t.rev2026
	t.mu.Unlock()
	channel := fmt.Sprintf("POST #%d", n)
	if rev2026 != "" && derr == nil && msg.Kind == jsonrpc.KindRequest {
		return t.sendRequest2026(channel, raw, msg, extra)
	}
	// The request lives with the connection, not with the caller's ctx:
	// a stream must survive the call that started it.
	req, err := t.newRequest(t.ctx, http.MethodPost, raw, "application/json, text/event-stream", extra)
	if err != nil {
		return err
	}
	sentSession := req.Header.Get(HeaderSessionID) != ""
	type result struct {
		resp   *http.Response
		guard  *stallGuard
		cancel context.CancelFunc
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, g, c, err := t.exchange(req, channel, raw)
		done <- result{resp, g, c, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		// The exchange goes on in the background and is recorded.
		return ctx.Err()
	}
	if r.err != nil {
		return r.err
	}
	resp := r.resp
	t.learnSession(resp, msg, channel)
	if resp.StatusCode == http.StatusNotFound && sentSession {
		t.mu.Lock()
		t.sessionID, t.version = "", ""
		if t.err == nil {
			t.err = fmt.Errorf("transport: %s: %w", channel, ErrSessionGone)
		}
		t.mu.Unlock()
		t.cfg.Log.Harness(chrono.KindDecision, channel, "404 for a session ID: the session is gone, and this connection with it; a new initialize would start a new one (HTTP-53)")
		go t.endInbound()
	}
	mt := mediaType(resp.Header)
	switch {
	case resp.StatusCode == http.StatusAccepted:
		t.readRest(resp, r.cancel, channel)
		return nil
	case resp.StatusCode/100 == 3:
		body := t.readRest(resp, r.cancel, channel)
		err := newStatusError(channel, resp, body)
		t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize("transport: "+err.Error(), false))
		return err
	case resp.StatusCode/100 == 2 && mt == "text/event-stream":
		if !t.track() {
			r.cancel()
			return ErrClosed
		}
		s := t.newStream(channel, r.cancel)
		if msg != nil && msg.Kind == jsonrpc.KindRequest {
			t.mu.Lock()
			t.byRequest[msg.ID.Key()] = channel
			s.reqKey, s.reqID = msg.ID.Key(), msg.ID
			t.mu.Unlock()
		}
		go t.readSSE(s, resp, r.guard)
		return nil
	case mt == "application/json":
		if !t.track() {
			r.cancel()
			return ErrClosed
		}
		read := func() {
			defer t.wg.Done()
			defer r.cancel()
			t.readJSON(resp, channel, msg)
		}
		if msg != nil && msg.Kind != jsonrpc.KindRequest {
			// A JSON body answering a notification or a response (which
			// should have been 202) is delivered before Send returns, so
			// that it is ordered before anything sent afterwards.
			read()
		} else {
			go read()
		}
		if msg != nil && msg.Kind == jsonrpc.KindRequest {
			// An error status with a JSON body answers the request: its
			// JSON-RPC error (a -32022 to initialize from a modern-only
			// server, LIF-49) is the response, or its absence loses the
			// request (readJSON). StatusOf keeps the status.
			t.mu.Lock()
			t.statusOf[msg.ID.Key()] = resp.StatusCode
			t.mu.Unlock()
			return nil
		}
		if resp.StatusCode/100 != 2 {
			return &StatusError{Channel: channel, Status: resp.StatusCode}
		}
		return nil
	case resp.StatusCode/100 != 2:
		body := t.readRest(resp, r.cancel, channel)
		return newStatusError(channel, resp, body)
	default:
		body := t.readRest(resp, r.cancel, channel)
		err := fmt.Errorf("transport: %s: %w %q for HTTP %d (HTTP-14 wants application/json or text/event-stream), body: %s",
			channel, ErrBadContentType, resp.Header.Get("Content-Type"), resp.StatusCode, truncate(string(body), maxStatusBody))
		t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(err.Error(), false))
		return err
	}
}

// learnSession takes the session ID from a response, the first time one
// is offered or when an initialize answered.
//
// An ID with bytes outside visible ASCII breaks HTTP-48: it is recorded
// as such in the chronology, never taken silently, and still sent back
// as received (the session is the server's; cases judge it). One that
// could not even be sent back as a header value is refused.
func (t *HTTP) learnSession(resp *http.Response, sent *jsonrpc.Message, channel string) {
	id := resp.Header.Get(HeaderSessionID)
	if id == "" || resp.StatusCode/100 != 2 || t.Revision2026() != "" {
		// 2026-07-28 has no sessions: an ID a server still mints is in
		// the chronology's headers, and never sent back (HTTP-107).
		return
	}
	t.mu.Lock()
	isInit := sent != nil && sent.Kind == jsonrpc.KindRequest && sent.Method == mcp.MethodInitialize
	take := t.sessionID == "" || isInit
	t.mu.Unlock()
	if !take {
		return
	}
	if !VisibleASCII(id) {
		if !headerValueOK(id) {
			t.cfg.Log.Harness(chrono.KindError, channel, fmt.Sprintf("MCP-Session-Id %q has bytes that cannot be sent in a header (HTTP-48 allows 0x21 to 0x7E only): refused, later requests go without it",
				truncate(id, 200)))
			return
		}
		t.cfg.Log.Harness(chrono.KindDecision, channel, fmt.Sprintf("MCP-Session-Id %q has bytes outside visible ASCII, which HTTP-48 forbids (0x21 to 0x7E only); it is sent back as received",
			truncate(id, 200)))
	}
	t.mu.Lock()
	t.sessionID = id
	t.mu.Unlock()
}

// readRest reads and records whatever body a response has, bounded, and
// returns it.
func (t *HTTP) readRest(resp *http.Response, cancel context.CancelFunc, channel string) []byte {
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if len(body) > 0 {
		t.cfg.Log.Append(chrono.Event{Dir: chrono.In, Channel: channel, Kind: chrono.KindHTTP, Raw: body,
			Text: fmt.Sprintf("body of HTTP %d (%d bytes)", resp.StatusCode, len(body))})
	}
	if err != nil {
		t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize("reading body: "+err.Error(), false))
	}
	return body
}

// requestID is the ID of sent when it is a request, else the zero ID.
func requestID(sent *jsonrpc.Message) jsonrpc.ID {
	if sent != nil && sent.Kind == jsonrpc.KindRequest {
		return sent.ID
	}
	return jsonrpc.ID{}
}

// readJSON reads a JSON body holding one message and delivers it. sent
// is the message POSTed, nil if malformed: when it was a request and the
// body is too large or not a message, its response is lost, and Inbound
// says so (Inbound.For).
func (t *HTTP) readJSON(resp *http.Response, channel string, sent *jsonrpc.Message) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && t.closedByUs(requestID(sent)) {
		t.cfg.Log.Harness(chrono.KindNote, channel, "JSON body not read: the client closed the exchange to cancel request "+requestID(sent).String())
		return
	}
	if err != nil {
		t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize("reading JSON body: "+err.Error(), false))
		if errors.Is(err, ErrBodyTooLarge) {
			e := t.cfg.Log.Harness(chrono.KindError, channel, err.Error())
			t.mu.Lock()
			if t.err == nil {
				t.err = err // the answer is lost: Err names the limit
			}
			t.mu.Unlock()
			in := Inbound{Err: err, Seq: e.Seq}
			if id := requestID(sent); id.IsValid() {
				in.Err, in.For = fmt.Errorf("transport: %s: %w: %w", channel, ErrNoAnswer, err), id
			}
			t.deliver(in)
		}
		return
	}
	t.deliverMsg(channel, body, "JSON body", requestID(sent))
}

// deliverMsg records one inbound frame, hands it to Inbound and returns
// its sequence number and decoded message, nil when malformed. When the
// frame is the whole answer to request lost (when valid) and is not its
// response (not a message at all, or another message: HTTP-14 asks for
// "one JSON object", the response), that request's response is lost:
// Inbound.For says so, after the frame itself was delivered.
func (t *HTTP) deliverMsg(channel string, raw []byte, text string, lost jsonrpc.ID) (uint64, *jsonrpc.Message) {
	msg, derr := jsonrpc.Decode(raw)
	e := t.cfg.Log.Append(chrono.Event{Dir: chrono.In, Channel: channel, Kind: chrono.KindFrame, Raw: raw,
		Summary: chrono.Summarize(msg, derr), Text: chrono.Sanitize(text, false)})
	if derr == nil && msg.Kind == jsonrpc.KindResult {
		t.learnVersion(msg)
	}
	if derr == nil && msg.Kind.IsResponse() && msg.ID.IsValid() {
		t.markAnswered(msg.ID)
	}
	in := Inbound{Msg: msg, Raw: raw, Seq: e.Seq}
	if derr != nil {
		in.Msg, in.Err = nil, derr
		if lost.IsValid() {
			in.Err = fmt.Errorf("transport: %s: %w: the body is not a JSON-RPC message: %w", channel, ErrNoAnswer, derr)
			in.For = lost
			t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(in.Err.Error(), false))
		}
	}
	t.deliver(in)
	if derr == nil && lost.IsValid() && !(msg.Kind.IsResponse() && msg.ID == lost) {
		what := msg.Kind.String()
		if msg.Method != "" {
			what += " " + strconv.Quote(msg.Method)
		}
		if msg.ID.IsValid() {
			what += " with id " + msg.ID.String()
		}
		err := fmt.Errorf("transport: %s: %w: the JSON body is a %s, not the response to request %s", channel, ErrNoAnswer, what, lost)
		he := t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(err.Error(), false))
		t.deliver(Inbound{Err: err, For: lost, Seq: he.Seq})
	}
	return e.Seq, in.Msg
}

// learnVersion takes the protocol version from the initialize response.
func (t *HTTP) learnVersion(msg *jsonrpc.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !msg.ID.IsValid() || !t.initKeys[msg.ID.Key()] {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(msg.Result, &r) == nil && r.ProtocolVersion != "" {
		t.version = r.ProtocolVersion
	}
	delete(t.initKeys, msg.ID.Key())
}

// deliver hands in to Inbound unless the connection is shutting down.
func (t *HTTP) deliver(in Inbound) {
	t.inMu.RLock()
	defer t.inMu.RUnlock()
	if t.inClosed {
		return
	}
	select {
	case t.inbound <- in:
	case <-t.ctx.Done():
	}
}

// track counts a background reader unless the connection is closed.
func (t *HTTP) track() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *HTTP) newStream(name string, cancel context.CancelFunc) *sseStream {
	s := &sseStream{name: name, cancel: cancel, done: make(chan struct{})}
	t.mu.Lock()
	t.streams[name] = s
	t.mu.Unlock()
	return s
}

// readSSE reads one SSE stream to its end, recording every event and
// delivering every message.
func (t *HTTP) readSSE(s *sseStream, resp *http.Response, guard *stallGuard) {
	defer t.wg.Done()
	defer close(s.done)
	defer s.cancel()
	defer resp.Body.Close()
	channel := "SSE " + s.name
	rd := NewSSEReader(resp.Body, t.cfg.MaxEvent)
	for {
		ev, err := rd.Next()
		if err != nil {
			t.mu.Lock()
			dropped := s.dropped
			t.mu.Unlock()
			switch {
			case errors.Is(err, io.EOF):
				t.cfg.Log.Harness(chrono.KindNote, channel, "stream ended")
				t.reconnect(s)
				t.lostAtEnd(s, channel, "ended")
			case dropped:
				t.cfg.Log.Harness(chrono.KindNote, channel, "stream dropped by the client")
			case t.closedByUs(s.reqID):
				t.cfg.Log.Harness(chrono.KindNote, channel, "stream closed by the client: request "+s.reqID.String()+" cancelled")
			default:
				if guard.fired() {
					err = fmt.Errorf("%w: nothing for %s", ErrStalled, t.cfg.StallTimeout)
				}
				if t.ctx.Err() != nil {
					t.cfg.Log.Harness(chrono.KindNote, channel, "stream closed by the client")
				} else {
					t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize("stream failed: "+err.Error(), false))
					limit := errors.Is(err, ErrStalled) || errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrEventTooLarge)
					t.mu.Lock()
					if errors.Is(err, ErrStalled) && s.answered {
						// Silent after its response: the server held the
						// stream open (what HTTP-91 judges), and nothing the
						// request is owed was lost; no limit cost evidence.
						limit = false
					}
					s.err = err
					if t.err == nil && limit {
						t.err = fmt.Errorf("transport: %s: %w", channel, err)
					}
					// A request whose stream a limit cut off before its
					// response gets none: the stream is not resumed.
					lost := limit && s.reqID.IsValid() && !s.answered && !t.cancelled[s.reqKey]
					id := s.reqID
					t.mu.Unlock()
					switch {
					case lost:
						err = fmt.Errorf("transport: %s: %w: %w", channel, ErrNoAnswer, err)
						e := t.cfg.Log.Harness(chrono.KindError, channel, chrono.Sanitize(err.Error(), false))
						t.deliver(Inbound{Err: err, Seq: e.Seq, For: id})
					case errors.Is(err, ErrEventTooLarge) || errors.Is(err, ErrBodyTooLarge):
						e := t.cfg.Log.Harness(chrono.KindError, channel, err.Error())
						t.deliver(Inbound{Err: err, Seq: e.Seq})
					case !limit:
						// A stream that failed (reset, cut mid-event) is
						// not resumed: its request's response is lost as
						// at an end, not waited for.
						t.lostAtEnd(s, channel, "failed")
					}
				}
			}
			return
		}
		text := "sse"
		if ev.HasID {
			text += " id=" + ev.ID
		}
		if ev.Event != "" {
			text += " event=" + ev.Event
		}
		if ev.HasRetry {
			text += " retry=" + strconv.FormatInt(ev.Retry.Milliseconds(), 10) + "ms"
		}
		if len(ev.Comments) > 0 {
			text += fmt.Sprintf(" comments=%d", len(ev.Comments))
		}
		// The stream's position moves before the event is delivered, so
		// that whoever has seen the event also sees it as the last ID.
		t.mu.Lock()
		if ev.HasID {
			s.lastID = ev.ID
			if ev.ID != "" {
				t.byEventID[ev.ID] = s
			}
		}
		if ev.HasRetry {
			s.retry = ev.Retry
		}
		t.mu.Unlock()
		var seq uint64
		if ev.HasData && ev.Data != "" && (ev.Event == "" || ev.Event == "message") {
			var m *jsonrpc.Message
			seq, m = t.deliverMsg(channel, []byte(ev.Data), text, jsonrpc.ID{})
			if m != nil && m.Kind.IsResponse() && m.ID.IsValid() && m.ID.Key() == s.reqKey {
				t.mu.Lock()
				s.answered = true
				t.mu.Unlock()
			}
		} else {
			if ev.HasData {
				text += " (empty data: priming)"
			}
			e := t.cfg.Log.Append(chrono.Event{Dir: chrono.In, Channel: channel, Kind: chrono.KindHTTP, Raw: []byte(ev.Data),
				Text: chrono.Sanitize(text, false)})
			seq = e.Seq
		}
		t.mu.Lock()
		first := false
		if len(s.events) < MaxStreamEvents {
			s.events = append(s.events, StreamEvent{SSEEvent: ev, Seq: seq})
		} else if !s.capped {
			first, s.capped = true, true
		}
		t.mu.Unlock()
		if first {
			t.cfg.Log.Harness(chrono.KindNote, channel, fmt.Sprintf("more than %d events on this stream: later ones are recorded in the chronology but not kept for Events", MaxStreamEvents))
		}
	}
}

// maxReconnects bounds the automatic reconnections of one request's
// stream.
const maxReconnects = 3

// reconnect resumes a request's stream that the server closed before the
// response, from its last event ID (HTTP-17, HTTP-18), at most
// maxReconnects times, never for a request we cancelled or a stream we
// dropped. Called from the stream's reader.
func (t *HTTP) reconnect(s *sseStream) {
	t.mu.Lock()
	// 2026-07-28 streams are not resumable (HTTP-93).
	ok := t.rev2026 == "" && s.reqKey != "" && !s.answered && !s.dropped && s.lastID != "" && !t.cancelled[s.reqKey] &&
		s.attempts < maxReconnects && !t.closed && t.ctx.Err() == nil
	last, n := s.lastID, s.attempts+1
	t.mu.Unlock()
	if !ok || !t.track() {
		return
	}
	t.cfg.Log.Harness(chrono.KindDecision, "SSE "+s.name, fmt.Sprintf("the stream ended before its response: reconnecting with Last-Event-ID %s (HTTP-18), attempt %d of %d", chrono.Sanitize(last, false), n, maxReconnects))
	go func() {
		defer t.wg.Done()
		if _, err := t.Resume(t.ctx, last); err != nil && t.ctx.Err() == nil {
			t.cfg.Log.Harness(chrono.KindError, "SSE "+s.name, chrono.Sanitize("reconnecting: "+err.Error(), false))
		}
	}()
}

// lostAtEnd reports the request of a stream that ended (how: "ended")
// or failed ("failed": reset, cut mid-event) before its
// response as lost when nothing can bring the response any more: the
// stream carried no event ID to resume from (HTTP-21, HTTP-45), was not
// itself a resumption, and was neither cancelled nor dropped by us.
// Called from the stream's reader after reconnect.
func (t *HTTP) lostAtEnd(s *sseStream, channel, how string) {
	t.mu.Lock()
	// On 2026-07-28 any stream that ends before its response loses it:
	// nothing resumes it (HTTP-94).
	closed := false
	if x := t.exchanges[s.reqKey]; x != nil {
		closed = x.closed
	}
	lost := s.reqID.IsValid() && !s.answered && !s.dropped && (s.lastID == "" || t.rev2026 != "") && s.attempts == 0 &&
		!t.cancelled[s.reqKey] && !closed && !t.closed && t.ctx.Err() == nil
	id, why := s.reqID, "with no event ID to resume it from"
	if t.rev2026 != "" {
		why = "and 2026-07-28 streams are not resumed (HTTP-93, HTTP-94)"
	}
	t.mu.Unlock()
	if !lost {
		return
	}
	err := fmt.Errorf("transport: %s: %w: the stream %s before the response, %s", channel, ErrNoAnswer, how, why)
	e := t.cfg.Log.Harness(chrono.KindError, channel, err.Error())
	t.deliver(Inbound{Err: err, Seq: e.Seq, For: id})
}

// OpenGET opens the GET stream (HTTP-28, HTTP-29) and returns its name,
// "GET #n". A 405 answer returns a *StatusError (HTTP-30 allows it).
func (t *HTTP) OpenGET(ctx context.Context) (string, error) {
	return t.get(ctx, "")
}

// Resume reconnects with GET and Last-Event-ID (HTTP-42, HTTP-45), after
// waiting the retry time the stream that carried lastEventID last asked
// for (HTTP-20), and returns the new stream's name.
func (t *HTTP) Resume(ctx context.Context, lastEventID string) (string, error) {
	t.mu.Lock()
	var retry time.Duration
	if s := t.byEventID[lastEventID]; s != nil {
		retry = s.retry
	}
	t.mu.Unlock()
	if retry > 0 {
		t.cfg.Log.Harness(chrono.KindDecision, "http", fmt.Sprintf("waiting the server's retry of %s before resuming (HTTP-20)", retry))
		timer := time.NewTimer(retry)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return "", ctx.Err()
		}
	}
	return t.get(ctx, lastEventID)
}

func (t *HTTP) get(ctx context.Context, lastEventID string) (string, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return "", ErrClosed
	}
	if t.rev2026 != "" {
		t.mu.Unlock()
		return "", ErrNoGET2026
	}
	t.gets++
	name := fmt.Sprintf("GET #%d", t.gets)
	t.mu.Unlock()
	var extra http.Header
	if lastEventID != "" {
		extra = http.Header{HeaderLastEventID: {lastEventID}}
	}
	req, err := t.newRequest(t.ctx, http.MethodGet, nil, "text/event-stream", extra)
	if err != nil {
		return "", err
	}
	type result struct {
		resp   *http.Response
		guard  *stallGuard
		cancel context.CancelFunc
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, g, c, err := t.exchange(req, name, nil)
		done <- result{resp, g, c, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if r.err != nil {
		return "", r.err
	}
	if r.resp.StatusCode/100 != 2 {
		body := t.readRest(r.resp, r.cancel, name)
		return "", newStatusError(name, r.resp, body)
	}
	if mt := mediaType(r.resp.Header); mt != "text/event-stream" {
		t.readRest(r.resp, r.cancel, name)
		return "", fmt.Errorf("transport: %s: %w %q", name, ErrBadContentType, r.resp.Header.Get("Content-Type"))
	}
	if !t.track() {
		r.cancel()
		return "", ErrClosed
	}
	s := t.newStream(name, r.cancel)
	if lastEventID != "" {
		// A resumed stream carries on the answer of the stream it
		// resumes.
		t.mu.Lock()
		if from := t.byEventID[lastEventID]; from != nil {
			s.reqKey, s.reqID, s.attempts, s.lastID, s.retry = from.reqKey, from.reqID, from.attempts+1, lastEventID, from.retry
			t.byEventID[lastEventID] = s
		}
		t.mu.Unlock()
	}
	go t.readSSE(s, r.resp, r.guard)
	return name, nil
}

// DropStream drops the SSE stream of POST #n on purpose, as a network
// failure would: no cancellation is sent (HTTP-25, HTTP-26). It returns
// once the stream's reader has stopped.
func (t *HTTP) DropStream(n int) error {
	return t.Drop(fmt.Sprintf("POST #%d", n))
}

// Drop drops the named stream ("POST #3", "GET #1") on purpose and waits
// for its reader to stop.
func (t *HTTP) Drop(stream string) error {
	t.mu.Lock()
	s := t.streams[stream]
	if s != nil {
		s.dropped = true
	}
	t.mu.Unlock()
	if s == nil {
		return fmt.Errorf("%w: %s", ErrNoStream, stream)
	}
	t.cfg.Log.Harness(chrono.KindDecision, "SSE "+stream, "dropping the stream on purpose (a disconnection, not a cancellation)")
	s.cancel()
	<-s.done
	return nil
}

// Delete ends the session with DELETE (HTTP-54) and returns the status.
// With no session ID it sends nothing and returns 0.
func (t *HTTP) Delete(ctx context.Context) (int, error) {
	if t.SessionID() == "" {
		return 0, nil
	}
	resp, err := t.Raw(ctx, http.MethodDelete, nil, nil)
	if err != nil {
		return 0, err
	}
	if resp.Status/100 == 2 {
		t.mu.Lock()
		t.sessionID = ""
		t.mu.Unlock()
	}
	return resp.Status, nil
}

// RawResponse is a response to a raw request, its body read and bounded.
type RawResponse struct {
	Status int
	Header http.Header
	Body   []byte
	// Events are the body's SSE events when it was an event stream.
	Events []SSEEvent
	// Err says why reading the body stopped early, if it did.
	Err error
}

// RawPOST POSTs body as it is, for negative cases. The transport's
// headers are added (session ID, protocol version, Accept, Content-Type);
// headers overrides them, and a name with no values removes one. The
// body is read to its end (an SSE stream until it ends or ctx ends) and
// nothing is delivered to Inbound.
func (t *HTTP) RawPOST(ctx context.Context, body []byte, headers http.Header) (*RawResponse, error) {
	return t.Raw(ctx, http.MethodPost, body, headers)
}

// Raw sends one request of any method as RawPOST does.
func (t *HTTP) Raw(ctx context.Context, method string, body []byte, headers http.Header) (*RawResponse, error) {
	t.mu.Lock()
	var channel string
	if method == http.MethodPost {
		t.posts++
		channel = fmt.Sprintf("POST #%d", t.posts)
	} else {
		t.gets++ // one counter for every non-POST exchange keeps names unique
		channel = fmt.Sprintf("%s #%d", method, t.gets)
	}
	t.mu.Unlock()
	accept := "application/json, text/event-stream"
	if method == http.MethodGet {
		accept = "text/event-stream"
	}
	req, err := t.newRequest(ctx, method, body, accept, headers)
	if err != nil {
		return nil, err
	}
	resp, _, cancel, err := t.exchange(req, channel, body)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	out := &RawResponse{Status: resp.StatusCode, Header: resp.Header}
	if mediaType(resp.Header) == "text/event-stream" && resp.StatusCode/100 == 2 {
		rd := NewSSEReader(resp.Body, t.cfg.MaxEvent)
		for {
			ev, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					out.Err = err
				}
				break
			}
			out.Events = append(out.Events, ev)
			t.cfg.Log.Append(chrono.Event{Dir: chrono.In, Channel: "SSE " + channel, Kind: chrono.KindHTTP, Raw: []byte(ev.Data),
				Text: chrono.Sanitize(fmt.Sprintf("sse id=%s (raw request, not delivered)", ev.ID), false)})
		}
		return out, nil
	}
	out.Body, out.Err = io.ReadAll(resp.Body)
	if len(out.Body) > 0 {
		t.cfg.Log.Append(chrono.Event{Dir: chrono.In, Channel: channel, Kind: chrono.KindHTTP, Raw: out.Body,
			Text: fmt.Sprintf("body of HTTP %d (%d bytes, raw request, not delivered)", resp.StatusCode, len(out.Body))})
	}
	return out, nil
}

// endInbound stops every stream and ends Inbound, once.
func (t *HTTP) endInbound() {
	t.endOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.stop()
		t.wg.Wait()
		t.inMu.Lock()
		t.inClosed = true
		close(t.inbound)
		t.inMu.Unlock()
	})
}

// Close DELETEs the session, if there is one, then closes every stream
// and ends Inbound. The teardown is StepDelete; Err is set when the
// DELETE failed at the HTTP level. A 405 (HTTP-55) is not an error.
func (t *HTTP) Close(ctx context.Context) Teardown {
	t.closeOnce.Do(func() {
		start := time.Now()
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		td := Teardown{ExitedAfter: StepDelete}
		if t.SessionID() != "" {
			dctx, cancel := context.WithTimeout(ctx, t.cfg.StallTimeout)
			status, err := t.Delete(dctx)
			cancel()
			switch {
			case err != nil:
				td.Err = fmt.Errorf("transport: DELETE of the session: %w", err)
			case status/100 != 2 && status != http.StatusMethodNotAllowed && status != http.StatusNotFound:
				td.Err = fmt.Errorf("transport: DELETE of the session: %w", &StatusError{Channel: "DELETE", Status: status})
			}
			td.ExitCode = status
		}
		t.cfg.Log.Harness(chrono.KindState, "http", "closing every stream")
		t.endInbound()
		td.Waited = time.Since(start)
		t.result = td
		t.mu.Lock()
		after := t.afterClose
		t.afterClose, t.closeDone = nil, true
		t.mu.Unlock()
		for _, f := range after {
			f()
		}
	})
	return t.result
}

// AfterClose registers f to be called once Close has ended every stream
// (at once if it already has): the end of what the connection can see,
// such as the stderr of a server the harness started (Served.Attach).
func (t *HTTP) AfterClose(f func()) {
	t.mu.Lock()
	if !t.closeDone {
		t.afterClose = append(t.afterClose, f)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	f()
}

var _ Conn = (*HTTP)(nil)
