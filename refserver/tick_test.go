package refserver

import (
	"context"
	"testing"
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
