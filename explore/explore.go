package explore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
)

// Sentinel errors.
var (
	// ErrBadPlan reports a plan (or replay file) that cannot be run.
	ErrBadPlan = errors.New("explore: invalid plan")
	// ErrRevision reports a protocol revision the explorer has no
	// invariants and mix for.
	ErrRevision = errors.New("explore: unsupported protocol revision")
	// ErrBudget reports a configuration with neither an operation budget
	// nor a duration.
	ErrBudget = errors.New("explore: give a number of operations or a duration")
)

// Defaults of Config.
const (
	DefaultSessions      = 4
	DefaultOpsPerSession = 25
	DefaultOpTimeout     = 5 * time.Second
	DefaultShrinkRuns    = 300
	DefaultShrinkTime    = 2 * time.Minute
	// MinShrinkTime is the least shrinking time of a run given a
	// Duration.
	MinShrinkTime = 30 * time.Second
	// GCPercent is the garbage collector setting `mcpflight explore`
	// runs with (debug.SetGCPercent), and its benchmarks too: a trial's
	// history is checked and dropped, so the heap stays small and flat,
	// and collecting it less often than the default 100 costs little
	// memory and saves about a fifth of the CPU (docs/performance.md).
	GCPercent = 400
)

// Config is one exploration.
type Config struct {
	// Target is the server explored.
	Target Target
	// Revision is the protocol revision the sessions speak and whose
	// invariants are checked: Revision20251125 if empty, or
	// Revision20260728 (without tasks; over Streamable HTTP a cancel
	// closes the request's stream).
	Revision string
	// Seed makes the run reproducible: trial i's plan is drawn from
	// (Seed, i) alone.
	Seed uint64
	// Ops bounds the operations drawn in all (0: no bound), Duration the
	// time (0: no bound); one of them is required. A run also ends at
	// its first violation.
	Ops      int
	Duration time.Duration
	// Sessions is how many sessions each trial keeps open at once;
	// DefaultSessions if zero.
	Sessions int
	// OpsPerTrial is the operations of one trial; DefaultOpsPerSession
	// per session if zero. A trial's history is checked, then dropped, so
	// memory follows the trial, not the run.
	OpsPerTrial int
	// Workers is how many trials run at once (each with its own server
	// when the target is built in); 1 if zero.
	Workers int
	// OpTimeout bounds each wait of an operation; DefaultOpTimeout if zero.
	OpTimeout time.Duration
	// Mix is the operation mix; DefaultMix() if nil.
	Mix []Weight
	// NoControl ignores the control extension where it is offered.
	NoControl bool
	// NoRaces draws no racing variants (GenOptions.NoRaces).
	NoRaces bool
	// Profile names the tools of a target without the control extension.
	Profile *profile.Profile
	// Want, when set, says which violations end the run: a trial fails
	// only with a violation Want accepts, and that one is shrunk. Other
	// violations are still reported with it. Nil accepts every one.
	Want func(Violation) bool
	// NoShrink reports the failing trial as it was found.
	NoShrink bool
	// ShrinkRuns and ShrinkTime bound the shrinking; DefaultShrinkRuns
	// and DefaultShrinkTime if zero (ShrinkTime: the Duration, when one is
	// given, between MinShrinkTime and DefaultShrinkTime).
	ShrinkRuns int
	ShrinkTime time.Duration
	// Enough, when set, ends a run that has found nothing between two
	// trials, after the first, once it reports true: the caller has seen
	// what it explored for (a fault's code path met,
	// BuiltInOptions.FaultQueried), and more operations would show
	// nothing new.
	Enough func() bool
}

func (c *Config) defaults() error {
	if c.Revision == "" {
		c.Revision = Revision20251125
	}
	if !slices.Contains(Revisions(), c.Revision) {
		return fmt.Errorf("%w %q (implemented: %s)", ErrRevision, c.Revision, strings.Join(Revisions(), ", "))
	}
	if c.Ops <= 0 && c.Duration <= 0 {
		return ErrBudget
	}
	if c.Sessions <= 0 {
		c.Sessions = DefaultSessions
	}
	c.Sessions = min(c.Sessions, MaxSessions)
	if c.OpsPerTrial <= 0 {
		c.OpsPerTrial = DefaultOpsPerSession * c.Sessions
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = DefaultOpTimeout
	}
	if c.Mix == nil {
		c.Mix = DefaultMix()
	}
	if c.ShrinkRuns <= 0 {
		c.ShrinkRuns = DefaultShrinkRuns
	}
	if c.ShrinkTime <= 0 {
		c.ShrinkTime = DefaultShrinkTime
		if c.Duration > 0 {
			// A run given a time gets about as much again to shrink what
			// it found (every candidate is a real run, in real time
			// against a target without the control extension).
			c.ShrinkTime = min(DefaultShrinkTime, max(c.Duration, MinShrinkTime))
		}
	}
	return nil
}

