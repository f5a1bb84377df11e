package cases_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// isCollateral reports whether the case with id may fail or warn under
// fault citing requirement (refserver.FaultSpec.Collateral).
func isCollateral(fault refserver.Fault, id, requirement string) bool {
	return slices.ContainsFunc(specOf(fault).Collateral, func(c refserver.Collateral) bool {
		return c.Case == id && c.Requirement == requirement
	})
}

// matrixRows are the rows of the mutation matrix, from the fault table's
// killer rows: each fault over each transport its row runs on, under the
// row's revision, with the cases that must catch it there.
func matrixRows() []row {
	var rows []row
	for _, fs := range refserver.FaultTable() {
		for _, k := range fs.Killers {
			opts := refserver.Options{Faults: refserver.FaultSet{fs.Fault: true}}
			if fs.Only2026 {
				opts.Protocols = []string{spec.V20260728}
			}
			revision, prefix := "", ""
			if k.Revision == spec.V20260728 {
				revision, prefix = spec.V20260728, "2026/"
			}
			if k.On != refserver.OnHTTP {
				rows = append(rows, row{prefix + "stdio/" + string(fs.Fault), fs.Fault, k.Cases, opts, false, revision, k.Breaks})
			}
			if k.On != refserver.OnStdio {
				rows = append(rows, row{prefix + "http/" + string(fs.Fault), fs.Fault, killersOverHTTP(fs, k), opts, true, revision, k.Breaks})
			}
		}
	}
	return rows
}

// killersOverHTTP are the cases of killer row k of fault fs that must
// catch the fault over Streamable HTTP: those of an HTTP-only row all;
// otherwise not the cases of the stdio area, those that skip over HTTP
// under 2026-07-28, nor those the fault's LostOverHTTP excuses.
func killersOverHTTP(fs refserver.FaultSpec, k refserver.KillerRow) []string {
	if k.On == refserver.OnHTTP {
		return k.Cases
	}
	var out []string
	for _, id := range k.Cases {
		lost := slices.ContainsFunc(fs.LostOverHTTP, func(e refserver.Excuse) bool { return e.Case == id })
		if !lost && !strings.HasPrefix(id, "stdio/") && !(k.Revision == spec.V20260728 && skipsOverHTTP2026[id]) {
			out = append(out, id)
		}
	}
	return out
}

// killersOf are the cases the fault table lists as killers of fault
// under revision, over any transport.
func killersOf(fault refserver.Fault, revision string) []string {
	var out []string
	for _, k := range specOf(fault).Killers {
		if k.Revision == revision {
			out = append(out, k.Cases...)
		}
	}
	return out
}

// checkSeverity holds an outcome that cites a requirement to the
// registry: its level decided the verdict, unless the outcome carries a
// written exception.
func checkSeverity(t *testing.T, id string, o verdict.Outcome) {
	t.Helper()
	if o.Level == "" {
		t.Errorf("%s: %s cites %s without the level that decided it", id, o.Verdict, o.Requirement)
		return
	}
	given, err := verdict.Severity(o.Level)
	if err != nil {
		t.Errorf("%s: level %q of %s: %v", id, o.Level, o.Requirement, err)
		return
	}
	if given != o.Verdict && o.Exception == "" {
		t.Errorf("%s: %s for %s (%s) without a written exception; the registry gives %s", id, o.Verdict, o.Requirement, o.Level, given)
	}
}

// A target makes the server one case runs against. Every case gets a
// server of its own, so that cases running at the same time cannot see
// each other; a second session of a case (tasks/list-isolation) shares
// its server, as a server process would serve it.
type target func() (runner.Target, func())

// referenceTarget serves the reference server in process.
func referenceTarget(faults refserver.FaultSet) target {
	return referenceTargetWith(refserver.Options{Faults: faults})
}

// referenceTargetWith serves the reference server of opts in process.
func referenceTargetWith(opts refserver.Options) target {
	return func() (runner.Target, func()) {
		srv := refserver.New(opts)
		return runner.InProcessTarget("reference", srv.ServePipes, transport.StreamConfig{}), func() {}
	}
}

// referenceHTTPTarget serves the reference server over Streamable HTTP
// from an httptest server.
func referenceHTTPTarget(faults refserver.FaultSet) target {
	return referenceHTTPTargetWith(refserver.Options{Faults: faults})
}

