package peer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// inboxConn is a transport.Conn whose inbound frames the test writes.
type inboxConn struct{ in chan transport.Inbound }

func (c *inboxConn) Send(context.Context, []byte) error       { return nil }
func (c *inboxConn) Inbound() <-chan transport.Inbound        { return c.in }
func (c *inboxConn) Err() error                               { return nil }
func (c *inboxConn) Close(context.Context) transport.Teardown { return transport.Teardown{} }

// TestLostAnswerFailsCall: an Inbound that says a request's exchange
// ended without its response fails that call at once, with the cause; a
// stall or an early end adds no stray (no frame came), a body that is not
// JSON or an oversized event does.
func TestLostAnswerFailsCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // safety net
	defer cancel()
	for _, tc := range []struct {
		name   string
		cause  error
		raw    []byte
		strays int
	}{
		{"not JSON", &jsonrpc.DecodeError{Class: jsonrpc.ClassParse}, []byte("<html>"), 1},
		{"event too large", transport.ErrEventTooLarge, nil, 1},
		{"stalled", transport.ErrStalled, nil, 0},
		{"ended early", errors.New("the stream ended before the response"), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &inboxConn{in: make(chan transport.Inbound, 1)}
			s := peer.New(conn, peer.Options{})
			defer s.Close(ctx)
			call, err := s.Start(ctx, "tools/call", map[string]any{"name": "x"})
			if err != nil {
				t.Fatal(err)
			}
			conn.in <- transport.Inbound{For: call.ID, Seq: 7, Raw: tc.raw,
				Err: fmt.Errorf("transport: POST #1: %w: %w", transport.ErrNoAnswer, tc.cause)}
			_, err = call.Await(ctx)
			if !errors.Is(err, transport.ErrNoAnswer) || !errors.Is(err, tc.cause) || ctx.Err() != nil {
				t.Fatalf("Await: %v, want the lost answer's error", err)
			}
			close(conn.in)
			s.Close(ctx)
			if n := len(s.Strays()); n != tc.strays {
				t.Errorf("%d strays, want %d: %+v", n, tc.strays, s.Strays())
			}
		})
	}
}
