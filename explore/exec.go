package explore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
)

// Notes the executor writes into each session's chronology, on the
// channel noteChannel. They say what the explorer did (op N: …) and how
// the trial ended for the session; the checker reads them for what is
// the explorer's own intent (it closed the session, it gave up waiting),
// never for what the server did, which only the frames say.
const (
	noteChannel  = "explore"
	notePrefOp   = "op "
	noteClosing  = "closing the session"
	noteDrain    = "drain"
	notePrefLost = "session lost: "
)

// execConfig is how a plan is run.
type execConfig struct {
	// opTimeout bounds every wait of one operation: a safety net, never
	// the thing tested, except where only a deadline can show something
	// (a response that never comes, an operation that never ends).
	opTimeout time.Duration
	// noControl ignores the control extension even where it is offered.
	noControl bool
	// profile names the slow and task tools of a target without the
	// control extension.
	profile *profile.Profile
	// revision is the protocol revision the sessions speak: 2025-11-25
	// opens them with initialize, 2026-07-28 with the envelope on every
	// request and server/discover (there is no handshake, and no ping).
	revision string
}

// is2026 reports whether the sessions speak 2026-07-28.
func (c execConfig) is2026() bool { return c.revision == Revision20260728 }

// sessionTrace is the chronology of one session (one incarnation of a
// slot) of a trial.
type sessionTrace struct {
	label     string
	slot      int
	transport string
	control   bool
	log       *chrono.Log
	teardown  transport.Step
}

// trace is what running a plan recorded.
type trace struct {
	start    time.Time
	sessions []*sessionTrace
	// ops is how many steps ran, skipped how many did not apply.
	ops, skipped int
	byKind       map[Kind]int
	// observer is the profile's observer, when the sessions read it.
	observer *profile.Observer
}

// executor runs one plan, one operation at a time.
type executor struct {
	cfg       execConfig
	transport string
	dial      Dial
	ctx       context.Context
	tr        *trace
	slots     []*slot
	nInc      int
}

// slot is one session slot of a trial: its current session and what the
// explorer knows of the calls and tasks in it.
type slot struct {
	ex      *executor
	idx     int
	inc     int
	tr      *sessionTrace
	sess    *peer.Session
	http    *transport.HTTP
	ctl     *control.Client
	tasksOK bool
	lost    bool
	base    int64
	nTok    int64
	calls   map[string]*xcall
	tasks   map[string]*xtask
	// inflight are requests whose answers the drain awaits; dropped the
	// awaits cancelled because nothing would answer them.
	inflight []*peer.Call
	dropped  map[*peer.Call]bool
	// pings are the pings sent since the last settling.
	pings    []*peer.Call
	zeroUsed bool
}

// xcall is a call the explorer started.
type xcall struct {
	label     string
	call      *peer.Call
	steps     int
	released  int
	cancelled bool
	ended     bool // its end checkpoint was reached (or, uncontrolled, its response came)
	gaveUp    bool // a wait for it outlasted the operation timeout
	outcome   string
	stream    string // Streamable HTTP: the stream that carries its answer now
	dropped   bool
	lastID    string
	token     jsonrpc.ProgressToken
	answered  bool // its response arrived
	// endWait is the await of KEY/end, sent with the call: whatever ends
	// the operation (its completion, a cancel, the server on its own),
	// its answer says so, and no other wait outlives it.
	endWait *peer.Call
}

// xtask is a task the explorer created.
type xtask struct {
	label    string
	req      *peer.Call
	id       string
	ticks    int
	released int
	ended    bool // its worker's end checkpoint was reached
	gaveUp   bool
	terminal bool // a terminal status was seen
	endWait  *peer.Call
}

// runPlan runs plan against dial and returns what was recorded. An error
// means the trial could not start (the target could not be reached);
// everything that goes wrong later is in the chronologies.
func runPlan(ctx context.Context, dial Dial, transportName string, plan Plan, cfg execConfig) (*trace, error) {
	ex := &executor{cfg: cfg, transport: transportName, dial: dial, ctx: ctx,
		tr: &trace{start: time.Now(), byKind: map[Kind]int{}}}
	if transportName == TransportStdio && cfg.profile.NamesObserver() {
		ex.tr.observer = cfg.profile.Observer
	}
	for i := range plan.Sessions {
		s := &slot{ex: ex, idx: i}
		ex.slots = append(ex.slots, s)
		if err := s.open(); err != nil {
			ex.closeAll()
			return ex.tr, err
		}
	}
	for i, st := range plan.Steps {
		s := ex.slots[st.Session]
		if s.lost || !s.alive() {
			ex.tr.skipped++
			continue
		}
		s.note(fmt.Sprintf("%s%d: %s", notePrefOp, i, st.Op))
		if s.do(st.Op) {
			ex.tr.ops++
			ex.tr.byKind[st.Kind]++
		} else {
			ex.tr.skipped++
		}
	}
	ex.drain()
	ex.closeAll()
	return ex.tr, nil
}

