package explore

import (
	"slices"

	"github.com/mcpflight/mcpflight/spec"
)

// The protocol revisions the explorer implements. (They are spec's
// constants; the names stay for the callers of the explorer.)
const (
	Revision20251125 = spec.V20251125
	// Revision20260728: over stdio and in process a cancel is
	// notifications/cancelled (CAN-44), over Streamable HTTP the closing
	// of the request's stream (CAN-43); there are no tasks.
	Revision20260728 = spec.V20260728
)

// Revisions are the revisions the explorer implements, oldest first.
func Revisions() []string { return []string{Revision20251125, Revision20260728} }

// Invariant is one rule the recorded history is checked against. Each
// cites the requirements it checks per protocol revision: a revision
// that is not a key of Cites is one the invariant does not hold for. A
// violation names one of the revision's requirements, the one the
// evidence points at (the first is the rule's own; the others are the
// special cases the evidence may show, such as HTTP-25 for a request the
// server ended as cancelled after its stream was dropped).
type Invariant struct {
	ID    string
	Title string
	Cites map[string][]string
}

// The invariants' IDs.
const (
	InvOneResponse         = "one-response"
	InvNoNotificationReply = "no-response-to-notification"
	InvCancelNoResponse    = "cancel-no-response"
	InvCancelNoProgress    = "cancel-no-progress"
	InvProgressIncreasing  = "progress-increasing"
	InvProgressAfterEnd    = "no-progress-after-end"
	InvTokenKnown          = "progress-token-known"
	InvTokenReusable       = "token-reusable"
	InvCleanupOnce         = "cleanup-once"
	InvTaskTerminalStable  = "task-terminal-stable"
	InvTaskCancelTerminal  = "task-cancel-terminal"
	InvTaskCancelResult    = "task-cancel-result"
	InvTaskWorkerStops     = "task-worker-stops"
	InvTaskNotifCancel     = "task-not-cancelled-by-notification"
	InvTaskResult          = "task-result-equivalent"
	InvTaskListOwn         = "task-list-own"
	InvSessionUsable       = "session-usable"
	InvWellFormed          = "frames-well-formed"
	InvReplayOwnStream     = "http-replay-own-stream"
	InvEventIDsUnique      = "http-event-ids-unique"
	InvStreamRouting       = "http-stream-routing"
	InvStreamPrimed        = "http-stream-primed"
	InvDirections          = "ids-by-direction"
)

// Invariants returns every invariant, in a stable order. Adding a
// revision means adding its key (and requirement IDs) to the rules that
// hold in it, and the operations it changes to the mix.
func Invariants() []Invariant {
	v := func(ids ...string) map[string][]string { return map[string][]string{Revision20251125: ids} }
	// b is a rule of both revisions: ids under 2025-11-25, modern under
	// 2026-07-28.
	b := func(modern []string, ids ...string) map[string][]string {
		return map[string][]string{Revision20251125: ids, Revision20260728: modern}
	}
	m := func(ids ...string) []string { return ids }
	return []Invariant{
		{InvOneResponse, "every request gets exactly one response, unless its cancel was accepted or its session closed first", b(m("RPC-2", "RPC-8", "RPC-4", "LIF-42", "CAN-14", "TSX-2"), "RPC-2", "RPC-8", "RPC-4", "PNG-1", "HTTP-21", "TSK-46", "CAN-14", "HTTP-25")},
		{InvNoNotificationReply, "a notification is never answered", b(m("RPC-15"), "RPC-15")},
		{InvCancelNoResponse, "no response after an accepted cancel", b(m("CAN-54"), "CAN-8")},
		{InvCancelNoProgress, "no progress after an accepted cancel beyond what the server had been allowed to write before it read the cancel", b(m("CAN-54"), "CAN-8")},
		{InvProgressIncreasing, "progress strictly increases per token", b(m("PRG-4"), "PRG-4")},
		{InvProgressAfterEnd, "no progress after the request's response (after the task is terminal, for a task)", b(m("PRG-14"), "PRG-14", "PRG-11")},
		{InvTokenKnown, "progress names a token this session gave an active request", b(m("PRG-7"), "PRG-7")},
		{InvDirections, "a cancel from the server names a request the server sent, never one of ours (2026-07-28: the server sends none but for subscriptions/listen)", b(m("CAN-52", "CAN-42"), "CAN-1")},
		{InvTokenReusable, "a token whose request has ended may be used again, and is no longer held", b(m("PRG-41"), "PRG-2")},
		{InvCleanupOnce, "an ended operation released its resource exactly once; a cancelled one ends", b(m("CAN-48", "CAN-55"), "CAN-8")},
		{InvTaskTerminalStable, "a terminal task never changes status", v("TSK-31", "TSK-65")},
		{InvTaskCancelTerminal, "tasks/cancel of a terminal task is refused with -32602", v("TSK-63")},
		{InvTaskCancelResult, "a successful tasks/cancel answers the task as cancelled", v("TSK-64")},
		{InvTaskWorkerStops, "a cancelled task's worker does no more work than it had been allowed before the cancel", v("TSK-64")},
		{InvTaskNotifCancel, "notifications/cancelled never cancels a task", v("CAN-4")},
		{InvTaskResult, "tasks/result carries the task's ID and answers what the task ended with, the same every time", v("TSK-46", "TSK-48", "TSK-55")},
		{InvTaskListOwn, "tasks/list lists only the session's own tasks", v("TSK-84")},
		{InvSessionUsable, "the session stays usable: ping is answered with an empty result and the server never ends the session", b(m("CAN-11", "CAN-14", "LIF-42"), "CAN-11", "CAN-14", "PNG-1")},
		{InvWellFormed, "every frame from the server is a JSON-RPC message", b(m("RPC-2", "STD-4"), "RPC-2", "STD-4", "HTTP-11")},
		{InvReplayOwnStream, "a resumed stream replays only its own request's messages", v("HTTP-44")},
		{InvEventIDsUnique, "SSE event IDs are unique across the streams of a session", v("HTTP-40")},
		{InvStreamRouting, "a request's progress travels on its own stream, never on the GET stream or another request's", v("HTTP-22", "HTTP-31")},
		{InvStreamPrimed, "a request's SSE stream starts with an event ID to resume from", v("HTTP-16")},
	}
}

