package gosdkcontrol

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport wraps a stream transport (mcp.StdioTransport, mcp.IOTransport,
// an in-memory one) for a server c is installed on: the connection it
// makes tells c the request ID of every controlled call, so that awaits
// and counters report it, and reaches each KEY/end only after the call's
// response has been written, so that a client that has the answer to
// "mcpflight/await KEY/end" has every frame of the operation before it.
func (c *Control) Transport(t mcp.Transport) mcp.Transport {
	return &wrappedTransport{c: c, inner: t}
}

type wrappedTransport struct {
	c     *Control
	inner mcp.Transport
}

func (w *wrappedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := w.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	id := conn.SessionID()
	w.c.mu.Lock()
	if id == "" {
		// Stream transports have no session ID; the connection names its
		// session (ServerSession.ID) so that c finds its state.
		w.c.conns++
		id = fmt.Sprintf("gosdkcontrol-%d", w.c.conns)
	}
	st := newSession(id, true)
	w.c.sessions[id] = st
	w.c.mu.Unlock()
	return &wrappedConn{Connection: conn, c: w.c, st: st}, nil
}

type wrappedConn struct {
	mcp.Connection
	c         *Control
	st        *session
	closeOnce sync.Once
}

func (w *wrappedConn) SessionID() string { return w.st.id }

// Read notes the request ID of a controlled tools/call, by its key, before
// the server sees the request.
func (w *wrappedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := w.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.IsCall() && req.Method == "tools/call" {
		var p struct {
			Arguments struct {
				Key *string `json:"key"`
			} `json:"arguments"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.Arguments.Key != nil && *p.Arguments.Key != "" {
			if id, err := json.Marshal(req.ID.Raw()); err == nil {
				w.st.mu.Lock()
				if _, taken := w.st.idsByKey[*p.Arguments.Key]; !taken {
					w.st.idsByKey[*p.Arguments.Key] = id
				}
				w.st.mu.Unlock()
			}
		}
	}
	return msg, err
}

// Write reaches the KEY/end of the operation a response answers, once the
// response is written.
func (w *wrappedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := w.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if id, merr := json.Marshal(resp.ID.Raw()); merr == nil {
			w.st.mu.Lock()
			end := w.st.ends[string(id)]
			delete(w.st.ends, string(id))
			w.st.mu.Unlock()
			if end != nil {
				end()
			}
		}
	}
	return err
}

func (w *wrappedConn) Close() error {
	err := w.Connection.Close()
	w.closeOnce.Do(func() { w.c.forget(w.st) })
	return err
}
