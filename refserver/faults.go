package refserver

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

// FaultSet is a set of faults; a nil set is the conforming server.
type FaultSet map[Fault]bool

// Has reports whether f is in the set. It is safe on a nil set.
func (fs FaultSet) Has(f Fault) bool { return fs[f] }
