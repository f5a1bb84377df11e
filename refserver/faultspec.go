package refserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/spec"
)

// FaultSpec is one row of the fault table (faulttable.go): everything
// declared about one fault, in one place. What it is (the revision whose
// behaviour it changes, the transport it shows on, its area, the
// requirements it is documented to break, what it does), which cases
// must catch it in each evidence mode of the mutation matrix and the
// exceptions with their reasons, and what the explorer finds against it.
// The mutation matrix (package cases' tests), the explorer's tests and
// "mcpflight serve --list-faults" all read this one row, so a fault is
// described once.
//
// Case IDs and the explorer's invariant IDs are strings here, since
// this package cannot import those that define them; the tests of
// package cases and package explore check that every one names a case or
// an invariant that exists.
type FaultSpec struct {
	Fault Fault
	// Revision is spec.V20251125 for a fault of the 2025-11-25 behaviour
	// (most show under 2026-07-28 too, where the behaviour is shared),
	// spec.V20260728 for one of 2026-07-28 or the tasks extension, which
	// changes nothing under 2025-11-25.
	Revision string
	// On is the transport it shows on: OnAny, OnStdio or OnHTTP.
	On string
	// Area groups the 2025-11-25 faults the matrix runs with options of
	// their own: "logging", "tasks", "robust"; "" for the rest.
	Area string
	// Breaks are the requirement IDs it is documented to break.
	Breaks []string
	// Does says what it does, in a few words.
	Does string

	// Killers are the mutation matrix's demands with the control
	// extension (the control evidence mode): one row under the fault's
	// own revision, and a second under 2026-07-28 for a 2025-11-25 fault
	// whose behaviour breaks a rule 2026-07-28 words on its own.
	Killers []KillerRow
	// ObserverKillers catch the fault through the observer when the
	// control extension is hidden (the observer evidence mode), besides
	// the killers that do not need the extension: these faults show in
	// the server's handler counts, which the observer reports in place of
	// the extension's counters. Over HTTP only the http cases among them
	// are held to it, over stdio only the others, and only under a
	// revision the case applies to.
	ObserverKillers []string
	// MissedWithoutControl lists killers that do not need the control
	// extension yet do not catch the fault when it is hidden, with the
	// reason: in the evidence mode named, or in both (EvidenceBoth). The
	// matrix fails on an entry that no longer applies.
	MissedWithoutControl []ModeExcuse
	// LostOverHTTP lists killers of an OnAny row that need not catch the
	// fault over HTTP, with the reason; they must still not end in error
	// there. (Cases of the stdio area are left out over HTTP by
	// themselves.)
	LostOverHTTP []Excuse
	// Collateral lists a case that may fail or warn under the fault
	// citing a requirement it is not documented to break, with the reason
	// the evidence fits that requirement too.
	Collateral []Collateral
	// Eclipsed lists cases whose own subject the fault hides, with the
	// reason: what they report under it is not judged.
	Eclipsed []Excuse
	// EclipsesSlow, when set, says why the fault changes what the slow
	// tool is: no case that drives the slow tool can observe its own
	// subject, so what such a case reports under the fault is not judged
	// (the fault's own killers are).
	EclipsesSlow string
	// Only2026 makes the matrix run the fault against a server without
	// the legacy era: what it breaks exists only there.
	Only2026 bool

	// Explored are the explorer's rows for the fault: what each
	// exploration finds, or why it cannot.
	Explored []Exploration
}

// KillerRow is one run of the mutation matrix against a fault: the
// catalogue under Revision, over the transports On names, and the cases
// that must catch the fault there (fail or warn, citing a requirement it
// breaks). A case may catch more faults than listed; it may never end in
// error under a fault.
type KillerRow struct {
	// Revision is the revision the catalogue runs under: the fault's own,
	// or 2026-07-28 for a 2025-11-25 fault whose behaviour breaks a rule
	// 2026-07-28 words on its own (Breaks then names those rules).
	Revision string
	// On is where the row runs: OnAny over stdio (in process) and
	// Streamable HTTP, OnStdio or OnHTTP alone. Over HTTP the cases of the
	// stdio area, those that skip there under 2026-07-28 and those
	// LostOverHTTP excuses are not held to catch the fault.
	On string
	// Cases must catch the fault in the row.
	Cases []string
	// Breaks are the requirements the fault breaks under Revision when
	// they are not its own (FaultSpec.Breaks): the first is one some case
	// must fail citing. Nil for the fault's own.
	Breaks []string
}

