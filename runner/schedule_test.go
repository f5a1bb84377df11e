package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// safetyNet bounds waits that only a broken scheduler would reach; it
// never decides a test.
const safetyNet = time.Minute

// recorder is a Watcher that records the calls it gets, and closes the
// channel of a case when it finishes.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	finished map[int]chan struct{}
}

func newRecorder(n int) *recorder {
	r := &recorder{finished: map[int]chan struct{}{}}
	for i := range n {
		r.finished[i] = make(chan struct{})
	}
	return r
}

func (r *recorder) Began(h results.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "began "+h.Target)
}

func (r *recorder) Started(i int, c probe.Case) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("started %d %s", i, c.ID))
}

func (r *recorder) Finished(i int, res results.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("finished %d %s %s", i, res.ID, res.Outcome.Verdict))
	close(r.finished[i])
}

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// named dials in-process reference servers whose serverInfo names count
// the dials: "srv-1", "srv-2", …
func named() Target {
	var dials atomic.Int64
	return Target{
		Name:      "named",
		Transport: TransportInProcess,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			name := fmt.Sprintf("srv-%d", dials.Add(1))
			s, _ := refserver.InProcess(ctx, refserver.Options{Name: name}, transport.StreamConfig{Log: log})
			return s, nil
		},
	}
}

// TestJobsResultsInCatalogueOrder: cases that finish out of order are
// reported in catalogue order, and the report's server is that of the
// first handshake in catalogue order, not the first to finish.
func TestJobsResultsInCatalogueOrder(t *testing.T) {
	rec := newRecorder(3)
	noHandshake := fixed("o/no-handshake", probe.Needs{NoHandshake: true}, verdict.Passf("no handshake"))
	waits := probe.Case{ID: "o/waits", Versions: []string{spec.V20251125},
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			// Finishes only after the next case has.
			select {
			case <-rec.finished[2]:
				return verdict.Passf("after o/quick")
			case <-ctx.Done():
				return verdict.Errorf("o/quick did not finish first: %v", ctx.Err())
			}
		}}
	quick := pingCase("o/quick")
	rep := run(t, Config{Target: named(), Jobs: 3, CaseTimeout: safetyNet, Watch: rec,
		Cases: []probe.Case{noHandshake, waits, quick}})

	want := []string{"pass: no handshake", "pass: after o/quick", "pass: ping answered"}
	if diff := cmp.Diff(want, verdicts(rep)); diff != "" {
		t.Errorf("verdicts in catalogue order (-want +got):\n%s", diff)
	}
	// o/waits and o/quick started together, so either may have dialled
	// first; each has a server of its own name.
	waitsServer, quickServer := rep.Results[1].Server, rep.Results[2].Server
	if rep.Results[0].Server != nil || waitsServer == nil || quickServer == nil || waitsServer.Name == quickServer.Name {
		t.Fatalf("result servers %v, %v, %v", rep.Results[0].Server, waitsServer, quickServer)
	}
	if rep.Server == nil || rep.Server.Name != waitsServer.Name {
		t.Errorf("Server = %+v, want %s, o/waits' (the first handshake in catalogue order), not o/quick's %s", rep.Server, waitsServer.Name, quickServer.Name)
	}
	calls := rec.log()
	// o/no-handshake's teardown may end at any point; the other two
	// finish in the order o/waits imposes.
	finishOrder := slices.DeleteFunc(slicesFilter(calls, "finished "), func(s string) bool { return strings.Contains(s, "o/no-handshake") })
	if diff := cmp.Diff([]string{"finished 2 o/quick pass", "finished 1 o/waits pass"}, finishOrder); diff != "" {
		t.Errorf("Finished calls in finishing order (-want +got):\n%s", diff)
	}
	if calls[0] != "began named" || len(slicesFilter(calls, "started ")) != 3 {
		t.Errorf("watcher calls %q", calls)
	}
}

