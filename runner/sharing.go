package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/verdict"
)

// Over stdio a session is a server process, and starting one is most of
// what a case costs against a server written for Node.js (about half a
// CPU second each). A tidy case (probe.Case.Tidy) leaves a session as it
// found it, so the runner lets the tidy cases of a run go on one after
// another on the sessions other tidy cases opened, instead of starting a
// process each (Config.Isolate turns this off). Every case still has a
// chronology of its own: the connection and session record into a
// stand-in log (chrono.Log.RecordInto) that each case points at its own,
// and the first event of a case that continues a session says whose it
// was. A session is handed on only when its case passed, was skipped or
// was informational, nothing is in flight (peer.Session.HandOver) and a
// ping came back, and it is continued only when nothing came from the
// server while it waited: otherwise it is closed and the next case starts
// its own. A target that offers the control extension keeps state per
// session that cases read (operation keys, cleanup counters), so none of
// its sessions is shared.

// sharedSession is a stdio session that tidy cases use one after another.
type sharedSession struct {
	// s records into a stand-in log (s.Log()), pointed at each user's
	// chronology in turn, and at gap while no case uses it.
	s        *peer.Session
	gap      *chrono.Log
	init     *peer.InitResult
	openedBy string // the case that opened it
	users    int    // the cases that have used it, the current one included
	// chosen are the request IDs its cases chose themselves
	// (probe.Case.IDs), by ID key, however they sent them: a raw frame's
	// ID is not one the session knows it sent (peer.Session.Spent).
	chosen map[string]bool
	// kind is which cases share it: tidy ones, ones that leave tasks, or
	// ones that leave cancelled requests.
	kind probe.Sharing
	// who sets aside the frames about its earlier users' requests and
	// tasks (attribution.go).
	who *attribution
}

// spent reports whether the session has sent id, or one of its cases
// chose it.
func (sh *sharedSession) spent(id jsonrpc.ID) bool {
	return sh.chosen[id.Key()] || sh.s.Spent(id)
}

// choose records the IDs a case that uses the session chose.
func (sh *sharedSession) choose(ids []jsonrpc.ID) {
	for _, id := range ids {
		sh.chosen[id.Key()] = true
	}
}

// sessionPool holds a run's idle shared sessions, and bounds how many
// cases of each kind of sharing (probe.Sharing) run at once, so that
// they continue each other's sessions rather than each start one beside
// the others. A session is shared by cases of one kind only.
type sessionPool struct {
	mu   sync.Mutex
	idle map[probe.Sharing][]*sharedSession
	// asking is how many cases of each kind have not yet asked for a
	// session: a session is kept only while one may still take it.
	asking map[probe.Sharing]int
	// busy counts the cases of each kind started and not finished, at
	// most sharedLanes of the kind.
	busy map[probe.Sharing]int
	// off is set once the target shows that its sessions must not be
	// shared (it offers the control extension): every case then opens
	// its own, without waiting for a lane.
	off bool
	// closing counts the sessions being closed beside the run (retire).
	closing sync.WaitGroup
}

// sharedLanes is how many cases of a kind of sharing run at once over
// stdio, each on a session the one before it on its lane opened. The
// cases that leave tasks get the most: against a task tool of fixed
// stages (server-everything's four seconds) a lane of them is long.
// More lanes shorten each lane but not the run once they outnumber what
// the jobs and the server starts let run at once, and each lane costs a
// server start, a CPU-bound one for a Node.js server; fewer lanes make
// the longest lane the run's length. The counts below are the shortest
// runs measured against server-everything (docs/performance.md).
func sharedLanes(kind probe.Sharing) int {
	switch kind {
	case probe.ShareTasks:
		return 6
	case probe.ShareCancels:
		return 3
	}
	return 5
}

// newSessionPool returns the pool of a run whose cases may share
// sessions, or nil when none may: the target is not a stdio server of
// its own per session, Config.Isolate is set, or fewer than two tidy
// cases will run.
func newSessionPool(cfg Config) *sessionPool {
	if cfg.Isolate || cfg.Target.Transport != TransportStdio || cfg.Target.PerCase != nil {
		return nil
	}
	asking := map[probe.Sharing]int{}
	for _, c := range cfg.Cases {
		if c.SharesSession() && c.AppliesTo(cfg.Version) && !skipped(staticSkip(cfg, c.Needs)) {
			asking[c.Sharing()]++
		}
	}
	shared := false
	for _, n := range asking {
		shared = shared || n >= 2
	}
	if !shared {
		return nil
	}
	return &sessionPool{idle: map[probe.Sharing][]*sharedSession{}, asking: asking, busy: map[probe.Sharing]int{}}
}

// full reports whether every lane of the kind is busy, so that the next
// case of that kind must wait for one.
func (p *sessionPool) full(kind probe.Sharing) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.off && p.busy[kind] >= sharedLanes(kind)
}