// open starts the slot's next session and completes the handshake.
func (s *slot) open() error {
	ex := s.ex
	ex.nInc++
	label := "s" + strconv.Itoa(s.idx+1)
	if s.inc > 0 {
		label += "." + strconv.Itoa(s.inc+1)
	}
	log := chrono.New(chrono.WithStart(ex.tr.start))
	s.tr = &sessionTrace{label: label, slot: s.idx, transport: ex.transport, log: log}
	ex.tr.sessions = append(ex.tr.sessions, s.tr)
	s.base = int64(ex.nInc) * idBlock
	s.nTok = 0
	s.calls, s.tasks, s.inflight, s.zeroUsed = map[string]*xcall{}, map[string]*xtask{}, nil, false
	s.dropped, s.pings = map[*peer.Call]bool{}, nil
	s.sess, s.http, s.ctl, s.tasksOK, s.lost = nil, nil, nil, false, false
	conn, err := ex.dial(ex.ctx, log)
	if err != nil {
		log.Harness(chrono.KindError, noteChannel, "dial: "+err.Error())
		s.lost = true
		return fmt.Errorf("opening session %s: %w", label, err)
	}
	s.sess = peer.New(conn, peer.Options{Log: log, FirstID: s.base + 1})
	if h, ok := conn.(*transport.HTTP); ok {
		s.http = h
	}
	ctx, cancel := ex.opContext()
	defer cancel()
	if ex.cfg.is2026() {
		if err := open2026(ctx, s.sess, label); err != nil {
			s.loseWith("server/discover: " + err.Error())
			return fmt.Errorf("server/discover of session %s: %w", label, err)
		}
	} else {
		init, err := s.sess.Initialize(ctx, peer.InitOptions{})
		if err != nil {
			s.loseWith("handshake: " + err.Error())
			return fmt.Errorf("handshake of session %s: %w", label, err)
		}
		s.tasksOK = init.Tasks().ToolsCall
	}
	if !ex.cfg.noControl {
		s.ctl = control.Detect(s.sess)
	}
	s.tr.control = s.ctl != nil
	s.tasksOK = s.tasksOK && (s.ctl != nil || ex.cfg.profile != nil && ex.cfg.profile.Task != nil)
	s.readObserver()
	return nil
}

// readObserver reads the profile's observer (docs/observer.md) in a
// session without the control extension over stdio, where the session is
// a server process of its own and the observer's counts are its own: once
// when the session opens and once at the drain, when every call has
// ended, so that the checker sees how many of its handlers stopped for a
// cancel (checker.observed).
func (s *slot) readObserver() {
	obs := s.ex.tr.observer
	if obs == nil || s.ctl != nil || !s.alive() {
		return
	}
	var c *peer.Call
	var err error
	if obs.Tool != "" {
		args := obs.Arguments
		if args == nil {
			args = map[string]any{}
		}
		c, err = s.start(mcp.MethodToolsCall, map[string]any{"name": obs.Tool, "arguments": args})
	} else {
		c, err = s.start(mcp.MethodResourcesRead, map[string]any{"uri": obs.Resource})
	}
	if err == nil {
		_, _ = s.wait(c)
	}
}

// open2026 makes sess a 2026-07-28 session: every request carries the
// envelope (negotiate's, RPC-51) with a control scope of the session's
// own (mcp.MetaControlScope), so that its checkpoints, operation keys
// and counters are its own though there is no session to keep them
// apart; then server/discover says what the server offers (LIF-42).
func open2026(ctx context.Context, sess *peer.Session, scope string) error {
	env := negotiate.Options{}.Envelope()
	env.Extra = map[string]any{mcp.MetaControlScope: scope}
	sess.SetEnvelope(env)
	_, err := sess.Discover(ctx)
	return err
}

// liveness is the method that checks a session is still usable: ping,
// or under 2026-07-28, which removed it (PNG-40), server/discover.
func (s *slot) liveness() string {
	if s.ex.cfg.is2026() {
		return mcp.MethodServerDiscover
	}
	return mcp.MethodPing
}

// idBlock separates the request IDs and integer tokens of the sessions of
// a trial: every session's IDs are its own, so that a frame naming an ID
// or a token of another session is recognised as such.
const idBlock = 10_000_000

func (ex *executor) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(ex.ctx, ex.cfg.opTimeout)
}

func (s *slot) note(text string) { s.tr.log.Harness(chrono.KindNote, noteChannel, text) }

// alive reports whether the session still runs; the first time it does
// not, the loss is recorded.
func (s *slot) alive() bool {
	if s.sess == nil {
		return false
	}
	select {
	case <-s.sess.Done():
		s.loseWith("the connection ended")
		return false
	default:
		return true
	}
}

