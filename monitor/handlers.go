package monitor

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// Whether a cancelled handler stopped is not on the wire: a server that
// runs on in silence looks exactly like one that stopped. A conversation
// watched with an observer (watch --observer, docs/observer.md) carries
// its readings as harness notes (chrono.ChannelObserver), and
// RuleHandlerStops judges each cancelled tools/call by them.
//
// The counts are server-wide and the conversation goes on, so a reading
// is judged against what the wire shows between it and the reading
// before the cancel (the base):
//   - stopped: the observer counts at least as many handlers cancelled
//     as the wire shows calls cancelled and left unanswered since the
//     base;
//   - ran on: it counts more handlers completed than the wire shows calls
//     answered since the base: a handler ended
//     without its response reaching the host, which is what a cancelled
//     call that ran to completion looks like; not judged while a task is
//     working, whose handler completes with no response;
//   - still running: once the grace has passed since the cancel, it
//     counts more handlers running than the wire holds calls open and
//     not cancelled.
//
// The observer counts no read of its own (docs/observer.md), so its reads
// take no part in the sums. Anything else is undecided, counted (CountHandlersUndecided) and never
// guessed. A cancelled call that was answered is not judged here: the
// response rules judge the answer.

// handlerCheck is a cancelled tools/call waiting for the observer to
// tell how its handler ended.
type handlerCheck struct {
	s *session
	r *request
	// base is the last reading answered before the cancel, nil when none.
	base *reading
}

// reading is one answered read of the observer.
type reading struct {
	obs profile.Observation
	seq uint64
	at  time.Duration
	// askSeq is the seq of the note that sent the read; answersAtAsk the
	// tools/call responses the wire had shown by then.
	askSeq       uint64
	answersAtAsk int
}

// observerState is what the monitor keeps of the observer's readings,
// across the conversation's sessions: the counts are server-wide.
type observerState struct {
	// askSeq and answersAtAsk describe the read in flight (askSeq 0:
	// none).
	askSeq       uint64
	answersAtAsk int
	last         *reading
	reads        int
	// toolAnswers counts the responses to the client's tools/call
	// requests, any session.
	toolAnswers int
	checks      []*handlerCheck
	// cancels are the tools/call cancels since the oldest pending
	// check's base was asked, which its count of cancelled handlers
	// must cover.
	cancels []*request
}

// CountHandlersUndecided counts the cancelled calls whose handler's end
// the observer's readings could not tell.
const CountHandlersUndecided = "cancelled handlers the observer could not tell"

// observerNote takes a harness note on chrono.ChannelObserver.
func (s *session) observerNote(ev chrono.Event) {
	o := &s.m.obs
	switch {
	case ev.Text == chrono.TextObserverAsked:
		o.askSeq, o.answersAtAsk = ev.Seq, o.toolAnswers
	case strings.HasPrefix(ev.Text, chrono.TextObserverRead):
		obs, err := profile.ParseObservation(strings.TrimPrefix(ev.Text, chrono.TextObserverRead))
		if err != nil || o.askSeq == 0 {
			return // not a reading, or one whose asking was not recorded
		}
		o.reads++
		r := &reading{obs: obs, seq: ev.Seq, at: ev.Offset, askSeq: o.askSeq, answersAtAsk: o.answersAtAsk}
		o.askSeq = 0
		o.last = r
		s.m.judgeHandlers(r)
	}
}

// observing reports whether the conversation carries observer readings:
// only then is a cancel followed to its handler's end.
func (o *observerState) observing() bool { return o.reads > 0 || o.askSeq != 0 }

// handlerCancelled starts following the handler of r, a tools/call of the
// client just cancelled (a notification, or under 2026-07-28 the close of
// its response stream).
func (s *session) handlerCancelled(r *request) {
	o := &s.m.obs
	if r.side != Client || r.method != mcp.MethodToolsCall || r.taskAug || !o.observing() {
		return
	}
	o.cancels = append(o.cancels, r)
	o.checks = append(o.checks, &handlerCheck{s: s, r: r, base: o.last})
}

// toolAnswered counts a response to the client's tools/call r.
func (s *session) toolAnswered(r *request) {
	if r.side == Client && r.method == mcp.MethodToolsCall {
		s.m.obs.toolAnswers++
	}
}

// judgeHandlers judges the pending checks by reading now.
func (m *Monitor) judgeHandlers(now *reading) {
	o := &m.obs
	var left []*handlerCheck
	done := map[*handlerCheck]bool{}
	for _, c := range o.checks {
		if done[c] {
			continue
		}
		if c.r.responded {
			continue // the response rules judge the answer
		}
		switch fate, with := m.handlerFate(c, now); fate {
		case "":
			left = append(left, c)
		default:
			for _, w := range with {
				done[w] = true
			}
			c.s.handlerJudged(c, now, fate, with)
		}
	}
	o.checks = nil
	for _, c := range left {
		if !done[c] {
			o.checks = append(o.checks, c)
		}
	}
	o.trimCancels()
}

