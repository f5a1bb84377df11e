package explore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/testchild"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// helperEnv makes the test binary, re-executed, serve the reference
// server over stdio with the faults it names (comma-separated).
const helperEnv = "MCPFLIGHT_EXPLORE_SERVE"

// TestHelperProcess is not a test: the stdio target of these tests runs
// the test binary again as the reference server.
func TestHelperProcess(t *testing.T) {
	spec, ok := os.LookupEnv(helperEnv)
	if !ok {
		t.Skip("helper process for the stdio targets")
	}
	set := refserver.FaultSet{}
	for _, f := range strings.Split(spec, ",") {
		if f != "" {
			set[refserver.Fault(f)] = true
		}
	}
	err := refserver.New(refserver.Options{Faults: set}).Serve(context.Background(), os.Stdin, os.Stdout)
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// stdioTarget is the reference server as a child process per session.
func stdioTarget(faults ...refserver.Fault) Target {
	var names []string
	for _, f := range faults {
		names = append(names, string(f))
	}
	env := helperEnv + "=" + strings.Join(names, ",")
	return Remote(TargetInfo{Name: "reference server over stdio (test helper)", Transport: TransportStdio},
		func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			return transport.StartStdio(ctx, transport.StdioConfig{
				Argv: []string{os.Args[0], "-test.run=^TestHelperProcess$"}, Env: []string{env, testchild.RaceEnv()}, Log: log})
		})
}

// target returns the reference server with faults over a transport,
// closed at the end of the test.
func target(t testing.TB, transportName string, faults ...refserver.Fault) Target {
	t.Helper()
	if transportName == TransportStdio {
		return stdioTarget(faults...)
	}
	return builtInTarget(t, BuiltInOptions{Transport: transportName, Faults: faults})
}

