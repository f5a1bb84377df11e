package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Watcher is told of a run as it goes (Config.Watch). The runner calls
// its methods one at a time, from the goroutine that called Run; the run
// waits for each call, so a method should return promptly.
type Watcher interface {
	// Began is called once, before any case starts, with the report's
	// header: its target, transport, version, profile, strictness and
	// start time, and no results.
	Began(header results.Report)
	// Started is called when case i (an index into Config.Cases) begins.
	Started(i int, c probe.Case)
	// Finished is called with case i's final result (its teardown over,
	// --strict applied), in the order the cases finish. A case not run
	// (after a target that cannot be reached, or at the run deadline) is
	// finished without having started.
	Finished(i int, r results.Result)
}

// Defaults of Config.Jobs and Config.Starts by transport: a case spends
// nearly all its time waiting for the target, so many run well side by
// side; over stdio each also starts a server process, which costs CPU.
// The measurements they were chosen from are in docs/performance.md.
const (
	// DefaultJobsHTTP is the default over Streamable HTTP: sessions of
	// one server, which cost the checker little each. It is high enough
	// that the catalogue ends about when its longest case does, and more
	// jobs would gain nothing; the verdicts do not depend on it.
	DefaultJobsHTTP = 48
	// DefaultJobsStdioPerCPU is the default over stdio per CPU: each
	// case starts a server process of its own, DefaultStarts at a time.
	DefaultJobsStdioPerCPU = 8
	// DefaultJobsInProcess is the default for a target served in this
	// process, whose sessions compete with the checker for the CPU.
	DefaultJobsInProcess = 4
)

// DefaultJobs is a sensible Config.Jobs for a target of the given
// transport on this machine.
func DefaultJobs(transportName string) int {
	switch transportName {
	case TransportHTTP:
		return DefaultJobsHTTP
	case TransportStdio:
		return DefaultJobsStdioPerCPU * runtime.NumCPU()
	case TransportInProcess:
		return DefaultJobsInProcess
	}
	return 1
}

// DefaultStarts is a sensible Config.Starts for a target of the given
// transport: over stdio one start per CPU (a server's start-up, a
// Node.js one's above all, is CPU-bound, and many at once make each one
// slow enough to eat into its case's deadline); elsewhere no bound but
// Jobs.
func DefaultStarts(transportName string) int {
	if transportName == TransportStdio {
		return runtime.NumCPU()
	}
	return 0
}

// caseHooks is how a case's goroutine tells the scheduler of its
// progress; a nil function is not called.
type caseHooks struct {
	// handshaken is called once the case's handshake has succeeded.
	handshaken func()
	// concluded is called once the case's verdict is in and its
	// teardown begins, with whether the target could not be reached.
	concluded func(targetMissing bool)
}

func (h caseHooks) shookHands() {
	if h.handshaken != nil {
		h.handshaken()
	}
}

func (h caseHooks) conclude(targetMissing bool) {
	if h.concluded != nil {
		h.concluded(targetMissing)
	}
}

// phase is where a started case is.
type phase int

const (
	starting phase = iota // started; neither handshaken nor concluded
	running               // handshaken, verdict not in
	tearing               // verdict in, teardown not over
	over                  // result final
)

// eventKind says what a caseEvent reports.
type eventKind int

const (
	evHandshaken eventKind = iota
	evConcluded
	evFinished
)

// caseEvent is what a case's goroutine tells the scheduler.
type caseEvent struct {
	kind    eventKind
	i       int
	missing bool // evConcluded: the target could not be reached
	res     results.Result
}

// slots is what decides whether the next case may start: how many cases
// are in each phase, the bounds, and whether a case has reached the
// target yet.
type slots struct {
	jobs, starts int
	count        map[phase]int
	contact      bool
	// alone, when not nil, reports whether case i must run with no other
	// case beside it (Needs.Alone on a target the cases share); lone
	// counts such cases started and not over.
	alone func(i int) bool
	lone  int
	// waits, when not nil, reports whether case i must wait for a lane
	// of the shared sessions (sharing.go) before it starts: the start
	// loop then starts the first case after it that need not.
	waits func(i int) bool
}

