package cases_test

import "github.com/mcpflight/mcpflight/refserver"

// killers26 lists, for each 2026-07-28 fault the http26/ and tasks26/
// cases must catch, the cases that catch it (fail or warn, citing a
// requirement the fault is documented to break). TestHTTP26Matrix runs
// them; init adds them to the 2026-07-28 mutation matrix's
// extraKillers2026.
var killers26 = map[refserver.Fault][]string{
	refserver.FaultHeaderMismatchAccepted:       {"http26/header-mismatch-400", "tasks26/mcp-name-task-id"},
	refserver.FaultUnknownMethod200:             {"http26/unknown-method-404", "tasks26/removed-methods"},
	refserver.FaultStreamCloseNotCancel:         {"http26/stream-close-cancels-during-progress", "http26/stream-close-cancels-silent-handler"},
	refserver.FaultNoAccelBuffering:             {"http26/sse-accel-buffering"},
	refserver.FaultEventIDsOn2026:               {"http26/sse-no-event-ids"},
	refserver.FaultSessionOn2026:                {"http26/no-session-minted", "http26/legacy-headers-ignored"},
	refserver.FaultGetOn2026:                    {"http26/get-delete-405"},
	refserver.FaultStreamStaysOpen:              {"http26/response-ends-stream"},
	refserver.FaultStickyCapabilities:           {"tasks26/capabilities-per-request"},
	refserver.FaultTaskForUndeclaredClient:      {"tasks26/undeclared-call-no-task"},
	refserver.FaultTaskMethodsWithoutCapability: {"tasks26/methods-need-extension"},
	refserver.FaultTasksResultOn2026:            {"tasks26/removed-methods"},
	refserver.FaultTaskCancelErrorOnTerminal:    {"tasks26/cancel-acknowledged"},
	refserver.FaultCreateBeforeDurable:          {"tasks26/declared-call-gets-durable-task"},
	refserver.FaultIsErrorTaskFailed:            {"tasks26/iserror-completes"},
	refserver.FaultTaskResultNotInlined:         {"tasks26/get-inlines-terminal-result"},
	refserver.FaultGetTaskResultTypeTask:        {"tasks26/get-inlines-terminal-result"},
	refserver.FaultTaskUpdateRejectsUnknownKey:  {"tasks26/update-unknown-key-acknowledged"},
	refserver.FaultListenUnrequested:            {"tasks26/status-on-listen-stream"},
}

func init() {
	for f, ids := range killers26 {
		extraKillers2026[f] = append(extraKillers2026[f], ids...)
	}
}
