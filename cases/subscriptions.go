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

// subscriptionCases cover subscriptions/listen (2026-07-28
// basic/patterns/subscriptions) insofar as its stream's lifetime is
// concerned: the acknowledgement comes first, every message carries the
// subscription's ID, the stream carries only what was asked for and never
// a log message, and the server's own end of it is signalled one of the
// two ways the revision names (ambiguity A-11).
func subscriptionCases() []probe.Case {
	return []probe.Case{
		// SUB-2 MUST: "The server MUST send `notifications/subscriptions/acknowledged` as the
		//   first message carrying the subscription's ID in `_meta` under
		//   `io.modelcontextprotocol/subscriptionId`, and MUST NOT send any notification on the
		//   subscription before it."
		{
			ID:       "subscriptions/acknowledged-first",
			Title:    "a subscription is acknowledged before anything else",
			Reqs:     []string{"SUB-2"},
			Versions: only2026(),
			Sends:    `subscriptions/listen {"notifications": {"toolsListChanged": true}}`,
			Expect:   "notifications/subscriptions/acknowledged, before any other notification of the subscription",
			Run:      listenAcknowledgedFirst,
		},
		// SUB-5 MUST: "On notifications delivered via a `subscriptions/listen` stream, the server
		//   MUST include `io.modelcontextprotocol/subscriptionId` in `_meta` so the client can
		//   correlate the notification with the originating subscription request."
		{
			ID:       "subscriptions/subscription-id",
			Title:    "the subscription's notifications carry its ID",
			Reqs:     []string{"SUB-5"},
			Versions: only2026(),
			Sends:    `subscriptions/listen {"notifications": {"toolsListChanged": true}}`,
			Expect:   "the acknowledgement's _meta io.modelcontextprotocol/subscriptionId is the listen request's ID",
			Run:      listenSubscriptionID,
		},
		// SUB-1 MUST NOT: "The server MUST NOT send notification types the client has not
		//   explicitly requested."
		{
			ID:       "subscriptions/only-requested",
			Title:    "a subscription carries only what it asked for",
			Reqs:     []string{"SUB-1"},
			Versions: only2026(),
			Needs: probe.Needs{Control: true, TasksExtension: true,
				ControlFor: "the end checkpoint of a task it runs, the barrier after which no task status can still be on its way to the subscription; the wire cannot show that nothing more will come, and no profile field gives that barrier"},
			Sends:  `subscriptions/listen {"notifications": {"toolsListChanged": true}}, then a task of the tasks extension run to its end`,
			Expect: "no notifications/tasks (nor anything but its acknowledgement) on the subscription: it did not ask for task status",
			Run:    listenOnlyRequested,
		},
		// SUB-6 SHOULD: "The server tears it down (e.g., during shutdown) — it SHOULD send a
		//   successful `subscriptions/listen` response to signal a graceful end (see Graceful
		//   Closure), then close the stream."
		// SUB-7 SHOULD: "When the server ends a subscription on its own initiative (for example,
		//   during shutdown), it SHOULD respond to the original `subscriptions/listen` request with
		//   a completion result before closing the stream."
		// CAN-41 MUST: "A server MUST send `notifications/cancelled` referencing a
		//   `subscriptions/listen` request ID when it tears down that subscription stream (see
		//   Subscriptions)."
		{
			ID:       "subscriptions/teardown-signal",
			Title:    "the server signals the end of a subscription it tears down",
			Reqs:     []string{"SUB-6", "SUB-7", "CAN-41"},
			Versions: only2026(),
			Needs: probe.Needs{Control: true,
				ControlFor: "mcpflight/teardown, which makes the server end a subscription on its own initiative as a shutdown would; nothing a client sends on the wire does that, and no profile field names such a trigger"},
			Sends:  "subscriptions/listen, then mcpflight/teardown of that subscription (as a shutdown would end it)",
			Expect: "the listen request's result (SUB-6, SUB-7) or notifications/cancelled naming it (CAN-41), recorded as info: the revision asks for both (ambiguity A-11); neither fails",
			Run:    listenTeardownSignal,
		},
		// LOG-44 MUST NOT: "`notifications/message` is request-scoped: the server MUST NOT deliver
		//   it on a `subscriptions/listen` stream or on any stream other than the one carrying the
		//   response to the request that set the log level."
		{
			ID:       "logging/none-on-listen-stream",
			Title:    "no log message on a subscription, even one that set logLevel",
			Reqs:     []string{"LOG-44"},
			Versions: only2026(),
			Sends:    `subscriptions/listen {"notifications": {"toolsListChanged": true}} with _meta logLevel "debug"`,
			Expect:   "no notifications/message until the subscription ends",
			Run:      listenNoLogs,
		},
	}
}