// mayStart reports whether case i, the pos-th to start, may start now:
// it needs a slot (at most jobs cases starting or running, at most jobs
// tearing down), at most starts cases starting, and, until a case has
// reached the target, every case started before it over.
func (s slots) mayStart(i, pos int) bool {
	if s.alone != nil && (s.lone > 0 || s.alone(i) && s.count[starting]+s.count[running]+s.count[tearing] > 0) {
		return false // a case that must run alone, and another beside it
	}
	return s.count[starting]+s.count[running] < s.jobs && s.count[tearing] < s.jobs &&
		s.count[starting] < s.starts && (s.contact || pos == s.count[over])
}

// startOrder is the order the cases start in: those that wait on a
// target's long work first (a durable task, then a slow tool), each
// group in catalogue order. Side by side, the run then ends about when
// its longest case does, instead of a long case found at the end of the
// catalogue starting after the others. The report keeps catalogue order.
//
// When the run shares sessions (sharing), the tidy cases come before
// all: they go on one after another in a few lanes (sharing.go), so
// each lane is the longest work of the run, longer than its longest
// single case. Started last, as cases that wait on nothing, the lanes
// would end the run well after the other cases; started first, they run
// while the others start. A tidy case that waits for a lane lets the
// next case start in its place, so only the lanes' first cases are
// started ahead of the tasks. The cases that leave tasks come first of
// all: their lanes are the longest. Within each group,
// the cases that wait for a task's own end (probe.Case.AwaitsTaskEnd)
// start first, so that a lane does not end with one.
func startOrder(cases []probe.Case, sharing bool) []int {
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	weight := func(c probe.Case) int {
		n := c.Needs
		w := 0
		switch {
		case sharing && c.Sharing() == probe.ShareTasks:
			w = 8
		case sharing && c.Sharing() == probe.ShareCancels:
			w = 7
		case sharing && c.SharesSession():
			w = 6
		case n.Tasks || n.TasksCapability:
			w = 4
		case n.SlowTool || n.UsesSlowTool:
			w = 2
		}
		if c.AwaitsTaskEnd {
			w++
		}
		return w
	}
	slices.SortStableFunc(order, func(a, b int) int { return weight(cases[b]) - weight(cases[a]) })
	return order
}

// noWatcher is the Watcher of a Config without one.
type noWatcher struct{}

func (noWatcher) Began(results.Report)         {}
func (noWatcher) Started(int, probe.Case)      {}
func (noWatcher) Finished(int, results.Result) {}

