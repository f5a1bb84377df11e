package transport

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// initThen answers initialize with JSON (session ID sessionID, if not
// empty) and hands every other POSTed request to then.
func initThen(sessionID string, then http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, err := jsonrpc.Decode(body)
		switch {
		case err != nil:
			http.Error(w, "bad", http.StatusBadRequest)
		case msg.Kind != jsonrpc.KindRequest:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			if sessionID != "" {
				w.Header().Set(HeaderSessionID, sessionID)
			}
			w.Header().Set("Content-Type", "application/json")
			raw, _ := jsonrpc.EncodeResult(msg.ID, map[string]any{"protocolVersion": "2025-11-25"})
			_, _ = w.Write(raw)
		default:
			r.Body = io.NopCloser(bytes.NewReader(body))
			then(w, r)
		}
	}
}

func request(t *testing.T, id int64, method string) []byte {
	t.Helper()
	raw, err := jsonrpc.EncodeRequest(jsonrpc.IntID(id), method, nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestHTTPRedirectNotFollowed: a 307 comes back as an error naming the
// status and the sanitised Location; the other URL is never requested,
// so the credentials configured never reach it.
func TestHTTPRedirectNotFollowed(t *testing.T) {
	ctx := httpSafety(t)
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Control bytes cannot reach us (net/http refuses them in a
		// header); a bidi override can.
		w.Header().Set("Location", other.URL+"/\u202eevil")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer ts.Close()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), Headers: http.Header{"Authorization": {"Bearer s3cret"}}})
	defer c.Close(ctx)
	err := c.Send(ctx, request(t, 1, "ping"))
	if !errors.Is(err, ErrRedirect) || !errors.Is(err, ErrHTTPStatus) {
		t.Fatalf("err = %v, want ErrRedirect", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "307") || !strings.Contains(msg, other.URL) || strings.Contains(msg, "\u202e") {
		t.Errorf("message %q should name 307 and the sanitised Location", msg)
	}
	if _, err := c.OpenGET(ctx); !errors.Is(err, ErrRedirect) {
		t.Errorf("GET: err = %v, want ErrRedirect", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

// TestHTTPHeaderTimeout: a response whose headers never come ends Send
// with ErrStalled after HeaderTimeout, and Err names the limit.
func TestHTTPHeaderTimeout(t *testing.T) {
	ctx := httpSafety(t)
	ts := httptest.NewServer(initThen("", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer ts.Close()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), HeaderTimeout: 50 * time.Millisecond, StallTimeout: time.Minute})
	defer c.Close(ctx)
	err := c.Send(ctx, request(t, 1, "tools/call"))
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "no response headers within 50ms") {
		t.Fatalf("err = %v, want ErrStalled naming the header timeout", err)
	}
	if !errors.Is(c.Err(), ErrStalled) {
		t.Errorf("Err = %v, want ErrStalled", c.Err())
	}
}

// TestHTTPSessionIDInvisible: a session ID with a space and non-ASCII
// bytes (legal in a header, forbidden by HTTP-48) is recorded as such
// and sent back as received; the session still works.
func TestHTTPSessionIDInvisible(t *testing.T) {
	ctx := httpSafety(t)
	const bad = "sess ion-\u00e9"
	got := make(chan string, 1)
	ts := httptest.NewServer(initThen(bad, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(HeaderSessionID)
		w.Header().Set("Content-Type", "application/json")
		raw, _ := jsonrpc.EncodeResult(jsonrpc.IntID(2), map[string]any{})
		_, _ = w.Write(raw)
	}))
	defer ts.Close()
	log := chrono.New()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: log})
	defer c.Close(ctx)
	if err := c.Send(ctx, request(t, 1, "initialize")); err != nil {
		t.Fatal(err)
	}
	recv(t, ctx, c)
	if err := c.Send(ctx, request(t, 2, "ping")); err != nil {
		t.Fatal(err)
	}
	if in := recv(t, ctx, c); in.Msg == nil || in.Msg.ID != jsonrpc.IntID(2) {
		t.Fatalf("ping answer: %+v", in)
	}
	if s := <-got; s != bad {
		t.Errorf("sent back %q, want %q", s, bad)
	}
	found := false
	for _, ev := range log.Events() {
		if ev.Dir == chrono.Harness && strings.Contains(ev.Text, "HTTP-48") {
			found = true
		}
	}
	if !found {
		t.Error("no chronology event names HTTP-48 for the session ID")
	}
	if VisibleASCII(bad) || !VisibleASCII("abc-123") || VisibleASCII("") {
		t.Error("VisibleASCII is wrong")
	}
	if headerValueOK("a\x01b") || !headerValueOK(bad) {
		t.Error("headerValueOK is wrong")
	}
}

