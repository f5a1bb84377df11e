package cases_test

import (
	"testing"

	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/spec"
)

// killer is one row of the killer table: a fault of the reference
// server, the revision the catalogue runs under, where the row runs, and
// the cases that must catch the fault there (fail or warn, citing a
// requirement the fault breaks). A case may catch more faults than
// listed; it may never end in error under a fault.
type killer struct {
	fault refserver.Fault
	// revision is the revision the catalogue runs under: the fault's own
	// (its row in refserver's fault table), or 2026-07-28 for a
	// 2025-11-25 fault whose behaviour breaks a rule 2026-07-28 words on
	// its own (breaks then names those rules).
	revision string
	// on is where the row runs: refserver.OnAny over stdio (in process)
	// and Streamable HTTP, OnStdio or OnHTTP alone. Over HTTP the cases
	// of the stdio area, those that skip there under 2026-07-28
	// (skipsOverHTTP2026) and those lostOverHTTP excuses are not held to
	// catch the fault.
	on string
	// cases must catch the fault in the row.
	cases []string
	// breaks are the requirements the fault breaks under revision when
	// they are not its own (refserver.Fault.Breaks): the first is one
	// some case must fail citing. Nil for the fault's own.
	breaks []string
}

// killerTable is the mutation matrix's one table of fault, revision,
// transport and cases, in the order of refserver.AllFaults. Adding a
// fault is its row here (TestKillerTable fails on a fault without one).
var killerTable = []killer{
	{refserver.FaultRespondAfterCancel, spec.V20251125, refserver.OnAny, []string{"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes"}, nil},
	// CAN-54 MUST NOT (stdio, 2026-07-28): after notifications/cancelled
	// the server sends nothing more for the request, the response
	// included; CAN-48 is CAN-8 in 2026-07-28's words, which the counters
	// show where the cancel crossed the work (StopWorkRule).
	{refserver.FaultRespondAfterCancel, spec.V20260728, refserver.OnStdio, []string{"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes", "cancel/no-further-message-after-progress", "cancel/no-further-message-before-progress"}, []string{"CAN-54", "CAN-48"}},
	{refserver.FaultProgressAfterCancel, spec.V20251125, refserver.OnAny, []string{"cancel/mid-work-no-progress", "cancel/before-first-progress"}, nil},
	// CAN-54 again: one more progress notification for the cancelled
	// request, which 2026-07-28 forbids on stdio as a MUST NOT.
	{refserver.FaultProgressAfterCancel, spec.V20260728, refserver.OnStdio, []string{"cancel/mid-work-no-progress", "cancel/before-first-progress"}, []string{"CAN-54"}},
	{refserver.FaultProgressAfterResponse, spec.V20251125, refserver.OnAny, []string{"progress/none-after-response"}, nil},
	{refserver.FaultNonIncreasingProgress, spec.V20251125, refserver.OnAny, []string{"progress/strictly-increasing", "progress/fractional-total"}, nil},
	{refserver.FaultWrongToken, spec.V20251125, refserver.OnAny, []string{"progress/token-echo-string", "progress/token-echo-integer", "progress/token-zero", "progress/interleaved-tokens", "progress/token-independent-of-id"}, nil},
	{refserver.FaultProgressWithoutToken, spec.V20251125, refserver.OnAny, []string{"progress/none-without-token"}, nil},
	{refserver.FaultErrorOnNotification, spec.V20251125, refserver.OnAny, []string{"rpc/no-response-to-notifications", "cancel/after-completion", "cancel/unknown-id-ignored", "cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params", "cancel/extra-fields", "cancel/crossing-response"}, nil},
	{refserver.FaultCrashOnMalformedCancel, spec.V20251125, refserver.OnAny, []string{"cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params"}, nil},
	{refserver.FaultCancelUnknownHitsOther, spec.V20251125, refserver.OnAny, []string{"cancel/unknown-id-ignored"}, nil},
	{refserver.FaultLeakOnCancel, spec.V20251125, refserver.OnAny, []string{"cancel/cleanup-exactly-once", "cancel/duplicate"}, nil},
	{refserver.FaultDoubleCleanup, spec.V20251125, refserver.OnAny, []string{"cancel/cleanup-exactly-once", "cancel/duplicate"}, nil},
	{refserver.FaultIDTypeConfusion, spec.V20251125, refserver.OnAny, []string{"rpc/string-and-integer-ids", "cancel/string-vs-integer-target"}, nil},
	{refserver.FaultIDZeroAbsent, spec.V20251125, refserver.OnAny, []string{"rpc/id-zero", "cancel/id-zero"}, nil},
	{refserver.FaultStaleToken, spec.V20251125, refserver.OnAny, []string{"progress/token-reuse-after-cleanup"}, nil},
	{refserver.FaultStdoutNoise, spec.V20251125, refserver.OnStdio, []string{"stdio/stdout-only-messages"}, nil},
	{refserver.FaultPingBroken, spec.V20251125, refserver.OnAny, []string{"ping/empty-result"}, nil},
	{refserver.FaultIgnoreStdinEOF, spec.V20251125, refserver.OnStdio, []string{"stdio/teardown-on-stdin-close"}, nil},
	{refserver.FaultVersionMismatch, spec.V20251125, refserver.OnAny, []string{"lifecycle/version-echo", "lifecycle/unsupported-version"}, nil},
	{refserver.FaultLogLevelIgnored, spec.V20251125, refserver.OnAny, []string{"logging/level-filter"}, nil},
	{refserver.FaultHangAfterCancel, spec.V20251125, refserver.OnAny, []string{"cancel/cleanup-exactly-once", "cancel/mid-work-no-response", "cancel/handler-stops"}, nil},
	{refserver.FaultCancelDoesNotStopWorker, spec.V20251125, refserver.OnAny, []string{"tasks/worker-stops-after-cancel"}, nil},
	{refserver.FaultStatusChangesAfterCancelled, spec.V20251125, refserver.OnAny, []string{"tasks/cancelled-stays-cancelled"}, nil},
	{refserver.FaultCancelTerminalSucceeds, spec.V20251125, refserver.OnAny, []string{"tasks/second-cancel-rejected", "tasks/cancel-completed-rejected"}, nil},
	{refserver.FaultResultHangsAfterCancel, spec.V20251125, refserver.OnAny, []string{"tasks/result-answered-after-cancel"}, nil},
	{refserver.FaultNotificationCancelsTask, spec.V20251125, refserver.OnAny, []string{"tasks/notification-does-not-cancel"}, nil},
	{refserver.FaultMissingRelatedTaskMeta, spec.V20251125, refserver.OnAny, []string{"tasks/result-equivalence"}, nil},
	{refserver.FaultListLeaksOtherSessions, spec.V20251125, refserver.OnAny, []string{"tasks/list-isolation"}, nil},
	{refserver.FaultPollIntervalIgnored, spec.V20251125, refserver.OnAny, []string{"tasks/poll-interval"}, nil},
	{refserver.FaultCancelOnDisconnect, spec.V20251125, refserver.OnHTTP, []string{"http/disconnect-is-not-cancel"}, nil},
	// A stream without event IDs cannot be resumed, so the drop's
	// outcome is judged by the server's own account: the control
	// extension's operation state, or the observer without it.
	{refserver.FaultUnresumableCancelOnDisconnect, spec.V20251125, refserver.OnHTTP, []string{"http/disconnect-is-not-cancel", "http/priming-event"}, nil},
	{refserver.FaultReplayCrossesStreams, spec.V20251125, refserver.OnHTTP, []string{"http/replay-only-disconnected-stream"}, nil},
	{refserver.FaultLoseEventsOnResume, spec.V20251125, refserver.OnHTTP, []string{"http/resume-after-completion"}, nil},
	{refserver.FaultDuplicateEventIDs, spec.V20251125, refserver.OnHTTP, []string{"http/event-ids-unique"}, nil},
	{refserver.FaultNoSessionCheck, spec.V20251125, refserver.OnHTTP, []string{"http/session-id-required", "http/unknown-session-404", "http/delete-then-404-then-new-session"}, nil},
	{refserver.FaultNoOriginCheck, spec.V20251125, refserver.OnHTTP, []string{"http/origin-forbidden"}, nil},
	{refserver.FaultJSONBodyForNotification, spec.V20251125, refserver.OnHTTP, []string{"http/notification-202-no-body", "http/cancel-202-then-no-response"}, nil},
	// HTTP-86 MUST: a POSTed notification is answered 202 with no body in
	// 2026-07-28 too; the fault answers notifications/cancelled with 200
	// and "{}".
	{refserver.FaultJSONBodyForNotification, spec.V20260728, refserver.OnHTTP, []string{"http26/cancel-notification-202"}, []string{"HTTP-86", "RPC-2"}},
	{refserver.FaultResponseAfterCancelOnStream, spec.V20251125, refserver.OnHTTP, []string{"http/cancel-202-then-no-response"}, nil},
	{refserver.FaultNoProtocolVersionCheck, spec.V20251125, refserver.OnHTTP, []string{"http/protocol-version-header-invalid"}, nil},
	{refserver.FaultProgressOnGETStream, spec.V20251125, refserver.OnHTTP, []string{"http/get-stream-carries-no-call-messages"}, nil},
	{refserver.FaultNoPrimingEvent, spec.V20251125, refserver.OnHTTP, []string{"http/priming-event"}, nil},
	{refserver.FaultSessionIDInvisible, spec.V20251125, refserver.OnHTTP, []string{"http/session-id-visible-ascii", "http/delete-then-404-then-new-session"}, nil},
	{refserver.FaultRejectValidLevel, spec.V20251125, refserver.OnAny, []string{"logging/every-level-accepted"}, nil},
	{refserver.FaultAcceptInvalidLevel, spec.V20251125, refserver.OnAny, []string{"logging/invalid-level-rejected"}, nil},
	{refserver.FaultBadMessageShape, spec.V20251125, refserver.OnAny, []string{"logging/message-shape"}, nil},
	{refserver.FaultLogAfterCancel, spec.V20251125, refserver.OnAny, []string{"logging/no-flood-after-cancel"}, nil},
	// CAN-54 again: logging for the cancelled request after the cancel.
	{refserver.FaultLogAfterCancel, spec.V20260728, refserver.OnStdio, []string{"logging/no-flood-after-cancel"}, []string{"CAN-54"}},
	{refserver.FaultTaskListNotObject, spec.V20251125, refserver.OnStdio, []string{"tasks/capability-shape"}, nil},
	{refserver.FaultTaskSupportMissing, spec.V20251125, refserver.OnStdio, []string{"tasks/tool-task-support"}, nil},
	{refserver.FaultRequiredTaskRunsPlain, spec.V20251125, refserver.OnStdio, []string{"tasks/required-without-task"}, nil},
	{refserver.FaultForbiddenRunsPlain, spec.V20251125, refserver.OnStdio, []string{"tasks/forbidden-with-task"}, nil},
	{refserver.FaultTaskWithoutTTL, spec.V20251125, refserver.OnStdio, []string{"tasks/create-result-shape", "tasks/timestamps-monotonic"}, nil},
	{refserver.FaultLastUpdatedBeforeCreated, spec.V20251125, refserver.OnStdio, []string{"tasks/create-result-shape", "tasks/timestamps-monotonic"}, nil},
	{refserver.FaultSequentialTaskIDs, spec.V20251125, refserver.OnStdio, []string{"tasks/unguessable-ids"}, nil},
	{refserver.FaultCompletedTaskReopens, spec.V20251125, refserver.OnStdio, []string{"tasks/status-transitions"}, nil},
	{refserver.FaultCancelAnswersBeforeTransition, spec.V20251125, refserver.OnStdio, []string{"tasks/cancel-working"}, nil},
	{refserver.FaultIsErrorCompletesTask, spec.V20251125, refserver.OnStdio, []string{"tasks/iserror-fails-task"}, nil},
	{refserver.FaultFailedResultNotError, spec.V20251125, refserver.OnStdio, []string{"tasks/result-error-equivalence"}, nil},
	{refserver.FaultResultAnswersEarly, spec.V20251125, refserver.OnStdio, []string{"tasks/result-blocks-while-working"}, nil},
	{refserver.FaultUnknownTaskInternalError, spec.V20251125, refserver.OnStdio, []string{"tasks/unknown-id"}, nil},
	{refserver.FaultRelatedTaskMetaWins, spec.V20251125, refserver.OnStdio, []string{"tasks/task-id-is-source-of-truth"}, nil},
	{refserver.FaultBogusCursorAccepted, spec.V20251125, refserver.OnStdio, []string{"tasks/list-pagination"}, nil},
	{refserver.FaultStatusNotificationMeta, spec.V20251125, refserver.OnStdio, []string{"tasks/status-notifications"}, nil},
	{refserver.FaultTaskProgressOtherToken, spec.V20251125, refserver.OnStdio, []string{"tasks/progress-token-lifetime"}, nil},
	{refserver.FaultTaskCancelledUnprompted, spec.V20251125, refserver.OnStdio, []string{"tasks/not-cancelled-unprompted"}, nil},
	{refserver.FaultDieOnMalformedInput, spec.V20251125, refserver.OnAny, []string{"robust/not-json", "robust/truncated-then-valid", "robust/empty-batch", "robust/non-object", "robust/wrong-version"}, nil},
	{refserver.FaultParseErrorWithID, spec.V20251125, refserver.OnAny, []string{"robust/not-json", "robust/truncated-then-valid"}, nil},
	{refserver.FaultTruncatedSwallowsNext, spec.V20251125, refserver.OnAny, []string{"robust/truncated-then-valid"}, nil},
	{refserver.FaultDuplicateIDDropsFirst, spec.V20251125, refserver.OnAny, []string{"robust/duplicate-inflight-id"}, nil},
	{refserver.FaultMissingTaskIDInternalError, spec.V20251125, refserver.OnAny, []string{"robust/params-task-id"}, nil},
	{refserver.FaultIllTypedCursorAccepted, spec.V20251125, refserver.OnAny, []string{"robust/params-tasks-list-cursor"}, nil},
	{refserver.FaultMissingLevelInternalError, spec.V20251125, refserver.OnAny, []string{"robust/params-set-level"}, nil},
	{refserver.FaultMuteAfterNamelessCall, spec.V20251125, refserver.OnAny, []string{"robust/params-tools-call"}, nil},
	{refserver.FaultMuteAfterIllTypedToolsCursor, spec.V20251125, refserver.OnAny, []string{"robust/params-tools-list-cursor"}, nil},
	{refserver.FaultNoResultType, spec.V20260728, refserver.OnAny, []string{"rpc/result-type-on-every-result", "rpc/tools-list-schema"}, nil},
	{refserver.FaultNoServerInfo, spec.V20260728, refserver.OnAny, []string{"rpc/server-info-in-meta"}, nil},
	{refserver.FaultDiscoverMissingVersion, spec.V20260728, refserver.OnAny, []string{"lifecycle/initialize-agrees-to-listed-revision"}, nil},
	{refserver.FaultWrongVersionError, spec.V20260728, refserver.OnAny, []string{"versioning/unknown-revision"}, nil},
	{refserver.FaultEnvelopeNotChecked, spec.V20260728, refserver.OnAny, []string{"envelope/missing-required-field"}, nil},
	{refserver.FaultStickyCapabilities, spec.V20260728, refserver.OnAny, []string{"tasks26/capabilities-per-request"}, nil},
	{refserver.FaultStickyVersion, spec.V20260728, refserver.OnStdio, []string{"versioning/unknown-revision"}, nil},
	{refserver.FaultTaskForUndeclaredClient, spec.V20260728, refserver.OnAny, []string{"tasks26/undeclared-call-no-task"}, nil},
	{refserver.FaultTaskMethodsWithoutCapability, spec.V20260728, refserver.OnAny, []string{"tasks26/methods-need-extension"}, nil},
	{refserver.FaultHeaderMismatchAccepted, spec.V20260728, refserver.OnHTTP, []string{"http26/header-mismatch-400", "tasks26/mcp-name-task-id"}, nil},
	{refserver.FaultPingOn2026, spec.V20260728, refserver.OnAny, []string{"rpc/removed-methods"}, nil},
	{refserver.FaultTasksResultOn2026, spec.V20260728, refserver.OnAny, []string{"tasks26/removed-methods"}, nil},
	{refserver.FaultUnknownMethod200, spec.V20260728, refserver.OnHTTP, []string{"http26/unknown-method-404", "tasks26/removed-methods"}, nil},
	{refserver.FaultStreamCloseNotCancel, spec.V20260728, refserver.OnHTTP, []string{"http26/stream-close-cancels-during-progress", "http26/stream-close-cancels-silent-handler"}, nil},
	{refserver.FaultLogWithoutLevel, spec.V20260728, refserver.OnAny, []string{"logging/none-without-level"}, nil},
	{refserver.FaultLogBelowLevel, spec.V20260728, refserver.OnAny, []string{"logging/request-level-filter"}, nil},
	{refserver.FaultAcceptUnknownLogLevel, spec.V20260728, refserver.OnAny, []string{"logging/unknown-level-rejected"}, nil},
	{refserver.FaultListenLogs, spec.V20260728, refserver.OnAny, []string{"logging/none-on-listen-stream"}, nil},
	{refserver.FaultListenNoAck, spec.V20260728, refserver.OnAny, []string{"subscriptions/acknowledged-first"}, nil},
	{refserver.FaultListenNoSubscriptionID, spec.V20260728, refserver.OnAny, []string{"subscriptions/subscription-id"}, nil},
	{refserver.FaultListenUnrequested, spec.V20260728, refserver.OnAny, []string{"subscriptions/only-requested", "tasks26/status-on-listen-stream"}, nil},
	{refserver.FaultTeardownSilent, spec.V20260728, refserver.OnAny, []string{"subscriptions/teardown-signal"}, nil},
	{refserver.FaultServerSendsCancelled, spec.V20260728, refserver.OnStdio, []string{"cancel/server-sends-no-cancelled", "cancel/no-further-message-after-progress", "cancel/no-further-message-before-progress"}, nil},
	{refserver.FaultRequestOnStdout, spec.V20260728, refserver.OnStdio, []string{"stdio/no-requests-on-stdout"}, nil},
	{refserver.FaultProgressCrossesStreams, spec.V20260728, refserver.OnHTTP, []string{"progress/interleaved-tokens", "progress/token-independent-of-id"}, nil},
	{refserver.FaultLogCrossesStreams, spec.V20260728, refserver.OnHTTP, []string{"progress/interleaved-tokens"}, nil},
	{refserver.FaultTaskCancelErrorOnTerminal, spec.V20260728, refserver.OnAny, []string{"tasks26/cancel-acknowledged"}, nil},
	{refserver.FaultCreateBeforeDurable, spec.V20260728, refserver.OnAny, []string{"tasks26/declared-call-gets-durable-task"}, nil},
	{refserver.FaultIsErrorTaskFailed, spec.V20260728, refserver.OnAny, []string{"tasks26/iserror-completes"}, nil},
	{refserver.FaultTaskResultNotInlined, spec.V20260728, refserver.OnAny, []string{"tasks26/get-inlines-terminal-result"}, nil},
	{refserver.FaultGetTaskResultTypeTask, spec.V20260728, refserver.OnAny, []string{"tasks26/get-inlines-terminal-result"}, nil},
	{refserver.FaultTaskUpdateRejectsUnknownKey, spec.V20260728, refserver.OnAny, []string{"tasks26/update-unknown-key-acknowledged"}, nil},
	{refserver.FaultNoAccelBuffering, spec.V20260728, refserver.OnHTTP, []string{"http26/sse-accel-buffering"}, nil},
	{refserver.FaultEventIDsOn2026, spec.V20260728, refserver.OnHTTP, []string{"http26/sse-no-event-ids"}, nil},
	{refserver.FaultSessionOn2026, spec.V20260728, refserver.OnHTTP, []string{"http26/no-session-minted", "http26/legacy-headers-ignored"}, nil},
	{refserver.FaultGetOn2026, spec.V20260728, refserver.OnHTTP, []string{"http26/get-delete-405"}, nil},
	{refserver.FaultStreamStaysOpen, spec.V20260728, refserver.OnHTTP, []string{"http26/response-ends-stream"}, nil},
	{refserver.FaultInitializeErrorWithoutVersions, spec.V20260728, refserver.OnAny, []string{"lifecycle/initialize-error-names-versions"}, nil},
	{refserver.FaultExtTaskIDInternalError, spec.V20260728, refserver.OnAny, []string{"robust/params-task-id-ext"}, nil},
	{refserver.FaultListenBadFilterCrash, spec.V20260728, refserver.OnStdio, []string{"robust/params-listen"}, nil},
}

// TestKillerTable checks the killer table against refserver's fault
// table without running the matrix (checkKillerTable).
func TestKillerTable(t *testing.T) { checkKillerTable(t) }
