package refserver

import (
	"fmt"
	"slices"
	"strings"
)

// Fault names one deliberate defect of the reference server. Each fault
// breaks exactly one contract, so that every check of the conformance
// checker can be shown to fire on a server that breaks it and to stay quiet
// on the conforming server. The string value is the command-line flag value.
type Fault string

// The faults the reference server can be started with.
const (
	// FaultRespondAfterCancel: a cancelled operation still sends its
	// result when it is woken (breaks CAN-8 "not send a response").
	FaultRespondAfterCancel Fault = "respond-after-cancel"
	// FaultProgressAfterCancel: a cancelled operation sends one more
	// progress notification, then stops without a response (CAN-8, CAN-54).
	FaultProgressAfterCancel Fault = "progress-after-cancel"
	// FaultProgressAfterResponse: one progress notification follows the
	// final response (PRG-14).
	FaultProgressAfterResponse Fault = "progress-after-response"
	// FaultNonIncreasingProgress: step 2 repeats the progress value of
	// step 1 (PRG-4).
	FaultNonIncreasingProgress Fault = "non-increasing-progress"
	// FaultWrongToken: progress notifications carry the token with its
	// JSON type flipped, "7" for 7 and 7 for "7" (PRG-7).
	FaultWrongToken Fault = "wrong-token"
	// FaultProgressWithoutToken: progress is sent with the invented token
	// "mcpflight-invented" when the request carried none (PRG-7).
	FaultProgressWithoutToken Fault = "progress-without-token"
	// FaultErrorOnNotification: every notification is answered with an
	// error response whose id is null (RPC-15).
	FaultErrorOnNotification Fault = "error-on-notification"
	// FaultCrashOnMalformedCancel: a notifications/cancelled without a
	// valid requestId makes Serve stop with an error (CAN-14).
	FaultCrashOnMalformedCancel Fault = "crash-on-malformed-cancel"
	// FaultCancelUnknownHitsOther: a cancel naming a request ID never seen
	// in the session cancels the most recent running operation (CAN-14).
	FaultCancelUnknownHitsOther Fault = "cancel-unknown-hits-other"
	// FaultLeakOnCancel: a cancelled operation never releases its
	// resource and stays counted as active (CAN-8 "free resources").
	FaultLeakOnCancel Fault = "leak-on-cancel"
	// FaultDoubleCleanup: a cancelled operation releases its resource
	// twice (CAN-8 "free associated resources").
	FaultDoubleCleanup Fault = "double-cleanup"
	// FaultIDTypeConfusion: requests are keyed by the text of their id,
	// so string "5" and integer 5 collide, and responses to string ids
	// that look like integers carry an integer id (RPC-8).
	FaultIDTypeConfusion Fault = "id-type-confusion"
	// FaultIDZeroAbsent: a request with the integer id 0 is taken for a
	// notification and never answered (RPC-4).
	FaultIDZeroAbsent Fault = "id-zero-absent"
	// FaultStaleToken: a progress token stays live after its request
	// completes, so reusing it is refused with -32602 (PRG-2).
	FaultStaleToken Fault = "stale-token"
	// FaultStdoutNoise: a line that is not JSON-RPC is written before
	// anything else (STD-4).
	FaultStdoutNoise Fault = "stdout-noise"
	// FaultPingBroken: ping is answered with error -32603 (PNG-1).
	FaultPingBroken Fault = "ping-broken"
	// FaultIgnoreStdinEOF: Serve does not return at the end of its input
	// but waits for its context, like a stdio server that does not exit
	// when stdin closes (STD-46; STD-7 under 2025-11-25).
	FaultIgnoreStdinEOF Fault = "ignore-stdin-eof"
	// FaultVersionMismatch: initialize answers protocolVersion
	// "1999-01-01" (LIF-9, LIF-10).
	FaultVersionMismatch Fault = "version-mismatch"
	// FaultLogLevelIgnored: the log tool ignores the level set with
	// logging/setLevel (LOG-4).
	FaultLogLevelIgnored Fault = "log-level-ignored"
	// FaultHangAfterCancel: an accepted cancel stops the operation's
	// output, but the operation never ends: it keeps its resource and
	// never reaches KEY/end (CAN-8 "stop processing").
	FaultHangAfterCancel Fault = "hang-after-cancel"
	// FaultCancelDoesNotStopWorker: tasks/cancel moves the task to
	// cancelled but its worker keeps ticking at every release (TSK-64
	// "SHOULD attempt to stop").
	FaultCancelDoesNotStopWorker Fault = "cancel-does-not-stop-worker"
	// FaultStatusChangesAfterCancelled: a cancelled task's worker, woken
	// by the cancel, overwrites the status with its own end (TSK-65,
	// TSK-31).
	FaultStatusChangesAfterCancelled Fault = "status-changes-after-cancelled"
	// FaultCancelTerminalSucceeds: tasks/cancel of a terminal task
	// succeeds and overwrites the status with cancelled (TSK-63).
	FaultCancelTerminalSucceeds Fault = "cancel-terminal-succeeds"
	// FaultResultHangsAfterCancel: a tasks/result blocked on a task that
	// is then cancelled is never answered, nor is a later one (TSK-47,
	// ambiguity A-4).
	FaultResultHangsAfterCancel Fault = "result-hangs-after-cancel"
	// FaultNotificationCancelsTask: notifications/cancelled naming the
	// request that created a task cancels the task (CAN-4).
	FaultNotificationCancelsTask Fault = "notification-cancels-task"
	// FaultMissingRelatedTaskMeta: the tasks/result response has no
	// io.modelcontextprotocol/related-task _meta (TSK-55).
	FaultMissingRelatedTaskMeta Fault = "missing-related-task-meta"
	// FaultListLeaksOtherSessions: tasks/list also returns the tasks of
	// the server's other sessions (TSK-84, TSK-62).
	FaultListLeaksOtherSessions Fault = "list-leaks-other-sessions"
	// FaultPollIntervalIgnored: task responses advertise pollInterval 0,
	// ignoring the interval the worker actually advances at, so a
	// requestor that respects it busy-polls (TSK-43, TSK-16).
	FaultPollIntervalIgnored Fault = "poll-interval-ignored"
)

