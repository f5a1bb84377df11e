package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// runCase runs one case in isolation: its own chronology, connection and
// session. It returns the server's initialize result when the handshake
// succeeded. It tells hooks when its handshake has succeeded and when its
// verdict is in (see caseHooks).
//
// A case goes through phases, each of which may conclude it: the needs
// the profile and target alone decide (before anything starts), dial,
// open the session under the run's revision, the needs the session
// decides, run, and close. Whatever concludes it, the session is closed
// with a bounded context of its own before the result is returned.
func runCase(ctx context.Context, cfg Config, c probe.Case, hooks caseHooks) (results.Result, *peer.InitResult) {
	r := &caseRun{ctx: ctx, cfg: cfg, c: c, hooks: hooks, start: time.Now(), res: results.Result{
		ID:        c.ID,
		Title:     c.Title,
		Area:      c.Area(),
		Reqs:      c.ReqsFor(cfg.Version),
		Transport: cfg.Target.Transport,
	}}
	if o, skip := r.staticNeeds(); skip {
		return r.finish(o), nil
	}
	if o, skip := r.declaredNeeds(); skip {
		return r.finish(o), nil
	}
	if o := r.dial(); o != nil {
		return r.finish(*o), nil
	}
	caseCtx, cancel := context.WithTimeout(ctx, cfg.CaseTimeout)
	defer cancel()
	init, o := r.open(caseCtx)
	if o == nil {
		o = r.run(caseCtx, init)
	}
	r.closeBounded(*o)
	return r.finish(r.lastWords(*o)), init
}

// caseRun is one case's run: the result it builds, its chronology, its
// connection and sessions, and how they are closed.
type caseRun struct {
	ctx   context.Context // the run's, not the case's deadline
	cfg   Config
	c     probe.Case
	hooks caseHooks
	start time.Time
	res   results.Result

	log  *chrono.Log
	conn transport.Conn
	s    *peer.Session
	// shared is the session the case shares with other tidy cases
	// (sharing.go); nil when it has one of its own.
	shared *sharedSession
	scope  string // the case's control scope under 2026-07-28, shared by its sessions
	// noHandshake is set when the initialize handshake failed: the
	// target's own last words are what a newcomer needs then.
	noHandshake bool

	closeOnce sync.Once
	teardown  transport.Teardown
	extraMu   sync.Mutex
	extras    []*peer.Session // second sessions a case opened (Env.Open)
}

// finish sets the result's outcome and times and returns it.
func (r *caseRun) finish(o verdict.Outcome) results.Result {
	r.res.Outcome = o
	r.res.Duration = time.Since(r.start)
	if r.res.Log != nil {
		// Read-only, like the rest of a Result: not a second copy.
		r.res.Events = r.res.Log.Snapshot()
	}
	r.res.Interrupted = r.ctx.Err() != nil
	return r.res
}

// staticNeeds skips a case that does not apply to the run's revision, or
// whose needs the profile and target alone decide, before anything is
// started.
func (r *caseRun) staticNeeds() (verdict.Outcome, bool) {
	if !r.c.AppliesTo(r.cfg.Version) {
		return verdict.Skipf("applies to %s only", versionList(r.c.Versions)), true
	}
	return staticSkip(r.cfg, r.c.Needs)
}

// dial opens the case's connection and session; a target it cannot
// reach concludes the case.
func (r *caseRun) dial() *verdict.Outcome {
	r.log = chrono.New()
	r.res.Log = r.log
	shared, err := r.tidyDial()
	var conn transport.Conn
	if !shared {
		conn, err = r.cfg.Target.Dial(r.ctx, r.log)
	}
	if err != nil {
		r.log.Harness(chrono.KindError, "runner", "dial failed: "+err.Error())
		if r.ctx.Err() != nil {
			// The run ended (its deadline, an interrupt) while the target
			// was being started: that is why, not the target.
			why := stopReason(r.ctx, r.cfg)
			r.log.Harness(chrono.KindDeadline, "runner", why+" while the target was being started")
			o := verdict.Errorf("%s before the target started (%s)", why, chrono.Sanitize(err.Error(), false))
			return &o
		}
		r.res.TargetMissing = unreachable(err)
		o := verdict.Errorf("cannot reach the target: %v", err)
		return &o
	}
	if !shared {
		r.conn = conn
		r.s = peer.New(conn, peer.Options{Log: r.log})
	}
	return nil
}

