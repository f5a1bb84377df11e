// Package runner runs catalogue cases against a target: it selects cases,
// gives each a fresh connection, chronology and session, checks what the
// case needs of the target, bounds it with a deadline, and collects the
// verdicts and teardown grades into a Report. It formats nothing; the
// report package renders Reports.
package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Defaults of Config.
const (
	// DefaultCaseTimeout bounds one case, handshake included.
	DefaultCaseTimeout = 15 * time.Second
	// DefaultCloseTimeout bounds the teardown of one session. It is
	// longer than the stdio shutdown ladder's default waits (close stdin,
	// SIGTERM), so that a slow but well-behaved server is not cut short.
	DefaultCloseTimeout = 10 * time.Second
)

// Transport names for Target.Transport.
const (
	TransportStdio     = "stdio"
	TransportHTTP      = "http"
	TransportInProcess = "inprocess"
)

// ErrNoDial is returned by Run when the target has neither a Dial nor a
// PerCase function.
var ErrNoDial = errors.New("runner: the target has no Dial function")

// ErrUnknownVersion is returned by Run for a protocol version no case
// knows.
var ErrUnknownVersion = errors.New("runner: unknown protocol version")

// ErrNoMatch is returned by Select when a glob matches no case.
var ErrNoMatch = errors.New("runner: no case matches")

// ErrRunDeadline is matched (errors.Is) by the error of Run when
// Config.RunTimeout ended the run before every case had run.
var ErrRunDeadline = errors.New("run deadline reached")

// withRunDeadline bounds a run by d (--timeout); the cause, which the
// cases a stopped run leaves out quote, names d.
func withRunDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("%w: the whole run was given %v (--timeout)", ErrRunDeadline, d))
}

// Target is the server under test.
type Target struct {
	// Name is how the report names the target (a command line, a URL).
	Name string
	// Transport is the transport's name: TransportStdio, TransportHTTP
	// or TransportInProcess. Cases that need stdio are skipped on others.
	Transport string
	// Dial opens a fresh connection for one case, recording every frame
	// into log. ctx is the run's context and bounds the connection's
	// whole life (a stdio child is killed when it ends), not only the
	// dial. It may be nil when PerCase is set.
	Dial func(ctx context.Context, log *chrono.Log) (transport.Conn, error)
	// PerCase, when not nil, gives every case a server of its own: it is
	// called before a case's first connection and returns the Dial for
	// that case's connections (its second session, Env.Open, too) and a
	// function the runner calls once the case and its teardown are over.
	// A target whose sessions share a server (the reference server served
	// in this process) sets it, so that cases run side by side
	// (Config.Jobs) cannot see each other's state.
	PerCase func(ctx context.Context) (dial func(context.Context, *chrono.Log) (transport.Conn, error), release func(), err error)
}

// Config is what Run needs.
type Config struct {
	// Negotiation, set by RunProtocol, is how the revision was chosen;
	// the report's header (Watcher.Began) carries it.
	Negotiation *negotiate.Survey
	// Target is the server under test.
	Target Target
	// Profile says which tools serve the catalogue's needs; nil is an
	// empty profile, under which cases that need a tool are skipped.
	Profile *profile.Profile
	// Cases to run, in order (see Select).
	Cases []probe.Case
	// Version is the protocol version to test; spec.V20251125 if empty.
	Version string
	// CaseTimeout bounds each case, handshake included;
	// DefaultCaseTimeout if zero.
	CaseTimeout time.Duration
	// Grace is the observation window handed to cases (Env.Grace), and
	// also how long the runner waits for a case to return after its
	// deadline; Profile.Grace() if zero.
	Grace time.Duration
	// FixedWindows keeps every observation window at Grace, as before
	// windows were sized from the target's pace (probe.Pace): the
	// careful setting, for comparing verdicts. When false, Grace is the
	// longest a window may be.
	FixedWindows bool
	// pace is what the run learns of the target's pace, shared by its
	// cases; nil with FixedWindows.
	pace *probe.Pace
	// slowFit is what the run learns of the profile's slow tool, shared
	// by its cases.
	slowFit *probe.SlowFit
	// Isolate gives every case a session of its own. Otherwise, over
	// stdio, where a session is a server process, the tidy cases
	// (probe.Case.Tidy) go on one after another on sessions other tidy
	// cases opened (sharing.go), which spares a process start each.
	Isolate bool
	// pool holds the run's shared sessions; nil when none are shared.
	pool *sessionPool
	// declared is what the run's first session learned the server
	// declares (declared.go); nil when every case decides on its own.
	declared *declared
	// Strict turns every warn into a fail (--strict).
	Strict bool
	// CloseTimeout bounds each session's teardown; when it ends, the
	// transport escalates at once (SIGKILL for a stdio child).
	// DefaultCloseTimeout if zero.
	CloseTimeout time.Duration
	// RunTimeout bounds the whole run (--timeout); zero means none. When
	// it ends, the case running gets an error, and so does every case
	// not yet run ("not run: run deadline reached"); the run's targets
	// are killed as on an interrupt.
	RunTimeout time.Duration
	// Jobs is how many cases run at once; 1 if zero or negative, which
	// runs them one after another, each teardown before the next case.
	// With more, a case's slot is free once its verdict is in: its
	// teardown goes on beside the next cases (at most Jobs teardowns at
	// once) and is still graded. The report does not depend on Jobs: its
	// results are in the order of Cases (see DefaultJobs).
	Jobs int
	// Starts bounds how many cases may be starting at once: begun, and
	// neither through their handshake nor concluded. A server process
	// that takes CPU to start gets its share sooner, and its case's
	// deadline is not eaten by the starts of others. Zero or more than
	// Jobs means Jobs (see DefaultStarts).
	Starts int
	// Watch, when not nil, is told of the run as it goes.
	Watch Watcher
}

