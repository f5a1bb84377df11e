package explore

// The checker judges a history with two engines. The passive rule engine
// (package monitor) reads each session's events and judges the server's
// frames by what they show: well-formed frames (STD-4, RPC-2, HTTP-11),
// one response per request with its own ID (RPC-8, RPC-11, RPC-61,
// STD-43), no answer to a notification (RPC-15, and over HTTP its POST
// answered 202, HTTP-11), progress that names a known token (PRG-7),
// increases (PRG-4) and stops after the response or the task's end
// (PRG-14, PRG-11), a server cancel only of its own requests (CAN-1,
// CAN-42), a terminal task that stays terminal (TSK-31, TSK-65),
// tasks/cancel refused for a terminal task (TSK-63) and answered as
// cancelled (TSK-64), and the Streamable HTTP stream rules, from the
// heads, SSE events and stream ends the transport records: priming
// (HTTP-16), event IDs unique across streams (HTTP-40; none under
// 2026-07-28, HTTP-93), progress on its own request's stream (HTTP-22,
// HTTP-31; LOG-46), a resumed stream replaying only its own (HTTP-44),
// the response ending its stream (HTTP-91), X-Accel-Buffering (HTTP-92),
// no session under 2026-07-28 (HTTP-107), a visible session ID (HTTP-48)
// and -32601 with 404 (HTTP-81). Its findings are violations under its
// rule IDs; a frame it found to be a replayed copy of another stream's
// message (HTTP-44) is not judged again here.
//
// What stays here is explore's own, because it rests on evidence the
// wire of one session does not carry:
//
//   - cancel-no-response, cancel-no-progress: how a cancel ended. With
//     the control extension, the operation's end checkpoint says whether
//     the cancel was accepted, and the gates released before it what the
//     server had been allowed to write; without it, the call's pace, the
//     tool's pace over the history and the observer's counts. The
//     monitor's crossing window judges time alone, which a loaded machine
//     can stretch: its findings of these two rules are not taken.
//   - one-response's absences: a response that never came (RPC-2, PNG-1,
//     LIF-42, TSK-46, HTTP-21), told apart from a request abandoned when
//     explore closed or lost the session, or waited for in vain at the
//     operation timeout (its harness notes), and a call the server ended
//     as cancelled though never cancelled (its end checkpoint: HTTP-25
//     after a dropped stream, CAN-14 after an invalid cancel); and, under
//     2026-07-28, a task answered to a call explore sent without the tasks
//     extension (TSX-2).
//   - no-progress-after-end for a task: progress beyond the task's ticks,
//     or beyond what the gates allowed before its tasks/cancel (PRG-11).
//   - token-reusable, cleanup-once, task-worker-stops: the control
//     extension's counters (releases, tokens held, a worker's ticks), and
//     a call refused for a token explore reused on purpose (PRG-2).
//   - session-usable: whether explore closed the session or lost it, and
//     the answers to its own liveness checks (ping, server/discover).
//   - task-list-own: a task another session of the trial created.
//   - task-not-cancelled-by-notification, task-result-equivalent: a task
//     cancelled after explore named its creating request in
//     notifications/cancelled on purpose (CAN-4), and tasks/result's
//     answers against each other and the task's end (TSK-46, TSK-48,
//     TSK-55), which the monitor does not judge.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
)

// Figures are what a history counted: Races, the orderings the spec
// allows, by which way each went (they are not violations), and Counts,
// how much of each kind of thing happened.
type Figures struct {
	Races  map[string]int `json:"races"`
	Counts map[string]int `json:"counts"`
}

// NewFigures returns empty figures.
func NewFigures() Figures { return Figures{Races: map[string]int{}, Counts: map[string]int{}} }

// Add adds other's figures to f.
func (f Figures) Add(other Figures) {
	for k, v := range other.Races {
		f.Races[k] += v
	}
	for k, v := range other.Counts {
		f.Counts[k] += v
	}
}

// Race orderings. A call is parked when the explorer had seen it reach
// the gate it waits at (or it had not been released at all); a cancel
// sent right after a release races what that release let the server
// write.
const (
	RaceParkedAtStart    = "cancel of a call parked at its start (before the first progress): accepted"
	RaceParkedAtStep     = "cancel of a call parked between steps: accepted"
	RaceProgressFirst    = "cancel racing the next progress: the progress was written first (within the race window)"
	RaceUncontrolled     = "cancel of a call on a target without the control extension: nothing after it outside the race window its pace allows"
	RaceCancelFirst      = "cancel racing the next progress: the cancel was read first"
	RaceResponseAccepted = "cancel racing the response: the cancel was read first (accepted)"
	RaceResponseFirst    = "cancel racing the response: the response was written first (cancel ignored, CAN-9)"
	RaceUnknown          = "cancel without evidence of acceptance (no control extension): the response came anyway"
	RaceUnknownSilent    = "cancel without evidence of acceptance (no control extension): no response"
	RaceClosedResponse   = "stream closed racing the response (2026-07-28 HTTP): the response was written first and closed with the stream"
	RaceTaskCancelFirst  = "tasks/cancel of a working task: accepted"
	RaceTaskEndFirst     = "tasks/cancel racing the worker's end: the worker ended first (-32602)"
)

// Counts.
const (
	CountCalls          = "calls completed"
	CountProgress       = "progress notifications"
	CountBadCancels     = "invalid cancels sent (to be ignored, CAN-14)"
	CountTokensReused   = "progress tokens reused after completion"
	CountTaskCancelDone = "tasks/cancel of a terminal task refused (-32602)"
	CountResultBlocked  = "tasks/result answers that blocked until the task ended"
)

// Check checks a history against every invariant that holds under
// revision and returns the violations, in the order of the history, and
// the race figures. Each session's events also go to the passive rule
// engine (monitor), which judges the server's frames, first: its
// findings are violations too, but for the rules explore judges by its
// own evidence (ownJudgement), and a frame it found to be a replayed
// copy of another stream's message (HTTP-44) is not judged again. A
// violation both find is reported once.
func Check(h *History, revision string) ([]Violation, Figures) {
	c := &checker{h: h, rev: revision, fig: NewFigures(), idOwner: map[string]int{}, tokenOwner: map[string]int{}, taskOwner: map[string]int{},
		mons: map[string]*monitor.Monitor{}, byLabel: map[string]*sessState{}, foreign: map[uint64]bool{}}
	for i, si := range h.Sessions {
		s := newSessState(i, si)
		c.sess = append(c.sess, s)
		c.byLabel[si.Label] = s
	}
	for i, ev := range h.Events {
		o := h.origins[i]
		s := c.sess[o.session]
		mev := ev
		mev.Channel = o.channel
		c.monitorOf(s).Event(s.info.Label, mev)
		c.event(s, o.channel, ev)
	}
	for _, k := range slices.Sorted(maps.Keys(c.mons)) {
		c.mons[k].End()
	}
	c.paces = c.tallyPaces()
	for _, s := range c.sess {
		c.finish(s)
	}
	slices.SortStableFunc(c.out, func(a, b Violation) int { return cmp.Compare(a.Seq, b.Seq) })
	c.out = slices.CompactFunc(c.out, func(a, b Violation) bool {
		return a.Seq == b.Seq && a.Session == b.Session && a.Same(b)
	})
	return c.out, c.fig
}

