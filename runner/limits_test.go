package runner

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestTransportLimitIsAnErrorVerdict: a server whose answer to ping
// exceeds the body limit gives the case an error verdict that names the
// limit, not a hang and not a judgement of the target.
func TestTransportLimitIsAnErrorVerdict(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", "s1")
		switch {
		case strings.Contains(string(body), `"initialize"`):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"huge","version":"1"}}}`)
		case strings.Contains(string(body), `"method":"ping"`):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":2,"result":{"pad":"`+strings.Repeat("x", 64<<10)+`"}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	target := HTTPTarget(srv.URL, transport.HTTPConfig{URL: srv.URL, MaxBody: 4 << 10})
	rep := run(t, Config{Target: target, Profile: &profile.Profile{Name: "none"}, Cases: []probe.Case{pingCase("ping/huge")},
		CaseTimeout: 2 * time.Second})
	got := rep.Results[0].Outcome
	if got.Verdict != verdict.Error || !strings.Contains(got.Summary, "transport limit") || !strings.Contains(got.Summary, "maximum body size") {
		t.Fatalf("outcome %s: %s", got.Verdict, got.Summary)
	}
}