// TestHTTPLostAnswer: when the exchange of a request ends without its
// response (a JSON body that is not JSON or is another message, a stream
// cut off by a limit or ended with no event ID to resume from),
// Inbound says which request lost its answer.
func TestHTTPLostAnswer(t *testing.T) {
	ctx := httpSafety(t)
	ts := httptest.NewServer(initThen("", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, _ := jsonrpc.Decode(body)
		switch msg.Method {
		case "not-json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "<html>nope</html>")
		case "big-event":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: "+strings.Repeat("x", 4096)+"\n\n")
		case "wrong-id":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"somebody-else","result":{}}`)
		case "notification":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)
		case "ends-early":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
		case "silent":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "cut":
			// The stream fails mid-event: the connection is aborted.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	}))
	defer ts.Close()
	for i, tc := range []struct {
		method string
		cause  error
	}{
		{"not-json", ErrNoAnswer},
		{"big-event", ErrEventTooLarge},
		{"silent", ErrStalled},
		{"ends-early", ErrNoAnswer},
		{"wrong-id", ErrNoAnswer},
		{"notification", ErrNoAnswer},
		{"cut", ErrNoAnswer},
	} {
		t.Run(tc.method, func(t *testing.T) {
			c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), MaxEvent: 1024, StallTimeout: 50 * time.Millisecond})
			defer c.Close(ctx)
			id := int64(10 + i)
			if err := c.Send(ctx, request(t, id, tc.method)); err != nil {
				t.Fatal(err)
			}
			in := recv(t, ctx, c)
			if in.Msg != nil { // the body's own message comes first
				in = recv(t, ctx, c)
			}
			if in.For != jsonrpc.IntID(id) || !errors.Is(in.Err, ErrNoAnswer) || !errors.Is(in.Err, tc.cause) {
				t.Fatalf("inbound %+v (err %v), want For %d with %v", in, in.Err, id, tc.cause)
			}
		})
	}
}

// TestHTTPHugeEventBounded: a single endless SSE event is cut off at
// MaxEvent with bounded memory, and the body is closed so that the
// server stops writing.
func TestHTTPHugeEventBounded(t *testing.T) {
	ctx := httpSafety(t)
	const total = 1 << 30
	var written atomic.Int64
	stopped := make(chan struct{})
	ts := httptest.NewServer(initThen("", func(w http.ResponseWriter, r *http.Request) {
		defer close(stopped)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: ")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), MaxEvent: 1 << 20})
	defer c.Close(ctx)
	if err := c.Send(ctx, request(t, 1, "tools/call")); err != nil {
		t.Fatal(err)
	}
	in := recv(t, ctx, c)
	if !errors.Is(in.Err, ErrEventTooLarge) || in.For != jsonrpc.IntID(1) {
		t.Fatalf("inbound %+v (err %v), want ErrEventTooLarge for request 1", in, in.Err)
	}
	select {
	case <-stopped:
	case <-ctx.Done():
		t.Fatal("the server went on writing after the client gave up")
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("server wrote %d bytes before it saw the client go; client allocated %d bytes in all", written.Load(), alloc)
	if w := written.Load(); w >= total {
		t.Errorf("server wrote the whole %d bytes", w)
	}
	if alloc > 64<<20 {
		t.Errorf("allocated %d bytes for a 1 MiB event limit", alloc)
	}
}

// TestHTTPEventFloodBounded: a stream of many tiny events keeps only the
// first MaxStreamEvents for Events, and says so in the chronology.
func TestHTTPEventFloodBounded(t *testing.T) {
	ctx := httpSafety(t)
	const flood = MaxStreamEvents + 5000
	ts := httptest.NewServer(initThen("", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, strings.Repeat(":\n\n", flood))
		_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","id":1,"result":{}}`+"\n\n")
	}))
	defer ts.Close()
	log := chrono.New()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: log})
	defer c.Close(ctx)
	if err := c.Send(ctx, request(t, 1, "tools/call")); err != nil {
		t.Fatal(err)
	}
	if in := recv(t, ctx, c); in.Msg == nil || in.Msg.ID != jsonrpc.IntID(1) {
		t.Fatalf("inbound %+v, want the response", in)
	}
	<-c.StreamDone("POST #1")
	if n := len(c.Events("POST #1")); n != MaxStreamEvents {
		t.Errorf("%d events kept, want %d", n, MaxStreamEvents)
	}
	noted := false
	for _, ev := range log.Events() {
		noted = noted || (ev.Dir == chrono.Harness && strings.Contains(ev.Text, "not kept for Events"))
	}
	if !noted {
		t.Error("the chronology does not say events were dropped")
	}
}
