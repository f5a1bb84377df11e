package monitor

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// cancel judges notifications/cancelled side sent: it names a request the
// same side issued and believes in flight (CAN-1; 2026-07-28: a client's
// own request, CAN-46, and from a server only a subscriptions/listen,
// CAN-47), never initialize (CAN-2), never a task-augmented request whose
// task exists (CAN-4, CAN-57: that is tasks/cancel's), and it carries the
// request's ID (CAN-6, CAN-51).
func (s *session) cancel(side Side, ev chrono.Event, m *jsonrpc.Message) {
	s.m.counts[CountCancels]++
	s.exercise(RuleCancelTarget, side)
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.RequestID == nil {
		s.find(RuleCancelTarget, side, verdict.Req("CAN-6").Under(spec.V20260728, "CAN-51"), ev.Seq, false,
			"a cancel without requestId: the ID of the request to cancel must be given")
		return
	}
	id, err := jsonrpc.ParseID(p.RequestID)
	if err != nil {
		s.find(RuleCancelTarget, side, verdict.Req("CAN-5").Under(spec.V20260728, "CAN-51"), ev.Seq, false,
			"a cancel whose requestId %s is no request ID", quote(string(p.RequestID)))
		return
	}
	key := id.Key()
	r := s.reqs[side][key]
	if r == nil {
		s.staleCancel(side, ev, id)
		return
	}
	if side == Client && r.method == mcp.MethodInitialize {
		s.exercise(RuleCancelInitialize, Client)
		s.find(RuleCancelInitialize, side, verdict.Req("CAN-2"), ev.Seq, false, "the client cancelled initialize (request %s, sent at #%d)", id, r.seq)
	}
	if r.cancelSeq == 0 {
		r.cancelSeq, r.cancelAt = ev.Seq, ev.Offset
		s.cancelSeen(r)
		s.observe(Activity{Kind: ActCancel, Side: side, ID: r.id.String(), Method: r.method, Seq: ev.Seq, At: ev.Offset, Sent: r.at})
	}
	s.listenEnded(r, ev, "") // a subscription the client cancelled is over
	s.abortPoll(r, ev)
}

// staleCancel judges a cancel that names no request of side in flight:
// one the other side issued (a cancel goes only in its request's
// direction), a task-augmented request whose task exists, one answered
// before the cancel was sent (beyond the crossing window: not believed in
// flight), or one never issued.
func (s *session) staleCancel(side Side, ev chrono.Event, id jsonrpc.ID) {
	key := id.Key()
	if r := s.reqs[other(side)][key]; r != nil {
		switch {
		case side == Server && s.is2026() && r.method == mcp.MethodSubscriptionsListen:
			s.listenEnded(r, ev, mcp.NotificationCancelled) // a server tearing down a subscription (CAN-41)
		case side == Server && s.is2026():
			s.find(RuleCancelTarget, side, verdict.Req("CAN-42"), ev.Seq, false,
				"the server sent notifications/cancelled for the client's request %s (%s), which is not a subscriptions/listen", id, quote(r.method))
		default:
			s.find(RuleCancelTarget, side, verdict.Req("CAN-1").Under(spec.V20260728, "CAN-46"), ev.Seq, false,
				"the %s cancelled request %s (%s), which the %s issued, not it: a cancel goes in its request's direction", side, id, quote(r.method), other(side))
		}
		return
	}
	for _, r := range s.ended[side] {
		if r.id.Key() != key {
			continue
		}
		if r.created != "" {
			s.exercise(RuleCancelTask, side)
			t := s.tasks[r.created]
			if t != nil && t.abortSeq == 0 {
				t.abortSeq, t.abortAt, t.abortReq = ev.Seq, ev.Offset, r.id.String()
				s.aborts++
			}
			s.find(RuleCancelTask, side, verdict.Req("CAN-4").Under(spec.V20260728, "CAN-57"), ev.Seq, false,
				"notifications/cancelled for request %s, which created task %s: a task is cancelled with tasks/cancel", id, quote(r.created))
			return
		}
		s.abortPoll(r, ev)
		if after := ev.Offset - r.respAt; after > s.window() && !r.closed {
			s.find(RuleCancelTarget, side, verdict.Req("CAN-1").Under(spec.V20260728, "CAN-46"), ev.Seq, false,
				"the %s cancelled request %s (%s) %v after its response at #%d: a cancel names a request believed to be in flight",
				side, id, quote(r.method), after.Round(time.Millisecond), r.respSeq)
		} else {
			s.m.counts[CountCrossings]++
		}
		return
	}
	// The requestId's own rule: it must be the ID of a request previously
	// issued (CAN-5; 2026-07-28 CAN-51), more precise than CAN-1's "issued
	// and believed in progress".
	s.find(RuleCancelTarget, side, verdict.Req("CAN-5").Under(spec.V20260728, "CAN-51"), ev.Seq, false,
		"the %s cancelled request %s, which it never issued in this session", side, id)
}