// monitorOf is the monitor that judges session s: one per transport in
// the history (over stdio and in process one stream carries the session;
// over Streamable HTTP a stream per request, and the POST's own answer).
func (c *checker) monitorOf(s *sessState) *monitor.Monitor {
	tr := "stdio"
	if s.info.Transport == TransportHTTP {
		tr = "http"
	}
	m := c.mons[tr]
	if m == nil {
		m = monitor.New(monitor.Options{Revision: c.rev, Transport: tr, Sides: []monitor.Side{monitor.Server}, Emit: c.take})
		c.mons[tr] = m
	}
	return m
}

// take turns a finding of the monitor into a violation, as it is made,
// unless explore judges its rule by its own evidence (ownJudgement). A
// frame the monitor found to be a replayed copy of another stream's
// message (HTTP-44) is marked foreign, for explore not to take it for
// its request's own.
func (c *checker) take(f monitor.Finding) {
	if slices.Contains(ownJudgement, f.Rule) {
		return
	}
	if f.Rule == InvReplayOwnStream {
		c.foreign[f.Seq] = true
	}
	c.out = append(c.out, Violation{Invariant: f.Rule, Requirement: f.Requirement, Level: f.Level, Session: f.Session,
		Seq: f.Seq, Absence: f.Absence, Text: f.Text + c.elsewhere(c.byLabel[f.Session], f)})
}

// elsewhere names the other session of the trial a frame the monitor
// found foreign to its own belongs to (the monitor sees one session at a
// time): a progress token, or a response's ID, another session gave.
func (c *checker) elsewhere(s *sessState, f monitor.Finding) string {
	if s == nil || f.Rule != InvTokenKnown && (f.Rule != InvOneResponse || f.Requirement != "RPC-8") {
		return ""
	}
	ev, ok := c.h.event(f.Seq)
	if !ok {
		return ""
	}
	m, ok := decodeFrame(ev)
	if !ok {
		return ""
	}
	switch {
	case m.Method == mcp.NotificationProgress:
		if p, err := peer.ParseProgress(m.Params); err == nil {
			if o := c.other(s, c.tokenOwner, p.Token.Key()); o != "" {
				return " (a token of session " + o + ")"
			}
		}
	case m.Kind.IsResponse() && m.ID.IsValid() && s.reqs[m.ID.Key()] == nil:
		if o := c.other(s, c.idOwner, m.ID.Key()); o != "" {
			return " (an id of session " + o + ")"
		}
	}
	return ""
}

// Primary is the violation a report leads with: the first one that
// something the server did shows, else the first absence.
func Primary(vs []Violation) (Violation, bool) {
	for _, v := range vs {
		if !v.Absence {
			return v, true
		}
	}
	if len(vs) > 0 {
		return vs[0], true
	}
	return Violation{}, false
}

type checker struct {
	h   *History
	rev string
	// sess is the state of each session, in the order of h.Sessions.
	sess []*sessState
	out  []Violation
	fig  Figures
	// The session that sent each request ID, gave each token, created
	// each task: a frame that names another session's is told apart from
	// one that names nothing at all.
	idOwner, tokenOwner, taskOwner map[string]int
	// paces is what the whole history shows of each tool's pace, for
	// the cancels of targets without the control extension.
	paces map[paceKey]*toolPace
	// mons are the monitors judging the sessions, by transport; byLabel
	// the sessions by label; foreign the sequence numbers of the frames
	// the monitor found to be replayed copies of another stream's
	// messages (HTTP-44).
	mons    map[string]*monitor.Monitor
	byLabel map[string]*sessState
	foreign map[uint64]bool
}

// req is one request the explorer sent.
type req struct {
	id     jsonrpc.ID
	method string
	seq    uint64
	tool   string
	key    string // tools/call: arguments.key (the operation key)
	steps  int
	// stepsGiven is set when an argument (steps, ticks) said how many
	// steps the call has; steps is otherwise a guess.
	stepsGiven bool
	// observerRead is set on a read of the profile's observer
	// (docs/observer.md): a request of the explorer's own, not a call of
	// the tool under test.
	observerRead bool
	taskAug      bool
	token        jsonrpc.ProgressToken
	// checkpoint is what an await or release names; taskID what a task
	// method names.
	checkpoint string
	taskID     string
	// cancelSeq is our first notifications/cancelled for it; released
	// the gates of its key released before that.
	cancelSeq uint64
	released  int
	// The response: how many came, the first.
	responses int
	respSeq   uint64
	resp      *jsonrpc.Message
	// respChannel is the channel the response came on.
	respChannel string
	progress    int
	// progressAtResp is how many progress notifications had been read
	// when the response was.
	progressAtResp int
	// sentAt, cancelAt, respAt and progressAt are when (on the history's
	// clock) the request and its cancel were sent, the response read and
	// each progress read: on a target without the control extension the
	// call's own pace is the evidence of what a cancel changed
	// (uncontrolledCancel).
	sentAt, cancelAt, respAt time.Duration
	progressAt               []time.Duration
	// postCancel are the progress notifications after our cancel, by
	// their number among the request's progress.
	postCancel []progressAt
	abandoned  bool
	// parked is set when, at our cancel, the call was known to wait at
	// the gate after its last release.
	parked bool
	// timedOut is set when the explorer stopped waiting for its answer
	// at the operation timeout: the absence is then evidence, even if
	// the session is closed afterwards.
	timedOut bool
	dropped  bool
	// closed is set when the cancel was the closing of its response
	// stream (2026-07-28 Streamable HTTP): nothing more can be read for
	// it, a response written before the close included.
	closed bool
	// reuses is the earlier request whose token this one reuses, once
	// that one had ended.
	reuses *req
	// answeredCancel is set once the response after its cancel was found
	// to be the cancel's answer, not the call completing on its own.
	answeredCancel bool
}

type progressAt struct {
	seq uint64
	n   int
}

// task is one task created in a session.
type task struct {
	id     string
	key    string
	create *req
	ticks  int
	// terminal is the first terminal status that arrived.
	terminal    string
	terminalSeq uint64
	// cancelReq is our tasks/cancel, released the gates released before
	// it, cancelOK its successful answer.
	cancelReq   uint64
	released    int
	cancelOK    uint64
	notifCancel uint64
	progress    int
	results     []string
	resultSeq   []uint64
	endReached  bool
}