// AllFaults returns every fault, in a stable order.
func AllFaults() []Fault {
	return append([]Fault{
		FaultRespondAfterCancel,
		FaultProgressAfterCancel,
		FaultProgressAfterResponse,
		FaultNonIncreasingProgress,
		FaultWrongToken,
		FaultProgressWithoutToken,
		FaultErrorOnNotification,
		FaultCrashOnMalformedCancel,
		FaultCancelUnknownHitsOther,
		FaultLeakOnCancel,
		FaultDoubleCleanup,
		FaultIDTypeConfusion,
		FaultIDZeroAbsent,
		FaultStaleToken,
		FaultStdoutNoise,
		FaultPingBroken,
		FaultIgnoreStdinEOF,
		FaultVersionMismatch,
		FaultLogLevelIgnored,
		FaultHangAfterCancel,
		FaultCancelDoesNotStopWorker,
		FaultStatusChangesAfterCancelled,
		FaultCancelTerminalSucceeds,
		FaultResultHangsAfterCancel,
		FaultNotificationCancelsTask,
		FaultMissingRelatedTaskMeta,
		FaultListLeaksOtherSessions,
		FaultPollIntervalIgnored,
	}, append(append(append(append(HTTPFaults(), LogFaults()...), TaskFaults()...), RobustFaults()...), Faults2026()...)...)
}

// faultDoc is what the fault list says of one fault: the requirements
// it is documented to break, and what it does.
type faultDoc struct {
	breaks []string
	does   string
}