// Run runs every case of cfg, Config.Jobs at a time, and returns the
// report. It returns an error, with no report, when the configuration is
// unusable. When ctx ends, the cases not yet started are not run and Run
// returns the partial report together with an error wrapping ctx.Err().
func Run(ctx context.Context, cfg Config) (*results.Report, error) {
	if cfg.Target.Dial == nil && cfg.Target.PerCase == nil {
		return nil, ErrNoDial
	}
	if cfg.Version == "" {
		cfg.Version = spec.V20251125
	}
	if cfg.Version != spec.V20251125 && cfg.Version != spec.V20260728 {
		return nil, fmt.Errorf("%w %q (known: %s, %s)", ErrUnknownVersion, cfg.Version, spec.V20251125, spec.V20260728)
	}
	if cfg.CaseTimeout <= 0 {
		cfg.CaseTimeout = DefaultCaseTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = cfg.Profile.Grace()
	}
	if !cfg.FixedWindows {
		cfg.pace = probe.NewPace(cfg.Grace)
	}
	cfg.slowFit = probe.NewSlowFit()
	if cfg.CloseTimeout <= 0 {
		cfg.CloseTimeout = DefaultCloseTimeout
	}
	if cfg.Profile == nil {
		cfg.Profile = &profile.Profile{}
	}
	rep := &results.Report{
		Target:      cfg.Target.Name,
		Transport:   cfg.Target.Transport,
		Version:     cfg.Version,
		Profile:     cfg.Profile.Name,
		Strict:      cfg.Strict,
		Started:     time.Now(),
		Counts:      map[verdict.Verdict]int{},
		Negotiation: negotiationOf(cfg.Negotiation),
	}
	if cfg.RunTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = withRunDeadline(ctx, cfg.RunTimeout)
		defer cancel()
	}
	cfg.declared = newDeclared(cfg)
	if cfg.pool = newSessionPool(cfg); cfg.pool != nil {
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.CloseTimeout)
			defer cancel()
			cfg.pool.closeIdle(cctx)
		}()
	}
	runErr := runCases(ctx, cfg, rep)
	rep.Interrupted = runErr != nil || slices.ContainsFunc(rep.Results, func(r results.Result) bool { return r.Interrupted })
	rep.Duration = time.Since(rep.Started)
	rep.Teardown = CiteTeardown(GradeTeardown(rep.Results, cfg.Strict), cfg.Version)
	rep.Schema = schemaReport(cfg.Version, rep.Results)
	for _, r := range passiveResults(cfg, rep.Results) {
		rep.Results = append(rep.Results, r)
		rep.Counts[r.Outcome.Verdict]++
	}
	if reason, unfit := cfg.slowFit.Unfit(); unfit {
		rep.Notes = append(rep.Notes, reason)
	}
	return rep, runErr
}