// sessState is the checker's view of one session.
type sessState struct {
	idx     int
	info    SessionInfo
	reqs    map[string]*req
	byText  map[string]*req // by the ID as the chronology writes it
	order   []*req
	byKey   map[string]*req
	tokens  map[string]*req
	gates   map[string]map[string]bool
	ended   map[string]string // op key → KEY/end outcome
	reached map[string]int    // op key → the last step checkpoint seen reached
	tasks   map[string]*task
	taskKey map[string]*task
	// badCancel is the first cancel that must be ignored.
	badCancel  uint64
	closed     bool
	lost       bool
	drain      uint64
	counters   *control.Counters
	countersAt uint64
	// streamReq is, over Streamable HTTP, the request each POST's
	// exchange answers.
	streamReq map[string]*req
	// observations are the reads of the profile's observer, in order:
	// the first when the session opened, the last at the drain.
	observations []observation
}

// observation is one read of the observer and the sequence number of its
// answer.
type observation struct {
	seq    uint64
	counts profile.Observation
}

func newSessState(i int, info SessionInfo) *sessState {
	return &sessState{idx: i, info: info, reqs: map[string]*req{}, byText: map[string]*req{}, byKey: map[string]*req{}, tokens: map[string]*req{},
		gates: map[string]map[string]bool{}, ended: map[string]string{}, reached: map[string]int{}, tasks: map[string]*task{}, taskKey: map[string]*task{},
		streamReq: map[string]*req{}}
}

// violate records a violation of inv citing req.
func (c *checker) violate(s *sessState, inv, reqID string, seq uint64, absence bool, format string, args ...any) {
	reqID, ok := cite(c.rev, inv, reqID)
	if !ok {
		return
	}
	c.out = append(c.out, Violation{Invariant: inv, Requirement: reqID, Level: level(reqID), Session: s.info.Label,
		Seq: seq, Absence: absence, Text: fmt.Sprintf(format, args...)})
}

// other names the session, other than s, that owns a key, or "".
func (c *checker) other(s *sessState, owners map[string]int, key string) string {
	if i, ok := owners[key]; ok && i != s.idx {
		return c.sess[i].info.Label
	}
	return ""
}

func (c *checker) event(s *sessState, channel string, ev chrono.Event) {
	switch {
	case ev.Dir == chrono.Harness:
		c.harness(s, channel, ev)
	case ev.Kind != chrono.KindFrame:
	case ev.Dir == chrono.Out:
		c.outFrame(s, channel, ev)
	default:
		c.inFrame(s, channel, ev)
	}
}

func (c *checker) harness(s *sessState, channel string, ev chrono.Event) {
	switch {
	case channel == noteChannel && ev.Text == noteClosing:
		s.closed = true
		if s.drain > 0 {
			break // the drain waited for everything still due
		}
		// Closed in the middle of the trial: what was in flight is
		// abandoned, except what the explorer had already waited for
		// in vain.
		for _, r := range s.order {
			if r.responses == 0 && !r.timedOut {
				r.abandoned = true
			}
		}
	case ev.Kind == chrono.KindDeadline && strings.HasPrefix(channel, "request "):
		if r := s.byText[strings.TrimPrefix(channel, "request ")]; r != nil && r.responses == 0 {
			r.timedOut = true
		}
	case channel == noteChannel && ev.Text == noteDrain:
		s.drain = ev.Seq
	case channel == noteChannel && ev.Kind == chrono.KindError && strings.HasPrefix(ev.Text, notePrefLost):
		c.lose(s, ev.Seq, strings.TrimPrefix(ev.Text, notePrefLost))
	case ev.Kind == chrono.KindNote && ev.Text == "end of stream" && !s.closed:
		c.lose(s, ev.Seq, "the server's output ended")
	case ev.Kind == chrono.KindDecision && strings.HasPrefix(ev.Text, chrono.TextStreamClosed):
		// 2026-07-28 Streamable HTTP: closing the request's response
		// stream is the cancel (CAN-43).
		text, _, _ := strings.Cut(strings.TrimPrefix(ev.Text, chrono.TextStreamClosed), ":")
		if r := s.byText[text]; r != nil && r.cancelSeq == 0 {
			r.cancelSeq, r.closed = ev.Seq, true
			r.released = len(s.gates[r.key])
			r.parked = r.released == 0 || s.reached[r.key] >= r.released
		}
	case ev.Kind == chrono.KindDecision && strings.HasPrefix(channel, "SSE ") && strings.Contains(ev.Text, "on purpose"):
		if r := s.streamReq[strings.TrimPrefix(channel, "SSE ")]; r != nil {
			r.dropped = true
		}
	}
}

// lose records that the session ended without the explorer closing it.
func (c *checker) lose(s *sessState, seq uint64, why string) {
	if s.lost || s.closed {
		return
	}
	s.lost = true
	for _, r := range s.order {
		if r.responses == 0 {
			r.abandoned = true // judged as the session's loss, once
		}
	}
	if s.badCancel > 0 {
		c.violate(s, InvSessionUsable, "CAN-14", seq, false,
			"the session ended (%s) after an invalid cancel at #%d: invalid cancels should be ignored and the session go on", why, s.badCancel)
		return
	}
	c.violate(s, InvSessionUsable, "CAN-11", seq, false, "the session ended (%s) while it was being used", why)
}

// outWire is a frame the explorer sent, decoded in one pass with the
// params members the checker reads.
type outWire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Key   string `json:"key"`
			Steps *int   `json:"steps"`
			Ticks *int   `json:"ticks"`
		} `json:"arguments"`
		Task json.RawMessage `json:"task"`
		URI  string          `json:"uri"`
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
		Checkpoint string          `json:"checkpoint"`
		TaskID     string          `json:"taskId"`
		RequestID  json.RawMessage `json:"requestId"`
	} `json:"params"`
}

func (c *checker) outFrame(s *sessState, channel string, ev chrono.Event) {
	if ev.Truncated || ev.Summary == nil || ev.Summary.Malformed != "" {
		return
	}
	if c.quickControl(s, channel, ev) {
		return
	}
	var w outWire
	if json.Unmarshal(ev.Raw, &w) != nil {
		return
	}
	switch ev.Summary.Kind {
	case "request":
		c.outRequest(s, channel, ev, &w)
	case "notification":
		if w.Method == mcp.NotificationCancelled {
			c.outCancel(s, ev, w.Params.RequestID)
		}
	}
}

