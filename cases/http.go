package cases

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
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// httpCases cover the Streamable HTTP transport of 2025-11-25: streams,
// disconnection and resumption, sessions, Origin and headers.
func httpCases() []probe.Case {
	return []probe.Case{
		// HTTP-25 SHOULD NOT: "Disconnection SHOULD NOT be interpreted as the client cancelling
		//   its request."
		// HTTP-42 SHOULD: "If the client wishes to resume after a disconnection (whether due to
		//   network failure or server-initiated closure), it SHOULD issue an HTTP GET to the MCP
		//   endpoint, and include the `Last-Event-ID` header to indicate the last event ID it
		//   received."
		// HTTP-45 DEF: "This mechanism applies regardless of how the original stream was initiated
		//   (via POST or GET). Resumption is always via HTTP GET with `Last-Event-ID`."
		// HTTP-21 SHOULD: "The SSE stream SHOULD eventually include a JSON-RPC _response_ for the
		//   JSON-RPC _request_ sent in the POST body."
		{
			ID:       "http/disconnect-is-not-cancel",
			Title:    "dropping a call's SSE stream does not cancel the call",
			Reqs:     []string{"HTTP-25", "HTTP-42", "HTTP-45", "HTTP-21"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true, Observes: true},
			Sends:    "tools/call with progress; after step 1 the client drops the POST's SSE stream without a cancel; the work is released and runs to its end; GET with Last-Event-ID",
			Expect:   "the server reports the operation completed, not cancelled (control; else the observer counts the handler completed, not cancelled); the resumed stream carries the remaining progress and the result",
			Run:      disconnectIsNotCancel,
		},
		// HTTP-43 MAY: "The server MAY use this header to replay messages that would have been
		//   sent after the last event ID, _on the stream that was disconnected_, and to resume the
		//   stream from that point."
		// HTTP-45 DEF: "This mechanism applies regardless of how the original stream was initiated
		//   (via POST or GET). Resumption is always via HTTP GET with `Last-Event-ID`."
		// HTTP-21 SHOULD: "The SSE stream SHOULD eventually include a JSON-RPC _response_ for the
		//   JSON-RPC _request_ sent in the POST body."
		// HTTP-25 SHOULD NOT: "Disconnection SHOULD NOT be interpreted as the client cancelling
		//   its request."
		{
			ID:       "http/resume-while-running",
			Title:    "a resume while the call still runs replays what was missed and goes on live",
			Reqs:     []string{"HTTP-43", "HTTP-45", "HTTP-21", "HTTP-25"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress; drop after step 1; step 2 runs while away; GET with Last-Event-ID while step 3 is held; release",
			Expect:   "progress 2 replayed, then progress 3 and the result live, on the resumed stream",
			Run:      func(ctx context.Context, e *probe.Env) verdict.Outcome { return resumeCase(ctx, e, false) },
		},
		// HTTP-43 MAY: "The server MAY use this header to replay messages that would have been
		//   sent after the last event ID, _on the stream that was disconnected_, and to resume the
		//   stream from that point."
		// HTTP-45 DEF: "This mechanism applies regardless of how the original stream was initiated
		//   (via POST or GET). Resumption is always via HTTP GET with `Last-Event-ID`."
		// HTTP-21 SHOULD: "The SSE stream SHOULD eventually include a JSON-RPC _response_ for the
		//   JSON-RPC _request_ sent in the POST body."
		// HTTP-25 SHOULD NOT: "Disconnection SHOULD NOT be interpreted as the client cancelling
		//   its request."
		{
			ID:       "http/resume-after-completion",
			Title:    "a resume after the call completed replays the rest and the result",
			Reqs:     []string{"HTTP-43", "HTTP-45", "HTTP-21", "HTTP-25"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress; drop after step 1; the call runs to its end; then GET with Last-Event-ID",
			Expect:   "the remaining progress and the result, replayed on the resumed stream",
			Run:      func(ctx context.Context, e *probe.Env) verdict.Outcome { return resumeCase(ctx, e, true) },
		},
		// HTTP-44 MUST NOT: "The server MUST NOT replay messages that would have been delivered on
		//   a different stream."
		// HTTP-37 MUST: "The server MUST send each of its JSON-RPC messages on only one of the
		//   connected streams; that is, it MUST NOT broadcast the same message across multiple
		//   streams."
		// HTTP-21 SHOULD: "The SSE stream SHOULD eventually include a JSON-RPC _response_ for the
		//   JSON-RPC _request_ sent in the POST body."
		// HTTP-25 SHOULD NOT: "Disconnection SHOULD NOT be interpreted as the client cancelling
		//   its request."
		{
			ID:       "http/replay-only-disconnected-stream",
			Title:    "a resume replays only the stream that was disconnected",
			Reqs:     []string{"HTTP-44", "HTTP-37", "HTTP-21", "HTTP-25"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "call A dropped after step 1; call B runs to completion on its own stream; A completes; GET with Last-Event-ID of A",
			Expect:   "the resumed stream carries only A's messages, nothing of B",
			Run:      replayOnlyDisconnected,
		},
		// HTTP-40 MUST: "If present, the ID MUST be globally unique across all streams within that
		//   session—or all streams with that specific client, if session management is not in use."
		{
			ID:       "http/event-ids-unique",
			Title:    "SSE event IDs are unique across the session's streams",
			Reqs:     []string{"HTTP-40"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "two tools/call with progress, each to completion",
			Expect:   "no event ID appears twice across all streams",
			Run:      eventIDsUnique,
		},
		// HTTP-11 MUST: "If the server accepts the input, the server MUST return HTTP status code
		//   202 Accepted with no body."
		// HTTP-26 SHOULD: "To cancel, the client SHOULD explicitly send an MCP
		//   `CancelledNotification`."
		// CAN-8 SHOULD: "Receivers of cancellation notifications SHOULD: ▸ Stop processing the
		//   cancelled request ▸ Free associated resources ▸ Not send a response for the cancelled
		//   request"
		{
			ID:       "http/cancel-202-then-no-response",
			Title:    "a POSTed cancel gets 202 and the cancelled call's stream carries no response",
			Reqs:     []string{"HTTP-11", "HTTP-26", "CAN-8"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress; after step 1 notifications/cancelled as its own POST",
			Expect:   "202 with no body for the cancel; no response for the call on its stream",
			Run:      cancel202NoResponse,
		},
		// HTTP-11 MUST: "If the server accepts the input, the server MUST return HTTP status code
		//   202 Accepted with no body."
		{
			ID:       "http/notification-202-no-body",
			Title:    "a POSTed notification is answered 202 with no body",
			Reqs:     []string{"HTTP-11"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "notifications/cancelled for a request ID never used",
			Expect:   "HTTP 202 Accepted, empty body",
			Run:      notification202,
		},
		// HTTP-51 SHOULD: "Servers that require a session ID SHOULD respond to requests without an
		//   `MCP-Session-Id` header (other than initialization) with HTTP 400 Bad Request."
		{
			ID:       "http/session-id-required",
			Title:    "a request without the session ID is refused with 400",
			Reqs:     []string{"HTTP-51"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "ping without MCP-Session-Id on a session that has one",
			Expect:   "HTTP 400",
			Run:      sessionIDRequired,
		},
		// HTTP-52 MAY/MUST: "The server MAY terminate the session at any time, after which it MUST
		//   respond to requests containing that session ID with HTTP 404 Not Found."
		{
			ID:       "http/unknown-session-404",
			Title:    "a request with an unknown session ID gets 404",
			Reqs:     []string{"HTTP-52"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "ping with MCP-Session-Id: mcpflight-no-such-session",
			Expect:   "HTTP 404",
			Run:      unknownSession404,
		},
		// HTTP-52 MAY/MUST: "The server MAY terminate the session at any time, after which it MUST
		//   respond to requests containing that session ID with HTTP 404 Not Found."
		// HTTP-54 SHOULD: "Clients that no longer need a particular session (e.g., because the
		//   user is leaving the client application) SHOULD send an HTTP DELETE to the MCP endpoint
		//   with the `MCP-Session-Id` header, to explicitly terminate the session."
		// HTTP-55 MAY: "The server MAY respond to this request with HTTP 405 Method Not Allowed,
		//   indicating that the server does not allow clients to terminate sessions."
		// HTTP-46 MAY: "A server using the Streamable HTTP transport MAY assign a session ID at
		//   initialization time, by including it in an `MCP-Session-Id` header on the HTTP response
		//   containing the `InitializeResult`."
		// HTTP-48 MUST: "The session ID MUST only contain visible ASCII characters (ranging from
		//   0x21 to 0x7E)."
		// HTTP-53 MUST: "When a client receives HTTP 404 in response to a request containing an
		//   `MCP-Session-Id`, it MUST start a new session by sending a new `InitializeRequest`
		//   without a session ID attached."
		{
			ID:       "http/delete-then-404-then-new-session",
			Title:    "after DELETE the session is gone and a new initialize starts a new one",
			Reqs:     []string{"HTTP-52", "HTTP-54", "HTTP-55", "HTTP-46", "HTTP-48", "HTTP-53"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "DELETE; then ping, GET and DELETE with the old session ID; then initialize without a session ID",
			Expect:   "DELETE 2xx (or 405: not allowed); 404 for every later request; the new initialize gets a different, visible-ASCII session ID",
			Run:      deleteThen404,
		},
		// HTTP-48 MUST: "The session ID MUST only contain visible ASCII characters (ranging from
		//   0x21 to 0x7E)."
		{
			ID:       "http/session-id-visible-ascii",
			Title:    "the session ID is visible ASCII only",
			Reqs:     []string{"HTTP-48"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, NoHandshake: true},
			Sends:    "initialize as a raw POST without a session ID; then DELETE of the session it opened",
			Expect:   "an MCP-Session-Id of bytes 0x21 to 0x7E only (or none: HTTP-46 is MAY)",
			Run:      sessionIDVisibleASCII,
		},
		// HTTP-2 MUST: "Servers MUST validate the `Origin` header on all incoming connections to
		//   prevent DNS rebinding attacks"
		// HTTP-3 MUST: "If the `Origin` header is present and invalid, servers MUST respond with
		//   HTTP 403 Forbidden."
		{
			ID:       "http/origin-forbidden",
			Title:    "a foreign Origin is refused with 403",
			Reqs:     []string{"HTTP-2", "HTTP-3"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "ping with Origin: http://evil.example",
			Expect:   "HTTP 403",
			Run:      originForbidden,
		},
		// HTTP-59 MUST: "If the server receives a request with an invalid or unsupported
		//   `MCP-Protocol-Version`, it MUST respond with `400 Bad Request`."
		{
			ID:       "http/protocol-version-header-invalid",
			Title:    "an unsupported MCP-Protocol-Version header is refused with 400",
			Reqs:     []string{"HTTP-59"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "ping with MCP-Protocol-Version: 1999-01-01",
			Expect:   "HTTP 400",
			Run:      protocolVersionInvalid,
		},
		// HTTP-30 MUST: "The server MUST either return `Content-Type: text/event-stream` in
		//   response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that
		//   the server does not offer an SSE stream at this endpoint."
		// HTTP-31 MAY/SHOULD: "The server MAY send JSON-RPC _requests_ and _notifications_ on the
		//   stream. ▸ These messages SHOULD be unrelated to any concurrently-running JSON-RPC
		//   _request_ from the client."
		// HTTP-32 MUST NOT: "The server MUST NOT send a JSON-RPC _response_ on the stream unless
		//   resuming a stream associated with a previous client request."
		// HTTP-22 MAY/SHOULD: "The server MAY send JSON-RPC _requests_ and _notifications_ before
		//   sending the JSON-RPC _response_. These messages SHOULD relate to the originating client
		//   _request_."
		// HTTP-37 MUST: "The server MUST send each of its JSON-RPC messages on only one of the
		//   connected streams; that is, it MUST NOT broadcast the same message across multiple
		//   streams."
		{
			ID:       "http/get-stream-carries-no-call-messages",
			Title:    "progress and responses of a POSTed call stay off the GET stream",
			Reqs:     []string{"HTTP-30", "HTTP-31", "HTTP-32", "HTTP-22", "HTTP-37"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "GET stream opened; tools/call with progress to completion",
			Expect:   "GET answered with an event stream or 405; the call's progress and result only on its POST stream",
			Run:      getStreamClean,
		},
		// HTTP-14 MUST: "If the input is a JSON-RPC _request_, the server MUST either return
		//   `Content-Type: text/event-stream`, to initiate an SSE stream, or `Content-Type:
		//   application/json`, to return one JSON object."
		{
			ID:       "http/answer-content-type",
			Title:    "every POSTed request is answered with JSON or an event stream",
			Reqs:     []string{"HTTP-14"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "ping, tools/list and a tools/call with progress",
			Expect:   "each answer has Content-Type application/json or text/event-stream",
			Run:      answerContentType,
		},
		// HTTP-16 SHOULD: "The server SHOULD immediately send an SSE event consisting of an event
		//   ID and an empty `data` field in order to prime the client to reconnect (using that event
		//   ID as `Last-Event-ID`)."
		// HTTP-24 SHOULD: "After the JSON-RPC _response_ has been sent, the server SHOULD
		//   terminate the SSE stream."
		{
			ID:       "http/priming-event",
			Title:    "an SSE answer starts with an event ID and empty data",
			Reqs:     []string{"HTTP-16", "HTTP-24"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress to completion",
			Expect:   "a stream answer's first event has an ID and empty data; the stream ends after the response",
			Run:      primingEvent,
		},
		// HTTP-10 MUST: "The body of the POST request MUST be a single JSON-RPC _request_,
		//   _notification_, or _response_."
		// HTTP-12 MUST: "If the server cannot accept the input, it MUST return an HTTP error
		//   status code (e.g., 400 Bad Request)."
		{
			ID:       "http/batch-rejected",
			Title:    "a POSTed batch is refused with an HTTP error",
			Reqs:     []string{"HTTP-10", "HTTP-12"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "a JSON array of two pings",
			Expect:   "an HTTP 4xx status",
			Run:      batchRejected,
		},
	}
}

func disconnectIsNotCancel(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	var before *profile.Observation
	if e.Control == nil && e.HasObserver() {
		b, err := e.ReadObserver(ctx)
		if err != nil {
			return verdict.Errorf("the observer read before the call failed: %s", chrono.Sanitize(err.Error(), false))
		}
		before = &b
	}
	op, _, last, o := e.DropStreamAfterStep(ctx, h, "a")
	if o != nil {
		return *o
	}
	if e.Control == nil {
		return disconnectOnWire(ctx, e, h, op, last, before)
	}
	if last == "" {
		// DropStreamAfterStep has judged the drop by the server's own
		// account of the operation; there is nothing to resume.
		return verdict.Infof("%s", probe.NotResumable)
	}
	// The call is held at its step-1 gate, and DropAfterStep has judged
	// the state the server left it in once it dealt with the drop.
	if err := op.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := op.Settle(ctx); err != nil {
		return verdict.Errorf("settling: %v", err)
	}
	state, _, err := op.OperationState(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if state.State != "completed" {
		return e.Breaks("HTTP-25", []string{"operation \"a\" completed although its stream was dropped (a disconnection is not a cancellation)"},
			fmt.Sprintf("the server reports operation \"a\" as %q after the client dropped its stream", state.State), 0)
	}
	resumed, err := h.Resume(ctx, last)
	if err != nil {
		return verdict.Infof("the work completed despite the drop (HTTP-25 holds); resuming was refused: %v", chrono.Sanitize(err.Error(), false))
	}
	resp, err := e.AwaitResult(ctx, op)
	if err != nil || resp == nil {
		return e.Breaks("HTTP-21", []string{"the call's result on the stream resumed with Last-Event-ID " + last},
			fmt.Sprintf("no result on %s", resumed), 0)
	}
	return verdict.Passf("the call completed after its stream was dropped; the result came on %s", resumed)
}

func resumeCase(ctx context.Context, e *probe.Env, afterCompletion bool) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	if e.Control == nil {
		return resumeOnWire(ctx, e, h, afterCompletion)
	}
	op, _, last, o := e.DropAfterStep(ctx, h, "a")
	if o != nil {
		return *o
	}
	if err := op.Release(ctx, "step/1"); err != nil {
		return verdict.Errorf("%v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, e.SlowBudget())
	_, err := op.Checkpoint(wctx, "step/2")
	cancel()
	if err != nil {
		if state, _, serr := op.OperationState(ctx); serr == nil && state.State == "cancelled" {
			return e.Breaks("HTTP-25", []string{"the call goes on after its stream dropped (a disconnection is not a cancellation)"},
				"the server reports the call cancelled after the client dropped its stream", 0)
		}
		return verdict.Errorf("awaiting step 2: %v", err)
	}
	if afterCompletion {
		if err := op.ReleaseAll(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
		if _, err := op.Settle(ctx); err != nil {
			return verdict.Errorf("settling: %v", err)
		}
	}
	resumed, err := h.Resume(ctx, last)
	if err != nil {
		var se *transport.StatusError
		if errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed {
			return verdict.Infof("the server offers no GET stream (405): it does not resume (HTTP-27 is MAY)")
		}
		return e.Breaks("HTTP-43", []string{"GET with Last-Event-ID resumes the dropped stream"},
			"resuming failed: "+chrono.Sanitize(err.Error(), false), 0)
	}
	if !afterCompletion {
		if err := op.ReleaseAll(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	resp, err := e.AwaitResult(ctx, op)
	if err != nil || resp == nil {
		return e.Breaks("HTTP-21", []string{fmt.Sprintf("progress 2 and 3 and the result on %s", resumed)},
			fmt.Sprintf("no result for the call on %s", resumed), 0)
	}
	isMine := probe.ProgressFor(op.Call.Token)
	got := 0
	for _, ev := range e.FramesOn(resumed) {
		if isMine(ev) {
			got++
		}
	}
	if got != 2 {
		return e.Breaks("HTTP-43", []string{fmt.Sprintf("the 2 progress notifications after event %s replayed or sent on %s", last, resumed)},
			fmt.Sprintf("%d progress notifications for the call on %s", got, resumed), 0)
	}
	return verdict.Passf("the resumed stream %s carried the 2 missed progress notifications and the result", resumed)
}

func replayOnlyDisconnected(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	if e.Control == nil {
		return replayOnWire(ctx, e, h)
	}
	a, _, last, o := e.DropAfterStep(ctx, h, "a")
	if o != nil {
		return *o
	}
	b, err := e.StartSlow(ctx, probe.SlowSpec{Key: "b", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := e.AwaitResult(ctx, b); err != nil {
		return verdict.Errorf("call b: %v", err)
	}
	if err := a.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	end, err := a.Settle(ctx)
	if err != nil {
		return verdict.Errorf("settling a: %v", err)
	}
	if end.Outcome == mcp.OutcomeCancelled {
		// Nothing will come for a on any stream: the drop was taken for
		// a cancel, which is the broken rule, not the replay.
		return e.Breaks("HTTP-25", []string{"call a goes on after its stream dropped, and its result is replayed on the resumed stream"},
			"the server reports call a cancelled after the client dropped its stream", 0)
	}
	resumed, err := h.Resume(ctx, last)
	if err != nil {
		return verdict.Infof("resuming was refused (%s): nothing replayed, nothing crossed", chrono.Sanitize(err.Error(), false))
	}
	if _, err := e.AwaitResult(ctx, a); err != nil {
		return e.Breaks("HTTP-21", []string{"call a's result on the resumed stream"}, "no result for call a on "+resumed, 0)
	}
	<-probe.StreamDoneOr(ctx, h, resumed, e)
	isB := probe.ProgressFor(b.Call.Token)
	bResp := probe.ResponseTo(b.Call.ID)
	for _, ev := range e.FramesOn(resumed) {
		if isB(ev) || bResp(ev) {
			return e.Breaks("HTTP-44", []string{"only call a's messages on the stream resumed after event " + last},
				fmt.Sprintf("call b's %s replayed on %s", probe.Describe(ev), resumed), ev.Seq)
		}
	}
	return verdict.Passf("the resumed stream %s carried only the disconnected call's messages", resumed)
}

func eventIDsUnique(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	for _, key := range []string{"a", "b"} {
		op, err := e.StartSlow(ctx, probe.SlowSpec{Key: key, Progress: true, Free: true})
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		if _, err := e.AwaitResult(ctx, op); err != nil {
			return verdict.Errorf("call %s: %v", key, err)
		}
		if name := h.StreamOf(op.Call.ID); name != "" {
			<-probe.StreamDoneOr(ctx, h, name, e)
		}
	}
	seen := map[string]string{}
	n := 0
	for _, stream := range h.Streams() {
		for _, ev := range h.Events(stream) {
			if !ev.HasID || ev.ID == "" {
				continue
			}
			n++
			if prev, dup := seen[ev.ID]; dup {
				return e.Breaks("HTTP-40", []string{"every event ID unique across the session's streams"},
					fmt.Sprintf("event ID %q on %s and on %s", chrono.Sanitize(ev.ID, false), prev, stream), ev.Seq)
			}
			seen[ev.ID] = stream
		}
	}
	if n == 0 {
		return verdict.Infof("the server attached no event IDs (HTTP-39 is MAY)")
	}
	return verdict.Passf("%d event IDs, all distinct", n)
}

func cancel202NoResponse(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	stream := h.StreamOf(op.Call.ID)
	if err := e.S.Cancel(ctx, op.Call, "mcpflight: cancel over HTTP"); err != nil {
		var se *transport.StatusError
		if !errors.As(err, &se) {
			return verdict.Errorf("sending cancel: %v", err)
		}
	}
	cseq := op.Call.CancelSeq
	if ev, ok := e.FrameAfter(op.Call.SentSeq, probe.ResponseTo(op.Call.ID)); ok && ev.Seq < cseq {
		return verdict.Infof("the call answered (seq %d) before the cancel was sent (seq %d): nothing to judge", ev.Seq, cseq)
	}
	// With the control extension the operation's end checkpoint and a
	// round trip say the server is done with the cancel; on the wire
	// alone, the cancelled call's stream is the witness: its end (or
	// Env.Patience) closes the observation.
	if e.Control != nil {
		if o := e.SettleAfterCancel(ctx, op); o != nil {
			return *o
		}
		if err := e.Quiesce(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	status, sev, ok := e.StatusAfter(cseq)
	if !ok {
		return verdict.Errorf("no HTTP status recorded for the cancel's POST")
	}
	if status != http.StatusAccepted {
		return e.Breaks("HTTP-11", []string{"HTTP 202 Accepted for the POSTed notifications/cancelled"},
			chrono.Sanitize(sev.Text, false), sev.Seq)
	}
	held := ""
	if stream != "" {
		// Only the call's remaining work, or the server dealing with the
		// cancel, can end its stream: on the wire alone it has that work
		// at the pace learned plus windows (Op.ResultBudget), within
		// Env.Patience, before it counts as held.
		bound := min(op.ResultBudget(), e.Patience())
		wctx, cancel := context.WithTimeout(ctx, bound)
		select {
		case <-h.StreamDone(stream):
		case <-wctx.Done():
		}
		cancel()
		if ctx.Err() != nil {
			return verdict.Errorf("%v", ctx.Err())
		}
		held = streamAfterCancel(e, h, stream, cseq, bound)
	}
	if o := e.ResponseAfterCancel(op); o != nil {
		return *o
	}
	if held != "" {
		// The stream of a request the server accepted a cancel for is a
		// resource of that request; holding it open with nothing left
		// to send is not freeing it.
		return e.Broke(verdict.Req("CAN-8"), []string{"the cancelled call's SSE stream ends once the server has dealt with the cancel (\"free associated resources\")"},
			held, cseq)
	}
	return verdict.Passf("the cancel got 202 and no response followed; %s", streamEnd(e, h, stream, cseq))
}

// streamAfterCancel says, when the cancelled call's stream was still
// open bound after the cancel, how long and what it carried since; ""
// when it ended.
func streamAfterCancel(e *probe.Env, h *transport.HTTP, stream string, cseq uint64, bound time.Duration) string {
	select {
	case <-h.StreamDone(stream):
		return ""
	default:
	}
	after := 0
	for _, ev := range e.FramesOn(stream) {
		if ev.Seq > cseq {
			after++
		}
	}
	return fmt.Sprintf("%s was still open %v after the cancel (seq %d), with %d messages on it since: it is held until the session ends",
		stream, bound.Round(time.Millisecond), cseq, after)
}

// streamEnd says when the cancelled call's stream ended, relative to the
// cancel.
func streamEnd(e *probe.Env, h *transport.HTTP, stream string, cseq uint64) string {
	if stream == "" {
		return "the call was answered with JSON, no stream"
	}
	cancelled := e.EventAt(cseq)
	for _, ev := range e.Log.Since(cseq) {
		if ev.Channel == "SSE "+stream && ev.Kind == chrono.KindNote {
			return fmt.Sprintf("%s ended %v after the cancel (seq %d)", stream, (ev.Offset - cancelled.Offset).Round(time.Millisecond), ev.Seq)
		}
	}
	return stream + " ended"
}

func notification202(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	body := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcpflight-never-sent","reason":"probe"}}`)
	seq := e.Log.Len() + 1
	resp, err := h.RawPOST(ctx, body, nil)
	if err != nil {
		return verdict.Errorf("POST: %v", err)
	}
	if resp.Status != http.StatusAccepted || len(resp.Body) > 0 || len(resp.Events) > 0 {
		actual := fmt.Sprintf("HTTP %d with %d body bytes", resp.Status, len(resp.Body))
		if ev, ok := e.BodyAfter(seq); ok {
			return e.Breaks("HTTP-11", []string{"HTTP 202 Accepted with no body"}, actual, ev.Seq)
		}
		return e.Breaks("HTTP-11", []string{"HTTP 202 Accepted with no body"}, actual, seq)
	}
	return verdict.Passf("202 with no body")
}

func sessionIDRequired(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	if h.SessionID() == "" {
		return verdict.Skipf("the server assigned no session ID (HTTP-46 is MAY)")
	}
	status, seq, err := e.RawPing(ctx, h, http.Header{transport.HeaderSessionID: nil})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if status != http.StatusBadRequest {
		return e.Breaks("HTTP-51", []string{"HTTP 400 for a request without MCP-Session-Id"}, fmt.Sprintf("HTTP %d", status), seq)
	}
	return verdict.Passf("400 without the session ID")
}

func unknownSession404(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	if h.SessionID() == "" {
		return verdict.Skipf("the server assigned no session ID (HTTP-46 is MAY)")
	}
	status, seq, err := e.RawPing(ctx, h, http.Header{transport.HeaderSessionID: {"mcpflight-no-such-session"}})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if status != http.StatusNotFound {
		// HTTP-52's MUST is about terminated sessions; a session ID never
		// issued is the same case for the client (HTTP-53), but the
		// sentence does not literally cover it: a warn.
		return e.Broke(verdict.Req("HTTP-52").Clause("MUST").Except(verdict.Warn,
			"HTTP-52's MUST is about a session the server terminated; a session ID never issued is the same situation for the client (HTTP-53), but the sentence does not literally cover it"),
			[]string{"HTTP 404 for a session ID the server never issued (as for a terminated one)"}, fmt.Sprintf("HTTP %d", status), seq)
	}
	return verdict.Passf("404 for an unknown session ID")
}

// sessionIDVisibleASCII reads the session ID of a fresh initialize. What
// net/http hands over is the header value with surrounding whitespace
// trimmed; a space or a byte over 0x7E inside it still shows.
func sessionIDVisibleASCII(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	from := e.Log.Len()
	resp, err := e.RawInitialize(ctx, h)
	if err != nil {
		return verdict.Errorf("initialize: %v", err)
	}
	seq := from + 1
	for _, ev := range e.Log.Since(from) {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindHTTP {
			seq = ev.Seq // the response's headers
			break
		}
	}
	if resp.Status/100 != 2 {
		return verdict.Errorf("initialize answered HTTP %d", resp.Status)
	}
	ids := resp.Header.Values(transport.HeaderSessionID)
	if len(ids) == 0 {
		return verdict.Skipf("the server assigned no session ID (HTTP-46 is MAY)")
	}
	defer func() {
		_, _ = h.Raw(ctx, http.MethodDelete, nil, http.Header{transport.HeaderSessionID: {ids[0]}})
	}()
	for _, id := range ids {
		if !transport.VisibleASCII(id) {
			return e.Breaks("HTTP-48", []string{"a session ID of visible ASCII (0x21 to 0x7E)"}, fmt.Sprintf("session ID %q", chrono.Sanitize(id, false)), seq)
		}
	}
	return verdict.Passf("the session ID is %d visible ASCII characters", len(ids[0]))
}

func deleteThen404(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	old := h.SessionID()
	if old == "" {
		return verdict.Skipf("the server assigned no session ID (HTTP-46 is MAY)")
	}
	if !transport.VisibleASCII(old) {
		return e.Breaks("HTTP-48", []string{"a session ID of visible ASCII (0x21 to 0x7E)"}, fmt.Sprintf("session ID %q", chrono.Sanitize(old, false)), 0)
	}
	seq := e.Log.Len() + 1
	status, err := h.Delete(ctx)
	if err != nil {
		return verdict.Errorf("DELETE: %v", err)
	}
	if status == http.StatusMethodNotAllowed {
		return verdict.Infof("DELETE answered 405: the server does not let clients end sessions (HTTP-55)")
	}
	if status/100 != 2 {
		return e.Breaks("HTTP-54", []string{"DELETE answered 2xx, or 405 when not allowed"}, fmt.Sprintf("HTTP %d", status), seq)
	}
	oldHdr := http.Header{transport.HeaderSessionID: {old}}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		var body []byte
		if method == http.MethodPost {
			body, _ = jsonrpc.EncodeRequest(e.S.NewID(), mcp.MethodPing, nil)
		}
		seq := e.Log.Len() + 1
		resp, err := h.Raw(ctx, method, body, oldHdr)
		if err != nil {
			return verdict.Errorf("%s after DELETE: %v", method, err)
		}
		if resp.Status != http.StatusNotFound {
			return e.Broke(verdict.Req("HTTP-52").Clause("MUST"), []string{method + " with a deleted session ID answered 404"}, fmt.Sprintf("HTTP %d", resp.Status), seq)
		}
	}
	seq = e.Log.Len() + 1
	resp, err := e.RawInitialize(ctx, h)
	if err != nil {
		return verdict.Errorf("new initialize: %v", err)
	}
	fresh := resp.Header.Get(transport.HeaderSessionID)
	switch {
	case resp.Status/100 != 2:
		return e.Breaks("HTTP-53", []string{"a new initialize without a session ID starts a new session"}, fmt.Sprintf("HTTP %d", resp.Status), seq)
	case fresh == old:
		return e.Broke(verdict.Req("HTTP-52").Clause("MUST"), []string{"a new session ID after DELETE"}, "the deleted session ID was issued again", seq)
	case fresh != "" && !transport.VisibleASCII(fresh):
		return e.Breaks("HTTP-48", []string{"a session ID of visible ASCII (0x21 to 0x7E)"}, fmt.Sprintf("session ID %q", chrono.Sanitize(fresh, false)), seq)
	}
	if fresh != "" {
		_, _ = h.Raw(ctx, http.MethodDelete, nil, http.Header{transport.HeaderSessionID: {fresh}})
	}
	return verdict.Passf("DELETE ended the session (404 for POST, GET and DELETE after it); a new initialize got a new session")
}

func originForbidden(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	status, seq, err := e.RawPing(ctx, h, http.Header{"Origin": {"http://evil.example"}})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if status != http.StatusForbidden {
		return e.Breaks("HTTP-3", []string{"HTTP 403 for Origin: http://evil.example"}, fmt.Sprintf("HTTP %d", status), seq)
	}
	return verdict.Passf("403 for a foreign Origin")
}

func protocolVersionInvalid(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	status, seq, err := e.RawPing(ctx, h, http.Header{transport.HeaderProtocolVersion: {"1999-01-01"}})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if status != http.StatusBadRequest {
		return e.Breaks("HTTP-59", []string{"HTTP 400 for MCP-Protocol-Version: 1999-01-01"}, fmt.Sprintf("HTTP %d", status), seq)
	}
	return verdict.Passf("400 for an unsupported MCP-Protocol-Version")
}

func getStreamClean(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	get, err := h.OpenGET(ctx)
	if err != nil {
		var se *transport.StatusError
		if errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed {
			return verdict.Infof("the server offers no GET stream (405, allowed by HTTP-30)")
		}
		if errors.Is(err, transport.ErrBadContentType) {
			return e.Breaks("HTTP-30", []string{"GET answered with text/event-stream or 405"}, chrono.Sanitize(err.Error(), false), 0)
		}
		return verdict.Errorf("GET: %v", err)
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := e.AwaitResult(ctx, op); err != nil {
		return verdict.Errorf("call: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	// The GET stream is read on a connection of its own: nothing orders
	// it with the call's stream. A controlled target says how many
	// progress notifications it sent: once that many are read, wherever
	// they came, the chronology is complete. Elsewhere the GET stream is
	// watched for the grace window.
	// The call is the only one running: any progress is its own, whatever
	// token it names (a wrong token is for the progress cases to judge).
	onGET := func(ev chrono.Event) bool {
		return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && ev.Channel == "SSE "+get &&
			(probe.AnyResponse(ev) || probe.AnyProgress(ev))
	}
	if e.Control != nil {
		st, _, err := op.OperationState(ctx)
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		if err := op.WaitAnyProgress(ctx, st.ProgressSent); err != nil {
			return verdict.Errorf("the server reports %d progress notifications sent; %d were read: %v", st.ProgressSent, op.Call.ProgressCount(), err)
		}
		for _, ev := range e.Log.Events() {
			if onGET(ev) {
				return getStreamViolation(e, ev)
			}
		}
		return verdict.Passf("the GET stream carried nothing of the call (all %d progress notifications came on its own stream)", st.ProgressSent)
	}
	window := e.Window()
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	ev, err := e.Log.WaitFor(wctx, 0, onGET)
	switch {
	case err == nil:
		return getStreamViolation(e, ev)
	case ctx.Err() != nil:
		return verdict.Errorf("%v", ctx.Err())
	}
	e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("watched the GET stream for %v", window))
	return verdict.Passf("the GET stream carried nothing of the call")
}

// getStreamViolation judges a frame of a POSTed call read on the GET
// stream: a response there breaks HTTP-32, progress HTTP-31.
func getStreamViolation(e *probe.Env, ev chrono.Event) verdict.Outcome {
	if probe.AnyResponse(ev) {
		return e.Breaks("HTTP-32", []string{"no JSON-RPC response on the GET stream (not a resumption)"}, probe.Describe(ev), ev.Seq)
	}
	return e.Broke(verdict.Req("HTTP-31").Clause("SHOULD"), []string{"progress of a POSTed call on that call's stream, not on the GET stream"}, probe.Describe(ev), ev.Seq)
}

func answerContentType(ctx context.Context, e *probe.Env) verdict.Outcome {
	start := e.Log.Len()
	// JSON-RPC errors are for other cases; only the HTTP answers count.
	var rpcErr *jsonrpc.Error
	if err := e.S.Ping(ctx); err != nil && !errors.As(err, &rpcErr) {
		return verdict.Errorf("ping: %v", err)
	}
	if err := e.S.Request(ctx, mcp.MethodToolsList, map[string]any{}, nil); err != nil && !errors.As(err, &rpcErr) {
		return verdict.Errorf("tools/list: %v", err)
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := e.AwaitResult(ctx, op); err != nil {
		return verdict.Errorf("call: %v", err)
	}
	n := 0
	requests := map[string]bool{}
	for _, ev := range e.Log.Since(start) {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Kind == "request" {
			requests[ev.Channel] = true
		}
		if ev.Dir != chrono.In || ev.Kind != chrono.KindHTTP || !requests[ev.Channel] || !strings.HasPrefix(ev.Text, "HTTP 2") {
			continue
		}
		n++
		ct := strings.ToLower(ev.Text)
		if !strings.Contains(ct, "content-type: application/json") && !strings.Contains(ct, "content-type: text/event-stream") {
			return e.Breaks("HTTP-14", []string{"Content-Type application/json or text/event-stream for a POSTed request"},
				chrono.Sanitize(ev.Text, false), ev.Seq)
		}
	}
	return verdict.Passf("%d request answers, each JSON or an event stream", n)
}

func primingEvent(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := e.AwaitResult(ctx, op); err != nil {
		return verdict.Errorf("call: %v", err)
	}
	stream, o := probe.StreamOf(h, op.Call.ID)
	if o != nil {
		return *o
	}
	wctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	select {
	case <-h.StreamDone(stream):
		if h.StreamStalled(stream) {
			return e.Breaks("HTTP-24", []string{"the SSE stream ends after the response"}, stream+" stayed open after the response until the harness's stall bound closed it", 0)
		}
	case <-wctx.Done():
		return e.Breaks("HTTP-24", []string{"the SSE stream ends after the response"}, stream+" stayed open after the response", 0)
	}
	evs := h.Events(stream)
	if len(evs) == 0 || !evs[0].HasID || evs[0].ID == "" || !evs[0].HasData || evs[0].Data != "" {
		first := "no event"
		var seq uint64
		if len(evs) > 0 {
			first = fmt.Sprintf("first event id=%q data=%q", chrono.Sanitize(evs[0].ID, false), chrono.Sanitize(evs[0].Data, false))
			seq = evs[0].Seq
		}
		return e.Breaks("HTTP-16", []string{"a first event with an event ID and an empty data field"}, first, seq)
	}
	return verdict.Passf("%s opened with a priming event (id %s) and ended after the response", stream, chrono.Sanitize(evs[0].ID, false))
}

func batchRejected(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	a, _ := jsonrpc.EncodeRequest(e.S.NewID(), mcp.MethodPing, nil)
	b, _ := jsonrpc.EncodeRequest(e.S.NewID(), mcp.MethodPing, nil)
	body := append(append(append([]byte("["), a...), ','), b...)
	body = append(body, ']')
	seq := e.Log.Len() + 1
	resp, err := h.RawPOST(ctx, body, nil)
	if err != nil {
		return verdict.Errorf("POST: %v", err)
	}
	if resp.Status/100 == 2 {
		return verdict.Infof("the server accepted a batch (HTTP %d): HTTP-10 binds the client, and a lenient server breaks no rule", resp.Status)
	}
	if resp.Status/100 != 4 {
		return e.Breaks("HTTP-12", []string{"an HTTP 4xx status for a batch it cannot accept (the body must be a single message, HTTP-10)"},
			fmt.Sprintf("HTTP %d", resp.Status), seq)
	}
	return verdict.Passf("HTTP %d for a batch", resp.Status)
}
