//go:build unix

package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/testchild"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// referenceChildren is the reference server started as a child process
// for every session (TestHelperServeStdio), counting the starts; mode is
// "uncontrolled" (a user's server, without the control extension) or
// "serve" (with it).
func referenceChildren(starts *atomic.Int32, mode string) Target {
	return Target{Name: "reference children", Transport: TransportStdio,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			starts.Add(1)
			return transport.StartStdio(ctx, transport.StdioConfig{
				Argv: []string{os.Args[0], "-test.run=^TestHelperServeStdio$"},
				Env:  []string{childEnv + "=" + mode, testchild.RaceEnv()},
				Log:  log,
			})
		}}
}

// pinging is a tidy case that pings the server and returns o.
func pinging(id string, o verdict.Outcome) probe.Case {
	return probe.Case{ID: id, Title: id, Versions: []string{spec.V20251125}, Tidy: true,
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			if err := e.S.Ping(ctx); err != nil {
				return verdict.Errorf("ping: %v", err)
			}
			return o
		}}
}

// continuedNote is the first event of a case that continued a session.
func continuedNote(r results.Result) string {
	if len(r.Events) == 0 || r.Events[0].Dir != chrono.Harness {
		return ""
	}
	return r.Events[0].Text
}

// TestTidyCasesShareStdioSessions: over stdio the tidy cases of a run go
// on one after another on one server process; each has a chronology of
// its own from sequence 1 whose first event names the case that opened
// the session, the last user closes it and the teardown grade counts one
// session. --isolate (Config.Isolate) starts a process per case again.
func TestTidyCasesShareStdioSessions(t *testing.T) {
	pass := verdict.Passf("pinged")
	cs := []probe.Case{pinging("t/1", pass), pinging("t/2", pass), pinging("t/3", pass)}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	if n := starts.Load(); n != 1 {
		t.Fatalf("%d server processes started for three tidy cases, want 1", n)
	}
	for i, r := range rep.Results {
		if r.Outcome.Verdict != verdict.Pass {
			t.Fatalf("%s: %s %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
		if r.Events[0].Seq != 1 {
			t.Errorf("%s's chronology starts at sequence %d, want 1", r.ID, r.Events[0].Seq)
		}
		last := i == len(rep.Results)-1
		if r.HandedOn == last || r.HadSession() != last {
			t.Errorf("%s: handed on %v, closed a session %v; want only the last case to close it", r.ID, r.HandedOn, r.HadSession())
		}
		if i == 0 {
			if r.ContinuedFrom != "" || strings.Contains(continuedNote(r), "continues the session") {
				t.Errorf("t/1 opened the session, yet says it continued one (%q, %q)", r.ContinuedFrom, continuedNote(r))
			}
			continue
		}
		if r.ContinuedFrom != "t/1" || !strings.Contains(continuedNote(r), "continues the session (the server process) case t/1 opened") {
			t.Errorf("%s: continued from %q, first event %q; want t/1's session, said first", r.ID, r.ContinuedFrom, continuedNote(r))
		}
		for _, e := range r.Events {
			if e.Summary != nil && e.Summary.Method == "initialize" {
				t.Errorf("%s's chronology holds an initialize at %d: the handshake is t/1's", r.ID, e.Seq)
			}
		}
	}
	if rep.Teardown.Sessions != 1 || rep.Teardown.Verdict != verdict.Pass {
		t.Errorf("teardown grade: %d sessions, %s; want 1, pass", rep.Teardown.Sessions, rep.Teardown.Verdict)
	}

	starts.Store(0)
	rep = run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: cs, Jobs: 1, Isolate: true, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	if n := starts.Load(); n != 3 || rep.Teardown.Sessions != 3 {
		t.Fatalf("with Isolate: %d processes started, %d sessions graded; want 3 and 3", n, rep.Teardown.Sessions)
	}
	for _, r := range rep.Results {
		if r.ContinuedFrom != "" || r.HandedOn {
			t.Errorf("with Isolate %s shared a session (continued from %q, handed on %v)", r.ID, r.ContinuedFrom, r.HandedOn)
		}
	}
}

// TestTidyCasesShareStdioSessions2026: under 2026-07-28, which has no
// ping, a session is handed on after server/discover answers (a ping
// there is -32601, and no session was ever shared).
func TestTidyCasesShareStdioSessions2026(t *testing.T) {
	alive := func(id string) probe.Case {
		return probe.Case{ID: id, Title: id, Versions: []string{spec.V20260728}, Tidy: true,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				if _, err := e.Alive(ctx); err != nil {
					return verdict.Errorf("%v", err)
				}
				return verdict.Passf("alive")
			}}
	}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Version: spec.V20260728,
		Cases: []probe.Case{alive("m/1"), alive("m/2"), alive("m/3")}, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	for _, r := range rep.Results {
		if r.Outcome.Verdict != verdict.Pass {
			t.Fatalf("%s: %s %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
	if n := starts.Load(); n != 1 || rep.Results[2].ContinuedFrom != "m/1" {
		t.Errorf("%d server processes for three tidy cases, m/3 continued from %q; want 1 and m/1", n, rep.Results[2].ContinuedFrom)
	}
}

// TestOwnIDsContinueOnlyUnspentSessions: a tidy case that chooses its
// request IDs (probe.Case.IDs) continues only a session that has not sent
// them yet (RPC-6: an ID is never reused within a session), and otherwise
// opens its own; a case without IDs of its own, or with other ones, takes
// either session.
func TestOwnIDsContinueOnlyUnspentSessions(t *testing.T) {
	withIDs := func(id string, ids ...jsonrpc.ID) probe.Case {
		return probe.Case{ID: id, Title: id, Versions: []string{spec.V20251125}, Tidy: true, IDs: ids,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				for _, rid := range ids {
					c, err := e.S.Start(ctx, mcp.MethodPing, nil, peer.WithID(rid))
					if err != nil {
						return verdict.Errorf("ping %s: %v", rid, err)
					}
					if _, err := c.Await(ctx); err != nil {
						return verdict.Errorf("ping %s: %v", rid, err)
					}
				}
				return verdict.Passf("pinged")
			}}
	}
	cs := []probe.Case{withIDs("i/zero-a", jsonrpc.IntID(0)), withIDs("i/zero-b", jsonrpc.IntID(0)),
		pinging("i/plain", verdict.Passf("pinged")), withIDs("i/seven", jsonrpc.StringID("7"))}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	for _, r := range rep.Results {
		if r.Outcome.Verdict != verdict.Pass {
			t.Fatalf("%s: %s %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
	if n := starts.Load(); n != 2 {
		t.Errorf("%d server processes started, want 2: i/zero-b's own, besides the first", n)
	}
	continued := map[string]string{}
	for _, r := range rep.Results {
		continued[r.ID] = r.ContinuedFrom
	}
	want := map[string]string{"i/zero-a": "", "i/zero-b": "", "i/plain": "i/zero-b", "i/seven": "i/zero-a"}
	for id, from := range want {
		if continued[id] != from {
			t.Errorf("%s continued the session of %q, want %q", id, continued[id], from)
		}
	}
}

// TestRawChosenIDsStaySpent: an ID a tidy case chose and wrote in a raw
// frame, which the session cannot know it sent, still keeps the next
// case that chooses it off that session.
func TestRawChosenIDsStaySpent(t *testing.T) {
	raw := func(id string) probe.Case {
		rid := jsonrpc.StringID("raw-1")
		return probe.Case{ID: id, Title: id, Versions: []string{spec.V20251125}, Tidy: true, IDs: []jsonrpc.ID{rid},
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				from := e.Log.Len()
				if err := e.S.SendRaw(ctx, []byte(`{"jsonrpc":"2.0","id":"raw-1","method":"ping"}`)); err != nil {
					return verdict.Errorf("%v", err)
				}
				for {
					changed := e.Log.Changed()
					for _, ev := range e.Log.Since(from) {
						if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.ID == rid.String() {
							return verdict.Passf("answered")
						}
					}
					select {
					case <-changed:
					case <-ctx.Done():
						return verdict.Errorf("no answer to raw-1: %v", ctx.Err())
					}
				}
			}}
	}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: []probe.Case{raw("r/a"), raw("r/b")}, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	for _, r := range rep.Results {
		if r.Outcome.Verdict != verdict.Pass || r.ContinuedFrom != "" {
			t.Errorf("%s: %s %s, continued from %q; want a pass on a session of its own", r.ID, r.Outcome.Verdict, r.Outcome.Summary, r.ContinuedFrom)
		}
	}
	if n := starts.Load(); n != 2 {
		t.Errorf("%d server processes, want 2", n)
	}
}

// TestSharedSessionNotHandedOn: a session goes on only after a case that
// found nothing wrong, and only to a tidy case. A warn (work the server
// may still be doing) ends it with its case; a case that is not tidy
// opens its own and leaves the shared one alone.
func TestSharedSessionNotHandedOn(t *testing.T) {
	cs := []probe.Case{
		pinging("t/1", verdict.Passf("pinged")),
		pinging("t/2", verdict.Outcome{Verdict: verdict.Warn, Summary: "something may still run"}),
		fixed("t/untidy", probe.Needs{}, verdict.Passf("not tidy")),
		pinging("t/3", verdict.Passf("pinged")),
		pinging("t/4", verdict.Passf("pinged")),
	}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.ID] = fmt.Sprintf("from %q, handed on %v", r.ContinuedFrom, r.HandedOn)
	}
	want := map[string]string{
		"t/1":      `from "", handed on true`,
		"t/2":      `from "t/1", handed on false`,
		"t/untidy": `from "", handed on false`,
		"t/3":      `from "", handed on true`,
		"t/4":      `from "t/3", handed on false`,
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	if n := starts.Load(); n != 3 || rep.Teardown.Sessions != 3 {
		t.Errorf("%d processes started, %d sessions graded; want 3 (t/1's, t/untidy's, t/3's) and 3", n, rep.Teardown.Sessions)
	}
}

// gapWriter is a Watcher that, when the first case finishes (its session
// handed on, the next case not yet started: Jobs 1), records an event
// into that session as if the server had sent something while it waited.
type gapWriter struct {
	noWatcher
	stand *atomic.Pointer[chrono.Log]
}

func (g gapWriter) Finished(i int, _ results.Result) {
	if i == 0 {
		g.stand.Load().Harness(chrono.KindNote, "stdout", "a frame between cases")
	}
}

// TestSharedSessionNotContinuedAfterTraffic: a session that received
// something while it waited between cases is closed, not continued; the
// next case says so first and opens its own.
func TestSharedSessionNotContinuedAfterTraffic(t *testing.T) {
	var stand atomic.Pointer[chrono.Log]
	first := pinging("t/1", verdict.Passf("pinged"))
	run1 := first.Run
	first.Run = func(ctx context.Context, e *probe.Env) verdict.Outcome {
		stand.Store(e.S.Log())
		return run1(ctx, e)
	}
	cs := []probe.Case{first, pinging("t/2", verdict.Passf("pinged")), pinging("t/3", verdict.Passf("pinged"))}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: cs, Jobs: 1, Watch: gapWriter{stand: &stand},
		CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	second := rep.Results[1]
	if !rep.Results[0].HandedOn || second.ContinuedFrom != "" {
		t.Fatalf("t/1 handed on %v, t/2 continued from %q: want t/1's session offered and not taken", rep.Results[0].HandedOn, second.ContinuedFrom)
	}
	if note := continuedNote(second); !strings.Contains(note, "did not continue the session case t/1 opened: 1 events came while it waited") ||
		!strings.Contains(note, "a frame between cases") {
		t.Errorf("t/2's first event %q: want why t/1's session was not continued, naming what came", note)
	}
	if rep.Results[2].ContinuedFrom != "t/2" {
		t.Errorf("t/3 continued from %q, want t/2 (the session t/2 opened)", rep.Results[2].ContinuedFrom)
	}
	if n := starts.Load(); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

// TestControlledSessionsNotShared: a target that offers the control
// extension keeps per-session state the cases use (operation keys,
// cleanup counters), so no session of it is shared: every tidy case
// starts a process of its own.
func TestControlledSessionsNotShared(t *testing.T) {
	cs := []probe.Case{pinging("t/1", verdict.Passf("pinged")), pinging("t/2", verdict.Passf("pinged")),
		pinging("t/3", verdict.Passf("pinged")), pinging("t/4", verdict.Passf("pinged"))}
	var starts atomic.Int32
	rep := run(t, Config{Target: referenceChildren(&starts, "serve"), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	for _, r := range rep.Results {
		if r.ContinuedFrom != "" || r.HandedOn || r.Outcome.Verdict != verdict.Pass {
			t.Errorf("%s: %s, continued from %q, handed on %v: want a pass on a session of its own", r.ID, r.Outcome.Verdict, r.ContinuedFrom, r.HandedOn)
		}
	}
	if n := starts.Load(); n != 4 {
		t.Errorf("%d processes started for four cases on a controlled target, want 4", n)
	}
}
