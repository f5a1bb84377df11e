//go:build unix

package clientrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Case is one row of the client catalogue (package clientcases).
type Case struct {
	// ID is a stable slug, "area/what-is-checked"; it is also the
	// scenario name the adapter is given.
	ID string
	// Title is a short human description.
	Title string
	// Reqs are the requirement IDs the case checks.
	Reqs []string
	// Versions are the revisions the case applies to.
	Versions []string
	// Transports it runs over; empty for both.
	Transports []string
	// BothRevisions: only for a client that supports 2026-07-28 and legacy
	// (2025-11-25) servers (Config.BothRevisions).
	BothRevisions bool
	// Sends says what the server does; Expect what the client must do.
	Sends, Expect string
	// Run plays the case (Env.Play) and judges.
	Run func(ctx context.Context, e *Env) verdict.Outcome
}

// Area is the part of the ID before the first slash.
func (c Case) Area() string {
	area, _, _ := strings.Cut(c.ID, "/")
	return area
}

// skipReason returns why the case does not run under cfg (its revision,
// its transport, or a client that serves only one revision), or "" when
// it runs.
func (c Case) skipReason(cfg Config) string {
	switch {
	case !slices.Contains(c.Versions, cfg.Revision):
		return "applies to " + strings.Join(c.Versions, ", ") + " only"
	case len(c.Transports) > 0 && !slices.Contains(c.Transports, cfg.Transport):
		return "needs the " + strings.Join(c.Transports, " or ") + " transport; the run uses " + cfg.Transport
	case c.BothRevisions && !cfg.BothRevisions:
		return "for a client that supports both 2026-07-28 and legacy servers: pass --dual-era"
	}
	return ""
}

// Config is what Run needs.
type Config struct {
	// Client launches the client under test.
	Client Launcher
	// ClientName is how the report names the client.
	ClientName string
	// Transport is TransportStdio or TransportHTTP.
	Transport string
	// Revision is the protocol revision; spec.V20251125 if empty.
	Revision string
	// BothRevisions says the client supports 2026-07-28 and legacy servers.
	BothRevisions bool
	// Cases to run; the report lists them in this order, whatever Jobs.
	Cases []Case
	// Jobs is how many cases run at once, each with its own server side
	// and client; 1 (also for zero) runs them one after another.
	Jobs int
	// CaseTimeout bounds one case; runner.DefaultCaseTimeout if zero.
	CaseTimeout time.Duration
	// Grace is the case's observation window; 500ms if zero.
	Grace time.Duration
	// Strict turns warns into fails.
	Strict bool
	// RelayCommand is the argv that runs mcpflight; the relay's
	// arguments (RelayArgs) are appended for the stdio server.
	RelayCommand []string
	// MaxFrame bounds one frame from the client.
	MaxFrame int
}

// ErrNoClient is returned by Run without a launcher.
var ErrNoClient = errors.New("clientrun: no client to launch")

// Run runs every case against the client and returns the report. When
// ctx ends, the cases not yet started are not run and the partial report
// comes with an error.
func Run(ctx context.Context, cfg Config) (*results.Report, error) {
	if cfg.Client == nil {
		return nil, ErrNoClient
	}
	if cfg.Revision == "" {
		cfg.Revision = spec.V20251125
	}
	if cfg.Revision != spec.V20251125 && cfg.Revision != spec.V20260728 {
		return nil, fmt.Errorf("%w %q", runner.ErrUnknownVersion, cfg.Revision)
	}
	if cfg.Transport == "" {
		cfg.Transport = TransportStdio
	}
	if cfg.Transport != TransportStdio && cfg.Transport != TransportHTTP {
		return nil, fmt.Errorf("clientrun: unknown transport %q", cfg.Transport)
	}
	if cfg.CaseTimeout <= 0 {
		cfg.CaseTimeout = runner.DefaultCaseTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 500 * time.Millisecond
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = transport.DefaultMaxFrame
	}
	rep := &results.Report{Target: cfg.ClientName, Transport: cfg.Transport, Version: cfg.Revision, Strict: cfg.Strict,
		Started: time.Now(), Counts: map[verdict.Verdict]int{}, Role: results.RoleClient}
	results, runErr := runCases(ctx, cfg)
	for _, res := range results {
		rep.Results = append(rep.Results, res)
		rep.Counts[res.Outcome.Verdict]++
		rep.Interrupted = rep.Interrupted || res.Interrupted
	}
	rep.Interrupted = rep.Interrupted || runErr != nil
	rep.Duration = time.Since(rep.Started)
	rep.Teardown = clientTeardown(runner.CiteTeardown(runner.GradeTeardown(rep.Results, cfg.Strict), cfg.Revision))
	rep.Schema = runner.SchemaReportOf(cfg.Revision, rep.Results)
	return rep, runErr
}

