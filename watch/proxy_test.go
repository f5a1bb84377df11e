package watch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/report"
)

// received is what the scripted server received of one request.
type received struct {
	Method, URI string
	Header      http.Header
	Body        []byte
}

// bigJSON is a JSON-RPC response of several MB whose id comes last.
func bigJSON() []byte {
	return []byte(`{"result":{"content":[{"type":"text","text":"` + strings.Repeat("r", 6<<20) + `"}]},"jsonrpc":"2.0","id":3}`)
}

// sseScript is the event stream of the "sse" case: CRLF line endings, a
// comment, a priming event, a progress notification, the response.
const sseScript = ": stream opened\r\n\r\nid: 1\r\ndata:\r\n\r\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\r\n\r\n" +
	"id: 3\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\r\n\r\n"

// scriptedServer answers by path, and sends what it received of each
// request on got.
func scriptedServer(got chan<- received) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- received{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body}
		h := w.Header()
		switch r.URL.Path {
		case "/mcp":
			h.Set("Content-Type", "application/json")
			h.Set("Mcp-Session-Id", "session-1")
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"echo":` + fmt.Sprintf("%q", body) + `}}`))
		case "/garbage":
			h.Set("Content-Type", "application/json")
			w.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":\xff"))
		case "/big":
			h.Set("Content-Type", "application/json; charset=utf-8")
			w.Write(bigJSON())
		case "/sse":
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			w.Write([]byte(sseScript))
		case "/error":
			h.Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte("bad request: no session\n"))
		case "/accepted":
			w.WriteHeader(http.StatusAccepted)
		case "/options":
			h.Set("Allow", "GET, POST, DELETE, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	})
}

// exchangeCase is one request of the byte-exactness test.
type exchangeCase struct {
	method, path string
	body         []byte
	header       map[string]string
}

func byteCases() []exchangeCase {
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	return []exchangeCase{
		{method: "POST", path: "/mcp?x=1&y=%2F", body: init, header: map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}},
		{method: "POST", path: "/garbage", body: []byte("not json \xc3\x28"), header: map[string]string{"Content-Type": "application/json", "Mcp-Session-Id": "session-1"}},
		{method: "POST", path: "/big", body: []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"pad":"` + strings.Repeat("a", 4<<20) + `"}}}`),
			header: map[string]string{"Content-Type": "application/json", "Mcp-Session-Id": "session-1", "Mcp-Protocol-Version": "2025-11-25"}},
		{method: "POST", path: "/sse", body: []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"p"}}}`), header: map[string]string{"Content-Type": "application/json"}},
		{method: "GET", path: "/sse", header: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "2"}},
		{method: "POST", path: "/error", body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		{method: "POST", path: "/accepted", body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), header: map[string]string{"X-Forwarded-For": "10.0.0.1"}},
		{method: "DELETE", path: "/mcp", header: map[string]string{"Mcp-Session-Id": "session-1"}},
		{method: "OPTIONS", path: "/options", header: map[string]string{"Origin": "http://localhost:6274"}},
	}
}

// outcome is what a client received of one exchange, and what the
// server received of it.
type outcome struct {
	Status int
	Header http.Header
	Body   []byte
	Server received
}

// do runs c against base and returns what both sides received.
func do(t *testing.T, client *http.Client, base string, c exchangeCase, got <-chan received) outcome {
	t.Helper()
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", c.method, c.path, err)
	}
	o := outcome{Status: resp.StatusCode, Header: resp.Header.Clone(), Body: b}
	o.Header.Del("Date") // the time of the response
	select {
	case o.Server = <-got:
	case <-time.After(safety):
		t.Fatalf("%s %s: the server never saw the request", c.method, c.path)
	}
	return o
}

// testClient talks to the server or the proxy with nothing added of its
// own (no Accept-Encoding, no transparent decompression).
func testClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}}
}

// startProxy serves a proxy to target on a loopback port and returns its
// base URL.
func startProxy(t testing.TB, target string, rec *Recorder, redact ...string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, Proxy(ProxyConfig{Target: u, Recorder: rec, RedactHeaders: redact}), rec)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// TestProxyForwardsEveryByte: through the proxy, the client receives the
// status, headers and body it receives from the server directly, and the
// server the method, URI, headers and body the client sent, for JSON
// and event-stream responses, malformed bodies, a body of several MB,
// errors, GET, DELETE and OPTIONS; the record has each exchange's head,
// messages and session.
func TestProxyForwardsEveryByte(t *testing.T) {
	got := make(chan received, 1)
	srv := httptest.NewServer(scriptedServer(got))
	t.Cleanup(srv.Close) // after the proxy's cleanup, which closes its requests to srv
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec)
	client := testClient()
	for _, c := range byteCases() {
		direct := do(t, client, srv.URL, c, got)
		proxied := do(t, client, proxyURL, c, got)
		if diff := cmp.Diff(direct, proxied, cmp.Comparer(bytes.Equal)); diff != "" {
			t.Errorf("%s %s: direct and through the proxy differ (-direct +proxy):\n%.3000s", c.method, c.path, diff)
		}
		if c.body != nil && !bytes.Equal(proxied.Server.Body, c.body) {
			t.Errorf("%s %s: the server received %d bytes of %d", c.method, c.path, len(proxied.Server.Body), len(c.body))
		}
	}

	events := w.events(t)
	find := func(what string, match func(chrono.Event) bool) chrono.Event {
		t.Helper()
		for _, e := range events {
			if match(e) {
				return e
			}
		}
		t.Errorf("no event %s:\n%s", what, dump(events))
		return chrono.Event{}
	}
	find("POST #1 request head", func(e chrono.Event) bool {
		return e.Channel == "POST #1" && e.Kind == chrono.KindHTTP && e.Dir == chrono.Out &&
			strings.HasPrefix(e.Text, "POST /mcp?x=1&y=%2F Accept: application/json, text/event-stream; ")
	})
	find("POST #1 initialize", func(e chrono.Event) bool {
		return e.Channel == "POST #1" && e.Kind == chrono.KindFrame && e.Dir == chrono.Out && e.Summary.Method == "initialize"
	})
	resp := find("POST #1 response head", func(e chrono.Event) bool {
		return e.Channel == "POST #1" && e.Kind == chrono.KindHTTP && e.Dir == chrono.In && strings.HasPrefix(e.Text, "HTTP 200 Mcp-Session-Id: session-1; ")
	})
	if SessionID(resp.Text) != "session-1" {
		t.Errorf("SessionID(%q) = %q", resp.Text, SessionID(resp.Text))
	}
	find("POST #2 garbage out", func(e chrono.Event) bool {
		return e.Channel == "POST #2" && e.Kind == chrono.KindFrame && e.Dir == chrono.Out && e.Summary.Malformed == "invalid-utf8"
	})
	find("POST #2 garbage in", func(e chrono.Event) bool {
		return e.Channel == "POST #2" && e.Kind == chrono.KindFrame && e.Dir == chrono.In && e.Summary.Malformed == "invalid-utf8"
	})
	find("POST #3 large response", func(e chrono.Event) bool {
		return e.Channel == "POST #3" && e.Kind == chrono.KindFrame && e.Dir == chrono.In && e.Summary.ID == "3" &&
			e.Summary.Kind == "result" && e.Truncated && e.Size == len(bigJSON())
	})
	find("SSE POST #4 progress", func(e chrono.Event) bool {
		return e.Channel == "SSE POST #4" && e.Kind == chrono.KindFrame && e.Summary.Token == `"p"` && e.Text == "sse id=2"
	})
	find("SSE POST #4 end", func(e chrono.Event) bool {
		return e.Channel == "SSE POST #4" && e.Kind == chrono.KindNote && e.Text == "stream ended"
	})
	find("GET #1 head", func(e chrono.Event) bool {
		return e.Channel == "GET #1" && e.Kind == chrono.KindHTTP && strings.Contains(e.Text, "Last-Event-Id: 2") || strings.Contains(e.Text, "Last-Event-ID: 2")
	})
	find("POST #5 error body", func(e chrono.Event) bool {
		return e.Channel == "POST #5" && e.Kind == chrono.KindHTTP && e.Dir == chrono.In && string(e.Raw) == "bad request: no session\n"
	})
	find("DELETE #1 head", func(e chrono.Event) bool {
		return e.Channel == "DELETE #1" && e.Kind == chrono.KindHTTP && SessionID(e.Text) == "session-1"
	})
	find("OPTIONS #1 status", func(e chrono.Event) bool {
		return e.Channel == "OPTIONS #1" && e.Kind == chrono.KindHTTP && strings.HasPrefix(e.Text, "HTTP 204 ")
	})
	find("a client connection", func(e chrono.Event) bool {
		return e.Channel == "connection" && strings.HasPrefix(e.Text, "client connection 127.0.0.1:") && strings.HasSuffix(e.Text, " opened")
	})
}

// TestProxyDropsHopByHopHeaders: headers a proxy must not pass on (those
// that Connection names, Keep-Alive, TE…) are not forwarded; every other
// header is.
func TestProxyDropsHopByHopHeaders(t *testing.T) {
	got := make(chan received, 1)
	srv := httptest.NewServer(scriptedServer(got))
	t.Cleanup(srv.Close) // after the proxy's cleanup, which closes its requests to srv
	w := newWatched(t, RecorderConfig{})
	c := exchangeCase{method: "POST", path: "/mcp", body: []byte(`{}`), header: map[string]string{
		"Connection": "X-Test-Hop", "X-Test-Hop": "1", "X-Kept": "2", "User-Agent": "host/1.0"}}
	o := do(t, testClient(), startProxy(t, srv.URL, w.rec), c, got)
	if o.Server.Header.Get("X-Kept") != "2" || o.Server.Header.Get("User-Agent") != "host/1.0" ||
		o.Server.Header.Get("Connection") != "" || o.Server.Header.Get("X-Test-Hop") != "" {
		t.Errorf("the server got headers %v", o.Server.Header)
	}
	w.events(t)
}

// sseClient reads the events of a response one at a time.
type sseClient struct {
	resp  *http.Response
	lines *bufio.Reader
	raw   bytes.Buffer
}

// next reads one event (up to its blank line) and returns its bytes.
func (c *sseClient) next(t *testing.T) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := c.lines.ReadString('\n')
		c.raw.WriteString(line)
		ev.WriteString(line)
		if err != nil {
			t.Fatalf("reading an event: %v (got %q)", err, ev.String())
		}
		if line == "\n" {
			return ev.String()
		}
	}
}

// TestProxyStreamsEachEventAtOnce: two POSTs stream at once through the
// proxy, their events interleaved; the server sends each event only once
// the client has read the one before (of either stream), so a proxy that
// held back a single event would stall the test. Each client receives
// exactly the bytes its server wrote, and the record has each event on
// its stream's channel.
func TestProxyStreamsEachEventAtOnce(t *testing.T) {
	turns := map[string]chan string{"a": make(chan string), "b": make(chan string)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		turn := turns[r.URL.Query().Get("stream")]
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev, ok := <-turn:
				if !ok {
					return
				}
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close) // after the proxy's cleanup, which closes its requests to srv
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec)
	client := testClient()
	clients := map[string]*sseClient{}
	for i, name := range []string{"a", "b"} {
		req, _ := http.NewRequest("POST", proxyURL+"/mcp?stream="+name, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call"}`, i+1)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		clients[name] = &sseClient{resp: resp, lines: bufio.NewReader(resp.Body)}
	}
	guard := time.AfterFunc(safety, func() {
		for _, c := range clients {
			c.resp.Body.Close()
		}
	})
	defer guard.Stop()
	wrote := map[string]*strings.Builder{"a": {}, "b": {}}
	steps := []struct{ stream, event string }{
		{"a", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"a\",\"progress\":1}}\n\n"},
		{"b", "id: b1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"b\",\"progress\":1}}\n\n"},
		{"a", ": keep-alive\n\n"},
		{"b", "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"},
		{"a", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"},
	}
	for _, s := range steps {
		turns[s.stream] <- s.event
		wrote[s.stream].WriteString(s.event)
		if got := clients[s.stream].next(t); got != s.event {
			t.Fatalf("stream %s: read %q, the server wrote %q", s.stream, got, s.event)
		}
	}
	for name, turn := range turns {
		close(turn)
		rest, err := io.ReadAll(clients[name].lines)
		if err != nil || len(rest) != 0 {
			t.Errorf("stream %s: after the last event %q, %v", name, rest, err)
		}
		if got := clients[name].raw.String(); got != wrote[name].String() {
			t.Errorf("stream %s: the client got %q, the server wrote %q", name, got, wrote[name].String())
		}
	}
	events := w.events(t)
	var order []string
	for _, e := range events {
		if strings.HasPrefix(e.Channel, "SSE POST #") && (e.Kind == chrono.KindFrame || e.Kind == chrono.KindHTTP) {
			order = append(order, e.Channel+" "+e.Text)
		}
	}
	want := []string{"SSE POST #1 sse", "SSE POST #2 sse id=b1", "SSE POST #1 sse comments=1", "SSE POST #2 sse", "SSE POST #1 sse"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("events recorded (-want +got):\n%s\n%s", diff, dump(events))
	}
}