// ackOwner: a case that needs the subscription's acknowledgement relies
// on SUB-2, which subscriptions/acknowledged-first judges.
var ackOwner = probe.Owner{Requirement: "SUB-2", Case: "subscriptions/acknowledged-first"}

// listen opens a subscription to tools list changes.
func listen(ctx context.Context, e *probe.Env, opts ...peer.CallOption) (*peer.Call, error) {
	return e.S.Start(ctx, mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, opts...)
}

// isAck matches an acknowledgement.
func isAck(ev chrono.Event) bool {
	return ev.Summary != nil && ev.Summary.Method == mcp.NotificationSubscriptionsAcknowledged
}

// awaitAck waits for the first acknowledgement after the listen request:
// over stdio a barrier suffices (the server acknowledges before it reads
// the next frame), over HTTP it comes on the listen request's own stream
// and is waited for, at most Env.Patience. A listen answered before any
// acknowledgement ends the wait over Streamable HTTP 2026-07-28 (its
// stream has ended, nothing more can come on it); elsewhere an
// acknowledgement written behind the response is still waited for, one
// observation window. It reports false when none came.
func awaitAck(ctx context.Context, e *probe.Env, c *peer.Call) (chrono.Event, bool, error) {
	if e.SeparateStreams() || e.Control == nil {
		wctx, cancel, _ := e.WithPatience(ctx)
		defer cancel()
		ended := probe.ResponseTo(c.ID)
		ev, err := e.Log.WaitFor(wctx, c.SentSeq, func(ev chrono.Event) bool {
			return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && (isAck(ev) || ended(ev))
		})
		switch {
		case err != nil && ctx.Err() != nil:
			return chrono.Event{}, false, ctx.Err()
		case err == nil && isAck(ev):
			return ev, true, nil
		case err == nil && methodNotFound(ev), listenUnknown(c):
			return chrono.Event{}, false, errListenNotServed
		case err != nil || e.SeparateStreams():
			return chrono.Event{}, false, nil
		}
		if err := e.Observe(ctx); err != nil {
			return chrono.Event{}, false, err
		}
		ev, ok := e.FrameAfter(c.SentSeq, isAck)
		return ev, ok, nil
	}
	if err := e.Quiesce(ctx); err != nil {
		return chrono.Event{}, false, err
	}
	ev, ok := e.FrameAfter(c.SentSeq, isAck)
	if !ok && listenUnknown(c) {
		return chrono.Event{}, false, errListenNotServed
	}
	return ev, ok, nil
}

// errListenNotServed: the server answered subscriptions/listen with
// -32601; a server with no notifications to offer need not serve it, so
// the subscription cases do not apply.
var errListenNotServed = errors.New("the server answers subscriptions/listen with -32601 (Method not found): it serves no subscriptions")

// methodNotFound reports whether ev is an error response -32601: the
// event itself says so, before the call it answers is marked done.
func methodNotFound(ev chrono.Event) bool {
	m, err := ev.Message()
	return err == nil && m.Kind == jsonrpc.KindError && m.Error.Code == jsonrpc.CodeMethodNotFound
}

// listenUnknown reports whether the listen request was answered -32601.
func listenUnknown(c *peer.Call) bool {
	select {
	case <-c.Done():
	default:
		return false
	}
	resp, _ := c.Response()
	return resp != nil && resp.Error != nil && resp.Error.Code == jsonrpc.CodeMethodNotFound
}

// listenFailed is the outcome of a case whose subscription could not be
// watched: a skip when the server serves none, else an error.
func listenFailed(err error) verdict.Outcome {
	if errors.Is(err, errListenNotServed) {
		return verdict.Skipf("%v", err)
	}
	return verdict.Errorf("%v", err)
}