// loseWith records that the session ended without the explorer closing it.
func (s *slot) loseWith(why string) {
	if s.lost {
		return
	}
	s.lost = true
	s.tr.log.Harness(chrono.KindError, noteChannel, notePrefLost+why)
}

// failed records an error of one operation. An error that says the
// connection is gone (it closed, a write to it failed, the server
// answered 404 to the session ID) is a lost session; a local refusal, a
// deadline or another HTTP status is only noted.
func (s *slot) failed(what string, err error) {
	var se *transport.StatusError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return // the deadline is already in the chronology
	case errors.Is(err, peer.ErrDuplicateID), errors.Is(err, peer.ErrDuplicateToken):
	case errors.As(err, &se) && se.Status != http.StatusNotFound:
	default:
		s.loseWith(what + ": " + err.Error())
		return
	}
	s.tr.log.Harness(chrono.KindError, noteChannel, what+": "+err.Error())
}

// do runs one operation and reports whether it applied.
func (s *slot) do(op Op) bool {
	switch op.Kind {
	case OpCall, OpReuse:
		return s.opCall(op)
	case OpAdvance:
		return s.opAdvance(op)
	case OpCancel:
		return s.opCancel(op)
	case OpRecancel:
		c := s.calls[op.Call]
		if c == nil || !c.cancelled || s.closesToCancel() {
			return false
		}
		return s.cancel(c.call.ID, "again") == nil
	case OpBadCancel:
		return s.opBadCancel(op)
	case OpPing:
		return s.opPing(op)
	case OpDrop:
		return s.opDrop(op)
	case OpResume:
		return s.opResume(op)
	case OpListen:
		return s.opListen()
	case OpClose:
		return s.opClose()
	case OpTask:
		return s.opTask(op)
	case OpTaskAdvance:
		return s.opTaskAdvance(op)
	case OpTaskGet, OpTaskCancel:
		return s.opTaskRequest(op)
	case OpTaskResult:
		return s.opTaskResult(op)
	case OpTaskList:
		return s.opTaskList()
	}
	return false
}

// requestID returns the call option for an ID style.
func (s *slot) requestID(style, name string) []peer.CallOption {
	switch style {
	case IDString:
		return []peer.CallOption{peer.WithID(jsonrpc.StringID(s.tr.label + "-" + name))}
	case IDNumeric:
		// The text of a fresh integer ID, sent as a string: "10000007"
		// must never be answered as 10000007 (RPC-8).
		return []peer.CallOption{peer.WithID(jsonrpc.StringID(s.sess.NewID().String()))}
	case IDZero:
		if !s.zeroUsed {
			s.zeroUsed = true
			return []peer.CallOption{peer.WithID(jsonrpc.IntID(0))}
		}
	}
	return nil
}

// newToken returns a fresh token of a style, unique in the trial.
func (s *slot) newToken(style, label string) jsonrpc.ProgressToken {
	switch style {
	case TokenString:
		return jsonrpc.StringToken(s.tr.label + "-" + label)
	case TokenInt:
		s.nTok++
		return jsonrpc.IntToken(s.base + idBlock/2 + s.nTok)
	}
	return jsonrpc.ProgressToken{}
}

// start sends a request and keeps it among those the drain awaits.
func (s *slot) start(method string, params any, opts ...peer.CallOption) (*peer.Call, error) {
	ctx, cancel := s.ex.opContext()
	defer cancel()
	c, err := s.sess.Start(ctx, method, params, opts...)
	if err != nil {
		s.failed(method, err)
		return nil, err
	}
	s.inflight = append(s.inflight, c)
	return c, nil
}

// wait waits for c's response, at most the operation timeout.
func (s *slot) wait(c *peer.Call) (*jsonrpc.Message, error) {
	ctx, cancel := s.ex.opContext()
	defer cancel()
	resp, err := c.Await(ctx)
	if err != nil {
		s.failed("waiting for "+c.Method+" "+c.ID.String(), err)
	}
	return resp, err
}

// closesToCancel reports whether a cancel is the closing of the
// request's response stream: 2026-07-28 Streamable HTTP (CAN-43, CAN-55),
// where no notifications/cancelled is sent.
func (s *slot) closesToCancel() bool { return s.http != nil && s.ex.cfg.is2026() }

// cancelCall cancels c the way the revision and transport say: by
// closing its response stream (2026-07-28 Streamable HTTP), else with
// notifications/cancelled.
func (s *slot) cancelCall(c *peer.Call, reason string) error {
	if !s.closesToCancel() {
		return s.cancel(c.ID, reason)
	}
	ctx, cancel := s.ex.opContext()
	defer cancel()
	// A POST closed before its response headers may never have reached
	// the server: nothing would then be cancelled, and the operation's
	// end would never come. The close waits for the headers, which say
	// the server took the request.
	if s.http.StatusOf(c.ID) == 0 {
		_, _ = s.tr.log.WaitFor(ctx, c.SentSeq, func(ev chrono.Event) bool {
			return ev.Kind == chrono.KindHTTP && ev.Dir == chrono.In && strings.HasPrefix(ev.Text, "HTTP ") && s.http.StatusOf(c.ID) != 0
		})
	}
	err := s.sess.Cancel(ctx, c, reason)
	if err != nil && !errors.Is(err, peer.ErrNotPending) {
		s.failed("cancel", err)
		return err
	}
	return nil
}