// builtInTarget is the built-in server with opts, closed at the end of
// the test.
func builtInTarget(t testing.TB, opts BuiltInOptions) Target {
	t.Helper()
	b, err := NewBuiltIn(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// rule is an invariant and the requirements a finding of it may cite.
type rule struct {
	inv  string
	reqs []string
}

func (r rule) matches(v Violation) bool {
	return v.Invariant == r.inv && slices.Contains(r.reqs, v.Requirement)
}

// faultRow says what the explorer finds against one fault: the rules a
// finding may break (any of them), or why the fault breaks no invariant
// of the explorer. deadline marks a fault that only a wait running into
// the operation timeout can show (a response that never comes, an
// operation that never ends).
type faultRow struct {
	fault     refserver.Fault
	transport string
	find      []rule
	deadline  bool
	// present marks a deadline row whose violation is something the
	// server did (a stray frame): a short timeout cannot fake it.
	present  bool
	excluded string
	// fits are findings an excluded row may still come to, with why:
	// evidence of the fault that fits another rule too, which the
	// finding's text names.
	fits    []rule
	fitsWhy string
	// ops, when set, is the row's budget of operations.
	ops int
	// racy says why the fault itself acts only if the server wins a race
	// that no frame orders; its replay is then tried up to three times.
	racy string
	// revision is the protocol revision explored; 2025-11-25 if empty.
	revision string
}

// name is the row's subtest name.
func (row faultRow) name() string {
	n := fmt.Sprintf("%s/%s", row.fault, row.transport)
	if row.revision != "" {
		n += "/" + row.revision
	}
	return n
}

// faultTable is the explorer's rows of the reference server's fault
// table (refserver.FaultSpec.Explored), in the table's order: for every
// fault, what each exploration finds or why it cannot.
func faultTable() []faultRow {
	rules := func(fs []refserver.Finding) []rule {
		var out []rule
		for _, f := range fs {
			out = append(out, rule{f.Invariant, f.Requirements})
		}
		return out
	}
	var rows []faultRow
	for _, fs := range refserver.FaultTable() {
		for _, e := range fs.Explored {
			rows = append(rows, faultRow{fault: fs.Fault, transport: e.Transport, revision: e.Revision,
				find: rules(e.Finds), deadline: e.Deadline, present: e.Present, ops: e.Ops, racy: e.Racy,
				excluded: e.Excluded, fits: rules(e.Fits), fitsWhy: e.FitsWhy})
		}
	}
	return rows
}

// TestFaultTableCoversEveryFault: every fault of the reference server is
// either found or listed with the reason it cannot be, and every row
// names a transport, a revision and invariants of the explorer, each
// finding citing a requirement its invariant cites under the row's
// revision.
func TestFaultTableCoversEveryFault(t *testing.T) {
	if refserver.ExploreInProcess != TransportInProcess || refserver.ExploreStdio != TransportStdio || refserver.ExploreHTTP != TransportHTTP {
		t.Errorf("refserver's explorer transports (%q, %q, %q) are not the explorer's", refserver.ExploreInProcess, refserver.ExploreStdio, refserver.ExploreHTTP)
	}
	cites := map[string]map[string][]string{}
	for _, inv := range Invariants() {
		cites[inv.ID] = inv.Cites
	}
	listed := map[refserver.Fault]bool{}
	for _, row := range faultTable() {
		if (row.excluded == "") == (len(row.find) == 0) {
			t.Errorf("%s over %s: a row either finds something or gives the reason it cannot", row.fault, row.transport)
		}
		if !slices.Contains([]string{TransportInProcess, TransportStdio, TransportHTTP}, row.transport) {
			t.Errorf("%s: transport %q is not the explorer's", row.name(), row.transport)
		}
		rev := row.revision
		if rev == "" {
			rev = Revision20251125
		}
		if !slices.Contains(Revisions(), rev) {
			t.Errorf("%s: revision %q is not the explorer's", row.name(), row.revision)
		}
		for _, r := range slices.Concat(row.find, row.fits) {
			c, ok := cites[r.inv]
			if !ok {
				t.Errorf("%s: %q is no invariant of the explorer", row.name(), r.inv)
				continue
			}
			for _, req := range r.reqs {
				if !slices.Contains(c[rev], req) {
					t.Errorf("%s: invariant %s cites %v under %s, not %s", row.name(), r.inv, c[rev], rev, req)
				}
			}
		}
		listed[row.fault] = true
	}
	for _, f := range refserver.AllFaults() {
		if !listed[f] {
			t.Errorf("fault %s is not in the table", f)
		}
	}
	// A 2026-07-28 fault is explored under 2026-07-28, where it acts.
	for _, f := range refserver.Faults2026() {
		if !slices.ContainsFunc(faultTable(), func(row faultRow) bool { return row.fault == f && row.revision == Revision20260728 }) {
			t.Errorf("2026-07-28 fault %s has no 2026-07-28 row", f)
		}
	}
}

// faultConfig is the exploration of one row: a fixed seed and a bounded
// number of operations. A row found only by a deadline gets a short
// operation timeout and a small shrinking budget (each run waits it out
// once); every other row a generous timeout, so that a busy machine never
// makes a wait run out.
func faultConfig(tg Target, row faultRow) Config {
	cfg := Config{Target: tg, Revision: row.revision, Seed: 1, Ops: 800, OpTimeout: 20 * time.Second, ShrinkRuns: 60, Workers: 1}
	if row.deadline {
		cfg.Ops, cfg.OpTimeout, cfg.ShrinkRuns = 200, time.Second, 8
	}
	if row.present {
		cfg.OpTimeout = 300 * time.Millisecond
	}
	if row.fault == refserver.FaultIgnoreStdinEOF {
		// Every close waits this long for a server that never exits;
		// nothing judged depends on it.
		cfg.OpTimeout = 200 * time.Millisecond
	}
	if row.ops > 0 {
		cfg.Ops = row.ops
	}
	if len(row.find) > 0 {
		cfg.Want = func(v Violation) bool {
			return slices.ContainsFunc(row.find, func(r rule) bool { return r.matches(v) })
		}
	}
	return cfg
}

// conformingQueries runs, once per exploration, the conforming built-in
// server through the exploration an excluded row makes (the same
// transport, revision, seed, operations and timeouts), and records every
// fault the server asked about (refserver.Options.FaultQueried). A fault
// it never asked about cannot change a single frame of that exploration:
// with the fault on, the row's run would be this run. The mutation
// matrix selects its rows' cases by the same rule.
type conformingQueries struct {
	mu   sync.Mutex
	runs map[string]*conformingRun
}

// conformingRun is one conforming exploration and what it showed.
type conformingRun struct {
	once    sync.Once
	queried map[refserver.Fault]bool
	res     *Result
	err     error
}

// explorationKey names an exploration by what decides its operations.
func explorationKey(transportName string, cfg Config) string {
	rev := cfg.Revision
	if rev == "" {
		rev = Revision20251125
	}
	return fmt.Sprintf("%s %s seed %d, %d operations, %d workers, timeout %v", transportName, rev, cfg.Seed, cfg.Ops, cfg.Workers, cfg.OpTimeout)
}

// of returns the conforming run of the exploration cfg makes over
// transportName, running it the first time it is asked for.
func (q *conformingQueries) of(t *testing.T, transportName string, cfg Config) *conformingRun {
	t.Helper()
	key := explorationKey(transportName, cfg)
	q.mu.Lock()
	run, ok := q.runs[key]
	if !ok {
		run = &conformingRun{}
		q.runs[key] = run
	}
	q.mu.Unlock()
	run.once.Do(func() {
		var mu sync.Mutex
		queried := map[refserver.Fault]bool{}
		b, err := NewBuiltIn(BuiltInOptions{Transport: transportName, FaultQueried: func(f refserver.Fault) {
			mu.Lock()
			queried[f] = true
			mu.Unlock()
		}})
		if err != nil {
			run.err = err
			return
		}
		cfg.Target, cfg.Enough, cfg.Want = b, nil, nil
		run.res, run.err = Run(context.Background(), cfg)
		b.Close()
		// A copy: a server goroutine that outlived the run may still ask,
		// and the rows read what the run asked without the lock.
		mu.Lock()
		run.queried = maps.Clone(queried)
		mu.Unlock()
		if run.err == nil && len(queried) == 0 {
			// Every exploration pings and calls tools, which some fault
			// acts on: a run that asked about none was not heard.
			run.err = errors.New("the server asked about no fault: its queries were not heard, and no row can be judged by them")
		}
	})
	return run
}

// shortFaultRows is the sample of rows -short explores, one of each
// kind: a fault found in process, over stdio and over HTTP, under each
// revision; a fault found only by waiting out an operation timeout; and
// an excluded row in process (measured against its conforming run) and
// over HTTP, each a short exploration. A sample row missing from rows
// fails t, so that -short never explores less than it says.
func shortFaultRows(t *testing.T, rows []faultRow) []faultRow {
	t.Helper()
	sample := []string{
		"respond-after-cancel/inprocess",
		"respond-after-cancel/inprocess/2026-07-28",
		"respond-after-cancel/stdio",
		"replay-crosses-streams/http",
		"no-accel-buffering/http/2026-07-28",
		"duplicate-event-ids/http",
		"log-level-ignored/inprocess",
		"no-session-check/http",
	}
	var out []faultRow
	for _, name := range sample {
		i := slices.IndexFunc(rows, func(row faultRow) bool { return row.name() == name })
		if i < 0 {
			t.Errorf("the -short sample names %s, which the fault table has no row for", name)
			continue
		}
		out = append(out, rows[i])
	}
	return out
}

// TestFaultTable: every fault that breaks an invariant is found within a
// bounded number of operations from a fixed seed, its shrunk plan still
// breaks the same rule, and the replay file written for it, read back and
// run again, does too. Every other fault is explored as well and shows
// nothing: a built-in server's row until the first trial in which the
// fault acted (Config.Enough), and the log says how often it did. A
// built-in server's row whose fault the server never asks about in the
// conforming run of the same exploration is that run (conformingQueries),
// which must find nothing: its log says so.
func TestFaultTable(t *testing.T) {
	t.Parallel()
	rows := faultTable()
	if testing.Short() {
		// -short explores a sample; the full suite explores every row.
		rows = shortFaultRows(t, rows)
	}
	conforming := &conformingQueries{runs: map[string]*conformingRun{}}
	for _, row := range rows {
		t.Run(row.name(), func(t *testing.T) {
			// Each row has a server of its own and a fixed seed: rows
			// side by side share nothing but the machine.
			t.Parallel()
			var met atomic.Int64
			tg := target(t, row.transport, row.fault)
			if row.excluded != "" && row.transport != TransportStdio {
				// An excluded row ends after the first trial in which its
				// fault acted: the history of a trial that met it showed
				// nothing, which is what the row says (a server over stdio
				// is a process of its own, whose queries are not seen here).
				tg = builtInTarget(t, BuiltInOptions{Transport: row.transport, Faults: []refserver.Fault{row.fault},
					FaultQueried: func(f refserver.Fault) {
						if f == row.fault {
							met.Add(1)
						}
					}})
			}
			cfg := faultConfig(tg, row)
			if row.excluded != "" {
				cfg.Ops = 300
				if row.ops > 0 {
					cfg.Ops = row.ops
				}
				if row.transport != TransportStdio && row.fault != refserver.FaultVersionMismatch {
					run := conforming.of(t, row.transport, cfg)
					if run.err != nil {
						t.Fatalf("the conforming exploration (%s): %v", explorationKey(row.transport, cfg), run.err)
					}
					if f := run.res.Found; f != nil {
						t.Fatalf("the conforming exploration (%s) found %s %s: %s", explorationKey(row.transport, cfg), f.Violation.Invariant, f.Violation.Requirement, f.Violation.Text)
					}
					if !run.queried[row.fault] {
						t.Logf("the server never asked about the fault in the conforming run of the same %d operations (%d trials), which found nothing: the explorer sends nothing it acts on",
							run.res.Ops, run.res.Trials)
						return
					}
				}
				cfg.Enough = func() bool { return met.Load() > 0 }
				res, err := Run(context.Background(), cfg)
				if row.fault == refserver.FaultVersionMismatch {
					if err == nil || !strings.Contains(err.Error(), "handshake") {
						t.Fatalf("want a handshake error, got %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if f := res.Found; f != nil {
					if slices.ContainsFunc(row.fits, func(r rule) bool { return r.matches(f.Violation) }) {
						t.Logf("found %s %s, evidence that fits the fault too: %s", f.Violation.Invariant, f.Violation.Requirement, row.fitsWhy)
						return
					}
					t.Fatalf("listed as breaking no invariant (%s), yet found %+v", row.excluded, f.Violation)
				}
				switch {
				case res.Enough:
					t.Logf("the fault acted %d times in %d operations (%d trials), and nothing was found", met.Load(), res.Ops, res.Trials)
				case row.transport != TransportStdio:
					t.Logf("the fault never acted in %d operations: the explorer sends nothing it acts on", res.Ops)
				}
				return
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Found == nil {
				t.Fatalf("not found in %d operations (seed %d)", res.Ops, cfg.Seed)
			}
			f := res.Found
			if !cfg.Want(f.Violation) {
				t.Fatalf("found %s %s, want one of %v", f.Violation.Invariant, f.Violation.Requirement, row.find)
			}
			if len(f.Minimal.Steps) > len(f.Original.Steps) || f.Minimal.Sessions > f.Original.Sessions {
				t.Errorf("shrinking grew the plan: %d steps over %d sessions from %d over %d",
					len(f.Minimal.Steps), f.Minimal.Sessions, len(f.Original.Steps), f.Original.Sessions)
			}
			if !f.Reproduced && row.racy == "" {
				t.Errorf("the minimal plan did not reproduce %s %s", f.Violation.Invariant, f.Violation.Requirement)
			}
			// The replay file round-trips and reproduces.
			var buf bytes.Buffer
			if err := WriteReplay(&buf, NewReplay(res, cfg)); err != nil {
				t.Fatal(err)
			}
			rp, err := ReadReplay(&buf)
			if err != nil {
				t.Fatal(err)
			}
			tries := 1
			if row.racy != "" {
				tries = 3
			}
			var again *ReplayResult
			for range tries {
				if again, err = RunReplay(context.Background(), tg, rp, nil); err != nil {
					t.Fatal(err)
				}
				if again.Reproduced {
					break
				}
			}
			if !again.Reproduced {
				t.Errorf("the replay did not reproduce %s %s; it showed %v", f.Violation.Invariant, f.Violation.Requirement, again.Violations)
			}
			t.Logf("%s %s in trial %d, %d steps over %d sessions shrunk to %d over %d in %d runs: %s",
				f.Violation.Invariant, f.Violation.Requirement, f.Trial, len(f.Original.Steps), f.Original.Sessions,
				len(f.Minimal.Steps), f.Minimal.Sessions, f.ShrinkRuns, f.Violation.Text)
		})
	}
}

// TestConformingServer: against the reference server without a fault a
// run finds nothing, over each transport, while it does what the mix
// says: calls complete, cancels are accepted at every point, tasks are
// cancelled, and HTTP streams are dropped and resumed.
func TestConformingServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		ops       int
		workers   int
		want      []Kind
	}{
		{TransportInProcess, 4000, 2, []Kind{OpCall, OpAdvance, OpCancel, OpBadCancel, OpReuse, OpPing, OpClose, OpTask, OpTaskCancel, OpTaskResult, OpTaskList}},
		{TransportHTTP, 800, 1, []Kind{OpCall, OpAdvance, OpCancel, OpDrop, OpResume, OpListen}},
		{TransportStdio, 300, 1, []Kind{OpCall, OpAdvance, OpCancel, OpClose}},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), Config{Target: target(t, tc.transport), Seed: 42, Ops: tc.ops,
				OpTimeout: 20 * time.Second, Workers: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			if res.Found != nil {
				t.Fatalf("the conforming server broke %s %s: %s", res.Found.Violation.Invariant, res.Found.Violation.Requirement, res.Found.Violation.Text)
			}
			for _, k := range tc.want {
				if res.ByKind[k] == 0 {
					t.Errorf("no %s operation ran in %d", k, res.Ops)
				}
			}
			if res.Figures.Races[RaceParkedAtStart]+res.Figures.Races[RaceParkedAtStep] == 0 || res.Figures.Counts[CountCalls] == 0 {
				t.Errorf("no accepted cancel or completed call: %v", res.Figures)
			}
			t.Logf("%d trials, %d operations, %d events, %.0f ops/s; races %v", res.Trials, res.Ops, res.Events, res.OpsPerSecond(), res.Figures.Races)
		})
	}
}

// TestWithoutControl: ignoring the control extension, calls run ungated
// (the profile's slow tool); a cancel's acceptance is then not evidenced,
// so what follows it is counted, never judged, and the rules that need
// no such evidence still find nothing wrong with the conforming server,
// and still fire on a broken one.
func TestWithoutControl(t *testing.T) {
	t.Parallel()
	prof := &profile.Profile{Name: "ungated", Slow: &profile.Tool{Name: "slow", Arguments: map[string]any{"key": "", "steps": 3, "gated": false}}}
	cfg := Config{Target: target(t, TransportInProcess), Seed: 3, Ops: 600, NoControl: true, Profile: prof, OpTimeout: 20 * time.Second}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Found != nil {
		t.Fatalf("found %+v", res.Found.Violation)
	}
	if res.Features.Control || res.ByKind[OpTask] > 0 || res.ByKind[OpCall] == 0 || res.Figures.Counts[CountCalls] == 0 {
		t.Errorf("features %+v, operations %v, counts %v", res.Features, res.ByKind, res.Figures.Counts)
	}
	// A cancel that reached a call still unanswered has no evidence of
	// acceptance; one that came after the response is a cancel of a
	// completed request, to be ignored.
	// A cancel the history holds evidence for (the call's own steps, or
	// the pace of the tool's calls) is judged by that pace
	// (uncontrolledCancel); found nothing, it is counted as such.
	if n := res.Figures.Races[RaceUnknown] + res.Figures.Races[RaceUnknownSilent] + res.Figures.Races[RaceUncontrolled]; n == 0 || n != sum(res.Figures.Races) {
		t.Errorf("%d cancels; races %v: every one should lack evidence of acceptance, or be judged by its pace", res.ByKind[OpCancel], res.Figures.Races)
	}
	cfg.Target, cfg.Want = target(t, TransportInProcess, refserver.FaultNonIncreasingProgress), nil
	res, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Found == nil || res.Found.Violation.Requirement != "PRG-4" {
		t.Fatalf("non-increasing progress without the control extension: %+v", res.Found)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestSeedReproducible: with no racing variants, a seed gives the same
// run against the reference server however its trials are scheduled:
// the same operations, and every race figure the same. Within a trial
// each session sends the same frames in the same order and receives the
// same ones (task IDs and timestamps aside, which the server draws).
func TestSeedReproducible(t *testing.T) {
	t.Parallel()
	tg := target(t, TransportInProcess)
	sameWithOneOrTwoWorkers(t, tg, Revision20251125)

	f, err := Probe(context.Background(), tg, false)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanFor(9, 3, GenOptions{Features: f, Revision: Revision20251125, Mix: DefaultMix(), Sessions: 3, Ops: 150, NoRaces: true})
	frames := func() []string {
		_, h, err := runOnce(context.Background(), Config{Target: tg, OpTimeout: 20 * time.Second}, f, plan)
		if err != nil {
			t.Fatal(err)
		}
		var sent, got []string
		for _, ev := range h.Events {
			if ev.Kind != chrono.KindFrame || ev.Summary == nil {
				continue
			}
			g := fmt.Sprintf("%s %s %s %s id=%s token=%s cancels=%s", ev.Channel, ev.Dir, ev.Summary.Kind, ev.Summary.Method, ev.Summary.ID, ev.Summary.Token, ev.Summary.RequestID)
			if ev.Dir == chrono.Out {
				sent = append(sent, g)
			} else {
				got = append(got, g)
			}
		}
		slices.Sort(got)
		return append(sent, got...)
	}
	if diff := cmp.Diff(frames(), frames()); diff != "" {
		t.Errorf("the same plan sent or received other frames (-first +second):\n%s", diff)
	}
}

// sameWithOneOrTwoWorkers runs seed 9 without racing variants under
// revision with one worker and with two, and requires the same
// operations and the same counted races.
func sameWithOneOrTwoWorkers(t *testing.T, tg Target, revision string) {
	t.Helper()
	run := func(workers int) *Result {
		res, err := Run(context.Background(), Config{Target: tg, Revision: revision, Seed: 9, Ops: 1200, NoRaces: true,
			Workers: workers, OpTimeout: 20 * time.Second})
		if err != nil || res.Found != nil {
			t.Fatalf("%v %+v", err, res.Found)
		}
		return res
	}
	a, b := run(1), run(2)
	type gist struct {
		Ops     int
		ByKind  map[Kind]int
		Figures Figures
	}
	if diff := cmp.Diff(gist{a.Ops, a.ByKind, a.Figures}, gist{b.Ops, b.ByKind, b.Figures}); diff != "" {
		t.Errorf("two runs of seed 9 under %s differ (-one worker +two):\n%s", revision, diff)
	}
}

// TestEnoughEndsTheRun: Config.Enough ends a run that found nothing
// between trials, never before the first one, and the result says so.
func TestEnoughEndsTheRun(t *testing.T) {
	t.Parallel()
	tg := target(t, TransportInProcess)
	for _, tc := range []struct {
		name       string
		notYet     int // how many times Enough answers false first
		wantTrials int
		wantEnough bool
	}{
		{"at once", 0, 1, true},
		{"after the second trial", 1, 2, true},
		{"never", 9, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			cfg := Config{Target: tg, Seed: 1, Ops: 30, OpsPerTrial: 10, Workers: 1,
				Enough: func() bool { asked++; return asked > tc.notYet }}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Trials != tc.wantTrials || res.Enough != tc.wantEnough || res.Found != nil {
				t.Errorf("%d trials, enough %v, found %v; want %d trials, enough %v, nothing found", res.Trials, res.Enough, res.Found, tc.wantTrials, tc.wantEnough)
			}
		})
	}
}