func (c *checker) outRequest(s *sessState, channel string, ev chrono.Event, w *outWire) {
	id, err := jsonrpc.ParseID(w.ID)
	if err != nil {
		return
	}
	p := &w.Params
	r := &req{id: id, method: w.Method, seq: ev.Seq, sentAt: ev.Offset, checkpoint: p.Checkpoint, taskID: p.TaskID}
	switch w.Method {
	case mcp.MethodToolsCall:
		a := p.Arguments
		r.tool, r.key, r.steps = p.Name, a.Key, 3
		switch {
		case a.Steps != nil:
			r.steps, r.stepsGiven = *a.Steps, true
		case a.Ticks != nil:
			r.steps, r.stepsGiven = *a.Ticks, true
		}
		r.observerRead = c.h.observer != nil && c.h.observer.Tool != "" && p.Name == c.h.observer.Tool
		r.taskAug = len(p.Task) > 0 && string(p.Task) != "null"
		if r.key != "" {
			s.byKey[r.key] = r
		}
		if tok, err := jsonrpc.ParseToken(p.Meta.Token); err == nil {
			r.token = tok
			if prev := s.tokens[tok.Key()]; prev != nil && prev.responses > 0 && !prev.taskAug {
				r.reuses = prev
				c.fig.Counts[CountTokensReused]++
			}
			s.tokens[tok.Key()] = r
			c.tokenOwner[tok.Key()] = s.idx
		}
	case mcp.MethodControlRelease:
		key, _, _ := strings.Cut(p.Checkpoint, "/")
		if s.gates[key] == nil {
			s.gates[key] = map[string]bool{}
		}
		s.gates[key][p.Checkpoint] = true
	case mcp.MethodResourcesRead:
		r.observerRead = c.h.observer != nil && c.h.observer.Resource != "" && p.URI == c.h.observer.Resource
	case mcp.MethodTasksCancel:
		if t := s.tasks[p.TaskID]; t != nil && t.cancelReq == 0 {
			t.cancelReq, t.released = ev.Seq, len(s.gates[t.key])
		}
	}
	if strings.HasPrefix(channel, "POST #") {
		s.streamReq[channel] = r
	}
	s.reqs[id.Key()] = r
	s.byText[ev.Summary.ID] = r
	s.order = append(s.order, r)
	c.idOwner[id.Key()] = s.idx
}

func (c *checker) outCancel(s *sessState, ev chrono.Event, requestID json.RawMessage) {
	id, err := jsonrpc.ParseID(requestID)
	r := s.reqs[id.Key()]
	switch {
	case err != nil || r == nil || r.responses > 0:
		// Malformed, unknown or for a completed request: to be ignored
		// (CAN-14). One naming the request that created a task must not
		// cancel the task (CAN-4).
		if s.badCancel == 0 {
			s.badCancel = ev.Seq
		}
		c.fig.Counts[CountBadCancels]++
		if r != nil && r.taskAug {
			for _, t := range s.tasks {
				if t.create == r && t.notifCancel == 0 {
					t.notifCancel = ev.Seq
				}
			}
		}
	case r.cancelSeq == 0:
		r.cancelSeq, r.cancelAt = ev.Seq, ev.Offset
		r.released = len(s.gates[r.key])
		r.parked = r.released == 0 || s.reached[r.key] >= r.released
	}
}

func (c *checker) inFrame(s *sessState, channel string, ev chrono.Event) {
	if ev.Summary != nil && ev.Summary.Malformed != "" {
		return // the monitor's (frames-well-formed)
	}
	if c.foreign[ev.Seq] {
		return // a replayed copy of another stream's message: the monitor's (HTTP-44)
	}
	if c.quickAnswer(s, channel, ev) {
		return
	}
	m, ok := decodeFrame(ev)
	if !ok {
		return
	}
	switch {
	case m.Kind.IsResponse():
		c.response(s, channel, ev, m)
	case m.Kind == jsonrpc.KindNotification && m.Method == mcp.NotificationProgress:
		c.progress(s, ev, m)
	case m.Kind == jsonrpc.KindNotification && m.Method == mcp.NotificationTaskStatus:
		if t, err := peer.ParseTask(m.Params); err == nil {
			c.observe(s, t, ev.Seq, mcp.NotificationTaskStatus)
		}
	}
}

// quickAnswer takes the answer to a release or to an await of a step,
// the commonest frames of a trial, from the chronology's summary alone:
// nothing in them needs decoding. It reports whether it took the frame.
func (c *checker) quickAnswer(s *sessState, channel string, ev chrono.Event) bool {
	sum := ev.Summary
	if sum == nil || sum.Kind != "result" {
		return false
	}
	r := s.byText[sum.ID]
	if r == nil || r.responses > 0 {
		return false
	}
	switch {
	case r.method == mcp.MethodControlRelease:
	case r.method == mcp.MethodControlAwait && !strings.HasSuffix(r.checkpoint, "/end"):
		if key, step, ok := strings.Cut(r.checkpoint, "/step/"); ok {
			if n, err := strconv.Atoi(step); err == nil && n > s.reached[key] {
				s.reached[key] = n
			}
		}
	default:
		return false
	}
	r.responses, r.respSeq, r.respChannel = 1, ev.Seq, channel
	return true
}

// quickControl takes a release or an await the explorer sent from the
// summary and the checkpoint's text, without decoding the frame; false
// when the frame is not one (or not in the form the explorer writes).
func (c *checker) quickControl(s *sessState, channel string, ev chrono.Event) bool {
	sum := ev.Summary
	if sum.Kind != "request" || sum.Method != mcp.MethodControlRelease && sum.Method != mcp.MethodControlAwait {
		return false
	}
	const mark = `"checkpoint":"`
	i := bytes.Index(ev.Raw, []byte(mark))
	if i < 0 {
		return false
	}
	rest := ev.Raw[i+len(mark):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return false
	}
	var w outWire
	w.ID, w.Method, w.Params.Checkpoint = json.RawMessage(sum.ID), sum.Method, string(rest[:j])
	c.outRequest(s, channel, ev, &w)
	return true
}

// wireFrame is one pass over a recorded frame, its members kept raw.
type wireFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// decodeFrame decodes a recorded frame in one pass: the transport has
// already decoded it strictly and classified it in its summary (a
// malformed frame never gets here), so the checker needs its members,
// not another validation.
func decodeFrame(ev chrono.Event) (*jsonrpc.Message, bool) {
	if ev.Truncated || ev.Summary == nil || ev.Summary.Malformed != "" {
		return nil, false
	}
	var w wireFrame
	if json.Unmarshal(ev.Raw, &w) != nil {
		return nil, false
	}
	kind, ok := jsonrpc.ParseKind(ev.Summary.Kind)
	if !ok {
		return nil, false
	}
	m := &jsonrpc.Message{Kind: kind, Method: w.Method, Params: w.Params, Result: w.Result, Error: w.Error, Raw: ev.Raw}
	if len(w.ID) > 0 {
		if string(w.ID) == "null" {
			m.NullID = true
		} else if id, err := jsonrpc.ParseID(w.ID); err == nil {
			m.ID = id
		}
	}
	return m, true
}

