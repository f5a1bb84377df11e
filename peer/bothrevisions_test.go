package peer_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// The TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0) as a
// 2026-07-28 server: testdata/targets/bothrevisions.mjs, over stdio and over
// Streamable HTTP, driven through peer's 2026 session. What each test
// pins was checked by hand in the chronology (docs/findings.md, "The
// TypeScript SDK v2").

// skipInShort skips t under -short: bothrevisions.mjs is a node process, a
// real third-party target, which the full suite runs.
func skipInShort(t *testing.T, here string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the TypeScript SDK v2 server (node bothrevisions.mjs) is the full suite's; " + here)
	}
}

// bothRevisionsSession opens a 2026-07-28 session to bothrevisions.mjs over "stdio"
// or "http".
func bothRevisionsSession(t *testing.T, over string) (*peer.Session, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // safety net
	t.Cleanup(cancel)
	log := chrono.New()
	var conn transport.Conn
	var err error
	if over == "stdio" {
		conn, err = transport.StartStdio(ctx, transport.StdioConfig{Argv: targets.BothRevisions(t, "stdio"), Log: log})
	} else {
		conn, err = transport.DialHTTP(ctx, transport.HTTPConfig{URL: targets.BothRevisionsHTTP(t), Log: log})
	}
	if err != nil {
		t.Fatal(err)
	}
	s := peer.New(conn, peer.Options{Log: log})
	t.Cleanup(func() {
		s.Close(context.Background())
		if t.Failed() || os.Getenv("MCPFLIGHT_DUMP") != "" {
			for _, ev := range log.Events() {
				t.Logf("%d %s %s %s %s", ev.Seq, ev.Dir, ev.Channel, ev.Text, chrono.Clip(string(ev.Raw), 300))
			}
		}
	})
	s.SetEnvelope(negotiate.Options{}.Envelope())
	return s, ctx
}

// counts is the observe tool's answer.
type counts struct {
	Started, Completed, Cancelled, LastStep int
}

// observe calls the observer tool; with waitFor it answers once that
// count exceeds after (or at the tool's own timeout, 5s, a safety net).
func observe(t *testing.T, ctx context.Context, s *peer.Session, waitFor string, after int) counts {
	t.Helper()
	args := map[string]any{}
	if waitFor != "" {
		args = map[string]any{"waitFor": waitFor, "after": after, "timeoutMs": 10000}
	}
	var res struct {
		Structured counts `json:"structuredContent"`
	}
	if err := s.Request(ctx, mcp.MethodToolsCall, map[string]any{"name": "observe", "arguments": args}, &res); err != nil {
		t.Fatalf("observe: %v", err)
	}
	return res.Structured
}

// messages are the notifications/message levels the session received.
func messages(s *peer.Session) []string {
	var out []string
	for _, m := range s.Notifications() {
		if m.Method == mcp.NotificationMessage {
			var p struct {
				Level string `json:"level"`
			}
			_ = json.Unmarshal(m.Params, &p)
			out = append(out, p.Level)
		}
	}
	return out
}

// TestBothRevisionsDiscoverProgressLogging: server/discover answers with the
// SDK's supported versions and serverInfo; a call with a progress token
// gets its progress and a complete result; log messages come only for a
// request that asks with logLevel, at or above it (LOG-41, LOG-43).
func TestBothRevisionsDiscoverProgressLogging(t *testing.T) {
	skipInShort(t, "TestDiscover covers server/discover here")
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			s, ctx := bothRevisionsSession(t, over)
			d, err := s.Discover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{spec.V20260728}, d.SupportedVersions); diff != "" {
				t.Errorf("supportedVersions (-want +got):\n%s", diff)
			}
			if d.ServerInfo == nil || d.ServerInfo.Name != "mcpflight-bothrevisions" || d.ResultType != mcp.ResultTypeComplete {
				t.Errorf("discover %+v (serverInfo %+v)", d, d.ServerInfo)
			}

			c, err := s.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 5}}, peer.WithProgress())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Await(ctx)
			if err != nil || resp.Error != nil {
				t.Fatalf("slow: %v %+v", err, resp)
			}
			var got []float64
			for _, p := range c.ProgressSeen() {
				got = append(got, p.Progress)
			}
			if diff := cmp.Diff([]float64{1, 2, 3}, got); diff != "" || len(c.Violations()) > 0 {
				t.Errorf("progress (-want +got):\n%s; violations %v", diff, c.Violations())
			}
			if c.ResultType() != mcp.ResultTypeComplete {
				t.Errorf("resultType %q", c.ResultType())
			}

			for _, tc := range []struct {
				level string
				want  []string
			}{
				{"", nil},
				{"warning", []string{"warning", "error"}},
				{"debug", []string{"debug", "info", "warning", "error"}},
			} {
				before := len(messages(s))
				var opts []peer.CallOption
				if tc.level != "" {
					opts = append(opts, peer.WithLogLevel(tc.level))
				}
				if err := s.Request(ctx, mcp.MethodToolsCall, map[string]any{"name": "log", "arguments": map[string]any{}}, nil, opts...); err != nil {
					t.Fatal(err)
				}
				// Over stdio the messages precede the response on one
				// stream, over HTTP on the request's own: both are in
				// by the time the response is.
				if diff := cmp.Diff(tc.want, messages(s)[before:]); diff != "" {
					t.Errorf("logLevel %q: messages (-want +got):\n%s", tc.level, diff)
				}
			}
		})
	}
}

