package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/transport"
)

// ProxyConfig configures Proxy.
type ProxyConfig struct {
	// Target is the server's URL. Its scheme and host receive every
	// request; the path and query of each request are forwarded as the
	// client sent them, so the client is pointed at the proxy with the
	// target's path (LocalURL).
	Target *url.URL
	// Recorder records the exchanges. Required.
	Recorder *Recorder
	// RedactHeaders names headers whose values the record shows as
	// "[redacted]", besides the credential headers (Authorization,
	// Cookie, and the names transport.CredentialHeader recognises).
	// Their values are also redacted wherever the record quotes them.
	// The forwarded requests are never changed.
	RedactHeaders []string
	// Transport performs the forwarded requests; nil for a transport of
	// the proxy's own, which adds no Accept-Encoding of its own (the
	// client's is forwarded as sent) and honours the environment's
	// proxy settings as Go's default transport does.
	Transport http.RoundTripper
}

// Proxy returns a reverse proxy to cfg.Target that forwards every
// request (POST, GET, DELETE, OPTIONS, any method) with its headers and
// body unchanged, save the hop-by-hop headers that a proxy must not pass
// on (Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding,
// Upgrade) and the Host, which names the target. Responses come back
// the same way, and an event stream is flushed to the client after
// every read from the server, so that no event waits in the proxy. No
// X-Forwarded-* header is added.
//
// Every exchange is recorded off the path (cfg.Recorder): the request
// line and headers (KindHTTP, Out, channel "POST #n"), the JSON-RPC
// message of its body (KindFrame, Out), the status and headers (KindHTTP,
// In), a JSON body's message (KindFrame, In, "POST #n"), each event of
// an event stream (KindFrame for a message, KindHTTP for any other,
// In, "SSE POST #n"), and how a stream ended (Dir Harness): "stream
// ended" (the server ended it), "the server ended the response stream
// of request ID before its response" (KindNote), "the response stream
// failed: …" (KindError, the connection to the server broke),
// ClientClosedText (KindDecision: the client closed it before the
// response to its request), "the client closed the response stream of
// request ID after its response" or "the client closed the response
// stream" (KindNote: after the response, or a stream of no request). A
// gzip or deflate body is recorded decoded. The
// Mcp-Session-Id header comes first in the headers of each KindHTTP
// text ("POST /mcp Mcp-Session-Id: abc; Accept: …"), so that a judge
// can key sessions by it (SessionID). Credential headers are redacted
// in the record only.
//
// A server that cannot be reached is answered 502 Bad Gateway, and
// recorded as an error on the exchange's channel.
func Proxy(cfg ProxyConfig) http.Handler {
	p := &proxy{target: cfg.Target, rec: cfg.Recorder, redact: map[string]bool{}, counts: map[string]int{}}
	for _, h := range cfg.RedactHeaders {
		p.redact[http.CanonicalHeaderKey(h)] = true
	}
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// The client's Accept-Encoding is forwarded as it is; one the
		// transport added itself would change the request, and it would
		// then decompress what the client should receive compressed.
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 64
		tr = t
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      tr,
		FlushInterval:  -1,
		ErrorLog:       log.New(io.Discard, "", 0),
		ErrorHandler:   p.failed,
		ModifyResponse: p.response,
	}
	return p
}

// LocalURL is the URL a client uses to reach target through a proxy
// listening on ln: ln's address with target's path and query.
func LocalURL(ln net.Listener, target *url.URL) string {
	u := url.URL{Scheme: "http", Host: ln.Addr().String(), Path: target.Path, RawPath: target.RawPath, RawQuery: target.RawQuery}
	return u.String()
}

type proxy struct {
	target *url.URL
	rec    *Recorder
	redact map[string]bool
	rp     *httputil.ReverseProxy

	mu     sync.Mutex
	counts map[string]int
}

// exchangeKey keys the exchange in a forwarded request's context.
type exchangeKey struct{}

func (p *proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	ex := p.newExchange(req.Method)
	p.rec.push(tap{op: opReqHead, at: at, head: &httpHead{ex: ex, method: req.Method, uri: req.RequestURI,
		header: req.Header.Clone(), redact: p.redactHeader}}, ex.req, true)
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &tapBody{rc: req.Body, rec: p.rec, s: ex.req, remaining: req.ContentLength}
	}
	// Headers the server would add to a response without them are
	// suppressed: the client gets the target's response as it was.
	h := w.Header()
	h["Date"], h["Content-Type"] = nil, nil
	p.rp.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), exchangeKey{}, ex)))
}