// response takes the response to one of the session's requests. One
// with a null id (RPC-11, RPC-15), for an ID the session never sent, or
// a second one (RPC-8) is the monitor's.
func (c *checker) response(s *sessState, channel string, ev chrono.Event, m *jsonrpc.Message) {
	r := s.reqs[m.ID.Key()]
	if !m.ID.IsValid() || r == nil {
		return
	}
	r.responses++
	if r.responses > 1 {
		return
	}
	r.resp, r.respSeq, r.respChannel, r.respAt, r.progressAtResp = m, ev.Seq, channel, ev.Offset, r.progress
	if r.observerRead {
		c.observerAnswer(s, r, ev, m)
		return
	}
	switch r.method {
	case mcp.MethodControlAwait:
		c.awaited(s, r, m)
	case mcp.MethodControlCounters:
		c.countersAnswer(s, r, ev, m)
	case mcp.MethodPing:
		if m.Error != nil {
			c.violate(s, InvSessionUsable, "PNG-1", ev.Seq, false, "ping %s was answered with an error: %s", r.id, errText(m))
		} else if strings.TrimSpace(string(m.Result)) != "{}" {
			c.violate(s, InvSessionUsable, "PNG-1", ev.Seq, false, "ping %s was answered with a result that is not empty: %s", r.id, chrono.Clip(string(m.Result), 200))
		}
	case mcp.MethodServerDiscover:
		if m.Error != nil {
			c.violate(s, InvSessionUsable, "LIF-42", ev.Seq, false, "server/discover %s (the liveness check of 2026-07-28) was answered with an error: %s", r.id, errText(m))
		}
	case mcp.MethodToolsCall:
		c.callAnswer(s, r, ev, m)
	case mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksList, mcp.MethodTasksResult:
		c.taskAnswer(s, r, ev, m)
	}
}

func errText(m *jsonrpc.Message) string {
	if m.Error == nil {
		return ""
	}
	return fmt.Sprintf("%d %s", m.Error.Code, chrono.Clip(m.Error.Message, 200))
}

// awaited takes the outcome of an operation's end checkpoint.
func (c *checker) awaited(s *sessState, r *req, m *jsonrpc.Message) {
	if m.Error != nil {
		return
	}
	if key, step, ok := strings.Cut(r.checkpoint, "/step/"); ok {
		if n, err := strconv.Atoi(step); err == nil && n > s.reached[key] {
			s.reached[key] = n
		}
		return
	}
	if !strings.HasSuffix(r.checkpoint, "/end") {
		return
	}
	var res control.Reached
	if json.Unmarshal(m.Result, &res) != nil {
		return
	}
	key := strings.TrimSuffix(r.checkpoint, "/end")
	s.ended[key] = res.Outcome
	if t := s.taskKey[key]; t != nil {
		t.endReached = true
	}
}

func (c *checker) callAnswer(s *sessState, r *req, ev chrono.Event, m *jsonrpc.Message) {
	// Refused although the request it took the token from, a call of the
	// same tool, was accepted: the token is what differs.
	if prev := r.reuses; prev != nil && m.Error != nil && m.Error.Code == jsonrpc.CodeInvalidParams &&
		prev.tool == r.tool && prev.resp != nil && prev.resp.Error == nil {
		c.violate(s, InvTokenReusable, "PRG-2", ev.Seq, false,
			"request %s reuses the progress token %s of request %s, answered at #%d, and was refused: %s",
			r.id, r.token, r.reuses.id, r.reuses.respSeq, errText(m))
	}
	if !r.taskAug {
		if m.Error == nil && c.rev == Revision20260728 && resultType(m.Result) == mcp.ResultTypeTask {
			c.violate(s, InvOneResponse, "TSX-2", ev.Seq, false,
				"tools/call %s was answered with a CreateTaskResult, though the request declared no tasks extension: a task is not the result the request is owed", r.id)
			return
		}
		if m.Error == nil {
			c.fig.Counts[CountCalls]++
		}
		return
	}
	t, err := peer.ParseCreateTaskResult(m.Result)
	if m.Error != nil || err != nil {
		return
	}
	nt := &task{id: t.TaskID, key: r.key, create: r, ticks: r.steps}
	s.tasks[t.TaskID] = nt
	s.taskKey[r.key] = nt
	c.taskOwner[t.TaskID] = s.idx
	c.observe(s, t, ev.Seq, "CreateTaskResult")
}

// closedKey reports whether the call with operation key k was cancelled
// by closing its response stream.
func (s *sessState) closedKey(k string) bool {
	r := s.byKey[k]
	return r != nil && r.closed
}

// resultType is a 2026-07-28 result's resultType, "" when it has none.
func resultType(raw json.RawMessage) string {
	var r struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.ResultType
}

// progress counts a progress notification for the request that gave
// its token: its pace, and what came after its cancel, are the evidence
// of how the cancel ended. Its token (PRG-7), its value (PRG-4) and its
// place after the response (PRG-14) or after the task's end (PRG-11) are
// the monitor's; a task's progress beyond what its gates and ticks
// allowed is explore's own (taskProgress).
func (c *checker) progress(s *sessState, ev chrono.Event, m *jsonrpc.Message) {
	p, err := peer.ParseProgress(m.Params)
	if err != nil {
		return
	}
	c.fig.Counts[CountProgress]++
	r := s.tokens[p.Token.Key()]
	if r == nil {
		return
	}
	r.progress++
	r.progressAt = append(r.progressAt, ev.Offset)
	if r.taskAug {
		c.taskProgress(s, r, ev, p)
		return
	}
	if r.cancelSeq > 0 {
		r.postCancel = append(r.postCancel, progressAt{seq: ev.Seq, n: r.progress})
	}
}