// referenceHTTPTargetWith serves the reference server of opts over
// Streamable HTTP from an httptest server.
func referenceHTTPTargetWith(opts refserver.Options) target {
	return func() (runner.Target, func()) {
		h := refserver.New(opts).HTTPHandler(refserver.HTTPOptions{})
		ts := httptest.NewServer(h)
		// A client of its own: closing an httptest server closes the idle
		// connections of http.DefaultTransport, which would break the
		// cases running at the same time against other servers.
		client := &http.Client{Transport: &http.Transport{}}
		return runner.HTTPTarget(ts.URL, transport.HTTPConfig{URL: ts.URL, StallTimeout: 10 * time.Second, Client: client}), func() {
			h.Close()
			ts.Close()
			client.CloseIdleConnections()
		}
	}
}

// runSlots bounds how many cases of this package's tests run at once.
// A case mostly waits (on a checkpoint, on the wire), so many more run
// than there are cores; each has its own server and deadline.
var runSlots = make(chan struct{}, 8)

// runEach runs every case of cfg.Cases in a run of its own, against a
// target mk makes for it, concurrently (within runSlots), and gathers the
// results in the order of cfg.Cases. Each run has two minutes.
func runEach(mk target, cfg runner.Config) (*results.Report, error) {
	return runEachOn(func(probe.Case) target { return mk }, cfg)
}

// runEachOn is runEach with a target maker per case.
func runEachOn(mkFor func(probe.Case) target, cfg runner.Config) (*results.Report, error) {
	return runEachWithin(runSlots, mkFor, cfg)
}

// runEachWithin is runEachOn bounded by slots instead of runSlots. A
// test in a synctest bubble passes slots made in its bubble: a goroutine
// waiting on a channel made outside the bubble is not durably blocked,
// so while one case waited for a slot the bubble's clock, which the
// cases holding the slots wait on, could not advance.
func runEachWithin(slots chan struct{}, mkFor func(probe.Case) target, cfg runner.Config) (*results.Report, error) {
	rep := &results.Report{Results: make([]results.Result, len(cfg.Cases))}
	errs := make([]error, len(cfg.Cases))
	var wg sync.WaitGroup
	for i, c := range cfg.Cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tgt, closeTarget := mkFor(c)()
			defer closeTarget()
			one := cfg
			one.Target, one.Cases = tgt, []probe.Case{c}
			r, err := runner.Run(ctx, one)
			if err == nil {
				// The matrix judges cases; the passive rules' rows (the
				// monitor on the case's chronology) are judged by
				// TestPassiveRulesJudgeEveryCase.
				r.Results = slices.DeleteFunc(r.Results, func(res results.Result) bool { return res.Area == results.AreaPassive })
			}
			if err == nil && len(r.Results) != 1 {
				err = fmt.Errorf("%d results for one case", len(r.Results))
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.ID, err)
				return
			}
			rep.Results[i] = r.Results[0]
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(rep.Results) > 0 {
		rep.Transport = rep.Results[0].Transport
	}
	return rep, nil
}

// skippedOnReference lists cases the reference server cannot run, with
// the reason.
var skippedOnReference = map[string]string{
	"tasks/ignored-without-capability": "the reference server declares the tasks capability (TSK-24 is for servers without it)",
}

// appliesTo reports whether the case with id applies to revision.
func appliesTo(id, revision string) bool {
	for _, c := range cases.All() {
		if c.ID == id {
			return c.AppliesTo(revision)
		}
	}
	return false
}

// needsHTTP reports whether the case with id runs only over HTTP.
func needsHTTP(id string) bool {
	for _, c := range cases.All() {
		if c.ID == id {
			return c.Needs.HTTP
		}
	}
	return false
}

func TestCatalogueAgainstReferenceServer(t *testing.T) {
	t.Parallel()
	_, rep, err := conforming(false, spec.V20251125, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Outcome.Requirement != "" {
			checkSeverity(t, r.ID, r.Outcome)
		}
		switch r.Outcome.Verdict {
		case verdict.Pass, verdict.Info:
		case verdict.Skip:
			if _, ok := skippedOnReference[r.ID]; !ok && !needsHTTP(r.ID) && appliesTo(r.ID, spec.V20251125) {
				t.Errorf("%s: skipped: %s", r.ID, r.Outcome.Summary)
			}
		default:
			t.Errorf("%s: %s: %s (expected %v, actual %s at seq %d)", r.ID, r.Outcome.Verdict, r.Outcome.Summary,
				r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq)
		}
	}
	if n := len(rep.Results); n < 30 {
		t.Errorf("catalogue has %d cases, want at least 30", n)
	}
}

