package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// scripted is a tiny Streamable HTTP server for transport tests: initialize
// answers JSON, tools/call answers SSE (priming, progress, wait for
// release, result), notifications get 202, GET with Last-Event-ID replays
// the tools/call stream from after that ID.
type scripted struct {
	mu       sync.Mutex
	headers  []http.Header
	release  chan struct{}
	events   []string // "id\x00data" of the call stream
	progress chan struct{}
	deleted  bool
}

func newScripted() *scripted {
	return &scripted{release: make(chan struct{}), progress: make(chan struct{})}
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		s.mu.Lock()
		s.deleted = true
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		last := r.Header.Get("Last-Event-ID")
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		<-s.release
		s.mu.Lock()
		evs := append([]string(nil), s.events...)
		s.mu.Unlock()
		replay := false
		for _, e := range evs {
			id, data, _ := strings.Cut(e, "\x00")
			if replay {
				fmt.Fprintf(w, "id: %s\ndata: %s\n\n", id, data)
			}
			if id == last {
				replay = true
			}
		}
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	switch {
	case msg.Kind != jsonrpc.KindRequest:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "sess-1")
		w.Header().Set("Content-Type", "application/json")
		raw, _ := jsonrpc.EncodeResult(msg.ID, map[string]any{"protocolVersion": "2025-11-25"})
		w.Write(raw)
	case msg.Method == "big":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("x", 4096) + `"}}`))
	case msg.Method == "stall":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case msg.Method == "answer-then-stall":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		res, _ := jsonrpc.EncodeResult(msg.ID, map[string]any{})
		fmt.Fprintf(w, "data: %s\n\n", res)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		prog, _ := jsonrpc.EncodeNotification("notifications/progress", map[string]any{"progressToken": 1, "progress": 1})
		res, _ := jsonrpc.EncodeResult(msg.ID, map[string]any{"done": true})
		s.mu.Lock()
		s.events = []string{"e1\x00", "e2\x00" + string(prog), "e3\x00" + string(res)}
		s.mu.Unlock()
		fmt.Fprintf(w, "id: e1\nretry: 5\ndata:\n\nid: e2\ndata: %s\n\n", prog)
		w.(http.Flusher).Flush()
		close(s.progress)
		select {
		case <-s.release:
			fmt.Fprintf(w, "id: e3\ndata: %s\n\n", res)
		case <-r.Context().Done():
		}
	}
}

func (s *scripted) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}

func httpSafety(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func recv(t *testing.T, ctx context.Context, c Conn) Inbound {
	t.Helper()
	select {
	case in, ok := <-c.Inbound():
		if !ok {
			t.Fatal("inbound closed")
		}
		return in
	case <-ctx.Done():
		t.Fatal("no inbound frame before the safety deadline")
	}
	return Inbound{}
}

func TestHTTPSessionDropAndResume(t *testing.T) {
	ctx := httpSafety(t)
	srv := newScripted()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	log := chrono.New()
	c, err := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: log, Headers: http.Header{"Authorization": {"Bearer s3cret"}, "x-tenant": {"tenant-42"}}})
	if err != nil {
		t.Fatal(err)
	}
	init, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(0), "initialize", map[string]any{"protocolVersion": "2025-11-25"})
	if err := c.Send(ctx, init); err != nil {
		t.Fatal(err)
	}
	if in := recv(t, ctx, c); in.Msg == nil || in.Msg.Kind != jsonrpc.KindResult {
		t.Fatalf("initialize answer: %+v", in)
	}
	if c.SessionID() != "sess-1" || c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("session %q version %q", c.SessionID(), c.ProtocolVersion())
	}
	h0 := srv.header(0)
	if h0.Get("Mcp-Session-Id") != "" || h0.Get("Mcp-Protocol-Version") != "" {
		t.Errorf("initialize carried session headers: %v", h0)
	}
	if a := h0.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
		t.Errorf("Accept = %q", a)
	}
	note, _ := jsonrpc.EncodeNotification("notifications/initialized", nil)
	if err := c.Send(ctx, note); err != nil {
		t.Fatal(err)
	}
	if h := srv.header(1); h.Get("Mcp-Session-Id") != "sess-1" || h.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("notification headers: %v", h)
	}
	call, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "tools/call", map[string]any{})
	if err := c.Send(ctx, call); err != nil {
		t.Fatal(err)
	}
	if in := recv(t, ctx, c); in.Msg == nil || in.Msg.Method != "notifications/progress" {
		t.Fatalf("want progress, got %+v", in)
	}
	<-srv.progress
	if err := c.DropStream(3); err != nil {
		t.Fatal(err)
	}
	last := c.LastEventID("POST #3")
	if last != "e2" {
		t.Fatalf("last event ID %q", last)
	}
	close(srv.release)
	name, err := c.Resume(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	in := recv(t, ctx, c)
	if in.Msg == nil || in.Msg.Kind != jsonrpc.KindResult || in.Msg.ID != jsonrpc.IntID(1) {
		t.Fatalf("want the result on the resumed stream, got %+v", in)
	}
	if got := srv.header(3).Get("Last-Event-ID"); got != "e2" {
		t.Errorf("Last-Event-ID = %q", got)
	}
	<-c.StreamDone(name)
	if c.StreamStalled(name) {
		t.Errorf("StreamStalled(%s) = true for a stream the server ended", name)
	}
	if evs := c.Events("POST #3"); len(evs) != 2 || !evs[0].HasData || evs[0].Data != "" || evs[0].Retry != 5*time.Millisecond {
		t.Errorf("POST #3 events: %+v", evs)
	}
	td := c.Close(ctx)
	if td.ExitedAfter != StepDelete || td.Err != nil || td.ExitCode != 200 {
		t.Errorf("teardown %+v", td)
	}
	srv.mu.Lock()
	deleted := srv.deleted
	srv.mu.Unlock()
	if !deleted {
		t.Error("Close sent no DELETE")
	}
	if _, ok := <-c.Inbound(); ok {
		t.Error("inbound open after Close")
	}
	var dump strings.Builder
	_ = log.WriteJSONL(&dump)
	if strings.Contains(dump.String(), "s3cret") || !strings.Contains(dump.String(), "Authorization: Bearer [redacted]") {
		t.Error("Authorization not redacted in the chronology")
	}
	if strings.Contains(dump.String(), "tenant-42") || !strings.Contains(dump.String(), "X-Tenant: [redacted]") {
		t.Error("a configured header's value is not redacted in the chronology")
	}
	// The configured headers go with every request: POSTs, the resuming
	// GET and the DELETE.
	srv.mu.Lock()
	sent := slices.Clone(srv.headers)
	srv.mu.Unlock()
	for i, h := range sent {
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Tenant") != "tenant-42" {
			t.Errorf("request %d lacks the configured headers: %v", i, h)
		}
	}
	for _, want := range []string{`"channel":"POST #3"`, `"channel":"SSE POST #3"`, `"channel":"GET #1"`, "Mcp-Session-Id: sess-1", "HTTP 202", "priming", "Last-Event-Id: e2"} {
		if !strings.Contains(dump.String(), want) {
			t.Errorf("chronology lacks %s", want)
		}
	}
}