// subscriptionOf reads the subscription ID in a notification's _meta.
func subscriptionOf(ev chrono.Event) (jsonrpc.ID, bool) {
	m, err := ev.Message()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	raw, ok := p.Meta[mcp.MetaSubscriptionID]
	if !ok {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.ParseID(raw)
	return id, err == nil
}

// endListen ends the subscription and waits until its last frame has
// been read: on a controlled target the server tears it down
// (mcpflight/teardown answers once its last frames are written; over
// HTTP the listen request's stream then ends), elsewhere the client
// cancels it and the grace window is observed.
func endListen(ctx context.Context, e *probe.Env, c *peer.Call) error {
	if e.Control == nil {
		if err := e.S.Cancel(ctx, c, "mcpflight: end of the case"); err != nil && !errors.Is(err, peer.ErrNotPending) {
			return err
		}
		return e.Observe(ctx)
	}
	var ended struct {
		Ended int `json:"ended"`
	}
	if err := e.S.Request(ctx, mcp.MethodControlTeardown, map[string]any{"subscriptionId": c.ID}, &ended); err != nil {
		return fmt.Errorf("mcpflight/teardown: %w", err)
	}
	if e.SeparateStreams() {
		wctx, cancel, _ := e.WithPatience(ctx)
		defer cancel()
		select {
		case <-c.Done():
		case <-wctx.Done():
		}
	}
	return e.Quiesce(ctx)
}

func listenAcknowledgedFirst(ctx context.Context, e *probe.Env) verdict.Outcome {
	c, err := listen(ctx, e)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	ack, ok, err := awaitAck(ctx, e, c)
	if err != nil {
		return listenFailed(err)
	}
	resp, answered := e.FrameAfter(c.SentSeq, probe.ResponseTo(c.ID))
	switch {
	case answered && (!ok || resp.Seq < ack.Seq):
		// The response carries the subscription's ID in its _meta too.
		return e.Breaks("SUB-2", []string{"notifications/subscriptions/acknowledged as the first message carrying the subscription's ID"},
			"the listen request's response came before any acknowledgement: "+probe.Describe(resp), resp.Seq)
	case !ok:
		return e.Breaks("SUB-2", []string{"notifications/subscriptions/acknowledged for the subscription"}, "no acknowledgement", 0)
	}
	if ev, early := e.FrameAfter(c.SentSeq, func(ev chrono.Event) bool {
		id, ok := subscriptionOf(ev)
		return ev.Seq < ack.Seq && ok && id.Key() == c.ID.Key()
	}); early {
		return e.Breaks("SUB-2", []string{"nothing on the subscription before its acknowledgement"}, probe.Describe(ev), ev.Seq)
	}
	if err := endListen(ctx, e, c); err != nil {
		return verdict.Errorf("ending the subscription: %v", err)
	}
	return verdict.Passf("acknowledged at seq %d, first", ack.Seq)
}

func listenSubscriptionID(ctx context.Context, e *probe.Env) verdict.Outcome {
	c, err := listen(ctx, e)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	ack, ok, err := awaitAck(ctx, e, c)
	if err != nil {
		return listenFailed(err)
	}
	if !ok {
		return e.Blame("the subscription's acknowledgement", ackOwner, "none arrived")
	}
	if err := endListen(ctx, e, c); err != nil {
		return verdict.Errorf("ending the subscription: %v", err)
	}
	for _, ev := range e.Log.Since(c.SentSeq) {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame || ev.Summary == nil || ev.Summary.Kind != "notification" {
			continue
		}
		if ev.Seq != ack.Seq && (!e.SeparateStreams() || ev.Channel != ack.Channel) {
			continue // not a notification of the subscription
		}
		if id, ok := subscriptionOf(ev); !ok || id.Key() != c.ID.Key() {
			return e.Breaks("SUB-5", []string{fmt.Sprintf("_meta %s %s on the subscription's notifications", mcp.MetaSubscriptionID, c.ID)}, probe.Describe(ev), ev.Seq)
		}
	}
	return verdict.Passf("the subscription's notifications carry its ID %s", c.ID)
}

func listenOnlyRequested(ctx context.Context, e *probe.Env) verdict.Outcome {
	if e.Profile.Task == nil {
		return verdict.Skipf("the profile names no task tool; pass --profile")
	}
	c, err := listen(ctx, e)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, ok, err := awaitAck(ctx, e, c); err != nil {
		return listenFailed(err)
	} else if !ok {
		return e.Blame("the subscription's acknowledgement", ackOwner, "none arrived")
	}
	args := e.Profile.Task.CloneArgs()
	args["key"], args["ticks"], args["gated"] = "t", 1, false
	task, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Task.Name, "arguments": args},
		peer.WithMeta(mcp.MetaClientCapabilities, map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := task.Await(ctx); err != nil {
		return verdict.Errorf("the task's tools/call: %v", err)
	}
	wctx, cancel, _ := e.WithPatience(ctx)
	_, err = e.Control.Await(wctx, "t/end")
	cancel()
	if err != nil {
		return verdict.Errorf("the task did not end: %v", err)
	}
	if err := endListen(ctx, e, c); err != nil {
		return verdict.Errorf("ending the subscription: %v", err)
	}
	if ev, ok := e.FrameAfter(c.SentSeq, func(ev chrono.Event) bool {
		if ev.Summary == nil || ev.Summary.Kind != "notification" || isAck(ev) {
			return false
		}
		id, ok := subscriptionOf(ev)
		return ev.Summary.Method == mcp.NotificationTasks || ok && id.Key() == c.ID.Key()
	}); ok {
		return e.Breaks("SUB-1", []string{"nothing but the acknowledgement on a subscription to tools list changes (the tools never changed)"}, probe.Describe(ev), ev.Seq)
	}
	return verdict.Passf("the task ran to its end; the subscription carried only its acknowledgement")
}

func listenTeardownSignal(ctx context.Context, e *probe.Env) verdict.Outcome {
	c, err := listen(ctx, e)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, ok, err := awaitAck(ctx, e, c); err != nil {
		return listenFailed(err)
	} else if !ok {
		return e.Blame("the subscription's acknowledgement", ackOwner, "none arrived")
	}
	from := e.Log.Len()
	if err := endListen(ctx, e, c); err != nil {
		return verdict.Errorf("ending the subscription: %v", err)
	}
	result, _ := e.FrameAfter(from, probe.ResponseTo(c.ID))
	cancelled, _ := e.FrameAfter(from, func(ev chrono.Event) bool {
		if ev.Summary == nil || ev.Summary.Method != mcp.NotificationCancelled {
			return false
		}
		id, err := jsonrpc.ParseID([]byte(ev.Summary.RequestID))
		return err == nil && id.Key() == c.ID.Key()
	})
	const both = `the subscriptions page says the server "SHOULD respond to the original subscriptions/listen request with a completion result before closing the stream" (SUB-6, SUB-7); the cancellation page says it "MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream" (CAN-41): ambiguity A-11`
	switch {
	case result.Seq != 0 && result.Summary.Kind == "result" && cancelled.Seq != 0:
		return verdict.Infof("the server sent both: the listen result (seq %d) and notifications/cancelled (seq %d); %s", result.Seq, cancelled.Seq, both)
	case result.Seq != 0 && result.Summary.Kind == "result":
		return verdict.Infof("the server followed SUB-6/SUB-7: it answered the listen request with a result (seq %d); %s", result.Seq, both)
	case cancelled.Seq != 0:
		return verdict.Infof("the server followed CAN-41: notifications/cancelled naming the listen request (seq %d), no result; %s", cancelled.Seq, both)
	case result.Seq != 0:
		return e.Breaks("SUB-7", []string{"a completion result for the listen request, or notifications/cancelled naming it"}, "an error response: "+probe.Describe(result), result.Seq)
	}
	return e.Breaks("CAN-41", []string{"the listen request's result (SUB-6, SUB-7) or notifications/cancelled naming it (CAN-41)"},
		"the subscription ended with neither: under either reading of A-11 its end went unsignalled (SUB-6 and SUB-7 are broken too)", 0)
}

func listenNoLogs(ctx context.Context, e *probe.Env) verdict.Outcome {
	c, err := listen(ctx, e, peer.WithLogLevel("debug"))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, ok, err := awaitAck(ctx, e, c); err != nil {
		return listenFailed(err)
	} else if !ok {
		return e.Blame("the subscription's acknowledgement", ackOwner, "none arrived")
	}
	if err := endListen(ctx, e, c); err != nil {
		return verdict.Errorf("ending the subscription: %v", err)
	}
	if evs, _ := logMessagesAfter(e, c.SentSeq); len(evs) > 0 {
		return e.Breaks("LOG-44", []string{"no notifications/message on a subscriptions/listen stream"}, probe.Describe(evs[0]), evs[0].Seq)
	}
	return verdict.Passf("the subscription carried no log message")
}