func TestCatalogueOverHTTP(t *testing.T) {
	t.Parallel()
	_, rep, err := conforming(true, spec.V20251125, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Transport != runner.TransportHTTP {
			t.Errorf("%s: transport %q, want http", r.ID, r.Transport)
		}
		switch r.Outcome.Verdict {
		case verdict.Pass, verdict.Info, verdict.Skip:
		default:
			t.Errorf("%s: %s: %s (expected %v, actual %s at seq %d)", r.ID, r.Outcome.Verdict, r.Outcome.Summary,
				r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq)
		}
	}
}

// TestMutationMatrix runs the catalogue against the reference server
// with one fault on, for every fault, over each transport the fault
// shows on: a row is named by them, stdio/FAULT, http/FAULT,
// 2026/stdio/FAULT, 2026/http/FAULT. Each row must be killed by the
// cases listed for it, and a fault is seen only under the requirements
// it is documented to break (its blame). Once every row has run,
// every case must have been killed by some fault or be excused. A row
// can run alone:
//
//	go test ./cases -run 'TestMutationMatrix/stdio/ping-broken$'
func TestMutationMatrix(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the mutation matrix runs the catalogue once per fault")
	}
	killedBy := map[string][]refserver.Fault{}
	var mu sync.Mutex
	check := func(t *testing.T, fault refserver.Fault, breaks, want []string, rep *results.Report) {
		got := map[string]verdict.Outcome{}
		for _, r := range rep.Results {
			got[r.ID] = r.Outcome
		}
		for _, r := range rep.Results {
			o := r.Outcome
			if o.Requirement != "" {
				checkSeverity(t, r.ID, o)
			}
			if eclipsedBy(fault, r.ID) != "" {
				continue
			}
			switch o.Verdict {
			case verdict.Fail, verdict.Warn:
				mu.Lock()
				killedBy[r.ID] = append(killedBy[r.ID], fault)
				mu.Unlock()
				// Blame lands on the rule that was broken: a fault is seen
				// only under the requirements it is documented to break.
				if !slices.Contains(breaks, o.Requirement) && !isCollateral(fault, r.ID, o.Requirement) {
					t.Errorf("%s: %s %s under %s over %s, which is documented to break %v: %s", r.ID, o.Verdict, o.Requirement, fault, r.Transport, breaks, o.Summary)
				}
			case verdict.Blocked:
				// Blocked by the case that carries the fault's finding:
				// under a rule the fault breaks, or one its evidence fits
				// too (collateral).
				if b := o.Blame; b != nil && (slices.Contains(breaks, b.Requirement) || isCollateral(fault, b.Case, b.Requirement)) {
					// The helper step broke the fault's rule: the owner
					// case must be the one that fails.
					if ov := got[b.Case]; (ov.Verdict != verdict.Fail && ov.Verdict != verdict.Warn) || ov.Requirement != b.Requirement {
						t.Errorf("%s blames %s for %s under %s over %s, but that case says %s %s", r.ID, b.Case, b.Requirement, fault, r.Transport, ov.Verdict, ov.Requirement)
					}
					continue
				}
				t.Errorf("%s was blocked under %s over %s by a rule the fault is not documented to break: %s", r.ID, fault, r.Transport, o.Summary)
			case verdict.Error:
				t.Errorf("%s ended in error under %s over %s: %s", r.ID, fault, r.Transport, o.Summary)
			}
		}
		t.Logf("%s over %s, documented to break %v: %s", fault, rep.Transport, breaks, blameSummary(rep))
		for _, id := range want {
			if v := got[id].Verdict; v != verdict.Fail && v != verdict.Warn {
				t.Errorf("%s did not detect %s over %s: verdict %q", id, fault, rep.Transport, v)
			}
		}
	}
	// A row is one fault over one transport and the cases that must
	// catch it. Every row's catalogue runs at the same time (each case
	// against a server of its own, within runSlots); the checks follow.
	rows := matrixRows()
	// A row's catalogue starts as soon as its subtest is entered, before
	// t.Parallel pauses it, so that every selected row runs at the same
	// time whatever -parallel is; a row -run or -skip leaves out is never
	// entered, and costs nothing (go test ./cases -run
	// 'TestMutationMatrix/stdio/ping-broken' runs that row alone). The
	// checks of the whole matrix wait for every row, in a cleanup.
	selected, ran, leftOut := 0, 0, 0
	t.Cleanup(func() {
		if selected < len(rows) {
			t.Logf("%d of %d rows selected: the checks of the whole matrix are left out", selected, len(rows))
			return
		}
		t.Logf("%d case runs in %d rows; %d runs left out, of cases that never ask about the row's fault", ran, len(rows), leftOut)
		if !t.Failed() {
			checkKilled(t, killedBy)
		}
	})
	checkFaultTable(t)
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			selected++
			var (
				rep  *results.Report
				cov  faultCoverage
				err  error
				done = make(chan struct{})
			)
			go func() {
				defer close(done)
				rep, cov, err = runRow(r)
			}()
			t.Parallel()
			<-done
			if err != nil {
				t.Fatal(err)
			}
			left := len(cases.All()) - len(rep.Results)
			t.Logf("%d cases ran, %d left out (their conforming run never asks about %s)", len(rep.Results), left, r.fault)
			mu.Lock()
			ran, leftOut = ran+len(rep.Results), leftOut+left
			mu.Unlock()
			// A killer that never asks about its fault in a conforming run
			// would mean the coverage misses a question (one that does not
			// go through the server's has) or a path that depends on the
			// run: the rows' selection could then not be trusted.
			for _, id := range r.want {
				if !cov[id][r.fault] {
					t.Errorf("killer %s never asks about %s in a conforming run: the fault coverage cannot be trusted", id, r.fault)
				}
			}
			breaks := r.breaks
			if breaks == nil {
				breaks = r.fault.Breaks()
			}
			check(t, r.fault, breaks, r.want, rep)
			if r.breaks != nil {
				// The row is there to show the rule of its revision killed.
				cited := false
				for _, res := range rep.Results {
					cited = cited || res.Outcome.Verdict == verdict.Fail && res.Outcome.Requirement == r.breaks[0]
				}
				if !cited {
					t.Errorf("no case fails citing %s under %s", r.breaks[0], r.fault)
				}
			}
		})
	}
}

