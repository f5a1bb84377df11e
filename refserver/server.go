// Package refserver is mcpflight's deterministic reference MCP server. It
// is dual-era: it serves protocol 2025-11-25 (also accepting 2025-06-18
// and 2025-03-26) to a client that opens with initialize, and 2026-07-28
// to each request that carries the per-request _meta envelope, both at
// once on one connection or endpoint (Options.Protocols narrows it to one
// era; server2026.go describes the 2026-07-28 side).
//
// It serves newline-framed JSON-RPC and offers three tools:
// "slow" (steps with progress, cancellable at every checkpoint), "effect"
// (a gated side effect with a receipt) and "log" (notifications/message
// filtered by logging/setLevel). Its "io.mcpflight/control" extension
// (mcpflight/await, mcpflight/release, mcpflight/counters; see
// docs/control-extension.md) lets a checker hold an operation at a named
// checkpoint, act, and then read the server's own accounting, so that
// in-flight cases need no sleeps.
//
// Started with a FaultSet, the server breaks exactly the contracts named,
// which is how the checker's verdicts are tested.
package refserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// Identity and wire names.
const (
	// DefaultName is the serverInfo name when Options.Name is empty.
	DefaultName = "mcpflight-reference"
	// DefaultVersion is the serverInfo version when Options.Version is empty.
	DefaultVersion = "dev"
	// LatestProtocolVersion is the version answered when the client asks
	// for one the server does not support (LIF-10, LIF-11).
	LatestProtocolVersion = spec.V20251125
	// ControlVersion is the version of the control extension, the value
	// of its experimental capability (mcp.ControlCapability).
	ControlVersion = 1
	// MaxFrame is the default of Options.MaxFrame: the largest input
	// frame (stdio) or request body (HTTP) accepted, in bytes.
	MaxFrame = transport.DefaultMaxFrame
	// DefaultMaxInFlight is the default of Options.MaxInFlight.
	DefaultMaxInFlight = 64
)

// SupportedProtocolVersions lists the protocol versions initialize echoes,
// newest first.
func SupportedProtocolVersions() []string {
	return []string{spec.V20251125, spec.V20250618, spec.V20250326}
}

// ErrCrash is returned (wrapped) by Serve when a fault makes it crash.
var ErrCrash = errors.New("refserver: crashed")

// errSessionEnded closes pipes that Serve wakes on an abnormal end.
var errSessionEnded = errors.New("refserver: session ended")

// Options configures a Server.
type Options struct {
	// Faults selects deliberate defects; an empty set is the conforming
	// server.
	Faults FaultSet
	// Stderr receives diagnostics as plain lines (checkpoints reached and
	// released, cancels accepted or ignored, end of input). It may be nil.
	Stderr io.Writer
	// Name and Version are reported as serverInfo; empty means
	// DefaultName and DefaultVersion.
	Name, Version string
	// NoTasks makes a server without the tasks capability: no task
	// methods, no task_worker, and the task field of tools/call is
	// ignored, as TSK-24 requires of such a server.
	NoTasks bool
	// MaxFrame is the largest input frame (stdio) or POST body (HTTP)
	// accepted, in bytes; 0 means MaxFrame (4 MiB). A larger frame is
	// skipped up to its newline without being held in memory and answered
	// with a parse error whose id is null (RPC-11); a larger body gets
	// 413. The session goes on either way.
	MaxFrame int
	// MaxInFlight bounds the requests of one session being handled at
	// once (the goroutines serving them, a task's worker included, since
	// it is the goroutine that answered tasks augmentation); 0 means
	// DefaultMaxInFlight, a negative value means no limit. A request over
	// the limit is answered at once with mcp.CodeTooManyRequests and changes
	// nothing. Awaits and gated operations of the control extension stay
	// in flight until released or cancelled, so they count.
	MaxInFlight int
	// Protocols are the revisions served: spec.V20260728 (the modern era,
	// per-request metadata) and spec.V20251125 (the legacy era, an
	// initialize handshake, which also agrees to 2025-06-18 and
	// 2025-03-26). Empty means both: a dual-era server, which serves both
	// eras concurrently on one connection or endpoint (LIF-47, LIF-50).
	// See ParseProtocols and docs/control-extension.md.
	Protocols []string
	// ListenTeardown is what the server sends when it ends a
	// subscriptions/listen stream itself (ambiguity A-11): TeardownResult
	// (the default, SUB-6/SUB-7) or TeardownCancelled (CAN-41).
	ListenTeardown ListenTeardown
	// HideControl leaves the io.mcpflight/control extension out of the
	// capabilities (nocontrol.go): the server then looks like any target
	// without checkpoints, for the tests of wire-only evidence.
	HideControl bool
	// FaultQueried, when set, is called with every fault the server asks
	// about while it serves, whether the fault is on or not, from any of
	// its goroutines. A conforming run's queries tell which faults a
	// case's path meets: a fault the server never asks about cannot change
	// what the case sees (the mutation matrix runs a fault's other cases
	// only where it is asked about).
	FaultQueried func(Fault)

	// hook, set by tests only, is called with hookReader when the reader
	// has admitted a request, with hookHandler when its goroutine starts
	// and with hookDone when it has left the in-flight count. A test
	// makes it panic to prove that a panic costs one request, never the
	// session, and waits on hookDone instead of sleeping.
	hook func(stage string, id jsonrpc.ID)
}

