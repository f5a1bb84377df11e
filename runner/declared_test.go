//go:build unix

package runner

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestDeclaredNeedsDecideWithoutProcess: over stdio, once a case's
// session has shown what the server declares, a later case that the
// declaration skips (it needs the control extension, or a server without
// tasks) is decided on it without starting a process; its chronology
// names the case whose session declared it. The verdicts are those of a
// run that decides every case on a session of its own (Isolate), and a
// target that offers the extension runs the case that needs it.
func TestDeclaredNeedsDecideWithoutProcess(t *testing.T) {
	cs := []probe.Case{
		fixed("d/plain", probe.Needs{}, verdict.Passf("ran")),
		fixed("d/control", probe.Needs{Control: true, ControlFor: "its checkpoints"}, verdict.Passf("ran with control")),
		fixed("d/no-tasks", probe.Needs{NoTasks: true}, verdict.Passf("ran without tasks")),
		fixed("d/witness", probe.Needs{Witness: "whether the work stops"}, verdict.Passf("ran with a witness")),
	}
	unobserved, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	unobserved.Observer = nil
	var starts atomic.Int32
	cfg := Config{Target: referenceChildren(&starts, "uncontrolled"), Profile: unobserved, Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet}
	rep := run(t, cfg)
	if n := starts.Load(); n != 1 {
		t.Fatalf("%d server processes started, want 1: the three skips are decided on d/plain's session", n)
	}
	want := map[string]string{
		"d/plain":    "pass ran",
		"d/control":  "skip " + ControlSkip(cs[1].Needs),
		"d/no-tasks": "skip the server declares the tasks capability; this case is for servers without it",
		"d/witness":  "skip " + probe.NoObserverSkip("whether the work stops"),
	}
	verdicts := func(rep *results.Report) map[string]string {
		got := map[string]string{}
		for _, r := range rep.Results {
			got[r.ID] = string(r.Outcome.Verdict) + " " + r.Outcome.Summary
		}
		return got
	}
	for id, v := range verdicts(rep) {
		if v != want[id] {
			t.Errorf("%s: %q, want %q", id, v, want[id])
		}
	}
	for _, r := range rep.Results[1:] {
		if r.HadSession() || len(r.Events) == 0 || !strings.Contains(r.Events[0].Text, "decided without a session of its own (over stdio, a server process): the session of case d/plain") {
			t.Errorf("%s: had a session %v, chronology %v; want none, and a first event naming d/plain's session", r.ID, r.HadSession(), r.Events)
		}
	}
	if rep.Teardown.Sessions != 1 {
		t.Errorf("the teardown grade counts %d sessions, want 1", rep.Teardown.Sessions)
	}

	starts.Store(0)
	cfg.Isolate = true
	careful := run(t, cfg)
	if n := starts.Load(); n != 4 {
		t.Fatalf("with Isolate %d processes started, want 4", n)
	}
	for id, v := range verdicts(careful) {
		if v != want[id] {
			t.Errorf("with Isolate %s: %q, want %q", id, v, want[id])
		}
	}

	starts.Store(0)
	controlled := run(t, Config{Target: referenceChildren(&starts, "serve"), Profile: unobserved, Cases: []probe.Case{cs[0], cs[1], cs[3]}, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	for _, r := range controlled.Results[1:] {
		if r.Outcome.Verdict != verdict.Pass {
			t.Errorf("a target with the control extension: %s %s %s; want the case run", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
	if n := starts.Load(); n != 3 {
		t.Errorf("a target with the control extension: %d starts, want 3", n)
	}

	starts.Store(0)
	observed := run(t, Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: []probe.Case{cs[0], cs[3]}, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	if r := observed.Results[1]; r.Outcome.Verdict != verdict.Pass || starts.Load() != 2 {
		t.Errorf("a profile that names an observer: %s %s after %d starts; want the case run, 2 starts", r.Outcome.Verdict, r.Outcome.Summary, starts.Load())
	}
}

// TestElsewhereOnHTTP2026: a case that another case judges under
// 2026-07-28 over Streamable HTTP is skipped there before anything
// starts, with the reason it declares, and only there.
func TestElsewhereOnHTTP2026(t *testing.T) {
	n := probe.Needs{ElsewhereOnHTTP2026: "judged by x/other there"}
	for _, tc := range []struct {
		version, transport, want string
	}{
		{spec.V20260728, TransportHTTP, "judged by x/other there"},
		{spec.V20260728, TransportStdio, ""},
		{spec.V20251125, TransportHTTP, ""},
	} {
		cfg := Config{Version: tc.version, Target: Target{Transport: tc.transport}}
		if got := staticSkipReason(cfg, n); got != tc.want {
			t.Errorf("%s over %s: skip %q, want %q", tc.version, tc.transport, got, tc.want)
		}
	}
}

// TestListedRevisionsDecidedByTheNegotiation: under 2025-11-25 a case
// that compares with what server/discover lists is skipped before
// anything starts when the run's negotiation found server/discover
// unserved, saying what the probe got; without that finding it runs.
func TestListedRevisionsDecidedByTheNegotiation(t *testing.T) {
	cs := []probe.Case{fixed("d/listed", probe.Needs{NoHandshake: true, ListedRevisions: true}, verdict.Passf("compared"))}
	var starts atomic.Int32
	cfg := Config{Target: referenceChildren(&starts, "uncontrolled"), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet,
		Negotiation: &negotiate.Survey{Probe2026: &negotiate.Probe{Err: errors.New("method not found"), Failure: "-32601 Method not found"}}}
	rep := run(t, cfg)
	if o := rep.Results[0].Outcome; o.Verdict != verdict.Skip || !strings.Contains(o.Summary, "the run's negotiation probe failed: -32601 Method not found") || starts.Load() != 0 {
		t.Errorf("after a failed server/discover probe: %s %q, %d processes; want a skip naming the probe's answer, none started", o.Verdict, o.Summary, starts.Load())
	}
	cfg.Negotiation = nil
	rep = run(t, cfg)
	if o := rep.Results[0].Outcome; o.Verdict != verdict.Pass || starts.Load() != 1 {
		t.Errorf("without a negotiation: %s %q after %d starts; want the case run", o.Verdict, o.Summary, starts.Load())
	}
}

// TestTasksExtensionNeed: a case that needs the tasks extension is skipped
// on a server whose server/discover lists no extension, or another one,
// and runs on one that lists it.
func TestTasksExtensionNeed(t *testing.T) {
	n := probe.Needs{TasksExtension: true}
	for _, tc := range []struct {
		caps, want string
	}{
		{`{}`, "server/discover does not list the io.modelcontextprotocol/tasks extension"},
		{`{"extensions":{"io.example/other":{}}}`, "server/discover does not list the io.modelcontextprotocol/tasks extension"},
		{`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, ""},
	} {
		var caps map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.caps), &caps); err != nil {
			t.Fatal(err)
		}
		if got := sessionSkip(n, nil, &peer.InitResult{Capabilities: caps}, false); got != tc.want {
			t.Errorf("capabilities %s: skip %q, want %q", tc.caps, got, tc.want)
		}
	}
}

// TestInitializeRefusedDecidedByTheNegotiation: a case about servers that
// refuse initialize is skipped before anything starts when the run's
// negotiation saw initialize agree, and runs otherwise.
func TestInitializeRefusedDecidedByTheNegotiation(t *testing.T) {
	n := probe.Needs{NoHandshake: true, InitializeRefused: true}
	agreed := &negotiate.Survey{Probe2025: &negotiate.Probe{Init: &peer.InitResult{ProtocolVersion: spec.V20251125}}}
	refused := &negotiate.Survey{Probe2025: &negotiate.Probe{Err: errors.New("unsupported"), Failure: "-32022"}}
	for _, tc := range []struct {
		name string
		neg  *negotiate.Survey
		want string
	}{
		{"agreed", agreed, `initialize agreed to "2025-11-25" (the run's negotiation probe): a dual-era server; LIF-49 is for servers that support only modern versions`},
		{"refused", refused, ""},
		{"no negotiation", nil, ""},
	} {
		cfg := Config{Version: spec.V20260728, Negotiation: tc.neg, Target: Target{Transport: TransportStdio}}
		if got := staticSkipReason(cfg, n); got != tc.want {
			t.Errorf("%s: skip %q, want %q", tc.name, got, tc.want)
		}
	}
}
