package refserver

// Faults of the 2026-07-28 behaviour (server2026.go, revisions.go,
// tasksext.go, listen.go, http2026.go). Each breaks one rule of that
// revision or of the tasks extension and changes nothing under
// 2025-11-25; its row in the fault table (faulttable.go) says which
// requirements it breaks and on which transport it shows.
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
	// FaultStickyVersion: once a tools request of the connection was
	// served under 2026-07-28, a later request whose protocolVersion
	// the server does not support is served under the earlier one
	// instead of refused with -32022 (RPC-57), as the TypeScript SDK
	// v2's serveStdio does on a connection its first request pinned.
	FaultStickyVersion Fault = "sticky-version"
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
