package cases_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// The mutation matrix in the evidence modes of a server we do not
// control. TestMutationMatrix runs every row with the
// control extension; here each row runs again against the reference
// server with the extension hidden (refserver.Options.HideControl), its
// tools ungated and paced on their own clock as a user's server is:
//
//   - observer: the profile names the reference server's observer tool
//     (docs/observer.md), the evidence path for what the wire cannot show;
//   - wire: no observer either: the wire's timing and the target's
//     answers are all there is.
//
// In each mode a row's killers that do not need the control extension
// (Needs.Control), and in the observer mode the observer's own killers
// (refserver.FaultSpec.ObserverKillers), must fail or warn under a rule
// the fault breaks. A killer that skips claims no evidence in the mode
// (its skip must name what would let it run); one that passes, records
// info, is blocked or ends in error must be listed in the fault's
// MissedWithoutControl with the reason, and an entry that no longer
// applies fails the test.

// evidenceMode is one way of running a row without the control
// extension.
type evidenceMode struct {
	name     string
	observer bool
}

var evidenceModes = []evidenceMode{{refserver.EvidenceObserver, true}, {refserver.EvidenceWire, false}}

// noKillReasons lists, as "mode row case", a killer that does not need
// the control extension yet does not catch its row's fault in that mode,
// with the reason (refserver.FaultSpec.MissedWithoutControl).
func noKillReasons() map[string]string {
	out := map[string]string{}
	for _, r := range matrixRows() {
		for _, e := range specOf(r.fault).MissedWithoutControl {
			for _, m := range evidenceModes {
				if (e.Mode == refserver.EvidenceBoth || e.Mode == m.name) && slices.Contains(r.want, e.Case) {
					out[m.name+" "+r.name+" "+e.Case] = e.Why
				}
			}
		}
	}
	return out
}

// modeProfile is the profile of a mode: the reference server's tools
// ungated and paced on their own clock (wireProfile), with its observer
// in the observer mode.
func modeProfile(t *testing.T, m evidenceMode) *profile.Profile {
	p := wireProfile(t)
	if m.observer {
		ref, err := profile.Builtin(profile.Reference)
		if err != nil {
			t.Fatal(err)
		}
		p.Observer = ref.Observer
	}
	return p
}

// modeKillers are the cases that must catch row's fault in mode m.
func modeKillers(r row, m evidenceMode) []probe.Case {
	ids := slices.Clone(r.want)
	if m.observer {
		for _, id := range specOf(r.fault).ObserverKillers {
			if id == "cancel/handler-stops" && r.overHTTP && r.rev() == spec.V20260728 {
				continue // there the cancel is a stream close, which http26/stream-close-* judge
			}
			if (strings.HasPrefix(id, "http") == r.overHTTP || !strings.HasPrefix(id, "http")) && appliesTo(id, r.rev()) {
				ids = append(ids, id)
			}
		}
	}
	var out []probe.Case
	for _, c := range cases.All() {
		if slices.Contains(ids, c.ID) && !c.Needs.Control && !slices.ContainsFunc(out, func(o probe.Case) bool { return o.ID == c.ID }) {
			out = append(out, c)
		}
	}
	return out
}

