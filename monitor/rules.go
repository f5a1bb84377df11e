// Package monitor is the passive rule engine: it reads a conversation's
// chronology as it happens (or from a saved capture), keeps what is in
// flight in each direction (requests, progress tokens, cancels, tasks,
// log levels), and reports each rule the conversation breaks, with the
// requirement it breaks in the words of the revision the session speaks
// and the severity the registry gives that requirement.
//
// It acts on nothing: whatever the wire does not show, it does not judge,
// and says so (a request still open when the session ends is reported as
// open, not as a violation). It judges either side: the client (the
// frames the chronology records as Out) and the server (In), and in
// 2025-11-25 the server's own requests to the client the same way. The
// checker's own sessions judge only the server (Options.Sides).
//
// Memory is bounded by what is in flight: a request is forgotten once it
// has been answered and its window has passed, a task once it has been
// terminal for a while, and the histories a rule needs (the IDs a session
// used, RPC-6) are bounded sets.
package monitor

import (
	"slices"

	"github.com/mcpflight/mcpflight/spec"
)

// Side is who broke a rule: the client, which sends the frames the
// chronology records as Out, or the server.
type Side string

// The sides.
const (
	Client Side = "client"
	Server Side = "server"
)

// Rule is one passive rule: an ID, what it holds, and the requirements it
// cites per revision (a revision not among the keys is one the rule does
// not hold in).
type Rule struct {
	ID    string
	Title string
	Cites map[string][]string
}

// Holds reports whether the rule holds under revision.
func (r Rule) Holds(revision string) bool {
	_, ok := r.Cites[revision]
	return ok
}

// The rules' IDs. They are the explorer's invariants' where the two
// judge the same thing, so that one finding has one name.
const (
	RuleWellFormed         = "frames-well-formed"
	RuleOneResponse        = "one-response"
	RuleNoNotificationRepl = "no-response-to-notification"
	RuleIDUnique           = "ids-unique"
	RuleCancelNoResponse   = "cancel-no-response"
	RuleCancelNoProgress   = "cancel-no-progress"
	RuleHandlerStops       = "cancelled-handler-stops"
	RuleCancelNoLog        = "cancel-no-log"
	RuleCancelTarget       = "cancel-names-own-request"
	RuleCancelInitialize   = "initialize-not-cancelled"
	RuleCancelTask         = "task-cancelled-by-tasks-cancel"
	RuleAbandoned          = "abandoned-without-cancel"
	// The Streamable HTTP rules (http.go).
	RuleStreamPrimed       = "http-stream-primed"
	RuleEventIDs           = "http-event-ids-unique"
	RuleStreamRouting      = "http-stream-routing"
	RuleReplayOwnStream    = "http-replay-own-stream"
	RuleStreamEnds         = "http-response-ends-stream"
	RuleUnbuffered         = "http-sse-unbuffered"
	RuleStateless          = "http-stateless-endpoint"
	RuleSessionIDVisible   = "http-session-id-visible"
	RuleMethodNotFound     = "http-method-not-found-404"
	RuleProgressIncreasing = "progress-increasing"
	RuleProgressAfterEnd   = "no-progress-after-end"
	RuleTokenKnown         = "progress-token-known"
	RuleTokenUnique        = "progress-token-unique"
	RuleTaskTerminalStable = "task-terminal-stable"
	RuleTaskCancelTerminal = "task-cancel-terminal"
	RuleTaskCancelResult   = "task-cancel-result"
	RuleTaskStillWorking   = "task-still-working"
	RuleTaskTimestamps     = "task-timestamps"
	RuleTaskGetAnswer      = "task-get-answer"
	RuleTaskIDTruth        = "task-id-source-of-truth"
	RuleTaskResultMeta     = "task-result-related-task"
	RuleTaskStatusMeta     = "task-status-no-related-task"
	RuleTaskResultStatus   = "task-result-fits-status"
	RuleTaskResultBlocks   = "task-result-blocks"
	RuleTaskCancelledAsked = "task-cancelled-only-when-asked"
	RuleTaskDeclared       = "task-only-when-declared"
	RuleTaskDurable        = "task-durable-when-created"
	RuleLogLevel           = "log-level"
	RuleListenAck          = "listen-acknowledged-first"
	RuleListenID           = "listen-subscription-id"
	RuleListenRequested    = "listen-only-requested"
	RuleListenEnd          = "listen-ended-with-result"
	// The handshake's and the revisions' rules (lifecycle.go, eras.go).
	RulePingAnswered        = "ping-empty-result"
	RuleInitializedFirst    = "initialized-before-requests"
	RuleLevelAccepted       = "log-level-accepted"
	RuleTaskRequired        = "task-required-refused"
	RuleRemovedMethods      = "removed-methods"
	RuleServerInfo          = "server-info-in-meta"
	RuleVersionRefused      = "unsupported-version-refused"
	RuleInitializeNamesVers = "initialize-error-names-versions"
	RuleEnvelopeComplete    = "envelope-complete"
	RuleTaskNameHeader      = "task-name-header"
)