// cancel sends notifications/cancelled for id, whatever the session
// thinks of it: a cancel of a completed request is one of the races the
// explorer means to provoke.
func (s *slot) cancel(id jsonrpc.ID, reason string) error {
	ctx, cancel := s.ex.opContext()
	defer cancel()
	_, err := s.sess.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": id, "reason": reason})
	if err != nil {
		s.failed("cancel", err)
	}
	return err
}

func (s *slot) opCall(op Op) bool {
	if _, used := s.calls[op.Call]; used || op.Call == "" {
		return false
	}
	var token jsonrpc.ProgressToken
	if op.Kind == OpReuse {
		from := s.calls[op.From]
		if from == nil || !from.answered || !from.token.IsValid() {
			return false
		}
		token = from.token
	} else {
		token = s.newToken(op.Token, op.Call)
	}
	var params map[string]any
	if s.ctl != nil {
		params = map[string]any{"name": "slow", "arguments": map[string]any{"key": op.Call, "steps": op.Steps}}
	} else {
		p := s.ex.cfg.profile
		if p == nil || p.Slow == nil {
			return false
		}
		args := p.Slow.CloneArgs()
		if _, ok := args["key"]; ok {
			args["key"] = op.Call // each call names its own operation
		}
		params = map[string]any{"name": p.Slow.Name, "arguments": args}
	}
	opts := s.requestID(op.ID, op.Call)
	if token.IsValid() {
		opts = append(opts, peer.WithProgressToken(token))
	}
	c, err := s.start(mcp.MethodToolsCall, params, opts...)
	if err != nil {
		return false
	}
	xc := &xcall{label: op.Call, call: c, steps: op.Steps, token: token}
	if s.http != nil {
		xc.stream = s.http.StreamOf(c.ID)
	}
	if s.ctl != nil {
		xc.endWait = s.startAwait(op.Call + "/end")
	}
	s.calls[op.Call] = xc
	return true
}

// gate is the checkpoint that holds the call now, given the releases so
// far (docs/control-extension.md: KEY/start, then KEY/step/i).
func gate(label, step string, released int) string {
	if released == 0 {
		return label + "/start"
	}
	return label + "/" + step + "/" + strconv.Itoa(released)
}

// release opens a gate without waiting for the answer, which the drain
// collects: the release takes effect before the server reads its next
// frame, so nothing sent after it can overtake it.
func (s *slot) release(checkpoint string) bool {
	_, err := s.start(mcp.MethodControlRelease, map[string]any{"checkpoint": checkpoint})
	return err == nil
}

// reached is how a wait for a checkpoint of an operation came out.
type reached uint8

const (
	reachedIt    reached = iota // the checkpoint was reached
	reachedEnd                  // the operation ended first
	reachedNever                // the operation was refused, or the wait timed out
)

// awaitStep awaits a step checkpoint of an operation whose end is
// awaited by end (and whose request is call, if it is a call): the first
// of the checkpoint, the operation's end, and a response to call that
// says it never started settles it. A wait still pending is cancelled.
func (s *slot) awaitStep(checkpoint string, end, call *peer.Call) (reached, string) {
	c := s.startAwait(checkpoint)
	if c == nil {
		return reachedNever, ""
	}
	ctx, cancel := s.ex.opContext()
	defer cancel()
	var endDone, callDone <-chan struct{}
	if end != nil {
		endDone = end.Done()
	}
	if call != nil {
		callDone = call.Done()
	}
	for {
		select {
		case <-c.Done():
			if resp, _ := c.Response(); resp != nil && resp.Error == nil {
				return reachedIt, ""
			}
			return reachedNever, ""
		case <-endDone:
			s.dropAwait(c)
			return reachedEnd, outcomeOf(end)
		case <-callDone:
			if resp, _ := call.Response(); resp == nil || resp.Error != nil {
				// Refused (or lost): the operation never ran, so neither
				// this checkpoint nor its end will come.
				s.dropAwait(c)
				s.dropAwait(end)
				return reachedNever, ""
			}
			callDone = nil // completed: its end follows
		case <-ctx.Done():
			s.failed("await "+checkpoint, ctx.Err())
			s.dropAwait(c)
			return reachedNever, ""
		}
	}
}

// dropAwait cancels an await still pending, so that the server does not
// hold it.
func (s *slot) dropAwait(c *peer.Call) {
	if c == nil {
		return
	}
	select {
	case <-c.Done():
	default:
		s.dropped[c] = true
		if s.alive() {
			_ = s.cancelCall(c, "no longer awaited")
		}
	}
}