// blameSummary counts a row's fails and warns by the requirement they
// cite and its errors by the requirement they blame, e.g. "fail PNG-1
// ×1; blocked by ping/empty-result (PNG-1) ×17".
func blameSummary(rep *results.Report) string {
	counts := map[string]int{}
	for _, r := range rep.Results {
		o := r.Outcome
		switch {
		case o.Verdict == verdict.Fail || o.Verdict == verdict.Warn:
			counts[string(o.Verdict)+" "+o.Requirement]++
		case o.Verdict == verdict.Blocked:
			counts["blocked by "+o.Blame.Case+" ("+o.Blame.Requirement+")"]++
		case o.Verdict == verdict.Error:
			counts["error blaming nothing"]++
		}
	}
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, counts[k])
	}
	if len(parts) == 0 {
		return "nothing failed"
	}
	return strings.Join(parts, "; ")
}

// checkKilled is the check of the whole mutation matrix, once every row
// has run: each case is killed by some fault, or excused.
func checkKilled(t *testing.T, killedBy map[string][]refserver.Fault) {
	unkillable := map[string]bool{}
	for _, e := range refserver.UnkillableCases() {
		unkillable[e.Case] = true
	}
	for _, c := range cases.All() {
		if unkillable[c.ID] {
			continue
		}
		if len(killedBy[c.ID]) == 0 {
			t.Errorf("no fault makes %s fail: add a fault or list it in refserver's unkillableCases with a reason", c.ID)
		}
	}
}

// A row of the mutation matrix is one fault over one transport, the
// cases that must catch it, and the revision the catalogue runs under
// ("" is 2025-11-25).
type row struct {
	name     string
	fault    refserver.Fault
	want     []string
	opts     refserver.Options
	overHTTP bool
	revision string
	// breaks are the requirements the fault breaks under revision, nil
	// for the fault's own (Fault.Breaks).
	breaks []string
}

// mk makes the row's target: the reference server with the row's fault,
// in process or over Streamable HTTP; hide leaves its control extension
// out (refserver.Options.HideControl).
func (r row) mk(hide bool) target {
	opts := r.opts
	opts.HideControl = hide
	if r.overHTTP {
		return referenceHTTPTargetWith(opts)
	}
	return referenceTargetWith(opts)
}

// rev is the row's revision (2025-11-25 when it names none).
func (r row) rev() string {
	if r.revision == "" {
		return spec.V20251125
	}
	return r.revision
}

// faultBreaks are the requirements the row's fault breaks under its
// revision.
func (r row) faultBreaks() []string {
	if r.breaks != nil {
		return r.breaks
	}
	return r.fault.Breaks()
}