// clientTeardown words the teardown grade for clients: a client still
// running at the end of its case, stopped with SIGTERM or SIGKILL, breaks
// no rule of its own (STD-46 binds stdio servers), and the case that
// waited on it says why it was still running; info. Processes left over
// (servers the client spawned and never shut down: STD-7) keep the grade.
func clientTeardown(g results.TeardownGrade) results.TeardownGrade {
	stopped := g.Steps[results.StepSIGTERM] + g.Steps[results.StepSIGKILL]
	if g.Leftovers > 0 || len(g.Errors) > 0 || stopped == 0 {
		return g
	}
	g.Verdict, g.Requirement = verdict.Info, ""
	g.Summary = fmt.Sprintf("%d of %d clients were still running at the end of their case and were stopped (SIGTERM %d, SIGKILL %d); the cases say why",
		stopped, g.Sessions, g.Steps[results.StepSIGTERM], g.Steps[results.StepSIGKILL])
	return g
}

// runCases runs the cases, cfg.Jobs at a time, and returns the results of
// those that ran, in the order of cfg.Cases. When ctx ends, the cases not
// yet started are not run, and the error says which was the first.
func runCases(ctx context.Context, cfg Config) ([]results.Result, error) {
	jobs := max(cfg.Jobs, 1)
	rs := make([]results.Result, len(cfg.Cases))
	ran := make([]bool, len(cfg.Cases))
	slots := make(chan struct{}, jobs)
	var (
		wg     sync.WaitGroup
		runErr error
	)
	for i, c := range cfg.Cases {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if err := ctx.Err(); err != nil {
			runErr = fmt.Errorf("clientrun: run interrupted before %s: %w", c.ID, err)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			res := runner.CheckCaseSchema(cfg.Revision, runCase(ctx, cfg, c))
			if cfg.Strict && res.Outcome.Verdict == verdict.Warn {
				res.Outcome.Verdict = verdict.Fail
				res.Outcome.Summary += " (warn under --strict)"
			}
			rs[i], ran[i] = res, true
		}()
	}
	wg.Wait()
	out := make([]results.Result, 0, len(rs))
	for i, res := range rs {
		if ran[i] {
			out = append(out, res)
		}
	}
	return out, runErr
}

// runCase runs one case with its own chronology, server and client.
func runCase(ctx context.Context, cfg Config, c Case) results.Result {
	start := time.Now()
	res := results.Result{ID: c.ID, Title: c.Title, Area: c.Area(), Reqs: slices.Clone(c.Reqs), Transport: cfg.Transport}
	if why := c.skipReason(cfg); why != "" {
		res.Outcome = verdict.Skipf("%s", why)
		return res
	}
	log := chrono.New()
	res.Log = log
	cctx, cancel := context.WithTimeout(ctx, cfg.CaseTimeout)
	defer cancel()
	e := &Env{Log: log, Revision: cfg.Revision, Transport: cfg.Transport, Grace: cfg.Grace, cfg: cfg, caseID: c.ID}
	done := make(chan verdict.Outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				log.Harness(chrono.KindError, "runner", fmt.Sprintf("case panicked: %v\n%s", p, debug.Stack()))
				done <- verdict.Errorf("case panicked: %v", p)
			}
		}()
		o := c.Run(cctx, e)
		if o.Verdict == "" {
			o = verdict.Errorf("case returned no verdict")
		}
		done <- o
	}()
	var o verdict.Outcome
	select {
	case o = <-done:
	case <-cctx.Done():
		log.Harness(chrono.KindDeadline, "runner", fmt.Sprintf("case deadline of %v exceeded", cfg.CaseTimeout))
		// Play returns once its context ends: the client is stopped.
		o = <-done
		if o.Verdict == verdict.Pass || o.Verdict == verdict.Info || o.Verdict == verdict.Skip {
			o = verdict.Errorf("case deadline of %v exceeded before the case concluded (it then said: %s: %s)", cfg.CaseTimeout, o.Verdict, o.Summary)
		}
	}
	if capped := log.CapReached(); capped != "" && (o.Verdict == verdict.Pass || o.Verdict == verdict.Info) {
		o = verdict.Errorf("the evidence is incomplete, so the case cannot vouch for the client: %s", capped)
	}
	res.Outcome = o
	res.Teardown = runner.TeardownOf(e.teardown)
	if res.Teardown.ExitedAfter == "" && e.played {
		res.Teardown.ExitedAfter = results.StepNone
	}
	res.Duration = time.Since(start)
	res.Events = log.Snapshot()
	res.Interrupted = ctx.Err() != nil
	return res
}