// countersAnswer checks the server's accounting: every operation whose
// end was reached released its resource exactly once; at the drain, when
// everything has ended, nothing is active and no token is held.
func (c *checker) countersAnswer(s *sessState, r *req, ev chrono.Event, m *jsonrpc.Message) {
	var cs control.Counters
	if m.Error != nil || json.Unmarshal(m.Result, &cs) != nil {
		return
	}
	s.counters, s.countersAt = &cs, ev.Seq
	keys := make([]string, 0, len(cs.Operations))
	for k := range cs.Operations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	allEnded := true
	for _, k := range keys {
		op := cs.Operations[k]
		outcome, ended := s.ended[k]
		switch {
		case ended && op.Releases != 1:
			c.violate(s, InvCleanupOnce, "CAN-8", ev.Seq, false,
				"operation %s ended (%s) and released its resource %d times, not once", k, outcome, op.Releases)
		case !ended && op.State == "cancelled" && s.drain > 0:
			c.violate(s, InvCleanupOnce, "CAN-8", ev.Seq, false,
				"operation %s accepted its cancel but never ended within the operation timeout: its resource is still held (%d releases)", k, op.Releases)
		case !ended && op.State != "cancelled" && s.drain > 0 && s.closedKey(k):
			c.violate(s, InvCleanupOnce, "CAN-55", ev.Seq, false,
				"operation %s is still %s at the drain, though its response stream was closed: closing the stream is the cancellation of the request", k, op.State)
		}
		if !ended {
			allEnded = false
		}
	}
	if s.drain == 0 || !allEnded {
		return
	}
	if cs.OperationsActive != 0 {
		c.violate(s, InvCleanupOnce, "CAN-8", ev.Seq, false, "every operation has ended, yet %d are still active", cs.OperationsActive)
	}
	if cs.ProgressTokensLive != 0 {
		c.violate(s, InvTokenReusable, "PRG-2", ev.Seq, false, "every operation has ended, yet %d progress tokens are still held", cs.ProgressTokensLive)
	}
	for _, k := range slices.Sorted(maps.Keys(cs.Tasks)) {
		w := cs.Tasks[k]
		t := s.taskKey[k]
		if t == nil || t.cancelOK == 0 {
			continue
		}
		if allowed := min(t.released, t.ticks); w.Ticks > allowed {
			c.violate(s, InvTaskWorkerStops, "TSK-64", ev.Seq, false,
				"task %s was cancelled when its worker had been allowed %d ticks, and it has done %d", k, allowed, w.Ticks)
		}
	}
}

// finish judges what only the end of the history shows: the fate of
// cancelled requests, and the requests that were never answered.
func (c *checker) finish(s *sessState) {
	for _, r := range s.order {
		if r.cancelSeq > 0 {
			c.cancelled(s, r)
			continue
		}
		if r.responses > 0 || r.abandoned {
			continue
		}
		c.unanswered(s, r)
	}
	c.observed(s)
	for _, id := range slices.Sorted(maps.Keys(s.tasks)) {
		c.taskResults(s, s.tasks[id])
	}
}

// cancelled judges a request we cancelled. The race window is what the
// server had been allowed to write before it read the cancel: the gates
// released before the cancel let the operation write that many progress
// notifications (KEY/start lets it write progress 1, KEY/step/i progress
// i+1), and its response only once every gate was open. With the control
// extension, KEY/end says whether the cancel was accepted.
func (c *checker) cancelled(s *sessState, r *req) {
	if r.method != mcp.MethodToolsCall {
		return // an await the explorer gave up on
	}
	outcome, known := s.ended[r.key]
	if !known && s.counters != nil {
		if op, ok := s.counters.Operations[r.key]; ok && op.State == "cancelled" {
			outcome, known = "cancelled", true
		}
	}
	allowed := min(r.released, r.steps)
	switch {
	case !s.info.Control && c.uncontrolledCancel(s, r):
		return
	case !known || r.key == "":
		if r.responses > 0 && r.respSeq > r.cancelSeq {
			c.fig.Races[RaceUnknown]++
		} else {
			c.fig.Races[RaceUnknownSilent]++
		}
		return
	case outcome == "completed" && r.closed && r.responses == 0:
		// Written before the server noticed the close, and lost with
		// the stream.
		c.fig.Races[RaceClosedResponse]++
		return
	case outcome == "completed":
		c.fig.Races[RaceResponseFirst]++
		if r.responses == 0 && !r.abandoned {
			c.unanswered(s, r)
		}
		return
	case outcome != "cancelled":
		return
	case r.parked && r.released == 0:
		c.fig.Races[RaceParkedAtStart]++
	case r.parked:
		c.fig.Races[RaceParkedAtStep]++
	case r.released > r.steps:
		c.fig.Races[RaceResponseAccepted]++
	case r.progress >= allowed:
		c.fig.Races[RaceProgressFirst]++
	default:
		c.fig.Races[RaceCancelFirst]++
	}
	// A response written before the cancel was read would have made the
	// cancel one for a completed request (KEY/end: completed): with the
	// cancel accepted, any response came after it.
	if r.responses > 0 {
		c.violate(s, InvCancelNoResponse, "CAN-8", r.respSeq, false,
			"request %s was answered though its cancel at #%d was accepted (%s/end: cancelled)", r.id, r.cancelSeq, r.key)
	}
	for _, p := range r.postCancel {
		if p.n > allowed {
			c.violate(s, InvCancelNoProgress, "CAN-8", p.seq, false,
				"progress number %d of request %s after its accepted cancel at #%d; before the cancel the server had been allowed to write %d",
				p.n, r.id, r.cancelSeq, allowed)
			break
		}
	}
}

// uncontrolledCancel judges a call cancelled on a target without the
// control extension, where no checkpoint says what the server had been
// allowed to write before it read the cancel. The call's pace is the
// evidence: what its own progress shows (the shortest gap between two
// progress notifications read before the cancel, and the longest
// interval it showed, its start included), and what the whole history
// shows of the tool's pace (toolPace).
//
//   - A response after the cancel that cannot be the call completing on
//     its own is the cancel's answer (cancelAnswered): CAN-8 under
//     2025-11-25, CAN-54's MUST NOT over stdio under 2026-07-28.
//   - Under 2026-07-28, where nothing more may come for a cancelled
//     request, a response or a progress read later than the race window
//     (two of the call's slowest steps: what crossed the cancel on the
//     wire comes sooner) is a further message. Under 2025-11-25 a server
//     may ignore a cancel (CAN-9), and go on: that is a race the spec
//     allows.
//
// It reports whether it judged the call; false, when the history had no
// evidence to weigh it by, leaves it to the counts of races whose way is
// unknown.
func (c *checker) uncontrolledCancel(s *sessState, r *req) bool {
	if r.closed {
		return false // a closed stream can carry nothing
	}
	before := r.progress - len(r.postCancel)
	// Two readings of the call's own step: the shortest gap between two
	// progress notifications (two read in one burst make it short, which
	// only makes "too soon" harder to reach), and the longest interval
	// the call showed, its start included (a stall makes it long, which
	// only widens the race window). Each judgement uses the one that
	// cannot turn a loaded machine's timing into a violation.
	step, slowest := time.Duration(0), time.Duration(0)
	if before >= 2 {
		slowest = r.progressAt[0] - r.sentAt
		for i := 1; i < before; i++ {
			d := r.progressAt[i] - r.progressAt[i-1]
			if d > 0 && (step == 0 || d < step) {
				step = d
			}
			slowest = max(slowest, d)
		}
	}
	own := step > 0
	window, modern := 2*slowest, c.rev == Revision20260728
	judged, weighed := false, own
	if r.responses > 0 && r.respSeq > r.cancelSeq {
		why, ok := c.cancelAnswered(r, step)
		weighed = weighed || ok
		after := r.respAt - r.cancelAt
		switch {
		case why != "":
			c.violate(s, InvCancelNoResponse, "CAN-8", r.respSeq, false, "%s", why)
			r.answeredCancel, judged = true, true
		case own && modern && after > window:
			c.violate(s, InvCancelNoResponse, "CAN-8", r.respSeq, false,
				"request %s was answered %v after its cancel at #%d, later than the race window of two of its slowest steps (%v each): a further message for a cancelled request",
				r.id, after.Round(time.Millisecond), r.cancelSeq, slowest.Round(time.Millisecond))
			judged = true
		}
	}
	for i, p := range r.postCancel {
		if late := r.progressAt[before+i] - r.cancelAt; own && modern && late > window {
			c.violate(s, InvCancelNoProgress, "CAN-8", p.seq, false,
				"progress number %d of request %s came %v after its cancel at #%d, later than the race window of two of its slowest steps (%v each): the handler went on after the cancel reached it",
				p.n, r.id, late.Round(time.Millisecond), r.cancelSeq, slowest.Round(time.Millisecond))
			judged = true
			break
		}
	}
	if !weighed {
		return false
	}
	if !judged {
		c.fig.Races[RaceUncontrolled]++
	}
	return true
}

