package hostile

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpflight/mcpflight/mcp"
)

// The HTTP modes. Each attacks only POSTed tools/call requests (but
// bad-session-id, which attacks the session itself); everything else
// goes to the reference server unchanged, so that ping, tools/list and
// the handshake keep working.
const (
	// SlowHeaders never writes the response headers of a tools/call; it
	// holds the request until the client gives up.
	SlowHeaders Mode = "slow-headers"
	// SilentSSE answers a tools/call with 200 text/event-stream, flushes
	// the headers, then never sends an event.
	SilentSSE Mode = "silent-sse"
	// HugeEvent answers a tools/call with an SSE stream holding one
	// single 1 GB data field, streamed in chunks, until the client goes.
	HugeEvent Mode = "huge-event"
	// RedirectLoop answers a tools/call with 307 to the same URL.
	RedirectLoop Mode = "redirect-loop"
	// Status500 answers a tools/call with HTTP 500 and a hostile body
	// (terminal escapes, a script tag).
	Status500 Mode = "status-500"
	// WrongContentType answers a tools/call with 200, Content-Type
	// text/html and a JSON-RPC response as the body.
	WrongContentType Mode = "wrong-content-type"
	// NonJSONBody answers a tools/call with 200 application/json whose
	// body is not JSON.
	NonJSONBody Mode = "non-json-body"
	// BadSessionID gives the client a session ID with a space and
	// non-ASCII bytes, legal in an HTTP header but forbidden by HTTP-48,
	// and maps it to the reference server's own ID both ways, so that
	// the session otherwise works.
	BadSessionID Mode = "bad-session-id"
)

// HugeEventSize is the size of HugeEvent's one data field: 1 GB.
const HugeEventSize = 1 << 30

// HostileBody is the body of Status500: terminal escapes and a script
// tag, which no console, log or report may render as such.
const HostileBody = "\x1b[2J\x1b[31mserver on fire\x1b[0m\x07 <script>alert('mcpflight')</script>\n"

// NotJSON is the body of NonJSONBody.
const NotJSON = "<html><body>this is not JSON {\"jsonrpc\":</body></html>\n"

// httpModes are the modes of Handler.
var httpModes = []Info{
	{SlowHeaders, TransportHTTP, "tools/call: never write the response headers; hold the request until the client gives up"},
	{SilentSSE, TransportHTTP, "tools/call: 200 text/event-stream, headers flushed, then never an event"},
	{HugeEvent, TransportHTTP, "tools/call: an SSE stream of one single 1 GB data: event, streamed in chunks until the client goes"},
	{RedirectLoop, TransportHTTP, "tools/call: 307 Temporary Redirect to the same URL, forever"},
	{Status500, TransportHTTP, "tools/call: HTTP 500 with a hostile body (ANSI escapes, a <script> tag)"},
	{WrongContentType, TransportHTTP, "tools/call: 200 with Content-Type text/html and a JSON-RPC response as the body"},
	{NonJSONBody, TransportHTTP, "tools/call: 200 application/json whose body is not JSON"},
	{BadSessionID, TransportHTTP, "a session ID with a space and non-ASCII bytes (forbidden by HTTP-48), mapped to the real one both ways"},
}

// maxPeek bounds the bytes of a POST body read to find its method; a
// larger body is not attacked and reaches the inner handler whole.
const maxPeek = 1 << 20

// Handler wraps the reference server's Streamable HTTP handler inner with
// mode's misbehaviour. An unknown mode (Lookup refuses them) is inner.
func Handler(mode Mode, inner http.Handler) http.Handler {
	switch mode {
	case BadSessionID:
		return &sessionMapper{inner: inner, toReal: map[string]string{}}
	case SlowHeaders, SilentSSE, HugeEvent, RedirectLoop, Status500, WrongContentType, NonJSONBody:
		return &toolsCallAttack{mode: mode, inner: inner}
	}
	return inner
}

