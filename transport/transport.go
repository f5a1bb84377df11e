// Package transport moves JSON-RPC frames between the harness and a peer,
// and records every frame in the chronology. It knows framing, processes and
// connections. It matches eight MCP method names (declared in package mcp),
// all on the Streamable HTTP transport, because that transport's own rules
// are written in terms of them:
//
//   - initialize (mcp.MethodInitialize): the session ID (HTTP-46, HTTP-50)
//     and the MCP-Protocol-Version header (HTTP-56) are learned from the
//     answer to the POST that carried initialize, and a new initialize
//     after a 404 starts a new session (HTTP-53);
//   - notifications/cancelled (mcp.NotificationCancelled): a request we
//     cancelled expects no answer, so its SSE stream is not resumed with
//     Last-Event-ID when it ends (HTTP-25, CAN-8);
//   - tools/call, prompts/get, resources/read, tasks/get, tasks/update and
//     tasks/cancel: on a 2026-07-28 connection (HTTP.Set2026) every POST
//     mirrors its body into the request metadata headers (HTTP-95,
//     HTTP-100): MCP-Protocol-Version from _meta, Mcp-Method from the
//     method (any method, copied, not matched), and Mcp-Name from
//     params.name for the first two, params.uri for resources/read and
//     params.taskId for the three task methods; see http2026.go.
//
// No other method name appears in the package (a test greps for them),
// and the stdio transport knows no method at all.
package transport

import (
	"context"
	"errors"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
)

// DefaultMaxFrame is the default limit on one frame's size: 4 MiB.
const DefaultMaxFrame = 4 << 20

// Sentinel errors callers can test with errors.Is.
var (
	// ErrFrameTooLarge reports a frame over the configured limit.
	ErrFrameTooLarge = errors.New("frame exceeds the maximum frame size")
	// ErrClosed reports use of a connection after it closed.
	ErrClosed = errors.New("connection closed")
)

// Inbound is one frame read from the peer. Msg is nil when Err says why the
// frame is not a valid message (a *jsonrpc.DecodeError, or ErrFrameTooLarge).
// Seq is the frame's chronology sequence number.
type Inbound struct {
	Msg *jsonrpc.Message
	Raw []byte
	Err error
	Seq uint64
	// For is set, with Err, when the exchange that was to carry the
	// response of request For ended without it (an HTTP answer that is
	// not JSON, a stream cut off by a limit): the caller may fail that
	// request at once instead of waiting for a response that cannot come.
	For jsonrpc.ID
}

// Conn is a framed, recorded connection to a peer.
type Conn interface {
	// Send writes one frame. raw may be deliberately malformed; the
	// transport adds only its own framing (a newline on stdio).
	Send(ctx context.Context, raw []byte) error
	// Inbound delivers frames in arrival order. It is closed when the
	// peer's output ends; Err then says why.
	Inbound() <-chan Inbound
	// Err is the reason the inbound stream ended, or nil while it is open
	// or after a clean end of stream.
	Err() error
	// Close shuts the connection down and grades how the peer went.
	Close(ctx context.Context) Teardown
}

// EncodedSender is a Conn that can be told what a frame its caller encoded
// holds, so that recording it does not decode it again.
type EncodedSender interface {
	// SendEncoded sends raw as Send does; msg, when not nil, is what
	// jsonrpc.Decode reads from raw (see jsonrpc.Encoded). It returns the
	// frame's sequence number in the chronology.
	SendEncoded(ctx context.Context, raw []byte, msg *jsonrpc.Message) (uint64, error)
}

// Step is one rung of a shutdown ladder.
type Step string

// The rungs of the stdio shutdown ladder (STD-7, STD-44, STD-45).
const (
	StepCloseInput Step = "close-stdin"
	StepSIGTERM    Step = "SIGTERM"
	StepSIGKILL    Step = "SIGKILL"
	StepNone       Step = "none"
)

// Teardown records how a connection ended, for the teardown verdict.
type Teardown struct {
	// ExitedAfter is the last rung that was needed before the peer exited.
	ExitedAfter Step
	// Waited is the time from the first rung to the exit.
	Waited time.Duration
	// ExitCode is the process exit code, or -1 when killed by a signal.
	ExitCode int
	// Signal names the signal that ended the process, if any.
	Signal string
	// Leftovers counts processes of the peer's group still alive after
	// teardown; it must be zero.
	Leftovers int
	// Err is set when teardown itself failed.
	Err error
}