// faultDocs documents every fault. The mutation matrix holds each fault
// to it: against the whole catalogue, a fault produces fails and warns
// only under the requirements it breaks.
var faultDocs = map[Fault]faultDoc{
	FaultRespondAfterCancel:            {[]string{"CAN-8"}, "a cancelled operation still sends its result when woken"},
	FaultProgressAfterCancel:           {[]string{"CAN-8"}, "a cancelled operation sends one more progress notification, then stops without a response"},
	FaultProgressAfterResponse:         {[]string{"PRG-14"}, "one progress notification follows the final response"},
	FaultNonIncreasingProgress:         {[]string{"PRG-4"}, "step 2 repeats the progress value of step 1"},
	FaultWrongToken:                    {[]string{"PRG-7"}, "progress carries the token with its JSON type flipped: \"7\" for 7, 7 for \"7\""},
	FaultProgressWithoutToken:          {[]string{"PRG-7"}, "progress is sent with the invented token \"mcpflight-invented\" when none was given"},
	FaultErrorOnNotification:           {[]string{"RPC-15", "HTTP-11"}, "every notification is answered with an error response with id null (over HTTP the POST's answer, where a 202 with no body belongs)"},
	FaultCrashOnMalformedCancel:        {[]string{"CAN-14"}, "a cancel without a valid requestId makes the server stop with an error"},
	FaultCancelUnknownHitsOther:        {[]string{"CAN-14"}, "a cancel for an unknown request id cancels the most recent running operation"},
	FaultLeakOnCancel:                  {[]string{"CAN-8"}, "a cancelled operation never releases its resource nor stops counting as active"},
	FaultDoubleCleanup:                 {[]string{"CAN-8"}, "a cancelled operation releases its resource twice"},
	FaultIDTypeConfusion:               {[]string{"RPC-8"}, "request ids are keyed by their text, so \"5\" and 5 collide, and integer-like string ids are echoed as integers"},
	FaultIDZeroAbsent:                  {[]string{"RPC-4"}, "a request with id 0 is taken for a notification and never answered"},
	FaultStaleToken:                    {[]string{"PRG-2", "PRG-12"}, "a progress token stays live after its request completes; reusing it is refused with -32602"},
	FaultStdoutNoise:                   {[]string{"STD-4"}, "a non-JSON banner line is written to the output before anything else"},
	FaultPingBroken:                    {[]string{"PNG-1"}, "ping is answered with error -32603"},
	FaultIgnoreStdinEOF:                {[]string{"STD-7", "STD-46"}, "the end of the input is ignored: the server keeps running until it is stopped"},
	FaultVersionMismatch:               {[]string{"LIF-9", "LIF-10"}, "initialize answers protocolVersion \"1999-01-01\""},
	FaultLogLevelIgnored:               {[]string{"LOG-4"}, "the log tool ignores the level set by logging/setLevel"},
	FaultHangAfterCancel:               {[]string{"CAN-8"}, "a cancelled operation stops its output but never ends: it keeps its resource and never reaches KEY/end"},
	FaultCancelDoesNotStopWorker:       {[]string{"TSK-64"}, "tasks/cancel marks the task cancelled but its worker keeps ticking"},
	FaultStatusChangesAfterCancelled:   {[]string{"TSK-65", "TSK-31"}, "a cancelled task's worker overwrites the cancelled status with its own end"},
	FaultCancelTerminalSucceeds:        {[]string{"TSK-63"}, "tasks/cancel of a terminal task succeeds and overwrites its status instead of -32602"},
	FaultResultHangsAfterCancel:        {[]string{"TSK-47"}, "a tasks/result blocked on a task that is then cancelled is never answered"},
	FaultNotificationCancelsTask:       {[]string{"CAN-4"}, "notifications/cancelled for the request that created a task cancels the task"},
	FaultMissingRelatedTaskMeta:        {[]string{"TSK-55"}, "the tasks/result response lacks io.modelcontextprotocol/related-task _meta"},
	FaultListLeaksOtherSessions:        {[]string{"TSK-84"}, "tasks/list also returns other sessions' tasks"},
	FaultPollIntervalIgnored:           {[]string{"TSK-43", "TSK-16"}, "task responses advertise pollInterval 0, inviting a busy poll"},
	FaultCancelOnDisconnect:            {[]string{"HTTP-25"}, "dropping a request's SSE stream cancels the request"},
	FaultReplayCrossesStreams:          {[]string{"HTTP-44"}, "a resume with Last-Event-ID also replays other streams' events"},
	FaultLoseEventsOnResume:            {[]string{"HTTP-43", "HTTP-21"}, "a resume with Last-Event-ID skips the events sent while the client was away"},
	FaultDuplicateEventIDs:             {[]string{"HTTP-40"}, "SSE event IDs count per stream, so they repeat across a session's streams"},
	FaultNoSessionCheck:                {[]string{"HTTP-51", "HTTP-52"}, "requests without a session ID or with an unknown one are served, not refused with 400/404"},
	FaultNoOriginCheck:                 {[]string{"HTTP-3"}, "requests with a foreign Origin are served, not refused with 403"},
	FaultJSONBodyForNotification:       {[]string{"HTTP-11", "RPC-2", "HTTP-86"}, "a POSTed notification gets 200 with a body of {}, which is no JSON-RPC message, instead of 202 with none (under 2026-07-28 too)"},
	FaultResponseAfterCancelOnStream:   {[]string{"CAN-8"}, "an error response for a cancelled request still goes out on its open stream"},
	FaultNoProtocolVersionCheck:        {[]string{"HTTP-59"}, "an unsupported MCP-Protocol-Version header is ignored instead of refused with 400"},
	FaultProgressOnGETStream:           {[]string{"HTTP-31", "HTTP-22"}, "progress of POSTed calls goes on the open GET stream instead of the call's own stream"},
	FaultNoPrimingEvent:                {[]string{"HTTP-16"}, "SSE answers start without a priming event"},
	FaultSessionIDInvisible:            {[]string{"HTTP-48"}, "session IDs hold a space and non-ASCII bytes, outside visible ASCII"},
	FaultRejectValidLevel:              {[]string{"LOG-2"}, "logging/setLevel refuses the valid level \"notice\" with -32602"},
	FaultAcceptInvalidLevel:            {[]string{"LOG-6"}, "logging/setLevel accepts an unknown level instead of -32602"},
	FaultBadMessageShape:               {[]string{"LOG-2"}, "notifications/message with level \"WARN\" and no data (schema LoggingMessageNotification)"},
	FaultLogAfterCancel:                {[]string{"CAN-8"}, "a cancelled operation keeps logging after the cancel"},
	FaultTaskListNotObject:             {[]string{"TSK-2"}, "capabilities.tasks.list is true instead of an object"},
	FaultTaskSupportMissing:            {[]string{"TSK-8"}, "tools/list gives task_worker no execution.taskSupport"},
	FaultRequiredTaskRunsPlain:         {[]string{"TSK-12"}, "task_worker called without a task gets an isError result instead of -32601"},
	FaultForbiddenRunsPlain:            {[]string{"TSK-9"}, "a forbidden-task tool called as a task runs as an ordinary call instead of -32601"},
	FaultTaskWithoutTTL:                {[]string{"TSK-41"}, "task objects have no ttl member"},
	FaultLastUpdatedBeforeCreated:      {[]string{"TSK-39"}, "lastUpdatedAt is a second before createdAt"},
	FaultSequentialTaskIDs:             {[]string{"TSK-81"}, "task IDs count up across the server: task-1, task-2, ..."},
	FaultCompletedTaskReopens:          {[]string{"TSK-31"}, "the second tasks/get after a task completed says working again"},
	FaultCancelAnswersBeforeTransition: {[]string{"TSK-64"}, "tasks/cancel answers with the task still working and cancels it after"},
	FaultIsErrorCompletesTask:          {[]string{"TSK-76"}, "a task whose tool result has isError ends completed, not failed"},
	FaultFailedResultNotError:          {[]string{"TSK-77"}, "tasks/result of a task whose request failed with a JSON-RPC error answers a result instead"},
	FaultResultAnswersEarly:            {[]string{"TSK-47"}, "tasks/result of a working task is answered at once with -32602 instead of blocking"},
	FaultUnknownTaskInternalError:      {[]string{"TSK-68"}, "a task ID that names no task gets -32603 instead of -32602"},
	FaultRelatedTaskMetaWins:           {[]string{"TSK-51", "TSK-52"}, "the task methods take the task from the related-task _meta over params.taskId"},
	FaultBogusCursorAccepted:           {[]string{"TSK-69"}, "tasks/list with a cursor it never issued answers the first page instead of -32602"},
	FaultStatusNotificationMeta:        {[]string{"TSK-58"}, "notifications/tasks/status carries related-task _meta"},
	FaultTaskProgressOtherToken:        {[]string{"PRG-10", "PRG-7"}, "a task's progress after its CreateTaskResult carries another token than the request's"},
	FaultTaskCancelledUnprompted:       {[]string{"TSK-D1"}, "a task ends cancelled right after its CreateTaskResult, with nobody cancelling it"},
}

