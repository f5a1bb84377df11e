package negotiate_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/revisionsrv"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// pipeConn is a stdio-shaped connection to revisionsrv in this process.
func pipeConn(_ *testing.T, mode revisionsrv.Mode, log *chrono.Log) transport.Conn {
	return revisionsrv.Conn(mode, log)
}

// dialer opens connections to revisionsrv over "stdio" (an in-process pipe)
// or "http" (an httptest server).
func dialer(t *testing.T, mode revisionsrv.Mode, over string) negotiate.Dialer {
	t.Helper()
	if over == "stdio" {
		return func(_ context.Context, log *chrono.Log) (transport.Conn, error) { return pipeConn(t, mode, log), nil }
	}
	ts := httptest.NewServer(revisionsrv.Handler(mode))
	t.Cleanup(ts.Close)
	return func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		return transport.DialHTTP(ctx, transport.HTTPConfig{URL: ts.URL, Log: log})
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // safety net
	t.Cleanup(cancel)
	return ctx
}

// opts keeps a silent probe short: the silent server is the evidence,
// and nothing else waits on the timeout.
func opts(mode revisionsrv.Mode) negotiate.Options {
	if mode == revisionsrv.Silent2025 {
		return negotiate.Options{ProbeTimeout: 300 * time.Millisecond}
	}
	return negotiate.Options{}
}

type want struct {
	revisions []string
	reason    string // substring of the (first) reason
	noCommon  string // substring of a *NoCommonRevisionError's text
	err       string // substring of another error
	// inconsistent is a substring of an inconsistency SurveyTarget finds.
	inconsistent string
}

var only2026 = []string{spec.V20260728}
var only2025 = []string{spec.V20251125}

// cases: what each negotiation mode makes of each scripted server, over
// both transports. The legacy servers fail the probe three ways (-32601,
// -32602, silence; over HTTP a -32000 with a null id, a plain-text 400
// and a held request): the fallback is not keyed to one code (STD-49,
// HTTP-106).
var cases = []struct {
	server revisionsrv.Mode
	mode   negotiate.Mode
	want   want
}{
	{revisionsrv.Only2026, negotiate.ModeAuto, want{revisions: only2026, reason: "server/discover listed it"}},
	{revisionsrv.Dual, negotiate.ModeAuto, want{revisions: only2026, reason: "server/discover listed it"}},
	{revisionsrv.Inconsistent, negotiate.ModeAuto, want{revisions: only2026, reason: "server/discover listed it",
		inconsistent: "initialize agreed to 2025-11-25, which server/discover does not list (it lists 2026-07-28)"}},
	{revisionsrv.MethodNotFound2025, negotiate.ModeAuto, want{revisions: only2025, reason: "server/discover failed ("}},
	{revisionsrv.InvalidParams2025, negotiate.ModeAuto, want{revisions: only2025, reason: "server/discover failed ("}},
	{revisionsrv.Silent2025, negotiate.ModeAuto, want{revisions: only2025, reason: "server/discover failed (no answer within 300ms); initialize agreed"}},
	{revisionsrv.Future, negotiate.ModeAuto, want{noCommon: "the server does not support 2025-11-25 or 2026-07-28: it offers 2027-01-01 (server/discover was answered -32022 UnsupportedProtocolVersion)"}},

	{revisionsrv.Only2026, negotiate.Mode20251125, want{noCommon: "the server does not support 2025-11-25: it offers 2026-07-28 (initialize was answered -32022 UnsupportedProtocolVersion)"}},
	{revisionsrv.Dual, negotiate.Mode20251125, want{revisions: only2025, reason: "as asked; initialize agreed"}},
	{revisionsrv.MethodNotFound2025, negotiate.Mode20251125, want{revisions: only2025, reason: "as asked; initialize agreed"}},

	{revisionsrv.Only2026, negotiate.Mode20260728, want{revisions: only2026, reason: "as asked; server/discover listed it"}},
	{revisionsrv.MethodNotFound2025, negotiate.Mode20260728, want{noCommon: "the server does not support 2026-07-28: it offers 2025-11-25 (server/discover failed ("}},
	{revisionsrv.Silent2025, negotiate.Mode20260728, want{noCommon: "the server does not support 2026-07-28: it offers 2025-11-25 (server/discover failed (no answer within 300ms), and initialize agreed to 2025-11-25)"}},
	{revisionsrv.Future, negotiate.Mode20260728, want{noCommon: "the server does not support 2026-07-28: it offers 2027-01-01"}},
}

