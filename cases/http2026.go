package cases

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// http2026Cases cover the Streamable HTTP transport of 2026-07-28: closing a
// request's response stream is its cancellation, the request metadata
// headers mirror the body, and the 2025-11-25 mechanisms (sessions, the
// GET stream, event IDs, resumption) are gone.
func http2026Cases() []probe.Case {
	return []probe.Case{
		// CAN-55 MUST: "Closing the SSE response stream MUST be treated by the server as
		//   cancellation of that request."
		// CAN-43 MUST: "Streamable HTTP: Closing the SSE response stream is the cancellation
		//   signal. The server MUST treat a client disconnect as cancellation of that request. No
		//   `notifications/cancelled` message is required or expected."
		// CAN-56 MUST NOT: "The server SHOULD stop work on the cancelled request as soon as
		//   practical and MUST NOT send any further messages for it."
		{
			ID:       "http26/stream-close-cancels-during-progress",
			Title:    "closing a call's response stream while progress flows cancels the call",
			Reqs:     []string{"CAN-55", "CAN-43", "CAN-56"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true, Witness: "whether the handler stopped"},
			Sends:    "tools/call with progress; after the first progress the client closes the response stream (no notifications/cancelled)",
			Expect:   "the server takes the close for a cancellation: the handler stops (control: the operation is cancelled and ends; else the observer counts it cancelled) and nothing more comes for the request on any stream",
			Run:      func(ctx context.Context, e *probe.Env) verdict.Outcome { return streamCloseCancels(ctx, e, false) },
		},
		// CAN-43 MUST: "Streamable HTTP: Closing the SSE response stream is the cancellation
		//   signal. The server MUST treat a client disconnect as cancellation of that request. No
		//   `notifications/cancelled` message is required or expected."
		// CAN-55 MUST: "Closing the SSE response stream MUST be treated by the server as
		//   cancellation of that request."
		// CAN-56 MUST NOT: "The server SHOULD stop work on the cancelled request as soon as
		//   practical and MUST NOT send any further messages for it."
		{
			ID:       "http26/stream-close-cancels-silent-handler",
			Title:    "closing the stream of a call that has nothing to write yet cancels it",
			Reqs:     []string{"CAN-43", "CAN-55", "CAN-56"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true, Witness: "whether the handler stopped"},
			Sends:    "tools/call without a progress token, held before its first step (control) or running silently; the client closes the exchange",
			Expect:   "the server takes the disconnect for a cancellation without waiting for a write to fail: the handler stops, and nothing comes for the request",
			Run:      func(ctx context.Context, e *probe.Env) verdict.Outcome { return streamCloseCancels(ctx, e, true) },
		},
		// HTTP-91 SHOULD: "The final JSON-RPC _response_ SHOULD terminate the stream."
		{
			ID:       "http26/response-ends-stream",
			Title:    "the response ends its SSE stream",
			Reqs:     []string{"HTTP-91"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress, run to its end",
			Expect:   "the SSE stream that carried the progress ends after the response",
			Run:      responseEndsStream,
		},
		// HTTP-93 DEF: "Resumable SSE streams via `Last-Event-ID` are not supported."
		{
			ID:       "http26/sse-no-event-ids",
			Title:    "SSE events carry no event IDs",
			Reqs:     []string{"HTTP-93"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress, run to its end",
			Expect:   "no event of the response stream has an id field (streams are not resumable)",
			Run:      sseNoEventIDs,
		},
		// HTTP-92 SHOULD: "When initiating an SSE stream, servers SHOULD include the
		//   `X-Accel-Buffering: no` header in the HTTP response."
		{
			ID:       "http26/sse-accel-buffering",
			Title:    "an SSE response says X-Accel-Buffering: no",
			Reqs:     []string{"HTTP-92"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/call with progress, run to its end",
			Expect:   "every SSE response has the header X-Accel-Buffering: no",
			Run:      sseAccelBuffering,
		},
		// HTTP-86 MUST: "If the server accepts it, the server MUST return HTTP status code `202
		//   Accepted` with no body."
		// HTTP-87 MUST: "If the server cannot accept it, it MUST return an HTTP error status code
		//   (e.g., `400 Bad Request`)."
		// HTTP-99 DEF: "The notification rules above describe the transport mechanics for a
		//   notification POST; header requirements for notification POSTs are not defined by this
		//   revision."
		{
			ID:       "http26/cancel-notification-202",
			Title:    "a POSTed notifications/cancelled is accepted with 202 and no body",
			Reqs:     []string{"HTTP-86", "HTTP-87", "HTTP-99"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "notifications/cancelled as its own POST, for a request ID never sent",
			Expect:   "HTTP 202 Accepted with an empty body (no JSON-RPC response), or an HTTP error status if the server cannot accept it (HTTP-87: recorded as info)",
			Run:      cancelNotification202,
		},
		// HTTP-96 MUST: "The header value MUST match the `io.modelcontextprotocol/protocolVersion`
		//   field carried in the request body's `_meta`. If the values do not match, the server MUST
		//   reject the request with `400 Bad Request` and a `HeaderMismatch` JSON-RPC error (see
		//   Server Validation)."
		// HTTP-103 MUST: "Servers that process the request body MUST reject requests where the
		//   values specified in the headers do not match the corresponding values in the request
		//   body."
		// HTTP-104 MUST: "When rejecting a request due to header validation failure, servers MUST
		//   return HTTP status `400 Bad Request` and MUST include a JSON-RPC error response using
		//   the following error code:"
		{
			ID:       "http26/header-mismatch-400",
			Title:    "request headers that do not mirror the body, or are missing, get 400 and -32020",
			Reqs:     []string{"HTTP-96", "HTTP-103", "HTTP-104"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "tools/list with MCP-Protocol-Version 2025-11-25 (the envelope says 2026-07-28); server/discover with Mcp-Method tools/list; tools/call with an Mcp-Name of another tool; tools/list without Mcp-Method",
			Expect:   "each refused with HTTP 400 and a JSON-RPC error -32020 (HeaderMismatch)",
			Run:      headerMismatch400,
		},
		// HTTP-81 MUST: "If the server does not implement the requested RPC method, it MUST
		//   respond with `404 Not Found` and a JSON-RPC error with code `-32601` (`Method not
		//   found`)."
		{
			ID:       "http26/unknown-method-404",
			Title:    "an unknown method gets 404 and -32601",
			Reqs:     []string{"HTTP-81"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "a request of the method mcpflight/no-such-method",
			Expect:   "HTTP 404 with a JSON-RPC error -32601",
			Run:      unknownMethod404,
		},
		// HTTP-107 SHOULD: "A server that supports only this revision and receives such traffic
		//   from an older client SHOULD respond as follows: ▸ HTTP GET or DELETE to the MCP
		//   endpoint: respond with `405 Method Not Allowed`. ▸ An `Mcp-Session-Id` header on a
		//   request: ignore it, and do not mint or echo session IDs. ▸ A `Last-Event-ID` header:
		//   ignore it; streams are not resumable."
		{
			ID:       "http26/get-delete-405",
			Title:    "GET and DELETE at the MCP endpoint get 405",
			Reqs:     []string{"HTTP-107"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "GET (Accept: text/event-stream) and DELETE, each with MCP-Protocol-Version: 2026-07-28",
			Expect:   "HTTP 405 Method Not Allowed for both (no GET stream, no session to end)",
			Run:      getDelete405,
		},
		// HTTP-107 SHOULD: "A server that supports only this revision and receives such traffic
		//   from an older client SHOULD respond as follows: ▸ HTTP GET or DELETE to the MCP
		//   endpoint: respond with `405 Method Not Allowed`. ▸ An `Mcp-Session-Id` header on a
		//   request: ignore it, and do not mint or echo session IDs. ▸ A `Last-Event-ID` header:
		//   ignore it; streams are not resumable."
		{
			ID:       "http26/no-session-minted",
			Title:    "no response mints an Mcp-Session-Id",
			Reqs:     []string{"HTTP-107"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true, SlowTool: true},
			Sends:    "server/discover, tools/list and a tools/call with progress",
			Expect:   "no response carries an Mcp-Session-Id header",
			Run:      noSessionMinted,
		},
		// HTTP-107 SHOULD: "A server that supports only this revision and receives such traffic
		//   from an older client SHOULD respond as follows: ▸ HTTP GET or DELETE to the MCP
		//   endpoint: respond with `405 Method Not Allowed`. ▸ An `Mcp-Session-Id` header on a
		//   request: ignore it, and do not mint or echo session IDs. ▸ A `Last-Event-ID` header:
		//   ignore it; streams are not resumable."
		{
			ID:       "http26/legacy-headers-ignored",
			Title:    "a legacy Mcp-Session-Id or Last-Event-ID on a modern request is ignored",
			Reqs:     []string{"HTTP-107"},
			Versions: []string{spec.V20260728},
			Needs:    probe.Needs{HTTP: true},
			Sends:    "tools/list with Mcp-Session-Id: mcpflight-legacy-session, then tools/list with Last-Event-ID: 1",
			Expect:   "each answered as without the header (a result), and no Mcp-Session-Id minted or echoed",
			Run:      headers2025Ignored,
		},
	}
}

// awaitAnswer waits for a request's answer within Env.Patience: the answer to
// a request nothing holds back. A deadline is recorded, not an error of
// the target; the caller judges the missing answer.
func awaitAnswer(ctx context.Context, e *probe.Env, call *peer.Call) (*jsonrpc.Message, error) {
	wctx, cancel, _ := e.WithPatience(ctx)
	defer cancel()
	return call.Await(wctx)
}

// headerEvent is the response-headers event of an HTTP exchange (the
// channel a request went out on), or false.
func headerEvent(e *probe.Env, channel string) (chrono.Event, bool) {
	for _, ev := range e.Log.Events() {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindHTTP && ev.Channel == channel && strings.HasPrefix(ev.Text, "HTTP ") {
			return ev, true
		}
	}
	return chrono.Event{}, false
}

// hasHeader reports whether the recorded header text of a response (the
// transport's "HTTP 200 Name: value; Name: value") names the header, and
// with which value.
func hasHeader(text, name string) (string, bool) {
	_, rest, _ := strings.Cut(text, " ")
	_, rest, _ = strings.Cut(rest, " ") // after "HTTP 200 "
	for _, part := range strings.Split(rest, "; ") {
		n, v, ok := strings.Cut(part, ": ")
		if ok && strings.EqualFold(n, name) {
			return v, true
		}
	}
	return "", false
}

// noMoreFor judges that nothing for the request arrived, on any stream,
// after the close at seq: no response with its ID, no progress with its
// token (CAN-56).
func noMoreFor(e *probe.Env, call *peer.Call, seq uint64) *verdict.Outcome {
	isResp := probe.ResponseTo(call.ID)
	isProg := func(chrono.Event) bool { return false }
	if call.Token.IsValid() {
		isProg = probe.ProgressFor(call.Token)
	}
	for _, ev := range e.Log.Since(seq) {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && (isResp(ev) || isProg(ev)) {
			o := e.Breaks("CAN-56", []string{"no further message for request " + call.ID.String() + " once its response stream was closed"},
				probe.Describe(ev), ev.Seq)
			return &o
		}
	}
	return nil
}

// streamCloseCancels closes the response stream of a slow call (after its
// first progress, or while it is silent) and judges whether the server
// took that for the cancellation of the call: through the control
// extension's operation state where the target has it, through the
// observer (docs/observer.md) where it has only that, and not at all
// otherwise, since the wire cannot tell a stopped handler from one still
// running.
func streamCloseCancels(ctx context.Context, e *probe.Env, silent bool) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	if e.Control == nil {
		// Needs.Witness skipped a run with neither the extension nor an
		// observer.
		return streamCloseObserved(ctx, e, h, silent)
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: !silent, Steps: 3})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if silent {
		wctx, cancel, d := e.WithPatience(ctx)
		_, err = op.Checkpoint(wctx, "start")
		cancel()
		if err != nil {
			return verdict.Errorf("the call did not reach its start gate within %v: %v", d, err)
		}
	} else if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	stream := h.StreamOf(op.Call.ID)
	rule := "CAN-55"
	if stream == "" {
		rule = "CAN-43" // no SSE stream yet: a disconnect before the response headers
	}
	if err := e.S.Cancel(ctx, op.Call, ""); err != nil {
		return verdict.Errorf("closing the response stream: %v", err)
	}
	cseq := op.Call.CancelSeq
	wctx, cancel, d := e.WithPatience(ctx)
	_, err = op.Checkpoint(wctx, "disconnected")
	cancel()
	if err != nil && ctx.Err() == nil {
		e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("the server did not reach a/disconnected within %v of the close", d))
	}
	st, _, err := op.OperationState(ctx)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	what := "its response stream"
	if stream == "" {
		what = "the exchange (before any response headers)"
	}
	if st.State != "cancelled" {
		return e.Breaks(rule, []string{"the server treats the close of " + what + " as the cancellation of the call"},
			fmt.Sprintf("the server reports operation \"a\" %s after the client closed %s", st.State, what), cseq)
	}
	if _, err := op.Settle(ctx); err != nil {
		return e.Broke(verdict.Req("CAN-56").Clause("SHOULD"), []string{"the cancelled call stops as soon as practical (its end checkpoint is reached)"},
			fmt.Sprintf("operation \"a\" was cancelled but had not ended %v later: %v", e.Patience(), err), cseq)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := noMoreFor(e, op.Call, cseq); o != nil {
		return *o
	}
	return verdict.Passf("closing %s cancelled the call: the server reports it cancelled and ended, and nothing more came for it", what)
}

// streamCloseObserved is streamCloseCancels on a target with an observer
// and without the control extension: read the counts, start the call and
// bring it to its first progress (or see it started), close its stream,
// watch the grace window, read the counts again. The counts are
// server-wide: another case running against the same server at the same
// time changes them (docs/observer.md asks for one case at a time).
func streamCloseObserved(ctx context.Context, e *probe.Env, h *transport.HTTP, silent bool) verdict.Outcome {
	before, err := e.ReadObserver(ctx)
	if err != nil {
		return verdict.Errorf("the observer read before the call failed: %s", chrono.Sanitize(err.Error(), false))
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: !silent})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if silent {
		if _, err := e.AwaitHandlerStarted(ctx, before); err != nil {
			return verdict.Errorf("%s", chrono.Sanitize(err.Error(), false))
		}
	} else {
		wctx, cancel, _ := e.WithPatience(ctx)
		err := op.AtStep(wctx, 1)
		cancel()
		if err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	if op.Call.State() != peer.StatePending {
		return verdict.Errorf("the call was answered before the client could close its stream (the profile's slow tool is too fast): state %s", op.Call.State())
	}
	stream := h.StreamOf(op.Call.ID)
	rule := "CAN-55"
	what := "its response stream"
	if stream == "" {
		rule, what = "CAN-43", "the exchange (before any response headers)"
	}
	if err := e.S.Cancel(ctx, op.Call, ""); err != nil {
		return verdict.Errorf("closing the response stream: %v", err)
	}
	cseq := op.Call.CancelSeq
	if err := e.Observe(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	end, err := e.ObserveHandlerEnd(ctx, op, before, fmt.Sprintf("after the close, the grace window of %v", e.Grace))
	if err != nil {
		return verdict.Errorf("the observer read after the close failed: %s", chrono.Sanitize(err.Error(), false))
	}
	seen := end.Seen
	stops := []string{"the server treats the close of " + what + " as the cancellation of the call: the handler stops"}
	switch {
	case end.Started < 1:
		return verdict.Errorf("the observer never saw the call start (%s): its profile entry names the wrong tool or counts other handlers", seen)
	case end.Completed >= 1:
		return e.Breaks(rule, stops, "the handler ran to completion after the client closed "+what+" ("+seen+")", cseq)
	case end.Cancelled < 1:
		return e.Breaks(rule, stops, "the handler was still running after the time its remaining steps need, so the close was not taken for a cancellation ("+seen+")", cseq)
	}
	if o := noMoreFor(e, op.Call, cseq); o != nil {
		return *o
	}
	return verdict.Passf("closing %s cancelled the call: %s; nothing more came for it", what, seen)
}

// runSlowToEnd runs a slow call with progress to its end and returns it
// with the stream that carried it ("" for a JSON answer).
func runSlowToEnd(ctx context.Context, e *probe.Env, h *transport.HTTP) (*probe.Op, string, *verdict.Outcome) {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
	if err != nil {
		o := verdict.Errorf("%v", err)
		return nil, "", &o
	}
	resp, err := e.AwaitResult(ctx, op)
	if err != nil || resp == nil {
		o := verdict.Errorf("no answer to the call: %v", err)
		return nil, "", &o
	}
	return op, h.StreamOf(op.Call.ID), nil
}

func responseEndsStream(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	op, stream, o := runSlowToEnd(ctx, e, h)
	if o != nil {
		return *o
	}
	if stream == "" {
		return verdict.Infof("the server answered the call with a JSON body: no stream to end (HTTP-88 allows both)")
	}
	_, rseq := op.Call.Response()
	wctx, cancel, d := e.WithPatience(ctx)
	defer cancel()
	select {
	case <-h.StreamDone(stream):
		if h.StreamStalled(stream) {
			// The harness's stall bound closed it, not the server.
			return e.Breaks("HTTP-91", []string{"the response ends the SSE stream " + stream},
				fmt.Sprintf("%s stayed open after the response until the harness's stall bound closed it", stream), rseq)
		}
	case <-wctx.Done():
		if ctx.Err() != nil {
			return verdict.Errorf("%v", ctx.Err())
		}
		return e.Breaks("HTTP-91", []string{"the response ends the SSE stream " + stream},
			fmt.Sprintf("%s stayed open %v after the response", stream, d), rseq)
	}
	return verdict.Passf("%s ended after the response", stream)
}

func sseNoEventIDs(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	_, stream, o := runSlowToEnd(ctx, e, h)
	if o != nil {
		return *o
	}
	if stream == "" {
		return verdict.Infof("the server answered the call with a JSON body: no SSE events to read (HTTP-88 allows both)")
	}
	<-probe.StreamDoneOr(ctx, h, stream, e)
	evs := h.Events(stream)
	for _, ev := range evs {
		if ev.HasID {
			return e.Breaks("HTTP-93", []string{"no event IDs (streams are not resumable with Last-Event-ID)"},
				fmt.Sprintf("an event with id %q on %s", chrono.Sanitize(ev.ID, false), stream), ev.Seq)
		}
	}
	return verdict.Passf("%d events on %s, none with an ID", len(evs), stream)
}

func sseAccelBuffering(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	_, stream, o := runSlowToEnd(ctx, e, h)
	if o != nil {
		return *o
	}
	if stream == "" {
		return verdict.Infof("the server answered the call with a JSON body, not an SSE stream: no stream whose headers to read")
	}
	ev, ok := headerEvent(e, stream)
	if !ok {
		return verdict.Errorf("no response headers recorded for %s", stream)
	}
	if v, ok := hasHeader(ev.Text, "X-Accel-Buffering"); !ok || !strings.EqualFold(strings.TrimSpace(v), "no") {
		return e.Breaks("HTTP-92", []string{"X-Accel-Buffering: no on the SSE response"}, chrono.Sanitize(ev.Text, false), ev.Seq)
	}
	return verdict.Passf("the SSE response %s has X-Accel-Buffering: no", stream)
}

func cancelNotification202(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	body, err := jsonrpc.EncodeNotification(mcp.NotificationCancelled, map[string]any{"requestId": "mcpflight-never-sent", "reason": "probe"})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	seq := e.Log.Len() + 1
	resp, err := h.RawPOST(ctx, body, nil)
	if err != nil {
		return verdict.Errorf("POST: %v", err)
	}
	if resp.Status/100 == 4 {
		// A server that cannot accept the notification refuses it with an
		// HTTP error status, whatever body it gives (HTTP-87).
		return verdict.Infof("refused with HTTP %d: a server that cannot accept a notification returns an HTTP error status (HTTP-87; over 2026-07-28 HTTP closing the stream is the cancel, HTTP-99)", resp.Status)
	}
	if resp.Status != http.StatusAccepted || len(resp.Body) > 0 || len(resp.Events) > 0 {
		actual := fmt.Sprintf("HTTP %d with %d body bytes", resp.Status, len(resp.Body))
		if ev, ok := e.BodyAfter(seq); ok {
			return e.Breaks("HTTP-86", []string{"HTTP 202 Accepted with no body"}, actual+": "+chrono.Sanitize(string(ev.Raw), false), ev.Seq)
		}
		return e.Breaks("HTTP-86", []string{"HTTP 202 Accepted with no body"}, actual, seq)
	}
	return verdict.Passf("202 with no body (the notification is accepted; over 2026-07-28 HTTP closing the stream is the cancel, HTTP-99)")
}

// headerCase is one request of headerMismatch400 and the rule its
// acceptance breaks.
type headerCase struct {
	what    string
	method  string
	params  map[string]any
	headers http.Header
	rule    string
}

func headerMismatch400(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	args := e.Profile.Slow.CloneArgs()
	if e.Control != nil {
		args["key"], args["gated"], args["steps"] = "hdr", false, 1
	}
	checks := []headerCase{
		{"MCP-Protocol-Version 2025-11-25 while the envelope says " + spec.V20260728, mcp.MethodToolsList, map[string]any{},
			http.Header{mcp.HeaderProtocolVersion: {spec.V20251125}}, "HTTP-96"},
		{"Mcp-Method tools/list on a server/discover", mcp.MethodServerDiscover, map[string]any{},
			http.Header{mcp.HeaderMethod: {mcp.MethodToolsList}}, "HTTP-103"},
		{"Mcp-Name mcpflight-other-tool on a tools/call of " + e.Profile.Slow.Name, mcp.MethodToolsCall,
			map[string]any{"name": e.Profile.Slow.Name, "arguments": args}, http.Header{mcp.HeaderName: {"mcpflight-other-tool"}}, "HTTP-103"},
		{"no Mcp-Method header", mcp.MethodToolsList, map[string]any{}, http.Header{mcp.HeaderMethod: nil}, "HTTP-104"},
	}
	for _, c := range checks {
		call, err := e.S.Start(ctx, c.method, c.params, peer.WithHeaders(c.headers))
		if err != nil {
			return verdict.Errorf("sending %s: %v", c.method, err)
		}
		resp, err := awaitAnswer(ctx, e, call)
		if err != nil {
			return verdict.Errorf("%s with %s: no answer: %v", c.method, c.what, err)
		}
		_, rseq := call.Response()
		status := h.StatusOf(call.ID)
		expected := []string{"HTTP 400 and a JSON-RPC error -32020 (HeaderMismatch) for " + c.what}
		if resp.Error == nil {
			return e.Breaks(c.rule, expected, fmt.Sprintf("HTTP %d, served: a result for %s with %s", status, c.method, c.what), rseq)
		}
		var hm *peer.HeaderMismatchError
		if !errors.As(peer.Error2026(resp.Error), &hm) {
			return e.Breaks(c.rule, expected, fmt.Sprintf("HTTP %d with error %d %s", status, resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), rseq)
		}
		if status != http.StatusBadRequest {
			return e.Breaks("HTTP-104", expected, fmt.Sprintf("-32020 with HTTP %d for %s", status, c.what), rseq)
		}
	}
	return verdict.Passf("all %d requests with headers that do not mirror the body, or miss one, got 400 and -32020", len(checks))
}

func unknownMethod404(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	call, err := e.S.Start(ctx, "mcpflight/no-such-method", map[string]any{})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := awaitAnswer(ctx, e, call)
	if err != nil {
		return verdict.Errorf("no answer to an unknown method: %v", err)
	}
	_, rseq := call.Response()
	status := h.StatusOf(call.ID)
	expected := []string{"HTTP 404 and a JSON-RPC error -32601 (Method not found)"}
	switch {
	case resp.Error == nil:
		return e.Breaks("HTTP-81", expected, fmt.Sprintf("HTTP %d with a result", status), rseq)
	case resp.Error.Code != jsonrpc.CodeMethodNotFound || status != http.StatusNotFound:
		return e.Breaks("HTTP-81", expected, fmt.Sprintf("HTTP %d with error %d %s", status, resp.Error.Code, chrono.Sanitize(resp.Error.Message, false)), rseq)
	}
	return verdict.Passf("404 with -32601 for an unknown method")
}

func getDelete405(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	headers := http.Header{mcp.HeaderProtocolVersion: {spec.V20260728}}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		seq := e.Log.Len() + 1
		rctx, cancel, _ := e.WithPatience(ctx)
		resp, err := h.Raw(rctx, method, nil, headers)
		cancel()
		if err != nil && rctx.Err() != nil && ctx.Err() == nil {
			// A GET answered with an open event stream is read until
			// it ends: a stream that stays open is a GET stream served.
			return e.Broke(verdict.Req("HTTP-107").Clause("SHOULD"), []string{method + " answered 405 Method Not Allowed (the revision has no GET stream and no session)"},
				method+" opened a stream that stayed open", seq)
		}
		if err != nil {
			return verdict.Errorf("%s: %v", method, err)
		}
		if resp.Status != http.StatusMethodNotAllowed {
			return e.Broke(verdict.Req("HTTP-107").Clause("SHOULD"), []string{method + " answered 405 Method Not Allowed (the revision has no GET stream and no session)"},
				fmt.Sprintf("%s answered HTTP %d", method, resp.Status), seq)
		}
	}
	return verdict.Passf("GET and DELETE answered 405")
}

// noSessionIn judges the response headers recorded since from: none may
// carry an Mcp-Session-Id (HTTP-107).
func noSessionIn(e *probe.Env, from uint64) (int, *verdict.Outcome) {
	n := 0
	for _, ev := range e.Log.Since(from) {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindHTTP || !strings.HasPrefix(ev.Text, "HTTP ") {
			continue
		}
		n++
		if v, ok := hasHeader(ev.Text, mcp.HeaderSessionID); ok {
			o := e.Broke(verdict.Req("HTTP-107").Clause("SHOULD"), []string{"no Mcp-Session-Id minted or echoed"},
				fmt.Sprintf("a response on %s carries Mcp-Session-Id %q", ev.Channel, chrono.Sanitize(v, false)), ev.Seq)
			return n, &o
		}
	}
	return n, nil
}

func noSessionMinted(ctx context.Context, e *probe.Env) verdict.Outcome {
	h, o := e.HTTPConn()
	if o != nil {
		return *o
	}
	from := e.Log.Len()
	if _, err := e.S.Discover(ctx); err != nil {
		return verdict.Errorf("server/discover: %v", err)
	}
	if err := e.S.Request(ctx, mcp.MethodToolsList, map[string]any{}, nil); err != nil {
		return verdict.Errorf("tools/list: %v", err)
	}
	if _, _, o := runSlowToEnd(ctx, e, h); o != nil {
		return *o
	}
	n, o := noSessionIn(e, from)
	if o != nil {
		return *o
	}
	return verdict.Passf("%d responses, none with an Mcp-Session-Id", n)
}

func headers2025Ignored(ctx context.Context, e *probe.Env) verdict.Outcome {
	if _, o := e.HTTPConn(); o != nil {
		return *o
	}
	from := e.Log.Len()
	for _, hdr := range []http.Header{
		{mcp.HeaderSessionID: {"mcpflight-legacy-session"}},
		{mcp.HeaderLastEventID: {"1"}},
	} {
		var name string
		for n := range hdr {
			name = n
		}
		seq := e.Log.Len() + 1
		err := e.S.Request(ctx, mcp.MethodToolsList, map[string]any{}, nil, peer.WithHeaders(hdr))
		if err != nil {
			return e.Broke(verdict.Req("HTTP-107").Clause("SHOULD"), []string{"tools/list with a legacy " + name + " header answered as without it (the header ignored)"},
				"refused: "+chrono.Sanitize(err.Error(), false), seq)
		}
	}
	if _, o := noSessionIn(e, from); o != nil {
		return *o
	}
	return verdict.Passf("requests with Mcp-Session-Id and with Last-Event-ID were answered as without them, and no session ID came back")
}