// Excuse is a case exempt from a rule of the matrix, with the reason.
type Excuse struct {
	Case string
	Why  string
}

// ModeExcuse is a killer exempt in an evidence mode without the control
// extension (EvidenceObserver, EvidenceWire, or EvidenceBoth), with the
// reason.
type ModeExcuse struct {
	Mode string
	Case string
	Why  string
}

// Collateral is a case that may fail or warn under a fault citing
// Requirement, with the reason the fault's evidence fits it too.
type Collateral struct {
	Case        string
	Requirement string
	Why         string
}

// The evidence modes of the mutation matrix without the control
// extension: with the reference server's observer in the profile, or
// the wire alone.
const (
	EvidenceObserver = "observer"
	EvidenceWire     = "wire"
	// EvidenceBoth names both in a ModeExcuse.
	EvidenceBoth = ""
)

// Exploration is one row of the explorer's fault table: the fault
// explored over Transport under Revision, and either the findings it
// comes to (Finds: any of them) or why it cannot find the fault
// (Excluded).
type Exploration struct {
	// Transport is one of the explorer's: ExploreInProcess, ExploreStdio,
	// ExploreHTTP.
	Transport string
	// Revision is the protocol revision explored; 2025-11-25 when empty.
	Revision string
	// Finds are the findings the exploration may come to.
	Finds []Finding
	// Deadline marks a fault that only a wait running into the operation
	// timeout can show (a response that never comes, an operation that
	// never ends).
	Deadline bool
	// Present marks a Deadline row whose violation is something the
	// server did (a stray frame): a short timeout cannot fake it.
	Present bool
	// Ops, when set, is the exploration's budget of operations.
	Ops int
	// Racy says why the fault acts only if the server wins a race that
	// no frame orders; its replay is then tried up to three times.
	Racy string
	// Excluded says why the explorer cannot find the fault.
	Excluded string
	// Fits are findings an excluded row may still come to, and FitsWhy
	// why: evidence of the fault that fits another rule too.
	Fits    []Finding
	FitsWhy string
}

// Finding is an invariant of the explorer and the requirements a
// finding of it may cite.
type Finding struct {
	Invariant    string
	Requirements []string
}

// The explorer's transports (package explore's TransportInProcess,
// TransportStdio and TransportHTTP).
const (
	ExploreInProcess = "inprocess"
	ExploreStdio     = "stdio"
	ExploreHTTP      = "http"
)

// Transports a fault shows on.
const (
	OnAny   = "any"
	OnStdio = "stdio"
	OnHTTP  = "http"
)

// finds is the one finding of inv citing one of reqs.
func finds(inv string, reqs ...string) []Finding {
	return []Finding{{inv, reqs}}
}

// clone is a deep copy of the row, so that no caller can change the
// table.
func (r FaultSpec) clone() FaultSpec {
	r.Breaks = slices.Clone(r.Breaks)
	r.Killers = slices.Clone(r.Killers)
	for i := range r.Killers {
		r.Killers[i].Cases = slices.Clone(r.Killers[i].Cases)
		r.Killers[i].Breaks = slices.Clone(r.Killers[i].Breaks)
	}
	r.ObserverKillers = slices.Clone(r.ObserverKillers)
	r.MissedWithoutControl = slices.Clone(r.MissedWithoutControl)
	r.LostOverHTTP = slices.Clone(r.LostOverHTTP)
	r.Collateral = slices.Clone(r.Collateral)
	r.Eclipsed = slices.Clone(r.Eclipsed)
	r.Explored = slices.Clone(r.Explored)
	for i := range r.Explored {
		r.Explored[i].Finds = cloneFindings(r.Explored[i].Finds)
		r.Explored[i].Fits = cloneFindings(r.Explored[i].Fits)
	}
	return r
}

