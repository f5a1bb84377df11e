package refserver

import "github.com/mcpflight/mcpflight/spec"

// faultTable is every fault of the reference server, one row each, in a
// stable order: the one place a fault is described (FaultSpec). Adding a
// fault is its constant (beside the behaviour that has it), its row here,
// and that behaviour; adding a case is its row in the catalogue and its
// place here, as a killer of a fault or in unkillableCases
// (docs/contributing.md).
var faultTable = []FaultSpec{
	{
		Fault: FaultRespondAfterCancel, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-8"},
		Does:   "a cancelled operation still sends its result when woken",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes"}, nil},
			// CAN-54 MUST NOT (stdio, 2026-07-28): after notifications/cancelled
			// the server sends nothing more for the request, the response
			// included; CAN-48 is CAN-8 in 2026-07-28's words, which the counters
			// show where the cancel crossed the work (StopWorkRule).
			{spec.V20260728, OnStdio, []string{"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes", "cancel/no-further-message-after-progress", "cancel/no-further-message-before-progress"}, []string{"CAN-54", "CAN-48"}},
		},
		ObserverKillers: []string{"cancel/handler-stops"},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("cancel-no-response", "CAN-8")},
			{Transport: ExploreStdio, Finds: finds("cancel-no-response", "CAN-8")},
			{Transport: ExploreHTTP, Finds: finds("cancel-no-response", "CAN-8")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("cancel-no-response", "CAN-54")},
			{Transport: ExploreStdio, Revision: spec.V20260728, Finds: finds("cancel-no-response", "CAN-54")},
			{Transport: ExploreHTTP, Revision: spec.V20260728, Excluded: unexploredClosedStream},
		},
	},
	{
		Fault: FaultProgressAfterCancel, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-8"},
		Does:   "a cancelled operation sends one more progress notification, then stops without a response",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/mid-work-no-progress", "cancel/before-first-progress"}, nil},
			// CAN-54 again: one more progress notification for the cancelled
			// request, which 2026-07-28 forbids on stdio as a MUST NOT.
			{spec.V20260728, OnStdio, []string{"cancel/mid-work-no-progress", "cancel/before-first-progress"}, []string{"CAN-54"}},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("cancel-no-progress", "CAN-8")},
			{Transport: ExploreStdio, Finds: finds("cancel-no-progress", "CAN-8")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("cancel-no-progress", "CAN-54")},
			{Transport: ExploreStdio, Revision: spec.V20260728, Finds: finds("cancel-no-progress", "CAN-54")},
			{Transport: ExploreHTTP, Revision: spec.V20260728, Excluded: unexploredClosedStream},
		},
	},
	{
		Fault: FaultProgressAfterResponse, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"PRG-14"},
		Does:   "one progress notification follows the final response",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"progress/none-after-response"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("no-progress-after-end", "PRG-14")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("no-progress-after-end", "PRG-14")},
		},
	},
	{
		Fault: FaultNonIncreasingProgress, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"PRG-4"},
		Does:   "step 2 repeats the progress value of step 1",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"progress/strictly-increasing", "progress/fractional-total"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("progress-increasing", "PRG-4")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("progress-increasing", "PRG-4")},
			{Transport: ExploreHTTP, Revision: spec.V20260728, Finds: finds("progress-increasing", "PRG-4")},
		},
	},
	{
		Fault: FaultWrongToken, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"PRG-7"},
		Does:   "progress carries the token with its JSON type flipped: \"7\" for 7, 7 for \"7\"",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"progress/token-echo-string", "progress/token-echo-integer", "progress/token-zero", "progress/interleaved-tokens", "progress/token-independent-of-id"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("progress-token-known", "PRG-7")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("progress-token-known", "PRG-7")},
		},
	},
	{
		Fault: FaultProgressWithoutToken, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"PRG-7"},
		Does:   "progress is sent with the invented token \"mcpflight-invented\" when none was given",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"progress/none-without-token"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("progress-token-known", "PRG-7")},
		},
	},
	{
		Fault: FaultErrorOnNotification, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"RPC-15", "HTTP-11"},
		Does:   "every notification is answered with an error response with id null (over HTTP the POST's answer, where a 202 with no body belongs)",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"rpc/no-response-to-notifications", "cancel/after-completion", "cancel/unknown-id-ignored", "cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params", "cancel/extra-fields", "cancel/crossing-response"}, nil},
		},
		LostOverHTTP: []Excuse{
			{"cancel/crossing-response",
				"over HTTP the response usually wins the race on its own stream, so no cancel is sent for the " +
					"fault to answer"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("no-response-to-notification", "RPC-15")},
		},
	},
	{
		Fault: FaultCrashOnMalformedCancel, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-14"},
		Does:   "a cancel without a valid requestId makes the server stop with an error",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("session-usable", "CAN-14")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("session-usable", "CAN-14")},
		},
	},
	{
		Fault: FaultCancelUnknownHitsOther, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-14"},
		Does:   "a cancel for an unknown request id cancels the most recent running operation",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/unknown-id-ignored"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("one-response", "CAN-14")},
			{Transport: ExploreInProcess, Revision: spec.V20260728,
				Excluded: "the reference server applies it to the calls of a 2025-11-25 session only " +
					"(refserver/session.go); its 2025-11-25 row finds it"},
		},
	},
	{
		Fault: FaultLeakOnCancel, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-8"},
		Does:   "a cancelled operation never releases its resource nor stops counting as active",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/cleanup-exactly-once", "cancel/duplicate"}, nil},
		},
		MissedWithoutControl: []ModeExcuse{
			{EvidenceBoth, "cancel/duplicate",
				"the fault is in the server's cleanup counters (a resource never released), which only the " +
					"control extension reads: the wire sees the cancel honoured"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("cleanup-once", "CAN-8")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("cleanup-once", "CAN-48")},
			{Transport: ExploreHTTP, Revision: spec.V20260728, Finds: finds("cleanup-once", "CAN-48")},
		},
	},
	{
		Fault: FaultDoubleCleanup, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-8"},
		Does:   "a cancelled operation releases its resource twice",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/cleanup-exactly-once", "cancel/duplicate"}, nil},
		},
		MissedWithoutControl: []ModeExcuse{
			{EvidenceBoth, "cancel/duplicate",
				"the fault is in the server's cleanup counters (a resource released twice), which only the " +
					"control extension reads: the wire sees the cancel honoured"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("cleanup-once", "CAN-8")},
		},
	},
	{
		Fault: FaultIDTypeConfusion, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"RPC-8"},
		Does:   "request ids are keyed by their text, so \"5\" and 5 collide, and integer-like string ids are echoed as integers",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"rpc/string-and-integer-ids", "cancel/string-vs-integer-target"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("one-response", "RPC-8"), Deadline: true, Present: true},
		},
	},
	{
		Fault: FaultIDZeroAbsent, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"RPC-4"},
		Does:   "a request with id 0 is taken for a notification and never answered",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"rpc/id-zero", "cancel/id-zero"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("one-response", "PNG-1"), Deadline: true},
		},
	},
	{
		Fault: FaultStaleToken, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"PRG-2", "PRG-12"},
		Does:   "a progress token stays live after its request completes; reusing it is refused with -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"progress/token-reuse-after-cleanup"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("token-reusable", "PRG-2")},
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("token-reusable", "PRG-41")},
		},
	},
	{
		Fault: FaultStdoutNoise, Revision: spec.V20251125, On: OnStdio,
		Breaks: []string{"STD-4"},
		Does:   "a non-JSON banner line is written to the output before anything else",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"stdio/stdout-only-messages"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("frames-well-formed", "STD-4")},
		},
	},
	{
		Fault: FaultPingBroken, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"PNG-1"},
		Does:   "ping is answered with error -32603",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"ping/empty-result"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("session-usable", "PNG-1")},
			{Transport: ExploreInProcess, Revision: spec.V20260728,
				Excluded: "2026-07-28 removed ping (PNG-40): server/discover is the explorer's liveness check there"},
		},
	},
	{
		Fault: FaultIgnoreStdinEOF, Revision: spec.V20251125, On: OnStdio,
		Breaks: []string{"STD-7", "STD-46"},
		Does:   "the end of the input is ignored: the server keeps running until it is stopped",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"stdio/teardown-on-stdin-close"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Ops: 100,
				Excluded: "the server does not exit when its input ends: a teardown grade (STD-46 is a 2026-07-28 SHOULD; " +
					"check grades the teardown of every case), not a rule of the history; the explorer's close " +
					"waits for it, at most the operation timeout"},
		},
	},
	{
		Fault: FaultVersionMismatch, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"LIF-9", "LIF-10"},
		Does:   "initialize answers protocolVersion \"1999-01-01\"",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"lifecycle/version-echo", "lifecycle/unsupported-version"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "the handshake fails, so no session and no history: explore reports it as a target error, and " +
					"check's lifecycle cases judge LIF-9 and LIF-10"},
		},
	},
	{
		Fault: FaultLogLevelIgnored, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"LOG-4"},
		Does:   "the log tool ignores the level set by logging/setLevel",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"logging/level-filter"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredLogging},
		},
	},
	{
		Fault: FaultHangAfterCancel, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-8"},
		Does:   "a cancelled operation stops its output but never ends: it keeps its resource and never reaches KEY/end",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"cancel/cleanup-exactly-once", "cancel/mid-work-no-response", "cancel/handler-stops"}, nil},
		},
		ObserverKillers: []string{"cancel/handler-stops"},
		MissedWithoutControl: []ModeExcuse{
			{EvidenceBoth, "cancel/mid-work-no-response",
				"the fault keeps the cancelled handler alive without writing: on the wire that is a cancel " +
					"honoured, no response; the counters show it, and so does the observer (cancel/handler-stops " +
					"catches the fault in the observer mode)"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("cleanup-once", "CAN-8"), Deadline: true},
		},
	},
	{
		Fault: FaultCancelDoesNotStopWorker, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-64"},
		Does:   "tasks/cancel marks the task cancelled but its worker keeps ticking",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/worker-stops-after-cancel"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: []Finding{{"no-progress-after-end", []string{"PRG-11"}}, {"task-worker-stops", []string{"TSK-64"}}}},
		},
	},
	{
		Fault: FaultStatusChangesAfterCancelled, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-65", "TSK-31"},
		Does:   "a cancelled task's worker overwrites the cancelled status with its own end",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/cancelled-stays-cancelled"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-terminal-stable", "TSK-65", "TSK-31")},
		},
	},
	{
		Fault: FaultCancelTerminalSucceeds, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-63"},
		Does:   "tasks/cancel of a terminal task succeeds and overwrites its status instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/second-cancel-rejected", "tasks/cancel-completed-rejected"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-cancel-terminal", "TSK-63")},
		},
	},
	{
		Fault: FaultResultHangsAfterCancel, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-47"},
		Does:   "a tasks/result blocked on a task that is then cancelled is never answered",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/result-answered-after-cancel"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("one-response", "TSK-46"), Deadline: true},
		},
	},
	{
		Fault: FaultNotificationCancelsTask, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"CAN-4"},
		Does:   "notifications/cancelled for the request that created a task cancels the task",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/notification-does-not-cancel"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-not-cancelled-by-notification", "CAN-4")},
		},
	},
	{
		Fault: FaultMissingRelatedTaskMeta, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-55"},
		Does:   "the tasks/result response lacks io.modelcontextprotocol/related-task _meta",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/result-equivalence"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-result-equivalent", "TSK-55")},
		},
	},
	{
		Fault: FaultListLeaksOtherSessions, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-84"},
		Does:   "tasks/list also returns other sessions' tasks",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/list-isolation"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-list-own", "TSK-84")},
		},
	},
	{
		Fault: FaultPollIntervalIgnored, Revision: spec.V20251125, On: OnAny,
		Breaks: []string{"TSK-43", "TSK-16"},
		Does:   "task responses advertise pollInterval 0, inviting a busy poll",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"tasks/poll-interval"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "pollInterval is advice to the requestor (TSK-43: MAY, and SHOULD respect); no rule of the " +
					"history forbids 0, and check's tasks cases judge it"},
		},
	},
	{
		Fault: FaultCancelOnDisconnect, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-25"},
		Does:   "dropping a request's SSE stream cancels the request",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/disconnect-is-not-cancel", "http/resume-while-running"}, nil},
		},
		ObserverKillers: []string{"http/disconnect-is-not-cancel"},
		Collateral: []Collateral{
			{"http/resume-while-running", "HTTP-21",
				"without the control extension the case cannot tell a disconnection taken for a cancel " +
					"from a resumption that loses the call's messages: nothing of the call comes on the " +
					"resumed stream either way, and its warn names both (HTTP-25, HTTP-21)"},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("one-response", "HTTP-25")},
		},
	},
	{
		Fault: FaultUnresumableCancelOnDisconnect, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-25", "HTTP-16"},
		Does:   "a request's SSE stream carries no event IDs (so no priming event) and dropping it cancels the request",
		Killers: []KillerRow{
			// A stream without event IDs cannot be resumed, so the drop's
			// outcome is judged by the server's own account: the control
			// extension's operation state, or the observer without it.
			{spec.V20251125, OnHTTP, []string{"http/disconnect-is-not-cancel", "http/priming-event"}, nil},
		},
		MissedWithoutControl: []ModeExcuse{
			// Only the observer shows what became of a call whose stream can be
			// neither kept nor resumed.
			{EvidenceWire, "http/disconnect-is-not-cancel",
				"the dropped stream carried no event ID, so nothing can be resumed, and without an observer " +
					"nothing on the wire shows whether the handler ran on or was cancelled (the observer mode " +
					"catches the fault)"},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("http-stream-primed", "HTTP-16"), Deadline: true, Present: true},
		},
	},
	{
		Fault: FaultReplayCrossesStreams, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-44"},
		Does:   "a resume with Last-Event-ID also replays other streams' events",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/replay-only-disconnected-stream"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("http-replay-own-stream", "HTTP-44")},
		},
	},
	{
		Fault: FaultLoseEventsOnResume, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-43", "HTTP-21"},
		Does:   "a resume with Last-Event-ID skips the events sent while the client was away",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/resume-after-completion"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("one-response", "HTTP-21"), Deadline: true, Ops: 800},
		},
	},
	{
		Fault: FaultDuplicateEventIDs, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-40"},
		Does:   "SSE event IDs count per stream, so they repeat across a session's streams",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/event-ids-unique"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("http-event-ids-unique", "HTTP-40"), Deadline: true, Present: true},
		},
	},
	{
		Fault: FaultNoSessionCheck, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-51", "HTTP-52"},
		Does:   "requests without a session ID or with an unknown one are served, not refused with 400/404",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/session-id-required", "http/unknown-session-404", "http/delete-then-404-then-new-session"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Excluded: unexploredHeaders},
		},
	},
	{
		Fault: FaultNoOriginCheck, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-3"},
		Does:   "requests with a foreign Origin are served, not refused with 403",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/origin-forbidden"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Excluded: unexploredHeaders},
		},
	},
	{
		Fault: FaultJSONBodyForNotification, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-11", "RPC-2", "HTTP-86"},
		Does:   "a POSTed notification gets 200 with a body of {}, which is no JSON-RPC message, instead of 202 with none (under 2026-07-28 too)",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/notification-202-no-body", "http/cancel-202-then-no-response"}, nil},
			// HTTP-86 MUST: a POSTed notification is answered 202 with no body in
			// 2026-07-28 too; the fault answers notifications/cancelled with 200
			// and "{}".
			{spec.V20260728, OnHTTP, []string{"http26/cancel-notification-202"}, []string{"HTTP-86", "RPC-2"}},
		},
		Explored: []Exploration{
			// The POST of a notification answered 200 (not 202) with a body
			// that is no message: the status and the body each show it.
			{Transport: ExploreHTTP, Finds: []Finding{{"frames-well-formed", []string{"HTTP-11"}}, {"no-response-to-notification", []string{"HTTP-11"}}}},
		},
	},
	{
		Fault: FaultResponseAfterCancelOnStream, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"CAN-8"},
		Does:   "an error response for a cancelled request still goes out on its open stream",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/cancel-202-then-no-response"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("cancel-no-response", "CAN-8")},
		},
	},
	{
		Fault: FaultNoProtocolVersionCheck, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-59"},
		Does:   "an unsupported MCP-Protocol-Version header is ignored instead of refused with 400",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/protocol-version-header-invalid"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Excluded: unexploredHeaders},
		},
	},
	{
		Fault: FaultProgressOnGETStream, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-31", "HTTP-22"},
		Does:   "progress of POSTed calls goes on the open GET stream instead of the call's own stream",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/get-stream-carries-no-call-messages"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("http-stream-routing", "HTTP-31"),
				Racy: "the progress this fault puts on the GET stream never ends a stream, so nothing orders its " +
					"reading before the trial closes the session: the minimal plan (listen, then one call the drain " +
					"runs to its end) loses it when the close comes first, about one run in three at load 5 (the " +
					"control extension has no request that would put a marker on the GET stream)"},
		},
	},
	{
		Fault: FaultNoPrimingEvent, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-16"},
		Does:   "SSE answers start without a priming event",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/priming-event"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("http-stream-primed", "HTTP-16"), Deadline: true, Present: true},
		},
	},
	{
		Fault: FaultSessionIDInvisible, Revision: spec.V20251125, On: OnHTTP,
		Breaks: []string{"HTTP-48"},
		Does:   "session IDs hold a space and non-ASCII bytes, outside visible ASCII",
		Killers: []KillerRow{
			{spec.V20251125, OnHTTP, []string{"http/session-id-visible-ascii", "http/delete-then-404-then-new-session"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Finds: finds("http-session-id-visible", "HTTP-48")},
		},
	},
	{
		Fault: FaultRejectValidLevel, Revision: spec.V20251125, On: OnAny, Area: "logging",
		Breaks: []string{"LOG-2"},
		Does:   "logging/setLevel refuses the valid level \"notice\" with -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"logging/every-level-accepted"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredLogging},
		},
	},
	{
		Fault: FaultAcceptInvalidLevel, Revision: spec.V20251125, On: OnAny, Area: "logging",
		Breaks: []string{"LOG-6"},
		Does:   "logging/setLevel accepts an unknown level instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"logging/invalid-level-rejected"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredLogging},
		},
	},
	{
		Fault: FaultBadMessageShape, Revision: spec.V20251125, On: OnAny, Area: "logging",
		Breaks: []string{"LOG-2"},
		Does:   "notifications/message with level \"WARN\" and no data (schema LoggingMessageNotification)",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"logging/message-shape"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredLogging},
		},
	},
	{
		Fault: FaultLogAfterCancel, Revision: spec.V20251125, On: OnAny, Area: "logging",
		Breaks: []string{"CAN-8"},
		Does:   "a cancelled operation keeps logging after the cancel",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"logging/no-flood-after-cancel"}, nil},
			// CAN-54 again: logging for the cancelled request after the cancel.
			{spec.V20260728, OnStdio, []string{"logging/no-flood-after-cancel"}, []string{"CAN-54"}},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredLogging},
		},
	},
	{
		Fault: FaultTaskListNotObject, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-2"},
		Does:   "capabilities.tasks.list is true instead of an object",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/capability-shape"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredTaskShape},
		},
	},
	{
		Fault: FaultTaskSupportMissing, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-8"},
		Does:   "tools/list gives task_worker no execution.taskSupport",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/tool-task-support"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredTaskShape},
		},
	},
	{
		Fault: FaultRequiredTaskRunsPlain, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-12"},
		Does:   "task_worker called without a task gets an isError result instead of -32601",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/required-without-task"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "the explorer calls only the task tool as a task and the others without one, so it never calls " +
					"a task-required tool without a task; check's tasks/required-without-task judges it"},
		},
	},
	{
		Fault: FaultForbiddenRunsPlain, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-9"},
		Does:   "a forbidden-task tool called as a task runs as an ordinary call instead of -32601",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/forbidden-with-task"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "the explorer never asks for a task on a tool that forbids one; check's " +
					"tasks/forbidden-with-task judges it"},
		},
	},
	{
		Fault: FaultTaskWithoutTTL, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-41"},
		Does:   "task objects have no ttl member",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/create-result-shape", "tasks/timestamps-monotonic"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-get-answer", "TSK-41")},
		},
	},
	{
		Fault: FaultLastUpdatedBeforeCreated, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-39"},
		Does:   "lastUpdatedAt is a second before createdAt",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/create-result-shape", "tasks/timestamps-monotonic"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-timestamps", "TSK-39")},
		},
	},
	{
		Fault: FaultSequentialTaskIDs, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-81"},
		Does:   "task IDs count up across the server: task-1, task-2, ...",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/unguessable-ids"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "guessable IDs break no rule of one history (TSK-81 is about what an attacker could guess); " +
					"check's tasks/unguessable-ids judges it"},
		},
	},
	{
		Fault: FaultCompletedTaskReopens, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-31"},
		Does:   "the second tasks/get after a task completed says working again",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/status-transitions"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-terminal-stable", "TSK-31")},
		},
	},
	{
		Fault: FaultCancelAnswersBeforeTransition, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-64"},
		Does:   "tasks/cancel answers with the task still working and cancels it after",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/cancel-working"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-cancel-result", "TSK-64")},
		},
	},
	{
		Fault: FaultIsErrorCompletesTask, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-76"},
		Does:   "a task whose tool result has isError ends completed, not failed",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/iserror-fails-task"}, nil},
		},
		Explored: []Exploration{
			// The evidence fits two rules: the task's status (TSK-76, judged
			// by check's tasks/iserror-fails-task) and tasks/result's
			// equivalence with it, which is the rule of the history.
			{Transport: ExploreInProcess, Finds: finds("task-result-equivalent", "TSK-46")},
		},
	},
	{
		Fault: FaultFailedResultNotError, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-77"},
		Does:   "tasks/result of a task whose request failed with a JSON-RPC error answers a result instead",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/result-error-equivalence"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-result-equivalent", "TSK-46")},
		},
	},
	{
		Fault: FaultResultAnswersEarly, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-47"},
		Does:   "tasks/result of a working task is answered at once with -32602 instead of blocking",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/result-blocks-while-working"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-result-equivalent", "TSK-46")},
		},
	},
	{
		Fault: FaultUnknownTaskInternalError, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-68"},
		Does:   "a task ID that names no task gets -32603 instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/unknown-id"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "the explorer's task operations name tasks it created; an unknown task ID is check's " +
					"tasks/unknown-id"},
		},
	},
	{
		Fault: FaultRelatedTaskMetaWins, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-51", "TSK-52"},
		Does:   "the task methods take the task from the related-task _meta over params.taskId",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/task-id-is-source-of-truth"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "the explorer never sends related-task _meta that disagrees with params.taskId; check's " +
					"tasks/task-id-is-source-of-truth judges it"},
		},
	},
	{
		Fault: FaultBogusCursorAccepted, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-69"},
		Does:   "tasks/list with a cursor it never issued answers the first page instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/list-pagination"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess,
				Excluded: "the explorer's tasks/list follows the cursors the server gives; a cursor it never issued is " +
					"check's tasks/list-pagination"},
		},
	},
	{
		Fault: FaultStatusNotificationMeta, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-58"},
		Does:   "notifications/tasks/status carries related-task _meta",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/status-notifications"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("task-status-no-related-task", "TSK-58")},
		},
	},
	{
		Fault: FaultTaskProgressOtherToken, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"PRG-10", "PRG-7"},
		Does:   "a task's progress after its CreateTaskResult carries another token than the request's",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/progress-token-lifetime"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Finds: finds("progress-token-known", "PRG-7")},
		},
	},
	{
		Fault: FaultTaskCancelledUnprompted, Revision: spec.V20251125, On: OnAny, Area: "tasks",
		Breaks: []string{"TSK-D1"},
		Does:   "a task ends cancelled right after its CreateTaskResult, with nobody cancelling it",
		Killers: []KillerRow{
			{spec.V20251125, OnStdio, []string{"tasks/not-cancelled-unprompted"}, nil},
		},
		Explored: []Exploration{
			// The fault cancels a task as its worker starts; on a loaded
			// machine that can come after the explorer's
			// notifications/cancelled for the creating request, and a task
			// cancelled after such a notification is what
			// task-not-cancelled-by-notification reports, naming both causes.
			{Transport: ExploreInProcess, Finds: []Finding{
				{"task-cancelled-only-when-asked", []string{"TSK-D1"}},
				{"task-not-cancelled-by-notification", []string{"CAN-4"}}}},
		},
	},
	{
		Fault: FaultDieOnMalformedInput, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"RPC-2"},
		Does:   "a frame that is no JSON-RPC message stops the server (over HTTP it is answered, and every later request is aborted)",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/not-json", "robust/truncated-then-valid", "robust/empty-batch", "robust/non-object", "robust/wrong-version"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultParseErrorWithID, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"RPC-11"},
		Does:   "a frame that is not JSON is answered -32700 with id 0 instead of null",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/not-json", "robust/truncated-then-valid"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultTruncatedSwallowsNext, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"RPC-2"},
		Does:   "after a truncated JSON object the next line is taken for its rest and never answered",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/truncated-then-valid"}, nil},
		},
		LostOverHTTP: []Excuse{
			{"robust/truncated-then-valid",
				"over HTTP every message is a POST of its own: there is no next line for a truncated body to " +
					"swallow"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultDuplicateIDDropsFirst, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"RPC-2"},
		Does:   "a request reusing an in-flight ID is answered and the first request's answer is dropped",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/duplicate-inflight-id"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultMissingTaskIDInternalError, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"TSK-68"},
		Does:   "tasks/get, tasks/result and tasks/cancel without a string taskId get -32603 instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/params-task-id"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultIllTypedCursorAccepted, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"TSK-69"},
		Does:   "tasks/list with a cursor that is not a string answers the first page instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/params-tasks-list-cursor"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultMissingLevelInternalError, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"LOG-6"},
		Does:   "logging/setLevel without a string level gets -32603 instead of -32602",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/params-set-level"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultMuteAfterNamelessCall, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"RPC-2"},
		Does:   "a tools/call without a string name is never answered, and nothing after it is",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/params-tools-call"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultMuteAfterIllTypedToolsCursor, Revision: spec.V20251125, On: OnAny, Area: "robust",
		Breaks: []string{"RPC-2"},
		Does:   "a tools/list whose cursor is neither a string nor null is never answered, and nothing after it is",
		Killers: []KillerRow{
			{spec.V20251125, OnAny, []string{"robust/params-tools-list-cursor"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Excluded: unexploredBadInput},
		},
	},
	{
		Fault: FaultNoResultType, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"RPC-40"},
		Does:   "2026-07-28 results carry no resultType",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"rpc/result-type-on-every-result", "rpc/tools-list-schema"}, nil},
		},
		Collateral: []Collateral{
			{"tasks26/declared-call-gets-durable-task", "TSX-8",
				"a result without resultType reads as complete (RPC-44), so the CreateTaskResult lacks the " +
					"resultType \"task\" TSX-8 asks for: the evidence of the missing member is TSX-8's as well"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredShape2026},
		},
	},
	{
		Fault: FaultNoServerInfo, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"RPC-56", "LIF-51"},
		Does:   "2026-07-28 results carry no serverInfo in _meta, server/discover's included",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"rpc/server-info-in-meta"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("server-info-in-meta", "LIF-51", "RPC-56")},
		},
	},
	{
		Fault: FaultDiscoverMissingVersion, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LIF-42", "LIF-47"},
		Does:   "server/discover lists only 2026-07-28 while initialize still agrees to 2025-11-25",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"lifecycle/initialize-agrees-to-listed-revision"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredShape2026},
		},
	},
	{
		Fault: FaultWrongVersionError, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LIF-40", "HTTP-97"},
		Does:   "an unsupported protocol version gets -32602 without data instead of -32022 with supported and requested",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"versioning/unknown-revision"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredWellFormed2026},
		},
	},
	{
		Fault: FaultEnvelopeNotChecked, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"RPC-51", "RPC-52", "RPC-53"},
		Does:   "a 2026-07-28 request without clientCapabilities is served instead of refused with -32602",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"envelope/missing-required-field"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredWellFormed2026},
		},
	},
	{
		Fault: FaultStickyVersion, Revision: spec.V20260728, On: OnStdio,
		Breaks: []string{"RPC-57"},
		Does:   "once a tools request of the connection was served, an unsupported protocolVersion is served under the earlier request's version instead of refused with -32022",
		Killers: []KillerRow{
			{spec.V20260728, OnStdio, []string{"versioning/unknown-revision"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredWellFormed2026},
		},
	},
	{
		Fault: FaultStickyCapabilities, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"RPC-57", "RPC-58", "TSX-2"},
		Does:   "a tasks extension declared once sticks: later requests that do not declare it get tasks",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/capabilities-per-request"}, nil},
		},
		Collateral: []Collateral{
			{"tasks26/methods-need-extension", "TSX-56",
				"the task the undeclared tasks/get names was created by a request that declared the extension; " +
					"a server on which that declaration sticks serves the undeclared request, which is TSX-56's " +
					"evidence as well (the case's Actual names both causes)"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultTaskForUndeclaredClient, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-2", "TSX-5", "LIF-45"},
		Does:   "a tools/call that did not declare the tasks extension gets a CreateTaskResult",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/undeclared-call-no-task"}, nil},
		},
		EclipsesSlow: "every plain tools/call of the slow tool is answered with a CreateTaskResult, so its progress, " +
			"checkpoints and counters are a task's: the cases that drive the slow tool see no slow call at " +
			"all",
		Explored: []Exploration{
			// Every plain call is answered with a CreateTaskResult, so the
			// steps that wait on the call's checkpoints wait out their timeout;
			// the CreateTaskResult itself is the violation, which a short
			// timeout cannot fake (80 s at the generous timeout, 1.3 s so).
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("one-response", "TSX-2"), Deadline: true, Present: true},
		},
	},
	{
		Fault: FaultTaskMethodsWithoutCapability, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-56", "RPC-55"},
		Does:   "tasks/get, tasks/update and tasks/cancel are served without the extension declared, instead of -32021",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/methods-need-extension"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultHeaderMismatchAccepted, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-96", "HTTP-103", "HTTP-104"},
		Does:   "HTTP headers missing or not matching the body are served instead of 400 and -32020",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/header-mismatch-400", "tasks26/mcp-name-task-id"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728, Excluded: unexploredHTTP2026},
		},
	},
	{
		Fault: FaultPingOn2026, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"PNG-40", "HTTP-81"},
		Does:   "ping and logging/setLevel are answered on a 2026-07-28 request instead of -32601",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"rpc/removed-methods"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredWellFormed2026},
		},
	},
	{
		Fault: FaultTasksResultOn2026, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-65"},
		Does:   "tasks/result and tasks/list are served on a 2026-07-28 request instead of -32601",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/removed-methods"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredWellFormed2026},
		},
	},
	{
		Fault: FaultUnknownMethod200, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-81"},
		Does:   "an unknown 2026-07-28 method gets HTTP 200 with -32601 instead of 404",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/unknown-method-404", "tasks26/removed-methods"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728, Excluded: unexploredHTTP2026},
		},
	},
	{
		Fault: FaultStreamCloseNotCancel, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"CAN-43", "CAN-55"},
		Does:   "closing a 2026-07-28 request's response stream does not cancel it",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/stream-close-cancels-during-progress", "http26/stream-close-cancels-silent-handler"}, nil},
		},
		ObserverKillers: []string{"http26/stream-close-cancels-during-progress", "http26/stream-close-cancels-silent-handler"},
		Explored: []Exploration{
			// Over Streamable HTTP the cancel closes the request's stream.
			{Transport: ExploreHTTP, Revision: spec.V20260728, Finds: finds("cleanup-once", "CAN-55"), Deadline: true},
		},
	},
	{
		Fault: FaultLogWithoutLevel, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LOG-41", "LOG-42"},
		Does:   "notifications/message is sent for a request without logLevel",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"logging/none-without-level"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredLogging2026},
		},
	},
	{
		Fault: FaultLogBelowLevel, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LOG-43"},
		Does:   "messages below the request's logLevel are sent too",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"logging/request-level-filter"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredLogging2026},
		},
	},
	{
		Fault: FaultAcceptUnknownLogLevel, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LOG-45"},
		Does:   "an unknown logLevel is taken for debug and the request runs, instead of -32602",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"logging/unknown-level-rejected"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredLogging2026},
		},
	},
	{
		Fault: FaultListenLogs, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LOG-44"},
		Does:   "a subscriptions/listen request with a logLevel gets a notifications/message on its stream",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"logging/none-on-listen-stream"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredListen},
		},
	},
	{
		Fault: FaultListenNoAck, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"SUB-2"},
		Does:   "a subscription never gets notifications/subscriptions/acknowledged",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"subscriptions/acknowledged-first"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredListen},
		},
	},
	{
		Fault: FaultListenNoSubscriptionID, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"SUB-5"},
		Does:   "notifications on a subscription lack io.modelcontextprotocol/subscriptionId",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"subscriptions/subscription-id"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredListen},
		},
	},
	{
		Fault: FaultListenUnrequested, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"SUB-1"},
		Does:   "every task's notifications/tasks goes to every subscription, asked for or not",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"subscriptions/only-requested", "tasks26/status-on-listen-stream"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredListen},
		},
	},
	{
		Fault: FaultTeardownSilent, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"SUB-6", "SUB-7", "CAN-41"},
		Does:   "a subscription the server ends gets neither its result nor notifications/cancelled",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"subscriptions/teardown-signal"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredListen},
		},
	},
	{
		Fault: FaultServerSendsCancelled, Revision: spec.V20260728, On: OnStdio,
		Breaks: []string{"CAN-42", "CAN-52"},
		Does:   "a request the client cancelled gets a notifications/cancelled from the server",
		Killers: []KillerRow{
			{spec.V20260728, OnStdio, []string{"cancel/server-sends-no-cancelled", "cancel/no-further-message-after-progress", "cancel/no-further-message-before-progress"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("cancel-names-own-request", "CAN-42")},
			{Transport: ExploreStdio, Revision: spec.V20260728, Finds: finds("cancel-names-own-request", "CAN-42")},
		},
	},
	{
		Fault: FaultRequestOnStdout, Revision: spec.V20260728, On: OnStdio,
		Breaks: []string{"STD-43"},
		Does:   "a tools/call makes the server write a JSON-RPC request (roots/list) to stdout before its answer",
		Killers: []KillerRow{
			{spec.V20260728, OnStdio, []string{"stdio/no-requests-on-stdout"}, nil},
		},
		Explored: []Exploration{
			// A request a 2026-07-28 server writes on its one stream breaks
			// the monitor's one-response rule as the stdio page says it
			// (STD-43; RPC-61 over HTTP). In process the monitor judges the
			// one stream as stdout.
			{Transport: ExploreInProcess, Revision: spec.V20260728, Finds: finds("one-response", "STD-43")},
			{Transport: ExploreStdio, Revision: spec.V20260728, Finds: finds("one-response", "STD-43")},
		},
	},
	{
		Fault: FaultProgressCrossesStreams, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"LOG-46"},
		Does:   "a slow call's progress goes on the response stream of another running call",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"progress/interleaved-tokens", "progress/token-independent-of-id"}, nil},
		},
		Collateral: []Collateral{
			{"cancel/interleaved-other-completes", "PRG-7",
				"when the cancelled call is still running as the other steps, the other call's progress goes on " +
					"its stream and never reaches the other call, which counts fewer notifications than steps: the " +
					"count PRG-7 judges is the misrouting's evidence as well (it depends on timing, so the case is " +
					"no killer)"},
			{"progress/interleaved-tokens", "PRG-14",
				"a progress the fault sends on another running call's stream is read after its own call's " +
					"response when that stream is read later (without the control extension nothing orders the " +
					"three calls' ends): a progress after the end is PRG-14's evidence as well (it depends on " +
					"timing, so the case is no killer there)"},
			{"progress/token-zero", "PRG-14",
				"a progress the fault sends on another request's stream can be read after its own request's " +
					"response: a progress after the end is PRG-14's evidence as well (it depends on timing, so the " +
					"case is no killer)"},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728,
				Excluded: "the fault moves a call's progress to another call's stream only while that other call is " +
					"running, which the order the server takes two POSTs in decides, not the plan: a trial shows " +
					"it, but no replay of the minimal plan reproduces it reliably; check's " +
					"progress/interleaved-tokens judges it, and the monitor wherever it happens",
				Fits: finds("http-stream-routing", "LOG-46"),
				FitsWhy: "a trial in which the server took the other call's POST first shows the progress on that call's " +
					"stream (LOG-46), which a conforming server never writes there"},
		},
	},
	{
		Fault: FaultLogCrossesStreams, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"LOG-46"},
		Does:   "a slow call's log messages go on the response stream of another running call",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"progress/interleaved-tokens"}, nil},
		},
		MissedWithoutControl: []ModeExcuse{
			{EvidenceBoth, "progress/interleaved-tokens",
				"the step logs name their operation by the reference server's key, which a case sets only " +
					"through the control extension: a log message that names no request cannot be tied to a stream " +
					"on the wire"},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728,
				Excluded: "the explorer asks for no log messages (no logLevel), so the step logs this fault misroutes are " +
					"never sent; nor could the wire tie a log message to its request (it names none); check's " +
					"progress/interleaved-tokens judges it (LOG-46) by the reference server's operation keys"},
		},
	},
	{
		Fault: FaultTaskCancelErrorOnTerminal, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-44", "TSX-40"},
		Does:   "tasks/cancel of a terminal task gets -32602 instead of the empty acknowledgement",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/cancel-acknowledged"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultCreateBeforeDurable, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-16", "TSX-17"},
		Does:   "CreateTaskResult comes before tasks/get can find the task",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/declared-call-gets-durable-task"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultIsErrorTaskFailed, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-14", "TSX-59", "TSX-61"},
		Does:   "a task whose tool result has isError ends failed instead of completed",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/iserror-completes"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultTaskResultNotInlined, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-27", "TSX-29", "TSX-58", "TSX-60"},
		Does:   "tasks/get of a terminal task lacks its result or error",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/get-inlines-terminal-result"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultGetTaskResultTypeTask, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-9", "TSX-30"},
		Does:   "tasks/get answers resultType \"task\" instead of \"complete\"",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/get-inlines-terminal-result"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultTaskUpdateRejectsUnknownKey, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-42"},
		Does:   "tasks/update with a key that is not outstanding gets -32602 instead of an acknowledgement",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"tasks26/update-unknown-key-acknowledged"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultNoAccelBuffering, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-92"},
		Does:   "2026-07-28 SSE responses lack X-Accel-Buffering: no",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/sse-accel-buffering"}, nil},
		},
		Explored: []Exploration{
			// The stream shape of 2026-07-28 Streamable HTTP, from the heads,
			// SSE events and stream ends the transport records.
			{Transport: ExploreHTTP, Revision: spec.V20260728, Finds: finds("http-sse-unbuffered", "HTTP-92")},
		},
	},
	{
		Fault: FaultEventIDsOn2026, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-93"},
		Does:   "2026-07-28 SSE events carry event IDs",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/sse-no-event-ids"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728, Finds: finds("http-event-ids-unique", "HTTP-93")},
		},
	},
	{
		Fault: FaultSessionOn2026, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-107"},
		Does:   "2026-07-28 responses mint an Mcp-Session-Id",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/no-session-minted", "http26/legacy-headers-ignored"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728, Finds: finds("http-stateless-endpoint", "HTTP-107")},
		},
	},
	{
		Fault: FaultGetOn2026, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-107", "HTTP-80"},
		Does:   "a 2026-07-28 GET opens an SSE stream and a DELETE gets 200, instead of 405",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/get-delete-405"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728, Excluded: unexploredHTTP2026},
		},
	},
	{
		Fault: FaultStreamStaysOpen, Revision: spec.V20260728, On: OnHTTP,
		Breaks: []string{"HTTP-91"},
		Does:   "a 2026-07-28 SSE response stays open after the response",
		Killers: []KillerRow{
			{spec.V20260728, OnHTTP, []string{"http26/response-ends-stream"}, nil},
		},
		Eclipsed: []Excuse{
			{"progress/interleaved-tokens",
				"its three streams stay open after their responses, and the transport's stall bound (10s here) " +
					"ends the case as incomplete before it can finish"},
		},
		Explored: []Exploration{
			{Transport: ExploreHTTP, Revision: spec.V20260728, Deadline: true,
				Excluded: "the evidence is time: a stream held open shows when it is closed more than the monitor's " +
					"window (100 ms) after its response, and a trial's sessions close within that of most " +
					"responses, at a pace the plan does not decide (no replay reproduces it); check's " +
					"http26/response-ends-stream and the monitor in watch and judge, where such a stream stays open " +
					"seconds, judge it",
				Fits: finds("http-response-ends-stream", "HTTP-91"),
				FitsWhy: "a trial slow enough to close a session more than 100 ms after a response shows the held stream " +
					"(a conforming server's stream ends with its response, so slowness cannot fake it)"},
		},
	},
	{
		Fault: FaultInitializeErrorWithoutVersions, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"LIF-49"},
		Does:   "a server without the legacy era answers initialize with a bare -32601 naming no version",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"lifecycle/initialize-error-names-versions"}, nil},
		},
		Only2026: true,
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728,
				Excluded: "the explorer's 2026-07-28 sessions never send initialize"},
		},
	},
	{
		Fault: FaultExtTaskIDInternalError, Revision: spec.V20260728, On: OnAny,
		Breaks: []string{"TSX-53", "TSX-54"},
		Does:   "tasks/get, tasks/update and tasks/cancel without a string taskId get -32603 instead of -32602",
		Killers: []KillerRow{
			{spec.V20260728, OnAny, []string{"robust/params-task-id-ext"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredTasks2026},
		},
	},
	{
		Fault: FaultListenBadFilterCrash, Revision: spec.V20260728, On: OnStdio,
		Breaks: []string{"RPC-2"},
		Does:   "a subscriptions/listen whose notifications filter is missing or not an object stops the server",
		Killers: []KillerRow{
			{spec.V20260728, OnStdio, []string{"robust/params-listen"}, nil},
		},
		Explored: []Exploration{
			{Transport: ExploreInProcess, Revision: spec.V20260728, Excluded: unexploredListen},
		},
	},
}

