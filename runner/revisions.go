package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// The revision dimension of a run: which revision the
// catalogue runs under is negotiated with the target before the first
// case (--protocol), and under negotiate.ModeBoth the catalogue runs once
// per revision the server offers, into one report.

// RunProtocol negotiates the revision with the target for mode
// (negotiate.SurveyTarget, each probe on a connection of its own), then
// runs cfg's cases once per revision chosen, and returns one report
// whose Negotiation says what was chosen and why. cfg.Version is ignored.
//
// A server that names its revisions and offers none the mode accepts (a
// -32022 without the asked one) ends the run before any case, with a
// *negotiate.NoCommonRevisionError and no report; so does a modern server
// that refuses server/discover. When the probes cannot decide otherwise
// (the target answers neither probe), the catalogue runs under the
// mode's revision, 2025-11-25 for auto and both, and the cases show what
// is wrong, unless no session could be opened at all: the run then ends
// with ErrNoSession and a report of no case whose NoSession says why.
func RunProtocol(ctx context.Context, cfg Config, mode negotiate.Mode, opts negotiate.Options) (*results.Report, error) {
	if cfg.Target.Dial == nil && cfg.Target.PerCase == nil {
		return nil, ErrNoDial
	}
	caseTimeout := cfg.CaseTimeout
	if caseTimeout <= 0 {
		caseTimeout = DefaultCaseTimeout
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = caseTimeout
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = min(negotiate.DefaultProbeTimeout, caseTimeout/2)
	}
	started := time.Now()
	sctx := ctx
	if cfg.RunTimeout > 0 {
		// --timeout bounds the whole run, the probes included: the
		// revisions' runs go on under the same deadline, whose cause
		// names the time the user gave, not what the probes left.
		var cancel context.CancelFunc
		sctx, cancel = withRunDeadline(ctx, cfg.RunTimeout)
		defer cancel()
	}
	dial, release, err := surveyDial(sctx, cfg.Target)
	if err != nil {
		return nil, err
	}
	sv, err := negotiate.SurveyTarget(sctx, negotiate.Dialer(dial), mode, opts)
	release()
	if ns := noSession(sv, err); ns != nil && sctx.Err() == nil {
		// Every case would fail the same way: the report would be a line
		// per case saying so. The one line says it instead.
		var profileName string
		if cfg.Profile != nil {
			profileName = cfg.Profile.Name
		}
		rep := &results.Report{Target: cfg.Target.Name, Transport: cfg.Target.Transport, Profile: profileName,
			Strict: cfg.Strict, Started: started, Duration: time.Since(started), Counts: map[verdict.Verdict]int{},
			Negotiation: negotiationOf(sv), NoSession: ns}
		cause := err
		if sv.Probe2025 != nil && sv.Probe2025.Err != nil {
			cause = sv.Probe2025.Err
		} else if sv.Probe2026 != nil && cause == nil {
			cause = sv.Probe2026.Err
		}
		return rep, &noSessionError{line: ns.Line, cause: cause}
	}
	var nce *negotiate.NoCommonRevisionError
	switch {
	case errors.As(err, &nce):
		return nil, err
	case errors.Is(err, negotiate.ErrRefusal2026):
		return nil, err
	case err != nil:
		rev := string(mode)
		if mode == negotiate.ModeAuto || mode == negotiate.ModeBoth {
			rev = spec.V20251125
		}
		sv.Revisions = []string{rev}
		sv.Reasons = map[string]string{rev: "not negotiated (" + strings.TrimPrefix(err.Error(), "negotiate: ") + "); the cases run under " + rev + " and show what fails"}
	}
	var reps []*results.Report
	var runErr error
	for _, rev := range sv.Revisions {
		c := cfg
		c.Version = rev
		c.Negotiation = sv
		c.RunTimeout = 0 // sctx carries the run's deadline
		rep, err := Run(sctx, c)
		if rep == nil {
			return nil, err
		}
		for i := range rep.Results {
			rep.Results[i].Revision = rev
		}
		for i := range rep.Schema.Findings {
			rep.Schema.Findings[i].Revision = rev
		}
		reps = append(reps, rep)
		if err != nil {
			runErr = err
			break
		}
	}
	rep := mergeReports(reps, cfg.Strict)
	rep.Started = started
	rep.Duration = time.Since(started)
	rep.Negotiation = negotiationOf(sv)
	if rep.Server == nil {
		// No case opened a session (every one skipped): the probes
		// still heard the server name itself.
		rep.Server = implementationOf(sv.ServerInfo())
	}
	return rep, runErr
}

