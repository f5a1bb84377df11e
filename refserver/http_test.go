package refserver

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// httpFixture is a reference server behind httptest with one initialized
// session.
type httpFixture struct {
	t   *testing.T
	ts  *httptest.Server
	h   *HTTPHandler
	sid string
}

func newHTTPFixture(t *testing.T, faults FaultSet) *httpFixture {
	t.Helper()
	return newHTTPFixtureWith(t, Options{Faults: faults})
}

// newHTTPFixtureWith is newHTTPFixture with more options.
func newHTTPFixtureWith(t *testing.T, opts Options) *httpFixture {
	t.Helper()
	return newHTTPFixtureHTTP(t, opts, HTTPOptions{RetryMillis: 5})
}

// newHTTPFixtureHTTP is newHTTPFixtureWith with the endpoint's options.
func newHTTPFixtureHTTP(t *testing.T, opts Options, hopts HTTPOptions) *httpFixture {
	t.Helper()
	h := New(opts).HTTPHandler(hopts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	f := &httpFixture{t: t, ts: ts, h: h}
	resp, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	f.sid = resp.Header.Get("Mcp-Session-Id")
	return f
}

func (f *httpFixture) do(method, body string, hdr map[string]string) (*http.Response, string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // safety net
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, f.ts.URL, rd)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if f.sid != "" {
		req.Header.Set("Mcp-Session-Id", f.sid)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestHTTPSessionSemantics(t *testing.T) {
	f := newHTTPFixture(t, nil)
	if len(f.sid) != 32 || strings.Trim(f.sid, "0123456789abcdef") != "" {
		t.Errorf("session ID %q is not 32 hex digits", f.sid)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	tests := []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		want   int
	}{
		{"ping", http.MethodPost, ping, nil, 200},
		{"notification 202", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 202},
		{"no session 400", http.MethodPost, ping, map[string]string{"Mcp-Session-Id": ""}, 400},
		{"unknown session 404", http.MethodPost, ping, map[string]string{"Mcp-Session-Id": "nope"}, 404},
		{"evil origin 403", http.MethodPost, ping, map[string]string{"Origin": "http://evil.example"}, 403},
		{"loopback origin ok", http.MethodPost, ping, map[string]string{"Origin": "http://127.0.0.1:3000"}, 200},
		{"bad version 400", http.MethodPost, ping, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400},
		{"batch 400", http.MethodPost, "[" + ping + "]", nil, 400},
		{"PUT 405", http.MethodPut, "", nil, 405},
		{"GET without SSE accept 406", http.MethodGet, "", map[string]string{"Accept": "application/json"}, 406},
		{"unknown Last-Event-ID 400", http.MethodGet, "", map[string]string{"Last-Event-ID": "9-9"}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(tt.method, tt.body, tt.hdr)
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.want, body)
			}
			if tt.want == 202 && body != "" {
				t.Errorf("202 with body %q", body)
			}
		})
	}
	if resp, _ := f.do(http.MethodDelete, "", nil); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if m == http.MethodPost {
			body = ping
		}
		if resp, _ := f.do(m, body, nil); resp.StatusCode != 404 {
			t.Errorf("%s after DELETE: %d, want 404", m, resp.StatusCode)
		}
	}
	if f.h.Sessions() != 0 {
		t.Errorf("%d sessions after DELETE", f.h.Sessions())
	}
}