func (c *Config) exec() execConfig {
	return execConfig{opTimeout: c.OpTimeout, noControl: c.NoControl, profile: c.Profile, revision: c.Revision}
}

// Result is what a run found.
type Result struct {
	Target   TargetInfo `json:"target"`
	Revision string     `json:"revision"`
	Seed     uint64     `json:"seed"`
	Features Features   `json:"features"`
	Sessions int        `json:"sessions"`
	// Trials run, operations performed and skipped, events recorded.
	Trials  int           `json:"trials"`
	Ops     int           `json:"ops"`
	Skipped int           `json:"skipped"`
	Events  int           `json:"events"`
	Elapsed time.Duration `json:"elapsedNs"`
	ByKind  map[Kind]int  `json:"byKind"`
	Figures Figures       `json:"figures"`
	// Capped lists trials whose chronology reached a cap: their evidence
	// is incomplete.
	Capped []string `json:"capped,omitempty"`
	// Found is the first violation, shrunk; nil when none was found.
	Found *Found `json:"found,omitempty"`
	// Enough reports that Config.Enough ended the run before its budget.
	Enough bool `json:"enough,omitempty"`
}

// OpsPerSecond is the rate of operations performed.
func (r *Result) OpsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Found is a violation and the smallest plan that still shows it.
type Found struct {
	// Trial is the index of the trial that found it.
	Trial int `json:"trial"`
	// Violation is the rule broken, as the minimal run shows it;
	// Violations every violation of the minimal run.
	Violation  Violation   `json:"violation"`
	Violations []Violation `json:"violations"`
	// Original is the failing trial's plan, Minimal the shrunk one.
	Original Plan `json:"original"`
	Minimal  Plan `json:"minimal"`
	// History is the chronology of the minimal plan's last run.
	History *History `json:"-"`
	// Shrunk is set unless Config.NoShrink; Reproduced when the minimal
	// plan, run once more after shrinking, broke the same rule again.
	Shrunk     bool `json:"shrunk"`
	Reproduced bool `json:"reproduced"`
	// ShrinkRuns is how many runs the shrinking took.
	ShrinkRuns int `json:"shrinkRuns"`
}

// Probe opens one 2025-11-25 session of the target, reads what it offers
// and closes it again.
func Probe(ctx context.Context, t Target, noControl bool) (Features, error) {
	return ProbeRevision(ctx, t, Revision20251125, noControl)
}

// ProbeRevision opens one session of the target as revision opens them
// (initialize, or under 2026-07-28 the envelope and server/discover),
// reads what it offers and closes it again. Under 2026-07-28 the
// explorer draws no task operations: the tasks extension's shapes are not
// 2025-11-25's, and the explorer does not implement them.
func ProbeRevision(ctx context.Context, t Target, revision string, noControl bool) (Features, error) {
	f := Features{Transport: t.Info().Transport}
	dial, end, err := t.Trial(ctx)
	if err != nil {
		return f, err
	}
	defer end()
	log := chrono.New()
	conn, err := dial(ctx, log)
	if err != nil {
		return f, fmt.Errorf("explore: opening a session of %s: %w", t.Info().Name, err)
	}
	s := peer.New(conn, peer.Options{Log: log})
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultOpTimeout)
		defer cancel()
		s.Close(cctx)
	}()
	ictx, cancel := context.WithTimeout(ctx, DefaultOpTimeout)
	defer cancel()
	if revision == Revision20260728 {
		if err := open2026(ictx, s, "explore-probe"); err != nil {
			return f, fmt.Errorf("explore: server/discover of %s: %w", t.Info().Name, err)
		}
		f.Control = !noControl && control.Detect(s) != nil
	} else {
		init, err := s.Initialize(ictx, peer.InitOptions{})
		if err != nil {
			return f, fmt.Errorf("explore: handshake with %s: %w", t.Info().Name, err)
		}
		f.Control = !noControl && control.Detect(s) != nil
		f.Tasks = init.Tasks().ToolsCall && f.Control
	}
	if _, ok := conn.(*transport.HTTP); ok {
		f.Transport = TransportHTTP
	}
	return f, nil
}