// unkillableCases are the cases of the catalogue no fault of the
// reference server can make fail, with the reason.
var unkillableCases = []Excuse{
	{"discover/answers",
		"no fault of the reference server breaks server/discover itself (discover-missing-version drops " +
			"only the legacy revisions, which this case does not require); every 2026-07-28 case's liveness " +
			"step depends on it, so such a fault would end them all in errors blaming this case"},
	{"http/answer-content-type",
		"the reference server's answers are built by net/http with a fixed Content-Type; no fault " +
			"breaks it"},
	{"http/batch-rejected",
		"the reference server decodes one message per POST with the strict decoder; a batch-accepting " +
			"fault would need a second decoder"},
	{"tasks/durable-id",
		"a task that tasks/get cannot find at once would break every task case that polls it, so no " +
			"fault isolates TSK-44 to this case"},
	{"tasks/ignored-without-capability",
		"it runs only against a server without the tasks capability, and every row of the matrix " +
			"declares it (TestTaskCasesWithoutCapability runs it against serve --no-tasks)"},
	{"tasks/ttl-expiry",
		"deletion at ttl is a MAY (TSK-42): retention is info, never a violation"},
}

// Why the explorer cannot find a fault, where one reason serves several
// (Exploration.Excluded).
const (
	unexploredClosedStream = "over 2026-07-28 Streamable HTTP the cancel closes the stream the response and progress would " +
		"come on: nothing more can be read for the request (CAN-56 shows only through side effects, " +
		"which cleanup-once reads); its stdio and in-process rows find it"
	unexploredLogging = "the mix has no logging: log levels and log messages are judged by check's logging cases (on " +
		"stdio a notifications/message names no request, so the history alone cannot tie one to a " +
		"cancelled call)"
	unexploredBadInput = "the explorer sends only well-formed requests with fresh ids and valid parameters; the robust/ " +
		"cases of check send the bad input this fault reacts to"
	unexploredShape2026 = "a shape rule of one result or error (resultType, the versions server/discover " +
		"lists or an error names): the history's invariants are about order and outcomes; check " +
		"--protocol 2026-07-28 judges it"
	unexploredWellFormed2026 = "the explorer sends only well-formed 2026-07-28 requests (the envelope on each, no removed " +
		"method); check --protocol 2026-07-28 judges the answers to wrong ones"
	unexploredTasks2026 = "the explorer draws no task under 2026-07-28: the tasks extension is not implemented in its mix"
	unexploredHTTP2026  = "the explorer sends only well-formed 2026-07-28 requests over Streamable HTTP (the headers that " +
		"mirror the body, no method the server lacks), and no GET or DELETE (the revision has neither a " +
		"GET stream nor a session): the fault answers none of them; the monitor judges the answer where " +
		"a host sends one (http-method-not-found-404, http-stateless-endpoint), and check --protocol " +
		"2026-07-28 judges it"
	unexploredHeaders = "the explorer only sends well-formed requests with the session ID, the protocol version and no " +
		"Origin; this rule of the HTTP endpoint is judged by check's http cases"
	unexploredTaskShape = "a shape rule of one message (a capability, a tool's execution, a task's fields, a " +
		"notification's _meta): the history's invariants are about order and outcomes; check's tasks " +
		"cases and the schema check judge it"
	unexploredLogging2026 = "the mix has no logging (the envelope carries no logLevel); check's logging cases judge it"
	unexploredListen      = "the mix has no subscriptions/listen; check's subscription cases judge it"
)
