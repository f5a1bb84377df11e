package refserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/spec"
)

// FaultSpec is one row of the fault table: a fault, the revision whose
// behaviour it changes, the transport it shows on, its area, the
// requirements it is documented to break, and what it does. The mutation
// matrix holds each fault to its row: against the whole catalogue, a
// fault produces fails and warns only under the requirements it breaks.
type FaultSpec struct {
	Fault Fault
	// Revision is spec.V20251125 for a fault of the 2025-11-25 behaviour
	// (most show under 2026-07-28 too, where the behaviour is shared),
	// spec.V20260728 for one of 2026-07-28 or the tasks extension, which
	// changes nothing under 2025-11-25.
	Revision string
	// On is the transport it shows on: OnAny, OnStdio or OnHTTP.
	On string
	// Area groups the 2025-11-25 faults the matrix runs with options of
	// their own: "logging", "tasks", "robust"; "" for the rest.
	Area string
	// Breaks are the requirement IDs it is documented to break.
	Breaks []string
	// Does says what it does, in a few words.
	Does string
}

// Transports a fault shows on.
const (
	OnAny   = "any"
	OnStdio = "stdio"
	OnHTTP  = "http"
)

// faultTable is every fault of the reference server, one row each, in a
// stable order. Adding a fault is its constant (beside the behaviour that
// has it), its row here, and that behaviour (CONTRIBUTING.md).
var faultTable = []FaultSpec{
	{FaultRespondAfterCancel, spec.V20251125, OnAny, "", []string{"CAN-8"}, "a cancelled operation still sends its result when woken"},
	{FaultProgressAfterCancel, spec.V20251125, OnAny, "", []string{"CAN-8"}, "a cancelled operation sends one more progress notification, then stops without a response"},
	{FaultProgressAfterResponse, spec.V20251125, OnAny, "", []string{"PRG-14"}, "one progress notification follows the final response"},
	{FaultNonIncreasingProgress, spec.V20251125, OnAny, "", []string{"PRG-4"}, "step 2 repeats the progress value of step 1"},
	{FaultWrongToken, spec.V20251125, OnAny, "", []string{"PRG-7"}, "progress carries the token with its JSON type flipped: \"7\" for 7, 7 for \"7\""},
	{FaultProgressWithoutToken, spec.V20251125, OnAny, "", []string{"PRG-7"}, "progress is sent with the invented token \"mcpflight-invented\" when none was given"},
	{FaultErrorOnNotification, spec.V20251125, OnAny, "", []string{"RPC-15", "HTTP-11"}, "every notification is answered with an error response with id null (over HTTP the POST's answer, where a 202 with no body belongs)"},
	{FaultCrashOnMalformedCancel, spec.V20251125, OnAny, "", []string{"CAN-14"}, "a cancel without a valid requestId makes the server stop with an error"},
	{FaultCancelUnknownHitsOther, spec.V20251125, OnAny, "", []string{"CAN-14"}, "a cancel for an unknown request id cancels the most recent running operation"},
	{FaultLeakOnCancel, spec.V20251125, OnAny, "", []string{"CAN-8"}, "a cancelled operation never releases its resource nor stops counting as active"},
	{FaultDoubleCleanup, spec.V20251125, OnAny, "", []string{"CAN-8"}, "a cancelled operation releases its resource twice"},
	{FaultIDTypeConfusion, spec.V20251125, OnAny, "", []string{"RPC-8"}, "request ids are keyed by their text, so \"5\" and 5 collide, and integer-like string ids are echoed as integers"},
	{FaultIDZeroAbsent, spec.V20251125, OnAny, "", []string{"RPC-4"}, "a request with id 0 is taken for a notification and never answered"},
	{FaultStaleToken, spec.V20251125, OnAny, "", []string{"PRG-2", "PRG-12"}, "a progress token stays live after its request completes; reusing it is refused with -32602"},
	{FaultStdoutNoise, spec.V20251125, OnStdio, "", []string{"STD-4"}, "a non-JSON banner line is written to the output before anything else"},
	{FaultPingBroken, spec.V20251125, OnAny, "", []string{"PNG-1"}, "ping is answered with error -32603"},
	{FaultIgnoreStdinEOF, spec.V20251125, OnStdio, "", []string{"STD-7", "STD-46"}, "the end of the input is ignored: the server keeps running until it is stopped"},
	{FaultVersionMismatch, spec.V20251125, OnAny, "", []string{"LIF-9", "LIF-10"}, "initialize answers protocolVersion \"1999-01-01\""},
	{FaultLogLevelIgnored, spec.V20251125, OnAny, "", []string{"LOG-4"}, "the log tool ignores the level set by logging/setLevel"},
	{FaultHangAfterCancel, spec.V20251125, OnAny, "", []string{"CAN-8"}, "a cancelled operation stops its output but never ends: it keeps its resource and never reaches KEY/end"},
	{FaultCancelDoesNotStopWorker, spec.V20251125, OnAny, "", []string{"TSK-64"}, "tasks/cancel marks the task cancelled but its worker keeps ticking"},
	{FaultStatusChangesAfterCancelled, spec.V20251125, OnAny, "", []string{"TSK-65", "TSK-31"}, "a cancelled task's worker overwrites the cancelled status with its own end"},
	{FaultCancelTerminalSucceeds, spec.V20251125, OnAny, "", []string{"TSK-63"}, "tasks/cancel of a terminal task succeeds and overwrites its status instead of -32602"},
	{FaultResultHangsAfterCancel, spec.V20251125, OnAny, "", []string{"TSK-47"}, "a tasks/result blocked on a task that is then cancelled is never answered"},
	{FaultNotificationCancelsTask, spec.V20251125, OnAny, "", []string{"CAN-4"}, "notifications/cancelled for the request that created a task cancels the task"},
	{FaultMissingRelatedTaskMeta, spec.V20251125, OnAny, "", []string{"TSK-55"}, "the tasks/result response lacks io.modelcontextprotocol/related-task _meta"},
	{FaultListLeaksOtherSessions, spec.V20251125, OnAny, "", []string{"TSK-84"}, "tasks/list also returns other sessions' tasks"},
	{FaultPollIntervalIgnored, spec.V20251125, OnAny, "", []string{"TSK-43", "TSK-16"}, "task responses advertise pollInterval 0, inviting a busy poll"},
	{FaultCancelOnDisconnect, spec.V20251125, OnHTTP, "", []string{"HTTP-25"}, "dropping a request's SSE stream cancels the request"},
	{FaultUnresumableCancelOnDisconnect, spec.V20251125, OnHTTP, "", []string{"HTTP-25", "HTTP-16"}, "a request's SSE stream carries no event IDs (so no priming event) and dropping it cancels the request"},
	{FaultReplayCrossesStreams, spec.V20251125, OnHTTP, "", []string{"HTTP-44"}, "a resume with Last-Event-ID also replays other streams' events"},
	{FaultLoseEventsOnResume, spec.V20251125, OnHTTP, "", []string{"HTTP-43", "HTTP-21"}, "a resume with Last-Event-ID skips the events sent while the client was away"},
	{FaultDuplicateEventIDs, spec.V20251125, OnHTTP, "", []string{"HTTP-40"}, "SSE event IDs count per stream, so they repeat across a session's streams"},
	{FaultNoSessionCheck, spec.V20251125, OnHTTP, "", []string{"HTTP-51", "HTTP-52"}, "requests without a session ID or with an unknown one are served, not refused with 400/404"},
	{FaultNoOriginCheck, spec.V20251125, OnHTTP, "", []string{"HTTP-3"}, "requests with a foreign Origin are served, not refused with 403"},
	{FaultJSONBodyForNotification, spec.V20251125, OnHTTP, "", []string{"HTTP-11", "RPC-2", "HTTP-86"}, "a POSTed notification gets 200 with a body of {}, which is no JSON-RPC message, instead of 202 with none (under 2026-07-28 too)"},
	{FaultResponseAfterCancelOnStream, spec.V20251125, OnHTTP, "", []string{"CAN-8"}, "an error response for a cancelled request still goes out on its open stream"},
	{FaultNoProtocolVersionCheck, spec.V20251125, OnHTTP, "", []string{"HTTP-59"}, "an unsupported MCP-Protocol-Version header is ignored instead of refused with 400"},
	{FaultProgressOnGETStream, spec.V20251125, OnHTTP, "", []string{"HTTP-31", "HTTP-22"}, "progress of POSTed calls goes on the open GET stream instead of the call's own stream"},
	{FaultNoPrimingEvent, spec.V20251125, OnHTTP, "", []string{"HTTP-16"}, "SSE answers start without a priming event"},
	{FaultSessionIDInvisible, spec.V20251125, OnHTTP, "", []string{"HTTP-48"}, "session IDs hold a space and non-ASCII bytes, outside visible ASCII"},
	{FaultRejectValidLevel, spec.V20251125, OnAny, "logging", []string{"LOG-2"}, "logging/setLevel refuses the valid level \"notice\" with -32602"},
	{FaultAcceptInvalidLevel, spec.V20251125, OnAny, "logging", []string{"LOG-6"}, "logging/setLevel accepts an unknown level instead of -32602"},
	{FaultBadMessageShape, spec.V20251125, OnAny, "logging", []string{"LOG-2"}, "notifications/message with level \"WARN\" and no data (schema LoggingMessageNotification)"},
	{FaultLogAfterCancel, spec.V20251125, OnAny, "logging", []string{"CAN-8"}, "a cancelled operation keeps logging after the cancel"},
	{FaultTaskListNotObject, spec.V20251125, OnAny, "tasks", []string{"TSK-2"}, "capabilities.tasks.list is true instead of an object"},
	{FaultTaskSupportMissing, spec.V20251125, OnAny, "tasks", []string{"TSK-8"}, "tools/list gives task_worker no execution.taskSupport"},
	{FaultRequiredTaskRunsPlain, spec.V20251125, OnAny, "tasks", []string{"TSK-12"}, "task_worker called without a task gets an isError result instead of -32601"},
	{FaultForbiddenRunsPlain, spec.V20251125, OnAny, "tasks", []string{"TSK-9"}, "a forbidden-task tool called as a task runs as an ordinary call instead of -32601"},
	{FaultTaskWithoutTTL, spec.V20251125, OnAny, "tasks", []string{"TSK-41"}, "task objects have no ttl member"},
	{FaultLastUpdatedBeforeCreated, spec.V20251125, OnAny, "tasks", []string{"TSK-39"}, "lastUpdatedAt is a second before createdAt"},
	{FaultSequentialTaskIDs, spec.V20251125, OnAny, "tasks", []string{"TSK-81"}, "task IDs count up across the server: task-1, task-2, ..."},
	{FaultCompletedTaskReopens, spec.V20251125, OnAny, "tasks", []string{"TSK-31"}, "the second tasks/get after a task completed says working again"},
	{FaultCancelAnswersBeforeTransition, spec.V20251125, OnAny, "tasks", []string{"TSK-64"}, "tasks/cancel answers with the task still working and cancels it after"},
	{FaultIsErrorCompletesTask, spec.V20251125, OnAny, "tasks", []string{"TSK-76"}, "a task whose tool result has isError ends completed, not failed"},
	{FaultFailedResultNotError, spec.V20251125, OnAny, "tasks", []string{"TSK-77"}, "tasks/result of a task whose request failed with a JSON-RPC error answers a result instead"},
	{FaultResultAnswersEarly, spec.V20251125, OnAny, "tasks", []string{"TSK-47"}, "tasks/result of a working task is answered at once with -32602 instead of blocking"},
	{FaultUnknownTaskInternalError, spec.V20251125, OnAny, "tasks", []string{"TSK-68"}, "a task ID that names no task gets -32603 instead of -32602"},
	{FaultRelatedTaskMetaWins, spec.V20251125, OnAny, "tasks", []string{"TSK-51", "TSK-52"}, "the task methods take the task from the related-task _meta over params.taskId"},
	{FaultBogusCursorAccepted, spec.V20251125, OnAny, "tasks", []string{"TSK-69"}, "tasks/list with a cursor it never issued answers the first page instead of -32602"},
	{FaultStatusNotificationMeta, spec.V20251125, OnAny, "tasks", []string{"TSK-58"}, "notifications/tasks/status carries related-task _meta"},
	{FaultTaskProgressOtherToken, spec.V20251125, OnAny, "tasks", []string{"PRG-10", "PRG-7"}, "a task's progress after its CreateTaskResult carries another token than the request's"},
	{FaultTaskCancelledUnprompted, spec.V20251125, OnAny, "tasks", []string{"TSK-D1"}, "a task ends cancelled right after its CreateTaskResult, with nobody cancelling it"},
	{FaultDieOnMalformedInput, spec.V20251125, OnAny, "robust", []string{"RPC-2"}, "a frame that is no JSON-RPC message stops the server (over HTTP it is answered, and every later request is aborted)"},
	{FaultParseErrorWithID, spec.V20251125, OnAny, "robust", []string{"RPC-11"}, "a frame that is not JSON is answered -32700 with id 0 instead of null"},
	{FaultTruncatedSwallowsNext, spec.V20251125, OnAny, "robust", []string{"RPC-2"}, "after a truncated JSON object the next line is taken for its rest and never answered"},
	{FaultDuplicateIDDropsFirst, spec.V20251125, OnAny, "robust", []string{"RPC-2"}, "a request reusing an in-flight ID is answered and the first request's answer is dropped"},
	{FaultMissingTaskIDInternalError, spec.V20251125, OnAny, "robust", []string{"TSK-68"}, "tasks/get, tasks/result and tasks/cancel without a string taskId get -32603 instead of -32602"},
	{FaultIllTypedCursorAccepted, spec.V20251125, OnAny, "robust", []string{"TSK-69"}, "tasks/list with a cursor that is not a string answers the first page instead of -32602"},
	{FaultMissingLevelInternalError, spec.V20251125, OnAny, "robust", []string{"LOG-6"}, "logging/setLevel without a string level gets -32603 instead of -32602"},
	{FaultMuteAfterNamelessCall, spec.V20251125, OnAny, "robust", []string{"RPC-2"}, "a tools/call without a string name is never answered, and nothing after it is"},
	{FaultMuteAfterIllTypedToolsCursor, spec.V20251125, OnAny, "robust", []string{"RPC-2"}, "a tools/list whose cursor is neither a string nor null is never answered, and nothing after it is"},
	{FaultNoResultType, spec.V20260728, OnAny, "", []string{"RPC-40"}, "2026-07-28 results carry no resultType"},
	{FaultNoServerInfo, spec.V20260728, OnAny, "", []string{"RPC-56", "LIF-51"}, "2026-07-28 results carry no serverInfo in _meta, server/discover's included"},
	{FaultDiscoverMissingVersion, spec.V20260728, OnAny, "", []string{"LIF-42", "LIF-47"}, "server/discover lists only 2026-07-28 while initialize still agrees to 2025-11-25"},
	{FaultWrongVersionError, spec.V20260728, OnAny, "", []string{"LIF-40", "HTTP-97"}, "an unsupported protocol version gets -32602 without data instead of -32022 with supported and requested"},
	{FaultEnvelopeNotChecked, spec.V20260728, OnAny, "", []string{"RPC-51", "RPC-52", "RPC-53"}, "a 2026-07-28 request without clientCapabilities is served instead of refused with -32602"},
	{FaultStickyVersion, spec.V20260728, OnStdio, "", []string{"RPC-57"}, "once a tools request of the connection was served, an unsupported protocolVersion is served under the earlier request's version instead of refused with -32022"},
	{FaultStickyCapabilities, spec.V20260728, OnAny, "", []string{"RPC-57", "RPC-58", "TSX-2"}, "a tasks extension declared once sticks: later requests that do not declare it get tasks"},
	{FaultTaskForUndeclaredClient, spec.V20260728, OnAny, "", []string{"TSX-2", "TSX-5", "LIF-45"}, "a tools/call that did not declare the tasks extension gets a CreateTaskResult"},
	{FaultTaskMethodsWithoutCapability, spec.V20260728, OnAny, "", []string{"TSX-56", "RPC-55"}, "tasks/get, tasks/update and tasks/cancel are served without the extension declared, instead of -32021"},
	{FaultHeaderMismatchAccepted, spec.V20260728, OnHTTP, "", []string{"HTTP-96", "HTTP-103", "HTTP-104"}, "HTTP headers missing or not matching the body are served instead of 400 and -32020"},
	{FaultPingOn2026, spec.V20260728, OnAny, "", []string{"PNG-40", "HTTP-81"}, "ping and logging/setLevel are answered on a 2026-07-28 request instead of -32601"},
	{FaultTasksResultOn2026, spec.V20260728, OnAny, "", []string{"TSX-65"}, "tasks/result and tasks/list are served on a 2026-07-28 request instead of -32601"},
	{FaultUnknownMethod200, spec.V20260728, OnHTTP, "", []string{"HTTP-81"}, "an unknown 2026-07-28 method gets HTTP 200 with -32601 instead of 404"},
	{FaultStreamCloseNotCancel, spec.V20260728, OnHTTP, "", []string{"CAN-43", "CAN-55"}, "closing a 2026-07-28 request's response stream does not cancel it"},
	{FaultLogWithoutLevel, spec.V20260728, OnAny, "", []string{"LOG-41", "LOG-42"}, "notifications/message is sent for a request without logLevel"},
	{FaultLogBelowLevel, spec.V20260728, OnAny, "", []string{"LOG-43"}, "messages below the request's logLevel are sent too"},
	{FaultAcceptUnknownLogLevel, spec.V20260728, OnAny, "", []string{"LOG-45"}, "an unknown logLevel is taken for debug and the request runs, instead of -32602"},
	{FaultListenLogs, spec.V20260728, OnAny, "", []string{"LOG-44"}, "a subscriptions/listen request with a logLevel gets a notifications/message on its stream"},
	{FaultListenNoAck, spec.V20260728, OnAny, "", []string{"SUB-2"}, "a subscription never gets notifications/subscriptions/acknowledged"},
	{FaultListenNoSubscriptionID, spec.V20260728, OnAny, "", []string{"SUB-5"}, "notifications on a subscription lack io.modelcontextprotocol/subscriptionId"},
	{FaultListenUnrequested, spec.V20260728, OnAny, "", []string{"SUB-1"}, "every task's notifications/tasks goes to every subscription, asked for or not"},
	{FaultTeardownSilent, spec.V20260728, OnAny, "", []string{"SUB-6", "SUB-7", "CAN-41"}, "a subscription the server ends gets neither its result nor notifications/cancelled"},
	{FaultServerSendsCancelled, spec.V20260728, OnStdio, "", []string{"CAN-42", "CAN-52"}, "a request the client cancelled gets a notifications/cancelled from the server"},
	{FaultRequestOnStdout, spec.V20260728, OnStdio, "", []string{"STD-43"}, "a tools/call makes the server write a JSON-RPC request (roots/list) to stdout before its answer"},
	{FaultProgressCrossesStreams, spec.V20260728, OnHTTP, "", []string{"LOG-46"}, "a slow call's progress goes on the response stream of another running call"},
	{FaultLogCrossesStreams, spec.V20260728, OnHTTP, "", []string{"LOG-46"}, "a slow call's log messages go on the response stream of another running call"},
	{FaultTaskCancelErrorOnTerminal, spec.V20260728, OnAny, "", []string{"TSX-44", "TSX-40"}, "tasks/cancel of a terminal task gets -32602 instead of the empty acknowledgement"},
	{FaultCreateBeforeDurable, spec.V20260728, OnAny, "", []string{"TSX-16", "TSX-17"}, "CreateTaskResult comes before tasks/get can find the task"},
	{FaultIsErrorTaskFailed, spec.V20260728, OnAny, "", []string{"TSX-14", "TSX-59", "TSX-61"}, "a task whose tool result has isError ends failed instead of completed"},
	{FaultTaskResultNotInlined, spec.V20260728, OnAny, "", []string{"TSX-27", "TSX-29", "TSX-58", "TSX-60"}, "tasks/get of a terminal task lacks its result or error"},
	{FaultGetTaskResultTypeTask, spec.V20260728, OnAny, "", []string{"TSX-9", "TSX-30"}, "tasks/get answers resultType \"task\" instead of \"complete\""},
	{FaultTaskUpdateRejectsUnknownKey, spec.V20260728, OnAny, "", []string{"TSX-42"}, "tasks/update with a key that is not outstanding gets -32602 instead of an acknowledgement"},
	{FaultNoAccelBuffering, spec.V20260728, OnHTTP, "", []string{"HTTP-92"}, "2026-07-28 SSE responses lack X-Accel-Buffering: no"},
	{FaultEventIDsOn2026, spec.V20260728, OnHTTP, "", []string{"HTTP-93"}, "2026-07-28 SSE events carry event IDs"},
	{FaultSessionOn2026, spec.V20260728, OnHTTP, "", []string{"HTTP-107"}, "2026-07-28 responses mint an Mcp-Session-Id"},
	{FaultGetOn2026, spec.V20260728, OnHTTP, "", []string{"HTTP-107", "HTTP-80"}, "a 2026-07-28 GET opens an SSE stream and a DELETE gets 200, instead of 405"},
	{FaultStreamStaysOpen, spec.V20260728, OnHTTP, "", []string{"HTTP-91"}, "a 2026-07-28 SSE response stays open after the response"},
	{FaultInitializeErrorWithoutVersions, spec.V20260728, OnAny, "", []string{"LIF-49"}, "a server without the legacy era answers initialize with a bare -32601 naming no version"},
	{FaultExtTaskIDInternalError, spec.V20260728, OnAny, "", []string{"TSX-53", "TSX-54"}, "tasks/get, tasks/update and tasks/cancel without a string taskId get -32603 instead of -32602"},
	{FaultListenBadFilterCrash, spec.V20260728, OnStdio, "", []string{"RPC-2"}, "a subscriptions/listen whose notifications filter is missing or not an object stops the server"},
}