// outcomeOf is the outcome an answered await of KEY/end carries.
func outcomeOf(c *peer.Call) string {
	resp, _ := c.Response()
	if resp == nil || resp.Error != nil {
		return ""
	}
	var r control.Reached
	_ = json.Unmarshal(resp.Result, &r)
	return r.Outcome
}

// answer waits for the call's response.
func (s *slot) answer(xc *xcall) {
	if _, err := s.wait(xc.call); err != nil {
		xc.gaveUp = true
		return
	}
	xc.answered = true
}

func (s *slot) opAdvance(op Op) bool {
	xc := s.calls[op.Call]
	if xc == nil || xc.ended || xc.cancelled || xc.gaveUp {
		return false
	}
	if s.ctl == nil {
		return s.nextProgress(xc)
	}
	if !s.release(gate(xc.label, "step", xc.released)) {
		return false
	}
	xc.released++
	if op.NoWait {
		return true
	}
	s.settle(xc, xc.released)
	return true
}

// settle awaits the checkpoint that follows release number n of the
// call: the next step, or its end and then its response.
func (s *slot) settle(xc *xcall, n int) {
	if n > xc.steps {
		s.end(xc)
		return
	}
	switch r, out := s.awaitStep(xc.label+"/step/"+strconv.Itoa(n), xc.endWait, xc.call); r {
	case reachedEnd:
		s.ended(xc, out)
	case reachedNever:
		xc.gaveUp = true
	}
}