// TestHTTPDisconnectDoesNotCancel drops a call's stream after its priming
// event; the call still completes, and a resume with the priming event's
// ID replays the progress and the result (HTTP-25, HTTP-43).
func TestHTTPDisconnectDoesNotCancel(t *testing.T) {
	for _, fault := range []Fault{"", FaultCancelOnDisconnect} {
		t.Run("fault="+string(fault), func(t *testing.T) {
			f := newHTTPFixture(t, FaultSet{fault: fault != ""})
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.ts.URL,
				strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"key":"a","steps":2},"_meta":{"progressToken":"p"}}}`))
			req.Header.Set("Mcp-Session-Id", f.sid)
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := f.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			line := make([]byte, 64)
			n, _ := resp.Body.Read(line)
			first := string(line[:n])
			if !strings.HasPrefix(first, "id: ") || !strings.Contains(first, "retry: 5\n") {
				t.Fatalf("no priming event with retry: %q", first)
			}
			id := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(first, "id: "), "\n", 2)[0])
			cancel()
			resp.Body.Close()
			// Under the fault the held call is cancelled by the
			// disconnection and reaches its end by itself; otherwise it
			// waits for the releases.
			for _, cp := range []string{"a/start", "a/step/1", "a/step/2"} {
				if fault != "" {
					break
				}
				f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"r-`+cp+`","method":"mcpflight/release","params":{"checkpoint":"`+cp+`"}}`, nil)
			}
			_, body := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"e","method":"mcpflight/await","params":{"checkpoint":"a/end"}}`, nil)
			_, counters := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"c","method":"mcpflight/counters"}`, nil)
			_, replay := f.do(http.MethodGet, "", map[string]string{"Last-Event-ID": id})
			if fault == "" {
				if !strings.Contains(counters, `"operationsCompleted":1`) || !strings.Contains(replay, `"id":7,"result"`) || strings.Count(replay, "notifications/progress") != 2 {
					t.Errorf("await %s\ncounters %s\nreplay %q", body, counters, replay)
				}
			} else if !strings.Contains(counters, `"operationsCancelled":1`) || bytes.Contains([]byte(replay), []byte(`"id":7,"result"`)) {
				t.Errorf("fault: counters %s\nreplay %q", counters, replay)
			}
		})
	}
}

// TestHTTPUnresumableCancelOnDisconnect: under the fault a call's stream
// opens with its first progress, an event without an ID (no priming
// event, nothing to resume from), and dropping the stream cancels the
// call; without it the stream is primed with an ID and the call runs on
// to completion after the drop.
func TestHTTPUnresumableCancelOnDisconnect(t *testing.T) {
	for _, fault := range []Fault{"", FaultUnresumableCancelOnDisconnect} {
		t.Run("fault="+string(fault), func(t *testing.T) {
			f := newHTTPFixture(t, FaultSet{fault: fault != ""})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // safety net
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.ts.URL,
				strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"key":"a","steps":2},"_meta":{"progressToken":"p"}}}`))
			req.Header.Set("Mcp-Session-Id", f.sid)
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := f.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"r-start","method":"mcpflight/release","params":{"checkpoint":"a/start"}}`, nil)
			// The first event, up to its blank line.
			rd := bufio.NewReader(resp.Body)
			var first strings.Builder
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					t.Fatalf("reading the first event: %v (so far %q)", err, first.String())
				}
				if line == "\n" {
					break
				}
				first.WriteString(line)
			}
			cancel()
			resp.Body.Close()
			if fault == "" {
				if !strings.HasPrefix(first.String(), "id: ") {
					t.Fatalf("first event %q, want a priming event with an ID", first.String())
				}
				for _, cp := range []string{"a/step/1", "a/step/2"} {
					f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"r-`+cp+`","method":"mcpflight/release","params":{"checkpoint":"`+cp+`"}}`, nil)
				}
			} else if strings.Contains(first.String(), "id:") || !strings.Contains(first.String(), "notifications/progress") {
				t.Fatalf("first event %q, want the first progress without an ID", first.String())
			}
			f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"e","method":"mcpflight/await","params":{"checkpoint":"a/end"}}`, nil)
			_, counters := f.do(http.MethodPost, `{"jsonrpc":"2.0","id":"c","method":"mcpflight/counters"}`, nil)
			want := `"operationsCompleted":1`
			if fault != "" {
				want = `"operationsCancelled":1`
			}
			if !strings.Contains(counters, want) {
				t.Errorf("counters %s, want %s", counters, want)
			}
		})
	}
}