// FaultTable returns the fault table, in a stable order.
func FaultTable() []FaultSpec {
	out := slices.Clone(faultTable)
	for i := range out {
		out[i].Breaks = slices.Clone(out[i].Breaks)
	}
	return out
}

// Spec returns the fault's row; false for a string that names no fault.
func (f Fault) Spec() (FaultSpec, bool) {
	for _, r := range faultTable {
		if r.Fault == f {
			r.Breaks = slices.Clone(r.Breaks)
			return r, true
		}
	}
	return FaultSpec{}, false
}

// faultsWhere returns the faults whose rows keep says yes to, in the
// table's order.
func faultsWhere(keep func(FaultSpec) bool) []Fault {
	var out []Fault
	for _, r := range faultTable {
		if keep(r) {
			out = append(out, r.Fault)
		}
	}
	return out
}

// AllFaults returns every fault, in a stable order.
func AllFaults() []Fault { return faultsWhere(func(FaultSpec) bool { return true }) }

// HTTPFaults returns the 2025-11-25 faults of the HTTP endpoint.
func HTTPFaults() []Fault {
	return faultsWhere(func(r FaultSpec) bool { return r.Revision == spec.V20251125 && r.On == OnHTTP })
}

// LogFaults returns the 2025-11-25 logging faults.
func LogFaults() []Fault { return faultsIn("logging") }

