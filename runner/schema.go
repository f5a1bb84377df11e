package runner

import (
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/wireschema"
)

// The schema check. Every inbound frame of every case is validated, after
// the case, against the official schema of the run's revision
// (wireschema). A violation is a fail of the run, not of the case whose
// chronology holds it: the report lists each distinct violation once
// (Report.Schema), with how often and where it was first seen. A case
// whose verdict is error, in a chronology holding a violation, is that
// violation's fail instead: the target sent what the schema forbids, and
// a case that could not go on past it (a result that does not decode)
// has found a broken rule, not a broken harness.

// CaseSchema is what the schema check found in one case's chronology.
type CaseSchema struct {
	// Checked and Unchecked count the inbound frames validated, and those
	// that could not be (cut short by a chronology bound, or not JSON).
	Checked, Unchecked int
	// Violations lists every problem, in chronology order.
	Violations []wireschema.Violation
}

// SchemaFinding is one distinct schema violation of a run: the same
// definition, instance pointer and keyword, however many frames and
// cases broke it.
type SchemaFinding struct {
	// Violation is its first occurrence; its Seq is in FirstCase's
	// chronology.
	wireschema.Violation
	// FirstCase is the ID of the first case (in the order run) whose
	// chronology holds it.
	FirstCase string
	// Count is how many frames broke it, Cases in how many cases.
	Count, Cases int
	// Revision is the revision whose run found it; set by RunProtocol.
	Revision string
}

// ID names the finding in a baseline and in JUnit:
// "schema/DEFINITION/POINTER#KEYWORD", e.g.
// "schema/InitializeResult/result/serverInfo/name#type".
func (f SchemaFinding) ID() string {
	return "schema/" + f.Definition + f.Pointer + "#" + f.Keyword
}

// SchemaReport is the run's schema check.
type SchemaReport struct {
	// Revision is the revision whose schema was applied.
	Revision string
	// Checked and Unchecked sum the cases' counts.
	Checked, Unchecked int
	// Findings lists each distinct violation once, in the order first
	// seen. A run with any is non-conformant.
	Findings []SchemaFinding
	// Err is set when the schema could not be loaded (a defect of
	// mcpflight, not of the target); nothing was checked.
	Err string
}

// checkSchema validates res's chronology, and turns an error verdict
// into the fail of the first violation found there.
func checkSchema(version string, res Result) Result {
	if len(res.Events) == 0 {
		return res
	}
	r, err := wireschema.Check(version, res.Events)
	if err != nil {
		return res
	}
	res.Schema = CaseSchema{Checked: r.Checked, Unchecked: r.Unchecked, Violations: r.Violations}
	if res.Outcome.Verdict != verdict.Error || len(r.Violations) == 0 {
		return res
	}
	v := r.Violations[0]
	if res.Log != nil {
		res.Log.Harness(chrono.KindDecision, "runner", fmt.Sprintf(
			"verdict is fail, not error: the message at seq %d breaks the %s schema (%s), which is what the case could not get past", v.Seq, v.Revision, v.Requirement))
		res.Events = res.Log.Snapshot()
	}
	res.Outcome = schemaFail(v, res.Outcome)
	return res
}

// schemaFail is the fail of a case that ended in error (was) with v in
// its chronology.
func schemaFail(v wireschema.Violation, was verdict.Outcome) verdict.Outcome {
	o := verdict.Broken(v.Revision, verdict.Req(v.Requirement),
		[]string{fmt.Sprintf("every message from the target matches the %s schema; this one its %s", v.Revision, v.Definition)},
		ViolationText(v), v.Seq)
	o.Summary = fmt.Sprintf("%s violated: %s; the case could not conclude (it ended in error: %s)", v.Requirement, ViolationText(v), was.Summary)
	return o
}

// ViolationText is one line saying what a violation is
// (wireschema.Violation.String).
func ViolationText(v wireschema.Violation) string { return v.String() }

// schemaReport collects the cases' violations into the run's findings,
// one per distinct definition, pointer and keyword, in the order run.
func schemaReport(version string, results []Result) SchemaReport {
	rep := SchemaReport{Revision: version}
	if _, err := wireschema.Load(version); err != nil {
		rep.Err = err.Error()
		return rep
	}
	index := map[string]int{}
	for _, res := range results {
		rep.Checked += res.Schema.Checked
		rep.Unchecked += res.Schema.Unchecked
		inCase := map[string]bool{}
		for _, v := range res.Schema.Violations {
			f := SchemaFinding{Violation: v, FirstCase: res.ID}
			key := f.ID()
			i, seen := index[key]
			if !seen {
				i = len(rep.Findings)
				index[key] = i
				rep.Findings = append(rep.Findings, f)
			}
			rep.Findings[i].Count++
			if !inCase[key] {
				inCase[key] = true
				rep.Findings[i].Cases++
			}
		}
	}
	return rep
}
