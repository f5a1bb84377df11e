package hostile

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPModesListed: every HTTP mode is listed with a description and
// found by Lookup.
func TestHTTPModesListed(t *testing.T) {
	modes := []Mode{SlowHeaders, SilentSSE, HugeEvent, RedirectLoop, Status500, WrongContentType, NonJSONBody, BadSessionID}
	if len(httpModes) != len(modes) {
		t.Errorf("%d HTTP modes listed, want %d", len(httpModes), len(modes))
	}
	for _, m := range modes {
		in, err := Lookup(string(m), TransportHTTP)
		if err != nil || in.Description == "" || in.Transport != TransportHTTP {
			t.Errorf("%s: %+v, %v", m, in, err)
		}
	}
}

// TestHTTPPassThrough: what a mode does not attack reaches the inner
// handler unchanged, body included; a tools/call is attacked.
func TestHTTPPassThrough(t *testing.T) {
	var got string
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusNoContent)
	})
	h := Handler(Status500, inner)
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusNoContent},
		{`{"jsonrpc":"2.0","method":"tools/call"}`, http.StatusNoContent}, // a notification
		{`not json`, http.StatusNoContent},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`, http.StatusInternalServerError},
	} {
		got = ""
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body)))
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.body, rec.Code, tc.status)
		}
		if tc.status == http.StatusNoContent && got != tc.body {
			t.Errorf("inner got body %q, want %q", got, tc.body)
		}
	}
}

// TestHTTPBadSessionIDMapping: the client sees an ID outside visible
// ASCII, and that ID reaches the inner handler as the real one.
func TestHTTPBadSessionIDMapping(t *testing.T) {
	var seen string
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("Mcp-Session-Id")
		w.Header().Set("Mcp-Session-Id", "real-1")
		w.WriteHeader(http.StatusOK)
	})
	h := Handler(BadSessionID, inner)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`)))
	bad := rec.Header().Get("Mcp-Session-Id")
	if bad != badID("real-1") || !strings.Contains(bad, " ") {
		t.Fatalf("client saw session ID %q", bad)
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	req.Header.Set("Mcp-Session-Id", bad)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if seen != "real-1" {
		t.Errorf("inner saw %q, want real-1", seen)
	}
}
