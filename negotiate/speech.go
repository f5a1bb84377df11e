package negotiate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/transport"
)

// NotJSONRPCGrace is how long a negotiation waits for a JSON-RPC message
// after the target's first frame turned out not to be one, before it
// takes the target for one that does not speak JSON-RPC at all (a
// program that is not an MCP server, a wrong command, a log written to
// stdout). A server that prints a banner on stdout (a STD-4 fail the
// cases report) and then answers is still checked: the banner is what
// such a server prints once it is ready, so its answer follows at once.
const NotJSONRPCGrace = 2 * time.Second

// ErrNotJSONRPC is matched (errors.Is) by a *NotJSONRPCError.
var ErrNotJSONRPC = errors.New("the target does not speak JSON-RPC")

// NotJSONRPCError reports a target whose first frame was not a JSON-RPC
// message and that wrote no JSON-RPC message within NotJSONRPCGrace after
// it.
type NotJSONRPCError struct {
	// First is the start of the first frame, sanitised and cut to one
	// short line.
	First string
	// Channel is where the target wrote it ("stdout").
	Channel string
	// Waited is how long a JSON-RPC message was waited for after it.
	Waited time.Duration
}

func (e *NotJSONRPCError) Error() string {
	return fmt.Sprintf("it wrote %q on %s, which is not JSON-RPC, and no JSON-RPC message in the %v after it", e.First, e.Channel, e.Waited.Round(100*time.Millisecond))
}

// Is makes errors.Is(err, ErrNotJSONRPC) hold.
func (e *NotJSONRPCError) Is(target error) bool { return target == ErrNotJSONRPC }

// firstLine is the start of raw as one sanitised line of at most 80
// bytes, for naming what a target wrote.
func firstLine(raw []byte) string {
	line, _, _ := strings.Cut(string(raw), "\n")
	return chrono.Sanitize(chrono.Clip(strings.TrimSpace(line), 80), false)
}

// Bounds of heedSpeech's patience with a target whose first frame was not
// JSON-RPC.
const (
	// floodFrames and floodBytes end the wait at once: a program that
	// writes that much that is not JSON-RPC is not printing a banner.
	floodFrames = 100
	floodBytes  = 64 << 10
	// busyCPU is how much CPU the target must have used during a grace
	// for the wait to go on another grace: it is still starting (a
	// runtime loading its modules after a wrapper's banner), not idle.
	busyCPU = 50 * time.Millisecond
)

// cpuReporter is a connection that can tell the CPU time its target has
// used (transport.Stdio).
type cpuReporter interface {
	CPU() (time.Duration, bool)
}

// heedSpeech returns a context derived from ctx that ends, with a
// *NotJSONRPCError as its cause, when the target recorded in log writes a
// first frame that is not a JSON-RPC message and then no JSON-RPC message
// in a grace after it; stop releases the watch. A probe awaiting an answer
// under that context then fails within seconds instead of its whole
// timeout, and its error says what the target wrote (speechCause). A
// target that floods non-JSON-RPC output is judged at once; one whose
// process is busy (conn reports its CPU) gets another grace each time,
// since a server slow to start after a banner still answers.
func heedSpeech(ctx context.Context, log *chrono.Log, grace time.Duration, conn transport.Conn) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	cpu := func() (time.Duration, bool) { return 0, false }
	if r, ok := conn.(cpuReporter); ok {
		cpu = r.CPU
	}
	go func() {
		defer close(done)
		first, err := log.WaitFor(wctx, 0, inboundFrame)
		if err != nil || first.Summary == nil || first.Summary.Malformed == "" {
			return
		}
		frames, size, seen, start := 1, len(first.Raw), first.Seq, time.Now()
		for {
			before, measured := cpu()
			flood := false
			gctx, gcancel := context.WithTimeout(wctx, grace)
			_, err := log.WaitFor(gctx, seen, func(ev chrono.Event) bool {
				seen = ev.Seq
				switch {
				case wellFormedInbound(ev):
					return true
				case inboundFrame(ev):
					frames, size = frames+1, size+max(len(ev.Raw), ev.Size)
					flood = frames >= floodFrames || size >= floodBytes
					return flood
				}
				return false
			})
			gcancel()
			if wctx.Err() != nil || err == nil && !flood {
				return // the probe ended, or a JSON-RPC message came
			}
			if after, ok := cpu(); !flood && measured && ok && after-before >= busyCPU {
				continue
			}
			cancel(&NotJSONRPCError{First: firstLine(first.Raw), Channel: first.Channel, Waited: time.Since(start)})
			return
		}
	}()
	return wctx, func() {
		cancel(context.Canceled)
		<-done
	}
}

// speechCause is the *NotJSONRPCError that ended ctx, or nil.
func speechCause(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrNotJSONRPC) {
		return cause
	}
	return nil
}

// inboundFrame matches a frame the target wrote.
func inboundFrame(ev chrono.Event) bool { return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame }

// wellFormedInbound matches a JSON-RPC message the target wrote.
func wellFormedInbound(ev chrono.Event) bool {
	return inboundFrame(ev) && ev.Summary != nil && ev.Summary.Malformed == ""
}

// heard is p with its failure named after what the target wrote, when
// ctx (of heedSpeech) ended because the target does not speak JSON-RPC.
func heard(ctx context.Context, p *Probe) *Probe {
	if cause := speechCause(ctx); cause != nil && p.Err != nil {
		p.Err, p.Failure = cause, cause.Error()
	}
	return p
}
