package peer

import (
	"errors"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/transport"
)

// Cancelling a 2026-07-28 request over Streamable HTTP: its response
// stream is closed (CAN-43), and the request ends at once, since no
// response can come on a closed stream; a response already on its way is
// kept as a late one (CAN-50).

// ErrStreamClosed is the error of a 2026-07-28 request over Streamable
// HTTP that was cancelled by closing its response stream (CAN-43): no
// response can arrive for it any more.
var ErrStreamClosed = errors.New("peer: the request's response stream was closed to cancel it; no response can arrive")

// StateStreamClosed is the state of a request cancelled by closing its
// response stream (2026-07-28 Streamable HTTP).
const StateStreamClosed State = "stream-closed"

// cancelByClose cancels c the 2026-07-28 way over Streamable HTTP: by
// closing its response stream (CAN-43, CAN-55); no notifications/cancelled
// is sent (HTTP-99). A response that came first stands.
func (s *Session) cancelByClose(rc transport.RequestCloser, c *Call) error {
	closed, err := rc.CloseRequest(c.ID)
	if err != nil {
		return err
	}
	seq := s.log.Len()
	c.mu.Lock()
	c.CancelSeq = seq
	c.mu.Unlock()
	if !closed {
		// The exchange had ended: its response (or its loss) is on the
		// way through the read loop, which finishes the call.
		return nil
	}
	s.mu.Lock()
	own := s.outgoing[c.ID.Key()] == c
	if own {
		delete(s.outgoing, c.ID.Key())
		if c.Token.IsValid() && s.tokens[c.Token.Key()] == c && !c.keepToken {
			delete(s.tokens, c.Token.Key())
			s.retiredTokens[c.Token.Key()] = c
		}
	}
	s.mu.Unlock()
	if !own {
		return nil
	}
	c.mu.Lock()
	from := c.state
	c.err, c.state = ErrStreamClosed, StateStreamClosed
	close(c.done)
	c.mu.Unlock()
	s.log.State("request "+c.ID.String(), string(from), string(StateStreamClosed))
	return nil
}

// lateAfterClose keeps m as the late response of a call cancelled by
// closing its stream, when it is the first; it reports whether it did.
func (c *Call) lateAfterClose(m *jsonrpc.Message, seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateStreamClosed || c.resp != nil {
		return false
	}
	c.resp, c.respSeq = m, seq
	return true
}