// runCases runs cfg.Cases, cfg.Jobs at a time, and fills rep's results,
// counts and server. It returns the error Run returns with the report
// when ctx ended before every case had started.
//
// Cases start in startOrder (the long ones first). Until one case has reached the target
// (a handshake, or a verdict of a case that needs none), they start one at
// a time, so that a target that cannot be started or reached is found by
// the first case that tries, as with Jobs 1, and the others are not run.
// A case holds its slot until its verdict is in; its teardown then goes
// on beside the next cases, at most Jobs teardowns at once. At most
// cfg.Starts cases are starting (before their handshake) at once.
func runCases(ctx context.Context, cfg Config, rep *results.Report) error {
	watch := cfg.Watch
	if watch == nil {
		watch = noWatcher{}
	}
	jobs := max(cfg.Jobs, 1)
	starts := cfg.Starts
	if starts <= 0 || starts > jobs {
		starts = jobs
	}
	n := len(cfg.Cases)
	header := *rep
	header.Counts = nil
	watch.Began(header)

	// Each case sends at most three events; the buffer keeps a case from
	// ever waiting on the scheduler.
	events := make(chan caseEvent, 3*n)
	rs := make([]results.Result, n)
	phases := make([]phase, n)
	sl := slots{jobs: jobs, starts: starts, count: map[phase]int{}}
	if cfg.Target.PerCase == nil && cfg.Target.Transport != TransportStdio {
		// The cases share the target's server.
		sl.alone = func(i int) bool { return cfg.Cases[i].Needs.RunsAlone(cfg.Profile) }
	}
	if pool := cfg.pool; pool != nil {
		sl.waits = func(i int) bool { c := cfg.Cases[i]; return c.SharesSession() && pool.full(c.Sharing()) }
	}
	order := startOrder(cfg.Cases, cfg.pool != nil)
	var (
		next    int  // the position in order of the next case to start
		stopped bool // start no more cases
	)
	move := func(i int, to phase) {
		sl.count[phases[i]]--
		phases[i] = to
		sl.count[to]++
	}
	start := func(i int) {
		c := cfg.Cases[i]
		var hooks caseHooks
		if jobs > 1 {
			hooks = caseHooks{
				handshaken: func() { events <- caseEvent{kind: evHandshaken, i: i} },
				concluded:  func(missing bool) { events <- caseEvent{kind: evConcluded, i: i, missing: missing} },
			}
		}
		ccfg, release := perCase(ctx, cfg)
		if cfg.pool != nil && c.SharesSession() {
			kind := c.Sharing()
			cfg.pool.reserve(kind)
			own := release
			release = func() {
				own()
				cfg.pool.release(kind)
			}
		}
		go func() {
			res, init := runCase(ctx, ccfg, c, hooks)
			release()
			// The schema check reads the whole chronology: done here, it
			// runs beside the other cases.
			res = checkSchema(cfg.Version, res)
			if init != nil {
				res.Server = implementationOf(&init.ServerInfo)
			}
			events <- caseEvent{kind: evFinished, i: i, res: res}
		}()
	}
	for {
		for !stopped && next < n {
			if sl.waits != nil && sl.waits(order[next]) {
				// A tidy case waits for a lane: the first case after it
				// that need not starts in its place.
				j := next + 1
				for j < n && sl.waits(order[j]) {
					j++
				}
				if j == n {
					break
				}
				c := order[j]
				copy(order[next+1:j+1], order[next:j])
				order[next] = c
			}
			if !sl.mayStart(order[next], next) {
				break
			}
			if ctx.Err() != nil {
				stopped = true
				break
			}
			i := order[next]
			watch.Started(i, cfg.Cases[i])
			phases[i] = starting
			sl.count[starting]++
			if sl.alone != nil && sl.alone(i) {
				sl.lone++
			}
			start(i)
			next++
		}
		if next == sl.count[over] {
			break
		}
		ev := <-events
		switch ev.kind {
		case evHandshaken:
			move(ev.i, running)
			sl.contact = true
			continue
		case evConcluded:
			move(ev.i, tearing)
			if ev.missing {
				stopped = true
			}
			continue
		}
		move(ev.i, over)
		if sl.alone != nil && sl.alone(ev.i) {
			sl.lone--
		}
		res := ev.res
		if cfg.Strict && res.Outcome.Verdict == verdict.Warn {
			res.Outcome.Verdict = verdict.Fail
			res.Outcome.Summary += " (warn under --strict)"
		}
		switch v := res.Outcome.Verdict; {
		case res.TargetMissing:
			// Every other case would fail the same way: say it once.
			stopped = true
		case res.HadSession() && v != verdict.Error && v != verdict.Skip:
			// A case that needs no handshake reached the target.
			sl.contact = true
		}
		rs[ev.i] = res
		watch.Finished(ev.i, res)
	}

	runErr := collect(ctx, cfg, rep, rs, order[next:], watch)
	for _, r := range rep.Results {
		rep.Counts[r.Outcome.Verdict]++
		if rep.Server == nil && r.Server != nil {
			rep.Server = r.Server
		}
	}
	return runErr
}

