package refserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// wantNullParseError reads the next frame and checks that it is a parse
// error with id null (RPC-11).
func wantNullParseError(t *testing.T, h *harness) *jsonrpc.Message {
	t.Helper()
	f, _ := h.next()
	if f.msg == nil || f.msg.Kind != jsonrpc.KindError || !f.msg.NullID || f.msg.Error.Code != jsonrpc.CodeParseError {
		t.Fatalf("got %.300s, want error -32700 with id null", f.raw)
	}
	return f.msg
}

// TestHugeLineIsSkippedUnbuffered sends one 100 MB line: the server skips
// it without holding it in memory, answers a parse error with id null and
// still answers the ping that follows.
func TestHugeLineIsSkippedUnbuffered(t *testing.T) {
	h := newHarness(t)
	const size = 100 << 20
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	if _, err := io.WriteString(h.in, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < size; n += len(chunk) {
		if _, err := h.in.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	h.send(`"}}`)
	wantNullParseError(t, h)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	h.result("ping", nil, nil)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("100 MB line skipped in %v; %.1f MiB allocated meanwhile (whole process)", elapsed, float64(alloc)/(1<<20))
	// Holding the line would allocate at least its size; skipping it
	// allocates about one read buffer.
	if alloc > size/2 {
		t.Errorf("%d bytes allocated while skipping a %d-byte line: the frame was buffered", alloc, size)
	}
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestMaxFrameOption: a frame one byte over Options.MaxFrame is refused,
// one at the limit is handled.
func TestMaxFrameOption(t *testing.T) {
	const limit = 200
	h := newHarnessWith(t, Options{MaxFrame: limit})
	head := `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`
	tail := `"}}`
	fit := head + strings.Repeat("x", limit-len(head)-len(tail)) + tail
	h.send(fit + "x")
	m := wantNullParseError(t, h)
	if !strings.Contains(string(m.Error.Data), "frame-too-large") {
		t.Errorf("error data %s does not name the class", m.Error.Data)
	}
	h.send(fit)
	if m := h.waitResponse(jsonrpc.StringID("big")); m.Kind != jsonrpc.KindResult {
		t.Errorf("frame at the limit: got %s, want a result", m.Kind)
	}
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestHTTPBodyTooLarge: a POST body over the limit gets 413, with or
// without a Content-Length, and the session stays usable.
func TestHTTPBodyTooLarge(t *testing.T) {
	const limit = 512
	f := newHTTPFixtureWith(t, Options{MaxFrame: limit})
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", limit) + `"}}`
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(body) // hides the length: chunked encoding
		}
		req, _ := http.NewRequest(http.MethodPost, f.ts.URL, body)
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", f.sid)
		resp, err := f.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked=%v: status %d, want 413 (%s)", chunked, resp.StatusCode, b)
			continue
		}
		if m, err := jsonrpc.Decode(b); err != nil || m.Kind != jsonrpc.KindError || !m.NullID || m.Error.Code != jsonrpc.CodeParseError {
			t.Errorf("chunked=%v: body %s, want a parse error with id null", chunked, b)
		}
	}
	resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
		t.Errorf("ping after 413: %d %s", resp.StatusCode, body)
	}
}

// idSet collects the request IDs a hook reports and lets a test wait for
// one, so that a test synchronises on the server's own events.
type idSet struct {
	mu      sync.Mutex
	seen    map[jsonrpc.ID]int
	changed chan struct{}
}

func newIDSet() *idSet { return &idSet{seen: map[jsonrpc.ID]int{}, changed: make(chan struct{})} }

func (s *idSet) add(id jsonrpc.ID) {
	s.mu.Lock()
	s.seen[id]++
	ch := s.changed
	s.changed = make(chan struct{})
	s.mu.Unlock()
	close(ch)
}

// wait blocks until id has been added.
func (s *idSet) wait(t testing.TB, id jsonrpc.ID) {
	t.Helper()
	deadline := time.After(safety)
	for {
		s.mu.Lock()
		n, ch := s.seen[id], s.changed
		s.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("request %s never left the in-flight count", id)
		}
	}
}

// doneHook reports to set every request goroutine that has ended.
func doneHook(set *idSet) func(string, jsonrpc.ID) {
	return func(stage string, id jsonrpc.ID) {
		if stage == hookDone {
			set.add(id)
		}
	}
}

func wantTooMany(t *testing.T, m *jsonrpc.Message, limit int) {
	t.Helper()
	if m.Kind != jsonrpc.KindError || m.Error.Code != mcp.CodeTooManyRequests || !strings.Contains(m.Error.Message, "limit "+strconv.Itoa(limit)) {
		t.Fatalf("got %s, want error %d naming limit %d", m.Raw, mcp.CodeTooManyRequests, limit)
	}
}

// TestInFlightLimit fills a session with requests that stay in flight on
// purpose (a gated operation, awaits), floods it with more, and checks
// that every extra request is refused at once without a goroutine, that a
// refused request changes nothing, that a ping is answered with its empty
// result all the same (PNG-1: it holds no work), and that a freed slot is
// usable again.
func TestInFlightLimit(t *testing.T) {
	const limit = 3
	done := newIDSet()
	h := newHarnessWith(t, Options{MaxInFlight: limit, hook: doneHook(done)})
	h.slow(jsonrpc.StringID("s1"), nil, map[string]any{"key": "k1"})
	h.request(jsonrpc.StringID("w1"), mcp.MethodControlAwait, map[string]any{"checkpoint": "never/1"})
	h.request(jsonrpc.StringID("w2"), mcp.MethodControlAwait, map[string]any{"checkpoint": "never/2"})

	const flood = 500
	for i := range flood {
		method := "tools/list"
		if i%2 == 1 {
			method = "ping"
		}
		h.request(jsonrpc.IntID(int64(i)), method, nil)
	}
	// A refused call must not claim its key.
	h.slow(jsonrpc.StringID("s2"), nil, map[string]any{"key": "k2", "gated": false, "steps": 1})
	live := h.srv.live.Load()
	for i := range flood {
		m := h.waitResponse(jsonrpc.IntID(int64(i)))
		if i%2 == 1 {
			if m.Kind != jsonrpc.KindResult || string(m.Result) != "{}" {
				t.Fatalf("ping over the limit: %s; want an empty result (PNG-1)", m.Raw)
			}
			continue
		}
		wantTooMany(t, m, limit)
	}
	wantTooMany(t, h.waitResponse(jsonrpc.StringID("s2")), limit)
	t.Logf("after %d requests over the limit: %d server goroutines live (limit %d, plus the reader)", flood+1, live, limit)
	if live > limit+1 {
		t.Errorf("%d goroutines live for %d requests in flight", live, limit)
	}

	h.cancelReq(jsonrpc.StringID("w1"))
	done.wait(t, jsonrpc.StringID("w1"))
	h.slow(jsonrpc.StringID("s2"), nil, map[string]any{"key": "k2", "gated": false, "steps": 1})
	if m := h.waitResponse(jsonrpc.StringID("s2")); m.Kind != jsonrpc.KindResult {
		t.Fatalf("call after a slot was freed: %s", m.Raw)
	}
	done.wait(t, jsonrpc.StringID("s2"))
	h.result("ping", nil, nil)
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if n := h.srv.live.Load(); n != 0 {
		t.Errorf("%d goroutines left after Serve", n)
	}
}

// postStream starts a streamed POST and returns once its headers are in,
// that is once the request was admitted.
func (f *httpFixture) postStream(ctx context.Context, body string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.ts.URL, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", f.sid)
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f.t.Fatalf("streamed POST: %d %s", resp.StatusCode, b)
	}
	return resp
}

// TestHTTPInFlightLimit is TestInFlightLimit over Streamable HTTP: the
// refusal is the POST's JSON response, and the session stays usable.
func TestHTTPInFlightLimit(t *testing.T) {
	const limit = 2
	done := newIDSet()
	f := newHTTPFixtureWith(t, Options{MaxInFlight: limit, hook: doneHook(done)})
	ctx, cancel := context.WithTimeout(context.Background(), safety) // safety net
	defer cancel()
	a := f.postStream(ctx, `{"jsonrpc":"2.0","id":"w1","method":"mcpflight/await","params":{"checkpoint":"never/1"}}`)
	defer a.Body.Close()
	b := f.postStream(ctx, `{"jsonrpc":"2.0","id":"w2","method":"mcpflight/await","params":{"checkpoint":"never/2"}}`)
	defer b.Body.Close()
	for i := range 50 {
		resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k`+strconv.Itoa(i)+`"}}}`, nil)
		m, err := jsonrpc.Decode([]byte(body))
		if resp.StatusCode != 200 || err != nil || m.ID != jsonrpc.IntID(int64(i)) {
			t.Fatalf("request over the limit: %d %s", resp.StatusCode, body)
		}
		wantTooMany(t, m, limit)
	}
	if resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"over","method":"ping"}`, nil); resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
		t.Errorf("ping over the limit: %d %s; want its empty result (PNG-1)", resp.StatusCode, body)
	}
	if resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w1"}}`, nil); resp.StatusCode != 202 {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	done.wait(t, jsonrpc.StringID("w1"))
	if resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"p","method":"ping"}`, nil); resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
		t.Errorf("ping after a slot was freed: %d %s", resp.StatusCode, body)
	}
}

// panicHook panics at the reader for id "boom-reader" and in the handler
// goroutine for id "boom-handler".
func panicHook(stage string, id jsonrpc.ID) {
	switch {
	case stage == hookReader && id == jsonrpc.StringID("boom-reader"):
		panic("injected reader panic")
	case stage == hookHandler && id == jsonrpc.StringID("boom-handler"):
		panic("injected handler panic")
	}
}

// TestPanicIsAnsweredAndSessionGoesOn: a panic while a request is routed
// or handled is answered with -32603 for that request, logged with its
// stack, and the session goes on.
func TestPanicIsAnsweredAndSessionGoesOn(t *testing.T) {
	h := newHarnessWith(t, Options{hook: panicHook})
	for _, id := range []string{"boom-reader", "boom-handler"} {
		h.request(jsonrpc.StringID(id), "tools/list", nil)
		wantError(t, h.waitResponse(jsonrpc.StringID(id)), jsonrpc.CodeInternalError)
	}
	h.stderr.wait(t, "injected reader panic")
	h.stderr.wait(t, "injected handler panic")
	h.stderr.wait(t, "goroutine ") // the stack
	h.result("ping", nil, nil)
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, id := range []string{"boom-reader", "boom-handler"} {
		if n := len(h.responsesTo(jsonrpc.StringID(id))); n != 1 {
			t.Errorf("%s answered %d times", id, n)
		}
	}
	if n := h.srv.live.Load(); n != 0 {
		t.Errorf("%d goroutines left after Serve", n)
	}
}

// TestHTTPPanicIsAnswered is the same over Streamable HTTP.
func TestHTTPPanicIsAnswered(t *testing.T) {
	f := newHTTPFixtureWith(t, Options{hook: panicHook})
	for _, id := range []string{"boom-reader", "boom-handler"} {
		resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"`+id+`","method":"tools/list"}`, nil)
		m, err := jsonrpc.Decode([]byte(body))
		if resp.StatusCode != 200 || err != nil || m.Kind != jsonrpc.KindError || m.Error.Code != jsonrpc.CodeInternalError {
			t.Errorf("%s: %d %s, want -32603", id, resp.StatusCode, body)
		}
	}
	if resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"p","method":"ping"}`, nil); resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
		t.Errorf("ping after panics: %d %s", resp.StatusCode, body)
	}
}

// TestHTTPSlowBody: a POST body that stops arriving is cut at the body
// deadline with 400, instead of holding the handler.
func TestHTTPSlowBody(t *testing.T) {
	h := New(Options{}).HTTPHandler(HTTPOptions{BodyTimeout: 50 * time.Millisecond})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(safety)) // safety net
	// 100 bytes announced, one sent.
	if _, err := io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
}

// TestHTTPMaxSessions: an initialize over HTTPOptions.MaxSessions gets 503
// and creates nothing; ending a session makes room again.
func TestHTTPMaxSessions(t *testing.T) {
	h := New(Options{}).HTTPHandler(HTTPOptions{MaxSessions: 2})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	f := &httpFixture{t: t, ts: ts, h: h}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	var first string
	for i := range 2 {
		resp, body := f.do(http.MethodPost, initialize, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("initialize %d: %d %s", i, resp.StatusCode, body)
		}
		if i == 0 {
			first = resp.Header.Get("Mcp-Session-Id")
		}
	}
	for range 20 {
		resp, body := f.do(http.MethodPost, initialize, nil)
		m, err := jsonrpc.Decode([]byte(body))
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Mcp-Session-Id") != "" || err != nil || m.Error.Code != mcp.CodeTooManyRequests {
			t.Fatalf("initialize over the limit: %d %s", resp.StatusCode, body)
		}
	}
	if n := h.Sessions(); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	if resp, _ := f.do(http.MethodDelete, "", map[string]string{"Mcp-Session-Id": first}); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if resp, body := f.do(http.MethodPost, initialize, nil); resp.StatusCode != 200 {
		t.Errorf("initialize after DELETE: %d %s", resp.StatusCode, body)
	}
}

// TestHTTPFailedCallEndsItsStream: a tools/call with a key that starts
// nothing (unknown tool, bad arguments, a key already in use) gets its
// response and its POST ends; nothing waits for the KEY/end it will never
// reach.
func TestHTTPFailedCallEndsItsStream(t *testing.T) {
	f := newHTTPFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), safety) // safety net
	defer cancel()
	calls := []string{
		`{"name":"nope","arguments":{"key":"a"}}`,
		`{"name":"slow","arguments":{"key":"b","steps":-1}}`,
		`{"name":"effect","arguments":{"key":"c","bogus":1}}`,
		`{"name":"slow","arguments":{"key":"held"}}`, // gated: stays running
		`{"name":"slow","arguments":{"key":"held","gated":false}}`,
	}
	for i, params := range calls {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":` + params + `}`
		resp := f.postStream(ctx, body)
		if i == 3 {
			resp.Body.Close() // the gated call goes on (HTTP-25)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || ctx.Err() != nil {
			t.Fatalf("call %d: the stream did not end after its response: %v; got %q", i, err, b)
		}
		if !strings.Contains(string(b), `"id":`+strconv.Itoa(i)+`,"error"`) {
			t.Errorf("call %d: %q, want its error response", i, b)
		}
	}
	// Only the held call's operation and its watcher remain.
	for i := range 20 {
		// Each its own id: an id is not reused within a session (RPC-6),
		// and the server may not have retired the last one yet.
		resp := f.postStream(ctx, `{"jsonrpc":"2.0","id":"x`+strconv.Itoa(i)+`","method":"tools/call","params":{"name":"nope","arguments":{"key":"z"}}}`)
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if n := f.h.srv.live.Load(); n > 6 {
		t.Errorf("%d goroutines live after 20 failed calls: their watchers were left behind", n)
	}
}

