package refserver

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// Faults of robustness to bad input: what a receiver owes a
// frame it cannot read, a request that reuses an ID still in flight, and
// a request whose required parameter is missing, null or ill-typed. Each
// breaks one rule that a robust/ case checks.
const (
	// FaultDieOnMalformedInput: a frame that is no JSON-RPC message (not
	// JSON, a truncated object, an empty batch, a bare number or string,
	// a wrong "jsonrpc" version) stops the server: Serve returns with an
	// error, and over HTTP the endpoint answers it and aborts every later
	// request (RPC-2).
	FaultDieOnMalformedInput Fault = "die-on-malformed-input"
	// FaultParseErrorWithID: a frame that is not JSON is answered -32700
	// with the id 0, where the id could not be read and must be null
	// (RPC-11).
	FaultParseErrorWithID Fault = "parse-error-with-id"
	// FaultTruncatedSwallowsNext: after a truncated JSON object the next
	// line is taken for the rest of it and dropped unanswered, as a
	// reader that joins lines until the object closes would (RPC-2).
	FaultTruncatedSwallowsNext Fault = "truncated-swallows-next"
	// FaultDuplicateIDDropsFirst: a request that reuses the ID of one
	// still in flight is answered, and the first request's answer is
	// never sent (RPC-2: the first request was valid and is owed one).
	FaultDuplicateIDDropsFirst Fault = "duplicate-id-drops-first"
	// FaultMissingTaskIDInternalError: tasks/get, tasks/result and
	// tasks/cancel without a string taskId are answered -32603 instead of
	// -32602 (TSK-68).
	FaultMissingTaskIDInternalError Fault = "missing-task-id-internal-error"
	// FaultIllTypedCursorAccepted: tasks/list with a cursor that is not a
	// string answers the first page instead of -32602 (TSK-69).
	FaultIllTypedCursorAccepted Fault = "ill-typed-cursor-accepted"
	// FaultMissingLevelInternalError: logging/setLevel without a string
	// level is answered -32603 instead of -32602 (LOG-6).
	FaultMissingLevelInternalError Fault = "missing-level-internal-error"
	// FaultMuteAfterNamelessCall: a tools/call without a string name is
	// never answered, and neither is anything after it: the session hangs
	// (RPC-2).
	FaultMuteAfterNamelessCall Fault = "mute-after-nameless-call"
	// FaultMuteAfterIllTypedToolsCursor: a tools/list whose cursor is
	// neither a string nor null is never answered, and neither is
	// anything after it: the session hangs (RPC-2).
	FaultMuteAfterIllTypedToolsCursor Fault = "mute-after-ill-typed-tools-cursor"
)

// robustState is a session's state under the robustness faults.
type robustState struct {
	mu sync.Mutex
	// swallow: the next frame is dropped (FaultTruncatedSwallowsNext).
	swallow bool
	// dropAfter maps an ID key to the number of answers still allowed
	// for it; answers past it are dropped (FaultDuplicateIDDropsFirst).
	dropAfter map[string]int
	// mute: no answer is written any more (FaultMuteAfterNamelessCall).
	mute bool
}

// robustMalformed is called for a frame that did not decode, before it is
// answered: it returns the error that ends the session under
// FaultDieOnMalformedInput, and arms FaultTruncatedSwallowsNext after a
// truncated object.
func (ss *session) robustMalformed(raw []byte, class string) error {
	if ss.has(FaultDieOnMalformedInput) {
		ss.logf("malformed input: stopping (fault %s)", FaultDieOnMalformedInput)
		return ErrCrash
	}
	if class == string(jsonrpc.ClassParse) && len(raw) > 0 && raw[0] == '{' && ss.has(FaultTruncatedSwallowsNext) {
		ss.robust.mu.Lock()
		ss.robust.swallow = true
		ss.robust.mu.Unlock()
	}
	return nil
}

// robustSwallow reports whether the frame is to be dropped unread
// (FaultTruncatedSwallowsNext). Only that fault arms it (robustMalformed),
// so it asks about no fault itself: a session that never sent a truncated
// object never meets the fault (refserver.Options.FaultQueried).
func (ss *session) robustSwallow() bool {
	ss.robust.mu.Lock()
	defer ss.robust.mu.Unlock()
	if !ss.robust.swallow {
		return false
	}
	ss.robust.swallow = false
	ss.logf("frame taken for the rest of the truncated one and dropped (fault %s)", FaultTruncatedSwallowsNext)
	return true
}

// parseErrorID is the id a parse error is answered with: null, or 0
// under FaultParseErrorWithID.
func parseErrorID(has func(Fault) bool) jsonrpc.ID {
	if has(FaultParseErrorWithID) {
		return jsonrpc.IntID(0)
	}
	return jsonrpc.ID{}
}