// end waits for the call's end; when it completed, for its response.
func (s *slot) end(xc *xcall) {
	if xc.endWait == nil {
		xc.gaveUp = true
		return
	}
	ctx, cancel := s.ex.opContext()
	defer cancel()
	select {
	case <-xc.endWait.Done():
	case <-xc.call.Done():
		if resp, _ := xc.call.Response(); resp == nil || resp.Error != nil {
			s.dropAwait(xc.endWait)
			xc.ended, xc.answered = true, resp != nil
			return
		}
		select {
		case <-xc.endWait.Done():
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		s.failed("await "+xc.label+"/end", ctx.Err())
		s.dropAwait(xc.endWait)
		xc.gaveUp = true
		return
	}
	s.ended(xc, outcomeOf(xc.endWait))
}

// ended records the call's end; a completed call's response is then due
// (a dropped call's waits on its stream for the resume). On one ordered
// stream (stdio, in process) it has already been read: the operation
// wrote it before it reached KEY/end, and the end's answer came after it
// (docs/control-extension.md, rule 4), so a response missing now never
// comes and is not waited for.
func (s *slot) ended(xc *xcall, outcome string) {
	xc.ended, xc.outcome = true, outcome
	if outcome != "completed" || xc.dropped || xc.cancelled && s.closesToCancel() {
		return
	}
	if s.http == nil {
		select {
		case <-xc.call.Done():
			xc.answered = true
		default:
			xc.gaveUp = true
			s.note("the response of " + xc.label + " did not come before its end")
		}
		return
	}
	s.answer(xc)
}

// nextProgress waits, on a target without the control extension, for
// the call's next progress notification or its response.
func (s *slot) nextProgress(xc *xcall) bool {
	ctx, cancel := s.ex.opContext()
	defer cancel()
	seen := xc.call.ProgressCount()
	for {
		ch := s.tr.log.Changed()
		if xc.call.ProgressCount() > seen {
			return true
		}
		select {
		case <-xc.call.Done():
			xc.ended, xc.answered = true, xc.call.State() == peer.StateCompleted
			return true
		case <-ch:
		case <-ctx.Done():
			return true
		}
	}
}

func (s *slot) opCancel(op Op) bool {
	xc := s.calls[op.Call]
	if xc == nil || xc.cancelled || xc.ended || xc.gaveUp {
		return false
	}
	if op.Race && s.ctl != nil {
		if !s.release(gate(xc.label, "step", xc.released)) {
			return false
		}
		xc.released++
	}
	if s.cancelCall(xc.call, "explore") != nil {
		return false
	}
	// Its end (which says whether the cancel was accepted) is collected
	// later, with the others', before the session closes: waiting for
	// it here would only slow the trial, and cost a timeout each time a
	// server never ends a cancelled operation.
	xc.cancelled = true
	return true
}

func (s *slot) opBadCancel(op Op) bool {
	if s.closesToCancel() {
		return false // no notifications/cancelled there (CAN-43)
	}
	var params map[string]any
	switch op.Target {
	case BadCancelUnknownInt:
		params = map[string]any{"requestId": s.sess.NewID()}
	case BadCancelUnknownString:
		params = map[string]any{"requestId": s.tr.label + "-never-sent-" + s.sess.NewID().String()}
	case BadCancelCompleted:
		xc := s.calls[op.Call]
		if xc == nil || !xc.answered {
			return false
		}
		params = map[string]any{"requestId": xc.call.ID}
	case BadCancelTaskRequest:
		xt := s.tasks[op.Task]
		if xt == nil {
			return false
		}
		params = map[string]any{"requestId": xt.req.ID}
	case BadCancelNoID:
		params = map[string]any{"reason": "no requestId"}
	case BadCancelNullID:
		params = map[string]any{"requestId": nil}
	case BadCancelFloatID:
		params = map[string]any{"requestId": 1.5}
	default:
		return false
	}
	ctx, cancel := s.ex.opContext()
	defer cancel()
	if _, err := s.sess.NotifySeq(ctx, mcp.NotificationCancelled, params); err != nil {
		s.failed("cancel", err)
		return false
	}
	return true
}

func (s *slot) opPing(op Op) bool {
	c, err := s.start(s.liveness(), nil, s.requestID(op.ID, "ping-"+strconv.Itoa(len(s.inflight)))...)
	if err != nil {
		return false
	}
	// Its answer is collected before the session closes.
	s.pings = append(s.pings, c)
	return true
}

// giveUp stops waiting for c: the drain does not wait for it again.
func (s *slot) giveUp(c *peer.Call) {
	for i, p := range s.inflight {
		if p == c {
			s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
			return
		}
	}
}

func (s *slot) opDrop(op Op) bool {
	xc := s.calls[op.Call]
	if s.http == nil || xc == nil || xc.dropped || xc.stream == "" {
		return false
	}
	// Only a stream that carried an event ID can be resumed: wait for its
	// first event (the priming event, HTTP-16) if it has not come yet.
	if s.http.LastEventID(xc.stream) == "" {
		ctx, cancel := s.ex.opContext()
		channel := "SSE " + xc.stream
		_, _ = s.tr.log.WaitFor(ctx, xc.call.SentSeq, func(ev chrono.Event) bool {
			return ev.Channel == channel && strings.Contains(ev.Text, "id=")
		})
		cancel()
		if s.http.LastEventID(xc.stream) == "" {
			s.note("stream " + xc.stream + " carried no event ID: not dropped")
			return false
		}
	}
	if err := s.http.Drop(xc.stream); err != nil {
		s.failed("drop", err)
		return false
	}
	// Read after the reader stopped: the last event it recorded.
	xc.dropped, xc.lastID = true, s.http.LastEventID(xc.stream)
	if s.ctl != nil && !xc.ended && xc.endWait != nil {
		// The server notices a dropped stream on a goroutine of its own
		// that no frame orders: KEY/disconnected says it has dealt with
		// it (docs/control-extension.md), so what a resume finds, or a
		// cancellation a faulty server takes it for (HTTP-25), no longer
		// depends on that race. The operation's end settles it too.
		s.awaitStep(op.Call+"/disconnected", xc.endWait, xc.call)
	}
	return true
}

func (s *slot) opResume(op Op) bool {
	xc := s.calls[op.Call]
	if s.http == nil || xc == nil || !xc.dropped {
		return false
	}
	return s.resume(xc)
}

func (s *slot) resume(xc *xcall) bool {
	ctx, cancel := s.ex.opContext()
	defer cancel()
	name, err := s.http.Resume(ctx, xc.lastID)
	xc.dropped = false
	if err != nil {
		s.failed("resume", err)
		return false
	}
	xc.stream = name
	return true
}

func (s *slot) opListen() bool {
	if s.http == nil {
		return false
	}
	ctx, cancel := s.ex.opContext()
	defer cancel()
	if _, err := s.http.OpenGET(ctx); err != nil {
		s.failed("listen", err)
		return false
	}
	return true
}

func (s *slot) opClose() bool {
	s.settleOwed()
	s.closeSession()
	s.inc++
	_ = s.open() // a failure is recorded as the new session's loss
	return true
}

// settleOwed waits, with one deadline, for what the session owes before it
// is closed in the middle of a trial: the answers of its pings and the
// ends of its cancelled calls (which say whether the cancels were
// accepted). Calls still gated stay in flight: closing over them is the
// point of the operation.
func (s *slot) settleOwed() {
	if s.sess == nil || !s.alive() {
		return
	}
	ctx, cancel := s.ex.opContext()
	defer cancel()
	for _, c := range s.pings {
		_, _ = c.Await(ctx)
	}
	s.pings = nil
	for _, xc := range s.sorted() {
		if !xc.cancelled || xc.ended || xc.endWait == nil || s.dropped[xc.endWait] {
			continue
		}
		if _, err := xc.endWait.Await(ctx); err == nil {
			xc.ended, xc.outcome = true, outcomeOf(xc.endWait)
		}
	}
}

// closeSession ends the slot's session; everything in flight in it is
// abandoned.
func (s *slot) closeSession() {
	if s.sess == nil {
		return
	}
	s.note(noteClosing)
	ctx, cancel := s.ex.opContext()
	defer cancel()
	td := s.sess.Close(ctx)
	s.tr.teardown = td.ExitedAfter
	s.sess = nil
}

func (s *slot) opTask(op Op) bool {
	if _, used := s.tasks[op.Task]; used || op.Task == "" || !s.tasksOK || s.ctl == nil {
		return false
	}
	token := s.newToken(op.Token, op.Task)
	args := map[string]any{"key": op.Task, "ticks": max(op.Ticks, 1)}
	if op.End != EndComplete {
		args["end"] = op.End
	}
	params := peer.TaskParams(map[string]any{"name": "task_worker", "arguments": args}, taskTTL)
	opts := []peer.CallOption{peer.KeepProgressToken()}
	if token.IsValid() {
		opts = append(opts, peer.WithProgressToken(token))
	}
	c, err := s.start(mcp.MethodToolsCall, params, opts...)
	if err != nil {
		return false
	}
	xt := &xtask{label: op.Task, req: c, ticks: max(op.Ticks, 1)}
	s.tasks[op.Task] = xt
	resp, err := s.wait(c)
	if err != nil || resp.Error != nil {
		return true
	}
	if t, err := peer.ParseCreateTaskResult(resp.Result); err == nil {
		xt.id = t.TaskID
		xt.endWait = s.startAwait(op.Task + "/end")
	}
	return true
}

// taskTTL is the ttl asked for every task: far longer than any trial, so
// that no task expires while it is explored.
const taskTTL = 600_000

func (s *slot) opTaskAdvance(op Op) bool {
	xt := s.tasks[op.Task]
	if xt == nil || xt.id == "" || xt.ended || xt.gaveUp || xt.released > xt.ticks {
		return false
	}
	if !s.release(gate(xt.label, "tick", xt.released)) {
		return false
	}
	xt.released++
	if op.NoWait {
		return true
	}
	if xt.released > xt.ticks {
		s.taskEnd(xt)
		return true
	}
	switch r, _ := s.awaitStep(xt.label+"/tick/"+strconv.Itoa(xt.released), xt.endWait, nil); r {
	case reachedEnd:
		xt.ended = true
	case reachedNever:
		xt.gaveUp = true
	}
	return true
}

// taskEnd waits for the task worker's end.
func (s *slot) taskEnd(xt *xtask) {
	if xt.endWait == nil {
		xt.gaveUp = true
		return
	}
	if _, err := s.wait(xt.endWait); err != nil {
		s.dropAwait(xt.endWait)
		xt.gaveUp = true
		return
	}
	xt.ended, xt.terminal = true, true
}

func (s *slot) opTaskRequest(op Op) bool {
	xt := s.tasks[op.Task]
	if xt == nil || xt.id == "" {
		return false
	}
	method := mcp.MethodTasksGet
	if op.Kind == OpTaskCancel {
		method = mcp.MethodTasksCancel
	}
	c, err := s.start(method, map[string]any{"taskId": xt.id})
	if err != nil {
		return false
	}
	resp, err := s.wait(c)
	if err != nil {
		s.giveUp(c)
		return true
	}
	if resp.Error == nil {
		if t, err := peer.ParseTask(resp.Result); err == nil && t.Terminal() {
			xt.terminal = true
		}
	} else if op.Kind == OpTaskCancel {
		xt.terminal = true // -32602: already terminal (TSK-63), or unknown
	}
	return true
}

func (s *slot) opTaskResult(op Op) bool {
	xt := s.tasks[op.Task]
	if xt == nil || xt.id == "" {
		return false
	}
	c, err := s.start(mcp.MethodTasksResult, map[string]any{"taskId": xt.id})
	if err != nil {
		return false
	}
	_ = c // answered when the task is terminal; the drain collects it
	return true
}

func (s *slot) opTaskList() bool {
	if !s.tasksOK {
		return false
	}
	cursor := ""
	for range maxListPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		c, err := s.start(mcp.MethodTasksList, params)
		if err != nil {
			return true
		}
		resp, err := s.wait(c)
		if err != nil || resp.Error != nil {
			return true
		}
		var r struct {
			NextCursor *string `json:"nextCursor"`
		}
		if json.Unmarshal(resp.Result, &r) != nil || r.NextCursor == nil || *r.NextCursor == "" {
			return true
		}
		cursor = *r.NextCursor
	}
	return true
}

