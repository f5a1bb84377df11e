// Package probe is the kit that drives and judges a session for the
// catalogue: the Case row and what it needs of the target (Needs), the
// Env a running case works with, the operations that drive the target
// (slow calls and their checkpoints, durable tasks, raw HTTP exchanges)
// and the judges that read the chronology (no response after a cancel,
// no answer to a notification, progress that strictly increases). The
// rows themselves, with their Run functions, are the catalogue in package
// cases; the runner runs them.
package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Needs says what a case requires of the target.
type Needs struct {
	// SlowTool: a long-running tool that can emit progress (profile "slow").
	SlowTool bool
	// UsesSlowTool: the case calls the profile's slow tool when the
	// profile names one (Env.HasSlowTool), and without one runs a form of
	// its own that needs no work in flight (a request that completes at
	// once, no running request at all), which its summary names. Unlike
	// SlowTool it skips on no profile.
	UsesSlowTool bool
	// EffectTool: a tool with an observable side effect (profile "effect").
	EffectTool bool
	// LogTool: a tool that emits log messages (profile "log").
	LogTool bool
	// Control: the io.mcpflight/control extension, for checkpoints and
	// cleanup counters. Without it the case is skipped.
	Control bool
	// ControlFor says what only the control extension shows the case,
	// and why neither the wire nor a profile field (the observer, a
	// tool) can: the skip without the extension says it, so that it
	// names what would let the case run.
	ControlFor string
	// Capabilities are server capabilities that must be declared.
	Capabilities []string
	// NoHandshake: the runner must not initialize the session.
	NoHandshake bool
	// Stdio: only meaningful over the stdio transport.
	Stdio bool
	// HTTP: only meaningful over the Streamable HTTP transport; the
	// session's Conn is then a *transport.HTTP.
	HTTP bool
	// ListedRevisions: under 2025-11-25 the case compares what the
	// server does with the revisions server/discover lists; a run whose
	// negotiation found server/discover unserved (a legacy server lists
	// none) skips it before anything starts.
	ListedRevisions bool
	// InitializeRefused: the case is about a server that refuses
	// initialize, one that serves only modern revisions (LIF-49): a run
	// whose negotiation saw initialize agree skips it before anything
	// starts.
	InitializeRefused bool
	// OneServer: the case opens a second session (Env.Open) and needs it
	// to reach the same server as the first: not over stdio, where each
	// session is a server process of its own.
	OneServer bool
	// Tasks: the profile names a task tool (profile "task") and the
	// server declares tasks.requests.tools.call (2025-11-25 tasks).
	Tasks bool
	// NoTasks: only meaningful on a server that does not declare the
	// tasks capability (TSK-24).
	NoTasks bool
	// TasksExtension: server/discover lists the io.modelcontextprotocol/tasks
	// extension (2026-07-28 tasks).
	TasksExtension bool
	// TasksCapability: the server declares tasks.requests.tools.call; no
	// profile tool is needed (the case picks its tool from tools/list, or
	// uses none).
	TasksCapability bool
	// Alone: the case may read server-wide state (the observer's counts,
	// docs/observer.md), so no other case may run beside it against a
	// server the cases share (one URL; over stdio each case has a server
	// of its own).
	Alone bool
	// Observes: on a target without the control extension the case reads
	// the profile's observer, when it names one; it then runs alone as
	// with Alone (a run whose profile names no observer keeps it side by
	// side with the others).
	Observes bool
	// Witness names what the case judges that the wire does not show
	// ("whether a cancelled handler stops"): the control extension shows
	// it, or, without the extension, the profile's observer, which the
	// case then reads as with Observes. A target with neither skips the
	// case before it starts anything (NoObserverSkip).
	Witness string
	// ElsewhereOnHTTP2026, when set, says which other case judges this
	// behaviour under 2026-07-28 over Streamable HTTP, where the case's
	// own way to it does not exist: such a run skips the case, with this
	// reason, before anything else is decided.
	ElsewhereOnHTTP2026 string
}