func cloneFindings(fs []Finding) []Finding {
	fs = slices.Clone(fs)
	for i := range fs {
		fs[i].Requirements = slices.Clone(fs[i].Requirements)
	}
	return fs
}

// FaultTable returns the fault table, in a stable order.
func FaultTable() []FaultSpec {
	out := make([]FaultSpec, len(faultTable))
	for i, r := range faultTable {
		out[i] = r.clone()
	}
	return out
}

// Spec returns the fault's row; false for a string that names no fault.
func (f Fault) Spec() (FaultSpec, bool) {
	for _, r := range faultTable {
		if r.Fault == f {
			return r.clone(), true
		}
	}
	return FaultSpec{}, false
}

// UnkillableCases lists the cases of the catalogue no fault can make
// fail, with the reason. Every other case is a killer of some fault.
func UnkillableCases() []Excuse { return slices.Clone(unkillableCases) }

// faultsWhere returns the faults whose rows keep says yes to, in the
// table's order.
func faultsWhere(keep func(FaultSpec) bool) []Fault {
	var out []Fault
	for _, r := range faultTable {
		if keep(r) {
			out = append(out, r.Fault)
		}
	}
	return out
}

// AllFaults returns every fault, in a stable order.
func AllFaults() []Fault { return faultsWhere(func(FaultSpec) bool { return true }) }

// HTTPFaults returns the 2025-11-25 faults of the HTTP endpoint.
func HTTPFaults() []Fault {
	return faultsWhere(func(r FaultSpec) bool { return r.Revision == spec.V20251125 && r.On == OnHTTP })
}

// LogFaults returns the 2025-11-25 logging faults.
func LogFaults() []Fault { return faultsIn("logging") }

// TaskFaults returns the 2025-11-25 task faults.
func TaskFaults() []Fault { return faultsIn("tasks") }

// RobustFaults returns the robustness faults.
func RobustFaults() []Fault { return faultsIn("robust") }

// faultsIn returns the 2025-11-25 faults of an area.
func faultsIn(area string) []Fault {
	return faultsWhere(func(r FaultSpec) bool { return r.Revision == spec.V20251125 && r.Area == area })
}

// Faults2026 returns the faults of the 2026-07-28 behaviour.
func Faults2026() []Fault {
	return faultsWhere(func(r FaultSpec) bool { return r.Revision == spec.V20260728 })
}

// Fault2026Requirements returns the requirement IDs a 2026-07-28 fault
// breaks and the transport it shows on ("any", "stdio" or "http"); ok is
// false for any other fault.
func Fault2026Requirements(f Fault) (reqs []string, transport string, ok bool) {
	r, ok := f.Spec()
	if !ok || r.Revision != spec.V20260728 {
		return nil, "", false
	}
	return r.Breaks, r.On, true
}

// Breaks returns the requirement IDs the fault is documented to break;
// nil for a string that names no fault.
func (f Fault) Breaks() []string {
	r, _ := f.Spec()
	return r.Breaks
}

// Description is a one-line description of what the fault does and the
// requirements it breaks (Breaks); it is empty for a string that names no
// fault.
func (f Fault) Description() string {
	r, ok := f.Spec()
	if !ok {
		return ""
	}
	return r.Does + " (" + strings.Join(r.Breaks, ", ") + ")"
}

// ParseFault returns the fault named s (its flag value), or an error that
// lists the valid names.
func ParseFault(s string) (Fault, error) {
	f := Fault(strings.TrimSpace(s))
	if _, ok := f.Spec(); ok {
		return f, nil
	}
	names := make([]string, 0, len(faultTable))
	for _, r := range faultTable {
		names = append(names, string(r.Fault))
	}
	return "", fmt.Errorf("refserver: unknown fault %q (valid: %s)", s, strings.Join(names, ", "))
}
