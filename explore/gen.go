package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Features is what a target offers the generator: which operations of
// the mix can run against it at all.
type Features struct {
	// Transport is TransportInProcess, TransportStdio or TransportHTTP.
	Transport string
	// Control is set when the target advertises the io.mcpflight/control
	// extension (docs/control-extension.md): calls are then gated and
	// advance at the checkpoints the explorer releases.
	Control bool
	// Tasks is set when the target declares tasks for tools/call and
	// offers a tool to run as a task (with Control: task_worker).
	Tasks bool
}

// Transports a target can use.
const (
	TransportInProcess = "inprocess"
	TransportStdio     = "stdio"
	TransportHTTP      = "http"
)

// Weight is one row of the operation mix: how often a kind is drawn, and
// the protocol revisions under which it exists. A revision that drops an
// operation (2026-07-28 removes ping, PNG-40) or changes what it means
// (2026-07-28 makes a dropped HTTP stream a cancellation, CAN-43) lists
// it or not here.
type Weight struct {
	Kind      Kind
	Weight    int
	Revisions []string
}

// DefaultMix is the operation mix of a trial. Under 2026-07-28 (over
// stdio and in process) ping is server/discover, the liveness check that
// stands in for it (PNG-40), and the HTTP stream operations and the
// 2025-11-25 tasks are not drawn.
func DefaultMix() []Weight {
	r := []string{Revision20251125}
	both := []string{Revision20251125, Revision20260728}
	return []Weight{
		{OpCall, 14, both},
		{OpAdvance, 22, both},
		{OpCancel, 10, both},
		{OpRecancel, 2, both},
		{OpBadCancel, 5, both},
		{OpReuse, 3, both},
		{OpPing, 7, both},
		{OpDrop, 3, r},
		{OpResume, 3, r},
		{OpListen, 1, r},
		{OpClose, 1, both},
		{OpTask, 6, r},
		{OpTaskAdvance, 8, r},
		{OpTaskGet, 4, r},
		{OpTaskResult, 3, r},
		{OpTaskCancel, 4, r},
		{OpTaskList, 2, r},
	}
}

// Bounds the generator keeps a session within, so that a session never
// nears the server's in-flight limit (64 in the reference server): calls
// and tasks in flight, and tasks/result requests waiting.
const (
	maxLiveCalls      = 5
	maxLiveTasks      = 3
	maxPendingResults = 2
)

// genCall is the generator's model of one call.
type genCall struct {
	label     string
	steps     int
	released  int
	token     string
	ended     bool // its response is in (as far as the model knows)
	cancelled bool
	dropped   bool
}

// genTask is the generator's model of one task.
type genTask struct {
	label    string
	ticks    int
	released int
	terminal bool
	results  int
}

// genSession is the generator's model of one session slot: what a
// conforming server would have done with the operations so far.
type genSession struct {
	calls     []*genCall // live
	done      []*genCall // completed with a response
	cancelled []*genCall
	tasks     []*genTask
	nCalls    int
	nTasks    int
	zeroUsed  bool
	listening bool
}

func (g *genSession) live() []*genCall {
	var out []*genCall
	for _, c := range g.calls {
		if !c.ended && !c.cancelled {
			out = append(out, c)
		}
	}
	return out
}

func (g *genSession) liveTasks() []*genTask {
	var out []*genTask
	for _, t := range g.tasks {
		if !t.terminal {
			out = append(out, t)
		}
	}
	return out
}

func (g *genSession) pendingResults() int {
	n := 0
	for _, t := range g.tasks {
		if !t.terminal {
			n += t.results
		}
	}
	return n
}

// GenOptions says what a plan is drawn for.
type GenOptions struct {
	Features Features
	Revision string
	Mix      []Weight
	Sessions int
	// Ops is the number of steps.
	Ops int
	// NoRaces draws no racing variants: every release is awaited and no
	// cancel follows a release at once, so that the seed alone decides
	// the order of everything the explorer sends.
	NoRaces bool
}

