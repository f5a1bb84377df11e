package refserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
)

// observe calls the observer tool and returns its structuredContent,
// checking that the text content carries the same JSON.
func (h *harness) observe() Observation {
	h.t.Helper()
	var r struct {
		Content           []textContent `json:"content"`
		StructuredContent Observation   `json:"structuredContent"`
		IsError           bool          `json:"isError"`
	}
	h.result("tools/call", map[string]any{"name": ToolObserver, "arguments": map[string]any{}}, &r)
	var fromText Observation
	if len(r.Content) != 1 || json.Unmarshal([]byte(r.Content[0].Text), &fromText) != nil || fromText != r.StructuredContent || r.IsError {
		h.t.Fatalf("observer result: %+v", r)
	}
	return r.StructuredContent
}

// TestObserver reads the observer before and after a slow call cancelled
// at step 1, the way an observer case does (docs/observer.md), and shows
// the counts the faults that keep the handler going produce: an observer
// case fails those.
func TestObserver(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		want  Observation
	}{
		{"cancelled handler stops", "", Observation{Started: 1, Cancelled: 1, LastStep: 1}},
		{"handler still running", FaultHangAfterCancel, Observation{Started: 1, Running: 1, LastStep: 1}},
		{"handler completes anyway", FaultRespondAfterCancel, Observation{Started: 1, Completed: 1, LastStep: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h *harness
			if tt.fault == "" {
				h = newHarness(t)
			} else {
				h = newHarness(t, tt.fault)
			}
			if before := h.observe(); before != (Observation{}) {
				t.Fatalf("observer before any call: %+v", before)
			}
			id := jsonrpc.IntID(1)
			h.slow(id, json.RawMessage(`"c"`), map[string]any{"key": "k", "steps": 3})
			h.release("k/start")
			h.await("k/step/1")
			h.cancelReq(id)
			if tt.fault != FaultHangAfterCancel {
				h.await("k/end")
			} else {
				// The cancel is handled before the next frame is read, and
				// the handler never ends: no wait can change the count.
				h.counters()
			}
			if diff := cmp.Diff(tt.want, h.observe()); diff != "" {
				t.Errorf("observer after the cancel (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObserverSpansSessions shows that the counts are the server's, not
// a session's: a session opened after another one's handler completed
// (and after that session ended) still counts it.
func TestObserverSpansSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	srv := New(Options{})
	session := func() *peer.Session {
		log := chrono.New()
		conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
		s := peer.New(conn, peer.Options{Log: log})
		if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := session()
	if err := first.Request(ctx, "tools/call", map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "k", "steps": 2, "gated": false}}, nil); err != nil {
		t.Fatal(err)
	}
	first.Close(ctx)
	second := session()
	defer second.Close(ctx)
	// Read the way a case does: through the reference profile's entry.
	ref, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	var result json.RawMessage
	if err := second.Request(ctx, "tools/call", map[string]any{"name": ref.Observer.Tool, "arguments": ref.Observer.Arguments}, &result); err != nil {
		t.Fatal(err)
	}
	doc, err := ref.Observer.Document(result)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ref.Observer.Observe(doc)
	if want := (profile.Observation{Started: 1, Completed: 1, LastStep: 2}); err != nil || got != want {
		t.Errorf("the second session observes %+v (%v), want %+v", got, err, want)
	}
}