// Tools lists the profile's needs (profile.NeedSlow, …) these needs call
// for a tool of.
func (n Needs) Tools() []string {
	var out []string
	for _, t := range []struct {
		need bool
		name string
	}{{n.SlowTool, profile.NeedSlow}, {n.EffectTool, profile.NeedEffect}, {n.LogTool, profile.NeedLog}, {n.Tasks, profile.NeedTask}} {
		if t.need {
			out = append(out, t.name)
		}
	}
	return out
}

// HasSlowTool reports whether the case can call the profile's slow tool:
// the profile names one (for a case whose needs say UsesSlowTool, the
// form that holds work in flight runs then).
func (e *Env) HasSlowTool() bool { return e.Profile != nil && e.Profile.Slow != nil }

// RunsAlone reports whether a case with these needs must run with no
// other case beside it against a shared server, under a profile (nil:
// none).
func (n Needs) RunsAlone(p *profile.Profile) bool {
	return n.Alone || (n.Observes || n.Witness != "") && p.NamesObserver()
}

// Case is one row of the catalogue.
type Case struct {
	// ID is a stable slug, "area/what-is-checked".
	ID string
	// Title is a short human description.
	Title string
	// Reqs are requirement IDs from REQUIREMENTS.md.
	Reqs []string
	// ReqsUnder lists, per revision, the requirements the case cites only
	// under that revision, because the registry has a row per sentence
	// and the same behaviour is another row there (CAN-8 under
	// 2025-11-25, CAN-54 under 2026-07-28). Every ID of Reqs applies to
	// every revision of Versions; an ID of ReqsUnder[rev] applies to rev.
	ReqsUnder map[string][]string
	// Versions the case applies to.
	Versions []string
	// Needs of the target.
	Needs Needs
	// Sends says what the case puts on the wire.
	Sends string
	// Expect says what must happen.
	Expect string
	// Tidy: the case leaves a session as it found it: every request it
	// sends is answered before it ends, it starts no work that outlives
	// them (no cancel of running work, no task), it sends only IDs the
	// session allocates and those of IDs, and it changes no setting of the
	// session (a log level, a second initialize). Over stdio, where a
	// session is a server process, the runner then lets it go on with a
	// session an earlier tidy case opened, after that case (runner
	// Config.Isolate).
	Tidy bool
	// LeavesTasks: the case would be Tidy but for the tasks it creates,
	// which it may leave working or ended when it ends, and it judges
	// only what names its own requests, progress tokens and tasks: other
	// tasks may be working beside its own, and tasks/list may hold them.
	// Over stdio the runner then lets it go on with a session an earlier
	// such case opened, and sets aside the frames about the earlier
	// cases' requests and tasks (runner attribution.go).
	LeavesTasks bool
	// LeavesCancelled: the case would be Tidy but for requests it
	// cancels, which it may leave unanswered and which the server may go
	// on with after it ends, and it judges only what names its own
	// requests and progress tokens: no absence of a message that names
	// nothing (a log message over stdio), which the work an earlier case
	// cancelled may still send. Over stdio the runner then lets it go on
	// with a session an earlier such case opened, and sets aside the
	// frames about the earlier cases' requests (runner attribution.go).
	LeavesCancelled bool
	// AwaitsTaskEnd: the case waits for a task to end by itself (it polls
	// it to a terminal status, or blocks on tasks/result), so it lasts as
	// long as the target's task runs, the longest a case of the catalogue
	// does against a task tool of fixed stages. The runner starts such
	// cases first, so that no lane of shared sessions ends with one.
	AwaitsTaskEnd bool
	// IDs are the request IDs the case chooses itself (peer.WithID, or
	// in a raw frame) rather than take from the session's allocator. A
	// tidy case goes on only with a session that has sent none of them
	// yet, since an ID is never reused within a session (RPC-6); Run
	// sends no other ID of its own.
	IDs []jsonrpc.ID
	// Run drives the session and judges.
	Run func(ctx context.Context, e *Env) verdict.Outcome
}

