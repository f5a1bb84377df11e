package telemetry

import (
	"context"
	"net"
	"testing"

	"github.com/mcpflight/mcpflight/monitor"
)

// TestPendingBounded: findings that no activity follows (a server that
// writes nothing but garbage) do not pile up waiting for one: at most
// one frame's findings wait.
func TestPendingBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	e, err := New(Config{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing listens: Close's error is expected.
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	for seq := uint64(1); seq <= 10000; seq++ {
		e.Finding(monitor.Finding{Rule: monitor.RuleWellFormed, Session: "stdio", Side: monitor.Server, Seq: seq})
		e.Finding(monitor.Finding{Rule: monitor.RuleWellFormed, Session: "stdio", Side: monitor.Server, Seq: seq})
	}
	e.mu.Lock()
	n := len(e.pending)
	e.mu.Unlock()
	if n != 2 {
		t.Errorf("%d findings wait for an activity, want the last frame's 2", n)
	}
}