// Server is the reference server. It holds only its configuration: every
// call to Serve is an independent session, and a Server may serve several
// sessions at once.
type Server struct {
	opts Options
	// live counts goroutines started by Serve that have not finished.
	// Tests use it to prove that Serve leaves nothing behind.
	live atomic.Int64
	// tasks holds the task stores of live sessions (tasks.go).
	tasks taskRegistry
	// observer counts handler outcomes for the observer tool (observer.go).
	observer observer
	// taskIDs counts tasks for FaultSequentialTaskIDs.
	taskIDs atomic.Int64
	// faultRequests numbers the requests FaultRequestOnStdout writes.
	faultRequests atomic.Int64
	// realms holds the 2026-07-28 realms, by control scope (realm.go).
	realms realmRegistry
	// tools2026 is the 2026-07-28 tools/list, built once (server2026.go).
	toolsOnce sync.Once
	tools2026 []map[string]any
}

// has reports whether fault f is on, telling opts.FaultQueried it was
// asked. Every question the server asks of its faults goes through it.
func (s *Server) has(f Fault) bool {
	if q := s.opts.FaultQueried; q != nil {
		q(f)
	}
	return s.opts.Faults.Has(f)
}

// New returns a server with a private copy of opts.
func New(opts Options) *Server {
	faults := make(FaultSet, len(opts.Faults))
	for f, on := range opts.Faults {
		if on {
			faults[f] = true
		}
	}
	opts.Faults = faults
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = MaxFrame
	}
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	opts.Protocols = normalProtocols(opts.Protocols)
	if opts.ListenTeardown == "" {
		opts.ListenTeardown = TeardownResult
	}
	return &Server{opts: opts}
}

// readResult is one outcome of FrameReader.ReadFrame.
type readResult struct {
	raw []byte
	err error
}

// Serve runs one session: it reads newline-delimited JSON-RPC frames from r
// (at most Options.MaxFrame bytes each) and writes responses and notifications to
// w, one frame per line, through a single writer.
//
// Notifications (cancellations among them) are handled in arrival order
// before the next frame is read; each request is handled in its own
// goroutine, but anything that later frames depend on (registration of an
// operation or await, a release, the log level, a counters snapshot) takes
// effect before the next frame is read.
//
// Serve returns nil when r reaches end of file, ctx.Err() when ctx ends,
// and an error wrapping ErrCrash when a fault makes it crash. Before it
// returns, every goroutine it started has finished: blocked operations and
// awaits are woken and abandoned without output. On an abnormal end (ctx,
// crash) a blocked read or write is woken with a past deadline when r or w
// supports one, or by closing it when it is an io.Pipe end
// (CloseWithError); a read that cannot be woken is left to finish by
// itself and its data is discarded.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	ss := newSession(ctx, s, w)
	ss.conn = &conn2026{owner: ss}
	defer ss.cancel()
	if ss.has(FaultStdoutNoise) {
		ss.writeLine([]byte("mcpflight reference server starting (this line is not JSON-RPC)"))
	}

	frames := make(chan readResult)
	stopRead := make(chan struct{})
	readDone := make(chan struct{})
	s.live.Add(1)
	go func() {
		defer close(readDone)
		defer s.live.Add(-1)
		fr := transport.NewFrameReader(r, s.opts.MaxFrame)
		for {
			raw, err := fr.ReadFrame()
			select {
			case frames <- readResult{raw: raw, err: err}:
			case <-stopRead:
				return
			}
			if err != nil && !errors.Is(err, transport.ErrFrameTooLarge) {
				return
			}
		}
	}()

	err, abnormal := ss.loop(ctx, frames)
	if abnormal {
		ss.abort()
	}
	ss.cancel()
	ss.wg.Wait()
	ss.conn.release()
	close(stopRead)
	if !abnormal || wakeReader(r) {
		<-readDone
	}
	if err == nil {
		err = ss.writeErr()
	}
	return err
}

// loop reads frames until the session ends. abnormal is true when the
// reader may still be blocked and output must stop at once.
func (ss *session) loop(ctx context.Context, frames <-chan readResult) (err error, abnormal bool) {
	for {
		if ctx.Err() != nil {
			return ctx.Err(), true
		}
		select {
		case <-ctx.Done():
			return ctx.Err(), true
		case fr := <-frames:
			switch {
			case fr.err == nil:
				if err := ss.handleFrame(fr.raw); err != nil {
					return err, true
				}
			case errors.Is(fr.err, transport.ErrFrameTooLarge):
				// The frame was skipped unread, so its id is unknown:
				// a parse error with id null (RPC-11, JSON-RPC 2.0 §5).
				ss.logf("input frame rejected: %v", fr.err)
				ss.replyError(jsonrpc.ID{}, codeParseError, "Parse error: frame too large", map[string]any{"class": "frame-too-large", "limit": ss.srv.opts.MaxFrame})
			case errors.Is(fr.err, io.EOF):
				if ss.has(FaultIgnoreStdinEOF) {
					ss.logf("end of input ignored (fault %s)", FaultIgnoreStdinEOF)
					<-ctx.Done()
					return ctx.Err(), true
				}
				ss.logf("end of input")
				return nil, false
			default:
				ss.logf("reading input: %v", fr.err)
				return fmt.Errorf("refserver: reading input: %w", fr.err), false
			}
		}
	}
}

// wakeReader interrupts a read blocked on r, if r allows it, and reports
// whether it did.
func wakeReader(r io.Reader) bool {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Unix(1, 0)) == nil {
		return true
	}
	if p, ok := r.(interface{ CloseWithError(error) error }); ok {
		_ = p.CloseWithError(errSessionEnded)
		return true
	}
	return false
}

// wakeWriter interrupts a write blocked on w, if w allows it.
func wakeWriter(w io.Writer) {
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok && d.SetWriteDeadline(time.Unix(1, 0)) == nil {
		return
	}
	if p, ok := w.(interface{ CloseWithError(error) error }); ok {
		_ = p.CloseWithError(errSessionEnded)
	}
}
