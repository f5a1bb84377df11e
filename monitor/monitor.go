package monitor

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/wireschema"
)

// Finding is one rule a conversation broke, or one of seed 002's alerts
// (a task left working): where and how, in the revision's words.
type Finding struct {
	// Rule is the rule's ID (Rules).
	Rule string `json:"rule"`
	// Requirement is the registry ID the evidence breaks under Revision,
	// Level its level (or the clause that decided), Verdict the severity
	// the registry gives it (fail, warn or info); an alert cites none and
	// is info.
	Requirement string          `json:"requirement,omitempty"`
	Level       string          `json:"level,omitempty"`
	Verdict     verdict.Verdict `json:"verdict"`
	// Revision is the revision the session spoke.
	Revision string `json:"revision"`
	// Side broke it; Session is the session's key.
	Side    Side   `json:"side"`
	Session string `json:"session,omitempty"`
	// Seq is the sequence number of the event that shows it; Absence is
	// set when what shows it is something that did not happen (then Seq
	// is where the wait began).
	Seq     uint64 `json:"seq"`
	Absence bool   `json:"absence,omitempty"`
	// At is when it was found, on the conversation's clock: the offset
	// of the event that showed it, or of the silence that did.
	At time.Duration `json:"at"`
	// Text says what happened, sanitised.
	Text string `json:"text"`
	// TaskID and RequestIDs name what a task's alert is about.
	TaskID     string   `json:"taskId,omitempty"`
	RequestIDs []string `json:"requestIds,omitempty"`
}

// String is the finding on one line, as a live judge prints it: its
// verdict, side and rule, the requirement with its level and revision,
// the event that shows it and what happened. "fail server/one-response
// RPC-8 (MUST, 2025-11-25) at #12: a second response to request 3". The
// text is sanitised; the session is named when there are several
// (Session other than the one of a stdio conversation).
func (f Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", f.Verdict, ResultID(f.Side, f.Rule))
	if f.Requirement != "" {
		fmt.Fprintf(&b, " %s (%s, %s)", f.Requirement, f.Level, f.Revision)
	}
	switch {
	case f.Absence:
		fmt.Fprintf(&b, " waiting since #%d", f.Seq)
	case f.Seq > 0:
		fmt.Fprintf(&b, " at #%d", f.Seq)
	}
	if f.Session != "" && f.Session != "stdio" {
		fmt.Fprintf(&b, " in session %s", chrono.Sanitize(chrono.Clip(f.Session, 64), false))
	}
	b.WriteString(": " + f.Text)
	return b.String()
}

// Options configures a Monitor.
type Options struct {
	// Revision is the revision every session speaks, when known before
	// the first frame (explore, check); "" learns each session's from
	// its own traffic: initialize (2025-11-25), or the protocol version
	// in a request's _meta (2026-07-28). Fallback is used when a session
	// ends before it said (2025-11-25 if empty).
	Revision, Fallback string
	// Transport is "stdio" or "http": where a frame that is not a
	// message breaks STD-4/STD-5 or RPC-2, and whether a closed response
	// stream is a cancel (2026-07-28 HTTP).
	Transport string
	// Sides are the sides judged; nil judges both. The checker's own
	// sessions judge only the server.
	Sides []Side
	// Window bounds the crossing window: how long after a cancel a
	// response or progress for the request may still come, written
	// before the receiver read the cancel. A session sizes its own from
	// the round trips of its prompt requests (session.window), within
	// [MinWindow, Window]; DefaultWindow if zero.
	Window time.Duration
	// Grace is how long a task may stay working after its host stopped
	// waiting for it, or after tasks/cancel was acknowledged, before an
	// alert. DefaultGrace if zero.
	Grace time.Duration
	// Schema validates every message against the revision's schema
	// (wireschema).
	Schema bool
	// Emit receives each finding as it is made, from the goroutine that
	// fed the event.
	Emit func(Finding)
	// Owned, when not nil, names the requirements the caller judges
	// itself in a session (check: those its case cites, which the case
	// decides on evidence the wire lacks, such as the control
	// extension's): the monitor makes no finding under them there.
	Owned func(session, requirement string) bool
	// Observe, when not nil, is told of what the conversation did, as the
	// monitor follows it (a request sent or answered, a cancel, a task's
	// status), so that a view of it (telemetry) pairs nothing itself.
	Observe func(Activity)
}

// Activity kinds.
const (
	ActRequest  = "request"
	ActResponse = "response"
	ActCancel   = "cancel"
	ActTask     = "task"
)

