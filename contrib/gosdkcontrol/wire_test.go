package gosdkcontrol_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/contrib/gosdkcontrol"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// The module keeps the wire names of its own, so that a server's build
// does not depend on mcpflight; they must be the checker's.
func TestWireNames(t *testing.T) {
	for _, n := range [][2]string{
		{gosdkcontrol.Capability, control.Capability},
		{gosdkcontrol.MethodAwait, control.MethodAwait},
		{gosdkcontrol.MethodRelease, control.MethodRelease},
		{gosdkcontrol.MethodCounters, control.MethodCounters},
	} {
		if n[0] != n[1] {
			t.Errorf("gosdkcontrol says %q, the checker %q", n[0], n[1])
		}
	}
}

// TestControlledCall drives one controlled call by hand: the checker
// detects the extension, the start gate holds the handler, a cancel at
// step 1 ends it with outcome cancelled and one release, and invalid
// checkpoint params get -32602.
func TestControlledCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
	defer cancel()
	s, ctl := newControlledServer(t)
	log := chrono.New()
	conn, _ := transport.Pipes(ctx, serveControlled(s, ctl), transport.StreamConfig{Log: log})
	sess := peer.New(conn, peer.Options{Log: log})
	defer sess.Close(ctx)
	if _, err := sess.Initialize(ctx, peer.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	c := control.Detect(sess)
	if c == nil {
		t.Fatal("the initialize result does not advertise " + control.Capability)
	}
	call, err := sess.Start(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"key": "k", "steps": 3, "delayMs": 1}},
		peer.WithProgressToken(jsonrpc.StringToken("t")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Await(ctx, "k/start"); err != nil {
		t.Fatal(err)
	}
	if n := len(call.ProgressSeen()); n != 0 {
		t.Errorf("%d progress notifications while held at k/start", n)
	}
	if err := c.Release(ctx, "k/start"); err != nil {
		t.Fatal(err)
	}
	r, err := c.Await(ctx, "k/step/1")
	if err != nil {
		t.Fatal(err)
	}
	if !control.RequestIDIs(r.RequestID, call.ID) {
		t.Errorf("k/step/1 names request %s, want %s", r.RequestID, call.ID)
	}
	if err := sess.Cancel(ctx, call, "test"); err != nil {
		t.Fatal(err)
	}
	end, err := c.Await(ctx, "k/end")
	if err != nil || end.Outcome != gosdkcontrol.OutcomeCancelled {
		t.Fatalf("k/end: %+v, %v; want outcome cancelled", end, err)
	}
	counters, err := c.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	op := counters.Operations["k"]
	if counters.OperationsCancelled != 1 || counters.OperationsActive != 0 || counters.ResourcesReleased != 1 ||
		counters.ProgressTokensLive != 0 || op.State != "cancelled" || op.Releases != 1 || op.ProgressSent != 1 {
		t.Errorf("counters after the cancel: %+v", counters)
	}
	var rpcErr *jsonrpc.Error
	for _, params := range []map[string]any{{}, {"checkpoint": ""}} {
		err := sess.Request(ctx, gosdkcontrol.MethodRelease, params, nil)
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("release %v: %v, want -32602", params, err)
		}
	}
}