// TestProxyClientClosesStream: a client that closes the response stream
// of its request before the response is recorded as having done so (how
// a client cancels from 2026-07-28 on); the server sees the stream close;
// one that closes after the response, or a GET stream, gets a note; one
// that gives up before the response's headers is recorded on the POST's
// channel; and the proxy goes on serving other clients.
func TestProxyClientClosesStream(t *testing.T) {
	serverSawClose := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mode := r.URL.Query().Get("mode")
		if mode == "no-headers" {
			<-r.Context().Done()
			serverSawClose <- mode
			return
		}
		if mode == "json" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":9,"result":{}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		if mode == "answered" {
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\n")
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		serverSawClose <- mode
	}))
	t.Cleanup(srv.Close) // after the proxy's cleanup, which closes its requests to srv
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec)
	client := testClient()

	open := func(method, mode string, id int) (*sseClient, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow"}}`, id))
		}
		req, _ := http.NewRequestWithContext(ctx, method, proxyURL+"/mcp?mode="+mode, body)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return &sseClient{resp: resp, lines: bufio.NewReader(resp.Body)}, cancel
	}
	sawClose := func(mode string) {
		t.Helper()
		select {
		case m := <-serverSawClose:
			if m != mode {
				t.Fatalf("the server saw %q close, want %q", m, mode)
			}
		case <-time.After(safety):
			t.Fatalf("the server never saw the %s stream close", mode)
		}
	}

	c, cancel := open("POST", "cancel", 7)
	c.next(t)
	cancel()
	sawClose("cancel")
	w.sink.waitFor(t, "the client closing SSE POST #1", func(e chrono.Event) bool {
		return e.Channel == "SSE POST #1" && e.Kind == chrono.KindDecision && e.Text == ClientClosedText("7")
	})

	c, cancel = open("POST", "answered", 8)
	c.next(t)
	c.next(t)
	cancel()
	sawClose("answered")
	w.sink.waitFor(t, "the client closing SSE POST #2 after its response", func(e chrono.Event) bool {
		return e.Channel == "SSE POST #2" && e.Kind == chrono.KindNote && e.Text == "the client closed the response stream of request 8 after its response"
	})

	c, cancel = open("GET", "get", 0)
	c.next(t)
	cancel()
	sawClose("get")
	w.sink.waitFor(t, "the client closing SSE GET #1", func(e chrono.Event) bool {
		return e.Channel == "SSE GET #1" && e.Kind == chrono.KindNote && e.Text == "the client closed the response stream"
	})

	ctx, cancelHeaders := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", proxyURL+"/mcp?mode=no-headers", strings.NewReader(`{"jsonrpc":"2.0","id":"h","method":"tools/call"}`))
	errc := make(chan error, 1)
	go func() {
		_, err := client.Do(req)
		errc <- err
	}()
	// The server has the request once its frame is recorded.
	w.sink.waitFor(t, "the no-headers request", func(e chrono.Event) bool { return e.Channel == "POST #3" && e.Kind == chrono.KindFrame })
	cancelHeaders()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's request ended with %v", err)
	}
	sawClose("no-headers")
	w.sink.waitFor(t, "the client giving up on POST #3", func(e chrono.Event) bool {
		return e.Channel == "POST #3" && e.Kind == chrono.KindDecision && e.Text == ClientClosedText(`"h"`)
	})

	// Still serving.
	resp, err := client.Post(proxyURL+"/mcp?mode=json", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Errorf("after the closes, a request got %q", b)
	}
	w.events(t)
}

