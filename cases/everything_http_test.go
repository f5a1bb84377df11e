package cases_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// startEverythingHTTP runs server-everything in streamableHttp mode on a
// free port and returns its endpoint once it says it listens.
func startEverythingHTTP(t *testing.T, node string) string {
	t.Helper()
	url, _ := targets.EverythingHTTP(t, node, serverEverything)
	return url
}

// checkEverythingHTTP holds an HTTP run of the catalogue against the
// real server-everything (TestSameVerdictsAsTheCarefulRun/http, whose run
// it shares) to what the wire decides without the control extension,
// checked by hand, and pins its schema check.
func checkEverythingHTTP(t *testing.T, rep *results.Report) {
	t.Helper()
	got := map[string]verdict.Outcome{}
	for _, r := range rep.Results {
		got[r.ID] = r.Outcome
	}
	// The wire decides these without the control extension.
	for id, want := range map[string][]string{
		// The resumed stream replays every stored event after the ID,
		// other streams' included (its InMemoryEventStore ignores the
		// stream): call b's progress and result come on a's resumption.
		"http/replay-only-disconnected-stream": {"fail HTTP-44"},
		// The cancelled call's stream is never ended: no response comes,
		// and the stream stays open until the session ends.
		"http/cancel-202-then-no-response": {"warn CAN-8"},
		// A resume that arrives before the rest of the call is stored
		// replays it and then carries nothing live (the store returns an
		// event ID where the SDK expects a stream ID): the result comes
		// only on a second resume. One that arrives later replays all.
		// Either way the call ran on: never HTTP-25.
		"http/resume-while-running":     {"warn HTTP-21", "pass "},
		"http/disconnect-is-not-cancel": {"warn HTTP-21", "pass "},
		"http/resume-after-completion":  {"pass "},
		// A ping that reuses the id of a running call is answered on its
		// own POST stream, and the call's stream then stays silent: its
		// remaining progress and its result are never sent (the
		// transport maps an id to one stream, and the ping's took the
		// call's place). The first request was valid and is owed its
		// answer. Now and then, on a loaded machine, the call's stream
		// keeps its result after the ping's answer (info: both served).
		"robust/duplicate-inflight-id": {"fail RPC-2", "info "},
		// An ill-typed tools/list cursor gets -32603: no sentence fixes
		// the code, so info.
		"robust/params-tools-list-cursor": {"info "},
	} {
		o := got[id]
		if o.Unexercised {
			continue // a run that could not exercise the rule claims nothing (unobserved)
		}
		if v := string(o.Verdict) + " " + o.Requirement; !slices.Contains(want, v) {
			t.Errorf("%s: %q, want one of %q: %s", id, v, want, o.Summary)
		}
	}
	checkEverythingHTTPSchema(t, rep)
}

// checkEverythingHTTPSchema pins the schema check of server-everything
// over HTTP: every message it sends is of the schema but
// one, the priming event (an event ID and `data: {}`) of another stream
// that a Last-Event-ID resume replays as a message of its own, and `{}`
// is no JSON-RPC message (RPC-2). http/resume-after-completion always
// meets it: its second call, and so its priming event, starts after the
// dropped stream's last event ID. http/replay-only-disconnected-stream
// meets it only when call b's priming event is stored after a's first
// progress. Nothing else breaks the schema.
func checkEverythingHTTPSchema(t *testing.T, rep *results.Report) {
	t.Helper()
	s := rep.Schema
	if s.Err != "" || s.Checked == 0 {
		t.Fatalf("schema check did not run: %q, %d checked", s.Err, s.Checked)
	}
	t.Logf("schema: %d inbound messages checked, %d unchecked, %d distinct violations", s.Checked, s.Unchecked, len(s.Findings))
	const replayed = "schema/JSONRPCMessage#anyOf"
	for _, f := range s.Findings {
		if f.ID() != replayed || f.Requirement != "RPC-2" {
			t.Errorf("schema: %s (%s), first in %s at seq %d: want only %s under RPC-2", f.ID(), f.Requirement, f.FirstCase, f.Seq, replayed)
		}
	}
	if len(s.Findings) != 1 {
		t.Errorf("schema: %d distinct violations, want 1 (%s, the replayed priming event)", len(s.Findings), replayed)
	}
	for _, r := range rep.Results {
		for _, v := range r.Schema.Violations {
			ev, ok := eventAt(r.Events, v.Seq)
			t.Logf("schema: %s at seq %d: %s", r.ID, v.Seq, v)
			if !ok || strings.TrimSpace(string(ev.Raw)) != "{}" || ev.Dir != chrono.In || !strings.HasPrefix(ev.Channel, "SSE GET") {
				t.Errorf("%s: the violation at seq %d is not a replayed `{}` on a resumed GET stream: %+v", r.ID, v.Seq, ev)
			}
		}
		if r.ID == "http/resume-after-completion" && r.Outcome.Verdict == verdict.Pass && len(r.Schema.Violations) == 0 {
			t.Errorf("%s: its resume replays the second call's priming event as `{}`, and no schema violation was found", r.ID)
		}
	}
}

// eventAt returns the event of events whose sequence number is seq.
func eventAt(events []chrono.Event, seq uint64) (chrono.Event, bool) {
	for _, ev := range events {
		if ev.Seq == seq {
			return ev, true
		}
	}
	return chrono.Event{}, false
}
