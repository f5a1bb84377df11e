package negotiate_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/revisionsrv"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/transport"
)

// prefixed is a stdio-shaped connection to a server that first writes
// banner on its stdout, then, when serve is set, serves revisionsrv's dual-era
// server; otherwise it reads and ignores everything.
func prefixed(banner string, serve bool) negotiate.Dialer {
	return func(_ context.Context, log *chrono.Log) (transport.Conn, error) {
		toServerR, toServerW := io.Pipe()
		toClientR, toClientW := io.Pipe()
		go func() {
			defer toClientW.Close()
			if _, err := io.WriteString(toClientW, banner); err != nil {
				return
			}
			if serve {
				_ = revisionsrv.Serve(revisionsrv.Dual, toServerR, toClientW)
				return
			}
			_, _ = io.Copy(io.Discard, bufio.NewReader(toServerR))
		}()
		return transport.NewStream(toClientR, toServerW, transport.StreamConfig{Log: log, InChannel: "stdout", OutChannel: "stdin",
			OnClose: func(context.Context) transport.Teardown {
				_ = toServerW.Close()
				return transport.Teardown{ExitedAfter: transport.StepCloseInput}
			}}), nil
	}
}

// TestNotJSONRPCTarget: a target whose first line is not JSON-RPC and
// that writes no JSON-RPC after it fails the negotiation with an error
// naming what it wrote, long before the handshake's own timeout (15 s by
// default; the test's safety net is 30 s, and the failure must be the
// NotJSONRPCError, not a deadline).
//
// The target is a pair of pipes in this process, so each mode runs in a
// synctest bubble: the wait for JSON-RPC after the line runs on the
// bubble's clock, and the test does not spend it in real time.
func TestNotJSONRPCTarget(t *testing.T) {
	for _, mode := range []negotiate.Mode{negotiate.ModeAuto, negotiate.Mode20251125, negotiate.Mode20260728} {
		t.Run(string(mode), func(t *testing.T) { synctest.Test(t, func(t *testing.T) { notJSONRPCTarget(t, mode) }) })
	}
}

func notJSONRPCTarget(t *testing.T, mode negotiate.Mode) {
	sv, err := negotiate.SurveyTarget(testCtx(t), prefixed("oops, not json\n", false), mode, negotiate.Options{})
	var nj *negotiate.NotJSONRPCError
	if !errors.As(err, &nj) && !(sv != nil && probeSaysNotJSONRPC(sv)) {
		t.Fatalf("error %v; want a NotJSONRPCError", err)
	}
	for _, p := range []*negotiate.Probe{sv.Probe2026, sv.Probe2025} {
		if p == nil {
			continue
		}
		if !errors.Is(p.Err, negotiate.ErrNotJSONRPC) || !strings.Contains(p.Failure, `"oops, not json" on stdout`) {
			t.Errorf("%s probe: %v (%s); want it to name the line", p.Method, p.Err, p.Failure)
		}
	}
}

func probeSaysNotJSONRPC(sv *negotiate.Survey) bool {
	for _, p := range []*negotiate.Probe{sv.Probe2026, sv.Probe2025} {
		if p != nil && errors.Is(p.Err, negotiate.ErrNotJSONRPC) {
			return true
		}
	}
	return false
}

// TestBannerThenJSONRPC: a server that prints a banner before answering
// (a STD-4 fail, which the cases report) is still negotiated with.
func TestBannerThenJSONRPC(t *testing.T) {
	sv, err := negotiate.SurveyTarget(testCtx(t), prefixed("Server listening on stdio\n", true), negotiate.ModeAuto, negotiate.Options{})
	if err != nil {
		t.Fatalf("survey: %v", err)
	}
	if len(sv.Revisions) == 0 {
		t.Fatal("no revision")
	}
}