// Rules returns every rule, in the order reports list them.
func Rules() []Rule {
	v2025 := spec.V20251125
	v2026 := spec.V20260728
	both := func(old, modern []string) map[string][]string {
		return map[string][]string{v2025: old, v2026: modern}
	}
	ids := func(s ...string) []string { return s }
	only := func(rev string, s ...string) map[string][]string { return map[string][]string{rev: s} }
	only2025 := func(s ...string) map[string][]string { return only(v2025, s...) }
	only2026 := func(s ...string) map[string][]string { return only(v2026, s...) }
	return []Rule{
		{RuleWellFormed, "every frame is a JSON-RPC message", both(ids("STD-4", "STD-5", "RPC-2", "HTTP-11"), ids("STD-4", "STD-5", "RPC-2", "HTTP-86"))},
		{RuleOneResponse, "every request is answered at most once, with its own ID", both(ids("RPC-8", "RPC-11"), ids("RPC-8", "RPC-11", "RPC-61", "STD-43"))},
		{RuleNoNotificationRepl, "a notification is never answered (over HTTP, its POST gets 202 Accepted and no body)", both(ids("RPC-15", "HTTP-11"), ids("RPC-15", "HTTP-86"))},
		{RuleIDUnique, "a sender never reuses a request ID (2025-11-25: within the session; 2026-07-28: while it is in flight)", both(ids("RPC-6"), ids("RPC-7"))},
		{RuleCancelNoResponse, "no response for a cancelled request after the crossing window", both(ids("CAN-8"), ids("CAN-54", "CAN-56", "CAN-48"))},
		{RuleCancelNoProgress, "no progress for a cancelled request after the crossing window", both(ids("CAN-8"), ids("CAN-54", "CAN-56", "CAN-48"))},
		{RuleHandlerStops, "a cancelled call's handler stops, as the observer's readings show (watch --observer)", both(ids("CAN-8"), ids("CAN-48", "CAN-56"))},
		{RuleCancelNoLog, "no log message for a cancelled request after the crossing window", both(ids("CAN-8"), ids("CAN-54", "CAN-56", "CAN-48"))},
		{RuleCancelTarget, "a cancel names a request the same side issued and believes in flight", both(ids("CAN-1", "CAN-5", "CAN-6"), ids("CAN-46", "CAN-51", "CAN-42", "CAN-47"))},
		{RuleCancelInitialize, "initialize is never cancelled", both(ids("CAN-2"), nil)},
		{RuleCancelTask, "a task-augmented request is cancelled with tasks/cancel, not notifications/cancelled", both(ids("CAN-4", "CAN-7"), ids("CAN-57"))},
		{RuleAbandoned, "a request whose caller stopped waiting is cancelled", both(ids("HTTP-26", "LIF-16"), ids("CAN-45"))},
		{RuleStreamPrimed, "a request's SSE stream starts with an event ID to resume from", only(v2025, "HTTP-16")},
		{RuleEventIDs, "SSE event IDs are unique across the streams of a session (2026-07-28: events carry none)", both(ids("HTTP-40"), ids("HTTP-93"))},
		{RuleStreamRouting, "a request's progress travels on its own stream, never on the GET stream or another request's", both(ids("HTTP-22", "HTTP-31"), ids("LOG-46"))},
		{RuleReplayOwnStream, "a resumed stream replays only its own request's messages", only(v2025, "HTTP-44")},
		{RuleStreamEnds, "the final response ends its SSE stream", only(v2026, "HTTP-91")},
		{RuleUnbuffered, "an SSE response says X-Accel-Buffering: no", only(v2026, "HTTP-92")},
		{RuleStateless, "no session ID is minted or echoed, and GET and DELETE are not served (405)", only(v2026, "HTTP-107")},
		{RuleSessionIDVisible, "a session ID holds only visible ASCII", only(v2025, "HTTP-48")},
		{RuleMethodNotFound, "a method not found (-32601) is answered with HTTP 404", only(v2026, "HTTP-81")},
		{RuleProgressIncreasing, "progress strictly increases per token", both(ids("PRG-4"), ids("PRG-4"))},
		{RuleProgressAfterEnd, "no progress after the request's response (after the task is terminal, for a task)", both(ids("PRG-14", "PRG-11"), ids("PRG-14"))},
		{RuleTokenKnown, "progress names a token of an active request of the other side", both(ids("PRG-7"), ids("PRG-7"))},
		{RuleTokenUnique, "a progress token is unique among the sender's active requests", both(ids("PRG-2"), ids("PRG-41"))},
		{RuleTaskTerminalStable, "a terminal task never changes status", both(ids("TSK-31", "TSK-65"), ids("TSX-15"))},
		{RuleTaskCancelTerminal, "tasks/cancel of a terminal task is refused with -32602 (2025-11-25), acknowledged (2026-07-28)", both(ids("TSK-63"), ids("TSX-44"))},
		{RuleTaskCancelResult, "a successful tasks/cancel answers the task as cancelled", both(ids("TSK-64"), nil)},
		{RuleTaskStillWorking, "a task the host stopped waiting for, or had cancelled, does not go on working (seed 002's alerts)", both(nil, nil)},
		{RuleTaskTimestamps, "a task's lastUpdatedAt is never before its createdAt, and never goes back", only2025("TSK-39")},
		{RuleTaskGetAnswer, "tasks/get answers the whole task: its ttl (2025-11-25); resultType complete, and a terminal task's result or error (2026-07-28)", both(ids("TSK-41"), ids("TSX-30", "TSX-27", "TSX-29"))},
		{RuleTaskIDTruth, "a task method answers about the task its taskId names", only2025("TSK-51")},
		{RuleTaskResultMeta, "tasks/result's result carries the related-task _meta of its task", only2025("TSK-55")},
		{RuleTaskStatusMeta, "a task status notification carries no related-task _meta", only2025("TSK-58")},
		{RuleTaskResultStatus, "a task's terminal status fits its result: isError fails it, and a failed task's tasks/result is the request's error", only2025("TSK-76", "TSK-77")},
		{RuleTaskResultBlocks, "tasks/result of a task still working waits for its end, rather than refusing it", only2025("TSK-47")},
		{RuleTaskCancelledAsked, "a task ends cancelled only when tasks/cancel asked for it", only2025("TSK-D1", "CAN-4")},
		{RuleTaskDeclared, "the tasks extension serves only a request that declared it: a task is created, and tasks/get, tasks/update and tasks/cancel answered with a result, for such a request alone", only2026("TSX-2", "TSX-56")},
		{RuleTaskDurable, "a created task is found by tasks/get", only2026("TSX-16")},
		{RuleLogLevel, "no log message below the level the client set, or without one, or on a subscription (2026-07-28)", both(ids("LOG-4"), ids("LOG-41", "LOG-42", "LOG-43", "LOG-44"))},
		{RuleListenAck, "a subscription's acknowledgement is the first message carrying its ID", only2026("SUB-2")},
		{RuleListenID, "a notification of a subscription carries its subscription ID", only2026("SUB-5")},
		{RuleListenRequested, "a subscription carries only the notifications it asked for", only2026("SUB-1")},
		{RuleListenEnd, "a subscription the server ends gets its result before its stream closes", only2026("SUB-7")},
		{RulePingAnswered, "a ping is answered with an empty result", only2025("PNG-1")},
		{RuleInitializedFirst, "after initialize's result the client sends notifications/initialized before any request but ping", only2025("LIF-4")},
		{RuleLevelAccepted, "logging/setLevel with one of RFC 5424's eight levels is not refused as invalid params", only2025("LOG-2")},
		{RuleTaskRequired, "a tool listed with taskSupport \"required\", called without a task, is refused, not served", only2025("TSK-12")},
		{RuleRemovedMethods, "no ping or logging/setLevel under 2026-07-28, and a server answers them (and the tasks extension's tasks/result) with an error, not a result", only2026("PNG-40", "TSX-65")},
		{RuleServerInfo, "every result of a 2026-07-28 request names the server in _meta (io.modelcontextprotocol/serverInfo)", only2026("RPC-56", "LIF-51")},
		{RuleVersionRefused, "a request naming a version the server's server/discover does not list is refused with -32022 listing the supported ones (over HTTP with 400)", only2026("LIF-40", "HTTP-97")},
		{RuleInitializeNamesVers, "a modern-only server's error to initialize names the versions it supports", only2026("LIF-49")},
		{RuleEnvelopeComplete, "a 2026-07-28 request's envelope holds clientCapabilities beside protocolVersion", only2026("RPC-51")},
		{RuleTaskNameHeader, "over Streamable HTTP a 2026-07-28 tasks/get, tasks/update or tasks/cancel carries its taskId in Mcp-Name", only2026("TSX-52")},
	}
}

// rule returns the rule with id.
func rule(id string) Rule {
	rs := Rules()
	if i := slices.IndexFunc(rs, func(r Rule) bool { return r.ID == id }); i >= 0 {
		return rs[i]
	}
	return Rule{ID: id}
}
