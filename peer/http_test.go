package peer_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// cancelsSent counts the notifications/cancelled our session sent.
func cancelsSent(log *chrono.Log) int {
	n := 0
	for _, ev := range log.Events() {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Method == "notifications/cancelled" {
			n++
		}
	}
	return n
}

// TestDroppedStreamIsNotACancel: over Streamable HTTP a stream that drops
// (here on purpose) leaves our call pending, not cancel-requested, and
// sends no notifications/cancelled (HTTP-25, HTTP-26); only an intended
// cancel sends one.
func TestDroppedStreamIsNotACancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // safety net
	defer cancel()
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	log := chrono.New()
	conn, err := transport.DialHTTP(ctx, transport.HTTPConfig{URL: ts.URL, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	s := peer.New(conn, peer.Options{Log: log})
	defer s.Close(ctx)
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	ctl := control.Detect(s)
	if ctl == nil {
		t.Fatal("reference server without control extension")
	}
	call, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"key": "a", "steps": 2}}, peer.WithProgress())
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Release(ctx, "a/start"); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Await(ctx, "a/step/1"); err != nil {
		t.Fatal(err)
	}
	stream := conn.StreamOf(call.ID)
	if stream == "" {
		t.Fatal("the call was not answered with a stream")
	}
	// Let progress 1 arrive so that the last event ID is past it.
	if _, err := log.WaitFor(ctx, 0, func(ev chrono.Event) bool {
		return ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == "notifications/progress"
	}); err != nil {
		t.Fatal(err)
	}
	last := conn.LastEventID(stream)
	if err := conn.Drop(stream); err != nil {
		t.Fatal(err)
	}
	if st := call.State(); st != peer.StatePending || call.CancelRequested() {
		t.Fatalf("after a dropped stream the call is %s (cancel requested %v), want pending", st, call.CancelRequested())
	}
	if n := cancelsSent(log); n != 0 {
		t.Fatalf("a dropped stream sent %d notifications/cancelled", n)
	}
	if err := ctl.Release(ctx, "a/step/1"); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Release(ctx, "a/step/2"); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Await(ctx, "a/end"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Resume(ctx, last); err != nil {
		t.Fatal(err)
	}
	resp, err := call.Await(ctx)
	if err != nil || resp == nil || resp.Error != nil {
		t.Fatalf("result after resume: %v %v", resp, err)
	}
	c, err := ctl.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.OperationsCompleted != 1 || c.OperationsCancelled != 0 {
		t.Errorf("counters: completed %d cancelled %d, want 1 and 0", c.OperationsCompleted, c.OperationsCancelled)
	}

	// An intended cancel sends exactly one notifications/cancelled.
	call2, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"key": "b", "steps": 2}}, peer.WithProgress())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Await(ctx, "b/start"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, call2, "intended"); err != nil {
		t.Fatal(err)
	}
	if n := cancelsSent(log); n != 1 {
		t.Fatalf("an intended cancel sent %d notifications/cancelled, want 1", n)
	}
	if !call2.CancelRequested() {
		t.Error("the intended cancel is not recorded as requested")
	}
}