// toolsCallAttack attacks POSTed tools/call requests.
type toolsCallAttack struct {
	mode  Mode
	inner http.Handler
}

// peek reads the start of a POST body and returns the JSON-RPC request's
// method and raw id ("" and nil when it is not a request), restoring the
// body for the inner handler.
func peek(r *http.Request) (method string, id json.RawMessage) {
	if r.Method != http.MethodPost || r.Body == nil {
		return "", nil
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > maxPeek {
		return "", nil
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(head, &m) != nil || len(m.ID) == 0 {
		return "", nil
	}
	return m.Method, m.ID
}

func (a *toolsCallAttack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method, id := peek(r)
	if method != mcp.MethodToolsCall {
		a.inner.ServeHTTP(w, r)
		return
	}
	switch a.mode {
	case SlowHeaders:
		<-r.Context().Done()
	case SilentSSE:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	case HugeEvent:
		hugeEvent(w, r)
	case RedirectLoop:
		w.Header().Set("Location", r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	case Status500:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, HostileBody)
	case WrongContentType:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"served as text/html"}]}}`)
	case NonJSONBody:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, NotJSON)
	}
}

// hugeEvent streams one SSE event whose data field is HugeEventSize bytes,
// from one reused chunk (nothing of it is held in memory), and stops as
// soon as a write fails or the request's context ends: the client went.
func hugeEvent(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if _, err := io.WriteString(w, "id: huge-1\ndata: "); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("A"), 64<<10)
	for sent := 0; sent < HugeEventSize; sent += len(chunk) {
		if r.Context().Err() != nil {
			return
		}
		if _, err := w.Write(chunk[:min(len(chunk), HugeEventSize-sent)]); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "\n\n")
}

// sessionMapper replaces the inner server's session IDs with invisible
// ones on the way out and back on the way in.
type sessionMapper struct {
	inner http.Handler
	mu    sync.Mutex
	// toReal maps a bad ID to the inner one.
	toReal map[string]string
}

// badID is the session ID the client sees for the inner ID real: a space
// and non-ASCII bytes inside (leading and trailing spaces would be
// trimmed by any HTTP parser).
func badID(real string) string { return "mcp session " + real + " \u00e9t\u00e9" }

func (m *sessionMapper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get("Mcp-Session-Id"); v != "" {
		m.mu.Lock()
		real, ok := m.toReal[v]
		m.mu.Unlock()
		if ok {
			r.Header.Set("Mcp-Session-Id", real)
		}
	}
	m.inner.ServeHTTP(&mappedWriter{ResponseWriter: w, m: m}, r)
}

// mappedWriter rewrites the Mcp-Session-Id response header before the
// headers go out.
type mappedWriter struct {
	http.ResponseWriter
	m    *sessionMapper
	done bool
}

func (mw *mappedWriter) rewrite() {
	if mw.done {
		return
	}
	mw.done = true
	h := mw.ResponseWriter.Header()
	real := h.Get("Mcp-Session-Id")
	if real == "" || strings.HasPrefix(real, "mcp session ") {
		return
	}
	bad := badID(real)
	mw.m.mu.Lock()
	mw.m.toReal[bad] = real
	mw.m.mu.Unlock()
	h.Set("Mcp-Session-Id", bad)
}

// WriteHeader rewrites the session ID, then writes the status.
func (mw *mappedWriter) WriteHeader(code int) {
	mw.rewrite()
	mw.ResponseWriter.WriteHeader(code)
}

// Write rewrites the session ID if the headers are not out yet.
func (mw *mappedWriter) Write(p []byte) (int, error) {
	mw.rewrite()
	return mw.ResponseWriter.Write(p)
}

// Flush rewrites the session ID if the headers are not out yet, then
// flushes.
func (mw *mappedWriter) Flush() {
	mw.rewrite()
	if f, ok := mw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (mw *mappedWriter) Unwrap() http.ResponseWriter { return mw.ResponseWriter }
