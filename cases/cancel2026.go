package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/verdict"
)

// cancel2026Cases cover cancellation over stdio in 2026-07-28
// (basic/transports/stdio §Cancellation, basic/patterns/cancellation):
// after the client's notifications/cancelled the server sends nothing
// more for the request (CAN-54: no response, no progress, no log), and
// the server itself sends notifications/cancelled only to end a
// subscription (CAN-42). Over Streamable HTTP the cancel closes the
// request's stream, so nothing more can be read for it there; the http26
// cases judge that transport.
func cancel2026Cases() []probe.Case {
	return []probe.Case{
		// CAN-54 MUST NOT: "Servers SHOULD stop work on a cancelled request as soon as practical
		//   and MUST NOT send any further messages for it."
		// CAN-48 SHOULD: "Servers receiving cancellation notifications SHOULD: ▸ Stop processing
		//   the cancelled request ▸ Free associated resources ▸ Not send a response for the
		//   cancelled request"
		// CAN-42 MUST NOT: "Servers MUST NOT send `notifications/cancelled` for any other
		//   purpose."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// PRG-44 SHOULD: "Clients and servers SHOULD track active progress tokens"
		// CAN-55 MUST: "Closing the SSE response stream MUST be treated by the server as
		//   cancellation of that request."
		{
			ID:       "cancel/no-further-message-after-progress",
			Title:    "after a cancel mid-work, nothing more for the request (stdio 2026)",
			Reqs:     []string{"CAN-54", "CAN-48", "CAN-42", "CAN-11", "PRG-44", "CAN-55"},
			Versions: only2026(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call with a progress token and logLevel debug, logging every step; after the first progress, notifications/cancelled",
			Expect:   "no response, progress, log message or notifications/cancelled for the request after the cancel; on a controlled target its work ends cancelled",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return noFurtherMessage(ctx, e, true)
			},
		},
		// CAN-54 MUST NOT: "Servers SHOULD stop work on a cancelled request as soon as practical
		//   and MUST NOT send any further messages for it."
		// CAN-48 SHOULD: "Servers receiving cancellation notifications SHOULD: ▸ Stop processing
		//   the cancelled request ▸ Free associated resources ▸ Not send a response for the
		//   cancelled request"
		// CAN-42 MUST NOT: "Servers MUST NOT send `notifications/cancelled` for any other
		//   purpose."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// PRG-44 SHOULD: "Clients and servers SHOULD track active progress tokens"
		// CAN-55 MUST: "Closing the SSE response stream MUST be treated by the server as
		//   cancellation of that request."
		{
			ID:       "cancel/no-further-message-before-progress",
			Title:    "after a cancel before the first progress, nothing at all for the request (stdio 2026)",
			Reqs:     []string{"CAN-54", "CAN-48", "CAN-42", "CAN-11", "PRG-44", "CAN-55"},
			Versions: only2026(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call with a progress token and logLevel debug; notifications/cancelled before any progress",
			Expect:   "no response, progress, log message or notifications/cancelled for the request after the cancel",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return noFurtherMessage(ctx, e, false)
			},
		},
		// CAN-42 MUST NOT: "Servers MUST NOT send `notifications/cancelled` for any other
		//   purpose."
		// CAN-52 MUST NOT: "Servers MUST NOT use this notification to cancel any other request."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-48 SHOULD: "Servers receiving cancellation notifications SHOULD: ▸ Stop processing
		//   the cancelled request ▸ Free associated resources ▸ Not send a response for the
		//   cancelled request"
		// CAN-55 MUST: "Closing the SSE response stream MUST be treated by the server as
		//   cancellation of that request."
		{
			ID:              "cancel/server-sends-no-cancelled",
			Title:           "the server does not answer a client's cancel with notifications/cancelled",
			Reqs:            []string{"CAN-42", "CAN-52", "CAN-11", "CAN-48", "CAN-55"},
			Versions:        only2026(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "two tools/call; the first cancelled after its first progress, the second run to completion",
			Expect:          "no notifications/cancelled from the server: it sends one only to end a subscriptions/listen stream",
			Run:             serverSendsNoCancelled,
		},
	}
}

// cancelledFromServer finds a notifications/cancelled the server sent
// after seq, for a request that is not a subscriptions/listen one.
func cancelledFromServer(e *probe.Env, after uint64) (chrono.Event, bool) {
	return e.FrameAfter(after, func(ev chrono.Event) bool {
		return ev.Summary != nil && ev.Summary.Method == mcp.NotificationCancelled
	})
}

func noFurtherMessage(ctx context.Context, e *probe.Env, afterProgress bool) verdict.Outcome {
	if e.SeparateStreams() {
		return verdict.Skipf("over Streamable HTTP the cancel closes the request's stream, so no message for it can be read; the http26 cases judge that transport")
	}
	args := e.Profile.Slow.CloneArgs()
	if e.Control != nil {
		args["key"], args["logSteps"], args["gated"] = "a", true, true
	}
	c, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Slow.Name, "arguments": args},
		peer.WithProgress(), peer.WithLogLevel("debug"))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	op := e.Follow(c, "a", e.Profile.SlowSteps)
	switch {
	case afterProgress:
		if err := op.AtStep(ctx, 1); err != nil {
			return e.StepFailed(err)
		}
	case e.Control != nil:
		if _, err := op.Checkpoint(ctx, "start"); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	if err := e.Cancel(ctx, op, "mcpflight: nothing more for this request"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-49); nothing to judge")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if !afterProgress {
		if ev, ok := e.FrameAfter(c.SentSeq, probe.ProgressFor(c.Token)); ok && ev.Seq < c.CancelSeq {
			return verdict.Unexercised("progress arrived (seq %d) before the cancel could be sent; the target is too fast to test this without checkpoints", ev.Seq)
		}
	}
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if ev, ok := cancelledFromServer(e, c.CancelSeq); ok {
		return e.Breaks("CAN-42", []string{"no notifications/cancelled from the server: only the client cancels a request"}, probe.Describe(ev), ev.Seq)
	}
	isMine := probe.ResponseTo(c.ID)
	isProgress := probe.ProgressFor(c.Token)
	// The request is the only one in flight, so every log message after
	// its cancel is one of its own (over stdio a message names no
	// request). A notification the target wrote before it read the
	// cancel (it crossed the cancel on the wire) is no further message.
	if ev, ok := e.FrameAfter(c.CancelSeq, func(ev chrono.Event) bool {
		if isMine(ev) {
			return true
		}
		return (isProgress(ev) || ev.Summary != nil && ev.Summary.Method == mcp.NotificationMessage) && !op.CrossedCancel(ev.Seq)
	}); ok {
		return e.Breaks("CAN-54", []string{fmt.Sprintf("no further message for request %s after notifications/cancelled (seq %d)", c.ID, c.CancelSeq)},
			probe.Describe(ev), ev.Seq)
	}
	if o := e.CleanupOnce(ctx, op, mcp.OutcomeCancelled); o != nil {
		return *o
	}
	if o := e.CrossedOnly(op); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel"); h != nil {
		return *h
	}
	return verdict.Passf("nothing for request %s after the cancel at seq %d", c.ID, c.CancelSeq)
}

