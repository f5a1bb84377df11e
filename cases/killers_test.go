package cases_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/spec"
)

// The mutation matrix reads its demands from the reference server's
// fault table (refserver.FaultTable): for every fault, the cases that
// must catch it in each evidence mode and the exceptions with their
// reasons. The case IDs are strings there; TestFaultTable holds every
// one to the catalogue.

// faultSpecs is the fault table by fault, read once.
var faultSpecs = sync.OnceValue(func() map[refserver.Fault]refserver.FaultSpec {
	out := map[refserver.Fault]refserver.FaultSpec{}
	for _, fs := range refserver.FaultTable() {
		out[fs.Fault] = fs
	}
	return out
})

// specOf is the fault's row of the fault table (the zero row for a
// string that names no fault).
func specOf(f refserver.Fault) refserver.FaultSpec { return faultSpecs()[f] }

// TestFaultTable checks the fault table against the catalogue without
// running the matrix (checkFaultTable).
func TestFaultTable(t *testing.T) { checkFaultTable(t) }

// checkFaultTable: every fault has exactly one killer row under its own
// revision (and at most one under the other), with cases to catch it; a
// row runs only where its fault shows, and a row under another revision
// than the fault's names the rules it breaks there. Every case ID the
// table names is a case of the catalogue, every case of the catalogue is
// a killer of some fault or listed as unkillable (not both), and every
// exception names a case it can apply to, with its reason. So a case
// renamed or removed fails here, as does a case added without the proof
// that it can fail.
func checkFaultTable(t *testing.T) {
	catalogue := map[string]bool{}
	for _, c := range cases.All() {
		catalogue[c.ID] = true
	}
	named := func(where, id string) {
		if !catalogue[id] {
			t.Errorf("%s names %q, which is no case of the catalogue", where, id)
		}
	}
	killer := map[string]bool{}
	seen := map[string]int{}
	for _, fs := range refserver.FaultTable() {
		where := "the fault table's row of " + string(fs.Fault)
		var killers []string
		for _, k := range fs.Killers {
			seen[string(fs.Fault)+" "+k.Revision]++
			if k.On != refserver.OnAny && k.On != refserver.OnStdio && k.On != refserver.OnHTTP {
				t.Errorf("%s: a killer row runs on %q", where, k.On)
			}
			if fs.On != refserver.OnAny && k.On != fs.On {
				t.Errorf("%s shows on %s only, but its row under %s runs on %s", fs.Fault, fs.On, k.Revision, k.On)
			}
			switch {
			case k.Revision == fs.Revision && len(k.Cases) == 0:
				t.Errorf("fault %s has no killer listed under %s: add the cases that detect it", fs.Fault, k.Revision)
			case k.Revision == fs.Revision && k.Breaks != nil:
				t.Errorf("%s under its own revision breaks its own requirements: leave Breaks nil", fs.Fault)
			case k.Revision != fs.Revision && len(k.Breaks) == 0:
				t.Errorf("%s under %s names no rule of that revision it breaks", fs.Fault, k.Revision)
			}
			for _, id := range k.Cases {
				named(where+" (killers under "+k.Revision+")", id)
				killer[id] = true
			}
			killers = append(killers, k.Cases...)
		}
		for _, id := range fs.ObserverKillers {
			named(where+" (observer killers)", id)
			killer[id] = true
		}
		for _, e := range fs.MissedWithoutControl {
			named(where+" (missed without control)", e.Case)
			if e.Mode != refserver.EvidenceBoth && e.Mode != refserver.EvidenceObserver && e.Mode != refserver.EvidenceWire {
				t.Errorf("%s: %s is excused in mode %q, which is no evidence mode", where, e.Case, e.Mode)
			}
			if !slices.Contains(killers, e.Case) && !slices.Contains(fs.ObserverKillers, e.Case) {
				t.Errorf("%s: %s is excused without the control extension but is no killer of the fault", where, e.Case)
			}
			excused(t, where, e.Case, e.Why)
		}
		for _, e := range fs.LostOverHTTP {
			named(where+" (lost over HTTP)", e.Case)
			if !slices.ContainsFunc(fs.Killers, func(k refserver.KillerRow) bool { return k.On == refserver.OnAny && slices.Contains(k.Cases, e.Case) }) {
				t.Errorf("%s: %s is excused over HTTP but is no killer of a row that runs there and on stdio", where, e.Case)
			}
			excused(t, where, e.Case, e.Why)
		}
		for _, e := range fs.Collateral {
			named(where+" (collateral)", e.Case)
			if _, ok := spec.Lookup(e.Requirement); !ok {
				t.Errorf("%s: %s's collateral requirement %s is not in the registry", where, e.Case, e.Requirement)
			}
			if slices.Contains(fs.Breaks, e.Requirement) {
				t.Errorf("%s: %s's collateral requirement %s is one the fault breaks", where, e.Case, e.Requirement)
			}
			excused(t, where, e.Case, e.Why)
		}
		for _, e := range fs.Eclipsed {
			named(where+" (eclipsed)", e.Case)
			excused(t, where, e.Case, e.Why)
		}
	}
	for _, f := range refserver.FaultTable() {
		if n := seen[string(f.Fault)+" "+f.Revision]; n != 1 {
			t.Errorf("fault %s has %d killer rows under %s, want 1", f.Fault, n, f.Revision)
		}
	}
	for key, n := range seen {
		if n > 1 {
			t.Errorf("%s: %d killer rows, want 1", key, n)
		}
	}
	unkillable := map[string]bool{}
	for _, e := range refserver.UnkillableCases() {
		named("the unkillable cases", e.Case)
		excused(t, "the unkillable cases", e.Case, e.Why)
		if unkillable[e.Case] {
			t.Errorf("%s is listed twice as unkillable", e.Case)
		}
		unkillable[e.Case] = true
		if killer[e.Case] {
			t.Errorf("%s is listed as unkillable and as a killer: keep one", e.Case)
		}
	}
	for _, c := range cases.All() {
		if !killer[c.ID] && !unkillable[c.ID] {
			t.Errorf("%s is no killer of any fault in refserver/faulttable.go and is not listed as unkillable: show that it can fail", c.ID)
		}
	}
}

// excused fails t for an exception without its reason.
func excused(t *testing.T, where, id, why string) {
	t.Helper()
	if why == "" {
		t.Errorf("%s: the exception for %s gives no reason", where, id)
	}
}