// eclipsedBy returns why the case's outcome under fault is not judged
// (refserver.FaultSpec.Eclipsed and EclipsesSlow), or "".
func eclipsedBy(fault refserver.Fault, id string) string {
	fs := specOf(fault)
	for _, e := range fs.Eclipsed {
		if e.Case == id {
			return e.Why
		}
	}
	if fs.EclipsesSlow != "" && needsSlow(id) && !slices.Contains(killersOf(fault, fs.Revision), id) {
		return fs.EclipsesSlow
	}
	return ""
}

// needsSlow reports whether the case with id drives the slow tool (the
// reference profile names one).
func needsSlow(id string) bool {
	for _, c := range cases.All() {
		if c.ID == id {
			return c.Needs.SlowTool || c.Needs.UsesSlowTool
		}
	}
	return false
}

// skipsOverHTTP2026 are the 2026-07-28 cases that skip over Streamable
// HTTP (the cancel closes the request's stream there).
var skipsOverHTTP2026 = map[string]bool{
	"cancel/server-sends-no-cancelled":          true,
	"cancel/no-further-message-after-progress":  true,
	"cancel/no-further-message-before-progress": true,
	"cancel/handler-stops":                      true,
}

// skippedOnReference2026 lists cases that apply to 2026-07-28 but that
// the default (dual-era) reference server cannot run, with the reason.
var skippedOnReference2026 = map[string]string{
	"lifecycle/initialize-error-names-versions": "the reference server is dual-era and agrees to initialize (LIF-49 is for modern-only servers; the matrix runs it against one)",
}

// TestCatalogue2026AgainstReferenceServer: under 2026-07-28 every case
// that applies to it passes (or records info) against the reference
// server in process and over HTTP, and the run is not all skips.
func TestCatalogue2026AgainstReferenceServer(t *testing.T) {
	t.Parallel()
	byID := map[string]probe.Case{}
	for _, c := range cases.All() {
		byID[c.ID] = c
	}
	for _, tc := range []struct {
		name      string
		overHTTP  bool
		protocols []string
	}{{"inprocess", false, nil}, {"http", true, nil}, {"2026-only", false, []string{spec.V20260728}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, rep, err := conforming(tc.overHTTP, spec.V20260728, tc.protocols, true)
			if err != nil {
				t.Fatal(err)
			}
			ran := 0
			for _, r := range rep.Results {
				if r.Outcome.Requirement != "" {
					checkSeverity(t, r.ID, r.Outcome)
				}
				c := byID[r.ID]
				switch r.Outcome.Verdict {
				case verdict.Pass, verdict.Info:
					ran++
				case verdict.Skip:
					_, excused := skippedOnReference2026[r.ID]
					overHTTP := tc.name == "http" && (c.Needs.Stdio || skipsOverHTTP2026[r.ID] || strings.HasPrefix(r.ID, "stdio/"))
					onlyHTTP := tc.name != "http" && c.Needs.HTTP
					if c.AppliesTo(spec.V20260728) && !excused && !overHTTP && !onlyHTTP && !(tc.name == "2026-only" && r.ID == "lifecycle/initialize-agrees-to-listed-revision") {
						t.Errorf("%s: skipped under 2026-07-28: %s", r.ID, r.Outcome.Summary)
					}
				default:
					t.Errorf("%s: %s: %s (expected %v, actual %s at seq %d)", r.ID, r.Outcome.Verdict, r.Outcome.Summary,
						r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq)
				}
			}
			t.Logf("%s: %d cases ran under 2026-07-28", tc.name, ran)
			if ran < 40 {
				t.Errorf("%d cases ran under 2026-07-28, want at least 40", ran)
			}
		})
	}
}

// TestListenTeardownCancelled: against a server that ends a subscription
// with notifications/cancelled (CAN-41) instead of a result (SUB-6,
// SUB-7), subscriptions/teardown-signal records that branch as info.
func TestListenTeardownCancelled(t *testing.T) {
	t.Parallel()
	var one []probe.Case
	for _, c := range cases.All() {
		if c.ID == "subscriptions/teardown-signal" {
			one = append(one, c)
		}
	}
	prof, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]target{
		"inprocess": referenceTargetWith(refserver.Options{ListenTeardown: refserver.TeardownCancelled}),
		"http":      referenceHTTPTargetWith(refserver.Options{ListenTeardown: refserver.TeardownCancelled}),
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := runEach(mk, runner.Config{Profile: prof, Cases: one, Version: spec.V20260728, CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			o := rep.Results[0].Outcome
			if o.Verdict != verdict.Info || !strings.Contains(o.Summary, "followed CAN-41") {
				t.Errorf("%s: %s", o.Verdict, o.Summary)
			}
		})
	}
}
