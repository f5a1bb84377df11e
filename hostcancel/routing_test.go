package hostcancel

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/transport"
)

// TestRoutingHeaders: over Streamable HTTP every tasks/get, tasks/update
// and tasks/cancel the extension sends carries Mcp-Name = params.taskId
// (TSX-52) and Mcp-Method (HTTP-100), through the project's HTTP transport
// with RoutingHeaders as its client's round tripper.
func TestRoutingHeaders(t *testing.T) {
	type seen struct{ method, name string }
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.Decode(body)
		mu.Lock()
		got = append(got, seen{r.Header.Get(HeaderMethod), r.Header.Get(HeaderName)})
		mu.Unlock()
		if err != nil || m.Kind != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{"resultType":"complete"}}`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := transport.DialHTTP(ctx, transport.HTTPConfig{URL: srv.URL, Log: chrono.New(),
		Client: &http.Client{Transport: RoutingHeaders(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	w := wireExtension{}
	send := func(id int64, method string, params any) {
		raw, err := jsonrpc.EncodeRequest(jsonrpc.IntID(id), method, params)
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Send(ctx, raw); err != nil {
			t.Fatal(err)
		}
		select {
		case <-conn.Inbound():
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	const task = "786512e2-9e0d-44bd-8f29-789f320fe840"
	// A task ID that is not plain ASCII goes Base64-encoded (HTTP-101).
	const odd, oddHeader = "tâche-7", "=?base64?dMOiY2hlLTc=?="
	send(1, "tools/call", w.callParams("get_weather", nil, nil, -1))
	send(2, "tasks/get", w.taskParams(task))
	send(3, "tasks/update", w.taskParams(task))
	send(4, "tasks/cancel", w.taskParams(task))
	send(5, MethodListen, mustParams(w.listenParams(task)))
	send(6, "tasks/cancel", w.taskParams(odd))
	// On a 2026-07-28 connection the transport sets the headers itself;
	// the wrapper keeps them.
	conn.Set2026(string(RevTasksExtension))
	send(7, "tasks/get", w.taskParams(odd))
	want := []seen{{"tools/call", "get_weather"}, {"tasks/get", task}, {"tasks/update", task}, {"tasks/cancel", task}, {MethodListen, ""},
		{"tasks/cancel", oddHeader}, {"tasks/get", oddHeader}}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

// TestRoutingHeadersKeepsTheTransports: a header the request already has
// is not replaced.
func TestRoutingHeadersKeepsTheTransports(t *testing.T) {
	var gotName, gotMethod string
	rt := RoutingHeaders(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		gotName, gotMethod = r.Header.Get(HeaderName), r.Header.Get(HeaderMethod)
		return &http.Response{StatusCode: http.StatusAccepted, Body: http.NoBody, Request: r}, nil
	}))
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t-1"}}`
	req, err := http.NewRequest(http.MethodPost, "http://example.invalid/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(HeaderName, "set-by-the-transport")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotName != "set-by-the-transport" || gotMethod != "tasks/get" {
		t.Errorf("Mcp-Name %q, Mcp-Method %q", gotName, gotMethod)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustParams(p map[string]any, _ bool) map[string]any { return p }
