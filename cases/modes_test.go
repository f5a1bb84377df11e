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
// (observerKillers), must fail or warn under a rule the fault breaks. A
// killer that skips claims no evidence in the mode (its skip must name
// what would let it run); one that passes, records info, is blocked or
// ends in error must be listed in noKill with the reason, and an entry
// of noKill that no longer applies fails the test.

// evidenceMode is one way of running a row without the control
// extension.
type evidenceMode struct {
	name     string
	observer bool
}

var evidenceModes = []evidenceMode{{"observer", true}, {"wire", false}}

// observerKillers lists, by fault, the cases that catch it through the
// observer when the control extension is hidden (the row's own killers
// stand too): these faults show in the server's handler counts, which
// the observer reports in place of the extension's counters.
var observerKillers = map[refserver.Fault][]string{
	refserver.FaultRespondAfterCancel:   {"cancel/handler-stops"},
	refserver.FaultHangAfterCancel:      {"cancel/handler-stops"},
	refserver.FaultCancelOnDisconnect:   {"http/disconnect-is-not-cancel"},
	refserver.FaultStreamCloseNotCancel: {"http26/stream-close-cancels-during-progress", "http26/stream-close-cancels-silent-handler"},
}

// noKill lists, as "mode row case", a killer that does not need the
// control extension yet does not catch its row's fault in that mode,
// with the reason.
var noKill = map[string]string{}

func init() {
	wireOnly := map[string]string{
		"hang-after-cancel cancel/mid-work-no-response":   "the fault keeps the cancelled handler alive without writing: on the wire that is a cancel honoured, no response; the counters show it, and so does the observer (cancel/handler-stops catches the fault in the observer mode)",
		"leak-on-cancel cancel/duplicate":                 "the fault is in the server's cleanup counters (a resource never released), which only the control extension reads: the wire sees the cancel honoured",
		"double-cleanup cancel/duplicate":                 "the fault is in the server's cleanup counters (a resource released twice), which only the control extension reads: the wire sees the cancel honoured",
		"log-crosses-streams progress/interleaved-tokens": "the step logs name their operation by the reference server's key, which a case sets only through the control extension: a log message that names no request cannot be tied to a stream on the wire",
	}
	// Only the observer shows what became of a call whose stream can be
	// neither kept nor resumed.
	noKill["wire http/"+string(refserver.FaultUnresumableCancelOnDisconnect)+" http/disconnect-is-not-cancel"] = "the dropped stream carried no event ID, so nothing can be resumed, and without an observer nothing on the wire shows whether the handler ran on or was cancelled (the observer mode catches the fault)"
	for _, m := range evidenceModes {
		for key, why := range wireOnly {
			fault, id, _ := strings.Cut(key, " ")
			for _, r := range matrixRows() {
				if string(r.fault) == fault && slices.Contains(r.want, id) {
					noKill[m.name+" "+r.name+" "+id] = why
				}
			}
		}
	}
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
		for _, id := range observerKillers[r.fault] {
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
				t.Errorf("noKill %q no longer applies (the case catches the fault, or the row is gone): remove it", k)
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
						t.Errorf("%s catches %s in the %s mode: remove it from noKill", res.ID, j.r.fault, j.mode.name)
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
