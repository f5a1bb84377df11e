package runner

import (
	"fmt"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/verdict"
)

// declared is what the first session of a run that made the run's own
// handshake learned the server declares: its capabilities and whether it
// offers the control extension. Over stdio every case starts a server
// process; a case that what the server declares would skip (it needs the
// control extension, a capability, or a server without tasks) is decided
// on this instead of on a process of its own, which costs the target a
// start and tells nothing new. The case's chronology says which case's
// session it was decided on.
type declared struct {
	mu         sync.Mutex
	init       *peer.InitResult // nil until learned
	controlled bool
	by         string // the case whose session declared it
}

// newDeclared returns the run's store of what the server declares, or nil
// when every case decides its needs on its own session: a careful run
// (Config.Isolate), and a target whose cases each have a server of their
// own, built for them (Target.PerCase).
func newDeclared(cfg Config) *declared {
	if cfg.Isolate || cfg.Target.PerCase != nil {
		return nil
	}
	return &declared{}
}

// learn records what the session of case id declared, once per run.
func (d *declared) learn(id string, init *peer.InitResult, controlled bool) {
	if d == nil || init == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.init == nil {
		d.init, d.controlled, d.by = init, controlled, id
	}
}

// skip returns why a case with the given needs is skipped on what the
// server declared and the profile p names, and the case whose session
// declared it; "" when nothing is known yet or the declaration does not
// decide the case.
func (d *declared) skip(n probe.Needs, p *profile.Profile) (reason, by string) {
	if d == nil {
		return "", ""
	}
	d.mu.Lock()
	init, controlled, by := d.init, d.controlled, d.by
	d.mu.Unlock()
	if init == nil {
		return "", ""
	}
	return sessionSkip(n, p, init, controlled), by
}

// declaredNeeds skips, before anything is started, a case whose needs what
// the server declared in an earlier case's session does not meet, as
// staticNeeds does on the profile and target.
func (r *caseRun) declaredNeeds() (verdict.Outcome, bool) {
	reason, by := r.cfg.declared.skip(r.c.Needs, r.cfg.Profile)
	if reason == "" {
		return verdict.Outcome{}, false
	}
	r.log = chrono.New()
	r.res.Log = r.log
	r.log.Harness(chrono.KindNote, "runner", fmt.Sprintf(
		"decided without a session of its own (over stdio, a server process): the session of case %s (its chronology holds the handshake) declared what this case needs, and it is not met; --isolate decides every case on a session of its own", by))
	return verdict.Skipf("%s", reason), true
}
