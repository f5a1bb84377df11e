package refserver

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// TestSlowTickModeAdvancesWithoutGates checks the interactive mode of the
// slow tool: with tickMs it runs to completion on its own, with progress.
func TestSlowTickModeAdvancesWithoutGates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := chrono.New()
	conn, _ := InProcess(ctx, Options{}, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	defer s.Close(ctx)
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"key": "k", "steps": 3, "tickMs": 1}},
		peer.WithProgressToken(jsonrpc.IntToken(1)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Await(ctx)
	if err != nil || resp.Error != nil {
		t.Fatalf("tick mode did not complete: %v %v", err, resp)
	}
	if n := len(c.ProgressSeen()); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}
}

// TestSlowWithoutKeyIsOrdinary: a slow call that names no key (an
// ordinary client's: the Inspector, "mcpflight call --url … slow") uses
// no control extension, so it is never gated: it advances at
// OrdinaryTickMs, or at its own tickMs, and completes with progress,
// though no client ever sends mcpflight/release. A keyless
// "gated": true is refused: no client could name its gate.
func TestSlowWithoutKeyIsOrdinary(t *testing.T) {
	// The server is in this process, on pipes: its ticks (OrdinaryTickMs
	// apart) run on a synctest bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		log := chrono.New()
		conn, _ := InProcess(ctx, Options{}, transport.StreamConfig{Log: log})
		s := peer.New(conn, peer.Options{Log: log})
		defer s.Close(ctx)
		if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, args := range []map[string]any{{"steps": 2, "tickMs": 1}, {"steps": 2}, {"steps": 1}} {
			c, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow", "arguments": args},
				peer.WithProgressToken(jsonrpc.IntToken(int64(10+i))))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Await(ctx)
			if err != nil || resp.Error != nil {
				t.Fatalf("call %d (%v) did not complete: %v %v", i, args, err, resp)
			}
			if n, want := len(c.ProgressSeen()), args["steps"].(int); n != want {
				t.Errorf("call %d: %d progress notifications, want %d", i, n, want)
			}
		}
		err := s.Request(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"gated": true}}, nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
			t.Errorf("keyless gated call: %v, want -32602", err)
		}
	})
}