// closeSession closes the case's session once and returns its teardown.
func (r *caseRun) closeSession(ctx context.Context) transport.Teardown {
	r.closeOnce.Do(func() { r.teardown = r.s.Close(ctx) })
	return r.teardown
}

// closeBounded ends the case, whose outcome is o: it tells the scheduler
// the verdict is in and closes every session with a bounded context of
// its own, since the case's deadline, or an interrupted run, must not
// cut the shutdown ladder short. A shared session may instead go on to
// the next tidy case (handOn).
func (r *caseRun) closeBounded(o verdict.Outcome) {
	if r.s == nil {
		return
	}
	r.hooks.conclude(r.res.TargetMissing)
	if r.handOn(o) {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), r.cfg.CloseTimeout)
	defer cancel()
	r.extraMu.Lock()
	for _, x := range r.extras {
		x.Close(cctx)
	}
	r.extras = nil
	r.extraMu.Unlock()
	r.res.Teardown = TeardownOf(r.closeSession(cctx))
	if r.res.Teardown.ExitedAfter == "" {
		r.res.Teardown.ExitedAfter = results.StepNone
	}
}

// open makes the session speak the run's revision: the initialize
// handshake under 2025-11-25 (unless the case makes its own), the
// envelope under 2026-07-28. A failure concludes the case.
func (r *caseRun) open(ctx context.Context) (*peer.InitResult, *verdict.Outcome) {
	var init *peer.InitResult
	continued := r.shared != nil && r.shared.users > 1
	if continued {
		init = r.shared.init
	}
	if r.handshakes() && !continued {
		var err error
		init, err = r.s.Initialize(ctx, peer.InitOptions{ProtocolVersion: r.cfg.Version})
		if err != nil {
			o := handshakeOutcome(err, init, r.cfg.Version)
			if ctx.Err() != nil {
				why := stopReason(ctx, r.cfg)
				r.log.Harness(chrono.KindDeadline, "runner", why+" during the handshake")
				if o.Verdict == verdict.Error {
					o = verdict.Errorf("no answer to initialize: %s before the target answered it (%s)", why, chrono.Sanitize(err.Error(), false))
				}
			}
			r.res.TargetMissing = unreachable(err)
			r.noHandshake = true
			return nil, &o
		}
	}
	r.scope = newScope(r.c.ID)
	if opens2026(r.cfg) {
		var o *verdict.Outcome
		if init, o = open2026(ctx, r.s, r.c, r.scope); o != nil {
			return nil, o
		}
	}
	if r.shared != nil && !continued {
		r.openedShared(init)
	}
	if init != nil && !r.c.Needs.NoHandshake {
		// Before the scheduler hears of the handshake and starts the
		// next cases, which may be decided on it.
		r.cfg.declared.learn(r.c.ID, init, control.Detect(r.s) != nil)
	}
	if init != nil || continued {
		r.hooks.shookHands()
	}
	return init, nil
}

// handshakes reports whether the runner makes the initialize handshake.
func (r *caseRun) handshakes() bool {
	return !r.c.Needs.NoHandshake && r.cfg.Version == spec.V20251125
}

// sessionNeeds skips a case whose needs the open session does not meet
// (a capability, the control extension, a tool of the profile), and
// returns the control extension's client, nil when not offered.
func (r *caseRun) sessionNeeds(ctx context.Context, init *peer.InitResult) (*control.Client, *verdict.Outcome) {
	ctl := control.Detect(r.s)
	reason := sessionSkip(r.c.Needs, r.cfg.Profile, init, ctl != nil)
	if reason == "" && (r.handshakes() || opens2026(r.cfg) && !r.c.Needs.NoHandshake) {
		reason = missingTool(ctx, r.s, r.cfg.Profile, r.c.Needs)
	}
	if reason != "" {
		o := verdict.Skipf("%s", reason)
		return nil, &o
	}
	return ctl, nil
}

