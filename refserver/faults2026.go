package refserver

// Faults of the 2026-07-28 behaviour (modern.go, era.go, xtasks.go,
// listen.go, http2026.go). Each breaks one rule of that revision or of
// the tasks extension and changes nothing under 2025-11-25; faults2026
// says which requirements it breaks and on which transport it shows.
const (
	// FaultNoResultType: 2026-07-28 results carry no resultType (RPC-40).
	FaultNoResultType Fault = "no-resulttype"
	// FaultNoServerInfo: 2026-07-28 results carry no
	// io.modelcontextprotocol/serverInfo in _meta, server/discover's
	// included (RPC-56, LIF-51).
	FaultNoServerInfo Fault = "no-server-info"
	// FaultDiscoverMissingVersion: server/discover lists only 2026-07-28
	// while initialize still agrees to 2025-11-25 (LIF-42, LIF-47).
	FaultDiscoverMissingVersion Fault = "discover-missing-version"
	// FaultWrongVersionError: an unsupported protocol version in the
	// envelope gets -32602 without data instead of -32022 with
	// data.supported and data.requested (LIF-40, HTTP-97).
	FaultWrongVersionError Fault = "wrong-version-error"
	// FaultEnvelopeNotChecked: a 2026-07-28 request without
	// io.modelcontextprotocol/clientCapabilities is served instead of
	// refused with -32602 (RPC-51, RPC-52, RPC-53).
	FaultEnvelopeNotChecked Fault = "envelope-not-checked"
	// FaultStickyCapabilities: once a request declared the tasks
	// extension, later requests of the same scope are served as if they
	// had (RPC-57, RPC-58, TSX-2).
	FaultStickyCapabilities Fault = "sticky-capabilities"
	// FaultTaskForUndeclaredClient: a tools/call that did not declare the
	// tasks extension still gets a CreateTaskResult (TSX-2, TSX-5, LIF-45).
	FaultTaskForUndeclaredClient Fault = "task-for-undeclared-client"
	// FaultTaskMethodsWithoutCapability: tasks/get, tasks/update and
	// tasks/cancel are served to a request that did not declare the
	// extension, instead of -32021 (TSX-56, RPC-55).
	FaultTaskMethodsWithoutCapability Fault = "task-methods-without-capability"
	// FaultHeaderMismatchAccepted: over HTTP, a missing MCP-Protocol-Version,
	// Mcp-Method or Mcp-Name header, or one that does not match the body,
	// is served instead of refused with 400 and -32020 (HTTP-96, HTTP-103,
	// HTTP-104).
	FaultHeaderMismatchAccepted Fault = "header-mismatch-accepted"
	// FaultPingOn2026: ping and logging/setLevel are answered on a
	// 2026-07-28 request instead of -32601 (PNG-40, HTTP-81).
	FaultPingOn2026 Fault = "ping-on-2026"
	// FaultTasksResultOn2026: tasks/result and tasks/list are served on a
	// 2026-07-28 request instead of -32601 (TSX-65).
	FaultTasksResultOn2026 Fault = "tasks-result-on-2026"
	// FaultUnknownMethod200: over HTTP, an unknown 2026-07-28 method gets
	// 200 with the -32601 error instead of 404 (HTTP-81).
	FaultUnknownMethod200 Fault = "unknown-method-200"
	// FaultStreamCloseNotCancel: over HTTP, closing a 2026-07-28 request's
	// response stream does not cancel the request (CAN-43, CAN-55).
	FaultStreamCloseNotCancel Fault = "stream-close-not-cancel"
	// FaultLogWithoutLevel: notifications/message is sent for a request
	// without io.modelcontextprotocol/logLevel (LOG-41, LOG-42).
	FaultLogWithoutLevel Fault = "log-without-level"
	// FaultLogBelowLevel: messages below the request's logLevel are sent
	// too (LOG-43).
	FaultLogBelowLevel Fault = "log-below-level"
	// FaultAcceptUnknownLogLevel: an unknown logLevel is taken for debug
	// and the request runs, instead of -32602 for the whole request
	// (LOG-45).
	FaultAcceptUnknownLogLevel Fault = "accept-unknown-log-level"
	// FaultListenLogs: a subscriptions/listen request with a logLevel gets
	// a notifications/message on its stream (LOG-44).
	FaultListenLogs Fault = "listen-logs"
	// FaultListenNoAck: a subscription never gets its
	// notifications/subscriptions/acknowledged (SUB-2).
	FaultListenNoAck Fault = "listen-no-ack"
	// FaultListenNoSubscriptionID: notifications on a subscription lack
	// io.modelcontextprotocol/subscriptionId in _meta (SUB-5).
	FaultListenNoSubscriptionID Fault = "listen-no-subscription-id"
	// FaultListenUnrequested: notifications/tasks of every task of the
	// scope go to every subscription, asked for or not (SUB-1).
	FaultListenUnrequested Fault = "listen-unrequested"
	// FaultTeardownSilent: a subscription the server ends gets neither
	// the listen result nor notifications/cancelled; its stream just ends
	// (SUB-6, SUB-7, CAN-41).
	FaultTeardownSilent Fault = "teardown-silent"
	// FaultServerSendsCancelled: when the client cancels a 2026-07-28
	// request, the server sends notifications/cancelled for it back
	// (CAN-42, CAN-52). Over HTTP the request's stream is gone, so it
	// shows on stdio.
	FaultServerSendsCancelled Fault = "server-sends-cancelled"
	// FaultRequestOnStdout: a 2026-07-28 tools/call makes the server write
	// a JSON-RPC request (roots/list, a 2025-11-25 server-to-client
	// request) before its answer, where a 2026-07-28 server asks for
	// input with an input_required result (STD-43). It is a stdio rule.
	FaultRequestOnStdout Fault = "request-on-stdout"
	// FaultProgressCrossesStreams: over 2026-07-28 HTTP, a slow call's
	// progress goes on the response stream of another running slow call
	// of the same scope (another POST), not its own (LOG-46).
	FaultProgressCrossesStreams Fault = "progress-crosses-streams"
	// FaultLogCrossesStreams: over 2026-07-28 HTTP, a slow call's step log
	// messages go on the response stream of another running slow call of
	// the same scope, not its own (LOG-46, which binds notifications/message
	// as it binds progress).
	FaultLogCrossesStreams Fault = "log-crosses-streams"
	// FaultTaskCancelErrorOnTerminal: tasks/cancel of a terminal task gets
	// -32602, as in 2025-11-25, instead of the empty acknowledgement
	// (TSX-44, TSX-40; ambiguity A-17).
	FaultTaskCancelErrorOnTerminal Fault = "task-cancel-error-on-terminal"
	// FaultCreateBeforeDurable: the CreateTaskResult is written before the
	// task can be found; tasks/get answers -32602 until the worker starts
	// (KEY/start released) (TSX-16, TSX-17).
	FaultCreateBeforeDurable Fault = "create-before-durable"
	// FaultIsErrorTaskFailed: a task whose tool result has isError ends
	// failed instead of completed (TSX-14, TSX-59, TSX-61).
	FaultIsErrorTaskFailed Fault = "iserror-task-failed"
	// FaultTaskResultNotInlined: tasks/get of a completed task has no
	// result, of a failed one no error (TSX-27, TSX-29, TSX-58, TSX-60).
	FaultTaskResultNotInlined Fault = "task-result-not-inlined"
	// FaultGetTaskResultTypeTask: tasks/get answers resultType "task"
	// instead of "complete" (TSX-9, TSX-30; ambiguity A-13).
	FaultGetTaskResultTypeTask Fault = "task-get-resulttype-task"
	// FaultTaskUpdateRejectsUnknownKey: tasks/update with a key that is not
	// outstanding gets -32602 instead of an acknowledgement that ignores
	// it (TSX-42).
	FaultTaskUpdateRejectsUnknownKey Fault = "task-update-rejects-unknown-key"
	// FaultNoAccelBuffering: 2026-07-28 SSE responses lack
	// X-Accel-Buffering: no (HTTP-92).
	FaultNoAccelBuffering Fault = "no-accel-buffering"
	// FaultEventIDsOn2026: 2026-07-28 SSE events carry event IDs, which
	// invite a resumption the revision removed (HTTP-93).
	FaultEventIDsOn2026 Fault = "event-ids-on-2026"
	// FaultSessionOn2026: 2026-07-28 responses mint an Mcp-Session-Id
	// (HTTP-107).
	FaultSessionOn2026 Fault = "session-on-2026"
	// FaultGetOn2026: a 2026-07-28 GET opens an empty SSE stream and a
	// DELETE gets 200, instead of 405 (HTTP-107, HTTP-80).
	FaultGetOn2026 Fault = "get-on-2026"
	// FaultStreamStaysOpen: a 2026-07-28 SSE response stays open after the
	// response until the client closes it (HTTP-91).
	FaultStreamStaysOpen Fault = "stream-stays-open"
	// FaultInitializeErrorWithoutVersions: a server without the legacy era
	// answers initialize with a bare -32601 that names no version (LIF-49).
	FaultInitializeErrorWithoutVersions Fault = "initialize-error-without-versions"
	// FaultExtTaskIDInternalError: tasks/get, tasks/update and
	// tasks/cancel of the tasks extension without a string taskId get
	// -32603 instead of -32602 (TSX-53, TSX-54).
	FaultExtTaskIDInternalError Fault = "ext-task-id-internal-error"
	// FaultListenBadFilterCrash: a subscriptions/listen whose
	// notifications filter is missing or not an object stops the server
	// (RPC-2). It shows on stdio, where the server is the connection's
	// process.
	FaultListenBadFilterCrash Fault = "listen-bad-filter-crash"
)