// stop ends the sharing for the rest of the run: idle sessions stay
// until closeIdle, and no session is kept or taken any more.
func (p *sessionPool) stop() {
	p.mu.Lock()
	p.off = true
	p.mu.Unlock()
}

// reserve takes a lane for a case of the kind that starts; release gives
// it back once the case is over (its session kept or closed).
func (p *sessionPool) reserve(kind probe.Sharing) {
	p.mu.Lock()
	p.busy[kind]++
	p.mu.Unlock()
}

func (p *sessionPool) release(kind probe.Sharing) {
	p.mu.Lock()
	p.busy[kind]--
	p.mu.Unlock()
}

// take returns an idle session for a case of the kind, the one most
// recently handed on among those that have sent none of the case's own
// request IDs (probe.Case.IDs), or nil when there is none and the case
// must open its own; either way the case has asked.
func (p *sessionPool) take(kind probe.Sharing, ids []jsonrpc.ID) *sharedSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asking[kind]--
	if p.off {
		return nil
	}
	idle := p.idle[kind]
	for i := len(idle) - 1; i >= 0; i-- {
		sh := idle[i]
		if slices.ContainsFunc(ids, sh.spent) {
			continue
		}
		p.idle[kind] = slices.Delete(idle, i, i+1)
		return sh
	}
	return nil
}

// keep puts sh back for the next case of its kind and reports true, or
// reports false when no case that has not asked yet is left to take it.
func (p *sessionPool) keep(sh *sharedSession) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off || p.asking[sh.kind] <= len(p.idle[sh.kind]) {
		return false
	}
	sh.who.begin("")
	sh.s.Log().RecordInto(sh.gap)
	p.idle[sh.kind] = append(p.idle[sh.kind], sh)
	return true
}

// closeIdle closes the sessions no case took (a run that ended early),
// and waits for those retire closes; their teardowns are no case's and
// are not graded.
func (p *sessionPool) closeIdle(ctx context.Context) {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[probe.Sharing][]*sharedSession{}
	p.mu.Unlock()
	for _, kind := range idle {
		for _, sh := range kind {
			sh.s.Close(ctx)
		}
	}
	p.closing.Wait()
}

// retire closes sh, which no case will use, beside the run, within
// timeout: a server that outlives its stdin holds no case up while it is
// sent SIGTERM (its teardown is no case's, and is not graded).
func (p *sessionPool) retire(ctx context.Context, sh *sharedSession, timeout time.Duration) {
	p.closing.Add(1)
	go func() {
		defer p.closing.Done()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		sh.s.Close(cctx)
	}()
}

// openShared opens a session for a case that will be offered to the
// next ones of its kind, recording into the case's chronology through a
// stand-in whose filter sets aside the frames about earlier users.
func (r *caseRun) openShared() error {
	stand := chrono.New()
	stand.RecordInto(r.log)
	who := newAttribution(r.c.ID)
	stand.Filter(who.filter)
	conn, err := r.cfg.Target.Dial(r.ctx, stand)
	if err != nil {
		return err
	}
	r.conn = conn
	r.s = peer.New(conn, peer.Options{Log: stand})
	r.shared = &sharedSession{s: r.s, gap: chrono.New(), openedBy: r.c.ID, users: 1, chosen: map[string]bool{},
		kind: r.c.Sharing(), who: who}
	r.shared.choose(r.c.IDs)
	return nil
}

// continueOn makes the case go on with sh, which an earlier tidy case
// handed on. It reports false, having closed sh, when something came
// from the server while sh waited: what it was is in the case's
// chronology, and the case then opens a session of its own.
func (r *caseRun) continueOn(sh *sharedSession) bool {
	var came []chrono.Event
	aside := 0
	for _, ev := range sh.gap.Events() {
		if setAside(ev) {
			aside++
		} else {
			came = append(came, ev)
		}
	}
	if n := len(came); n > 0 {
		r.cfg.pool.retire(r.ctx, sh, r.cfg.CloseTimeout)
		r.log.Harness(chrono.KindDecision, "runner", fmt.Sprintf(
			"did not continue the session case %s opened: %d events came while it waited between cases (the first: %s), so it is closed beside the run and this case opens its own",
			sh.openedBy, n, describeEvent(came[0])))
		return false
	}
	sh.users++
	sh.choose(r.c.IDs)
	sh.gap = chrono.New()
	sh.who.begin(r.c.ID)
	sh.s.Log().RecordInto(r.log)
	r.conn, r.s, r.shared = sh.s.Conn(), sh.s, sh
	r.res.ContinuedFrom = sh.openedBy
	what := "tidy cases share a stdio session"
	switch sh.kind {
	case probe.ShareTasks:
		what = "cases that leave tasks share a stdio session while the earlier ones' tasks run on; a frame about an earlier case's request or task is set aside, with a note here"
	case probe.ShareCancels:
		what = "cases that leave cancelled requests share a stdio session while the work the earlier ones cancelled may run on; a frame about an earlier case's request is set aside, with a note here"
	}
	if aside > 0 {
		what += fmt.Sprintf("; %d frames about earlier cases came while the session waited and were set aside", aside)
	}
	r.log.Harness(chrono.KindDecision, "runner", fmt.Sprintf(
		"continues the session (the server process) case %s opened, as its case number %d: the handshake and the earlier cases' traffic are in their chronologies; this one starts here (%s; --isolate gives each its own)",
		sh.openedBy, sh.users, what))
	return true
}