// mergeReports joins the reports of one run per revision into one.
func mergeReports(reps []*results.Report, strict bool) *results.Report {
	if len(reps) == 1 {
		r := reps[0]
		r.Revisions = []string{r.Version}
		return r
	}
	first := reps[0]
	out := &results.Report{
		Target: first.Target, Transport: first.Transport, Profile: first.Profile, Strict: first.Strict,
		Counts: map[verdict.Verdict]int{},
	}
	for _, r := range reps {
		out.Revisions = append(out.Revisions, r.Version)
		out.Results = append(out.Results, r.Results...)
		for v, n := range r.Counts {
			out.Counts[v] += n
		}
		if out.Server == nil {
			out.Server = r.Server
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		for _, n := range r.Notes {
			if !slices.Contains(out.Notes, n) {
				out.Notes = append(out.Notes, n)
			}
		}
		out.Schema.Checked += r.Schema.Checked
		out.Schema.Unchecked += r.Schema.Unchecked
		out.Schema.Findings = append(out.Schema.Findings, r.Schema.Findings...)
		if r.Schema.Err != "" && out.Schema.Err == "" {
			out.Schema.Err = r.Schema.Err
		}
	}
	out.Version = strings.Join(out.Revisions, ", ")
	out.Schema.Revision = out.Version
	out.Teardown = GradeTeardown(out.Results, strict)
	out.Teardown = CiteTeardown(out.Teardown, teardownRevision(out.Results, out.Teardown))
	out.Changes = revisionChanges(out.Results, out.Revisions)
	return out
}

// revisionChanges lists the cases that pass (or info) under one revision
// and fail (or warn) under another, in the order of the first revision's
// run.
func revisionChanges(rs []results.Result, revisions []string) []results.RevisionChange {
	if len(revisions) < 2 {
		return nil
	}
	byID := map[string]map[string]results.Result{}
	var order []string
	for _, r := range rs {
		if byID[r.ID] == nil {
			byID[r.ID] = map[string]results.Result{}
			order = append(order, r.ID)
		}
		byID[r.ID][r.Revision] = r
	}
	good := func(v verdict.Verdict) bool { return v == verdict.Pass || v == verdict.Info }
	bad := func(v verdict.Verdict) bool { return v == verdict.Fail || v == verdict.Warn }
	var out []results.RevisionChange
	for _, id := range order {
		runs := byID[id]
		var vs []verdict.Verdict
		for _, rev := range revisions {
			if r, ok := runs[rev]; ok {
				vs = append(vs, r.Outcome.Verdict)
			}
		}
		if len(vs) < 2 || !slices.ContainsFunc(vs, good) || !slices.ContainsFunc(vs, bad) {
			continue
		}
		c := results.RevisionChange{ID: id, Verdicts: map[string]verdict.Verdict{}, Summaries: map[string]string{}}
		for rev, r := range runs {
			c.Title = r.Title
			c.Verdicts[rev] = r.Outcome.Verdict
			c.Summaries[rev] = r.Outcome.Summary
		}
		out = append(out, c)
	}
	return out
}

// surveyDial is the dial the negotiation's probes use: the target's own,
// or, for a target that gives every case a server of its own
// (Target.PerCase), a server of the probes' own, which release ends.
func surveyDial(ctx context.Context, t Target) (func(context.Context, *chrono.Log) (transport.Conn, error), func(), error) {
	if t.PerCase == nil {
		return t.Dial, func() {}, nil
	}
	dial, release, err := t.PerCase(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("runner: a server for the negotiation: %w", err)
	}
	return dial, release, nil
}