// Env is what a running case works with.
type Env struct {
	// Log is the case's chronology.
	Log *chrono.Log
	// Revision and Transport are the run's.
	Revision, Transport string
	// Grace is the observation window for something that must not
	// happen, where no event closes it.
	Grace time.Duration

	cfg      Config
	caseID   string
	teardown transport.Teardown
	played   bool
}

// Patience bounds a wait for something that must happen: a safety net,
// never the thing tested.
func (e *Env) Patience() time.Duration { return 10*e.Grace + 2*time.Second }

// Linger is how long a case that judges what the client sends after an
// abort or a timeout tells the adapter to keep its connection open
// (Told.Linger): the case's observation window, so that a send made off
// the caller's path is seen, not lost to the close.
func (e *Env) Linger() time.Duration { return e.Grace }

// Told is what a case tells the adapter: the rest of the Instructions
// (name, revision, transport, server) is the harness's.
type Told struct {
	Connect Connect
	Steps   []Step
	// Linger is how long the adapter keeps the connection open after
	// its steps (Instructions.LingerMs); Env.Linger is the case's
	// observation window.
	Linger time.Duration
}

// Played is what happened in one case.
type Played struct {
	// Instructions are what the adapter was told.
	Instructions Instructions
	// Calls are the tools/call requests, in arrival order.
	Calls []*Call
	// Requests and Notifications are every request and notification the
	// client sent, in arrival order.
	Requests, Notifications []Inbound
	// Tasks are the tasks the server created.
	Tasks []*Task
	// Reports are the adapter's reports.
	Reports []Report
	// Exit is how the client ended; StoppedByUs when the case had to
	// stop it.
	Exit        ClientExit
	StoppedByUs bool
	// Spawns is how many times a stdio client started the server.
	Spawns int
	// LaunchErr is set when the client could not be started.
	LaunchErr error
	// stderrTail is the end of the client's stderr, for an error.
	stderrTail string
}

// Report returns the adapter's report of step (and call, 0 for a plain
// step), if it made one; the last when there are several.
func (p *Played) Report(step, call int) (Report, bool) {
	for i := len(p.Reports) - 1; i >= 0; i-- {
		if r := p.Reports[i]; r.Step == step && r.Call == call && r.Outcome != OutcomeClosed {
			return r, true
		}
	}
	return Report{}, false
}

// Unusable is the outcome of a case that cannot judge: the client could
// not start, or the adapter said it cannot do what was asked; nil
// otherwise.
func (p *Played) Unusable() *verdict.Outcome {
	if p.LaunchErr != nil {
		o := verdict.Errorf("the client could not be started: %v", p.LaunchErr)
		return &o
	}
	for _, r := range p.Reports {
		if r.Outcome == OutcomeUnsupported {
			o := verdict.Skipf("the adapter cannot do this: %s", chrono.Sanitize(r.Error, false))
			return &o
		}
	}
	if len(p.Reports) == 0 && len(p.Requests) == 0 && len(p.Notifications) == 0 && p.Exit.Exited && (p.Exit.Code != 0 || p.Exit.Signal != "") {
		// The adapter died before it did anything: nothing here is the
		// client's protocol behaviour.
		o := verdict.Errorf("the client exited (code %d%s) before it reported or sent anything%s", p.Exit.Code, signalText(p.Exit.Signal), p.stderrTail)
		return &o
	}
	return nil
}

func signalText(sig string) string {
	if sig == "" {
		return ""
	}
	return ", " + sig
}

