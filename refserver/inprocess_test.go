package refserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// recv returns the next inbound message of the stream.
func recv(t *testing.T, s *transport.Stream) *jsonrpc.Message {
	t.Helper()
	select {
	case in, ok := <-s.Inbound():
		if !ok || in.Msg == nil {
			t.Fatalf("inbound: ok %v, err %v", ok, in.Err)
		}
		return in.Msg
	case <-time.After(safety):
		t.Fatal("no inbound frame")
	}
	return nil
}

func sendReq(t *testing.T, s *transport.Stream, id int64, method string, params any) {
	t.Helper()
	b, err := jsonrpc.EncodeRequest(jsonrpc.IntID(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func TestInProcessClosesOnInputEnd(t *testing.T) {
	log := chrono.New()
	s, errc := InProcess(context.Background(), Options{}, transport.StreamConfig{Log: log})
	sendReq(t, s, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18"})
	if m := recv(t, s); m.ID != jsonrpc.IntID(1) || m.Kind != jsonrpc.KindResult {
		t.Fatalf("got %s", m.Raw)
	}
	// Blocked work does not hold the teardown up.
	sendReq(t, s, 2, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"key": "k"}})
	sendReq(t, s, 3, mcp.MethodControlAwait, map[string]any{"checkpoint": "k/start"})
	recv(t, s)
	td := s.Close(context.Background())
	if td.ExitedAfter != transport.StepCloseInput || td.ExitCode != 0 {
		t.Errorf("teardown %+v", td)
	}
	if err := <-errc; err != nil {
		t.Errorf("Serve: %v", err)
	}
	var channels []string
	for _, e := range log.Events() {
		if e.Kind == chrono.KindFrame {
			channels = append(channels, string(e.Dir)+":"+e.Channel)
		}
	}
	if len(channels) < 2 || channels[0] != "out:stdin" || channels[1] != "in:stdout" {
		t.Errorf("chronology channels %v", channels)
	}
}

func TestInProcessServerEndedFirst(t *testing.T) {
	s, errc := InProcess(context.Background(), Options{Faults: FaultSet{FaultCrashOnMalformedCancel: true}},
		transport.StreamConfig{Log: chrono.New()})
	if err := s.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrCrash) {
		t.Fatalf("Serve: %v", err)
	}
	select {
	case <-s.Done():
	case <-time.After(safety):
		t.Fatal("stream input did not end after the server did")
	}
	if err := s.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err == nil {
		t.Errorf("send to an ended server succeeded")
	}
	if td := s.Close(context.Background()); td.ExitedAfter != transport.StepNone || td.ExitCode != 1 {
		t.Errorf("teardown %+v", td)
	}
}

func TestInProcessEscalatesWhenInputEndIsIgnored(t *testing.T) {
	s, errc := InProcess(context.Background(), Options{Faults: FaultSet{FaultIgnoreStdinEOF: true}},
		transport.StreamConfig{Log: chrono.New()})
	sendReq(t, s, 1, "ping", nil)
	recv(t, s)
	// The deadline is the rung's timeout, not a synchronisation: the
	// server never ends on its own.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if td := s.Close(ctx); td.ExitedAfter != transport.StepSIGTERM {
		t.Errorf("teardown %+v", td)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve: %v", err)
	}
}
