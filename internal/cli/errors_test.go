package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewcomerErrorMessages checks that the common ways of pointing
// mcpflight at the wrong thing end in one message a newcomer can act on.
func TestNewcomerErrorMessages(t *testing.T) {
	t.Parallel()
	badProfile := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badProfile, []byte(`{"name":"bad","slow":{"name":"nope"},"slowSteps":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{
			name:     "target command does not exist",
			args:     []string{"check", "--protocol", "2025-11-25", "--stdio", "no-such-mcp-server --flag"},
			wantCode: ExitError,
			want:     []string{`"no-such-mcp-server": executable file not found`, "mcpflight: no-such-mcp-server --flag: no session could be opened"},
		},
		{
			name:     "URL refuses connections",
			args:     []string{"check", "--protocol", "2025-11-25", "--url", refusedURL(t)},
			wantCode: ExitError,
			want:     []string{"connection refused", ": no session could be opened: "},
		},
		{
			name:     "server exits during initialize",
			args:     []string{"check", "--protocol", "2025-11-25", "--shell", "--stdio", "echo 'fatal: config.toml missing' >&2; exit 3", "--case", "ping/*"},
			wantCode: ExitError,
			want:     []string{"no session could be opened: initialize failed", "exited with code 3", "its stderr ended with: fatal: config.toml missing"},
		},
		{
			name:     "profile names a tool the server lacks",
			args:     []string{"check", "--protocol", "2025-11-25", "--profile", badProfile, "--case", "cancel/mid-work-no-response"},
			wantCode: ExitIncomplete, // the one case selected skipped
			want:     []string{`the profile's slow tool "nope" is not in the server's tools/list`},
		},
		{
			name:     "server will not negotiate the version",
			args:     []string{"check", "--protocol", "2025-11-25", "--target-fault", "version-mismatch", "--case", "ping/*"},
			wantCode: 1,
			want:     []string{"LIF-9", `protocolVersion "1999-01-01"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, "", tt.args...)
			out := r.stdout + r.stderr
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s", r.code, tt.wantCode, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// refusedURL returns an http URL on a loopback port nothing listens on:
// it binds a port, then closes the listener.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}