// cancelSeen takes the first cancel of r, a request still open (a
// notification, or under 2026-07-28 the close of its response stream):
// it may be retired past maxOpen (retire.go), and its handler is
// followed by the observer's readings (handlers.go).
func (s *session) cancelSeen(r *request) {
	s.noteCancelled(r)
	s.handlerCancelled(r)
}

// abortPoll notes, when r is a poll of a task (tasks/get, tasks/result)
// that its client cancelled, the host's local abort of the task.
func (s *session) abortPoll(r *request, ev chrono.Event) {
	if r.side != Client || r.taskID == "" {
		return
	}
	if t := s.tasks[r.taskID]; t != nil && t.abortSeq == 0 && (r.method == mcp.MethodTasksGet || r.method == mcp.MethodTasksResult) {
		t.abortSeq, t.abortAt, t.abortReq = ev.Seq, ev.Offset, r.id.String()
		s.aborts++
	}
}

// afterCancel judges a response or progress (what) of a request its
// sender had cancelled: within the crossing window it may have been
// written before the cancel was read (CAN-11), after it the receiver went
// on (2025-11-25: CAN-8 SHOULD; 2026-07-28: CAN-54 MUST NOT over stdio,
// CAN-56 over HTTP). A request whose stream was closed under 2026-07-28
// can carry nothing more on it; what still comes came on another stream.
// A request that cannot be cancelled is not judged (cancellable).
func (s *session) afterCancel(ruleID string, side Side, r *request, ev chrono.Event, what string) {
	if !cancellable(r) {
		return
	}
	s.exercise(ruleID, side)
	after := ev.Offset - r.cancelAt
	if after <= s.window() {
		if why := answeredCancel(r, ruleID, ev.Offset); why != "" {
			s.find(ruleID, side, cancelRule(s), ev.Seq, false, "%s for request %s (%s) %v after its cancel at #%d, within the crossing window, yet %s: the cancel brought it, it did not cross it",
				what, r.id, quote(r.method), after.Round(time.Millisecond), r.cancelSeq, why)
			return
		}
		s.m.counts[CountCrossings]++
		return
	}
	rule := cancelRule(s)
	how := "its cancel"
	if r.closed {
		how = "the closing of its response stream (its cancel)"
	}
	s.find(ruleID, side, rule, ev.Seq, false, "%s for request %s (%s) %v after %s at #%d, beyond the crossing window of %v",
		what, r.id, quote(r.method), after.Round(time.Millisecond), how, r.cancelSeq, s.window().Round(time.Millisecond))
}

// cancellable reports whether a cancel of r is one its receiver should
// honour: not initialize's, which a client must never cancel (CAN-2, the
// client's finding) and which the server may therefore ignore (CAN-9,
// "the request cannot be cancelled"): its answer is the handshake going
// on, not the server ignoring a cancel.
func cancellable(r *request) bool { return r.method != mcp.MethodInitialize }