// paceKey names the calls that share a pace: those of one tool with the
// same number of steps.
type paceKey struct {
	tool  string
	steps int
}

// toolPace is what a history shows of the pace of one tool's calls on
// targets without the control extension, over all its sessions: the
// evidence for a cancelled call whose own progress says too little (one
// cancelled before its second progress, or called without a token).
type toolPace struct {
	// fastest is the shortest time from request to response of a call
	// never cancelled that completed with a result (0: none did).
	fastest time.Duration
	// progress is how many progress notifications each such call with a
	// token had sent by its response, when they all sent as many
	// (counted: at least one did; mixed: they differ).
	progress       int
	counted, mixed bool
	// step is the shortest interval between two successive progress
	// notifications of a call, read before any cancel of it (0: none).
	step time.Duration
	// failed is set when a call never cancelled was answered with an
	// error: the tool ends with errors of its own, so an error after a
	// cancel cannot be told from the cancel's answer.
	failed bool
}

// steps is how many progress notifications a call of the tool sends when
// it completes on its own, 0 when the history does not show one number.
func (p *toolPace) steps() int {
	if !p.counted || p.mixed {
		return 0
	}
	return p.progress
}

// tallyPaces reads the pace of each tool's calls over the whole history.
func (c *checker) tallyPaces() map[paceKey]*toolPace {
	paces := map[paceKey]*toolPace{}
	for _, s := range c.sess {
		if s.info.Control {
			continue // its calls wait on the explorer's gates
		}
		for _, r := range s.order {
			if r.method != mcp.MethodToolsCall || r.taskAug || r.observerRead {
				continue
			}
			k := paceKey{r.tool, r.steps}
			p := paces[k]
			if p == nil {
				p = &toolPace{}
				paces[k] = p
			}
			for i := 1; i < r.progress-len(r.postCancel); i++ {
				if d := r.progressAt[i] - r.progressAt[i-1]; d > 0 && (p.step == 0 || d < p.step) {
					p.step = d
				}
			}
			if r.cancelSeq > 0 || r.responses == 0 {
				continue
			}
			if answerFailed(r.resp) {
				p.failed = true
				continue
			}
			if d := r.respAt - r.sentAt; d > 0 && (p.fastest == 0 || d < p.fastest) {
				p.fastest = d
			}
			if r.token.IsValid() {
				switch {
				case !p.counted:
					p.progress, p.counted = r.progressAtResp, true
				case p.progress != r.progressAtResp:
					p.mixed = true
				}
			}
		}
	}
	return paces
}

