package clientrun

import (
	"context"
	"net/http"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// Inbound is one message the client sent to our server.
type Inbound struct {
	// Msg is the decoded message; nil for a frame that is not one (Err).
	Msg *jsonrpc.Message
	Err error
	// Seq is its chronology sequence number.
	Seq uint64
	// Conn numbers the connection it came on: the stdio spawn (1, 2, …),
	// or 0 over HTTP.
	Conn int
	// Channel is its chronology channel ("stdin 1", "POST 3").
	Channel string
	// Header holds the HTTP request's headers (HTTP only).
	Header http.Header
	// Method is the HTTP method (HTTP only).
	HTTPMethod string
	// reply is where the answer to a request goes.
	reply *reply
}

// reply is where the server's messages about one request go: the spawn's
// stdout, or the request's SSE stream.
type reply struct {
	// send writes one frame; final marks the response, after which an
	// HTTP stream ends.
	send func(raw []byte, final bool) error
	// drop ends an HTTP stream without the response (a no-op on stdio).
	drop func()
	// status answers an HTTP request with a status and body instead of a
	// stream (nil on stdio).
	status func(code int, body []byte)
	// gone is closed when the client closed the request's stream (HTTP)
	// or the connection ended.
	gone <-chan struct{}
	// dispatched, when set, is closed once the script has seen the
	// request (HTTP: the stream then opens).
	dispatched chan struct{}
	once       sync.Once
}

// hub gathers what every connection of a case receives, in arrival
// order, for the script to serve.
type hub struct {
	log   *chrono.Log
	inbox chan Inbound
	mu    sync.Mutex
	// conns are the stdio spawns' writers, by connection number, for a
	// server request that is no reply (none over HTTP).
	closed bool
	done   chan struct{}
}

func newHub(log *chrono.Log) *hub {
	return &hub{log: log, inbox: make(chan Inbound, 1024), done: make(chan struct{})}
}

// deliver hands a message to the script; it never blocks the reader for
// long: past a full inbox the reader waits, bounded by the case's end.
func (h *hub) deliver(in Inbound) {
	select {
	case h.inbox <- in:
	case <-h.done:
	}
}

// stop ends delivery.
func (h *hub) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// encodeOrNote encodes a message; an encoding error of ours is recorded.
func encodeOrNote(log *chrono.Log, raw []byte, err error) []byte {
	if err != nil {
		log.Harness(chrono.KindError, "server", "encoding a message: "+err.Error())
		return nil
	}
	return raw
}

// sendOn writes raw on r, recording a failure as a harness note.
func sendOn(_ context.Context, log *chrono.Log, r *reply, raw []byte, final bool) error {
	if raw == nil || r == nil {
		return nil
	}
	if err := r.send(raw, final); err != nil {
		log.Harness(chrono.KindNote, "server", "could not send: "+err.Error())
		return err
	}
	return nil
}