// TestHTTPRetainsBoundedStreams: a session keeps at most
// MaxRetainedStreams finished request streams for resumption; an older
// one's event ID is unknown (400), the newest still resumes (HTTP-43).
func TestHTTPRetainsBoundedStreams(t *testing.T) {
	const limit = 2
	f := newHTTPFixtureHTTP(t, Options{}, HTTPOptions{RetryMillis: 5, MaxRetainedStreams: limit})
	var ids []string
	for i := range 6 {
		resp, body := f.do(http.MethodPost, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k%d","steps":1,"gated":false}}}`, 10+i, i), nil)
		first, _, _ := strings.Cut(body, "\n")
		id, ok := strings.CutPrefix(first, "id: ")
		if resp.StatusCode != http.StatusOK || !ok || !strings.Contains(body, fmt.Sprintf(`"id":%d,"result"`, 10+i)) {
			t.Fatalf("call %d: %d %q", i, resp.StatusCode, body)
		}
		ids = append(ids, strings.TrimSpace(id))
	}
	f.h.mu.Lock()
	hs := f.h.sessions[f.sid]
	f.h.mu.Unlock()
	hs.mu.Lock()
	kept, tokens, reqs := len(hs.streams), len(hs.byToken), len(hs.byReq)
	hs.mu.Unlock()
	// The limit is applied as a stream opens: the retired ones before
	// it, plus the last, finished since.
	if kept > limit+1 || tokens > limit+1 || reqs > limit+1 {
		t.Errorf("%d streams kept (%d by token, %d by request) after 7 finished requests, limit %d", kept, tokens, reqs, limit)
	}
	if resp, body := f.do(http.MethodGet, "", map[string]string{"Last-Event-ID": ids[0]}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("resume from a forgotten stream: %d %q", resp.StatusCode, body)
	}
	if resp, body := f.do(http.MethodGet, "", map[string]string{"Last-Event-ID": ids[5]}); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":15,"result"`) {
		t.Errorf("resume from the newest stream: %d %q", resp.StatusCode, body)
	}
}
