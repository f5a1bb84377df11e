package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// reference dials the in-process reference server with the given faults.
func reference(faults ...refserver.Fault) Target {
	set := refserver.FaultSet{}
	for _, f := range faults {
		set[f] = true
	}
	return InProcessTarget("reference", refserver.New(refserver.Options{Faults: set}).ServePipes, transport.StreamConfig{})
}

// lineServer is a stdio-like target served in process, named name, of
// the given transport: each session gets the answers of a fresh
// respond, which returns the frames to write for each request that comes
// (notifications and garbage get none); it ends when its input ends.
func lineServer(name, transportName string, newRespond func() func(m *jsonrpc.Message) [][]byte) Target {
	return Target{
		Name:      name,
		Transport: transportName,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			respond := newRespond()
			go func() {
				defer outW.Close()
				sc := bufio.NewScanner(inR)
				for sc.Scan() {
					m, err := jsonrpc.Decode(sc.Bytes())
					if err != nil || m.Kind != jsonrpc.KindRequest {
						continue
					}
					for _, out := range respond(m) {
						if _, err := outW.Write(append(out, '\n')); err != nil {
							return
						}
					}
				}
			}()
			return transport.NewStream(outR, inW, transport.StreamConfig{Log: log}), nil
		},
	}
}

// bare dials a minimal server that answers initialize with the given
// result (or the given error) and ping, and ends when its input ends.
// It offers no control extension.
func bare(initResult string, initErr *jsonrpc.Error) Target {
	return lineServer("bare", TransportInProcess, func() func(m *jsonrpc.Message) [][]byte {
		return func(m *jsonrpc.Message) [][]byte {
			var out []byte
			switch {
			case m.Method == "initialize" && initErr != nil:
				out, _ = jsonrpc.EncodeError(m.ID, initErr)
			case m.Method == "initialize":
				out, _ = jsonrpc.EncodeResult(m.ID, jsonRaw(initResult))
			case m.Method == "ping":
				out, _ = jsonrpc.EncodeResult(m.ID, map[string]any{})
			default:
				out, _ = jsonrpc.EncodeError(m.ID, &jsonrpc.Error{Code: -32601, Message: "Method not found"})
			}
			return [][]byte{out}
		}
	})
}

type jsonRaw string

func (j jsonRaw) MarshalJSON() ([]byte, error) { return []byte(j), nil }

const bareInit = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bare","version":"1"}}`

// pingCase passes when ping works.
func pingCase(id string) probe.Case {
	return probe.Case{
		ID: id, Title: "ping works", Reqs: []string{"PNG-1"},
		Versions: []string{spec.V20251125},
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			if err := e.S.Ping(ctx); err != nil {
				return verdict.Errorf("ping: %v", err)
			}
			return verdict.Passf("ping answered")
		},
	}
}

// fixed returns a case that returns o without touching the session.
func fixed(id string, needs probe.Needs, o verdict.Outcome) probe.Case {
	return probe.Case{
		ID: id, Title: id, Versions: []string{spec.V20251125}, Needs: needs,
		Run: func(context.Context, *probe.Env) verdict.Outcome { return o },
	}
}

