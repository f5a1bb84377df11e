package cases_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// cases26 are the catalogue's http26/ and tasks26/ cases.
func cases26() []probe.Case {
	var out []probe.Case
	for _, c := range cases.All() {
		if strings.HasPrefix(c.ID, "http26/") || strings.HasPrefix(c.ID, "tasks26/") {
			out = append(out, c)
		}
	}
	return out
}

// run26 runs the http26/ and tasks26/ cases under 2026-07-28 against the
// target mk makes, each case against a server of its own.
func run26(t *testing.T, mk target) *runner.Report {
	t.Helper()
	prof, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := runEach(mk, runner.Config{Version: spec.V20260728, Profile: prof, Cases: cases26(),
		CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// collateral26 lists, as "fault case requirement", a case of these areas
// that fails under a fault citing a requirement the fault is not
// documented to break, with the reason the evidence fits it too (the
// mutation matrix's collateral, for these cases).
var collateral26 = map[string]string{
	"sticky-capabilities tasks26/methods-need-extension TSX-56": "the task the undeclared tasks/get names was created by a request that declared the extension; a server on which that declaration sticks serves the undeclared request, which is TSX-56's evidence as well (the case's Actual names both causes)",
}

// TestHTTP26Matrix: against the conforming reference server every
// http26/ and tasks26/ case passes (over HTTP; in process the HTTP-only
// ones are skipped), and under each fault of killers26 the cases listed
// for it fail or warn, citing a requirement the fault is documented to
// break. No case of these areas ends in error under a fault, or fails
// citing a requirement the fault does not break.
func TestHTTP26Matrix(t *testing.T) {
	t.Parallel()
	byID := map[string]probe.Case{}
	for _, c := range cases26() {
		byID[c.ID] = c
	}
	for _, ids := range killers26 {
		for _, id := range ids {
			if _, ok := byID[id]; !ok {
				t.Errorf("killers26 lists %s, which is not an http26/ or tasks26/ case", id)
			}
		}
	}
	killed := map[string]bool{}
	for _, ids := range killers26 {
		for _, id := range ids {
			killed[id] = true
		}
	}
	for id := range byID {
		if !killed[id] {
			t.Errorf("no fault of killers26 makes %s fail", id)
		}
	}
	for _, over := range []struct {
		name string
		mk   target
		http bool
	}{{"inprocess", referenceTarget(nil), false}, {"http", referenceHTTPTarget(nil), true}} {
		t.Run("conforming/"+over.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range run26(t, over.mk).Results {
				if r.Outcome.Verdict == verdict.Skip && byID[r.ID].Needs.HTTP && !over.http {
					continue
				}
				if r.Outcome.Verdict != verdict.Pass {
					t.Errorf("%s: %s: %s (expected %v, actual %s at seq %d)", r.ID, r.Outcome.Verdict, r.Outcome.Summary,
						r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq)
				}
			}
		})
	}
	faults := make([]refserver.Fault, 0, len(killers26))
	for f := range killers26 {
		faults = append(faults, f)
	}
	slices.Sort(faults)
	for _, fault := range faults {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			set := refserver.FaultSet{fault: true}
			mk := referenceTarget(set)
			_, on, is2026 := refserver.Fault2026Requirements(fault)
			if on == refserver.OnHTTP || !is2026 && slices.Contains(refserver.HTTPFaults(), fault) {
				mk = referenceHTTPTarget(set)
			}
			breaks := fault.Breaks()
			got := map[string]verdict.Outcome{}
			for _, r := range run26(t, mk).Results {
				o := r.Outcome
				got[r.ID] = o
				if o.Requirement != "" {
					checkSeverity(t, r.ID, o)
				}
				switch o.Verdict {
				case verdict.Fail, verdict.Warn:
					if _, ok := collateral26[string(fault)+" "+r.ID+" "+o.Requirement]; !ok && !slices.Contains(breaks, o.Requirement) {
						t.Errorf("%s: %s %s under %s, which is documented to break %v: %s (actual %s)", r.ID, o.Verdict, o.Requirement, fault, breaks, o.Summary, o.Actual)
					}
				case verdict.Error:
					if b := o.Blame; b == nil || !slices.Contains(breaks, b.Requirement) {
						t.Errorf("%s ended in error under %s: %s", r.ID, fault, o.Summary)
					}
				}
			}
			// A helper step that broke the fault's rule blames the case
			// that owns the rule, which must be the one that fails.
			for id, o := range got {
				if b := o.Blame; o.Verdict == verdict.Error && b != nil {
					if ov := got[b.Case]; (ov.Verdict != verdict.Fail && ov.Verdict != verdict.Warn) || ov.Requirement != b.Requirement {
						t.Errorf("%s blames %s for %s under %s, but that case says %s %s", id, b.Case, b.Requirement, fault, ov.Verdict, ov.Requirement)
					}
				}
			}
			for _, id := range killers26[fault] {
				if o := got[id]; o.Verdict != verdict.Fail && o.Verdict != verdict.Warn {
					t.Errorf("%s did not detect %s: %s: %s", id, fault, o.Verdict, o.Summary)
				}
			}
		})
	}
}
