package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/revisionsrv"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// revisionTarget dials internal/revisionsrv in this process.
func revisionTarget(mode revisionsrv.Mode) Target {
	return Target{
		Name:      "revisionsrv " + string(mode),
		Transport: TransportInProcess,
		Dial: func(_ context.Context, log *chrono.Log) (transport.Conn, error) {
			return revisionsrv.Conn(mode, log), nil
		},
	}
}

// sessionCase records the session it is given: the revision it speaks
// and what it knows of the server, then passes.
func sessionCase(id string, versions []string, needs probe.Needs, seen chan<- string) probe.Case {
	return probe.Case{ID: id, Title: id, Versions: versions, Needs: needs,
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			what := e.S.Revision()
			if srv := e.S.Server(); srv != nil {
				what += " " + srv.ServerInfo.Name
			}
			seen <- what
			if _, err := e.S.ListTools(ctx); err != nil {
				return verdict.Errorf("tools/list: %v", err)
			}
			return verdict.Passf("ran")
		}}
}

// TestRunProtocol: the survey picks the revision the run speaks, every
// result and the report say which and why, a 2026-07-28 case gets a
// modern session that has discovered the server (no handshake), a case
// of the other revision is skipped with the reason (never an error), and
// a strict 2026-07-28 server asked for 2025-11-25 ends the run before any
// case with one line.
func TestRunProtocol(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // safety net
	defer cancel()
	seen := make(chan string, 8)
	cases := []probe.Case{
		sessionCase("a/legacy", []string{spec.V20251125}, probe.Needs{}, seen),
		sessionCase("a/modern", []string{spec.V20260728}, probe.Needs{Capabilities: []string{"tools"}}, seen),
		sessionCase("a/both", []string{spec.V20251125, spec.V20260728}, probe.Needs{}, seen),
	}
	for _, tc := range []struct {
		name     string
		server   revisionsrv.Mode
		mode     negotiate.Mode
		wantRevs []string
		reason   string
		want     []string // "ID@REVISION verdict: summary"
		sessions []string // what the cases that ran saw, in order
		err      string
	}{
		{name: "strict server, auto", server: revisionsrv.Only2026, mode: negotiate.ModeAuto, wantRevs: []string{spec.V20260728},
			reason:   "2026-07-28: server/discover listed it",
			want:     []string{"a/legacy@2026-07-28 skip: applies to 2025-11-25 only", "a/modern@2026-07-28 pass: ran", "a/both@2026-07-28 pass: ran"},
			sessions: []string{"2026-07-28 revisionsrv-2026-only", "2026-07-28 revisionsrv-2026-only"}},
		{name: "strict server, 2025-11-25", server: revisionsrv.Only2026, mode: negotiate.Mode20251125,
			err: "the server does not support 2025-11-25: it offers 2026-07-28 (initialize was answered -32022 UnsupportedProtocolVersion)"},
		{name: "2025 server, auto", server: revisionsrv.MethodNotFound2025, mode: negotiate.ModeAuto, wantRevs: []string{spec.V20251125},
			reason:   "2025-11-25: server/discover failed (-32601 Method not found); initialize agreed",
			want:     []string{"a/legacy@2025-11-25 pass: ran", "a/modern@2025-11-25 skip: applies to 2026-07-28 only", "a/both@2025-11-25 pass: ran"},
			sessions: []string{"2025-11-25 revisionsrv-2025-32601", "2025-11-25 revisionsrv-2025-32601"}},
		{name: "dual server, both", server: revisionsrv.Dual, mode: negotiate.ModeBoth, wantRevs: []string{spec.V20251125, spec.V20260728},
			reason: "2025-11-25: initialize agreed to 2025-11-25; 2026-07-28: server/discover listed it",
			want: []string{"a/legacy@2025-11-25 pass: ran", "a/modern@2025-11-25 skip: applies to 2026-07-28 only", "a/both@2025-11-25 pass: ran",
				"a/legacy@2026-07-28 skip: applies to 2025-11-25 only", "a/modern@2026-07-28 pass: ran", "a/both@2026-07-28 pass: ran"},
			sessions: []string{"2025-11-25 revisionsrv-dual", "2025-11-25 revisionsrv-dual", "2026-07-28 revisionsrv-dual", "2026-07-28 revisionsrv-dual"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := RunProtocol(ctx, Config{Target: revisionTarget(tc.server), Cases: cases}, tc.mode, negotiate.Options{})
			if tc.err != "" {
				if rep != nil || err == nil || err.Error() != tc.err || !errors.Is(err, negotiate.ErrNoCommonRevision) {
					t.Fatalf("RunProtocol = %v, %v; want no report and %q", rep, err, tc.err)
				}
				select {
				case s := <-seen:
					t.Errorf("a case ran (%s) although the run should have ended first", s)
				default:
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rep.Results {
				got = append(got, r.ID+"@"+r.Revision+" "+string(r.Outcome.Verdict)+": "+r.Outcome.Summary)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			var sessions []string
			for range tc.sessions {
				sessions = append(sessions, <-seen)
			}
			if diff := cmp.Diff(tc.sessions, sessions); diff != "" {
				t.Errorf("sessions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRevs, rep.Revisions); diff != "" {
				t.Errorf("revisions (-want +got):\n%s", diff)
			}
			if got := rep.NegotiationLine(); got != tc.reason {
				t.Errorf("negotiation %q, want %q", got, tc.reason)
			}
			if rep.Counts[verdict.Error] != 0 {
				t.Errorf("%d errors", rep.Counts[verdict.Error])
			}
		})
	}
}

// Test2026CaseSession: a 2026-07-28 case's chronology begins with
// server/discover under the envelope, never initialize; a case that
// opens its own session (NoHandshake) gets the envelope and no discover.
func Test2026CaseSession(t *testing.T) {
	ctx := context.Background()
	methods := func(r results.Result) []string {
		var out []string
		for _, ev := range r.Events {
			if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil {
				out = append(out, ev.Summary.Method)
			}
		}
		return out
	}
	list := func(id string, needs probe.Needs) probe.Case {
		return probe.Case{ID: id, Title: id, Versions: []string{spec.V20260728}, Needs: needs,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				if _, ok := e.S.Envelope(); !ok {
					return verdict.Errorf("the session has no envelope")
				}
				if _, err := e.S.ListTools(ctx); err != nil {
					return verdict.Errorf("%v", err)
				}
				return verdict.Passf("ran")
			}}
	}
	rep, err := Run(ctx, Config{Target: revisionTarget(revisionsrv.Only2026), Version: spec.V20260728,
		Cases: []probe.Case{list("m/discovered", probe.Needs{}), list("m/own", probe.Needs{NoHandshake: true})}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{{mcp.MethodServerDiscover, mcp.MethodToolsList}, {mcp.MethodToolsList}} {
		r := rep.Results[i]
		if r.Outcome.Verdict != verdict.Pass {
			t.Errorf("%s: %s %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
		if diff := cmp.Diff(want, methods(r)); diff != "" {
			t.Errorf("%s sent (-want +got):\n%s", r.ID, diff)
		}
	}
	if rep.Server == nil || rep.Server.Name != "revisionsrv-2026-only" {
		t.Errorf("report server %+v, want the discover result's serverInfo", rep.Server)
	}
}

// Test2026DiscoverFailure: on a server that does not answer
// server/discover, a 2026-07-28 case that needs what the server declares
// is an error saying so, and one that does not runs.
func Test2026DiscoverFailure(t *testing.T) {
	rep, err := Run(context.Background(), Config{Target: revisionTarget(revisionsrv.MethodNotFound2025), Version: spec.V20260728,
		Cases: []probe.Case{
			{ID: "m/caps", Title: "caps", Versions: []string{spec.V20260728}, Needs: probe.Needs{Capabilities: []string{"tools"}},
				Run: func(context.Context, *probe.Env) verdict.Outcome { return verdict.Passf("ran") }},
			{ID: "m/plain", Title: "plain", Versions: []string{spec.V20260728},
				Run: func(context.Context, *probe.Env) verdict.Outcome { return verdict.Passf("ran") }},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if o := rep.Results[0].Outcome; o.Verdict != verdict.Error || !strings.Contains(o.Summary, "server/discover failed, so what the server declares is unknown") {
		t.Errorf("m/caps: %s %s", o.Verdict, o.Summary)
	}
	if o := rep.Results[1].Outcome; o.Verdict != verdict.Pass {
		t.Errorf("m/plain: %s %s", o.Verdict, o.Summary)
	}
}

// TestRevisionChanges: a case that passes under one revision and fails
// under the other is a change; skips, errors and agreements are not.
func TestRevisionChanges(t *testing.T) {
	res := func(id, rev string, v verdict.Verdict) results.Result {
		return results.Result{ID: id, Title: id, Revision: rev, Outcome: verdict.Outcome{Verdict: v, Summary: string(v) + " under " + rev}}
	}
	rs := []results.Result{
		res("c/broke", spec.V20251125, verdict.Pass), res("c/same", spec.V20251125, verdict.Pass),
		res("c/skip", spec.V20251125, verdict.Pass), res("c/warned", spec.V20251125, verdict.Warn),
		res("c/only", spec.V20251125, verdict.Pass), res("c/err", spec.V20251125, verdict.Pass),
		res("c/broke", spec.V20260728, verdict.Fail), res("c/same", spec.V20260728, verdict.Pass),
		res("c/skip", spec.V20260728, verdict.Skip), res("c/warned", spec.V20260728, verdict.Info),
		res("c/err", spec.V20260728, verdict.Error),
	}
	revs := []string{spec.V20251125, spec.V20260728}
	var got []string
	for _, c := range revisionChanges(rs, revs) {
		got = append(got, c.ID+" breaks under "+c.Broke())
	}
	if diff := cmp.Diff([]string{"c/broke breaks under 2026-07-28", "c/warned breaks under 2025-11-25"}, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	rep := &results.Report{Results: rs, Revisions: revs}
	if diff := cmp.Diff(map[string]int{spec.V20251125: 2}, rep.RevisionOnly()); diff != "" {
		t.Errorf("RevisionOnly (-want +got):\n%s", diff)
	}
}
