package cases_test

import (
	"slices"
	"testing"
	"testing/synctest"
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

// sharedStdioTarget is the reference server with the control extension
// hidden and the given fault, served in process but presented as a stdio
// target, so that the runner shares its sessions between cases as it
// does a user's stdio server's processes.
func sharedStdioTarget(fault refserver.Fault) runner.Target {
	t := runner.InProcessTarget("reference (control hidden, stdio lanes)",
		refserver.New(refserver.Options{Faults: refserver.FaultSet{fault: true}, HideControl: true}).ServePipes, transport.StreamConfig{})
	t.Transport = runner.TransportStdio
	return t
}

// TestSharedLanesStillCatchFaults: a case that continues a session
// another case of its kind used (the task lanes, the cancel lanes) still
// catches its fault: the frames set aside are the earlier case's, never
// its own. Each row runs the first case of the killer's kind, then the
// killer, on one lane (Jobs 1), against the reference server with the
// fault and without the control extension: the killer continues the
// session whose first case left its task or cancelled request behind,
// and must still fail or warn under the fault's requirement. Without the fault the same lane passes
// the killer (TestSameVerdictsAsTheCarefulRun shows the lanes change no
// verdict against a real server).
func TestSharedLanesStillCatchFaults(t *testing.T) {
	t.Parallel()
	prof := wireProfile(t)
	for _, tc := range []struct {
		fault  refserver.Fault
		killer string
		breaks string
	}{
		{refserver.FaultStatusChangesAfterCancelled, "tasks/cancelled-stays-cancelled", "TSK-65"},
		{refserver.FaultCompletedTaskReopens, "tasks/status-transitions", "TSK-31"},
		{refserver.FaultIDZeroAbsent, "cancel/id-zero", "RPC-4"},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			t.Parallel()
			// The in-process server's paced tools and the cases' windows
			// (id-zero-absent's is a wait for an answer that never comes)
			// run on the clock of a synctest bubble.
			synctest.Test(t, func(t *testing.T) { sharedLaneCatches(t, prof, tc.fault, tc.killer, tc.breaks) })
		})
	}
}

// sharedLaneCatches is one row of TestSharedLanesStillCatchFaults: the
// killer, continuing a lane under fault, must fail or warn citing breaks.
func sharedLaneCatches(t *testing.T, prof *profile.Profile, fault refserver.Fault, killerID, breaks string) {
	var killer probe.Case
	for _, c := range cases.All() {
		if c.ID == killerID {
			killer = c
		}
	}
	kind := killer.Sharing()
	if kind != probe.ShareTasks && kind != probe.ShareCancels {
		t.Fatalf("%s shares as %d: not a case of the task or cancel lanes", killerID, kind)
	}
	// The lane: the first case of the killer's kind that starts
	// before it (the runner starts the cases that await a task's
	// end first, then in catalogue order), which leaves its task
	// or cancelled request behind; then the killer.
	var lane []probe.Case
	for _, c := range cases.All() {
		if c.ID == killerID {
			continue
		}
		if c.Sharing() == kind && c.AppliesTo(spec.V20251125) && c.AwaitsTaskEnd == killer.AwaitsTaskEnd {
			lane = append(lane, c, killer)
			break
		}
	}
	rep, err := runner.Run(t.Context(), runner.Config{Target: sharedStdioTarget(fault), Profile: prof, Cases: lane,
		Version: spec.V20251125, Jobs: 1, CloseTimeout: 10 * time.Second, CaseTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Results, func(r results.Result) bool { return r.ID == killerID })
	r := rep.Results[i]
	if r.ContinuedFrom == "" {
		for _, x := range rep.Results[:i+1] {
			t.Logf("%s handed on %v, first event %q", x.ID, x.HandedOn, x.Events[0].Text)
			for _, ev := range x.Events[max(0, len(x.Events)-12):] {
				t.Logf("   %d %s %s %v %s", ev.Seq, ev.Channel, ev.Kind, ev.Summary, ev.Text)
			}
		}
		t.Fatalf("%s did not continue a shared session (the cases before it: %s): the row shows nothing about the lanes", killerID, verdicts(rep.Results[:i]))
	}
	o := r.Outcome
	if o.Verdict != verdict.Fail && o.Verdict != verdict.Warn || o.Requirement != breaks {
		t.Errorf("%s, continuing the session %s opened, under %s: %s %s, want a fail or warn citing %s: %s",
			killerID, r.ContinuedFrom, fault, o.Verdict, o.Requirement, breaks, o.Summary)
	}
}

// verdicts lists the results' cases and verdicts, for a message.
func verdicts(rs []results.Result) string {
	out := ""
	for _, r := range rs {
		out += r.ID + " " + string(r.Outcome.Verdict) + "; "
	}
	return out
}