// Generate draws a plan from the options' mix with rng. The same rng
// state and options give the same plan. The generator models what a
// conforming server does, so that each operation refers to something it
// can act on (a cancel names a call in flight, a reuse a completed call's
// token); against a server that behaves otherwise, the executor skips
// what no longer applies.
func Generate(rng *rand.Rand, o GenOptions) Plan {
	model := make([]*genSession, o.Sessions)
	for i := range model {
		model[i] = &genSession{}
	}
	plan := Plan{Sessions: o.Sessions}
	for len(plan.Steps) < o.Ops {
		s := rng.IntN(o.Sessions)
		op, ok := draw(rng, o, model[s])
		if !ok {
			continue
		}
		plan.Steps = append(plan.Steps, Step{Session: s, Op: op})
	}
	return plan
}

// draw picks one applicable operation for the session and updates its
// model. ok is false when nothing applies (never with the default mix:
// ping always does).
func draw(rng *rand.Rand, o GenOptions, g *genSession) (Op, bool) {
	var kinds []Kind
	var weights []int
	total := 0
	// 2026-07-28 Streamable HTTP cancels by closing the stream: there is
	// no notifications/cancelled to send twice or wrong (CAN-43).
	closes := o.Revision == Revision20260728 && o.Features.Transport == TransportHTTP
	for _, w := range o.Mix {
		if closes && (w.Kind == OpRecancel || w.Kind == OpBadCancel) {
			continue
		}
		if w.Weight <= 0 || !slices.Contains(w.Revisions, o.Revision) || !applicable(w.Kind, o.Features, g) {
			continue
		}
		kinds = append(kinds, w.Kind)
		weights = append(weights, w.Weight)
		total += w.Weight
	}
	if total == 0 {
		return Op{}, false
	}
	pick := rng.IntN(total)
	var k Kind
	for i, w := range weights {
		if pick < w {
			k = kinds[i]
			break
		}
		pick -= w
	}
	op := build(rng, k, g)
	if o.NoRaces {
		op.Race, op.NoWait = false, false
	}
	return op, true
}

// applicable reports whether kind can act on something in g.
func applicable(k Kind, f Features, g *genSession) bool {
	http := f.Transport == TransportHTTP
	switch k {
	case OpCall:
		return len(g.live())+len(g.liveTasks()) < maxLiveCalls
	case OpAdvance, OpCancel:
		return len(g.live()) > 0
	case OpRecancel:
		return len(g.cancelled) > 0
	case OpReuse:
		return len(g.live()) < maxLiveCalls && slices.ContainsFunc(g.done, func(c *genCall) bool { return c.token != TokenNone })
	case OpDrop:
		return http && slices.ContainsFunc(g.live(), func(c *genCall) bool { return !c.dropped })
	case OpResume:
		return http && slices.ContainsFunc(g.calls, func(c *genCall) bool { return c.dropped })
	case OpListen:
		return http && !g.listening
	case OpTask:
		return f.Tasks && f.Control && len(g.liveTasks()) < maxLiveTasks
	case OpTaskAdvance:
		return f.Tasks && f.Control && len(g.liveTasks()) > 0
	case OpTaskGet, OpTaskCancel:
		return f.Tasks && len(g.tasks) > 0
	case OpTaskResult:
		return f.Tasks && len(g.tasks) > 0 && g.pendingResults() < maxPendingResults
	case OpTaskList:
		return f.Tasks
	}
	return true // ping, badcancel, close
}

