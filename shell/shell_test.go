package shell_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/shell"
	"github.com/mcpflight/mcpflight/transport"
)

// session opens a 2025-11-25 session with the reference server in this
// process.
func session(t *testing.T) *peer.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // safety net
	t.Cleanup(cancel)
	log := chrono.New()
	conn, _ := refserver.InProcess(ctx, refserver.Options{}, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	t.Cleanup(func() { s.Close(context.Background()) })
	if _, err := negotiate.Open(ctx, s, negotiate.Mode("2025-11-25"), negotiate.Options{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunScripts runs scripts over a session, as a test of a server
// would: what they print and how they end.
func TestRunScripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string
		wantErr error // errors.Is, or nil
		lineErr int   // a *LineError at this line, or 0
		want    []string
	}{
		{"ping and tools", "ping\nlist_tools\nexpect outcome completed\n", nil, 0, []string{"pong\n", "slow\t", "task_worker\t"}},
		{"an ordinary slow call completes", "call_tool slow {\"steps\":2,\"tickMs\":1}\nexpect outcome completed\nexpect progress >= 2\nexpect text done\n", nil, 0,
			[]string{"completed request 2: done (2 progress)"}},
		{"a cancelled call", "timeout 50 call_tool slow {\"key\":\"k\",\"steps\":5}\nexpect outcome cancelled\n", nil, 0,
			[]string{"cancelled request 2 after 50ms"}},
		{"an error answer is recorded", "call_tool nope\nexpect outcome failed\nexpect code -32602\n", nil, 0, []string{"failed request 2: error -32602"}},
		{"background and wait", "bg call_tool slow {\"steps\":1,\"tickMs\":1}\nwait 2\nexpect outcome completed\n", nil, 0, []string{"started request 2", "completed request 2"}},
		{"a failed expect goes on and counts", "ping\nexpect outcome failed\nexpect code 7\nping\n", shell.ErrExpectations, 0,
			[]string{"line 2: expect failed: outcome completed, want failed", "line 3: expect failed: error code 0, want 7", "want 7\npong\n"}},
		{"an unknown command ends the script", "ping\nfrobnicate\nping\n", nil, 2, []string{"pong\n"}},
		{"bad arguments", "call_tool slow [1]\n", nil, 1, nil},
		{"quit stops", "ping\nquit\nfrobnicate\n", nil, 0, []string{"pong\n"}},
		{"comments and blanks", "# a comment\n\n  ping  \n", nil, 0, []string{"pong\n"}},
		{"help", "help\n", nil, 0, []string{"call_tool NAME [JSON]", "expect outcome"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The server is in this process, on pipes: in a synctest
			// bubble a timeout and the cancel's grace (5 s for a call
			// the server never answers) run on the bubble's clock.
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				in := shell.New(session(t), shell.Config{Out: &out, CancelGrace: 5 * time.Second})
				err := in.Run(context.Background(), strings.NewReader(tt.script))
				var le *shell.LineError
				switch {
				case tt.lineErr > 0:
					if !errors.As(err, &le) || le.Line != tt.lineErr {
						t.Errorf("error %v, want one at line %d", err, tt.lineErr)
					}
				case tt.wantErr != nil:
					if !errors.Is(err, tt.wantErr) {
						t.Errorf("error %v, want %v", err, tt.wantErr)
					}
				case err != nil:
					t.Errorf("error %v", err)
				}
				for _, w := range tt.want {
					if !strings.Contains(out.String(), w) {
						t.Errorf("output lacks %q:\n%s", w, out.String())
					}
				}
			})
		})
	}
}

// TestDefaults: the Defaults hook completes the arguments of call_tool
// and of task call, as mcpflight call completes its own.
func TestDefaults(t *testing.T) {
	t.Parallel()
	var seen []string
	var out bytes.Buffer
	in := shell.New(session(t), shell.Config{Out: &out, Defaults: func(task bool, tool string, args map[string]any) {
		seen = append(seen, tool)
		if tool == "slow" {
			args["steps"], args["tickMs"] = 1, 1
			if task {
				args["key"] = "from-defaults"
			}
		}
	}})
	err := in.Run(context.Background(), strings.NewReader("call_tool slow\nexpect progress >= 1\ntask call slow\nexpect status working\n"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Join(seen, ",") != "slow,slow" {
		t.Errorf("defaults saw %v", seen)
	}
}

// TestMessage: errors read without the Go packages' prefixes.
func TestMessage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"peer: transport: connection closed": "connection closed",
		"peer: jsonrpc error -32601: nope":   "jsonrpc error -32601: nope",
		"arguments must be a JSON object":    "arguments must be a JSON object",
		"a peer: stays":                      "a peer: stays",
		"line\x1b[31m":                       "line\\u001b[31m",
	} {
		if got := shell.Message(errors.New(in)); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
	le := &shell.LineError{Line: 3, Err: errors.New("peer: connection closed")}
	if le.Error() != "line 3: connection closed" {
		t.Errorf("LineError: %q", le.Error())
	}
}