// newExchange numbers an exchange of method: "POST #3".
func (p *proxy) newExchange(method string) *exchange {
	p.mu.Lock()
	p.counts[method]++
	n := p.counts[method]
	p.mu.Unlock()
	channel := fmt.Sprintf("%s #%d", chrono.Sanitize(method, false), n)
	ex := &exchange{channel: channel, method: method}
	ex.req = p.rec.newStream(chrono.Out, channel, modeBody)
	ex.res = p.rec.newStream(chrono.In, channel, modeOpaque)
	ex.req.ex, ex.res.ex = ex, ex
	return ex
}

// rewrite points the outgoing request at the target, keeping the path
// and query, and keeps the X-Forwarded-* headers the client sent (the
// reverse proxy removes them).
func (p *proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme, pr.Out.URL.Host = p.target.Scheme, p.target.Host
	pr.Out.Host = ""
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
}

// response records the response's head and taps its body.
func (p *proxy) response(res *http.Response) error {
	ex, _ := res.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return nil
	}
	p.rec.push(tap{op: opResHead, at: time.Now(), head: &httpHead{ex: ex, status: res.StatusCode,
		header: res.Header.Clone(), redact: p.redactHeader}}, ex.res, true)
	res.Body = &tapBody{rc: res.Body, rec: p.rec, s: ex.res, client: res.Request.Context(), remaining: -1}
	return nil
}

// failed is the reverse proxy's error handler: the server could not be
// reached, or the client went away before the response's headers.
func (p *proxy) failed(w http.ResponseWriter, req *http.Request, err error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	if req.Context().Err() != nil {
		p.rec.end(ex.res, endClientClosed, "", time.Now())
		return
	}
	p.rec.event(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindError, Channel: ex.channel,
		Text: chrono.Sanitize(fmt.Sprintf("the proxy could not forward the request to the server (%v): it answered 502 Bad Gateway", err), false)}, time.Now())
	w.WriteHeader(http.StatusBadGateway)
}

// redactHeader reports whether the record must hide a header's value.
func (p *proxy) redactHeader(name string) bool {
	return p.redact[http.CanonicalHeaderKey(name)] || transport.CredentialHeader(name)
}

// tapBody taps a body as it is read: a request's, read by the transport
// that sends it on, or a response's, read by the reverse proxy that
// copies it to the client.
type tapBody struct {
	rc  io.ReadCloser
	rec *Recorder
	s   *stream
	// client is the client's request context (responses only): ended,
	// it says that an error reading the body was the client going away.
	client context.Context
	// remaining counts down a declared length (requests only): the
	// transport may stop reading at it without seeing the end.
	remaining int64

	mu    sync.Mutex
	ended bool
}

func (b *tapBody) Read(p []byte) (int, error) {
	if b.remaining == 0 {
		// A request body read to its declared length is not read again.
		// The transport reads once more after the length (to see that
		// nothing follows); once the proxy has flushed the response's
		// head to the client, the server may have closed the client's
		// request body, and that read's error would make the transport
		// close the upstream connection under the response it is
		// streaming ("use of closed network connection").
		b.finish(endEOF, "", time.Now())
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	at := time.Now()
	if n > 0 {
		b.rec.data(b.s, p[:n], at)
	}
	if b.remaining > 0 {
		if b.remaining -= int64(n); b.remaining == 0 && err == nil {
			b.finish(endEOF, "", at)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.finish(endEOF, "", at)
	case b.client != nil && b.client.Err() != nil:
		b.finish(endClientClosed, "", at)
	default:
		b.finish(endFailed, chrono.Sanitize(err.Error(), false), at)
	}
	return n, err
}

// Close ends a body not read to its end: a response the reverse proxy
// stopped copying because the client went away, or a request body the
// transport did not read whole.
func (b *tapBody) Close() error {
	if b.client != nil {
		b.finish(endClientClosed, "", time.Now())
	} else {
		b.finish(endFailed, "the request body was not read to its end", time.Now())
	}
	return b.rc.Close()
}

// finish records the body's end once.
func (b *tapBody) finish(how endHow, text string, at time.Time) {
	b.mu.Lock()
	done := b.ended
	b.ended = true
	b.mu.Unlock()
	if !done {
		b.rec.end(b.s, how, text, at)
	}
}

// httpHead is a request's line and headers or a response's status and
// headers, as the recorder records them.
type httpHead struct {
	ex     *exchange
	method string // requests
	uri    string
	status int // responses
	header http.Header
	redact func(name string) bool
}

// head records an HTTP head and sets how the body that follows is
// framed.
func (r *Recorder) head(t *tap) {
	h := t.head
	ex := h.ex
	r.learnSecrets(h)
	e := chrono.Event{Channel: ex.channel, Kind: chrono.KindHTTP}
	enc := bodyEncoding(h.header)
	s := ex.req
	if t.op == opReqHead {
		e.Dir, e.Text = chrono.Out, h.method+" "+h.uri+" "+describeHeaders(h.header, h.redact)
	} else {
		s = ex.res
		e.Dir, e.Text = chrono.In, fmt.Sprintf("HTTP %d %s", h.status, describeHeaders(h.header, h.redact))
		switch mt := mediaType(h.header); {
		case mt == "text/event-stream":
			s.mode = modeSSE
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			s.mode = modeBody
		}
	}
	switch {
	case decodable(enc):
		s.decoder = r.startDecoder(s, enc)
		e.Text += " (" + enc + "-encoded: the body is recorded decoded)"
	case enc != "":
		s.mode = modeOpaque
		e.Text += " (" + enc + "-encoded: the body is recorded as it is, not decoded)"
	}
	e.Text = chrono.Sanitize(e.Text, false)
	r.emit(e, t.at)
}

// learnSecrets adds the values of the head's redacted headers to the
// recorder's redactor, so that the record hides them wherever the peer
// echoes them.
func (r *Recorder) learnSecrets(h *httpHead) {
	for name, values := range h.header {
		if !h.redact(name) {
			continue
		}
		for _, v := range values {
			secrets := []string{v}
			if _, rest, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				secrets = append(secrets, strings.TrimSpace(rest)) // "Bearer TOKEN"
			}
			for _, c := range strings.Split(v, ";") {
				if _, val, ok := strings.Cut(c, "="); ok {
					secrets = append(secrets, strings.TrimSpace(val)) // "a=TOKEN; b=…"
				}
			}
			r.redactor.Add(secrets...)
		}
	}
}

// mediaType is the body's media type, lower case, without parameters.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(h.Get("Content-Type")))
	}
	return mt
}