// pick returns a random element of xs.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// build draws the arguments of one operation of kind k and applies it to
// the model.
func build(rng *rand.Rand, k Kind, g *genSession) Op {
	op := Op{Kind: k}
	switch k {
	case OpCall, OpReuse:
		g.nCalls++
		c := &genCall{label: fmt.Sprintf("c%d", g.nCalls), steps: 1 + rng.IntN(3)}
		op.Call, op.Steps = c.label, c.steps
		if k == OpReuse {
			var from []*genCall
			for _, d := range g.done {
				if d.token != TokenNone {
					from = append(from, d)
				}
			}
			src := pick(rng, from)
			op.From, c.token = src.label, src.token
			op.Token = src.token
			// The token moves to the new call: only one active request
			// may hold it (PRG-2).
			g.done = slices.DeleteFunc(g.done, func(d *genCall) bool { return d == src })
		} else {
			c.token = pick(rng, []string{TokenNone, TokenString, TokenString, TokenInt})
			op.Token = c.token
			op.ID = pick(rng, []string{IDInt, IDInt, IDInt, IDString, IDNumeric})
		}
		g.calls = append(g.calls, c)
	case OpAdvance:
		c := pick(rng, g.live())
		op.Call = c.label
		op.NoWait = rng.IntN(5) == 0
		advanceCall(g, c)
	case OpCancel:
		c := pick(rng, g.live())
		op.Call = c.label
		op.Race = rng.IntN(4) == 0
		c.cancelled = true
		g.cancelled = append(g.cancelled, c)
		if len(g.cancelled) > 4 {
			g.cancelled = g.cancelled[1:]
		}
	case OpRecancel:
		op.Call = pick(rng, g.cancelled).label
	case OpBadCancel:
		targets := []string{BadCancelUnknownInt, BadCancelUnknownString, BadCancelNoID, BadCancelNullID, BadCancelFloatID}
		if len(g.done) > 0 {
			targets = append(targets, BadCancelCompleted, BadCancelCompleted)
		}
		if len(g.tasks) > 0 {
			targets = append(targets, BadCancelTaskRequest, BadCancelTaskRequest)
		}
		op.Target = pick(rng, targets)
		switch op.Target {
		case BadCancelCompleted:
			op.Call = pick(rng, g.done).label
		case BadCancelTaskRequest:
			op.Task = pick(rng, g.tasks).label
		}
	case OpPing:
		if !g.zeroUsed && rng.IntN(8) == 0 {
			op.ID, g.zeroUsed = IDZero, true
		} else {
			op.ID = pick(rng, []string{IDInt, IDInt, IDString, IDNumeric})
		}
	case OpDrop:
		var cands []*genCall
		for _, c := range g.live() {
			if !c.dropped {
				cands = append(cands, c)
			}
		}
		c := pick(rng, cands)
		op.Call, c.dropped = c.label, true
	case OpResume:
		var cands []*genCall
		for _, c := range g.calls {
			if c.dropped {
				cands = append(cands, c)
			}
		}
		c := pick(rng, cands)
		op.Call, c.dropped = c.label, false
		if c.ended && !c.cancelled {
			g.done = append(g.done, c)
		}
		g.prune()
	case OpListen:
		g.listening = true
	case OpClose:
		// The new session starts empty; labels keep counting, so a label
		// never names two things in one slot.
		*g = genSession{nCalls: g.nCalls, nTasks: g.nTasks}
	case OpTask:
		g.nTasks++
		t := &genTask{label: fmt.Sprintf("t%d", g.nTasks), ticks: 1 + rng.IntN(3)}
		op.Task, op.Ticks = t.label, t.ticks
		op.Token = pick(rng, []string{TokenNone, TokenString, TokenInt})
		op.End = pick(rng, []string{EndComplete, EndComplete, EndFail, EndError})
		g.tasks = append(g.tasks, t)
	case OpTaskAdvance:
		t := pick(rng, g.liveTasks())
		op.Task = t.label
		op.NoWait = rng.IntN(6) == 0
		t.released++
		if t.released > t.ticks {
			t.terminal = true
		}
	case OpTaskGet:
		op.Task = pick(rng, g.tasks).label
	case OpTaskResult:
		t := pick(rng, g.tasks)
		op.Task = t.label
		if !t.terminal {
			t.results++
		}
	case OpTaskCancel:
		t := pick(rng, g.tasks)
		op.Task = t.label
		t.terminal = true
	}
	if len(g.tasks) > 8 {
		g.tasks = g.tasks[len(g.tasks)-8:]
	}
	g.prune()
	return op
}

// advanceCall applies one release to c in the model: after its last
// step the call completes.
func advanceCall(g *genSession, c *genCall) {
	c.released++
	if c.released > c.steps {
		c.ended = true
		if !c.dropped {
			g.done = append(g.done, c)
		}
		g.prune()
	}
}

// prune drops ended calls from the live list and keeps the lists short.
func (g *genSession) prune() {
	g.calls = slices.DeleteFunc(g.calls, func(c *genCall) bool { return (c.ended || c.cancelled) && !c.dropped })
	if len(g.done) > 4 {
		g.done = g.done[len(g.done)-4:]
	}
}