// Sharing is whether and how a case may go on with a stdio session an
// earlier case used (runner Config.Isolate).
type Sharing int

const (
	// OwnSession: the case opens a session of its own.
	OwnSession Sharing = iota
	// ShareTidy: the case is Tidy; it goes on after other tidy cases.
	ShareTidy
	// ShareTasks: the case is LeavesTasks; it goes on after other such
	// cases, while their tasks run on.
	ShareTasks
	// ShareCancels: the case is LeavesCancelled; it goes on after other
	// such cases, while the work they cancelled may run on.
	ShareCancels
)

// Sharing says whether the case may go on with a session an earlier case
// used, and after which cases: it is Tidy, LeavesTasks or LeavesCancelled,
// and needs nothing a used session could give it otherwise than a fresh
// one would (the control extension's counters, a handshake of its own, the
// server to itself, the stdio or HTTP transport's own life, a side effect
// or a log level). A tidy case needs no task tool either: a task's durable
// state outlives the case.
func (c Case) Sharing() Sharing {
	n := c.Needs
	if n.Control || n.NoHandshake || n.Alone || n.Observes || n.Witness != "" || n.Stdio || n.HTTP || n.EffectTool || n.LogTool {
		return OwnSession
	}
	switch {
	case c.Tidy && !n.Tasks:
		return ShareTidy
	case c.LeavesTasks && n.Tasks:
		return ShareTasks
	case c.LeavesCancelled && !c.Tidy && !n.Tasks:
		return ShareCancels
	}
	return OwnSession
}

// SharesSession reports whether the case may go on with a session an
// earlier case used (Sharing).
func (c Case) SharesSession() bool { return c.Sharing() != OwnSession }

// Area is the part of the ID before the first slash.
func (c Case) Area() string {
	area, _, _ := strings.Cut(c.ID, "/")
	return area
}

// ReqsFor is every requirement the case cites under revision: Reqs and
// ReqsUnder[revision]. A Run that cites another is a harness bug
// (Env.Broke).
func (c Case) ReqsFor(revision string) []string {
	return append(slices.Clone(c.Reqs), c.ReqsUnder[revision]...)
}

// AppliesTo reports whether the case applies to a protocol version.
func (c Case) AppliesTo(version string) bool {
	for _, v := range c.Versions {
		if v == version {
			return true
		}
	}
	return false
}

// Env is what a running case works with.
type Env struct {
	// S is the session, initialized unless Needs.NoHandshake.
	S *peer.Session
	// Log is the case's chronology.
	Log *chrono.Log
	// Profile says which tools serve which needs.
	Profile *profile.Profile
	// Control is the checkpoint/counter client, nil when the target does
	// not offer the extension.
	Control *control.Client
	// Grace is how long a case watches for something that must not happen
	// when the target offers no checkpoints to synchronise on and nothing
	// has been learned of its pace (see Window); with Pacing nil, every
	// window is Grace. It also sizes Patience.
	Grace time.Duration
	// Pacing is what the run has learned of the target's pace, shared
	// by its cases; windows are sized from it (Window). Nil keeps every
	// window at Grace, never skips one and bounds every wait for the
	// target's remaining work by SlowBudget: the careful setting.
	Pacing *Pace
	// SlowFit is what the run learned of whether the profile's slow tool
	// is a long-running one, shared by its cases; nil learns nothing.
	SlowFit *SlowFit
	// Transport names the transport ("stdio", "http", "inprocess").
	Transport string
	// Revision is the protocol revision the run tests (spec.V20251125,
	// spec.V20260728): it decides which registry row a rule cites and how
	// severe its breach is.
	Revision string
	// Cites are the requirements the case declares for Revision
	// (Case.ReqsFor); a rule outside them is a harness bug. Nil checks
	// nothing, for an Env built outside the runner.
	Cites []string
	// Close ends the session's transport and grades teardown; for cases
	// that judge teardown themselves. The runner tolerates a second close.
	Close func(ctx context.Context) Teardown
	// Open opens and initializes another session to the same target,
	// recording into the same chronology; the runner closes it when the
	// case ends. Nil when the runner offers no second session.
	Open func(ctx context.Context) (*peer.Session, error)

	// watchedTo is the chronology's length when the last window ended
	// (0: no window yet), for Observe to see whether anything has been
	// sent or received since. A case watches from one goroutine.
	watchedTo uint64
	// decided, when set (DecidedBy), reports that the case's verdict is
	// fixed: a paced window ends as soon as it reports true.
	decided func() bool
	// decidedAt is the seq of the note that recorded the decision.
	decidedAt uint64
}

