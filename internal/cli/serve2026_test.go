package cli

import (
	"strings"
	"testing"
)

// TestServeProtocols: serve --protocols picks the eras. A modern-only
// server answers initialize with -32022 naming its version (LIF-49) and a
// 2026-07-28 request with its result; a legacy-only one knows no
// server/discover; a bad list or teardown is a usage error.
func TestServeProtocols(t *testing.T) {
	t.Parallel()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	discover := `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	tests := []struct {
		flags []string
		want  []string
	}{
		{[]string{"--protocols", "2026-07-28"}, []string{`"id":1,"error":{"code":-32022`, `"supported":["2026-07-28"]`, `"id":2,"result":{`, `"supportedVersions":["2026-07-28"]`}},
		{[]string{"--protocols", "2025-11-25"}, []string{`"id":1,"result":{`, `"id":2,"error":{"code":-32601`}},
		{[]string{"--protocols", "2025-11-25,2026-07-28", "--listen-teardown", "cancelled"}, []string{`"id":1,"result":{`, `"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			r := runCLI(t, initialize+"\n"+discover+"\n", append([]string{"serve", "--stdio"}, tt.flags...)...)
			if r.code != 0 {
				t.Fatalf("code %d: %s", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %s:\n%s", w, r.stdout)
				}
			}
		})
	}
	for _, bad := range [][]string{{"--protocols", "2024-11-05"}, {"--listen-teardown", "never"}} {
		if r := runCLI(t, "", append([]string{"serve", "--stdio"}, bad...)...); r.code != ExitError {
			t.Errorf("%v: code %d, want %d", bad, r.code, ExitError)
		}
	}
}