// streamClosed takes the record of a request whose response stream the
// client closed before its response: under 2026-07-28 that is the
// request's cancel (CAN-43); under 2025-11-25 a disconnection the client
// should follow with a resume or a cancel (HTTP-26).
func (s *session) streamClosed(ev chrono.Event) {
	text := strings.TrimPrefix(ev.Text, chrono.TextStreamClosed)
	idText, _, _ := strings.Cut(text, ":")
	idText = strings.TrimSpace(idText)
	for _, r := range s.reqs[Client] {
		if r.id.String() != idText {
			continue
		}
		if s.is2026() {
			s.m.counts[CountCancels]++
			if r.cancelSeq == 0 {
				r.cancelSeq, r.cancelAt, r.closed = ev.Seq, ev.Offset, true
				s.cancelSeen(r)
				s.observe(Activity{Kind: ActCancel, Side: Client, ID: r.id.String(), Method: r.method, Seq: ev.Seq, At: ev.Offset, Sent: r.at})
			}
			s.listenEnded(r, ev, "")
			return
		}
		if !r.dropped {
			r.dropped, r.droppedAt = true, ev.Offset
			s.drops++
		}
		return
	}
}

// resumed takes a GET that resumes a dropped stream (Last-Event-ID): its
// request was not abandoned.
func (s *session) resumed(ev chrono.Event) {
	if !strings.Contains(strings.ToLower(ev.Text), "last-event-id") {
		return
	}
	for _, r := range s.reqs[Client] {
		if r.dropped {
			r.resumed = true
		}
	}
}

// graceDropped judges the requests whose stream the client dropped and
// neither resumed nor cancelled within the grace: abandoned.
func (s *session) graceDropped() {
	if s.drops == 0 {
		return
	}
	for _, r := range s.reqs[Client] {
		if r.dropped && !r.resumed && r.cancelSeq == 0 && s.now-r.droppedAt > s.m.opts.Grace {
			s.abandoned(r)
			r.resumed = true // judged once
		}
	}
}

// abandoned reports a request whose client stopped waiting for it (it
// dropped the stream, never resumed it) without cancelling it.
func (s *session) abandoned(r *request) {
	s.exercise(RuleAbandoned, Client)
	s.find(RuleAbandoned, Client, verdict.Req("HTTP-26"), r.seq, true,
		"the client dropped the response stream of request %s (%s) and neither resumed it nor cancelled the request: to stop waiting, it should send notifications/cancelled",
		r.id, quote(r.method))
}

// cancelRule is the rule a message for a cancelled request breaks:
// CAN-8 (SHOULD) under 2025-11-25; under 2026-07-28 CAN-54 (MUST NOT)
// over stdio, CAN-56 over HTTP.
func cancelRule(s *session) verdict.Rule {
	if s.http() {
		return verdict.Req("CAN-8").Under(spec.V20260728, "CAN-56")
	}
	return verdict.Req("CAN-8").Under(spec.V20260728, "CAN-54")
}

// cancelWords mark an error that says it answers a cancel.
var cancelWords = []string{"cancel", "abort", "interrupt"}

// answeredCancel says why a response that came, at, within the crossing
// window after a cancel was nonetheless the cancel's answer, not the
// request completing as the cancel crossed it; "" when the evidence fits
// both. Two pieces of evidence decide:
//
//   - an error whose message names the cancel ("context canceled",
//     "Request cancelled"): work that completed on its own says so
//     otherwise;
//   - the call's own pace: progress with a total, read before the
//     cancel, says how much work was left and how fast it went; an
//     answer sooner than half the time the rest needs at that pace
//     cannot be the work completing on its own.
//
// A result, or an error of another kind, with no such pace may have
// crossed the cancel, and is not judged.
func answeredCancel(r *request, ruleID string, at time.Duration) string {
	if ruleID != RuleCancelNoResponse {
		return ""
	}
	if r.isError {
		msg := strings.ToLower(r.errMsg)
		for _, w := range cancelWords {
			if strings.Contains(msg, w) {
				return fmt.Sprintf("it is an error that names the cancel (%s)", quote(r.errMsg))
			}
		}
	}
	if r.progress == 0 || r.total <= r.last || r.last <= 0 || r.lastAt <= r.at || r.lastAt > r.cancelAt {
		return ""
	}
	// The pace: progress units per unit of time, from the request to its
	// last progress before the cancel.
	rest := time.Duration(float64(r.lastAt-r.at) * (r.total - r.last) / r.last)
	if after := at - r.cancelAt; after < rest/2 {
		return fmt.Sprintf("its work was at %v of %v when cancelled, and at the pace it showed (%v for %v) the rest needs %v",
			r.last, r.total, (r.lastAt - r.at).Round(time.Millisecond), r.last, rest.Round(time.Millisecond))
	}
	return ""
}
