package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// Watcher is told of a run as it goes (Config.Watch). The runner calls
// its methods one at a time, from the goroutine that called Run; the run
// waits for each call, so a method should return promptly.
type Watcher interface {
	// Began is called once, before any case starts, with the report's
	// header: its target, transport, version, profile, strictness and
	// start time, and no results.
	Began(header Report)
	// Started is called when case i (an index into Config.Cases) begins.
	Started(i int, c cases.Case)
	// Finished is called with case i's final result (its teardown over,
	// --strict applied), in the order the cases finish. A case not run
	// (after a target that cannot be reached, or at the run deadline) is
	// finished without having started.
	Finished(i int, r Result)
}

// Defaults of Config.Jobs by transport, chosen from measurements on a
// 2-core machine (see the README's Performance section): a case spends
// nearly all its time waiting for the target, so several run well beside
// each other; over stdio each also starts a process, which costs CPU.
const (
	// DefaultJobsHTTP is the default over Streamable HTTP: sessions of
	// one server process, which costs the checker little each.
	DefaultJobsHTTP = 8
	// DefaultJobsStdioPerCPU is the default over stdio per CPU: each
	// case starts a server process of its own.
	DefaultJobsStdioPerCPU = 4
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

// caseEvent is what a case's goroutine tells the scheduler.
type caseEvent struct {
	i int
	// concluded: the case's verdict is in and its teardown begins;
	// missing says whether the target could not be reached.
	concluded, missing bool
	// Otherwise the case is over, with res and init.
	res  Result
	init *peer.InitResult
}

// noWatcher is the Watcher of a Config without one.
type noWatcher struct{}

func (noWatcher) Began(Report)            {}
func (noWatcher) Started(int, cases.Case) {}
func (noWatcher) Finished(int, Result)    {}

// runCases runs cfg.Cases, cfg.Jobs at a time, and fills rep's results,
// counts and server. It returns the error Run returns with the report
// when ctx ended before every case had started.
//
// Cases start in catalogue order. Until one case has reached the target,
// they start one at a time, so that a target that cannot be started or
// reached is found by the first case that tries, as with Jobs 1, and the
// others are not run. A case holds its slot until its verdict is in; its
// teardown then goes on beside the next cases, at most Jobs teardowns at
// once.
func runCases(ctx context.Context, cfg Config, rep *Report) error {
	watch := cfg.Watch
	if watch == nil {
		watch = noWatcher{}
	}
	jobs := max(cfg.Jobs, 1)
	n := len(cfg.Cases)
	header := *rep
	header.Counts = nil
	watch.Began(header)

	// Each case sends at most two events; the buffer keeps a case from
	// ever waiting on the scheduler.
	events := make(chan caseEvent, 2*n)
	results := make([]Result, n)
	concluded := make([]bool, n)
	var (
		next    int  // the next case to start
		running int  // cases started whose verdict is not in
		tearing int  // cases whose verdict is in and teardown is not over
		contact bool // a case has reached the target
		stopped bool // start no more cases
	)
	start := func(i int) {
		c := cfg.Cases[i]
		var onConcluded func(bool)
		if jobs > 1 {
			onConcluded = func(missing bool) { events <- caseEvent{i: i, concluded: true, missing: missing} }
		}
		ccfg, release := perCase(ctx, cfg)
		go func() {
			res, init := runCase(ctx, ccfg, c, onConcluded)
			release()
			events <- caseEvent{i: i, res: res, init: init}
		}()
	}
	for {
		for !stopped && next < n && running < jobs && tearing < jobs && (contact || running+tearing == 0) {
			if ctx.Err() != nil {
				stopped = true
				break
			}
			watch.Started(next, cfg.Cases[next])
			start(next)
			next++
			running++
		}
		if running+tearing == 0 {
			break
		}
		ev := <-events
		if ev.concluded {
			concluded[ev.i] = true
			running--
			tearing++
			if ev.missing {
				stopped = true
			} else {
				contact = true
			}
			continue
		}
		if concluded[ev.i] {
			tearing--
		} else {
			running--
		}
		res := ev.res
		if cfg.Strict && res.Outcome.Verdict == cases.Warn {
			res.Outcome.Verdict = cases.Fail
			res.Outcome.Summary += " (warn under --strict)"
		}
		if ev.init != nil {
			info := ev.init.ServerInfo
			res.Server = &info
		}
		switch {
		case res.TargetMissing:
			// Every other case would fail the same way: say it once.
			stopped = true
		case res.HadSession():
			contact = true
		}
		results[ev.i] = res
		watch.Finished(ev.i, res)
	}

	rep.Results = results[:next]
	runErr := notRun(ctx, cfg, rep, next, watch)
	for _, r := range rep.Results {
		rep.Counts[r.Outcome.Verdict]++
		if rep.Server == nil && r.Server != nil {
			rep.Server = r.Server
		}
	}
	return runErr
}

// notRun reports the cases from index next on, which did not start: after
// a target that could not be reached each is a skip that points at the
// case that found it; at the run deadline each is an error; after an
// interrupt they are left out. It returns the run's error, if any.
func notRun(ctx context.Context, cfg Config, rep *Report, next int, watch Watcher) error {
	if next == len(cfg.Cases) {
		return nil
	}
	rest := cfg.Cases[next:]
	missing := ""
	for _, r := range rep.Results {
		if r.TargetMissing {
			missing = r.ID
			break
		}
	}
	var (
		runErr error
		mark   func(cases.Case) Result
	)
	cause := context.Cause(ctx)
	switch {
	case missing != "":
		mark = func(c cases.Case) Result {
			return Result{ID: c.ID, Title: c.Title, Area: c.Area(), Reqs: c.Reqs, Transport: cfg.Target.Transport,
				Outcome: cases.Skipf("not run: the target could not be started or reached (see %s)", missing)}
		}
	case errors.Is(cause, ErrRunDeadline):
		runErr = fmt.Errorf("runner: %w, before %s", cause, rest[0].ID)
		// Reported, not silently left out: each is an error.
		mark = func(c cases.Case) Result {
			return Result{ID: c.ID, Title: c.Title, Area: c.Area(), Reqs: c.Reqs, Transport: cfg.Target.Transport,
				Interrupted: true, Outcome: cases.Errorf("not run: %v", cause)}
		}
	default:
		return fmt.Errorf("runner: run interrupted before %s: %w", rest[0].ID, ctx.Err())
	}
	for i, c := range rest {
		r := mark(c)
		rep.Results = append(rep.Results, r)
		watch.Finished(next+i, r)
	}
	return runErr
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