// Play starts the server side and the client with told, serves script
// until the client exits (or ctx ends), stops what is left of the client
// and returns what happened. A case calls it once.
func (e *Env) Play(ctx context.Context, told Told, script Script) *Played {
	e.played = true
	cfg := e.cfg
	in := Instructions{Name: e.caseID, ProtocolVersion: e.Revision, Transport: e.Transport, Connect: told.Connect, Steps: told.Steps,
		LingerMs: int(told.Linger.Milliseconds())}
	pl := &Played{Instructions: in}
	h := newHub(e.Log)
	var (
		arg, socket string
		stdio       *stdioServer
		web         *httpServer
		err         error
	)
	if e.Transport == TransportHTTP {
		is2025 := e.Revision == spec.V20251125 || script.Serve2025 != nil
		if web, err = listenHTTP(h, e.Log, is2025, cfg.MaxFrame); err != nil {
			pl.LaunchErr = err
			return pl
		}
		arg = web.URL()
		in.URL = arg
	} else {
		if stdio, err = listenStdio(h, e.Log, cfg.MaxFrame); err != nil {
			pl.LaunchErr = err
			return pl
		}
		socket = stdio.Socket()
		relay := cfg.RelayCommand
		if len(relay) == 0 {
			exe, _ := os.Executable()
			relay = []string{exe}
		}
		argv := append(slices.Clone(relay), RelayArgs(socket)...)
		in.Server = &ServerCommand{Command: argv[0], Args: argv[1:]}
		arg = transport.QuoteArgs(argv)
	}
	pl.Instructions = in
	closeServer := func() {
		if web != nil {
			web.close()
		}
		if stdio != nil {
			stdio.close()
		}
	}
	env, err := in.Environ()
	if err != nil {
		closeServer()
		pl.LaunchErr = err
		return pl
	}
	e.Log.Harness(chrono.KindNote, "harness", "instructions: "+chrono.Sanitize(env[len(env)-1], false))
	proc, err := cfg.Client.Launch(ctx, LaunchSpec{Instructions: in, Env: env, Arg: arg, Socket: socket, Log: e.Log})
	if err != nil {
		closeServer()
		pl.LaunchErr = err
		return pl
	}
	p := newPeer(e.Log, e.Revision, script)
	sctx, stopScript := context.WithCancel(ctx)
serve:
	for {
		select {
		case m := <-h.inbox:
			dispatch(sctx, p, m)
		case <-proc.Done():
			// Whatever the client sent before it ended is still to serve.
			for {
				select {
				case m := <-h.inbox:
					dispatch(sctx, p, m)
				default:
					break serve
				}
			}
		case <-ctx.Done():
			pl.StoppedByUs = true
			break serve
		}
	}
	stopScript()
	h.stop()
	p.wg.Wait()
	closeServer()
	// The relays exit once their connection is closed; a client that is
	// still running is stopped.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	e.teardown = proc.Stop(tctx)
	cancel()
	if stdio != nil {
		own := os.Getpid()
		pids := slices.DeleteFunc(stdio.PIDs(), func(pid int) bool { return pid == own })
		left := transport.WaitGone(func() int {
			n := 0
			for _, pid := range pids {
				if alive(pid) {
					n++
				}
			}
			return n
		}, 2*time.Second)
		if left > 0 {
			e.Log.Harness(chrono.KindError, "harness", fmt.Sprintf("%d server processes the client spawned outlived the case: killed", left))
			for _, pid := range pids {
				if alive(pid) {
					_ = killPID(pid)
				}
			}
			e.teardown.Leftovers += left
		}
		pl.Spawns = stdio.Spawns()
	}
	pl.Calls, pl.Requests, pl.Notifications, pl.Tasks = p.record()
	pl.Reports = proc.Reports()
	pl.Exit = proc.Exit()
	pl.stderrTail = stderrTail(e.Log)
	return pl
}

// dispatch hands m to the peer, then says so to its stream.
func dispatch(ctx context.Context, p *Peer, m Inbound) {
	p.dispatch(ctx, m)
	if m.reply != nil && m.reply.dispatched != nil {
		m.reply.once.Do(func() { close(m.reply.dispatched) })
	}
}

// stderrTail is the last lines of the client's stderr, sanitised, as
// "; its stderr ended with: …", or "".
func stderrTail(log *chrono.Log) string {
	var lines []string
	for _, ev := range log.Snapshot() {
		if ev.Kind == chrono.KindStderr && ev.Channel == "client stderr" {
			lines = append(lines, chrono.Sanitize(string(ev.Raw), false))
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	if len(lines) == 0 {
		return ""
	}
	return "; its stderr ended with: " + strings.Join(lines, " | ")
}

// Select returns the cases whose IDs match any of globs (path.Match), in
// catalogue order; none selects all (runner.SelectBy).
func Select(all []Case, globs []string) ([]Case, error) {
	return runner.SelectBy(all, func(c Case) string { return c.ID }, globs)
}