// Run explores the target until the budget is spent or a violation is
// found, which it then shrinks.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	f, err := ProbeRevision(ctx, cfg.Target, cfg.Revision, cfg.NoControl)
	if err != nil {
		return nil, err
	}
	res := &Result{Target: cfg.Target.Info(), Revision: cfg.Revision, Seed: cfg.Seed, Features: f, Sessions: cfg.Sessions,
		ByKind: map[Kind]int{}, Figures: NewFigures()}
	started := time.Now()
	runCtx := ctx
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	type outcome struct {
		trial int
		plan  Plan
		tr    *trace
		h     *History // kept only when the trial failed
		vs    []Violation
		figs  Figures
		ev    int
		cap   []string
		err   error
	}
	var (
		mu       sync.Mutex
		next     int
		drawn    int
		failedAt = -1
	)
	// take hands out the next trial, or false when the budget is spent or
	// a violation was found in an earlier trial.
	take := func() (int, Plan, bool) {
		mu.Lock()
		defer mu.Unlock()
		if runCtx.Err() != nil || failedAt >= 0 && next > failedAt || cfg.Ops > 0 && drawn >= cfg.Ops {
			return 0, Plan{}, false
		}
		if cfg.Enough != nil && next > 0 && failedAt < 0 && cfg.Enough() {
			res.Enough = true
			return 0, Plan{}, false
		}
		n := cfg.OpsPerTrial
		if cfg.Ops > 0 {
			n = min(n, cfg.Ops-drawn)
		}
		i := next
		next++
		drawn += n
		return i, PlanFor(cfg.Seed, i, GenOptions{Features: f, Revision: cfg.Revision, Mix: cfg.Mix, Sessions: cfg.Sessions, Ops: n, NoRaces: cfg.NoRaces}), true
	}
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Go(func() {
			for {
				i, plan, ok := take()
				if !ok {
					return
				}
				// A trial that has started runs to its end: the duration
				// ends the run between trials, not in the middle of one.
				tr, h, err := runOnce(context.WithoutCancel(runCtx), cfg, f, plan)
				o := outcome{trial: i, plan: plan, tr: tr, err: err}
				if err == nil {
					o.vs, o.figs = Check(h, cfg.Revision)
					o.ev, o.cap = len(h.Events), h.capped
					if _, failed := cfg.pick(o.vs); failed {
						o.h = h
						mu.Lock()
						if failedAt < 0 || i < failedAt {
							failedAt = i
						}
						mu.Unlock()
					}
				}
				results <- o
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	var failing *outcome
	var runErr error
	for o := range results {
		if o.err != nil {
			if runErr == nil {
				runErr = o.err
			}
			mu.Lock()
			failedAt = 0
			mu.Unlock()
			continue
		}
		res.Trials++
		res.Ops += o.tr.ops
		res.Skipped += o.tr.skipped
		res.Events += o.ev
		res.Figures.Add(o.figs)
		for k, n := range o.tr.byKind {
			res.ByKind[k] += n
		}
		for _, c := range o.cap {
			res.Capped = append(res.Capped, fmt.Sprintf("trial %d: %s", o.trial, c))
		}
		if _, failed := cfg.pick(o.vs); failed && (failing == nil || o.trial < failing.trial) {
			oc := o
			failing = &oc
		}
	}
	res.Elapsed = time.Since(started)
	if runErr != nil {
		return res, runErr
	}
	if failing == nil {
		return res, nil
	}
	first, _ := cfg.pick(failing.vs)
	found := &Found{Trial: failing.trial, Violation: first, Violations: failing.vs, Original: failing.plan,
		Minimal: failing.plan, History: failing.h}
	var shrunk *History
	if !cfg.NoShrink {
		found.Shrunk = true
		found.Minimal, found.ShrinkRuns, shrunk = Shrink(ctx, cfg, f, failing.plan, first, failing.h)
		found.History = nil
	}
	// The minimal plan once more: the history the report shows, and
	// whether it reproduces. When it did not this time, the report shows
	// the last run that did.
	if found.History == nil {
		found.Reproduced = false
		if _, h, err := runOnce(ctx, cfg, f, found.Minimal); err == nil {
			found.Reproduced = found.take(h, cfg.Revision, first)
		}
		if !found.Reproduced && shrunk != nil {
			found.take(shrunk, cfg.Revision, first)
		}
	}
	res.Found = found
	return res, nil
}

// take makes h the history the finding shows if it breaks the rule of
// want, and reports whether it does.
func (f *Found) take(h *History, revision string, want Violation) bool {
	vs, _ := Check(h, revision)
	for _, v := range vs {
		if v.Same(want) {
			f.History, f.Violations, f.Violation = h, vs, v
			return true
		}
	}
	return false
}

// pick is the violation of vs a run ends with: the primary one, or with
// Want, the first Want accepts.
func (c *Config) pick(vs []Violation) (Violation, bool) {
	if c.Want == nil {
		return Primary(vs)
	}
	for _, v := range vs {
		if c.Want(v) {
			return v, true
		}
	}
	return Violation{}, false
}

// PlanFor is trial i's plan of a run with seed.
func PlanFor(seed uint64, trial int, o GenOptions) Plan {
	return Generate(rand.New(rand.NewPCG(seed, uint64(trial))), o)
}

// runOnce runs a plan in a trial of its own and merges its history.
func runOnce(ctx context.Context, cfg Config, f Features, plan Plan) (*trace, *History, error) {
	dial, end, err := cfg.Target.Trial(ctx)
	if err != nil {
		return nil, nil, err
	}
	tr, err := runPlan(ctx, dial, f.Transport, plan, cfg.exec())
	end()
	if err != nil {
		return tr, nil, err
	}
	return tr, merge(tr), nil
}