// DecidedBy tells the paced windows of the rest of the case (Observe,
// and so Settle and Quiesce on a target without the control extension)
// that the verdict is fixed once decided reports true, for example once
// the judge the case will call next finds a message after a cancel: more
// watching cannot change which rule is broken, so the window ends
// there. decided must be monotonic, true from the moment it first
// is. Fixed windows (Env.Pacing nil: the careful settings) still watch
// to their end.
func (e *Env) DecidedBy(decided func() bool) { e.decided = decided }

// Patience bounds a wait for something that must happen and that nothing
// holds back: a checkpoint once its gates are open, an answer in flight,
// the end of a stream after its response. It is a safety net that a
// loaded machine cannot overrun (four grace windows and three seconds),
// never the thing a case tests; what must not happen is judged after a
// barrier (Quiesce) or, on a target without checkpoints, over Grace. It
// stays well inside the default case deadline, so that an answer that
// never comes is a verdict, not a deadline error. With Pacing it grows by
// twenty typical round trips: on a machine loaded enough that a round
// trip takes half a second, the net is ten seconds wider.
func (e *Env) Patience() time.Duration {
	d := 4*e.Grace + 3*time.Second
	if e.Pacing != nil {
		d += 20 * e.Pacing.RoundTrip()
	}
	return d
}

// WithPatience bounds ctx by Patience, and ends it a second before the
// case's own deadline, so that an answer that never comes is a verdict
// rather than a deadline error. It returns the bound it used.
func (e *Env) WithPatience(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	d := e.Patience()
	if dl, ok := ctx.Deadline(); ok {
		d = max(min(d, time.Until(dl)-time.Second), 0)
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	return wctx, cancel, d
}

// Teardown is the transport's teardown grade, re-exported for cases.
type Teardown = transport.Teardown

// Broke is the outcome of evidence that breaks rule under the run's
// revision: the registry's level for the requirement cited decides fail,
// warn or info (verdict.Broken). A rule the case does not declare, or one
// that does not apply to the revision, is an error naming the harness
// bug, never a verdict about the target.
func (e *Env) Broke(rule verdict.Rule, expected []string, actual string, seq uint64) verdict.Outcome {
	if id := rule.ID(e.Revision); e.Cites != nil && !slices.Contains(e.Cites, id) {
		return verdict.HarnessBug(fmt.Errorf("%s under %s: %w (it declares %s)", id, e.Revision, verdict.ErrNotCited, strings.Join(e.Cites, ", ")))
	}
	return verdict.Broken(e.Revision, rule, expected, actual, seq)
}

// Breaks is Broke for a rule that cites one requirement under every
// revision: e.Breaks("PRG-4", ...) is e.Broke(verdict.Req("PRG-4"), ...).
func (e *Env) Breaks(id string, expected []string, actual string, seq uint64) verdict.Outcome {
	return e.Broke(verdict.Req(id), expected, actual, seq)
}