// TaskFaults returns the 2025-11-25 task faults.
func TaskFaults() []Fault { return faultsIn("tasks") }

// RobustFaults returns the robustness faults.
func RobustFaults() []Fault { return faultsIn("robust") }

// faultsIn returns the 2025-11-25 faults of an area.
func faultsIn(area string) []Fault {
	return faultsWhere(func(r FaultSpec) bool { return r.Revision == spec.V20251125 && r.Area == area })
}

// Faults2026 returns the faults of the 2026-07-28 behaviour.
func Faults2026() []Fault {
	return faultsWhere(func(r FaultSpec) bool { return r.Revision == spec.V20260728 })
}

// Fault2026Requirements returns the requirement IDs a 2026-07-28 fault
// breaks and the transport it shows on ("any", "stdio" or "http"); ok is
// false for any other fault.
func Fault2026Requirements(f Fault) (reqs []string, transport string, ok bool) {
	r, ok := f.Spec()
	if !ok || r.Revision != spec.V20260728 {
		return nil, "", false
	}
	return r.Breaks, r.On, true
}

// Breaks returns the requirement IDs the fault is documented to break;
// nil for a string that names no fault.
func (f Fault) Breaks() []string {
	r, _ := f.Spec()
	return r.Breaks
}

// Description is a one-line description of what the fault does and the
// requirements it breaks (Breaks); it is empty for a string that names no
// fault.
func (f Fault) Description() string {
	r, ok := f.Spec()
	if !ok {
		return ""
	}
	return r.Does + " (" + strings.Join(r.Breaks, ", ") + ")"
}

// ParseFault returns the fault named s (its flag value), or an error that
// lists the valid names.
func ParseFault(s string) (Fault, error) {
	f := Fault(strings.TrimSpace(s))
	if _, ok := f.Spec(); ok {
		return f, nil
	}
	names := make([]string, 0, len(faultTable))
	for _, r := range faultTable {
		names = append(names, string(r.Fault))
	}
	return "", fmt.Errorf("refserver: unknown fault %q (valid: %s)", s, strings.Join(names, ", "))
}
