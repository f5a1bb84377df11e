package explore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shrink makes plan as small as it can while running it still breaks the
// rule want broke: it cuts the steps after the violation, drops whole
// sessions, removes chunks of steps (halves, then quarters, down to
// single steps, as delta debugging does) and simplifies arguments (one
// step, no progress token, integer IDs, no race, awaited releases, a task
// of one tick that completes), repeating until nothing more goes or the
// budget (cfg.ShrinkRuns runs, cfg.ShrinkTime) is spent. Every candidate
// is a real run against the target. It returns the smallest plan and the
// number of runs taken, with the history of the last run that broke the
// rule (nil when no candidate did). seen, when not nil, is the history
// of a run of plan that broke the rule (the trial that found it): where
// the violation was recorded in it says which steps can go first, and
// plan is not run again to find out.
//
// The shrinker is written for the explorer rather than taken from a
// property-testing library: a candidate is a plan of operations that a
// replay file must hold as it is (pgregory.net/rapid shrinks the bit
// stream its generators drew from, and replays it through its own fail
// files), shrinking runs from the command line, not only inside go test,
// and the moves that pay here (drop a session, drop a call with what
// refers to it, which the executor then skips) are the domain's own.
func Shrink(ctx context.Context, cfg Config, f Features, plan Plan, want Violation, seen *History) (Plan, int, *History) {
	_ = cfg.defaults()
	sh := &shrinker{ctx: ctx, cfg: cfg, f: f, want: want, deadline: time.Now().Add(cfg.ShrinkTime)}
	best := plan.Clone()
	// Nothing after the operation that led to the violation can matter
	// to it (the drain brings every session to rest anyway).
	if cut := sh.cutAt(best, seen); cut < len(best.Steps) {
		cand := Plan{Sessions: best.Sessions, Steps: best.Steps[:cut]}
		if sh.fails(cand) {
			best = cand
		}
	}
	for changed := true; changed && sh.budget(); {
		changed = false
		if p, ok := sh.dropSessions(best); ok {
			best, changed = p, true
		}
		if p, ok := sh.dropChunks(best); ok {
			best, changed = p, true
		}
		if p, ok := sh.simplify(best); ok {
			best, changed = p, true
		}
	}
	return best, sh.runs, sh.last
}

type shrinker struct {
	ctx      context.Context
	cfg      Config
	f        Features
	want     Violation
	deadline time.Time
	runs     int
	// last is the history of the latest run that broke the rule.
	last *History
}

func (sh *shrinker) budget() bool {
	return sh.runs < sh.cfg.ShrinkRuns && time.Now().Before(sh.deadline) && sh.ctx.Err() == nil
}

// fails runs cand and reports whether it still breaks the rule.
func (sh *shrinker) fails(cand Plan) bool {
	if !sh.budget() || len(cand.Steps) == 0 && cand.Sessions == 0 {
		return false
	}
	// Without the control extension a plan's interleaving is the target's
	// timing, not the seed's: a candidate is kept only when it breaks the
	// rule twice in a row, so that the minimal plan is one that shows the
	// violation, not one that once happened to.
	tries := 1
	if !sh.f.Control {
		tries = 2
	}
	for range tries {
		if !sh.breaks(cand) {
			return false
		}
	}
	return true
}

// breaks runs cand once and reports whether it broke the rule.
func (sh *shrinker) breaks(cand Plan) bool {
	sh.runs++
	_, h, err := runOnce(sh.ctx, sh.cfg, sh.f, cand)
	if err != nil {
		return false
	}
	vs, _ := Check(h, sh.cfg.Revision)
	for _, v := range vs {
		if v.Same(sh.want) {
			sh.last = h
			return true
		}
	}
	return false
}

// cutAt is the number of steps up to and including the operation under
// which the wanted violation was recorded (the last "op N" note of its
// session before it) in h, a history of plan, or all of them when that
// cannot be told. With h nil, plan is run once for it.
func (sh *shrinker) cutAt(plan Plan, h *History) int {
	if h == nil {
		var err error
		_, h, err = runOnce(sh.ctx, sh.cfg, sh.f, plan)
		sh.runs++
		if err != nil {
			return len(plan.Steps)
		}
	}
	vs, _ := Check(h, sh.cfg.Revision)
	i := slices.IndexFunc(vs, func(v Violation) bool { return v.Same(sh.want) })
	if i < 0 {
		return len(plan.Steps)
	}
	v := vs[i]
	last := -1
	for _, ev := range h.Events[:min(int(v.Seq), len(h.Events))] {
		if !strings.HasPrefix(ev.Channel, v.Session+" ") || !strings.HasPrefix(ev.Text, notePrefOp) {
			continue
		}
		num, _, _ := strings.Cut(strings.TrimPrefix(ev.Text, notePrefOp), ":")
		if n, err := strconv.Atoi(num); err == nil {
			last = n
		}
	}
	if last < 0 {
		return len(plan.Steps)
	}
	return last + 1
}

// dropSessions tries the plan without each session in turn.
func (sh *shrinker) dropSessions(plan Plan) (Plan, bool) {
	changed := false
	for s := plan.Sessions - 1; s >= 0 && plan.Sessions > 1 && sh.budget(); s-- {
		cand := Plan{Sessions: plan.Sessions - 1}
		for _, st := range plan.Steps {
			switch {
			case st.Session == s:
				continue
			case st.Session > s:
				st.Session--
			}
			cand.Steps = append(cand.Steps, st)
		}
		if sh.fails(cand) {
			plan, changed = cand, true
		}
	}
	return plan, changed
}

// dropChunks removes chunks of steps, from halves down to single steps.
func (sh *shrinker) dropChunks(plan Plan) (Plan, bool) {
	changed := false
	for size := max(len(plan.Steps)/2, 1); size >= 1 && sh.budget(); size /= 2 {
		for start := 0; start < len(plan.Steps) && sh.budget(); {
			end := min(start+size, len(plan.Steps))
			cand := Plan{Sessions: plan.Sessions, Steps: slices.Concat(plan.Steps[:start], plan.Steps[end:])}
			if len(cand.Steps) > 0 && sh.fails(cand) {
				plan, changed = cand, true
				continue // the same start now names the next chunk
			}
			start = end
		}
		if size == 1 {
			break
		}
	}
	return plan, changed
}

// simplify tries simpler arguments, one step and one argument at a time.
func (sh *shrinker) simplify(plan Plan) (Plan, bool) {
	changed := false
	for i := 0; i < len(plan.Steps) && sh.budget(); i++ {
		for _, simpler := range simplerOps(plan.Steps[i].Op) {
			cand := plan.Clone()
			cand.Steps[i].Op = simpler
			if sh.fails(cand) {
				plan, changed = cand, true
			}
		}
	}
	return plan, changed
}

// simplerOps lists the one-argument simplifications of op.
func simplerOps(op Op) []Op {
	var out []Op
	try := func(apply func(*Op)) {
		o := op
		apply(&o)
		if o != op {
			out = append(out, o)
		}
	}
	if op.Steps > 1 {
		try(func(o *Op) { o.Steps = 1 })
	}
	if op.Ticks > 1 {
		try(func(o *Op) { o.Ticks = 1 })
	}
	if op.Kind != OpReuse {
		try(func(o *Op) { o.Token = TokenNone })
	}
	try(func(o *Op) { o.ID = IDInt })
	try(func(o *Op) { o.Race = false })
	try(func(o *Op) { o.NoWait = false })
	try(func(o *Op) { o.End = EndComplete })
	return out
}