// describeEvent names an event in a few words, for a harness note.
func describeEvent(e chrono.Event) string {
	switch {
	case e.Summary != nil && e.Summary.Method != "":
		return fmt.Sprintf("%s %s", e.Channel, chrono.Sanitize(e.Summary.Method, false))
	case e.Summary != nil:
		return fmt.Sprintf("%s %s", e.Channel, chrono.Sanitize(e.Summary.Kind, false))
	case e.Text != "":
		return fmt.Sprintf("%s: %s", e.Channel, chrono.Clip(chrono.Sanitize(e.Text, false), 80))
	}
	return string(e.Kind) + " on " + e.Channel
}

// cancelledWorkGoesOn reports whether requirement is a rule a server
// breaks by going on with a request it was told to cancel: sending its
// progress or its response (CAN-8, CAN-48, CAN-54), or not ceasing its
// work (CAN-16). A case of a cancel lane that finds one has left behind
// only what the lane is built for: work on its own cancelled requests,
// whose frames name those requests and are set aside for the cases after
// it (attribution.go).
func cancelledWorkGoesOn(requirement string) bool {
	switch requirement {
	case "CAN-8", "CAN-16", "CAN-48", "CAN-54":
		return true
	}
	return false
}

// handOn offers the case's shared session to the next tidy case instead
// of closing it, and reports whether it did: only after an outcome that
// says nothing went wrong (or, on a cancel lane, only that the server
// went on with the case's cancelled work), with nothing in flight but
// what the lane leaves, the server still answering the revision's
// liveness request (ping, or server/discover under 2026-07-28), and
// while a case of the lane's kind is left to take it.
func (r *caseRun) handOn(o verdict.Outcome) bool {
	r.extraMu.Lock()
	extras := len(r.extras)
	r.extraMu.Unlock()
	if r.shared == nil || r.ctx.Err() != nil || extras > 0 {
		return false
	}
	switch o.Verdict {
	case verdict.Pass, verdict.Info, verdict.Skip:
	case verdict.Warn, verdict.Fail:
		if r.shared.kind != probe.ShareCancels || !cancelledWorkGoesOn(o.Requirement) {
			return false // it may have left work behind that names nothing
		}
	default:
		return false // an error may have left anything behind
	}
	if r.conn.Err() != nil {
		return false
	}
	// The revision's liveness request: ping, or server/discover under
	// 2026-07-28, which has no ping (PNG-40) and answers it -32601.
	pctx, cancel := context.WithTimeout(r.ctx, r.cfg.Grace)
	what := mcp.MethodPing
	var err error
	if opens2026(r.cfg) {
		what = mcp.MethodServerDiscover
		_, err = r.s.Discover(pctx)
	} else {
		err = r.s.Ping(pctx)
	}
	cancel()
	if err != nil {
		r.log.Harness(chrono.KindDecision, "runner", "the session is not handed on: the "+what+" before handing it on failed: "+chrono.Sanitize(err.Error(), false))
		return false
	}
	if r.s.HandOver(r.shared.kind == probe.ShareCancels) != nil || !r.cfg.pool.keep(r.shared) {
		return false
	}
	r.res.HandedOn = true
	return true
}

// openedShared is told that the case opened a shared session, whose
// handshake (or server/discover) is over: a target that offers the
// control extension keeps per-session state the cases use (operation
// keys, counters), so the run shares none of its sessions, and this one
// is the case's own.
func (r *caseRun) openedShared(init *peer.InitResult) {
	r.shared.init = init
	if control.Detect(r.s) != nil {
		r.cfg.pool.stop()
		r.shared = nil
	}
}

// tidyDial gives a tidy case of a run that shares sessions a session: an
// idle one, or one it opens and may hand on. It reports false when the
// case is not tidy or the run shares none.
func (r *caseRun) tidyDial() (bool, error) {
	if r.cfg.pool == nil || !r.c.SharesSession() {
		return false, nil
	}
	if sh := r.cfg.pool.take(r.c.Sharing(), r.c.IDs); sh != nil && r.continueOn(sh) {
		return true, nil
	}
	return true, r.openShared()
}
