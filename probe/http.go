package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// HTTPConn is the case's HTTP connection.
func (e *Env) HTTPConn() (*transport.HTTP, *verdict.Outcome) {
	h, ok := e.S.Conn().(*transport.HTTP)
	if !ok {
		o := verdict.Errorf("the session's transport is not Streamable HTTP")
		return nil, &o
	}
	return h, nil
}

// StreamOf names the SSE stream of a call, or returns an outcome saying
// the server answered with JSON (no stream to drop).
func StreamOf(h *transport.HTTP, id jsonrpc.ID) (string, *verdict.Outcome) {
	name := h.StreamOf(id)
	if name == "" {
		o := verdict.Infof("the server answered the call with a JSON body, not an SSE stream: nothing to drop or resume (HTTP-14 allows both)")
		return "", &o
	}
	return name, nil
}

// NotResumable is the info of a case whose dropped stream carried no
// event ID: without one there is no Last-Event-ID to resume from, and
// attaching IDs is the server's choice.
const NotResumable = "the server's stream carried no event ID: it is not resumable (HTTP-27, HTTP-39 are MAY)"

// DropAfterStep is DropStreamAfterStep for a case that goes on to resume
// the dropped stream: a stream that carried no event ID ends the case
// with NotResumable.
func (e *Env) DropAfterStep(ctx context.Context, h *transport.HTTP, key string) (*Op, string, string, *verdict.Outcome) {
	op, stream, last, o := e.DropStreamAfterStep(ctx, h, key)
	if o == nil && last == "" {
		info := verdict.Infof("%s", NotResumable)
		return nil, "", "", &info
	}
	return op, stream, last, o
}

// DropStreamAfterStep starts a gated slow call with progress, brings it
// to step 1 and drops its stream. It returns the op, the dropped stream
// and the last event ID read on it, "" when the stream carried none (the
// call can still be judged by what the server says of its handler). On a
// controlled target it then awaits KEY/disconnected, the server's word
// that it has dealt with the drop, and judges a drop taken for a cancel
// (HTTP-25): every case that drops a stream relies on the call going on.
func (e *Env) DropStreamAfterStep(ctx context.Context, h *transport.HTTP, key string) (*Op, string, string, *verdict.Outcome) {
	op, err := e.StartSlow(ctx, SlowSpec{Key: key, Progress: true, Steps: 3})
	if err != nil {
		o := verdict.Errorf("%v", err)
		return nil, "", "", &o
	}
	if err := op.AtStep(ctx, 1); err != nil {
		o := verdict.Errorf("%v", err)
		return nil, "", "", &o
	}
	stream, o := StreamOf(h, op.Call.ID)
	if o != nil {
		return nil, "", "", o
	}
	if err := h.Drop(stream); err != nil {
		o := verdict.Errorf("dropping %s: %v", stream, err)
		return nil, "", "", &o
	}
	// Read once the reader has stopped: the last event it recorded, so
	// that the frames on the dropped stream and the resume's Last-Event-ID
	// agree (a progress read between the two would otherwise count on
	// both sides of the resume).
	last := h.LastEventID(stream)
	if e.Control != nil {
		wctx, cancel := context.WithTimeout(ctx, e.Patience())
		_, err := op.Checkpoint(wctx, "disconnected")
		cancel()
		switch {
		case err == nil:
			if st, _, err := op.OperationState(ctx); err == nil && st.State == "cancelled" {
				o := e.Breaks("HTTP-25", []string{fmt.Sprintf("operation %q goes on although its stream was dropped (a disconnection is not a cancellation)", key)},
					fmt.Sprintf("the server reports operation %q cancelled once it noticed the client dropped its stream", key), 0)
				return nil, "", "", &o
			}
		case ctx.Err() == nil:
			e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("the server did not reach %s/disconnected within %v of the drop", key, e.Patience()))
		}
	}
	return op, stream, last, nil
}

// AwaitResult waits for the call's response within the operation's
// remaining work and a window (Op.ResultBudget), and ends a second before
// the case's own deadline, so that a result that never comes is a
// verdict rather than a deadline error.
func (e *Env) AwaitResult(ctx context.Context, op *Op) (*jsonrpc.Message, error) {
	budget := op.ResultBudget()
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Second))
		defer cancel()
	}
	resp, err := op.AwaitWhileProgressing(ctx, budget)
	if errors.Is(err, context.DeadlineExceeded) {
		e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("no response for request %s within %v", op.Call.ID, budget.Round(time.Millisecond)))
	}
	return resp, err
}