// runGuarded runs the case's Run in a goroutine of its own, so that a
// panic is recovered and a case that ignores its context cannot hold the
// run: when the deadline fires first, the verdict is an error. The case is
// then given Grace to return after its session is closed, and abandoned
// (its goroutine left to finish) if it still does not.
func runGuarded(ctx context.Context, cfg Config, c probe.Case, env *probe.Env, closeSession func(context.Context) transport.Teardown) verdict.Outcome {
	if c.Run == nil {
		return verdict.Errorf("case has no Run function")
	}
	done := make(chan verdict.Outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				env.Log.Harness(chrono.KindError, "runner", fmt.Sprintf("case panicked: %v\n%s", p, debug.Stack()))
				done <- verdict.Errorf("case panicked: %v", p)
			}
		}()
		o := c.Run(ctx, env)
		if o.Verdict == "" {
			o = verdict.Errorf("case returned no verdict")
		}
		done <- o
	}()

	select {
	case o := <-done:
		return o
	case <-ctx.Done():
	}
	// The deadline (or the run's end) came first; the case may still
	// return in the same instant.
	reason := stopReason(ctx, cfg)
	select {
	case o := <-done:
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return o
		}
		env.Log.Harness(chrono.KindDeadline, "runner", reason)
		return verdict.Errorf("%s before the case concluded (it then said: %s: %s)", reason, o.Verdict, o.Summary)
	default:
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		env.Log.Harness(chrono.KindDeadline, "runner", reason)
	}
	// Closing the session fails every pending call, which unblocks a case
	// waiting on the target.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.CloseTimeout)
	closeSession(cctx)
	cancel()
	wait := time.NewTimer(cfg.Grace)
	defer wait.Stop()
	select {
	case o := <-done:
		return verdict.Errorf("%s before the case concluded (it then said: %s: %s)", reason, o.Verdict, o.Summary)
	case <-wait.C:
		env.Log.Harness(chrono.KindError, "runner", fmt.Sprintf("case did not return within %v of its end; abandoned", cfg.Grace))
		return verdict.Errorf("%s; the case did not return and was abandoned", reason)
	}
}

// stopReason says why ctx, a case's context, ended: the run deadline, the
// case deadline, or an interrupt.
func stopReason(ctx context.Context, cfg Config) string {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrRunDeadline):
		return cause.Error()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("case deadline of %v exceeded", cfg.CaseTimeout)
	}
	return "run interrupted"
}

// handshakeOutcome judges a failed initialize. A version the checker does
// not support is the server's fault (LIF-9/LIF-10); anything else is an
// error that says nothing about conformance.
func handshakeOutcome(err error, init *peer.InitResult, requested string) verdict.Outcome {
	if errors.Is(err, peer.ErrVersionMismatch) {
		got := ""
		if init != nil {
			got = init.ProtocolVersion
		}
		return verdict.Broken(requested, verdict.Req("LIF-9"),
			[]string{
				fmt.Sprintf("protocolVersion %q, the version requested, when the server supports it (LIF-9)", requested),
				fmt.Sprintf("another protocol version the server supports (LIF-10), one of %s", strings.Join(peer.SupportedVersions, ", ")),
			},
			fmt.Sprintf("the initialize result has protocolVersion %q", got), 0)
	}
	return verdict.Errorf("handshake failed: %v", err)
}

// missingTool checks the tools a case needs against the server's
// tools/list, so that a profile naming a tool the server lacks is reported
// as such instead of as a failed call. It returns the skip reason, or ""
// (also when tools/list itself fails: the case then finds out).
func missingTool(ctx context.Context, s *peer.Session, p *profile.Profile, n probe.Needs) string {
	needed := map[string]*profile.Tool{}
	if n.SlowTool || n.UsesSlowTool {
		needed["slow"] = p.Slow
	}
	if n.EffectTool {
		needed["effect"] = p.Effect
	}
	if n.LogTool {
		needed["log"] = p.Log
	}
	if n.Tasks {
		needed["task"] = p.Task
	}
	if len(needed) == 0 {
		return ""
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		return ""
	}
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Name] = true
	}
	for _, need := range []string{"slow", "effect", "log", "task"} {
		if t := needed[need]; t != nil && !offered[t.Name] {
			return fmt.Sprintf("the profile's %s tool %q is not in the server's tools/list; fix the profile (mcpflight tools lists what the server offers)",
				need, chrono.Sanitize(t.Name, false))
		}
	}
	return ""
}

// incomplete turns o into an error saying why, when o rests on what an
// incomplete observation could not show (pass, info, error); a fail or
// warn the case found stands, and so do a skip and a blocked case. The decision is
// recorded in log.
func incomplete(log *chrono.Log, o verdict.Outcome, decision, why string) verdict.Outcome {
	if o.Verdict == verdict.Fail || o.Verdict == verdict.Warn || o.Verdict == verdict.Skip || o.Verdict == verdict.Blocked {
		return o
	}
	log.Harness(chrono.KindDecision, "runner", "verdict is error: "+decision)
	return verdict.Errorf("%s (case said: %s %s)", why, o.Verdict, o.Summary)
}