// answerFailed reports whether a response is an error: a JSON-RPC error,
// or a tool result with isError.
func answerFailed(m *jsonrpc.Message) bool {
	if m == nil || m.Error != nil {
		return m != nil
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(m.Result, &res)
	return res.IsError
}

// cancelAnswered weighs the response read after a call's cancel: it
// returns why it cannot be the call completing on its own (the cancel
// brought it), "" when it may be, and whether the history held evidence
// to weigh it by. ownStep is the call's own shortest step (0: unknown).
// Only evidence that a loaded machine cannot fake counts: when it fits
// both "answered by the cancel" and "completed on its own", the answer
// is a crossing, not a violation.
//
//   - Steps left: a call that completes on its own sends all its progress
//     first, on the stream its response takes. With a token, and the
//     number of its progress notifications known (the tool's completed
//     calls all sent as many, or a steps argument and progress of its
//     own), a response read with at least two steps left, sooner after
//     the cancel (or after the last progress, if later) than half the
//     time those steps need at the shortest step the tool showed, is the
//     cancel's answer.
//   - Time: an error read sooner after its request than half the fastest
//     completion of the tool's calls never cancelled, which all completed
//     with a result, is the cancel's answer.
//
// Neither is weighed when the tool's calls never cancelled also ended
// with errors: a quick error may then be the tool's own.
func (c *checker) cancelAnswered(r *req, ownStep time.Duration) (string, bool) {
	p := c.paces[paceKey{r.tool, r.steps}]
	if p == nil || p.failed {
		return "", false
	}
	done, weighed := r.progressAtResp, false
	steps := p.steps()
	if steps == 0 && r.stepsGiven && done > 0 {
		steps = r.steps
	}
	step := ownStep
	if p.step > 0 && (step == 0 || p.step < step) {
		step = p.step
	}
	if r.token.IsValid() && steps > 0 && step > 0 {
		weighed = true
		anchor := r.cancelAt
		if done > 0 {
			anchor = max(anchor, r.progressAt[done-1])
		}
		if left, after := steps-done, r.respAt-anchor; left >= 2 && after < time.Duration(left-1)*step/2 {
			return fmt.Sprintf("request %s was answered %v after its cancel at #%d, with %d of its %d steps left at %v a step: too soon to be the call completing on its own, so the cancel brought the answer",
				r.id, (r.respAt - r.cancelAt).Round(time.Millisecond), r.cancelSeq, left, steps, step.Round(time.Millisecond)), true
		}
	}
	if p.fastest > 0 && answerFailed(r.resp) {
		weighed = true
		if took := r.respAt - r.sentAt; took < p.fastest/2 {
			return fmt.Sprintf("request %s was answered with an error (%s) %v after its cancel at #%d, %v after it was sent, where the calls of %s never cancelled completed with a result, the fastest in %v: too soon to be the call ending on its own, so the cancel brought the answer",
				r.id, failure(r.resp), (r.respAt - r.cancelAt).Round(time.Millisecond), r.cancelSeq, took.Round(time.Millisecond),
				strconv.Quote(r.tool), p.fastest.Round(time.Millisecond)), true
		}
	}
	return "", weighed
}

// failure renders an error response, or a tool result with isError (by
// the text of its first content, else its JSON), for a violation's text.
func failure(m *jsonrpc.Message) string {
	if m.Error != nil {
		return errText(m)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(m.Result, &res) == nil && len(res.Content) > 0 && res.Content[0].Text != "" {
		return "isError: " + strconv.Quote(chrono.Clip(res.Content[0].Text, 200))
	}
	return "isError: " + chrono.Clip(string(m.Result), 200)
}

// observerAnswer records a read of the profile's observer.
func (c *checker) observerAnswer(s *sessState, r *req, ev chrono.Event, m *jsonrpc.Message) {
	if m.Error != nil {
		return
	}
	doc, err := c.h.observer.Document(m.Result)
	if err != nil {
		return
	}
	counts, err := c.h.observer.Observe(doc)
	if err != nil {
		return
	}
	s.observations = append(s.observations, observation{seq: ev.Seq, counts: counts})
}

// observed judges a session's answers to cancelled calls by the
// profile's observer (docs/observer.md), read when the session opened
// and at the drain, when every call has ended. A handler counted
// cancelled stopped for its cancel; one whose call went unanswered, or
// was answered with an error of its own, may account for each. When the
// observer counts more than those (and more than the answers already
// found to be the cancel's), some answer read after a cancel answered a
// handler that had stopped for it: the server answered a cancel it had
// accepted, whatever the timing. Only over stdio, where the session is
// a process of its own, are the counts the session's; a count of
// handlers started beyond the session's calls says they are not, and
// nothing is judged.
func (c *checker) observed(s *sessState) {
	if s.info.Control || s.info.Transport != TransportStdio || len(s.observations) < 2 {
		return
	}
	first, last := s.observations[0], s.observations[len(s.observations)-1]
	started := last.counts.Started - first.counts.Started
	cancelled := last.counts.Cancelled - first.counts.Cancelled
	calls, accountable, found := 0, 0, 0
	var answered []*req
	for _, r := range s.order {
		if r.method != mcp.MethodToolsCall || r.taskAug || r.observerRead {
			continue
		}
		calls++
		switch {
		case r.cancelSeq > 0 && r.responses > 0 && r.respSeq > r.cancelSeq && r.answeredCancel:
			found++
		case r.cancelSeq > 0 && r.responses > 0 && r.respSeq > r.cancelSeq:
			answered = append(answered, r)
		case r.responses == 0 || answerFailed(r.resp):
			accountable++
		}
	}
	if started > calls+len(s.observations) || len(answered) == 0 || cancelled-accountable <= found {
		return
	}
	// The answer read soonest after its cancel is the one most likely to
	// be the cancel's.
	r := slices.MinFunc(answered, func(a, b *req) int {
		return cmp.Compare(a.respAt-a.cancelAt, b.respAt-b.cancelAt)
	})
	c.violate(s, InvCancelNoResponse, "CAN-8", r.respSeq, false,
		"the observer's count of this session's handlers stopped by their cancel grew by %d between #%d and #%d (%s), and only %d of its calls went unanswered or were answered with an error of their own: at least %d of the %d answers read after a cancel answered a handler that had stopped for it; request %s was answered %v after its cancel at #%d",
		cancelled, first.seq, last.seq, observationText(first.counts, last.counts), accountable, min(cancelled-accountable-found, len(answered)), len(answered),
		r.id, (r.respAt - r.cancelAt).Round(time.Millisecond), r.cancelSeq)
}

// observationText renders two reads of the observer.
func observationText(a, b profile.Observation) string {
	return fmt.Sprintf("started %d to %d, completed %d to %d, cancelled %d to %d",
		a.Started, b.Started, a.Completed, b.Completed, a.Cancelled, b.Cancelled)
}

// unanswered judges a request that never got its response, by what the
// history shows of why.
func (c *checker) unanswered(s *sessState, r *req) {
	if s.lost {
		return // judged as the session's loss
	}
	outcome, ended := s.ended[r.key]
	switch {
	case r.method == mcp.MethodToolsCall && ended && outcome == "cancelled" && r.dropped && s.info.Transport == TransportHTTP:
		also := ""
		if s.badCancel > 0 {
			also = fmt.Sprintf("; an invalid cancel was also sent at #%d (CAN-14)", s.badCancel)
		}
		c.violate(s, InvOneResponse, "HTTP-25", r.seq, true,
			"request %s was never cancelled, yet the server ended it as cancelled (%s/end) after its SSE stream was dropped: a disconnection is not a cancellation%s", r.id, r.key, also)
	case r.method == mcp.MethodToolsCall && ended && outcome == "cancelled" && s.badCancel > 0:
		c.violate(s, InvOneResponse, "CAN-14", r.seq, true,
			"request %s was never cancelled, yet the server ended it as cancelled (%s/end) after the invalid cancel at #%d", r.id, r.key, s.badCancel)
	case r.method == mcp.MethodPing:
		c.violate(s, InvOneResponse, "PNG-1", r.seq, true, "ping %s was never answered%s", r.id, zeroNote(r.id))
	case r.method == mcp.MethodServerDiscover:
		c.violate(s, InvOneResponse, "LIF-42", r.seq, true, "server/discover %s (the liveness check of 2026-07-28) was never answered%s", r.id, zeroNote(r.id))
	case r.method == mcp.MethodTasksResult:
		c.violate(s, InvOneResponse, "TSK-46", r.seq, true, "tasks/result %s for task %s was never answered, though the explorer brought the task to an end", r.id, r.taskID)
	case r.dropped:
		c.violate(s, InvOneResponse, "HTTP-21", r.seq, true,
			"request %s (%s) got no response, not even on the stream resumed after its SSE stream was dropped%s", r.id, r.method, endNote(outcome, ended))
	default:
		c.violate(s, InvOneResponse, "RPC-2", r.seq, true, "request %s (%s) was never answered%s%s", r.id, r.method, zeroNote(r.id), endNote(outcome, ended))
	}
}

func zeroNote(id jsonrpc.ID) string {
	if id == jsonrpc.IntID(0) {
		return " (its id is 0, a valid ID: RPC-4)"
	}
	return ""
}

func endNote(outcome string, ended bool) string {
	if ended {
		return fmt.Sprintf(" (the operation ended: %s)", outcome)
	}
	return ""
}
