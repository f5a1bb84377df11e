package cases_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/verdict"
)

// Fault coverage: which faults a case's path meets, which spares the
// mutation matrix most of its CPU. The reference server asks about its faults at the points
// where a fault would change what it does (refserver.Options.
// FaultQueried). Against a conforming server a case whose run never asks
// about fault F goes the same way as it would under F: every question on
// its path gets the same answer, so it sees the same server. A row of the
// mutation matrix therefore runs only the cases that meet its fault in a
// conforming run, besides its killers and the cases that blame one of
// them, instead of the whole catalogue; the rows share the conforming
// runs that measure coverage (one per transport, revision and served
// protocols) with the tests of the conforming catalogue.
//
// What is given up: a case whose path reaches a fault's question only on
// some runs (a race in the case itself) and missed it in the coverage
// run is not judged under that fault. Its killers still run in every
// row, and TestMutationMatrix fails a row whose killer never meets its
// fault in the conforming run.

// faultCoverage is, by case ID, the faults the case's run asked about.
type faultCoverage map[string]map[refserver.Fault]bool

// conformingKey names a conforming catalogue run: the transport, the
// revision and the protocols the server serves.
type conformingKey struct {
	overHTTP  bool
	revision  string
	protocols string
}

// conformingRun is one catalogue run against the conforming reference
// server, made once and shared: by the rows of the mutation matrix, as
// their fault coverage, and by the tests of the conforming catalogue
// (TestCatalogueAgainstReferenceServer and its kin), as their report.
type conformingRun struct {
	claimed bool // a test judges its report (conformingMu)
	once    sync.Once
	cov     faultCoverage
	rep     *results.Report
	err     error
}

var (
	conformingMu   sync.Mutex
	conformingRuns = map[conformingKey]*conformingRun{}
)

// conforming returns the catalogue run under revision against the
// conforming reference server serving protocols (nil: both eras), in
// process or over Streamable HTTP, with its fault coverage; the first
// caller for a key runs it, the others wait for it. A caller that judges
// the report claims it (claim): a run already claimed, as by an earlier
// -count iteration, is made again, so that every iteration judges a run
// of its own; the rows' coverage takes the latest.
func conforming(overHTTP bool, revision string, protocols []string, claim bool) (faultCoverage, *results.Report, error) {
	key := conformingKey{overHTTP, revision, strings.Join(protocols, ",")}
	conformingMu.Lock()
	cr := conformingRuns[key]
	if cr == nil || claim && cr.claimed {
		cr = &conformingRun{}
		conformingRuns[key] = cr
	}
	cr.claimed = cr.claimed || claim
	conformingMu.Unlock()
	cr.once.Do(func() { cr.cov, cr.rep, cr.err = measureCoverage(overHTTP, revision, protocols) })
	return cr.cov, cr.rep, cr.err
}

// coverageOf returns the fault coverage of the conforming reference
// server the row's fault is taken out of.
func coverageOf(r row) (faultCoverage, error) {
	cov, _, err := conforming(r.overHTTP, r.rev(), r.opts.Protocols, false)
	return cov, err
}

// measureCoverage runs the whole catalogue under revision against the
// conforming server serving protocols, in process or over HTTP,
// recording the faults each case's server asks about. It also returns
// the run's report.
func measureCoverage(overHTTP bool, revision string, protocols []string) (faultCoverage, *results.Report, error) {
	cfg, err := referenceConfig(revision)
	if err != nil {
		return nil, nil, err
	}
	cfg.Cases = cases.All()
	// A conforming server's serve returns as soon as its input ends, so
	// the close wait ends then: its bound is a safety net here, not the
	// rows' 300 ms, which a loaded machine can outlast (the teardown then
	// climbs to SIGTERM and stdio/teardown-on-stdin-close blames STD-46).
	cfg.CloseTimeout = conformingCloseTimeout
	var mu sync.Mutex
	cov := faultCoverage{}
	mkFor := func(c probe.Case) target {
		met := map[refserver.Fault]bool{}
		mu.Lock()
		cov[c.ID] = met
		mu.Unlock()
		opts := refserver.Options{Protocols: protocols, FaultQueried: func(f refserver.Fault) {
			mu.Lock()
			met[f] = true
			mu.Unlock()
		}}
		if overHTTP {
			return referenceHTTPTargetWith(opts)
		}
		return referenceTargetWith(opts)
	}
	rep, err := runEachOn(mkFor, cfg)
	if err != nil {
		return nil, nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	out := make(faultCoverage, len(cov))
	for id, met := range cov {
		out[id] = maps.Clone(met)
	}
	return out, rep, nil
}

// conformingCloseTimeout bounds a session's teardown in the conforming
// runs (measureCoverage).
const conformingCloseTimeout = 10 * time.Second

// referenceConfig is a run of the reference profile under revision, its
// cases left to the caller. The case deadline is a safety net that a
// loaded machine cannot overrun: against the reference server every wait
// is on a checkpoint.
func referenceConfig(revision string) (runner.Config, error) {
	prof, err := profile.Builtin("reference")
	if err != nil {
		return runner.Config{}, err
	}
	return runner.Config{Profile: prof, Version: revision, CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute}, nil
}

// rowCases are the cases a row runs: those whose conforming run meets
// the row's fault and the row's killers, in catalogue order.
func rowCases(r row, cov faultCoverage) []probe.Case {
	var out []probe.Case
	for _, c := range cases.All() {
		if cov[c.ID][r.fault] || slices.Contains(r.want, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// runRow runs the row's cases (rowCases) against its faulty server, then
// the cases its results blame that did not run, so that a blocked
// verdict can be held to its owner's. It returns the report and the
// coverage the cases were chosen by.
func runRow(r row) (*results.Report, faultCoverage, error) {
	cov, err := coverageOf(r)
	if err != nil {
		return nil, nil, fmt.Errorf("coverage: %w", err)
	}
	cfg, err := referenceConfig(r.rev())
	if err != nil {
		return nil, nil, err
	}
	cfg.Cases = rowCases(r, cov)
	rep, err := runEach(r.mk(false), cfg)
	if err != nil {
		return nil, nil, err
	}
	ran := map[string]bool{}
	for _, res := range rep.Results {
		ran[res.ID] = true
	}
	cfg.Cases = nil
	for _, c := range cases.All() {
		for _, res := range rep.Results {
			if b := res.Outcome.Blame; res.Outcome.Verdict == verdict.Blocked && b != nil && b.Case == c.ID && !ran[c.ID] {
				cfg.Cases = append(cfg.Cases, c)
				ran[c.ID] = true
			}
		}
	}
	if len(cfg.Cases) > 0 {
		more, err := runEach(r.mk(false), cfg)
		if err != nil {
			return nil, nil, err
		}
		rep.Results = append(rep.Results, more.Results...)
	}
	return rep, cov, nil
}