// Fates of a cancelled call's handler.
const (
	fateStopped   = "stopped"
	fateRanOn     = "ran on"
	fateRunning   = "still running"
	fateUndecided = "undecided"
)

// handlerFate tells how c's handler ended by the reading now, "" when it
// cannot tell yet; with are the checks the same evidence settles (the
// calls cancelled since c's base, which the counts cover together).
func (m *Monitor) handlerFate(c *handlerCheck, now *reading) (string, []*handlerCheck) {
	o := &m.obs
	with := []*handlerCheck{c}
	if b := c.base; b != nil {
		var unanswered int
		for _, r := range o.cancels {
			if r.cancelSeq > b.askSeq && !r.responded {
				unanswered++
			}
		}
		for _, d := range o.checks {
			if d != c && d.base != nil && d.base.askSeq >= b.askSeq && !d.r.responded {
				with = append(with, d)
			}
		}
		if now.obs.Cancelled-b.obs.Cancelled >= unanswered {
			return fateStopped, with
		}
		if now.obs.Completed-b.obs.Completed > o.toolAnswers-b.answersAtAsk && !m.taskWorking() {
			return fateRanOn, with
		}
	}
	if now.at-c.r.cancelAt <= m.opts.Grace {
		return "", nil
	}
	if now.obs.Running() > m.openToolCalls() {
		return fateRunning, []*handlerCheck{c}
	}
	return fateUndecided, []*handlerCheck{c}
}

// handlerJudged reports how c's handler ended.
func (s *session) handlerJudged(c *handlerCheck, now *reading, fate string, with []*handlerCheck) {
	r := c.r
	if fate == fateUndecided {
		s.m.counts[CountHandlersUndecided]++
		return
	}
	s.exercise(RuleHandlerStops, Server)
	if fate == fateStopped {
		return
	}
	rule := verdict.Req("CAN-8").Under(spec.V20260728, "CAN-48")
	how := "its cancel"
	if r.closed {
		rule = verdict.Req("CAN-56").Clause("SHOULD") // a close is a cancel under 2026-07-28 alone
		how = "the closing of its response stream (its cancel)"
	}
	base := "no reading before the cancel"
	if c.base != nil {
		base = fmt.Sprintf("before, at #%d: %s", c.base.seq, c.base.obs)
	}
	switch fate {
	case fateRanOn:
		var ids []string
		for _, w := range with {
			ids = append(ids, w.r.id.String())
		}
		s.find(RuleHandlerStops, Server, rule, now.seq, false,
			"the observer counts a handler completed that the wire never answered: the handler of request %s (tools/call), after %s at #%d, ran to completion (observer %s; now, at #%d: %s; cancelled calls unanswered since: %s)",
			r.id, how, r.cancelSeq, base, now.seq, now.obs, strings.Join(ids, ", "))
	case fateRunning:
		s.find(RuleHandlerStops, Server, rule, now.seq, false,
			"the handler of request %s (tools/call) still runs %v after %s at #%d: the observer counts %d handlers running while the wire holds %d calls open and not cancelled (observer %s; now, at #%d: %s)",
			r.id, (now.at - r.cancelAt).Round(time.Millisecond), how, r.cancelSeq, now.obs.Running(), s.m.openToolCalls(), base, now.seq, now.obs)
	}
}

// openToolCalls counts the client's tools/call requests in flight and not
// cancelled, across the sessions.
func (m *Monitor) openToolCalls() int {
	n := 0
	for _, s := range m.sessions {
		for _, r := range s.reqs[Client] {
			if r.method == mcp.MethodToolsCall && r.cancelSeq == 0 {
				n++
			}
		}
	}
	return n
}

// taskWorking reports whether a task followed in any session is not
// terminal: its handler may complete with no response on the wire.
func (m *Monitor) taskWorking() bool {
	for _, s := range m.sessions {
		for _, t := range s.tasks {
			if t.terminal == "" {
				return true
			}
		}
	}
	return false
}

// trimCancels forgets the cancels no pending check's base precedes.
func (o *observerState) trimCancels() {
	if len(o.checks) == 0 {
		o.cancels = o.cancels[:0]
		return
	}
	oldest := uint64(math.MaxUint64)
	for _, c := range o.checks {
		if c.base == nil {
			return // counts from the start: keep them all while it waits
		}
		oldest = min(oldest, c.base.askSeq)
	}
	kept := o.cancels[:0]
	for _, r := range o.cancels {
		if r.cancelSeq > oldest {
			kept = append(kept, r)
		}
	}
	clear(o.cancels[len(kept):])
	o.cancels = kept
}

// endHandlers counts the checks still waiting when the conversation
// ends as undecided. A session's end does not end its checks: the
// handlers are the server's, and a host that ends its session (DELETE)
// right after a cancel leaves the handler to be read after it.
func (m *Monitor) endHandlers() {
	for _, c := range m.obs.checks {
		if !c.r.responded {
			m.counts[CountHandlersUndecided]++
		}
	}
	m.obs.checks = nil
	m.obs.trimCancels()
}