// limitHit returns err when it reports one of the transport's bounds:
// an oversized body, event or frame, or a stalled stream.
func limitHit(err error) error {
	for _, lim := range []error{transport.ErrBodyTooLarge, transport.ErrEventTooLarge, transport.ErrStalled, transport.ErrFrameTooLarge} {
		if errors.Is(err, lim) {
			return err
		}
	}
	return nil
}

// unreachable reports whether err says the target cannot be started or
// reached at all, so that every other case would fail the same way.
func unreachable(err error) bool {
	return errors.Is(err, transport.ErrExecutableNotFound) || errors.Is(err, syscall.ECONNREFUSED)
}

// targetLastWords summarises how a target that failed the handshake went:
// its exit, and the gist of its stderr, sanitised.
func targetLastWords(log *chrono.Log) string {
	var exit string
	for _, ev := range log.Snapshot() {
		if ev.Kind == chrono.KindExit {
			exit = ev.Text
		}
	}
	var b strings.Builder
	if exit != "" {
		b.WriteString("; " + chrono.Sanitize(exit, false))
	}
	if gist := stderrGist(log.Snapshot()); len(gist) > 0 {
		b.WriteString("; its stderr ended with: " + strings.Join(gist, " | "))
	}
	return b.String()
}

// errorWords mark a stderr line that names what went wrong.
var errorWords = regexp.MustCompile(`(?i)(error|exception|fatal|panic|cannot|can't|not found|no such|denied|refused|failed|invalid|usage)`)

// stderrGist is what a target's stderr, in events, says of why it
// failed, sanitised: the first and the last line that name an error (a
// stack trace's message, then the last complaint), and when none does,
// its last three lines. A stack trace's frames and a runtime's version
// banner, which end most crash reports, say nothing of the cause.
func stderrGist(events []chrono.Event) []string {
	var lines, errs []string
	for _, ev := range events {
		if ev.Kind != chrono.KindStderr {
			continue
		}
		s := strings.TrimSpace(chrono.Sanitize(string(ev.Raw), false))
		if s == "" {
			continue
		}
		s = chrono.Clip(s, 200)
		lines = append(lines, s)
		if errorWords.MatchString(s) {
			errs = append(errs, s)
		}
	}
	switch {
	case len(errs) == 1:
		return errs
	case len(errs) > 1:
		return []string{errs[0], errs[len(errs)-1]}
	}
	return lines[max(0, len(lines)-3):]
}

// staticSkip returns the skip of a case on what the profile and target
// say, and whether there is one: not applicable when the profile states
// the server lacks a tool the case needs, else a skip that names what
// would let the case run.
func staticSkip(cfg Config, n probe.Needs) (verdict.Outcome, bool) {
	for _, need := range n.Tools() {
		if cfg.Profile.LacksTool(need) {
			return verdict.NotApplicable("the profile states the server has no %s (lacks: %s)", profile.NeedWords(need), need), true
		}
	}
	if reason := staticSkipReason(cfg, n); reason != "" {
		return verdict.Skipf("%s", reason), true
	}
	return verdict.Outcome{}, false
}