// Breaks returns the requirement IDs the fault is documented to break;
// nil for a string that names no fault.
func (f Fault) Breaks() []string {
	if r, ok := fault2026Row(f); ok {
		return slices.Clone(r.reqs)
	}
	d, _ := docOf(f)
	return slices.Clone(d.breaks)
}

// Description is a one-line description of what the fault does and the
// requirements it breaks (Breaks); it is empty for a string that names no
// fault.
func (f Fault) Description() string {
	if r, ok := fault2026Row(f); ok {
		does, _, _ := strings.Cut(r.description, " (")
		return does + " (" + strings.Join(r.reqs, ", ") + ")"
	}
	d, ok := docOf(f)
	if !ok {
		return ""
	}
	return d.does + " (" + strings.Join(d.breaks, ", ") + ")"
}

// ParseFault returns the fault named s (its flag value), or an error that
// lists the valid names.
func ParseFault(s string) (Fault, error) {
	f := Fault(strings.TrimSpace(s))
	if f.Description() != "" {
		return f, nil
	}
	names := make([]string, 0, len(AllFaults()))
	for _, f := range AllFaults() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("refserver: unknown fault %q (valid: %s)", s, strings.Join(names, ", "))
}

// FaultSet is a set of faults; a nil set is the conforming server.
type FaultSet map[Fault]bool

// Has reports whether f is in the set. It is safe on a nil set.
func (fs FaultSet) Has(f Fault) bool { return fs[f] }