// describeHeaders renders headers for the record: Mcp-Session-Id and
// Mcp-Protocol-Version first, then the others sorted, "Name: value"
// joined by "; ", values of the headers redact names hidden.
func describeHeaders(h http.Header, redact func(string) bool) string {
	// The session and protocol version come first, so that they are
	// found in the same place of every text.
	first := [...]string{transport.HeaderSessionID, transport.HeaderProtocolVersion}
	names := make([]string, 0, len(h))
	for n := range h {
		if n != first[0] && n != first[1] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	add := func(n string) {
		vs, ok := h[n]
		if !ok {
			return
		}
		v := strings.Join(vs, ", ")
		if redact(n) {
			v = transport.RedactedValue(n, v)
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(n + ": " + v)
	}
	for _, n := range first {
		add(n)
	}
	for _, n := range names {
		add(n)
	}
	return b.String()
}

// SessionID reads the Mcp-Session-Id of an HTTP head event's text as the
// proxy records it, "" when it has none.
func SessionID(text string) string {
	i := strings.Index(text, " "+transport.HeaderSessionID+": ")
	if i < 0 {
		return ""
	}
	v := text[i+len(transport.HeaderSessionID)+3:]
	if j := strings.Index(v, "; "); j >= 0 {
		v = v[:j]
	}
	return v
}

// Listen listens for the proxy's clients on addr, "127.0.0.1:0" (a free
// port of the loopback interface) when empty. The proxy forwards the
// client's credentials and records its conversation, so it refuses an
// address other than a loopback one unless allowRemote is set.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("watch: listen address %q: %w", addr, err)
	}
	if !allowRemote && !loopbackHost(host) {
		return nil, fmt.Errorf("watch: refusing to listen on %q: not a loopback address (the proxy passes on credentials and records the conversation; allow a remote listener explicitly to do so)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !allowRemote && !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("watch: refusing to listen on %s: not a loopback address", tcp)
	}
	return ln, nil
}

// loopbackHost reports whether every address host names is a loopback
// one; "" (every interface) is not.
func loopbackHost(host string) bool {
	if host == "" {
		return false
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback()
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// Serve serves h on ln until ctx ends, recording each client connection
// opening and closing (KindState, channel "connection") when rec is not
// nil. When ctx ends, requests in flight get two seconds to finish; then
// every connection is closed, open event streams included, and Serve
// returns nil.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, rec *Recorder) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	if rec != nil {
		srv.ConnState = func(c net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				rec.Note(chrono.KindState, connectionChannel, "client connection "+c.RemoteAddr().String()+" opened")
			case http.StateClosed, http.StateHijacked:
				rec.Note(chrono.KindState, connectionChannel, "client connection "+c.RemoteAddr().String()+" closed")
			}
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	<-errc
	return nil
}

const (
	// shutdownGrace is how long Serve lets requests in flight finish.
	shutdownGrace = 2 * time.Second
	// connectionChannel names the channel of client connection events.
	connectionChannel = "connection"
)