// TestProxyRedactsCredentialsInTheRecordOnly: credential headers reach
// the server unchanged and the server's echo of them reaches the client
// unchanged; the record shows neither the headers' values nor the echo.
func TestProxyRedactsCredentialsInTheRecordOnly(t *testing.T) {
	got := make(chan received, 1)
	srv := httptest.NewServer(scriptedServer(got))
	t.Cleanup(srv.Close) // after the proxy's cleanup, which closes its requests to srv
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec, "X-Tenant")
	secrets := map[string]string{
		"Authorization": "Bearer sekret-token-123456",
		"Cookie":        "sid=cookie-value-987654; theme=dark",
		"X-Tenant":      "tenant-id-555555",
	}
	c := exchangeCase{method: "POST", path: "/mcp", header: secrets,
		body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"token":"sekret-token-123456"}}`)}
	o := do(t, testClient(), proxyURL, c, got)
	for k, v := range secrets {
		if o.Server.Header.Get(k) != v {
			t.Errorf("the server got %s: %q, want %q", k, o.Server.Header.Get(k), v)
		}
	}
	if !bytes.Contains(o.Body, []byte("sekret-token-123456")) {
		t.Errorf("the client did not get the server's echo: %s", o.Body)
	}
	w.events(t)
	record := string(w.jsonl.Bytes())
	for _, leak := range []string{"sekret-token-123456", "cookie-value-987654", "tenant-id-555555"} {
		if strings.Contains(record, leak) {
			t.Errorf("the record holds %q:\n%s", leak, record)
		}
	}
	for _, want := range []string{"Authorization: Bearer [redacted]", "Cookie: [redacted]", "X-Tenant: [redacted]"} {
		if !strings.Contains(record, want) {
			t.Errorf("the record does not show %q:\n%s", want, record)
		}
	}
}

// TestProxyUnreachableServer: a server that cannot be reached is
// answered 502 and recorded as an error of the exchange.
func TestProxyUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	w := newWatched(t, RecorderConfig{})
	resp, err := testClient().Post(startProxy(t, dead, w.rec)+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d", resp.StatusCode)
	}
	w.sink.waitFor(t, "the error", func(e chrono.Event) bool {
		return e.Channel == "POST #1" && e.Kind == chrono.KindError && strings.HasPrefix(e.Text, "the proxy could not forward the request to the server") &&
			strings.HasSuffix(e.Text, "it answered 502 Bad Gateway")
	})
	w.events(t)
}

// TestListenLoopbackOnly: the proxy listens on a loopback address unless
// a remote one is explicitly allowed.
func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if ln, err := Listen(addr, false); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted a non-loopback address", addr)
		} else if !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("Listen(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"", "127.0.0.1:0", "localhost:0"} {
		ln, err := Listen(addr, false)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		if !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
			t.Errorf("Listen(%q) listens on %s", addr, ln.Addr())
		}
		ln.Close()
	}
	ln, err := Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatalf("an allowed remote address: %v", err)
	}
	ln.Close()
}

// TestDescribeHeadersPutsSessionFirst: the session and protocol version
// lead a head's text, the others follow sorted, credentials redacted.
func TestDescribeHeadersPutsSessionFirst(t *testing.T) {
	h := http.Header{"Zeta": {"z"}, "Mcp-Protocol-Version": {"2025-11-25"}, "Accept": {"a", "b"}, "Mcp-Session-Id": {"s; 1"}, "Authorization": {"Basic abc"}}
	got := describeHeaders(h, func(n string) bool { return n == "Authorization" })
	want := "Mcp-Session-Id: s; 1; Mcp-Protocol-Version: 2025-11-25; Accept: a, b; Authorization: Basic [redacted]; Zeta: z"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if SessionID("POST /mcp "+describeHeaders(http.Header{"Mcp-Session-Id": {"abc"}}, func(string) bool { return false })) != "abc" {
		t.Error("SessionID does not read the session of a head")
	}
	if SessionID("POST /mcp Accept: x") != "" {
		t.Error("SessionID found a session in a head without one")
	}
}

// TestProxyServerDiesMidStream: a server that drops the connection in the
// middle of an event stream: the client gets through the proxy the same
// bytes and the same broken stream it gets directly, and the record says
// the stream failed before the response to its request.
func TestProxyServerDiesMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":5,\"progress\":1}}\n\ndata: {\"jsonrpc\"")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // dies without ending the chunked body
		}
	}))
	t.Cleanup(srv.Close)
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec)
	client := testClient()
	read := func(base string) (string, error) {
		resp, err := client.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	direct, derr := read(srv.URL)
	proxied, perr := read(proxyURL)
	if derr == nil || perr == nil || direct != proxied {
		t.Errorf("directly: %q, %v\nthrough the proxy: %q, %v", direct, derr, proxied, perr)
	}
	w.sink.waitFor(t, "the failed stream", func(e chrono.Event) bool {
		return e.Channel == "SSE POST #1" && e.Kind == chrono.KindError && strings.HasPrefix(e.Text, "the response stream failed: ") &&
			strings.HasSuffix(e.Text, "(before the response to request 5)")
	})
	w.events(t)
}

// TestProxyRecordsCompressedBodiesDecoded: a gzip or deflate body passes
// to the client compressed as the server sent it, and is recorded
// decoded, as frames; a body in an encoding the recorder cannot decode
// (br) is recorded as it is, and says so.
func TestProxyRecordsCompressedBodiesDecoded(t *testing.T) {
	compress := func(enc, s string) []byte {
		var b bytes.Buffer
		var w io.WriteCloser
		switch enc {
		case "gzip":
			w = gzip.NewWriter(&b)
		case "deflate":
			w = zlib.NewWriter(&b)
		case "raw-deflate":
			w, _ = flate.NewWriter(&b, flate.DefaultCompression)
		default:
			return []byte(s)
		}
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	sse := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"z\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"pad\":\"" + strings.Repeat("x", 200<<10) + "\"}}\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		enc := r.URL.Query().Get("enc")
		header := enc
		if enc == "raw-deflate" {
			header = "deflate"
		}
		w.Header().Set("Content-Encoding", header)
		if r.URL.Query().Get("type") == "sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			body := compress(enc, sse)
			w.Write(body[:len(body)/2]) // in two pieces
			w.(http.Flusher).Flush()
			w.Write(body[len(body)/2:])
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(compress(enc, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	}))
	t.Cleanup(srv.Close)
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec)
	client := testClient()
	get := func(base, query string) []byte {
		resp, err := client.Post(base+"/mcp?"+query, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	queries := []string{"enc=gzip", "enc=deflate", "enc=raw-deflate", "enc=gzip&type=sse", "enc=br"}
	for _, q := range queries {
		if direct, proxied := get(srv.URL, q), get(proxyURL, q); !bytes.Equal(direct, proxied) {
			t.Errorf("%s: the client got %d bytes through the proxy, %d directly", q, len(proxied), len(direct))
		}
	}
	events := w.events(t)
	for i, want := range []struct{ channel, text string }{
		{"POST #1", "gzip-encoded: the body is recorded decoded"},
		{"POST #2", "deflate-encoded: the body is recorded decoded"},
		{"POST #3", "deflate-encoded: the body is recorded decoded"},
	} {
		var head, frame bool
		for _, e := range events {
			head = head || e.Channel == want.channel && e.Kind == chrono.KindHTTP && strings.HasSuffix(e.Text, "("+want.text+")")
			frame = frame || e.Channel == want.channel && e.Kind == chrono.KindFrame && e.Dir == chrono.In && e.Summary.ID == "1" && e.Summary.Kind == "result"
		}
		if !head || !frame {
			t.Errorf("%s: head %v, decoded frame %v:\n%s", queries[i], head, frame, dump(events))
		}
	}
	var sseFrames []chrono.Event
	var br bool
	for _, e := range events {
		if e.Channel == "SSE POST #4" && e.Kind == chrono.KindFrame {
			sseFrames = append(sseFrames, e)
		}
		br = br || e.Channel == "POST #5" && strings.HasSuffix(e.Text, "(br-encoded: the body is recorded as it is, not decoded)")
	}
	if len(sseFrames) != 2 || sseFrames[0].Summary.Token != `"z"` || sseFrames[1].Summary.ID != "2" || sseFrames[1].Size != len(strings.SplitN(sse, "\n\n", 2)[1])-len("data: ")-2 {
		t.Errorf("the gzip event stream recorded as:\n%s", dump(sseFrames))
	}
	if !br {
		t.Errorf("the br body not recorded as such:\n%s", dump(events))
	}
}

// TestRecordRendersAsASequence: a recorded conversation reads back and
// renders as "mcpflight show" renders a chronology, arrows for frames
// both ways, the untrusted bytes sanitised.
func TestRecordRendersAsASequence(t *testing.T) {
	got := make(chan received, 1)
	srv := httptest.NewServer(scriptedServer(got))
	t.Cleanup(srv.Close)
	w := newWatched(t, RecorderConfig{})
	proxyURL := startProxy(t, srv.URL, w.rec)
	do(t, testClient(), proxyURL, byteCases()[3], got) // a POST answered with an event stream
	do(t, testClient(), proxyURL, exchangeCase{method: "POST", path: "/garbage", body: []byte("\x1b[31mred\x1b[0m")}, got)
	events := w.events(t)
	var out strings.Builder
	if err := report.Sequence(&out, events, report.SequenceOptions{}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{`request tools/call id=4 progressToken="p" [POST #1]`,
		`notification notifications/progress progressToken="p" [SSE POST #1]`, "result id=4 [SSE POST #1]",
		"malformed frame (invalid-utf8) [POST #2]"} {
		if !strings.Contains(text, want) {
			t.Errorf("the sequence does not show %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("the sequence holds a raw escape:\n%q", text)
	}
}

// closedAfter is a request body that fails once its content has been
// read, as the server's body of a client's request does once the
// response's head was flushed.
type closedAfter struct{ r io.Reader }

func (c *closedAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, errors.New("http: invalid Read on closed Body")
	}
	return n, err
}

func (c *closedAfter) Close() error { return nil }

// TestRequestBodyNotReadPastItsLength: the tap of a request body with a
// declared length ends at that length without reading the client's body
// again. The transport reads once more after the length; had that read
// reached a body the server closed after the response's head was
// flushed, its error would close the upstream connection under the
// response being streamed (one forwarded call in about 30 lost its
// answer so, "use of closed network connection").
func TestRequestBodyNotReadPastItsLength(t *testing.T) {
	t.Parallel()
	rec := NewRecorder(RecorderConfig{})
	defer rec.Close(context.Background())
	const body = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	ex := (&proxy{rec: rec, counts: map[string]int{}}).newExchange(http.MethodPost)
	b := &tapBody{rc: &closedAfter{r: strings.NewReader(body)}, rec: rec, s: ex.req, remaining: int64(len(body))}
	got, err := io.ReadAll(b)
	if err != nil || string(got) != body {
		t.Fatalf("read %q, %v; want the body and its end", got, err)
	}
	if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("a read after the length: %d, %v; want 0, EOF", n, err)
	}
}