// Transports a fault shows on.
const (
	OnAny   = "any"
	OnStdio = "stdio"
	OnHTTP  = "http"
)

// faultRow is one 2026-07-28 fault: the requirements it breaks, the
// transport it shows on, and what it does.
type faultRow struct {
	fault       Fault
	reqs        []string
	transport   string
	description string
}

// faults2026 is the table of the 2026-07-28 faults, in a stable order.
var faults2026 = []faultRow{
	{FaultNoResultType, []string{"RPC-40"}, OnAny, "2026-07-28 results carry no resultType (RPC-40)"},
	{FaultNoServerInfo, []string{"RPC-56", "LIF-51"}, OnAny, "2026-07-28 results carry no serverInfo in _meta, server/discover's included (RPC-56, LIF-51)"},
	{FaultDiscoverMissingVersion, []string{"LIF-42", "LIF-47"}, OnAny, "server/discover lists only 2026-07-28 while initialize still agrees to 2025-11-25 (LIF-42, LIF-47)"},
	{FaultWrongVersionError, []string{"LIF-40", "HTTP-97"}, OnAny, "an unsupported protocol version gets -32602 without data instead of -32022 with supported and requested (LIF-40, HTTP-97)"},
	{FaultEnvelopeNotChecked, []string{"RPC-51", "RPC-52", "RPC-53"}, OnAny, "a 2026-07-28 request without clientCapabilities is served instead of refused with -32602 (RPC-52)"},
	{FaultStickyCapabilities, []string{"RPC-57", "RPC-58", "TSX-2"}, OnAny, "a tasks extension declared once sticks: later requests that do not declare it get tasks (RPC-57, TSX-2)"},
	{FaultTaskForUndeclaredClient, []string{"TSX-2", "TSX-5", "LIF-45"}, OnAny, "a tools/call that did not declare the tasks extension gets a CreateTaskResult (TSX-2, TSX-5)"},
	{FaultTaskMethodsWithoutCapability, []string{"TSX-56", "RPC-55"}, OnAny, "tasks/get, tasks/update and tasks/cancel are served without the extension declared, instead of -32021 (TSX-56)"},
	{FaultHeaderMismatchAccepted, []string{"HTTP-96", "HTTP-103", "HTTP-104"}, OnHTTP, "HTTP headers missing or not matching the body are served instead of 400 and -32020 (HTTP-96, HTTP-103)"},
	{FaultPingOn2026, []string{"PNG-40", "HTTP-81"}, OnAny, "ping and logging/setLevel are answered on a 2026-07-28 request instead of -32601 (PNG-40)"},
	{FaultTasksResultOn2026, []string{"TSX-65"}, OnAny, "tasks/result and tasks/list are served on a 2026-07-28 request instead of -32601 (TSX-65)"},
	{FaultUnknownMethod200, []string{"HTTP-81"}, OnHTTP, "an unknown 2026-07-28 method gets HTTP 200 with -32601 instead of 404 (HTTP-81)"},
	{FaultStreamCloseNotCancel, []string{"CAN-43", "CAN-55"}, OnHTTP, "closing a 2026-07-28 request's response stream does not cancel it (CAN-43, CAN-55)"},
	{FaultLogWithoutLevel, []string{"LOG-41", "LOG-42"}, OnAny, "notifications/message is sent for a request without logLevel (LOG-41, LOG-42)"},
	{FaultLogBelowLevel, []string{"LOG-43"}, OnAny, "messages below the request's logLevel are sent too (LOG-43)"},
	{FaultAcceptUnknownLogLevel, []string{"LOG-45"}, OnAny, "an unknown logLevel is taken for debug and the request runs, instead of -32602 (LOG-45)"},
	{FaultListenLogs, []string{"LOG-44"}, OnAny, "a subscriptions/listen request with a logLevel gets a notifications/message on its stream (LOG-44)"},
	{FaultListenNoAck, []string{"SUB-2"}, OnAny, "a subscription never gets notifications/subscriptions/acknowledged (SUB-2)"},
	{FaultListenNoSubscriptionID, []string{"SUB-5"}, OnAny, "notifications on a subscription lack io.modelcontextprotocol/subscriptionId (SUB-5)"},
	{FaultListenUnrequested, []string{"SUB-1"}, OnAny, "every task's notifications/tasks goes to every subscription, asked for or not (SUB-1)"},
	{FaultTeardownSilent, []string{"SUB-6", "SUB-7", "CAN-41"}, OnAny, "a subscription the server ends gets neither its result nor notifications/cancelled (SUB-6, SUB-7, CAN-41)"},
	{FaultServerSendsCancelled, []string{"CAN-42", "CAN-52"}, OnStdio, "a request the client cancelled gets a notifications/cancelled from the server (CAN-42, CAN-52)"},
	{FaultRequestOnStdout, []string{"STD-43"}, OnStdio, "a tools/call makes the server write a JSON-RPC request (roots/list) to stdout before its answer (STD-43)"},
	{FaultProgressCrossesStreams, []string{"LOG-46"}, OnHTTP, "a slow call's progress goes on the response stream of another running call (LOG-46)"},
	{FaultLogCrossesStreams, []string{"LOG-46"}, OnHTTP, "a slow call's log messages go on the response stream of another running call (LOG-46)"},
	{FaultTaskCancelErrorOnTerminal, []string{"TSX-44", "TSX-40"}, OnAny, "tasks/cancel of a terminal task gets -32602 instead of the empty acknowledgement (TSX-44)"},
	{FaultCreateBeforeDurable, []string{"TSX-16", "TSX-17"}, OnAny, "CreateTaskResult comes before tasks/get can find the task (TSX-16)"},
	{FaultIsErrorTaskFailed, []string{"TSX-14", "TSX-59", "TSX-61"}, OnAny, "a task whose tool result has isError ends failed instead of completed (TSX-14, TSX-59)"},
	{FaultTaskResultNotInlined, []string{"TSX-27", "TSX-29", "TSX-58", "TSX-60"}, OnAny, "tasks/get of a terminal task lacks its result or error (TSX-27, TSX-29)"},
	{FaultGetTaskResultTypeTask, []string{"TSX-9", "TSX-30"}, OnAny, `tasks/get answers resultType "task" instead of "complete" (TSX-9, TSX-30)`},
	{FaultTaskUpdateRejectsUnknownKey, []string{"TSX-42"}, OnAny, "tasks/update with a key that is not outstanding gets -32602 instead of an acknowledgement (TSX-42)"},
	{FaultNoAccelBuffering, []string{"HTTP-92"}, OnHTTP, "2026-07-28 SSE responses lack X-Accel-Buffering: no (HTTP-92)"},
	{FaultEventIDsOn2026, []string{"HTTP-93"}, OnHTTP, "2026-07-28 SSE events carry event IDs (HTTP-93)"},
	{FaultSessionOn2026, []string{"HTTP-107"}, OnHTTP, "2026-07-28 responses mint an Mcp-Session-Id (HTTP-107)"},
	{FaultGetOn2026, []string{"HTTP-107", "HTTP-80"}, OnHTTP, "a 2026-07-28 GET opens an SSE stream and a DELETE gets 200, instead of 405 (HTTP-107)"},
	{FaultStreamStaysOpen, []string{"HTTP-91"}, OnHTTP, "a 2026-07-28 SSE response stays open after the response (HTTP-91)"},
	{FaultInitializeErrorWithoutVersions, []string{"LIF-49"}, OnAny, "a server without the legacy era answers initialize with a bare -32601 naming no version (LIF-49)"},
	{FaultExtTaskIDInternalError, []string{"TSX-53", "TSX-54"}, OnAny, "tasks/get, tasks/update and tasks/cancel without a string taskId get -32603 instead of -32602 (TSX-53, TSX-54)"},
	{FaultListenBadFilterCrash, []string{"RPC-2"}, OnStdio, "a subscriptions/listen whose notifications filter is missing or not an object stops the server (RPC-2)"},
}

// Faults2026 returns the 2026-07-28 faults, in a stable order.
func Faults2026() []Fault {
	out := make([]Fault, len(faults2026))
	for i, r := range faults2026 {
		out[i] = r.fault
	}
	return out
}

// fault2026Row returns f's row, or false.
func fault2026Row(f Fault) (faultRow, bool) {
	for _, r := range faults2026 {
		if r.fault == f {
			return r, true
		}
	}
	return faultRow{}, false
}

// fault2026Description describes a 2026-07-28 fault, or returns "".
func fault2026Description(f Fault) string {
	r, _ := fault2026Row(f)
	return r.description
}

// Fault2026Requirements returns the requirement IDs a 2026-07-28 fault
// breaks and the transport it shows on ("any", "stdio" or "http"); ok is
// false for any other fault.
func Fault2026Requirements(f Fault) (reqs []string, transport string, ok bool) {
	r, ok := fault2026Row(f)
	return append([]string(nil), r.reqs...), r.transport, ok
}
