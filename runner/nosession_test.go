package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/transport"
)

// TestRunProtocolNoSession: when no session with the target can be
// opened, RunProtocol runs no case and says why in one line, in the error
// and in the report's NoSession, whatever the revision mode: a missing
// executable, a target that exits at start with a message on stderr, and
// one that writes something that is not JSON-RPC and then nothing.
func TestRunProtocolNoSession(t *testing.T) {
	for _, tc := range []struct {
		name  string
		argv  []string
		is    error
		stdio string
		want  []string
	}{
		{"missing", []string{"/nonexistent/mcp-server"}, transport.ErrExecutableNotFound, "",
			[]string{"no session could be opened", "/nonexistent/mcp-server"}},
		{"exits", []string{"/bin/sh", "-c", "echo 'Error: Cannot find module x' >&2; exit 3"}, nil, "",
			[]string{"exited with code 3", "its stderr ended with: Error: Cannot find module x"}},
		{"not-json-rpc", []string{"/bin/sh", "-c", "echo 'oops, not json'; exec sleep 60"}, negotiate.ErrNotJSONRPC, "oops, not json",
			[]string{`it wrote "oops, not json" on stdout, which is not JSON-RPC`}},
	} {
		for _, mode := range []negotiate.Mode{negotiate.ModeAuto, negotiate.Mode20251125, negotiate.Mode20260728, negotiate.ModeBoth} {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				target := StdioTarget(tc.name, transport.StdioConfig{Argv: tc.argv})
				rep, err := RunProtocol(context.Background(), Config{Target: target, Cases: []probe.Case{pingCase("u/a"), pingCase("u/b")}},
					mode, negotiate.Options{})
				if !errors.Is(err, ErrNoSession) || tc.is != nil && !errors.Is(err, tc.is) {
					t.Fatalf("error %v; want ErrNoSession (and %v)", err, tc.is)
				}
				if rep == nil || rep.NoSession == nil {
					t.Fatalf("report %+v; want one with NoSession", rep)
				}
				if len(rep.Results) != 0 || rep.ExitCode() != 2 {
					t.Errorf("%d results, exit code %d; want none and 2", len(rep.Results), rep.ExitCode())
				}
				for _, w := range tc.want {
					if !strings.Contains(rep.NoSession.Line, w) {
						t.Errorf("line %q; want it to contain %q", rep.NoSession.Line, w)
					}
				}
				if rep.NoSession.Line != err.Error() {
					t.Errorf("the error %q is not the report's line %q", err, rep.NoSession.Line)
				}
				if rep.NoSession.Stdout != tc.stdio {
					t.Errorf("stdout %q; want %q", rep.NoSession.Stdout, tc.stdio)
				}
			})
		}
	}
}

// TestRunProtocolHandshakeRefused: a target that answers initialize with
// a JSON-RPC error opens no session under 2025-11-25: one line naming the
// error. One that answers it with a result of the wrong shape speaks
// JSON-RPC, and the cases run to show what is wrong.
func TestRunProtocolHandshakeRefused(t *testing.T) {
	answer := func(reply string) []string {
		return []string{"/bin/sh", "-c", `while read -r l; do case "$l" in *'"initialize"'*) echo '` + reply + `';; esac; done`}
	}
	for _, tc := range []struct {
		name, reply string
		noSession   bool
	}{
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"database down"}}`, true},
		{"wrong-shape", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":7,"version":"1"}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := StdioTarget(tc.name, transport.StdioConfig{Argv: answer(tc.reply)})
			rep, err := RunProtocol(context.Background(), Config{Target: target, Cases: []probe.Case{pingCase("u/a")}, CaseTimeout: 5 * time.Second},
				negotiate.Mode20251125, negotiate.Options{})
			if got := rep != nil && rep.NoSession != nil; got != tc.noSession {
				t.Fatalf("no session: %v, want %v (error %v)", got, tc.noSession, err)
			}
			if tc.noSession && (!errors.Is(err, ErrNoSession) || !strings.Contains(err.Error(), "database down")) {
				t.Errorf("error %v; want ErrNoSession naming the error", err)
			}
			if !tc.noSession && len(rep.Results) != 1 {
				t.Errorf("%d results; want the case's", len(rep.Results))
			}
		})
	}
}

// TestBannerThenBusyStart: a target that prints a banner and then works
// for longer than the grace (3 to 4 s) before it answers (a wrapper's banner, then a
// runtime loading its modules, slower still on a busy machine) is waited
// for while its process is busy, and a session opens; the idle one of
// TestRunProtocolNoSession is given up within the grace.
func TestBannerThenBusyStart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the busy target spins a core for 4 s, which a loaded machine can starve; the full suite runs it, and TestRunProtocolNoSession gives the idle one up here")
	}
	script := `echo "starting the server"
end=$(( $(date +%s) + 4 ))
while [ "$(date +%s)" -lt "$end" ]; do :; done
while read -r l; do case "$l" in *'"initialize"'*) echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"slow","version":"1"}}}';; esac; done`
	target := StdioTarget("busy", transport.StdioConfig{Argv: []string{"/bin/sh", "-c", script}})
	rep, err := RunProtocol(context.Background(), Config{Target: target, CaseTimeout: 30 * time.Second},
		negotiate.Mode20251125, negotiate.Options{})
	if rep == nil || rep.NoSession != nil {
		t.Fatalf("no session: %v (%v)", err, rep != nil && rep.NoSession != nil)
	}
	if rep.Negotiation == nil || len(rep.Negotiation.Revisions) != 1 {
		t.Errorf("negotiation %+v", rep.Negotiation)
	}
}
