package cli

import (
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/internal/targets"
)

// TestCheckDualEra runs check with the default --protocol auto against the
// TypeScript SDK v2 server (testdata/targets/dualera.mjs), over stdio and
// HTTP: it speaks 2026-07-28 because server/discover lists it, and the
// report says that the same server's initialize agrees to 2025-11-25,
// which its server/discover does not list. No case errors. Over stdio the
// one fail is a finding checked by hand in its chronology: after the
// client's envelope-less notifications (2026-07-28 notifications carry no
// envelope), the SDK answers server/discover, which it answered before on
// the same connection, with -32601 (RPC-57); over HTTP every request is
// its own exchange and the catalogue finds nothing.
func TestCheckDualEra(t *testing.T) {
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			var target []string
			if over == "stdio" {
				target = []string{"--stdio", transportQuote(targets.DualEra(t, "stdio")...)}
			} else {
				target = []string{"--url", targets.DualEraHTTP(t)}
			}
			// A node process starts in about 0.2 s on an idle machine and in
			// over 10 s on a busy one: the case deadline is a safety net.
			r := runCLI(t, "", append([]string{"check", "--case-timeout", "1m"}, target...)...)
			want := []string{"revision 2026-07-28: server/discover listed it", "server: mcpflight-dualera 1.0.0",
				"INCONSISTENT initialize agreed to 2025-11-25, which server/discover does not list (it lists 2026-07-28)", " 0 error "}
			// Over HTTP most cases need a tool no profile names here: the
			// run is incomplete (exit 3), which the summary says.
			code := ExitIncomplete
			if over == "stdio" {
				code = ExitNonConformant
				want = append(want, " 1 fail,", "FAIL  rpc/no-response-to-notifications", "Requirement: RPC-57 MUST NOT")
			}
			if r.code != code {
				t.Errorf("exit %d, want %d\n%s\n%s", r.code, code, r.stdout, r.stderr)
			}
			for _, w := range want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("the report lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}

// TestCallDualEraStreamClose: call under 2026-07-28 over Streamable HTTP
// cancels at its --timeout by closing the request's response stream, and
// says so; the held tool never answers on its own.
func TestCallDualEraStreamClose(t *testing.T) {
	url := targets.DualEraHTTP(t)
	r := runCLI(t, "", "call", "--url", url, "--timeout", "300ms", "-v", "slow", `{"steps":1,"stepMs":0,"hold":true}`)
	if r.code != ExitTimeout {
		t.Errorf("exit %d, want %d\n%s\n%s", r.code, ExitTimeout, r.stdout, r.stderr)
	}
	for _, want := range []string{"cancelled; no response received: its response stream was closed (the 2026-07-28 cancellation over HTTP)",
		"closing the response stream of request"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, " out ") && strings.Contains(line, "notifications/cancelled") {
			t.Errorf("a notifications/cancelled was sent over 2026-07-28 HTTP: %s", line)
		}
	}
}
