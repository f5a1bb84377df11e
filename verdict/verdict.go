// Package verdict is what a case concludes: a Verdict, an Outcome with its
// evidence, and the constructors that build them. The severity of a broken
// requirement is not chosen by hand: a case names the Rule its evidence
// breaks, and the registry's level for that requirement, under the run's
// protocol revision, decides fail, warn or info (see Severity). A case
// that must depart from the registry writes the exception, with its
// reason, at the rule (Rule.Except), and the Outcome carries it.
//
// The package imports nothing of the project but spec, so that the
// renderers, baselines and the runner depend on it and never on the
// catalogue.
package verdict

import "fmt"

// Verdict is a case's result.
type Verdict string

// Verdicts. Warn is a broken SHOULD (fail under --strict, which the
// runner applies after the case); Info records which branch of an open
// behaviour happened; Skip always has a reason; Blocked is a case that
// could not judge its own rule because a helper step failed whose rule
// another case judges (that case carries the finding: Blame names it);
// Error means the harness or the target broke and says nothing about
// conformance.
const (
	Pass    Verdict = "pass"
	Fail    Verdict = "fail"
	Warn    Verdict = "warn"
	Info    Verdict = "info"
	Skip    Verdict = "skip"
	Blocked Verdict = "blocked"
	Error   Verdict = "error"
)

// All lists the verdicts in the order reports count them.
var All = []Verdict{Pass, Fail, Warn, Info, Skip, Blocked, Error}

// Outcome is what a case concluded.
type Outcome struct {
	Verdict Verdict `json:"verdict"`
	// Summary is one line saying what happened.
	Summary string `json:"summary"`
	// Requirement is the requirement ID the evidence broke, in the words
	// of the run's revision.
	Requirement string `json:"requirement,omitempty"`
	// Level is the registry's level of Requirement (MUST, SHOULD NOT,
	// MAY, DEF, ...), or the clause of a compound level, that decided
	// Verdict.
	Level string `json:"level,omitempty"`
	// Exception is set when Verdict is not what Level gives: the reason,
	// written at the case, for departing from the registry.
	Exception string `json:"exception,omitempty"`
	// Expected lists every acceptable alternative.
	Expected []string `json:"expected,omitempty"`
	// Actual says what happened instead.
	Actual string `json:"actual,omitempty"`
	// ActualSeq is the chronology sequence number of the first wrong
	// event, or 0 when the wrong thing was an absence.
	ActualSeq uint64 `json:"actualSeq,omitempty"`
	// Blame is set on an error whose cause is a helper step that failed
	// while the case's own subject behaved: the rule that step relies on
	// and the case that judges it.
	Blame *Blame `json:"blame,omitempty"`
	// Unexercised is set on a skip whose case reached the target but
	// could not exercise its rule (Unexercised): what another run
	// concluded for the case is neither confirmed nor contradicted.
	Unexercised bool `json:"unexercised,omitempty"`
	// NotApplicable is set on a skip whose case does not apply to the
	// target, by what its profile states (NotApplicable): the run does
	// not count it among the cases it should have exercised.
	NotApplicable bool `json:"notApplicable,omitempty"`
}

// NotApplicable is the outcome of a case that does not apply to the
// target by what its profile states: the server has no tool of the kind
// the case needs (a long-running tool, a task tool). It is a skip, since
// nothing was judged, and its summary says why the case has no subject
// here, so that a run against such a server can be conformant without
// reading as a full pass.
func NotApplicable(format string, args ...any) Outcome {
	return Outcome{Verdict: Skip, Summary: "not applicable: " + fmt.Sprintf(format, args...), NotApplicable: true}
}

// Unexercised is the outcome of a case that reached the target but could
// not exercise its rule, because the target (or the machine's load) moved
// faster than the case could act: a call that completed before its cancel
// could be sent, every step of an operation that crossed its cancel. It
// is a skip, since nothing was judged, and says so in its summary.
func Unexercised(format string, args ...any) Outcome {
	return Outcome{Verdict: Skip, Summary: "not exercised: " + fmt.Sprintf(format, args...), Unexercised: true}
}

// Blame names a helper step a case relied on (a liveness ping, a
// tools/list), the requirement that step rests on, and the case of the
// catalogue that owns that requirement: the case that carries the fail.
type Blame struct {
	// Step names the helper step: "liveness ping".
	Step string `json:"step"`
	// Requirement is the requirement the step relies on: "PNG-1".
	Requirement string `json:"requirement"`
	// Case is the ID of the case that judges Requirement.
	Case string `json:"case"`
}

// Passf is a pass with a summary.
func Passf(format string, args ...any) Outcome {
	return Outcome{Verdict: Pass, Summary: fmt.Sprintf(format, args...)}
}

// Infof records which branch of an open behaviour happened.
func Infof(format string, args ...any) Outcome {
	return Outcome{Verdict: Info, Summary: fmt.Sprintf(format, args...)}
}

// Skipf skips with a reason.
func Skipf(format string, args ...any) Outcome {
	return Outcome{Verdict: Skip, Summary: fmt.Sprintf(format, args...)}
}

// Errorf reports that the harness or the target broke.
func Errorf(format string, args ...any) Outcome {
	return Outcome{Verdict: Error, Summary: fmt.Sprintf(format, args...)}
}

// Blamed is the outcome of a case whose own subject behaved while a
// helper step failed: blocked, naming the case that owns the step's
// requirement (which carries the finding), the step and the requirement
// ("blocked by ping/empty-result: liveness ping failed (PNG-1): ..."). It
// is no error of the harness, and no finding of its own.
func Blamed(step, requirement, owner, detail string) Outcome {
	return Outcome{
		Verdict: Blocked,
		Summary: fmt.Sprintf("blocked by %s: %s failed (%s): %s", owner, step, requirement, detail),
		Blame:   &Blame{Step: step, Requirement: requirement, Case: owner},
	}
}