func run(t *testing.T, cfg Config) *results.Report {
	t.Helper()
	if cfg.Target.Dial == nil && cfg.Target.PerCase == nil {
		cfg.Target = reference()
	}
	if cfg.Profile == nil {
		var err error
		if cfg.Profile, err = profile.Builtin(profile.Reference); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// verdicts returns "verdict: summary" per result.
func verdicts(rep *results.Report) []string {
	var out []string
	for _, r := range rep.Results {
		out = append(out, string(r.Outcome.Verdict)+": "+r.Outcome.Summary)
	}
	return out
}

func TestSkipReasons(t *testing.T) {
	v2026 := fixed("v/26", probe.Needs{}, verdict.Passf("ran"))
	v2026.Versions = []string{spec.V20260728}
	tests := []struct {
		name    string
		target  Target
		profile *profile.Profile
		c       probe.Case
		want    string
		session bool
	}{
		{"version", reference(), nil, v2026, "skip: applies to 2026-07-28 only", false},
		{"slow tool", reference(), &profile.Profile{}, fixed("a/slow", probe.Needs{SlowTool: true}, verdict.Passf("ran")),
			"skip: profile names no slow tool; pass --profile", false},
		{"effect tool", reference(), &profile.Profile{Slow: &profile.Tool{Name: "s"}}, fixed("a/effect", probe.Needs{SlowTool: true, EffectTool: true}, verdict.Passf("ran")),
			"skip: profile names no effect tool; pass --profile", false},
		{"log tool", reference(), &profile.Profile{}, fixed("a/log", probe.Needs{LogTool: true}, verdict.Passf("ran")),
			"skip: profile names no log tool; pass --profile", false},
		{"stdio", reference(), nil, fixed("a/stdio", probe.Needs{Stdio: true}, verdict.Passf("ran")),
			"skip: needs the stdio transport; the target uses inprocess", false},
		{"control", bare(bareInit, nil), nil, fixed("a/control", probe.Needs{Control: true}, verdict.Passf("ran")),
			"skip: needs the io.mcpflight/control extension, which the target does not offer: the case relies on its checkpoints and counters, which no message on the wire shows; a test build of the server that serves the extension (docs/control-extension.md) would let it run", true},
		{"capability", bare(bareInit, nil), nil, fixed("a/cap", probe.Needs{Capabilities: []string{"tools", "logging"}}, verdict.Passf("ran")),
			`skip: capability "logging" not advertised`, true},
		{"needs met", reference(), nil, fixed("a/all", probe.Needs{SlowTool: true, EffectTool: true, LogTool: true, Control: true, Capabilities: []string{"tools"}}, verdict.Passf("ran")),
			"pass: ran", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := run(t, Config{Target: tt.target, Profile: tt.profile, Cases: []probe.Case{tt.c}})
			if diff := cmp.Diff([]string{tt.want}, verdicts(rep)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if got := rep.Results[0].HadSession(); got != tt.session {
				t.Errorf("HadSession = %v, want %v", got, tt.session)
			}
		})
	}
}

func TestPassAndReport(t *testing.T) {
	rep := run(t, Config{Cases: []probe.Case{pingCase("ping/a"), pingCase("ping/b")}})
	if diff := cmp.Diff([]string{"pass: ping answered", "pass: ping answered"}, verdicts(rep)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if rep.Server == nil || rep.Server.Name != refserver.DefaultName {
		t.Errorf("Server = %+v, want %s", rep.Server, refserver.DefaultName)
	}
	if diff := cmp.Diff(map[verdict.Verdict]int{verdict.Pass: 2}, rep.Counts); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
	r := rep.Results[0]
	if r.Area != "ping" || r.Transport != TransportInProcess || r.Log == nil || len(r.Events) == 0 {
		t.Errorf("result = %+v", r)
	}
	if r.Teardown.ExitedAfter != results.StepCloseInput {
		t.Errorf("teardown = %+v, want close-stdin", r.Teardown)
	}
	// The events include the teardown.
	last := r.Events[len(r.Events)-1]
	if last.Seq != r.Log.Len() {
		t.Errorf("Events end at seq %d, log at %d", last.Seq, r.Log.Len())
	}
	if rep.Teardown.Verdict != verdict.Pass || rep.Teardown.Sessions != 2 {
		t.Errorf("teardown grade = %+v", rep.Teardown)
	}
	if rep.ExitCode() != 0 || rep.Version != spec.V20251125 || rep.Profile != profile.Reference {
		t.Errorf("exit %d, version %q, profile %q", rep.ExitCode(), rep.Version, rep.Profile)
	}
}

func TestErrors(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name   string
		target Target
		c      probe.Case
		want   string // prefix of "verdict: summary"
		event  chrono.Kind
	}{
		{"panic", reference(), probe.Case{ID: "x/panic", Versions: []string{spec.V20251125},
			Run: func(context.Context, *probe.Env) verdict.Outcome { panic("boom at step 2") }},
			"error: case panicked: boom at step 2", chrono.KindError},
		{"no verdict", reference(), fixed("x/zero", probe.Needs{}, verdict.Outcome{Summary: "forgot"}),
			"error: case returned no verdict", ""},
		{"no run", reference(), probe.Case{ID: "x/norun", Versions: []string{spec.V20251125}},
			"error: case has no Run function", ""},
		// The deadline rows skip the handshake, which a loaded machine can
		// stretch past the 50ms deadline before Run starts.
		{"deadline", reference(), probe.Case{ID: "x/deadline", Versions: []string{spec.V20251125}, Needs: probe.Needs{NoHandshake: true},
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				<-ctx.Done()
				return verdict.Passf("nothing happened before the deadline")
			}},
			"error: case deadline of 50ms exceeded before the case concluded (it then said: pass: nothing happened before the deadline)", chrono.KindDeadline},
		{"ignores its context", reference(), probe.Case{ID: "x/stuck", Versions: []string{spec.V20251125}, Needs: probe.Needs{NoHandshake: true},
			Run: func(context.Context, *probe.Env) verdict.Outcome {
				<-release
				return verdict.Passf("released")
			}},
			"error: case deadline of 50ms exceeded; the case did not return and was abandoned", chrono.KindDeadline},
		{"dial", Target{Name: "nowhere", Transport: TransportStdio, Dial: func(context.Context, *chrono.Log) (transport.Conn, error) {
			return nil, errors.New("no such server")
		}}, pingCase("x/dial"), "error: cannot reach the target: no such server", chrono.KindError},
		{"handshake error", bare("", &jsonrpc.Error{Code: -32603, Message: "not today"}), pingCase("x/init"),
			"error: handshake failed: initialize: jsonrpc error -32603: not today", ""},
		{"version mismatch", reference(refserver.FaultVersionMismatch), pingCase("x/version"),
			`fail: LIF-9 violated: the initialize result has protocolVersion "1999-01-01"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Only the deadline rows are about the deadline; the others
			// get one that a loaded machine cannot overrun in the
			// handshake.
			timeout := time.Minute
			if tt.event == chrono.KindDeadline {
				timeout = 50 * time.Millisecond
			}
			rep := run(t, Config{Target: tt.target, Cases: []probe.Case{tt.c},
				CaseTimeout: timeout, Grace: 20 * time.Millisecond})
			got := verdicts(rep)[0]
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if tt.event != "" && !hasEvent(rep.Results[0].Events, tt.event) {
				t.Errorf("no %s event in %+v", tt.event, rep.Results[0].Events)
			}
		})
	}
}

func TestVersionMismatchCitesBothRules(t *testing.T) {
	rep := run(t, Config{Target: reference(refserver.FaultVersionMismatch), Cases: []probe.Case{pingCase("x/version")}})
	o := rep.Results[0].Outcome
	if o.Requirement != "LIF-9" || len(o.Expected) != 2 || !strings.Contains(o.Expected[1], "LIF-10") {
		t.Errorf("outcome = %+v", o)
	}
	if rep.ExitCode() != 1 {
		t.Errorf("ExitCode = %d, want 1", rep.ExitCode())
	}
}

func hasEvent(events []chrono.Event, kind chrono.Kind) bool {
	for _, e := range events {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func TestStrict(t *testing.T) {
	warn := verdict.Broken(spec.V20251125, verdict.Req("CAN-8"), []string{"no response"}, "a response came", 7)
	for _, strict := range []bool{false, true} {
		rep := run(t, Config{Strict: strict, Cases: []probe.Case{fixed("s/warn", probe.Needs{}, warn)}})
		o := rep.Results[0].Outcome
		want := verdict.Warn
		summary := warn.Summary
		if strict {
			want, summary = verdict.Fail, warn.Summary+" (warn under --strict)"
		}
		if o.Verdict != want || o.Summary != summary || o.Requirement != "CAN-8" || o.ActualSeq != 7 {
			t.Errorf("strict=%v: outcome %+v", strict, o)
		}
		if wantCode := map[bool]int{false: 0, true: 1}[strict]; rep.ExitCode() != wantCode {
			t.Errorf("strict=%v: exit code %d, want %d", strict, rep.ExitCode(), wantCode)
		}
	}
}

func TestEnvClose(t *testing.T) {
	var first, second transport.Teardown
	c := probe.Case{ID: "t/close", Versions: []string{spec.V20251125},
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			first = e.Close(ctx)
			second = e.Close(ctx)
			if e.Grace != 300*time.Millisecond || e.Transport != TransportInProcess || e.Control == nil || e.Profile.Name != profile.Reference {
				return verdict.Errorf("env = %+v", e)
			}
			return verdict.Passf("closed")
		}}
	rep := run(t, Config{Cases: []probe.Case{c}})
	if got := verdicts(rep); got[0] != "pass: closed" {
		t.Fatal(got)
	}
	if first.ExitedAfter != transport.StepCloseInput || !cmp.Equal(first, second) || !cmp.Equal(TeardownOf(first), rep.Results[0].Teardown) {
		t.Errorf("teardowns differ: %+v %+v %+v", first, second, rep.Results[0].Teardown)
	}
}

func TestTeardownIgnoringEOF(t *testing.T) {
	for _, strict := range []bool{false, true} {
		rep := run(t, Config{Target: reference(refserver.FaultIgnoreStdinEOF), Strict: strict,
			CloseTimeout: 20 * time.Millisecond, Cases: []probe.Case{pingCase("t/a")}})
		g := rep.Teardown
		want := verdict.Warn
		if strict {
			want = verdict.Fail
		}
		// A 2025-11-25 run: its rule is STD-7, and STD-46 is a later
		// revision's advice.
		if g.Verdict != want || g.Worst != results.StepSIGTERM || g.Requirement != "STD-7" || g.Advice != "STD-46" || g.Revision != "2025-11-25" {
			t.Errorf("strict=%v: grade %+v", strict, g)
		}
		if wantCode := map[bool]int{false: 0, true: 1}[strict]; rep.ExitCode() != wantCode {
			t.Errorf("strict=%v: exit code %d, want %d", strict, rep.ExitCode(), wantCode)
		}
	}
}

func TestGradeTeardown(t *testing.T) {
	td := func(id string, step results.Step, leftovers int, err string) results.Result {
		return results.Result{ID: id, Teardown: results.Teardown{ExitedAfter: step, Leftovers: leftovers, Err: err}}
	}
	tests := []struct {
		name    string
		results []results.Result
		verdict verdict.Verdict
		worst   results.Step
		summary string
	}{
		{"no sessions", []results.Result{{ID: "skipped"}}, verdict.Skip, "", "no session was opened"},
		{"all close-stdin", []results.Result{td("a", results.StepCloseInput, 0, ""), td("b", results.StepNone, 0, "")},
			verdict.Pass, results.StepCloseInput, "all 2 sessions exited when their input closed"},
		{"sigterm", []results.Result{td("a", results.StepCloseInput, 0, ""), td("b", results.StepSIGTERM, 0, "")},
			verdict.Warn, results.StepSIGTERM, "1 of 2 sessions did not exit when stdin closed and needed SIGTERM"},
		{"sigkill", []results.Result{td("a", results.StepSIGKILL, 0, ""), td("b", results.StepSIGTERM, 0, "")},
			verdict.Fail, results.StepSIGKILL, "1 of 2 sessions had to be killed with SIGKILL (ignored closed stdin and SIGTERM)"},
		{"leftovers", []results.Result{td("a", results.StepCloseInput, 2, ""), td("b", results.StepCloseInput, 1, "")},
			verdict.Fail, results.StepCloseInput, "3 of the target's processes were still alive after teardown"},
		{"teardown error", []results.Result{td("a", results.StepSIGTERM, 0, "wait: boom")},
			verdict.Error, results.StepSIGTERM, "1 of 1 teardowns failed: a: wait: boom"},
		{"interrupted teardown left out", []results.Result{td("a", results.StepCloseInput, 0, ""),
			{ID: "b", Interrupted: true, Teardown: results.Teardown{ExitedAfter: results.StepSIGKILL}}},
			verdict.Pass, results.StepCloseInput, "the session exited when its input closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := GradeTeardown(tt.results, false)
			got := [3]string{string(g.Verdict), string(g.Worst), g.Summary}
			want := [3]string{string(tt.verdict), string(tt.worst), tt.summary}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("grade (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	rep := func(teardown verdict.Verdict, vs ...verdict.Verdict) *results.Report {
		r := &results.Report{Teardown: results.TeardownGrade{Verdict: teardown}}
		for _, v := range vs {
			r.Results = append(r.Results, results.Result{Outcome: verdict.Outcome{Verdict: v}})
		}
		return r
	}
	tests := []struct {
		name string
		r    *results.Report
		want int
	}{
		{"empty", rep(verdict.Skip), 0},
		{"pass warn info skip", rep(verdict.Pass, verdict.Pass, verdict.Warn, verdict.Info, verdict.Skip), 0},
		{"fail", rep(verdict.Pass, verdict.Pass, verdict.Fail), 1},
		{"error", rep(verdict.Pass, verdict.Error, verdict.Pass), 2},
		{"fail dominates error", rep(verdict.Pass, verdict.Error, verdict.Fail), 1},
		{"teardown fail", rep(verdict.Fail, verdict.Pass), 1},
		{"teardown warn", rep(verdict.Warn, verdict.Pass), 0},
		{"teardown error", rep(verdict.Error, verdict.Pass), 2},
		{"interrupted", func() *results.Report { r := rep(verdict.Pass, verdict.Pass); r.Interrupted = true; return r }(), 2},
		{"interrupted with a fail", func() *results.Report { r := rep(verdict.Pass, verdict.Fail); r.Interrupted = true; return r }(), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.ExitCode(); got != tt.want {
				t.Errorf("ExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	all := []probe.Case{{ID: "cancel/a"}, {ID: "cancel/b"}, {ID: "progress/a"}, {ID: "ping/a"}}
	ids := func(cs []probe.Case) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	tests := []struct {
		name  string
		globs []string
		want  []string
		err   error
	}{
		{"none is all", nil, []string{"cancel/a", "cancel/b", "progress/a", "ping/a"}, nil},
		{"area", []string{"cancel/*"}, []string{"cancel/a", "cancel/b"}, nil},
		{"catalogue order, no duplicates", []string{"p*/a", "cancel/b", "*/b"}, []string{"cancel/b", "progress/a", "ping/a"}, nil},
		{"exact", []string{"ping/a"}, []string{"ping/a"}, nil},
		{"no match", []string{"cancel/*", "tasks/*"}, nil, ErrNoMatch},
		{"bad pattern", []string{"cancel/[a"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Select(all, tt.globs)
			if tt.name == "bad pattern" {
				if err == nil {
					t.Fatal("no error for a malformed glob")
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("Select (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunConfigErrors(t *testing.T) {
	if _, err := Run(context.Background(), Config{}); !errors.Is(err, ErrNoDial) {
		t.Errorf("no dial: %v", err)
	}
	if _, err := Run(context.Background(), Config{Target: reference(), Version: "2020-01-01"}); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("bad version: %v", err)
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	first := probe.Case{ID: "i/first", Versions: []string{spec.V20251125},
		Run: func(context.Context, *probe.Env) verdict.Outcome {
			cancel()
			return verdict.Passf("done")
		}}
	p, _ := profile.Builtin(profile.Reference)
	rep, err := Run(ctx, Config{Target: reference(), Profile: p, Cases: []probe.Case{first, pingCase("i/second")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rep == nil || len(rep.Results) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	// The case and the interruption race, so its verdict may be either;
	// what matters is that the cut-short teardown is not graded.
	if r := rep.Results[0]; !r.Interrupted || (r.Outcome.Verdict != verdict.Pass && r.Outcome.Verdict != verdict.Error) {
		t.Errorf("result = %+v", r)
	}
	if !rep.Interrupted || rep.Teardown.Verdict != verdict.Skip || rep.ExitCode() != 2 {
		t.Errorf("interrupted %v, teardown %+v, exit code %d", rep.Interrupted, rep.Teardown, rep.ExitCode())
	}
}

// TestRunTimeout ends a run with --timeout while its first cases wait on
// the target: those cases and every case not yet run are errors naming
// the run deadline, and the run is reported, not silently cut short. With
// Jobs 2 the two waiting cases fill the slots, so the others cannot start.
func TestRunTimeout(t *testing.T) {
	waits := func(id string) probe.Case {
		return probe.Case{ID: id, Versions: []string{spec.V20251125},
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				<-ctx.Done()
				return verdict.Errorf("stopped: %v", ctx.Err())
			}}
	}
	for _, jobs := range []int{1, 2} {
		// The target is in this process, on pipes: the run's deadline
		// comes on a synctest bubble's clock.
		t.Run(fmt.Sprintf("jobs %d", jobs), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := profile.Builtin(profile.Reference)
				rep, err := Run(context.Background(), Config{Target: reference(), Profile: p, CaseTimeout: time.Minute, // safety net only
					RunTimeout: 100 * time.Millisecond, Jobs: jobs,
					Cases: []probe.Case{waits("t/waits"), waits("t/waits-too"), pingCase("t/third"), pingCase("t/fourth")}})
				if !errors.Is(err, ErrRunDeadline) {
					t.Fatalf("err = %v, want ErrRunDeadline", err)
				}
				if rep == nil || len(rep.Results) != 4 {
					t.Fatalf("report = %+v, want all four cases reported", rep)
				}
				for i, r := range rep.Results {
					// The second waiting case may not have started by the
					// deadline when it had a slot.
					want := map[int]string{0: "run deadline reached", 1: "run deadline reached"}[i]
					if want == "" || (jobs == 1 && i == 1) {
						want = "not run: run deadline reached"
					}
					if r.Outcome.Verdict != verdict.Error || !strings.Contains(r.Outcome.Summary, want) {
						t.Errorf("%s: %s %q, want an error with %q", r.ID, r.Outcome.Verdict, r.Outcome.Summary, want)
					}
				}
				if !rep.Interrupted || rep.ExitCode() != 2 || rep.Counts[verdict.Error] != 4 {
					t.Errorf("interrupted %v, exit code %d, counts %v", rep.Interrupted, rep.ExitCode(), rep.Counts)
				}
			})
		})
	}
}

// TestChronologyCapIsNoPass: a case whose chronology reached its cap
// cannot pass on that evidence; a fail it found stands.
func TestChronologyCapIsNoPass(t *testing.T) {
	flood := func(id string, o verdict.Outcome) probe.Case {
		return probe.Case{ID: id, Versions: []string{spec.V20251125},
			Run: func(_ context.Context, e *probe.Env) verdict.Outcome {
				for range chrono.DefaultMaxEvents {
					e.Log.Harness(chrono.KindNote, "test", "flood")
				}
				return o
			}}
	}
	rep := run(t, Config{Cases: []probe.Case{
		flood("c/pass", verdict.Passf("looked fine")),
		flood("c/fail", verdict.Broken(spec.V20251125, verdict.Req("PRG-4"), []string{"increase"}, "decrease", 0)),
	}})
	if r := rep.Results[0]; r.Outcome.Verdict != verdict.Error || !strings.Contains(r.Outcome.Summary, "cap of") {
		t.Errorf("capped pass: %s %q", r.Outcome.Verdict, r.Outcome.Summary)
	}
	// The cap is an explicit event of the chronology itself.
	capEvents := 0
	for _, ev := range rep.Results[0].Events {
		if ev.Kind == chrono.KindError && ev.Channel == "chronology" {
			capEvents++
		}
	}
	if capEvents != 1 {
		t.Errorf("%d cap events in the chronology, want 1", capEvents)
	}
	if r := rep.Results[1]; r.Outcome.Verdict != verdict.Fail {
		t.Errorf("capped fail: %s %q, want the fail to stand", r.Outcome.Verdict, r.Outcome.Summary)
	}
}

// TestTeardownGradeFromTheRegistry: the teardown grade's verdict and
// citation come from the rule's level in the registry, per revision:
// SIGTERM breaks a SHOULD (warn; fail under strict), SIGKILL and
// leftovers are the written exception to fail; a 2025-11-25 grade cites
// STD-7 with STD-46 as advice, a 2026-07-28 grade STD-46 alone.
func TestTeardownGradeFromTheRegistry(t *testing.T) {
	td := func(step results.Step, leftovers int) []results.Result {
		return []results.Result{{ID: "a", Teardown: results.Teardown{ExitedAfter: step, Leftovers: leftovers}}}
	}
	for _, tt := range []struct {
		name     string
		results  []results.Result
		strict   bool
		revision string
		want     [4]string // verdict, requirement, advice, summary suffix
	}{
		{"sigterm 2025", td(results.StepSIGTERM, 0), false, spec.V20251125, [4]string{"warn", "STD-7", "STD-46", "SIGTERM"}},
		{"sigterm 2026", td(results.StepSIGTERM, 0), false, spec.V20260728, [4]string{"warn", "STD-46", "", "SIGTERM"}},
		{"sigterm strict", td(results.StepSIGTERM, 0), true, spec.V20260728, [4]string{"fail", "STD-46", "", "(warn under --strict)"}},
		{"sigkill 2025", td(results.StepSIGKILL, 0), false, spec.V20251125, [4]string{"fail", "STD-7", "STD-46", "SIGTERM)"}},
		{"leftovers 2026", td(results.StepCloseInput, 1), false, spec.V20260728, [4]string{"fail", "STD-46", "", "after teardown"}},
		{"no revision", td(results.StepSIGTERM, 0), false, "", [4]string{"warn", "STD-7", "STD-46", "SIGTERM"}},
		{"pass cites nothing", td(results.StepCloseInput, 0), false, spec.V20251125, [4]string{"pass", "", "", "input closed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Placed under a revision twice, as a merged run does: the
			// second placement decides, and strict's note is not doubled.
			g := CiteTeardown(CiteTeardown(GradeTeardown(tt.results, tt.strict), spec.V20260728), tt.revision)
			got := [4]string{string(g.Verdict), g.Requirement, g.Advice, tt.want[3]}
			if diff := cmp.Diff(tt.want, got); diff != "" || !strings.HasSuffix(g.Summary, tt.want[3]) || strings.Count(g.Summary, "--strict") > 1 {
				t.Errorf("grade %+v (-want +got):\n%s", g, diff)
			}
		})
	}
	// The levels the grade relies on: if the registry made STD-7 or
	// STD-46 a MUST, the SIGTERM grade would become a fail with it.
	for _, rev := range []string{spec.V20251125, spec.V20260728} {
		if j, err := signalRule(false).Judge(rev); err != nil || j.Verdict != verdict.Warn {
			t.Errorf("under %s the signal rule judges %+v, %v; want a warn from a SHOULD", rev, j, err)
		}
		if j, err := signalRule(true).Judge(rev); err != nil || j.Verdict != verdict.Fail || j.Exception == "" {
			t.Errorf("under %s the kill rule judges %+v, %v; want a fail by written exception", rev, j, err)
		}
	}
}

// TestTeardownOf: every rung of the transports' shutdown ladder has the
// same name in the results model, so a teardown keeps its rung, and its
// error its text.
func TestTeardownOf(t *testing.T) {
	for step, want := range map[transport.Step]results.Step{
		transport.StepNone: results.StepNone, transport.StepCloseInput: results.StepCloseInput,
		transport.StepDelete: results.StepDelete, transport.StepSIGTERM: results.StepSIGTERM, transport.StepSIGKILL: results.StepSIGKILL,
	} {
		got := TeardownOf(transport.Teardown{ExitedAfter: step, Leftovers: 2, Err: errors.New("wait: boom")})
		if got.ExitedAfter != want || got.ExitedAfter.Rank() < 0 || got.Leftovers != 2 || got.Err != "wait: boom" {
			t.Errorf("%s: %+v", step, got)
		}
	}
}

// TestRunTimeoutWhileStarting: the run deadline comes while the target is
// still being started (a start that waits on a busy machine): the case is
// an error that names the run deadline, not a target that cannot be
// reached (a loaded full run reported "cannot reach the target" there).
func TestRunTimeoutWhileStarting(t *testing.T) {
	// The run's deadline comes on a synctest bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		starting := make(chan struct{})
		tgt := Target{Name: "slow start", Transport: TransportStdio,
			Dial: func(ctx context.Context, _ *chrono.Log) (transport.Conn, error) {
				close(starting)
				<-ctx.Done()
				return nil, fmt.Errorf("transport: not starting it: %w", ctx.Err())
			}}
		p, _ := profile.Builtin(profile.Reference)
		rep, _ := Run(context.Background(), Config{Target: tgt, Profile: p, CaseTimeout: time.Minute, // safety net only
			RunTimeout: 100 * time.Millisecond, Jobs: 1, Cases: []probe.Case{pingCase("s/first")}})
		<-starting
		if rep == nil || len(rep.Results) != 1 {
			t.Fatalf("report %+v", rep)
		}
		r := rep.Results[0]
		if r.Outcome.Verdict != verdict.Error || !strings.Contains(r.Outcome.Summary, "run deadline reached") ||
			!strings.Contains(r.Outcome.Summary, "before the target started") || r.TargetMissing {
			t.Errorf("%s: %s %q (target missing %v), want an error naming the run deadline", r.ID, r.Outcome.Verdict, r.Outcome.Summary, r.TargetMissing)
		}
	})
}