// collect fills rep.Results in catalogue order: the results of the
// cases that ran, and for the cases of notStarted (indexes of
// cfg.Cases), which did not start, what notRun says of them. It returns
// the run's error, if any.
func collect(ctx context.Context, cfg Config, rep *results.Report, rs []results.Result, notStarted []int, watch Watcher) error {
	skipped := make([]bool, len(cfg.Cases))
	for _, i := range notStarted {
		skipped[i] = true
	}
	var (
		mark   func(probe.Case) results.Result
		runErr error
	)
	if len(notStarted) > 0 {
		var ran []results.Result
		for i, r := range rs {
			if !skipped[i] {
				ran = append(ran, r)
			}
		}
		mark, runErr = notRun(ctx, cfg, ran, cfg.Cases[slices.Min(notStarted)])
	}
	rep.Results = rep.Results[:0]
	for i, c := range cfg.Cases {
		switch {
		case !skipped[i]:
			rep.Results = append(rep.Results, rs[i])
		case mark != nil:
			r := mark(c)
			rep.Results = append(rep.Results, r)
			watch.Finished(i, r)
		}
	}
	return runErr
}

// notRun says what becomes of the cases that did not start (first is
// the first of them in catalogue order), given the results of those that
// ran: after a target that could not
// be reached each is a skip that points at the case that found it; at
// the run deadline each is an error; after an interrupt they are left
// out (mark nil). It returns the run's error, if any.
func notRun(ctx context.Context, cfg Config, ran []results.Result, first probe.Case) (mark func(probe.Case) results.Result, runErr error) {
	missing := ""
	for _, r := range ran {
		if r.TargetMissing {
			missing = r.ID
			break
		}
	}
	cause := context.Cause(ctx)
	switch {
	case missing != "":
		return func(c probe.Case) results.Result {
			return results.Result{ID: c.ID, Title: c.Title, Area: c.Area(), Reqs: c.Reqs, Transport: cfg.Target.Transport,
				Outcome: verdict.Skipf("not run: the target could not be started or reached (see %s)", missing)}
		}, nil
	case errors.Is(cause, ErrRunDeadline):
		// Reported, not silently left out: each is an error.
		return func(c probe.Case) results.Result {
			return results.Result{ID: c.ID, Title: c.Title, Area: c.Area(), Reqs: c.Reqs, Transport: cfg.Target.Transport,
				Interrupted: true, Outcome: verdict.Errorf("not run: %v", cause)}
		}, fmt.Errorf("runner: %w, before %s", cause, first.ID)
	}
	return nil, fmt.Errorf("runner: run interrupted before %s: %w", first.ID, ctx.Err())
}

// perCase returns the configuration one case runs with and the function
// to call when it is over: when the target gives each case a server of
// its own (Target.PerCase), the case's Dial asks for that server at its
// first connection.
func perCase(ctx context.Context, cfg Config) (Config, func()) {
	if cfg.Target.PerCase == nil {
		return cfg, func() {}
	}
	var (
		mu      sync.Mutex
		dial    func(context.Context, *chrono.Log) (transport.Conn, error)
		release func()
		err     error
	)
	newServer := cfg.Target.PerCase
	cfg.Target.Dial = func(dctx context.Context, log *chrono.Log) (transport.Conn, error) {
		mu.Lock()
		if dial == nil && err == nil {
			dial, release, err = newServer(ctx)
			if err == nil && dial == nil {
				err = ErrNoDial
			}
		}
		d, derr := dial, err
		mu.Unlock()
		if derr != nil {
			return nil, fmt.Errorf("runner: a server for the case: %w", derr)
		}
		return d(dctx, log)
	}
	return cfg, func() {
		mu.Lock()
		defer mu.Unlock()
		if release != nil {
			release()
		}
		// A case abandoned after its deadline that dials again finds no
		// server.
		err = errors.New("the case is over")
	}
}