// Activity is one thing the conversation did, as the monitor followed it.
type Activity struct {
	Kind    string `json:"kind"`
	Session string `json:"session,omitempty"`
	// Revision is the revision the session is judged under when the
	// activity happened: the one it showed, else Options.Fallback.
	Revision string `json:"revision,omitempty"`
	// Side sent the request the activity is about.
	Side Side `json:"side"`
	// ID and Method name the request; Seq and At are where and when the
	// activity happened; Sent is when the request was sent (a response's,
	// a cancel's).
	ID     string        `json:"id,omitempty"`
	Method string        `json:"method,omitempty"`
	Seq    uint64        `json:"seq"`
	At     time.Duration `json:"at"`
	Sent   time.Duration `json:"sent"`
	// Error and ErrCode describe a response that is an error.
	Error   bool `json:"error,omitempty"`
	ErrCode int  `json:"errCode,omitempty"`
	// Cancelled is set on a response to a request its sender had
	// cancelled.
	Cancelled bool `json:"cancelled,omitempty"`
	// TaskID and Status describe a task activity, or the task a
	// request's CreateTaskResult created.
	TaskID string `json:"taskId,omitempty"`
	Status string `json:"status,omitempty"`
}

// observe reports a to Options.Observe.
func (s *session) observe(a Activity) {
	if s.m.opts.Observe != nil {
		a.Session, a.Revision = s.key, s.revision()
		s.m.opts.Observe(a)
	}
}

// Defaults of Options.
const (
	DefaultWindow = 100 * time.Millisecond
	DefaultGrace  = 5 * time.Second
	// MinWindow is the smallest crossing window a session sizes from its
	// round trips: scheduling alone can delay a frame that much.
	MinWindow = 10 * time.Millisecond
)

// Monitor judges one conversation (a watch session, a capture, an
// explorer history): one or more sessions, each keyed by the caller. It
// is safe for concurrent use, though events of one session must come in
// order.
type Monitor struct {
	mu       sync.Mutex
	opts     Options
	sessions map[string]*session
	order    []string
	// tick numbers the events fed, so that the session idle longest is
	// known (touched); idleOpen are the open requests of the sessions
	// ended for being idle past maxSessions, for End to return.
	tick     uint64
	idleOpen []Open
	findings []Finding
	// exercised counts, per side and rule, the times the conversation
	// gave the rule something to judge: a rule never exercised was not
	// tested.
	exercised map[sideRule]int
	// counts are the conversation's figures: requests, responses,
	// cancels, crossings.
	counts map[string]int
	// schema is the schema check of the server's messages, as check
	// reports it: each distinct violation once (Options.Schema).
	schema      results.SchemaReport
	schemaIndex map[string]int
	// spoken are the revisions the sessions were learned to speak.
	spoken map[string]bool
	// obs is what the observer's readings showed (handlers.go).
	obs observerState
	// ruleFindings tallies the findings of each rule against each side
	// (keep).
	ruleFindings map[sideRule]*ruleTally
	// gapped is set once the recording lost frames; gapUndecided counts,
	// per side and rule, the findings not made since (gaps.go).
	gapped       bool
	gapUndecided map[sideRule]int
}

// Counts.
const (
	CountRequests  = "requests"
	CountCancels   = "cancels"
	CountCrossings = "crossings (a response or progress within the window after a cancel)"
	CountProgress  = "progress notifications"
	CountTasks     = "tasks created"
	// CountForgotten counts the responses and progress that named a
	// request the session had forgotten (past its memory bounds), which
	// no rule could judge.
	CountForgotten = "answers to forgotten requests"
)

// New returns a Monitor.
func New(opts Options) *Monitor {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Fallback == "" {
		opts.Fallback = spec.V20251125
	}
	return &Monitor{opts: opts, sessions: map[string]*session{}, exercised: map[sideRule]int{}, counts: map[string]int{},
		schemaIndex: map[string]int{}, spoken: map[string]bool{}}
}

// schemaCheck counts a server frame the schema check looked at and keeps
// each distinct violation once, with where it was first seen. A frame
// that is not JSON is the well-formed rule's finding (STD-4, RPC-2),
// counted checked here.
func (m *Monitor) schemaCheck(session string, ev chrono.Event, checked bool, vs []wireschema.Violation) {
	if ev.Dir != chrono.In {
		return
	}
	switch {
	case checked:
		m.schema.Checked++
	case ev.Kind == chrono.KindFrame:
		m.schema.Unchecked++
	}
	for _, v := range vs {
		if v.Problem.Keyword == wireschema.NotJSON {
			continue
		}
		f := results.SchemaFinding{SchemaViolation: v.Record(), FirstCase: session}
		i, seen := m.schemaIndex[f.ID()]
		if !seen {
			i = len(m.schema.Findings)
			m.schemaIndex[f.ID()] = i
			m.schema.Findings = append(m.schema.Findings, f)
		}
		m.schema.Findings[i].Count++
		m.schema.Findings[i].Cases = 1
	}
}