// maxListPages bounds the pages one tasks/list operation follows.
const maxListPages = 64

// drain brings every session to rest: dropped streams are resumed, every
// gate still closed is released and every operation's end awaited (all
// at once, with one deadline), every response still due awaited, the
// cleanup counters read, and each session pinged. Only then is an
// absence (a response that never came) evidence.
func (ex *executor) drain() {
	type endWait struct {
		s  *slot
		xc *xcall
		xt *xtask
		c  *peer.Call
	}
	var waits []endWait
	for _, s := range ex.slots {
		if s.lost || !s.alive() {
			continue
		}
		s.note(noteDrain)
		for _, xc := range s.sorted() {
			if xc.dropped {
				s.resume(xc)
			}
			if xc.ended || s.ctl == nil {
				continue
			}
			for !xc.cancelled && xc.released <= xc.steps {
				s.release(gate(xc.label, "step", xc.released))
				xc.released++
			}
			if xc.endWait != nil {
				waits = append(waits, endWait{s: s, xc: xc, c: xc.endWait})
			}
		}
		for _, xt := range s.sortedTasks() {
			if xt.id == "" || xt.ended {
				continue
			}
			// Cancelled tasks too: a worker that really stopped does not
			// move when its later gates open (TSK-64).
			for xt.released <= xt.ticks {
				s.release(gate(xt.label, "tick", xt.released))
				xt.released++
			}
			if xt.endWait != nil {
				waits = append(waits, endWait{s: s, xt: xt, c: xt.endWait})
			}
		}
	}
	// One deadline for everything still due.
	ctx, cancel := ex.opContext()
	defer cancel()
	for _, w := range waits {
		if w.s.dropped[w.c] {
			continue
		}
		if w.xc != nil && !(w.xc.cancelled && w.s.closesToCancel()) {
			// A refused call's end never comes: its response says so.
			// (A call whose stream was closed has no response to say it.)
			select {
			case <-w.c.Done():
			case <-w.xc.call.Done():
				if resp, _ := w.xc.call.Response(); resp == nil || resp.Error != nil {
					w.s.dropAwait(w.c)
					continue
				}
			case <-ctx.Done():
			}
		}
		resp, err := w.c.Await(ctx)
		if err != nil || resp.Error != nil {
			w.s.dropAwait(w.c)
			continue
		}
		if w.xc != nil {
			w.xc.ended, w.xc.outcome = true, outcomeOf(w.c)
		} else {
			w.xt.ended = true
		}
	}
	for _, s := range ex.slots {
		if s.lost || s.sess == nil {
			continue
		}
		for _, c := range s.inflight {
			if !s.due(c) {
				continue
			}
			if _, err := c.Await(ctx); err != nil && ctx.Err() != nil {
				break
			}
		}
		if s.http != nil {
			// Every frame on a stream has been read once it has ended.
			var streams []string
			for _, xc := range s.sorted() {
				streams = append(streams, xc.stream)
			}
			for _, xt := range s.sortedTasks() {
				streams = append(streams, s.http.StreamOf(xt.req.ID))
			}
			for _, name := range streams {
				if done := s.http.StreamDone(name); done != nil {
					select {
					case <-done:
					case <-ctx.Done():
					}
				}
			}
		}
	}
	for _, s := range ex.slots {
		if s.lost || !s.alive() {
			continue
		}
		if s.ctl != nil {
			cctx, ccancel := ex.opContext()
			if _, err := s.ctl.Counters(cctx); err != nil {
				s.failed("counters", err)
			}
			ccancel()
		}
		s.readObserver()
		// The session must still be usable after all that.
		if c, err := s.start(s.liveness(), nil); err == nil {
			_, _ = s.wait(c)
		}
	}
}