// staticSkipReason is why a case whose needs apply must be skipped on
// what the profile and target say, or "".
func staticSkipReason(cfg Config, n probe.Needs) string {
	switch {
	case n.SlowTool && cfg.Profile.Slow == nil:
		return "profile names no slow tool; pass --profile"
	case n.EffectTool && cfg.Profile.Effect == nil:
		return "profile names no effect tool; pass --profile"
	case n.LogTool && cfg.Profile.Log == nil:
		return "profile names no log tool; pass --profile"
	case n.Tasks && cfg.Profile.Task == nil:
		return "profile names no task tool; pass --profile"
	case n.Stdio && cfg.Target.Transport != TransportStdio:
		return fmt.Sprintf("needs the stdio transport; the target uses %s", orNone(cfg.Target.Transport))
	case n.ListedRevisions && cfg.Version == spec.V20251125 && discoverFailure(cfg.Negotiation) != "":
		// The run's negotiation asked already: a server that left
		// server/discover unanswered would leave it so again.
		return fmt.Sprintf("the server serves no server/discover (the run's negotiation probe failed: %s): a legacy server lists no revisions to compare with", discoverFailure(cfg.Negotiation))
	case n.InitializeRefused && cfg.Negotiation != nil && cfg.Negotiation.Probe2025.OK():
		// The run's negotiation asked already, for 2025-11-25 as the
		// case would.
		return fmt.Sprintf("initialize agreed to %q (the run's negotiation probe): a dual-era server; LIF-49 is for servers that support only modern versions",
			chrono.Sanitize(cfg.Negotiation.Probe2025.Init.ProtocolVersion, false))
	case n.OneServer && cfg.Target.Transport == TransportStdio:
		return "over stdio a second session is a second server process, which shares nothing with the first"
	case n.HTTP && cfg.Target.Transport != TransportHTTP:
		return fmt.Sprintf("needs the Streamable HTTP transport; the target uses %s", orNone(cfg.Target.Transport))
	case n.ElsewhereOnHTTP2026 != "" && cfg.Version == spec.V20260728 && cfg.Target.Transport == TransportHTTP:
		return n.ElsewhereOnHTTP2026
	}
	return ""
}

// ControlSkip is the skip of a case that needs the control extension on a
// target that does not offer it: what the extension would show, that the
// wire and the profile cannot, and what would let the case run.
func ControlSkip(n probe.Needs) string {
	why := n.ControlFor
	if why == "" {
		why = "its checkpoints and counters, which no message on the wire shows"
	}
	return fmt.Sprintf("needs the %s extension, which the target does not offer: the case relies on %s; a test build of the server that serves the extension (docs/control-extension.md) would let it run", control.Capability, why)
}

// sessionSkip returns why the case must be skipped on what the server
// declared and the profile names, or "".
func sessionSkip(n probe.Needs, p *profile.Profile, init *peer.InitResult, controlled bool) string {
	if n.Control && !controlled {
		return ControlSkip(n)
	}
	if n.Witness != "" && !controlled && !p.NamesObserver() {
		return probe.NoObserverSkip(n.Witness)
	}
	if (n.Tasks || n.TasksCapability) && (init == nil || !init.Tasks().ToolsCall) {
		return "capability tasks.requests.tools.call not advertised"
	}
	if n.TasksExtension && !init.HasExtension(mcp.ExtensionTasks) {
		return fmt.Sprintf("server/discover does not list the %s extension", mcp.ExtensionTasks)
	}
	if n.NoTasks && init != nil && init.Tasks().Declared {
		return "the server declares the tasks capability; this case is for servers without it"
	}
	for _, capability := range n.Capabilities {
		if init == nil || !init.HasCapability(capability) {
			return fmt.Sprintf("capability %q not advertised", capability)
		}
	}
	return ""
}

func versionList(vs []string) string {
	if len(vs) == 0 {
		return "no protocol version"
	}
	return strings.Join(vs, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "an unnamed transport"
	}
	return s
}

// Select returns the cases whose IDs match any of globs (path.Match
// syntax: "cancel/*" matches every cancellation case), in catalogue order.
// No globs selects every case. A glob that matches nothing, or is
// malformed, is an error.
func Select(all []probe.Case, globs []string) ([]probe.Case, error) {
	return SelectBy(all, func(c probe.Case) string { return c.ID }, globs)
}

// SelectBy is Select for any catalogue whose rows id names (the client
// catalogue's too).
func SelectBy[C any](all []C, id func(C) string, globs []string) ([]C, error) {
	if len(globs) == 0 {
		return slices.Clone(all), nil
	}
	picked := make([]bool, len(all))
	for _, g := range globs {
		matched := false
		for i, c := range all {
			ok, err := path.Match(g, id(c))
			if err != nil {
				return nil, fmt.Errorf("runner: case glob %q: %w", g, err)
			}
			if ok {
				picked[i], matched = true, true
			}
		}
		if !matched {
			return nil, fmt.Errorf("%w %q", ErrNoMatch, g)
		}
	}
	var out []C
	for i, c := range all {
		if picked[i] {
			out = append(out, c)
		}
	}
	return out, nil
}

// discoverFailure is the negotiation's server/discover probe failure in
// a few words, empty when the probe was answered or not made.
func discoverFailure(sv *negotiate.Survey) string {
	if sv == nil || sv.Probe2026 == nil || sv.Probe2026.OK() {
		return ""
	}
	return sv.Probe2026.Failure
}

// skipped is the second result of staticSkip.
func skipped(_ verdict.Outcome, skip bool) bool { return skip }