// run checks the session's needs and runs the case's Run on a probe.Env,
// then weighs its outcome against what bounded the evidence (a transport
// limit, the chronology's cap) and what the target refused.
func (r *caseRun) run(ctx context.Context, init *peer.InitResult) *verdict.Outcome {
	ctl, o := r.sessionNeeds(ctx, init)
	if o != nil {
		return o
	}
	out := runGuarded(ctx, r.cfg, r.c, r.env(ctl), r.closeSession)
	if lim := limitHit(r.conn.Err()); lim != nil {
		// What the case saw was cut short by one of our bounds: it cannot
		// vouch for the target, and an error should name the bound. A fail
		// or warn it found stands: it is backed by the chronology, and the
		// limit may be the fault's own doing (a stream a broken server
		// never finishes).
		out = incomplete(r.log, out, "a transport limit was hit", fmt.Sprintf("a transport limit was hit, so the case could not observe the target fully: %s",
			chrono.Sanitize(lim.Error(), false)))
	}
	if capped := r.log.CapReached(); capped != "" {
		// The same for our own record: a verdict cannot rest on a
		// chronology with events left out (a flood of frames).
		out = incomplete(r.log, out, "the chronology reached its cap", "the evidence is incomplete, so the case cannot vouch for the target: "+capped)
	}
	out = refusedRevision(r.log, r.cfg.Version, out)
	out = r.slowUnfit(out)
	return &out
}

// slowUnfit turns the error or unexercised skip of a case that calls the
// slow tool, in a run that found the tool answers at once without progress
// (probe.SlowFit), into a skip that says so: the profile's tool, not the
// target, is why the case could not hold work in flight. A verdict the
// case could reach stands.
func (r *caseRun) slowUnfit(o verdict.Outcome) verdict.Outcome {
	if r.cfg.Profile.Slow == nil || !r.c.Needs.SlowTool && !r.c.Needs.UsesSlowTool {
		return o
	}
	reason, unfit := r.cfg.slowFit.Settle(r.log, r.cfg.Profile.Slow.Name)
	if !unfit || !(o.Verdict == verdict.Error || o.Unexercised) {
		return o
	}
	r.log.Harness(chrono.KindDecision, "runner", "verdict is skip: the profile's slow tool sends no progress")
	return verdict.Skipf("%s (the case said: %s %s)", reason, o.Verdict, o.Summary)
}

// env is the probe.Env the case runs on.
func (r *caseRun) env(ctl *control.Client) *probe.Env {
	cfg := r.cfg
	return &probe.Env{
		Revision:  cfg.Version,
		Cites:     r.c.ReqsFor(cfg.Version),
		S:         r.s,
		Log:       r.log,
		Profile:   cfg.Profile,
		Control:   ctl,
		Grace:     cfg.Grace,
		Pacing:    cfg.pace,
		SlowFit:   cfg.slowFit,
		Transport: cfg.Target.Transport,
		// A case that judges teardown gets the same bound as the runner's
		// own close, so the ladder's escalation is what it observes.
		Close: func(cctx context.Context) transport.Teardown {
			cctx, cancel := context.WithTimeout(cctx, cfg.CloseTimeout)
			defer cancel()
			return r.closeSession(cctx)
		},
		Open: r.openSecond,
	}
}

// openSecond opens another session of the case's target on its
// chronology (probe.Env.Open), closed with the case's own.
func (r *caseRun) openSecond(octx context.Context) (*peer.Session, error) {
	conn, err := r.cfg.Target.Dial(r.ctx, r.log)
	if err != nil {
		return nil, fmt.Errorf("runner: opening a second session: %w", err)
	}
	x := peer.New(conn, peer.Options{Log: r.log, FirstID: 1_000_000})
	r.extraMu.Lock()
	r.extras = append(r.extras, x)
	r.extraMu.Unlock()
	if err := openSecond(octx, r.cfg, x, r.scope); err != nil {
		return nil, err
	}
	return x, nil
}

// lastWords adds, to an error of a case whose handshake failed, or whose
// target died during it or exited with a failure code, the target's exit
// code and last words.
func (r *caseRun) lastWords(o verdict.Outcome) verdict.Outcome {
	td := r.res.Teardown
	if r.log != nil && o.Verdict == verdict.Error && (r.noHandshake || td.ExitedAfter == results.StepNone || (td.ExitCode > 0 && td.Signal == "")) {
		o.Summary += targetLastWords(r.log)
	}
	return o
}
