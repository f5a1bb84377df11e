package refserver

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
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