func TestHTTPBounds(t *testing.T) {
	ctx := httpSafety(t)
	ts := httptest.NewServer(newScripted())
	defer ts.Close()
	t.Run("body too large", func(t *testing.T) {
		c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), MaxBody: 1024})
		defer c.Close(ctx)
		req, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "big", nil)
		if err := c.Send(ctx, req); err != nil {
			t.Fatal(err)
		}
		if in := recv(t, ctx, c); !errors.Is(in.Err, ErrBodyTooLarge) {
			t.Fatalf("want ErrBodyTooLarge, got %+v", in)
		}
	})
	t.Run("stall", func(t *testing.T) {
		c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), StallTimeout: 50 * time.Millisecond})
		defer c.Close(ctx)
		req, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "stall", nil)
		if err := c.Send(ctx, req); err != nil {
			t.Fatal(err)
		}
		<-c.StreamDone("POST #1")
		if err := c.Err(); !errors.Is(err, ErrStalled) {
			t.Fatalf("Err = %v, want ErrStalled", err)
		}
	})
	// A stream silent after its response has cost no evidence: the
	// server held it open (what HTTP-91 judges), so the stall is no limit
	// of the connection.
	t.Run("stall after the response", func(t *testing.T) {
		c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New(), StallTimeout: 50 * time.Millisecond})
		defer c.Close(ctx)
		req, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "answer-then-stall", nil)
		if err := c.Send(ctx, req); err != nil {
			t.Fatal(err)
		}
		if in := recv(t, ctx, c); in.Err != nil || in.Msg == nil || in.Msg.ID.String() != "1" {
			t.Fatalf("want the response to 1, got %+v", in)
		}
		<-c.StreamDone("POST #1")
		if err := c.Err(); err != nil {
			t.Fatalf("Err = %v, want none: the stream stalled after its response", err)
		}
		if !c.StreamStalled("POST #1") {
			t.Error("StreamStalled = false for a stream the stall bound closed")
		}
	})
	t.Run("status error", func(t *testing.T) {
		c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New()})
		defer c.Close(ctx)
		var se *StatusError
		if err := c.Send(ctx, []byte("{")); !errors.As(err, &se) || se.Status != 400 {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestHTTPRawPOST(t *testing.T) {
	ctx := httpSafety(t)
	srv := newScripted()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New()})
	defer c.Close(ctx)
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/x"})
	resp, err := c.RawPOST(ctx, note, http.Header{"Origin": {"http://evil.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 202 || len(resp.Body) != 0 {
		t.Errorf("raw POST: %d %q", resp.Status, resp.Body)
	}
	if srv.header(0).Get("Origin") != "http://evil.example" {
		t.Error("extra header not sent")
	}
}

// TestHTTPResumeHonoursRetry: Resume waits the retry the dropped stream
// asked for before it reconnects (HTTP-20). Only a lower bound is checked.
func TestHTTPResumeHonoursRetry(t *testing.T) {
	ctx := httpSafety(t)
	const retry = 80 * time.Millisecond
	gotGET := make(chan time.Time, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Method == http.MethodGet {
			gotGET <- time.Now()
			return
		}
		fmt.Fprintf(w, "id: a\nretry: %d\ndata:\n\n", retry.Milliseconds())
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New()})
	defer c.Close(ctx)
	req, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "tools/call", nil)
	if err := c.Send(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cfg.Log.WaitFor(ctx, 0, func(ev chrono.Event) bool { return strings.Contains(ev.Text, "retry=80ms") }); err != nil {
		t.Fatal(err)
	}
	if err := c.DropStream(1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Resume(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if waited := (<-gotGET).Sub(start); waited < retry {
		t.Errorf("reconnected after %v, before the retry of %v", waited, retry)
	}
}

// TestHTTPReconnectsAfterServerClose: a server that closes the POST's
// stream right after the priming event (HTTP-17) gets a reconnection with
// Last-Event-ID (HTTP-18), and the response arrives on it.
func TestHTTPReconnectsAfterServerClose(t *testing.T) {
	ctx := httpSafety(t)
	gets := make(chan string, 4)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Method == http.MethodGet {
			gets <- r.Header.Get("Last-Event-ID")
			res, _ := jsonrpc.EncodeResult(jsonrpc.IntID(1), map[string]any{})
			fmt.Fprintf(w, "id: p2\ndata: %s\n\n", res)
			return
		}
		if r.Method == http.MethodDelete {
			return
		}
		fmt.Fprint(w, "id: p1\nretry: 10\ndata:\n\n")
	}))
	defer ts.Close()
	c, _ := DialHTTP(ctx, HTTPConfig{URL: ts.URL, Log: chrono.New()})
	defer c.Close(ctx)
	req, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "tools/call", nil)
	if err := c.Send(ctx, req); err != nil {
		t.Fatal(err)
	}
	in := recv(t, ctx, c)
	if in.Msg == nil || in.Msg.ID != jsonrpc.IntID(1) || in.Msg.Kind != jsonrpc.KindResult {
		t.Fatalf("want the result after the reconnection, got %+v", in)
	}
	if last := <-gets; last != "p1" {
		t.Errorf("reconnected with Last-Event-ID %q, want p1", last)
	}
	if len(gets) != 0 {
		t.Errorf("reconnected again after the response")
	}
}

func TestCredentialHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "Set-Cookie": true, "X-API-Key": true,
		"X-Auth-Token": true, "X-Client-Secret": true, "X-Password": true, "Api-Key": true,
		"WWW-Authenticate": false, "Content-Type": false, "Mcp-Session-Id": false, "X-Tenant": false,
	} {
		if got := CredentialHeader(name); got != want {
			t.Errorf("CredentialHeader(%q) = %v, want %v", name, got, want)
		}
	}
	for _, tt := range []struct{ name, value, want string }{
		{"Authorization", "Bearer abc", "Bearer [redacted]"},
		{"Authorization", "abc", "[redacted]"},
		{"Authorization", "Bearer\x1b[2J x", "[redacted]"},
		{"X-Api-Key", "Bearer abc", "[redacted]"},
	} {
		if got := RedactedValue(tt.name, tt.value); got != tt.want {
			t.Errorf("RedactedValue(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

// TestHTTPRedirectKeepsHeadersHome: a redirect, to the same origin or
// another, is never followed, so neither the request nor its configured
// credentials reach the Location; the 3xx is an error naming it.
func TestHTTPRedirectKeepsHeadersHome(t *testing.T) {
	ctx := httpSafety(t)
	var mu sync.Mutex
	got := map[string]http.Header{}
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[name] = r.Header.Clone()
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	}
	other := httptest.NewServer(record("other"))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["away"] = r.Header.Clone()
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/home", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/mcp", record("home"))
	home := httptest.NewServer(mux)
	defer home.Close()
	headers := http.Header{"Authorization": {"Bearer s3cret-token"}, "X-Api-Key": {"k3y-value"}}
	for _, path := range []string{"/home", "/away"} {
		log := chrono.New()
		c, err := DialHTTP(ctx, HTTPConfig{URL: home.URL + path, Log: log, Headers: headers})
		if err != nil {
			t.Fatal(err)
		}
		ping, _ := jsonrpc.EncodeRequest(jsonrpc.IntID(1), "ping", nil)
		err = c.Send(ctx, ping)
		if err == nil {
			err = c.Err()
		}
		if !errors.Is(err, ErrRedirect) {
			t.Errorf("%s: send error %v, want ErrRedirect", path, err)
		}
		c.Close(ctx)
	}
	mu.Lock()
	defer mu.Unlock()
	if h := got["away"]; h.Get("Authorization") != "Bearer s3cret-token" || h.Get("X-Api-Key") != "k3y-value" {
		t.Errorf("the endpoint itself did not get the headers: %v", h)
	}
	if got["home"] != nil || got["other"] != nil {
		t.Errorf("a redirect was followed: same origin %v, other origin %v", got["home"], got["other"])
	}
}
