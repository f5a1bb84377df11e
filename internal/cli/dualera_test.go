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
// which its server/discover does not list. Every case of the catalogue,
// written for 2025-11-25 until the 2026 cases come, is skipped with that
// reason: none errors.
func TestCheckDualEra(t *testing.T) {
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			var target []string
			if over == "stdio" {
				target = []string{"--stdio", transportQuote(targets.DualEra(t, "stdio")...)}
			} else {
				target = []string{"--url", targets.DualEraHTTP(t)}
			}
			r := runCLI(t, "", append([]string{"check"}, target...)...)
			if r.code != ExitConformant {
				t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"revision 2026-07-28: server/discover listed it", "server: mcpflight-dualera 1.0.0",
				"INCONSISTENT initialize agreed to 2025-11-25, which server/discover does not list (it lists 2026-07-28)", " 0 error "} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the report lacks %q:\n%s", want, r.stdout)
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