// modernCite is the requirement of 2026-07-28 that stands, in
// invariant inv, for the 2025-11-25 requirement req the checker names:
// the cancellation rules moved (CAN-8's "no response" is CAN-54's MUST
// NOT on stdio, its "stop and free" CAN-48's SHOULD), the token rule is
// PRG-41, a cancel from the server is CAN-52's MUST NOT, and
// server/discover stands in for ping (PNG-40, LIF-42). A requirement
// without a counterpart is returned as it is; violate drops it when the
// invariant does not cite it under 2026-07-28.
func modernCite(inv, req string) string {
	switch {
	case req == "CAN-8" && inv == InvCleanupOnce:
		return "CAN-48"
	case req == "CAN-8":
		return "CAN-54"
	case req == "CAN-1":
		return "CAN-52"
	case req == "PRG-2":
		return "PRG-41"
	case req == "PNG-1":
		return "LIF-42"
	}
	return req
}

// cite is the requirement a violation of inv under revision names, for
// the 2025-11-25 requirement req the checker found broken, and false
// when inv does not hold, or does not cite it, under revision.
func cite(revision, inv, req string) (string, bool) {
	if revision == Revision20260728 {
		req = modernCite(inv, req)
	}
	return req, slices.Contains(invariant(inv).Cites[revision], req)
}

// invariant returns the invariant with id.
func invariant(id string) Invariant {
	i := slices.IndexFunc(Invariants(), func(inv Invariant) bool { return inv.ID == id })
	if i < 0 {
		return Invariant{ID: id}
	}
	return Invariants()[i]
}

// Holds reports whether the invariant holds under revision.
func (inv Invariant) Holds(revision string) bool {
	_, ok := inv.Cites[revision]
	return ok
}

// Violation is one broken invariant in a history.
type Violation struct {
	Invariant   string `json:"invariant"`
	Requirement string `json:"requirement"`
	// Level is the requirement's RFC 2119 keyword in the registry.
	Level string `json:"level"`
	// Session is the label of the session it happened in.
	Session string `json:"session"`
	// Seq is the history's sequence number of the violating event; for
	// something that never happened (a response that never came), the
	// request that waited for it.
	Seq     uint64 `json:"seq"`
	Absence bool   `json:"absence,omitempty"`
	Text    string `json:"text"`
}

// Same reports whether v breaks the same rule as w: the shrinker keeps a
// smaller plan only when it still breaks it.
func (v Violation) Same(w Violation) bool {
	return v.Invariant == w.Invariant && v.Requirement == w.Requirement
}

// Quote is the requirement's sentence from the registry.
func (v Violation) Quote() string {
	r, _ := spec.Lookup(v.Requirement)
	return r.Quote
}

func level(req string) string {
	r, ok := spec.Lookup(req)
	if !ok {
		return ""
	}
	return r.Level
}