// AwaitHelper waits for the response of a call the case uses as a clock
// or a witness, not as its subject (a second call whose end says the
// first has ended too): its pace is judged nowhere, so its wait is the
// safety net, SlowBudget, not a window sized to the pace learned, which
// a loaded machine can outlast. It ends a second before the case's own
// deadline.
func (e *Env) AwaitHelper(ctx context.Context, op *Op) (*jsonrpc.Message, error) {
	bound := e.SlowBudget()
	if dl, ok := ctx.Deadline(); ok {
		bound = max(min(bound, time.Until(dl)-time.Second), 0)
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return op.Call.Await(wctx)
}

// FramesOn returns the JSON-RPC frames read on the SSE stream channel.
func (e *Env) FramesOn(stream string) []chrono.Event {
	var out []chrono.Event
	for _, ev := range e.Log.Events() {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && ev.Channel == "SSE "+stream {
			out = append(out, ev)
		}
	}
	return out
}

// StreamDoneOr is the stream's end, or the end of Env.Patience.
func StreamDoneOr(ctx context.Context, h *transport.HTTP, stream string, e *Env) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		wctx, cancel := context.WithTimeout(ctx, e.Patience())
		defer cancel()
		select {
		case <-h.StreamDone(stream):
		case <-wctx.Done():
		}
	}()
	return out
}

// StatusAfter finds the HTTP status recorded for the exchange whose
// outbound frame has sequence number seq.
func (e *Env) StatusAfter(seq uint64) (int, chrono.Event, bool) {
	ev := e.EventAt(seq)
	for _, r := range e.Log.Since(seq) {
		if r.Dir == chrono.In && r.Kind == chrono.KindHTTP && r.Channel == ev.Channel && strings.HasPrefix(r.Text, "HTTP ") {
			var status int
			if _, err := fmt.Sscanf(r.Text, "HTTP %d", &status); err == nil {
				return status, r, true
			}
		}
	}
	return 0, chrono.Event{}, false
}

// statusOn is the HTTP status recorded for the exchange on channel
// ("POST #4"), if one is.
func (e *Env) statusOn(channel string) (int, bool) {
	if channel == "" {
		return 0, false
	}
	for _, r := range e.Log.Events() {
		if r.Dir == chrono.In && r.Kind == chrono.KindHTTP && r.Channel == channel && strings.HasPrefix(r.Text, "HTTP ") {
			var status int
			if _, err := fmt.Sscanf(r.Text, "HTTP %d", &status); err == nil {
				return status, true
			}
		}
	}
	return 0, false
}

// RefusalBody reports whether ev came in the body of an HTTP 4xx answer:
// a server that cannot accept what was POSTed refuses it with an HTTP
// error status (HTTP-12 under 2025-11-25, HTTP-87 under 2026-07-28), and
// whatever body it gives that refusal (a JSON-RPC error with a null id,
// plain text) is part of the refusal, not a JSON-RPC answer.
func (e *Env) RefusalBody(ev chrono.Event) bool {
	status, ok := e.statusOn(ev.Channel)
	return ok && status/100 == 4
}

// HTTPRefusal returns the HTTP 4xx status error err carries, if it does:
// a POST the server refused (HTTP-12, HTTP-87), as evidence for the case
// to judge rather than a transport failure.
func HTTPRefusal(err error) (*transport.StatusError, bool) {
	var se *transport.StatusError
	if errors.As(err, &se) && se.Status/100 == 4 {
		return se, true
	}
	return nil, false
}

// BodyAfter reports a body recorded for the exchange of seq.
func (e *Env) BodyAfter(seq uint64) (chrono.Event, bool) {
	ev := e.EventAt(seq)
	for _, r := range e.Log.Since(seq) {
		if r.Dir == chrono.In && r.Channel == ev.Channel && len(r.Raw) > 0 {
			return r, true
		}
	}
	return chrono.Event{}, false
}

// RawPing POSTs a ping with header changes and returns the status.
func (e *Env) RawPing(ctx context.Context, h *transport.HTTP, headers http.Header) (int, uint64, error) {
	raw, err := jsonrpc.EncodeRequest(e.S.NewID(), mcp.MethodPing, nil)
	if err != nil {
		return 0, 0, err
	}
	seq := e.Log.Len() + 1
	resp, err := h.RawPOST(ctx, raw, headers)
	if err != nil {
		return 0, seq, err
	}
	return resp.Status, seq, nil
}

// RawInitialize POSTs an initialize without session ID and protocol
// version headers; the transport does not take the session it opens.
func (e *Env) RawInitialize(ctx context.Context, h *transport.HTTP) (*transport.RawResponse, error) {
	init, err := jsonrpc.EncodeRequest(e.S.NewID(), mcp.MethodInitialize, map[string]any{
		"protocolVersion": spec.V20251125, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcpflight", "version": "dev"},
	})
	if err != nil {
		return nil, err
	}
	return h.RawPOST(ctx, init, http.Header{transport.HeaderSessionID: nil, transport.HeaderProtocolVersion: nil})
}