func slicesFilter(ss []string, prefix string) []string {
	var out []string
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// TestJobsTeardownOverlaps: a session whose server does not exit when its
// input closes (the ignore-stdin-eof fault) needs SIGTERM; with Jobs 2 the
// next case's session opens while that teardown is still going on, and the
// teardown is graded all the same. The slow teardown ends only when the
// next case has dialled, so a scheduler that waited for it would leave it
// to the CloseTimeout safety net, and the evidence would say so. With
// Jobs 1 (the control) the next case never opens during the teardown.
func TestJobsTeardownOverlaps(t *testing.T) {
	for _, jobs := range []int{2, 1} {
		t.Run(fmt.Sprintf("jobs %d", jobs), func(t *testing.T) {
			var overlapped atomic.Bool
			gate := newDialGate()
			target := Target{Name: "slow teardown", Transport: TransportInProcess,
				Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
					n := gate.dial()
					s, _ := refserver.InProcess(ctx, refserver.Options{Faults: refserver.FaultSet{refserver.FaultIgnoreStdinEOF: n == 1}},
						transport.StreamConfig{Log: log})
					if n != 1 {
						return s, nil
					}
					return &slowClose{Stream: s, log: log, until: gate.next, overlapped: &overlapped}, nil
				}}
			closeTimeout := safetyNet
			if jobs == 1 {
				closeTimeout = 50 * time.Millisecond // the control: nothing can come before it
			}
			rep := run(t, Config{Target: target, Jobs: jobs, CloseTimeout: closeTimeout,
				Cases: []probe.Case{pingCase("t/slow-teardown"), pingCase("t/next"), pingCase("t/after")}})

			if got, want := overlapped.Load(), jobs > 1; got != want {
				t.Errorf("the next case's session opened during the slow teardown: %v, want %v", got, want)
			}
			first := rep.Results[0]
			if first.Teardown.ExitedAfter != results.StepSIGTERM {
				t.Errorf("slow teardown graded %+v, want SIGTERM", first.Teardown)
			}
			if jobs > 1 && !hasNote(first.Events, "next case dialled during the teardown") {
				t.Errorf("the slow case's chronology lacks the overlap:\n%v", first.Events)
			}
			if g := rep.Teardown; g.Verdict != verdict.Warn || g.Worst != results.StepSIGTERM || g.Steps[results.StepSIGTERM] != 1 || g.Sessions != 3 {
				t.Errorf("teardown grade %+v, want a warn for one SIGTERM of 3 sessions", g)
			}
			if diff := cmp.Diff([]string{"pass: ping answered", "pass: ping answered", "pass: ping answered"}, verdicts(rep)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// dialGate counts a target's dials: the second closes next, which the
// first session's teardown waits for (the next case has dialled).
type dialGate struct {
	dials atomic.Int64
	next  chan struct{}
}

func newDialGate() *dialGate { return &dialGate{next: make(chan struct{})} }

// dial counts one dial and returns its number, 1 for the first.
func (g *dialGate) dial() int64 {
	n := g.dials.Add(1)
	if n == 2 {
		close(g.next)
	}
	return n
}

// slowClose is a stream whose teardown waits, before it closes the
// server's input, until another case has dialled (or the close context
// ends), and records which came first in the case's chronology.
type slowClose struct {
	*transport.Stream
	log        *chrono.Log
	until      <-chan struct{}
	overlapped *atomic.Bool
}

func (s *slowClose) Close(ctx context.Context) transport.Teardown {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.until:
			if cctx.Err() == nil {
				s.overlapped.Store(true)
				s.log.Harness(chrono.KindNote, "test", "next case dialled during the teardown")
			}
			// The server ignores the end of its input: ending the close
			// context is its SIGTERM.
			cancel()
		case <-cctx.Done():
		}
	}()
	return s.Stream.Close(cctx)
}

func hasNote(events []chrono.Event, text string) bool {
	for _, ev := range events {
		if ev.Kind == chrono.KindNote && ev.Text == text {
			return true
		}
	}
	return false
}

// TestJobsTargetMissing: a target that cannot be started is found by the
// first case, and the others are skipped without a second attempt, as
// with Jobs 1.
func TestJobsTargetMissing(t *testing.T) {
	var got [][]string
	for _, jobs := range []int{1, 8} {
		var dials atomic.Int64
		target := Target{Name: "missing", Transport: TransportStdio, Dial: func(context.Context, *chrono.Log) (transport.Conn, error) {
			dials.Add(1)
			return nil, fmt.Errorf("start: %w", transport.ErrExecutableNotFound)
		}}
		rep := run(t, Config{Target: target, Jobs: jobs,
			Cases: []probe.Case{fixed("m/static-skip", probe.Needs{HTTP: true}, verdict.Passf("ran")), pingCase("m/a"), pingCase("m/b"), pingCase("m/c")}})
		if n := dials.Load(); n != 1 {
			t.Errorf("jobs %d: %d dials, want 1", jobs, n)
		}
		if !rep.Results[1].TargetMissing {
			t.Errorf("jobs %d: m/a not TargetMissing: %+v", jobs, rep.Results[1])
		}
		got = append(got, verdicts(rep))
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("jobs 1 and 8 differ (-1 +8):\n%s", diff)
	}
	if want := "skip: not run: the target could not be started or reached (see m/a)"; got[1][3] != want {
		t.Errorf("m/c: %q, want %q", got[1][3], want)
	}
}

// TestJobsInterrupted: an interrupt while several cases run stops new
// starts; the cases running are reported (cut short), those not started
// are left out, and the run is interrupted.
func TestJobsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started sync.WaitGroup
	started.Add(2)
	waiting := func(id string) probe.Case {
		return probe.Case{ID: id, Versions: []string{spec.V20251125},
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				started.Done()
				<-ctx.Done()
				return verdict.Errorf("stopped: %v", ctx.Err())
			}}
	}
	go func() {
		started.Wait()
		cancel()
	}()
	p, _ := profile.Builtin(profile.Reference)
	rep, err := Run(ctx, Config{Target: reference(), Profile: p, Jobs: 2, CaseTimeout: safetyNet,
		Cases: []probe.Case{pingCase("i/contact"), waiting("i/w1"), waiting("i/w2"), pingCase("i/never")}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "before i/never") {
		t.Fatalf("err = %v, want context.Canceled before i/never", err)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("%d results, want the 3 started: %q", len(rep.Results), verdicts(rep))
	}
	for _, r := range rep.Results[1:] {
		if !r.Interrupted || r.Outcome.Verdict != verdict.Error {
			t.Errorf("%s: interrupted %v, %s %q", r.ID, r.Interrupted, r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
	if !rep.Interrupted || rep.ExitCode() != 2 {
		t.Errorf("interrupted %v, exit code %d", rep.Interrupted, rep.ExitCode())
	}
}

// TestPerCaseServers: a target with PerCase gives each case that connects
// a server of its own, shared by the case's second session (Env.Open),
// and releases it once the case is over.
func TestPerCaseServers(t *testing.T) {
	var (
		mu       sync.Mutex
		servers  int
		released []string
	)
	target := Target{Name: "per case", Transport: TransportInProcess,
		PerCase: func(context.Context) (func(context.Context, *chrono.Log) (transport.Conn, error), func(), error) {
			mu.Lock()
			servers++
			name := fmt.Sprintf("srv-%d", servers)
			mu.Unlock()
			srv := refserver.New(refserver.Options{Name: name})
			return InProcessTarget(name, srv.ServePipes, transport.StreamConfig{}).Dial, func() {
				mu.Lock()
				defer mu.Unlock()
				released = append(released, name)
			}, nil
		}}
	second := probe.Case{ID: "p/second", Versions: []string{spec.V20251125},
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			other, err := e.Open(ctx)
			if err != nil {
				return verdict.Errorf("%v", err)
			}
			a, b := e.S.Server().ServerInfo.Name, other.Server().ServerInfo.Name
			if a != b {
				return verdict.Errorf("second session on %s, first on %s", b, a)
			}
			return verdict.Passf("both on one server")
		}}
	rep := run(t, Config{Target: target, Jobs: 1, Cases: []probe.Case{
		pingCase("p/a"), fixed("p/static-skip", probe.Needs{Stdio: true}, verdict.Passf("ran")), second, pingCase("p/b")}})
	if diff := cmp.Diff([]string{"pass: ping answered", "skip: needs the stdio transport; the target uses inprocess",
		"pass: both on one server", "pass: ping answered"}, verdicts(rep)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	var names []string
	for _, r := range rep.Results {
		if r.Server != nil {
			names = append(names, r.Server.Name)
		}
	}
	if diff := cmp.Diff([]string{"srv-1", "srv-2", "srv-3"}, names); diff != "" {
		t.Errorf("servers by case (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"srv-1", "srv-2", "srv-3"}, released); diff != "" {
		t.Errorf("released (-want +got):\n%s", diff)
	}
}

func TestDefaultJobs(t *testing.T) {
	for _, tt := range []struct {
		transport string
		atLeast   int
	}{{TransportHTTP, 2}, {TransportStdio, 2}, {TransportInProcess, 2}, {"", 1}} {
		if got := DefaultJobs(tt.transport); got < tt.atLeast {
			t.Errorf("DefaultJobs(%q) = %d, want at least %d", tt.transport, got, tt.atLeast)
		}
	}
	if got := DefaultJobs("carrier-pigeon"); got != 1 {
		t.Errorf("DefaultJobs of an unknown transport = %d, want 1", got)
	}
}

// TestMayStart: the scheduler's decision to start the next case.
func TestMayStart(t *testing.T) {
	tests := []struct {
		name                             string
		starting, running, tearing, over int
		contact                          bool
		want                             bool
	}{
		{"first case", 0, 0, 0, 0, false, true},
		{"alone until contact", 1, 0, 0, 0, false, false},
		{"alone until contact, in teardown", 0, 0, 1, 0, false, false},
		{"no contact, all over", 0, 0, 0, 1, false, true},
		{"contact", 1, 0, 0, 0, true, false}, // starts = 1
		{"contact, running", 0, 3, 0, 5, true, true},
		{"slots full", 0, 4, 0, 5, true, false},
		{"slots full with a start", 1, 3, 0, 5, true, false},
		{"teardowns full", 0, 1, 4, 5, true, false},
		{"teardowns beside", 0, 3, 3, 5, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := slots{jobs: 4, starts: 1, contact: tt.contact,
				count: map[phase]int{starting: tt.starting, running: tt.running, tearing: tt.tearing, over: tt.over}}
			next := tt.starting + tt.running + tt.tearing + tt.over
			if got := s.mayStart(next, next); got != tt.want {
				t.Errorf("mayStart = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMayStartAlone: on a target the cases share, a case that must run
// alone (Needs.Alone) starts only when no other case is started, and none
// starts beside it.
func TestMayStartAlone(t *testing.T) {
	tests := []struct {
		name                    string
		running, tearing, lone  int
		nextAlone, shared, want bool
	}{
		{"alone, nothing beside", 0, 0, 0, true, true, true},
		{"alone waits for a running case", 1, 0, 0, true, true, false},
		{"alone waits for a teardown", 0, 1, 0, true, true, false},
		{"nothing beside a lone case", 1, 0, 1, false, true, false},
		{"others side by side", 2, 0, 0, false, true, true},
		{"every case its own server", 1, 0, 0, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := slots{jobs: 4, starts: 4, contact: true, lone: tt.lone,
				count: map[phase]int{running: tt.running, tearing: tt.tearing, over: 3}}
			if tt.shared {
				s.alone = func(int) bool { return tt.nextAlone }
			}
			if got := s.mayStart(3+tt.running+tt.tearing, 3+tt.running+tt.tearing); got != tt.want {
				t.Errorf("mayStart = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStartOrderLongFirst: the cases that wait on a durable task start
// first, then those that wait on a slow tool, then the rest, each group
// in catalogue order; in a run that shares sessions the tidy cases come
// before them all.
func TestStartOrderLongFirst(t *testing.T) {
	cs := []probe.Case{
		{ID: "a/plain"},
		{ID: "b/slow", Needs: probe.Needs{SlowTool: true}},
		{ID: "c/task", Needs: probe.Needs{Tasks: true}},
		{ID: "d/plain"},
		{ID: "e/task-capability", Needs: probe.Needs{TasksCapability: true}},
		{ID: "f/slow", Needs: probe.Needs{SlowTool: true, HTTP: true}},
	}
	var got []string
	for _, i := range startOrder(cs, false) {
		got = append(got, cs[i].ID)
	}
	want := []string{"c/task", "e/task-capability", "b/slow", "f/slow", "a/plain", "d/plain"}
	if !slices.Equal(got, want) {
		t.Errorf("start order %v, want %v", got, want)
	}
	// Sharing sessions, the tidy cases' lanes are the longest work: they
	// start first.
	cs = append(cs, probe.Case{ID: "g/tidy", Tidy: true}, probe.Case{ID: "h/tidy-slow", Tidy: true, Needs: probe.Needs{SlowTool: true}})
	got = got[:0]
	for _, i := range startOrder(cs, true) {
		got = append(got, cs[i].ID)
	}
	want = []string{"g/tidy", "h/tidy-slow", "c/task", "e/task-capability", "b/slow", "f/slow", "a/plain", "d/plain"}
	if !slices.Equal(got, want) {
		t.Errorf("sharing sessions: start order %v, want %v", got, want)
	}
}