// TestOpen: negotiating on one session leaves it speaking the chosen
// revision: a modern one answers tools/list under the envelope, a legacy
// one after initialize. A -32022 listing nothing usable is one clear
// error naming what the server offers.
func TestOpen(t *testing.T) {
	for _, tc := range cases {
		for _, over := range []string{"stdio", "http"} {
			t.Run(string(tc.server)+"/"+string(tc.mode)+"/"+over, func(t *testing.T) {
				ctx := testCtx(t)
				log := chrono.New()
				conn, err := dialer(t, tc.server, over)(ctx, log)
				if err != nil {
					t.Fatal(err)
				}
				s := peer.New(conn, peer.Options{Log: log})
				defer s.Close(context.WithoutCancel(ctx))
				out, err := negotiate.Open(ctx, s, tc.mode, opts(tc.server))
				if checkErr(t, err, tc.want) {
					return
				}
				if out.Revision != tc.want.revisions[0] || !strings.Contains(out.Reason, tc.want.reason) {
					t.Fatalf("Open = %s, want %s with a reason containing %q", out, tc.want.revisions[0], tc.want.reason)
				}
				if got := s.Revision(); got != out.Revision {
					t.Errorf("the session speaks %q", got)
				}
				if _, err := s.ListTools(ctx); err != nil {
					t.Errorf("tools/list on the negotiated session: %v", err)
				}
				if !decisionSays(log, "speaking "+out.String()) {
					t.Errorf("the chronology has no decision naming %q", out)
				}
			})
		}
	}
}

// TestSurveyTarget: probing with connections of its own, the survey
// compares server/discover with initialize and records where they
// disagree; under both it lists every revision the server offers.
func TestSurveyTarget(t *testing.T) {
	all := append(cases[:len(cases):len(cases)],
		struct {
			server revisionsrv.Mode
			mode   negotiate.Mode
			want   want
		}{revisionsrv.Dual, negotiate.ModeBoth, want{revisions: []string{spec.V20251125, spec.V20260728}, reason: "initialize agreed to 2025-11-25"}},
		struct {
			server revisionsrv.Mode
			mode   negotiate.Mode
			want   want
		}{revisionsrv.Inconsistent, negotiate.ModeBoth, want{revisions: []string{spec.V20251125, spec.V20260728}, reason: "initialize agreed",
			inconsistent: "initialize agreed to 2025-11-25, which server/discover does not list"}},
		struct {
			server revisionsrv.Mode
			mode   negotiate.Mode
			want   want
		}{revisionsrv.Only2026, negotiate.ModeBoth, want{revisions: only2026, reason: "server/discover listed it"}},
		struct {
			server revisionsrv.Mode
			mode   negotiate.Mode
			want   want
		}{revisionsrv.MethodNotFound2025, negotiate.ModeBoth, want{revisions: only2025, reason: "initialize agreed"}},
		struct {
			server revisionsrv.Mode
			mode   negotiate.Mode
			want   want
		}{revisionsrv.Future, negotiate.ModeBoth, want{noCommon: "it offers 2027-01-01"}},
	)
	for _, tc := range all {
		for _, over := range []string{"stdio", "http"} {
			t.Run(string(tc.server)+"/"+string(tc.mode)+"/"+over, func(t *testing.T) {
				ctx := testCtx(t)
				sv, err := negotiate.SurveyTarget(ctx, dialer(t, tc.server, over), tc.mode, opts(tc.server))
				if sv == nil {
					t.Fatal("no survey")
				}
				var incs []string
				for _, inc := range sv.Inconsistencies {
					incs = append(incs, inc.Summary)
				}
				if tc.want.inconsistent != "" && !strings.Contains(strings.Join(incs, "\n"), tc.want.inconsistent) {
					t.Errorf("inconsistencies %q, want one containing %q", incs, tc.want.inconsistent)
				}
				if tc.want.inconsistent == "" && len(incs) > 0 {
					t.Errorf("unexpected inconsistencies %q", incs)
				}
				if checkErr(t, err, tc.want) {
					return
				}
				if diff := cmp.Diff(tc.want.revisions, sv.Revisions); diff != "" {
					t.Errorf("revisions (-want +got):\n%s", diff)
				}
				if r := sv.Reasons[sv.Revisions[0]]; !strings.Contains(r, tc.want.reason) {
					t.Errorf("reason %q, want it to contain %q", r, tc.want.reason)
				}
				for _, p := range []*negotiate.Probe{sv.Probe2026, sv.Probe2025} {
					if p != nil && (p.Log == nil || p.Log.Len() == 0) {
						t.Errorf("the %s probe has no chronology", p.Method)
					}
				}
			})
		}
	}
}

