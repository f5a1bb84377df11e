package refserver

// Faults of the Streamable HTTP endpoint (HTTPHandler). Each breaks one
// rule of the 2025-11-25 transport.
const (
	// FaultCancelOnDisconnect: a client that drops a request's SSE
	// stream is taken to have cancelled the request (breaks HTTP-25).
	FaultCancelOnDisconnect Fault = "cancel-on-disconnect"
	// FaultUnresumableCancelOnDisconnect: a request's SSE stream carries
	// no event IDs, so it is not resumable and has no priming event
	// (HTTP-16 needs an ID), and a client that drops it is taken to have
	// cancelled the request (HTTP-25): the server a client cannot go back
	// to after a drop, whose handler's fate only an observer shows.
	FaultUnresumableCancelOnDisconnect Fault = "unresumable-cancel-on-disconnect"
	// FaultReplayCrossesStreams: a resume with Last-Event-ID also replays
	// later events of the session's other streams (HTTP-44).
	FaultReplayCrossesStreams Fault = "replay-crosses-streams"
	// FaultLoseEventsOnResume: a resume with Last-Event-ID skips the
	// events sent while the client was away and goes on live (HTTP-43,
	// HTTP-21: the result is lost if it came in the gap).
	FaultLoseEventsOnResume Fault = "lose-events-on-resume"
	// FaultDuplicateEventIDs: event IDs count per stream from 1, so they
	// repeat across the streams of a session (HTTP-40).
	FaultDuplicateEventIDs Fault = "duplicate-event-ids"
	// FaultNoSessionCheck: requests without a session ID, or with an
	// unknown or deleted one, are served by the latest session instead
	// of 400 or 404 (HTTP-51, HTTP-52).
	FaultNoSessionCheck Fault = "no-session-check"
	// FaultNoOriginCheck: requests with a foreign Origin are served
	// instead of refused with 403 (HTTP-2, HTTP-3).
	FaultNoOriginCheck Fault = "no-origin-check"
	// FaultJSONBodyForNotification: a POSTed notification or response
	// gets 200 with a JSON body instead of 202 with none (HTTP-11; HTTP-86
	// under 2026-07-28).
	FaultJSONBodyForNotification Fault = "json-body-for-notification"
	// FaultResponseAfterCancelOnStream: after an accepted cancel, an
	// error response for the cancelled request is still sent on its open
	// stream (CAN-8 over HTTP).
	FaultResponseAfterCancelOnStream Fault = "response-after-cancel-on-stream"
	// FaultNoProtocolVersionCheck: an unsupported MCP-Protocol-Version
	// header is ignored instead of refused with 400 (HTTP-59).
	FaultNoProtocolVersionCheck Fault = "no-protocol-version-check"
	// FaultProgressOnGETStream: while the GET stream is open, progress of
	// POSTed calls goes there instead of on the call's stream (HTTP-22,
	// HTTP-31).
	FaultProgressOnGETStream Fault = "progress-on-get-stream"
	// FaultNoPrimingEvent: SSE answers start without the priming event
	// (HTTP-16).
	FaultNoPrimingEvent Fault = "no-priming-event"
	// FaultSessionIDInvisible: session IDs hold a space and non-ASCII
	// bytes, which HTTP allows in a header value but HTTP-48 forbids in a
	// session ID; the sessions otherwise work.
	FaultSessionIDInvisible Fault = "session-id-invisible"
)