func serverSendsNoCancelled(ctx context.Context, e *probe.Env) verdict.Outcome {
	if e.SeparateStreams() {
		return verdict.Skipf("over Streamable HTTP the cancel closes the request's stream, which can then carry nothing; the http26 cases judge that transport")
	}
	first := e.Log.Len()
	a, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	b, err := e.StartSlow(ctx, probe.SlowSpec{Key: "b", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := a.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.S.Cancel(ctx, a.Call, "mcpflight: a client's cancel"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-49); nothing to judge")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if _, err := b.Complete(ctx); err != nil {
		return verdict.Errorf("the second request: %v", err)
	}
	if o := e.SettleAfterCancel(ctx, a); o != nil {
		return *o
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if ev, ok := cancelledFromServer(e, first); ok {
		m, _ := ev.Message()
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if m != nil {
			_ = json.Unmarshal(m.Params, &p)
		}
		rule := "CAN-42"
		if id, err := jsonrpc.ParseID(p.RequestID); err == nil && id.Key() != a.Call.ID.Key() {
			rule = "CAN-52" // it names another request: an attempt to cancel it
		}
		if rule == "CAN-52" {
			return e.Breaks("CAN-52", []string{"no notifications/cancelled from the server"}, probe.Describe(ev), ev.Seq)
		}
		return e.Breaks("CAN-42", []string{"no notifications/cancelled from the server: it sends one only to end a subscriptions/listen stream"}, probe.Describe(ev), ev.Seq)
	}
	if h := e.Healthy(ctx, "a cancel"); h != nil {
		return *h
	}
	return verdict.Passf("the server sent no notifications/cancelled")
}