// Schema returns the schema check of the server's messages so far, in
// the form check's reports show it; revision names the schema applied.
func (m *Monitor) Schema() results.SchemaReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.schema
	out.Findings = slices.Clone(m.schema.Findings)
	return out
}

// Event judges one event of session key's chronology. Events of one
// session must come in sequence order.
func (m *Monitor) Event(key string, ev chrono.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[key]
	if s == nil {
		if len(m.sessions) >= maxSessions {
			m.endIdlest()
		}
		s = newSession(m, key)
		m.sessions[key] = s
		m.order = append(m.order, key)
	}
	m.tick++
	s.touched = m.tick
	s.advance(ev.Offset)
	s.event(ev)
}

// Advance tells the monitor the conversation's clock has reached now (an
// offset on the chronologies' clock) with nothing new on the wire, so
// that a window or a grace that ends in the silence is judged without
// waiting for the next frame.
func (m *Monitor) Advance(now time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.order {
		m.sessions[k].advance(now)
	}
}

// Bounds of the sessions a Monitor follows.
const (
	// maxSessions bounds the sessions followed at once: past it, the one
	// idle longest is ended as EndSession would (a host that opens a
	// session per connection and never ends it would otherwise grow the
	// monitor without bound).
	maxSessions = 1024
	// maxIdleOpen bounds the open requests of such sessions kept for End.
	maxIdleOpen = 4096
)

// endIdlest ends the session whose last event is the oldest.
func (m *Monitor) endIdlest() {
	var idlest *session
	for _, s := range m.sessions {
		if idlest == nil || s.touched < idlest.touched {
			idlest = s
		}
	}
	if idlest == nil {
		return
	}
	open := m.endSession(idlest.key)
	if room := maxIdleOpen - len(m.idleOpen); room < len(open) {
		m.counts[CountOpenUnlisted] += len(open) - max(room, 0)
		open = open[:max(room, 0)]
	}
	m.idleOpen = append(m.idleOpen, open...)
}

// CountOpenUnlisted counts the open requests of sessions ended for being
// idle that End does not list, past maxIdleOpen.
const CountOpenUnlisted = "open requests of idle sessions not listed"

// EndSession judges what only the end of session key shows, and forgets
// it. The requests still open are returned, not reported as violations.
func (m *Monitor) EndSession(key string) []Open {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.endSession(key)
}

func (m *Monitor) endSession(key string) []Open {
	s := m.sessions[key]
	if s == nil {
		return nil
	}
	open := s.end()
	delete(m.sessions, key)
	m.order = slices.DeleteFunc(m.order, func(k string) bool { return k == key })
	return open
}

// End ends every session still open and returns their open requests,
// with those of the sessions ended for being idle.
func (m *Monitor) End() []Open {
	m.mu.Lock()
	open := m.idleOpen
	m.idleOpen = nil
	m.mu.Unlock()
	for _, k := range slices.Clone(m.sessionKeys()) {
		open = append(open, m.EndSession(k)...)
	}
	m.mu.Lock()
	m.endHandlers()
	m.mu.Unlock()
	return open
}

func (m *Monitor) sessionKeys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.order)
}

// keepPerRule is how many findings of one rule against one side a
// Monitor keeps: a server that breaks a rule on every message of a long
// conversation would otherwise grow the list without bound. Every
// finding is still emitted (Options.Emit) and counted, and the worst of
// each rule is kept whatever its place.
const keepPerRule = 64

// keep records f, made in session s: in the list while its rule has
// fewer than keepPerRule there, in the count (and in the count of
// sessions, at the session's first of the rule), and as its rule's worst
// when it is worse than every earlier one.
func (m *Monitor) keep(s *session, f Finding) {
	k := sideRule{f.Side, f.Rule}
	if m.ruleFindings == nil {
		m.ruleFindings = map[sideRule]*ruleTally{}
	}
	t := m.ruleFindings[k]
	if t == nil {
		t = &ruleTally{worst: f}
		m.ruleFindings[k] = t
	}
	t.count++
	if s.foundRules == nil {
		s.foundRules = map[sideRule]bool{}
	}
	if !s.foundRules[k] {
		s.foundRules[k] = true
		t.sessions++
	}
	if rank(f.Verdict) > rank(t.worst.Verdict) {
		t.worst = f
	}
	if t.kept < keepPerRule {
		t.kept++
		m.findings = append(m.findings, f)
	}
}