// startAwait sends mcpflight/await for checkpoint without waiting.
func (s *slot) startAwait(checkpoint string) *peer.Call {
	ctx, cancel := s.ex.opContext()
	defer cancel()
	c, err := s.sess.Start(ctx, mcp.MethodControlAwait, map[string]any{"checkpoint": checkpoint})
	if err != nil {
		s.failed("await "+checkpoint, err)
		return nil
	}
	return c
}

// due reports whether an answer to c is still due: not for a call whose
// end says it was cancelled or was never reached, nor for one cancelled
// on a target without the control extension.
func (s *slot) due(c *peer.Call) bool {
	for _, xc := range s.calls {
		if xc.call == c {
			if s.ctl == nil || xc.cancelled && s.closesToCancel() {
				// A closed stream carries nothing more.
				return !xc.cancelled
			}
			return xc.ended && xc.outcome == "completed" && !xc.gaveUp
		}
	}
	return true
}

// sorted returns the slot's calls in label order, so that the drain is
// the same on every run.
func (s *slot) sorted() []*xcall { return byLabel(s.calls) }

func (s *slot) sortedTasks() []*xtask { return byLabel(s.tasks) }

// byLabel returns the values of m ordered by the number in their label
// (the key): c2 before c10.
func byLabel[T any](m map[string]T) []T {
	keys := slices.Collect(maps.Keys(m))
	num := func(k string) int {
		n, _ := strconv.Atoi(strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyz"))
		return n
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(num(a), num(b)) })
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// closeAll ends every session of the trial.
func (ex *executor) closeAll() {
	for _, s := range ex.slots {
		s.closeSession()
	}
}