// robustRequest is called for every 2025-11-25 request before it is
// routed; it returns true when a fault answered it (or chose not to).
func (ss *session) robustRequest(id jsonrpc.ID, method string, params map[string]json.RawMessage) bool {
	if ss.inFlight(id) {
		if !ss.has(FaultDuplicateIDDropsFirst) {
			ss.spawnReq(id, func() { ss.replyError(id, codeInvalidRequest, "Invalid Request: "+duplicateIDMessage, nil) })
			return true
		}
		ss.logf("request id %s reused while in flight: only one answer will be sent (fault %s)", id, FaultDuplicateIDDropsFirst)
		ss.robust.mu.Lock()
		if ss.robust.dropAfter == nil {
			ss.robust.dropAfter = map[string]int{}
		}
		ss.robust.dropAfter[id.Key()] = 1
		ss.robust.mu.Unlock()
	}
	isString := func(name string) bool {
		var s string
		raw, ok := params[name]
		return ok && string(raw) != "null" && json.Unmarshal(raw, &s) == nil
	}
	switch {
	// Each fault is asked about last, once the request is one it acts on:
	// a session that never sends such a request never meets the fault
	// (Options.FaultQueried).
	case (method == mcp.MethodTasksGet || method == mcp.MethodTasksResult || method == mcp.MethodTasksCancel) &&
		!ss.srv.opts.NoTasks && !isString("taskId") && ss.has(FaultMissingTaskIDInternalError):
		ss.spawnReq(id, func() { ss.replyError(id, codeInternalError, "Internal error", nil) })
		return true
	case method == mcp.MethodTasksList && illTypedCursor(params) && ss.has(FaultIllTypedCursorAccepted):
		delete(params, "cursor")
	case method == mcp.MethodLoggingSetLevel && !isString("level") && ss.has(FaultMissingLevelInternalError):
		ss.spawnReq(id, func() { ss.replyError(id, codeInternalError, "Internal error", nil) })
		return true
	case method == mcp.MethodToolsCall && !isString("name") && ss.has(FaultMuteAfterNamelessCall):
		ss.logf("tools/call without a name: the session stops answering (fault %s)", FaultMuteAfterNamelessCall)
		ss.robust.mu.Lock()
		ss.robust.mute = true
		ss.robust.mu.Unlock()
		return true
	case method == mcp.MethodToolsList && illTypedCursor(params) && ss.has(FaultMuteAfterIllTypedToolsCursor):
		ss.logf("tools/list with an ill-typed cursor: the session stops answering (fault %s)", FaultMuteAfterIllTypedToolsCursor)
		ss.robust.mu.Lock()
		ss.robust.mute = true
		ss.robust.mu.Unlock()
		return true
	}
	return false
}

// illTypedCursor reports whether params carry a cursor that is neither a
// string nor null (PaginatedRequestParams.cursor is a string).
func illTypedCursor(params map[string]json.RawMessage) bool {
	raw, ok := params["cursor"]
	if !ok || string(raw) == "null" {
		return false
	}
	var s string
	return json.Unmarshal(raw, &s) != nil
}

// invalidCursor is the answer to a list request whose cursor is ill-typed
// (-32602, as JSON-RPC 2.0 names for invalid method parameters), or nil.
func invalidCursor(params map[string]json.RawMessage) *rpcError {
	if illTypedCursor(params) {
		return invalidParams("Invalid params: cursor must be a string")
	}
	return nil
}

// duplicateIDMessage is the reason a request reusing an in-flight id is
// refused: answering it would leave two answers with one id, which the
// client cannot tell apart (the sender broke RPC-6; the first request is
// still owed its answer).
const duplicateIDMessage = "the id is already in flight"

// inFlight reports whether a request with id is being handled.
func (ss *session) inFlight(id jsonrpc.ID) bool {
	ss.ansMu.Lock()
	defer ss.ansMu.Unlock()
	return ss.handlers[id.Key()] > 0
}

// duplicateRefusal is the refusal of a POSTed request whose id is in
// flight, before it opens a stream that would take the first request's
// route (nil under FaultDuplicateIDDropsFirst, which serves it).
func (hs *httpSession) duplicateRefusal(id jsonrpc.ID) *rpcError {
	if !hs.ss.inFlight(id) || hs.h.has(FaultDuplicateIDDropsFirst) {
		return nil
	}
	return &rpcError{code: codeInvalidRequest, message: "Invalid Request: " + duplicateIDMessage}
}

// robustDrop reports whether an answer to id is to be dropped. Only the
// faults that drop answers set what it reads (robustRequest), so it asks
// about none itself: an answer of a session that never met them is never
// dropped (Options.FaultQueried).
func (ss *session) robustDrop(id jsonrpc.ID) bool {
	ss.robust.mu.Lock()
	defer ss.robust.mu.Unlock()
	if ss.robust.mute {
		return true
	}
	n, ok := ss.robust.dropAfter[id.Key()]
	if !ok {
		return false
	}
	if n > 0 {
		ss.robust.dropAfter[id.Key()] = n - 1
		return false
	}
	ss.logf("answer to %s dropped (fault %s)", id, FaultDuplicateIDDropsFirst)
	return true
}

// robustHTTP serves the endpoint's side of FaultDieOnMalformedInput: once
// a POST body did not decode, every later request is aborted. It returns
// true when it handled the request. Only the fault kills the endpoint
// (malformedPOST), so it asks about no fault itself: an endpoint that was
// never sent a malformed body never meets the fault (Options.FaultQueried).
func (h *HTTPHandler) robustHTTP(w http.ResponseWriter) bool {
	if !h.dead.Load() {
		return false
	}
	h.srv.opts.logf("http: the endpoint is dead (fault %s): aborting the request", FaultDieOnMalformedInput)
	panic(http.ErrAbortHandler)
}

// malformedPOST answers a POST body that did not decode: 400 with a
// JSON-RPC error (HTTP-12, HTTP-13), whose id is null unless
// FaultParseErrorWithID. Under FaultDieOnMalformedInput the endpoint dies
// once this answer is written, as a process that exits after writing it
// would: every later request is aborted.
func (h *HTTPHandler) malformedPOST(w http.ResponseWriter, code int, message string) {
	if h.has(FaultDieOnMalformedInput) {
		h.srv.opts.logf("http: malformed input: the endpoint dies after this answer (fault %s)", FaultDieOnMalformedInput)
		defer h.dead.Store(true)
	}
	id := jsonrpc.ID{}
	if code == codeParseError {
		id = parseErrorID(h.has)
	}
	frame, _ := jsonrpc.EncodeError(id, &jsonrpc.Error{Code: code, Message: message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(frame)
}