// ruleTally is what a Monitor knows of one rule's findings against one
// side: how many were made, in how many sessions, how many are in the
// list, and the worst (the first of the worst verdict).
type ruleTally struct {
	count, sessions, kept int
	worst                 Finding
}

// RuleSessions returns how many sessions made findings of rule against
// side: all of them, whatever the list keeps.
func (m *Monitor) RuleSessions(side Side, rule string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.ruleFindings[sideRule{side, rule}]; t != nil {
		return t.sessions
	}
	return 0
}

// Findings returns the findings so far, in the order made: every one up
// to keepPerRule of each rule against each side (Results counts them
// all).
func (m *Monitor) Findings() []Finding {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.findings)
}

// Exercised returns, per side and rule (ResultID), how many times the
// conversation gave the rule something of that side's to judge.
func (m *Monitor) Exercised() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.exercised))
	for k, v := range m.exercised {
		out[ResultID(k.side, k.rule)] = v
	}
	return out
}

// Counts returns the conversation's figures.
func (m *Monitor) Counts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.counts))
	for k, v := range m.counts {
		out[k] = v
	}
	return out
}

// Open is a request still open when its session ended: not a violation,
// but what the report lists so that nothing is silently dropped.
type Open struct {
	Session string `json:"session,omitempty"`
	Side    Side   `json:"side"` // who sent it
	ID      string `json:"id"`
	Method  string `json:"method"`
	Seq     uint64 `json:"seq"`
	// Cancelled is set when its sender had cancelled it.
	Cancelled bool `json:"cancelled,omitempty"`
}

// judges reports whether findings against side are wanted.
func (m *Monitor) judges(side Side) bool {
	return m.opts.Sides == nil || slices.Contains(m.opts.Sides, side)
}

// report records a finding of rule id against side, citing req under the
// session's revision (with clause, when req's level is compound). A
// requirement the rule does not cite under that revision is a bug of the
// rule table, and the finding is dropped rather than miscited; a rule that
// does not hold in the revision reports nothing.
func (s *session) report(ruleID string, side Side, r verdict.Rule, seq uint64, absence bool, format string, args ...any) {
	m := s.m
	if !m.judges(side) {
		return
	}
	rev := s.revision()
	ru := rule(ruleID)
	if !ru.Holds(rev) || m.undecidedByGap(side, ruleID) {
		return
	}
	f := Finding{Rule: ruleID, Revision: rev, Side: side, Session: s.key, Seq: seq, Absence: absence, At: s.now,
		Text: chrono.Sanitize(fmt.Sprintf(format, args...), false), Verdict: verdict.Info}
	if id := r.ID(rev); id != "" {
		if !slices.Contains(ru.Cites[rev], id) {
			return
		}
		j, err := r.Judge(rev)
		if err != nil {
			return
		}
		f.Requirement, f.Level, f.Verdict = j.ID, j.Level, j.Verdict
	}
	if m.opts.Owned != nil && m.opts.Owned(f.Session, f.Requirement) {
		return
	}
	m.keep(s, f)
	if m.opts.Emit != nil {
		m.opts.Emit(f)
	}
}

// alert records one of seed 002's alerts about a task: no requirement,
// info, with the task and the requests involved.
func (s *session) alert(seq uint64, taskID string, reqs []string, format string, args ...any) {
	if !s.m.judges(Client) || s.m.undecidedByGap(Client, RuleTaskStillWorking) {
		return
	}
	f := Finding{Rule: RuleTaskStillWorking, Revision: s.revision(), Side: Client, Session: s.key, Seq: seq, At: s.now, Verdict: verdict.Info,
		Text: chrono.Sanitize(fmt.Sprintf(format, args...), false), TaskID: chrono.Sanitize(taskID, false), RequestIDs: reqs}
	s.m.keep(s, f)
	if s.m.opts.Emit != nil {
		s.m.opts.Emit(f)
	}
}

// exercise counts that rule id had something of side's to judge.
func (s *session) exercise(id string, side Side) { s.m.exercised[sideRule{side, id}]++ }

// sideRule is a rule judged on one side's frames.
type sideRule struct {
	side Side
	rule string
}

// sideOf is the side that sent a frame of direction dir.
func sideOf(dir chrono.Direction) Side {
	if dir == chrono.Out {
		return Client
	}
	return Server
}

// other is the side that is not side.
func other(side Side) Side {
	if side == Client {
		return Server
	}
	return Client
}

// quote cuts untrusted text for a finding's sentence.
func quote(s string) string { return chrono.Sanitize(chrono.Clip(strings.TrimSpace(s), 120), false) }
