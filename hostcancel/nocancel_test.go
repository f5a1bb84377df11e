package hostcancel_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// TestNoCancelCapability: a server that runs tasks but does not declare
// tasks.cancel cannot be asked to stop; the controller sends no
// tasks/cancel and raises an alert with an unknown outcome.
func TestNoCancelCapability(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	toServerR, toServerW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toClientR, toClientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A scripted server: tasks for tools/call, but no tasks.cancel.
	go func() {
		defer toClientW.Close()
		frames := transport.NewFrameReader(toServerR, 0)
		for {
			raw, err := frames.ReadFrame()
			if err != nil {
				return
			}
			m, err := jsonrpc.Decode(raw)
			if err != nil || m.Kind != jsonrpc.KindRequest {
				continue
			}
			var out string
			switch m.Method {
			case "initialize":
				out = `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"no-cancel","version":"1"}}`
			case "tools/call":
				out = `{"task":{"taskId":"t-1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}}`
			default:
				fmt.Fprintf(toClientW, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
				continue
			}
			fmt.Fprintf(toClientW, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, out)
		}
	}()
	log := chrono.New()
	s := peer.New(transport.NewStream(toClientR, toServerW, transport.StreamConfig{Log: log}), peer.Options{Log: log})
	defer s.Close(ctx)
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	c := hostcancel.New(hostcancel.Config{Session: s})
	op, err := c.Start(ctx, map[string]any{"name": "consequential"}, -1)
	if err != nil {
		t.Fatal(err)
	}
	r := op.Abort(ctx, "budget ended")
	if r.Classification != hostcancel.OutcomeUnknown || !r.Alert || r.CancelSent {
		t.Errorf("%+v", r)
	}
	for _, ev := range log.Events() {
		if ev.Dir == chrono.Out && ev.Summary != nil && ev.Summary.Method == mcp.MethodTasksCancel {
			t.Errorf("tasks/cancel sent to a server without tasks.cancel: seq %d", ev.Seq)
		}
	}
	if cs := c.Counters(); cs.Alerts != 1 || cs.TaskCancelRequested != 0 {
		t.Errorf("counters %+v", cs)
	}
}