// TestBothRevisionsCancel: over stdio a notifications/cancelled (CAN-53), over
// Streamable HTTP the close of the request's response stream (CAN-43; no
// notifications/cancelled is sent), cancels the slow tool's handler: the
// observer sees it cancelled, and no response for the request comes.
func TestBothRevisionsCancel(t *testing.T) {
	skipInShort(t, "TestStdio2026Cancel and TestHTTP2026CancelClosesStream cover the 2026-07-28 cancel here")
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			s, ctx := bothRevisionsSession(t, over)
			before := observe(t, ctx, s, "", 0)
			c, err := s.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "stepMs": 0, "hold": true}}, peer.WithProgress())
			if err != nil {
				t.Fatal(err)
			}
			first := make(chan struct{})
			s.OnNotification(func(m *jsonrpc.Message) {
				if m.Method == mcp.NotificationProgress {
					select {
					case <-first:
					default:
						close(first)
					}
				}
			})
			select {
			case <-first:
			case <-ctx.Done():
				t.Fatal("no progress from the held call")
			}
			if err := s.Cancel(ctx, c, "enough"); err != nil {
				t.Fatal(err)
			}
			after := observe(t, ctx, s, "cancelled", before.Cancelled)
			if after.Cancelled != before.Cancelled+1 || after.Completed != before.Completed {
				t.Fatalf("observer before %+v, after %+v: the handler was not cancelled", before, after)
			}
			// A request answered after the observer's: the handler's
			// return (its "cancelled" result) was handled by then.
			if _, err := s.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			sentCancel := false
			for _, ev := range s.Log().Events() {
				if ev.Dir == chrono.Out && ev.Summary != nil && ev.Summary.Method == mcp.NotificationCancelled {
					sentCancel = true
				}
			}
			resp, _ := c.Response()
			switch over {
			case "stdio":
				if !sentCancel || c.State() != peer.StateCancelRequested {
					t.Errorf("stdio: cancel sent %v, state %s", sentCancel, c.State())
				}
			case "http":
				if _, err := c.Await(ctx); sentCancel || !errors.Is(err, peer.ErrStreamClosed) {
					t.Errorf("http: a notifications/cancelled was sent (%v) or the call did not end by the stream's close (%v)", sentCancel, err)
				}
			}
			if resp != nil {
				t.Errorf("a response came for the cancelled request: %s", resp.Raw)
			}
		})
	}
}

// TestBothRevisionsNegotiation: auto speaks 2026-07-28 with the SDK v2 server,
// whose server/discover lists only 2026-07-28 although it also answers
// initialize with 2025-11-25: the survey records that contradiction. With
// --2026-only (the SDK's legacy: "reject") initialize is refused with
// -32022, and 2025-11-25 is refused in one line.
func TestBothRevisionsNegotiation(t *testing.T) {
	skipInShort(t, "negotiate's tests survey the built-in servers here")
	for _, over := range []string{"stdio", "http"} {
		for _, strict := range []bool{false, true} {
			name := over
			if strict {
				name += "/2026-only"
			}
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // safety net
				defer cancel()
				var extra []string
				if strict {
					extra = []string{"--2026-only"}
				}
				var dial negotiate.Dialer
				if over == "stdio" {
					argv := targets.BothRevisions(t, append([]string{"stdio"}, extra...)...)
					dial = func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
						return transport.StartStdio(ctx, transport.StdioConfig{Argv: argv, Log: log})
					}
				} else {
					url := targets.BothRevisionsHTTP(t, extra...)
					dial = func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
						return transport.DialHTTP(ctx, transport.HTTPConfig{URL: url, Log: log})
					}
				}
				sv, err := negotiate.SurveyTarget(ctx, dial, negotiate.ModeAuto, negotiate.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if sv.Summary() != "2026-07-28: server/discover listed it" {
					t.Errorf("survey %q", sv.Summary())
				}
				var incs []string
				for _, inc := range sv.Inconsistencies {
					incs = append(incs, inc.Summary)
				}
				if strict {
					if len(incs) > 0 || !strings.Contains(sv.Probe2025.Failure, "-32022 UnsupportedProtocolVersion, supported: 2026-07-28") {
						t.Errorf("strict: inconsistencies %q, initialize %q", incs, sv.Probe2025.Failure)
					}
					_, err := negotiate.SurveyTarget(ctx, dial, negotiate.Mode20251125, negotiate.Options{})
					if want := "the server does not support 2025-11-25: it offers 2026-07-28 (initialize was answered -32022 UnsupportedProtocolVersion)"; err == nil || err.Error() != want {
						t.Errorf("2025-11-25: %v, want %q", err, want)
					}
					return
				}
				want := []string{"initialize agreed to 2025-11-25, which server/discover does not list (it lists 2026-07-28): either the server agrees to a revision it does not list as supported (LIF-9), or its supportedVersions names only the revisions of the per-request era (the spec does not say which it must)"}
				if diff := cmp.Diff(want, incs); diff != "" {
					t.Errorf("inconsistencies (-want +got):\n%s", diff)
				}
			})
		}
	}
}