func TestMutationMatrixWithoutControl(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the matrix without the control extension runs paced tools in real time")
	}
	noKill := noKillReasons()
	var (
		mu      sync.Mutex
		kills   int
		used    = map[string]bool{}
		entered int
		total   int
	)
	type job struct {
		mode evidenceMode
		r    row
		sel  []probe.Case
	}
	var jobs []job
	for _, r := range matrixRows() {
		for _, m := range evidenceModes {
			if sel := modeKillers(r, m); len(sel) > 0 {
				jobs = append(jobs, job{m, r, sel})
			}
		}
	}
	total = len(jobs)
	t.Cleanup(func() {
		if entered < total || t.Failed() {
			return
		}
		t.Logf("%d (fault, case, mode) kills without the control extension", kills)
		for _, k := range slices.Sorted(maps.Keys(noKill)) {
			if !used[k] {
				t.Errorf("the MissedWithoutControl entry for %q no longer applies (the case catches the fault, or the row is gone): remove it from refserver/faulttable.go", k)
			}
		}
	})
	for _, j := range jobs {
		name := j.mode.name + "/" + j.r.name
		t.Run(name, func(t *testing.T) {
			entered++
			var (
				rep  *results.Report
				err  error
				done = make(chan struct{})
			)
			prof := modeProfile(t, j.mode)
			go func() {
				defer close(done)
				rep, err = runEach(j.r.mk(true), runner.Config{Profile: prof, Cases: j.sel, Version: j.r.rev(),
					CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
			}()
			t.Parallel()
			<-done
			if err != nil {
				t.Fatal(err)
			}
			breaks := j.r.faultBreaks()
			for _, res := range rep.Results {
				o := res.Outcome
				key := fmt.Sprintf("%s %s %s", j.mode.name, j.r.name, res.ID)
				switch {
				case (o.Verdict == verdict.Fail || o.Verdict == verdict.Warn) &&
					(slices.Contains(breaks, o.Requirement) || isCollateral(j.r.fault, res.ID, o.Requirement)):
					mu.Lock()
					kills++
					mu.Unlock()
					if _, listed := noKill[key]; listed {
						t.Errorf("%s catches %s in the %s mode: remove it from the fault's MissedWithoutControl", res.ID, j.r.fault, j.mode.name)
					}
				case o.Verdict == verdict.Fail || o.Verdict == verdict.Warn:
					t.Errorf("%s: %s %s under %s, documented to break %v: %s", res.ID, o.Verdict, o.Requirement, j.r.fault, breaks, chrono.Sanitize(o.Summary, false))
				case o.Verdict == verdict.Skip:
					// No evidence claimed in this mode; the skip says why.
					if !strings.Contains(o.Summary, "observer") && !strings.Contains(o.Summary, "control") && !strings.Contains(o.Summary, "applies to") && !o.Unexercised {
						t.Errorf("%s skipped in the %s mode without naming what would let it run: %s", res.ID, j.mode.name, o.Summary)
					}
				default:
					if _, listed := noKill[key]; listed {
						mu.Lock()
						used[key] = true
						mu.Unlock()
						continue
					}
					t.Errorf("%s did not catch %s in the %s mode: %s %s", res.ID, j.r.fault, j.mode.name, o.Verdict, chrono.Sanitize(o.Summary, false))
				}
			}
		})
	}
}

// TestObserverVerdictPointsAtItsAnswer: http/disconnect-is-not-cancel,
// judging a stream that carried no event ID by the observer, points its
// verdict at the observer's answer that showed the handler cancelled
// (an answer to a call of the observer tool), so that a reader of the
// chronology finds the evidence at the seq the verdict names.
func TestObserverVerdictPointsAtItsAnswer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the observer mode runs paced tools in real time")
	}
	var sel []probe.Case
	for _, c := range cases.All() {
		if c.ID == "http/disconnect-is-not-cancel" {
			sel = append(sel, c)
		}
	}
	prof := modeProfile(t, evidenceMode{"observer", true})
	rep, err := runEach(hiddenControlTarget(refserver.FaultSet{refserver.FaultUnresumableCancelOnDisconnect: true}, true),
		runner.Config{Profile: prof, Cases: sel, Version: spec.V20251125, CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	o := r.Outcome
	if o.Verdict != verdict.Warn || o.Requirement != "HTTP-25" {
		t.Fatalf("%s %s: %s, want warn HTTP-25", o.Verdict, o.Requirement, chrono.Sanitize(o.Summary, false))
	}
	var answerID string
	for _, ev := range r.Events {
		if ev.Seq == o.ActualSeq && ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Kind == "result" {
			answerID = ev.Summary.ID
		}
	}
	asked := false
	for _, ev := range r.Events {
		if ev.Dir != chrono.Out || ev.Summary == nil || ev.Summary.ID != answerID || answerID == "" {
			continue
		}
		m, err := ev.Message()
		var p struct {
			Name string `json:"name"`
		}
		asked = err == nil && m.Method == "tools/call" && json.Unmarshal(m.Params, &p) == nil && p.Name == prof.Observer.Tool
	}
	if !asked {
		logChronology(t, r)
		t.Errorf("the verdict points at seq %d, which is no answer to a call of the observer %q (actual: %s)", o.ActualSeq, prof.Observer.Tool, chrono.Sanitize(o.Actual, false))
	}
	if want := fmt.Sprintf("its answer at seq %d:", o.ActualSeq); !strings.Contains(o.Actual, want) {
		t.Errorf("the actual %q does not name the observer's answer (%q)", chrono.Sanitize(o.Actual, false), want)
	}
}