// checkErr checks err against w; it reports whether the test is done.
func checkErr(t *testing.T, err error, w want) bool {
	t.Helper()
	switch {
	case w.noCommon != "":
		var nce *negotiate.NoCommonRevisionError
		if !errors.As(err, &nce) || !errors.Is(err, negotiate.ErrNoCommonRevision) {
			t.Fatalf("err = %v, want a *NoCommonRevisionError", err)
		}
		if !strings.Contains(err.Error(), w.noCommon) {
			t.Errorf("err = %q, want it to contain %q", err, w.noCommon)
		}
		if strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("the error is more than one line: %q", err)
		}
		return true
	case w.err != "":
		if err == nil || !strings.Contains(err.Error(), w.err) {
			t.Fatalf("err = %v, want one containing %q", err, w.err)
		}
		return true
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	}
	return false
}

func decisionSays(log *chrono.Log, text string) bool {
	for _, ev := range log.Events() {
		if ev.Kind == chrono.KindDecision && strings.Contains(ev.Text, text) {
			return true
		}
	}
	return false
}

// TestOpenFallsBackOnTheSameConnection: over stdio the probe and the
// fallback share the process (STD-48): server/discover, then initialize
// and notifications/initialized, on one connection.
func TestOpenFallsBackOnTheSameConnection(t *testing.T) {
	ctx := testCtx(t)
	log := chrono.New()
	s := peer.New(pipeConn(t, revisionsrv.InvalidParams2025, log), peer.Options{Log: log})
	defer s.Close(context.WithoutCancel(ctx))
	out, err := negotiate.Open(ctx, s, negotiate.ModeAuto, negotiate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "2025-11-25: server/discover failed (-32602 Invalid params); initialize agreed"; out.String() != want {
		t.Errorf("outcome %q, want %q", out, want)
	}
	var sent []string
	for _, ev := range log.Events() {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil {
			sent = append(sent, ev.Summary.Method)
		}
	}
	if diff := cmp.Diff([]string{mcp.MethodServerDiscover, mcp.MethodInitialize, mcp.NotificationInitialized}, sent); diff != "" {
		t.Errorf("frames sent (-want +got):\n%s", diff)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]negotiate.Mode{"": negotiate.ModeAuto, "auto": negotiate.ModeAuto, "both": negotiate.ModeBoth,
		"2025-11-25": negotiate.Mode20251125, "2026-07-28": negotiate.Mode20260728} {
		if got, err := negotiate.ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := negotiate.ParseMode("2025-06-18"); !errors.Is(err, negotiate.ErrUnknownMode) {
		t.Errorf("ParseMode(2025-06-18) = %v", err)
	}
}
