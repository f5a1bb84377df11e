package explore

import (
	"slices"

	"github.com/mcpflight/mcpflight/monitor"
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

// The invariants' IDs. A rule of the server's frames alone is the passive
// rule engine's (package monitor), and keeps its ID there; the names stay
// for the callers of the explorer. The others are explore's own, which
// need evidence the wire does not carry (check.go says which).
const (
	// InvOneResponse is the monitor's (a second or stray response, an
	// error with a null id) and explore's own (a response that never
	// came, judged by why).
	InvOneResponse         = monitor.RuleOneResponse
	InvNoNotificationReply = monitor.RuleNoNotificationRepl
	// InvCancelNoResponse and InvCancelNoProgress are the monitor's IDs,
	// judged by explore's own evidence of how a cancel ended.
	InvCancelNoResponse = monitor.RuleCancelNoResponse
	InvCancelNoProgress = monitor.RuleCancelNoProgress
	// InvProgressAfterEnd is the monitor's, and explore's own for a
	// task's progress beyond what its gates and ticks allowed.
	InvProgressAfterEnd   = monitor.RuleProgressAfterEnd
	InvProgressIncreasing = monitor.RuleProgressIncreasing
	InvTokenKnown         = monitor.RuleTokenKnown
	InvCancelTarget       = monitor.RuleCancelTarget
	InvTaskTerminalStable = monitor.RuleTaskTerminalStable
	InvTaskCancelTerminal = monitor.RuleTaskCancelTerminal
	InvTaskCancelResult   = monitor.RuleTaskCancelResult
	InvWellFormed         = monitor.RuleWellFormed
	InvLogLevel           = monitor.RuleLogLevel
	// The Streamable HTTP stream rules, from the heads, SSE events and
	// stream ends the transport records.
	InvReplayOwnStream  = monitor.RuleReplayOwnStream
	InvEventIDsUnique   = monitor.RuleEventIDs
	InvStreamRouting    = monitor.RuleStreamRouting
	InvStreamPrimed     = monitor.RuleStreamPrimed
	InvStreamEnds       = monitor.RuleStreamEnds
	InvUnbuffered       = monitor.RuleUnbuffered
	InvStateless        = monitor.RuleStateless
	InvSessionIDVisible = monitor.RuleSessionIDVisible
	InvMethodNotFound   = monitor.RuleMethodNotFound

	InvTokenReusable   = "token-reusable"
	InvCleanupOnce     = "cleanup-once"
	InvTaskWorkerStops = "task-worker-stops"
	InvTaskNotifCancel = "task-not-cancelled-by-notification"
	InvTaskResult      = "task-result-equivalent"
	InvTaskListOwn     = "task-list-own"
	InvSessionUsable   = "session-usable"
)

// ownJudgement are the monitor's rules whose findings explore does not
// take: it judges them by evidence the monitor does not have (how a
// cancel ended, check.go's cancelled), and reports them under the same
// IDs with its own citations.
var ownJudgement = []string{InvCancelNoResponse, InvCancelNoProgress}

// Invariants returns every rule a history is checked against, in a
// stable order: the monitor's rules of the server's frames (a rule
// explore also judges by its own evidence lists the requirements of
// both), then explore's own. Adding a revision means adding its key (and
// requirement IDs) to the rules that hold in it, here and in the
// monitor, and the operations it changes to the mix.
func Invariants() []Invariant {
	own := ownInvariants()
	var out []Invariant
	for _, r := range monitor.Rules() {
		if !slices.Contains(r.Sides(), monitor.Server) {
			continue
		}
		inv := Invariant{ID: r.ID, Title: r.Title, Cites: map[string][]string{}}
		for rev, ids := range r.Cites {
			if len(ids) > 0 {
				inv.Cites[rev] = slices.Clone(ids)
			}
		}
		if i := slices.IndexFunc(own, func(o Invariant) bool { return o.ID == r.ID }); i >= 0 {
			o := own[i]
			own = slices.Delete(own, i, i+1)
			if slices.Contains(ownJudgement, r.ID) {
				inv.Cites = map[string][]string{}
			}
			inv.Title = o.Title
			for rev, ids := range o.Cites {
				for _, id := range ids {
					if !slices.Contains(inv.Cites[rev], id) {
						inv.Cites[rev] = append(inv.Cites[rev], id)
					}
				}
			}
		}
		if len(inv.Cites) > 0 {
			out = append(out, inv)
		}
	}
	return append(out, own...)
}

// ownInvariants are the rules explore judges itself, with the
// requirements its own judgements cite (check.go says why each is its
// own).
func ownInvariants() []Invariant {
	v := func(ids ...string) map[string][]string { return map[string][]string{Revision20251125: ids} }
	// b is a rule of both revisions: ids under 2025-11-25, modern under
	// 2026-07-28.
	b := func(modern []string, ids ...string) map[string][]string {
		return map[string][]string{Revision20251125: ids, Revision20260728: modern}
	}
	m := func(ids ...string) []string { return ids }
	return []Invariant{
		{InvOneResponse, "every request gets exactly one response, unless its cancel was accepted or its session closed first", b(m("RPC-2", "LIF-42", "CAN-14", "TSX-2"), "RPC-2", "PNG-1", "HTTP-21", "TSK-46", "CAN-14", "HTTP-25")},
		{InvCancelNoResponse, "no response after an accepted cancel", b(m("CAN-54"), "CAN-8")},
		{InvCancelNoProgress, "no progress after an accepted cancel beyond what the server had been allowed to write before it read the cancel", b(m("CAN-54"), "CAN-8")},
		{InvProgressAfterEnd, "no progress after the request's response (after the task is terminal, for a task)", v("PRG-11")},
		{InvTokenReusable, "a token whose request has ended may be used again, and is no longer held", b(m("PRG-41"), "PRG-2")},
		{InvCleanupOnce, "an ended operation released its resource exactly once; a cancelled one ends", b(m("CAN-48", "CAN-55"), "CAN-8")},
		{InvTaskWorkerStops, "a cancelled task's worker does no more work than it had been allowed before the cancel", v("TSK-64")},
		{InvTaskNotifCancel, "notifications/cancelled never cancels a task", v("CAN-4")},
		{InvTaskResult, "tasks/result carries the task's ID and answers what the task ended with, the same every time", v("TSK-46", "TSK-48", "TSK-55")},
		{InvTaskListOwn, "tasks/list lists only the session's own tasks", v("TSK-84")},
		{InvSessionUsable, "the session stays usable: ping is answered with an empty result and the server never ends the session", b(m("CAN-11", "CAN-14", "LIF-42"), "CAN-11", "CAN-14", "PNG-1")},
	}
}

// cite2026 is the requirement of 2026-07-28 that stands, in
// invariant inv, for the 2025-11-25 requirement req the checker names:
// the cancellation rules moved (CAN-8's "no response" is CAN-54's MUST
// NOT on stdio, its "stop and free" CAN-48's SHOULD), the token rule is
// PRG-41, and server/discover stands in for ping (PNG-40, LIF-42). A
// requirement without a counterpart is returned as it is; violate drops
// it when the invariant does not cite it under 2026-07-28.
func cite2026(inv, req string) string {
	switch {
	case req == "CAN-8" && inv == InvCleanupOnce:
		return "CAN-48"
	case req == "CAN-8":
		return "CAN-54"
	case req == "PRG-2":
		return "PRG-41"
	case req == "PNG-1":
		return "LIF-42"
	}
	return req
}

// cite is the requirement a violation of explore's own invariant inv
// under revision names, for the 2025-11-25 requirement req the checker
// found broken, and false when inv does not hold, or does not cite it,
// under revision.
func cite(revision, inv, req string) (string, bool) {
	if revision == Revision20260728 {
		req = cite2026(inv, req)
	}
	return req, slices.Contains(ownInvariant(inv).Cites[revision], req)
}

// ownInvariant returns explore's own invariant with id.
func ownInvariant(id string) Invariant {
	own := ownInvariants()
	if i := slices.IndexFunc(own, func(inv Invariant) bool { return inv.ID == id }); i >= 0 {
		return own[i]
	}
	return Invariant{ID: id}
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
	// Level is the requirement's RFC 2119 keyword in the registry (for
	// a compound level, such as TSK-64's SHOULD / MUST, the monitor
	// names the clause the evidence breaks).
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
