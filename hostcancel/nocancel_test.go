package hostcancel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// pipeSession runs serve as a scripted server over a pair of pipes and
// returns a session to it, closed at the test's end.
func pipeSession(t *testing.T, serve func(r io.Reader, w io.WriteCloser)) (*peer.Session, *chrono.Log) {
	t.Helper()
	toServerR, toServerW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toClientR, toClientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go serve(toServerR, toClientW)
	log := chrono.New()
	s := peer.New(transport.NewStream(toClientR, toServerW, transport.StreamConfig{Log: log}), peer.Options{Log: log})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		defer cancel()
		s.Close(ctx)
	})
	return s, log
}

// noCancelServer is a scripted server that runs tasks for tools/call but
// does not declare tasks.cancel.
func noCancelServer(t *testing.T) (*peer.Session, *chrono.Log) {
	t.Helper()
	s, log := pipeSession(t, func(r io.Reader, w io.WriteCloser) {
		defer w.Close()
		frames := transport.NewFrameReader(r, 0)
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
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
				continue
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, log
}

func sentMethod(log *chrono.Log, method string) int {
	n := 0
	for _, ev := range log.Events() {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Method == method {
			n++
		}
	}
	return n
}

// TestNoCancelCapability: a server that runs tasks but does not declare
// tasks.cancel cannot be asked to stop; the controller sends no
// tasks/cancel and raises an alert with an unknown outcome.
func TestNoCancelCapability(t *testing.T) {
	ctx := context.Background()
	s, log := noCancelServer(t)
	c := hostcancel.New(hostcancel.Config{Session: s})
	op, err := c.Start(ctx, hostcancel.Call{Tool: "ordinary"})
	if err != nil {
		t.Fatal(err)
	}
	r := op.Abort(ctx, "budget ended")
	if r.Classification != hostcancel.OutcomeUnknown || r.Unknown != hostcancel.UnknownNoCancel || !r.Alert || r.CancelSent {
		t.Errorf("%+v", r)
	}
	if n := sentMethod(log, mcp.MethodTasksCancel); n != 0 {
		t.Errorf("%d tasks/cancel sent to a server without tasks.cancel", n)
	}
	if cs := c.Counters(); cs.Alerts != 1 || cs.TaskCancelRequested != 0 {
		t.Errorf("counters %+v", cs)
	}
}

// TestConsequentialWithoutCancel: a consequential tool on a server without
// tasks.cancel alerts and opens the circuit; it is refused unless the host
// allows it, and then nothing more is refused until the circuit resets.
func TestConsequentialWithoutCancel(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			ctx := context.Background()
			s, log := noCancelServer(t)
			var ev events
			c := hostcancel.New(hostcancel.Config{Session: s, OnAlert: ev.alert,
				Effects: &hostcancel.Effects{Tools: []string{"charge"}, AllowWithoutCancel: allow}})
			_, err := c.Start(ctx, hostcancel.Call{Tool: "charge", Key: "invoice-7"})
			if allow != (err == nil) || (!allow && !errors.Is(err, hostcancel.ErrNoCancelCapability)) {
				t.Fatalf("Start: %v (allowed %v)", err, allow)
			}
			calls := 0
			if allow {
				calls = 1
			}
			if n := sentMethod(log, "tools/call"); n != calls {
				t.Errorf("%d tools/call sent, want %d", n, calls)
			}
			if diff := cmp.Diff([]hostcancel.Alert{hostcancel.AlertConsequentialWithoutCancel}, ev.alertNames()); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
			if st := c.Breaker().State("no-cancel", "charge"); !st.Open || st.Alert != hostcancel.AlertConsequentialWithoutCancel {
				t.Errorf("circuit %+v, want open", st)
			}
			if _, err := c.Start(ctx, hostcancel.Call{Tool: "charge", Key: "invoice-8"}); !errors.Is(err, hostcancel.ErrCircuitOpen) {
				t.Errorf("second Start: %v, want ErrCircuitOpen", err)
			}
		})
	}
}
