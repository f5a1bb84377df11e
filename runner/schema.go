package runner

import (
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
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

// checkSchema validates res's chronology, and turns an error verdict
// into the fail of the first violation found there.
func checkSchema(version string, res results.Result) results.Result {
	if len(res.Events) == 0 {
		return res
	}
	r, err := wireschema.Check(version, res.Events)
	if err != nil {
		return res
	}
	res.Schema = results.CaseSchema{Checked: r.Checked, Unchecked: r.Unchecked}
	for _, v := range r.Violations {
		res.Schema.Violations = append(res.Schema.Violations, v.Record())
	}
	if res.Outcome.Verdict != verdict.Error || len(r.Violations) == 0 {
		return res
	}
	v := res.Schema.Violations[0]
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
func schemaFail(v results.SchemaViolation, was verdict.Outcome) verdict.Outcome {
	o := verdict.Broken(v.Revision, verdict.Req(v.Requirement),
		[]string{fmt.Sprintf("every message from the target matches the %s schema; this one its %s", v.Revision, v.Definition)},
		v.String(), v.Seq)
	o.Summary = fmt.Sprintf("%s violated: %s; the case could not conclude (it ended in error: %s)", v.Requirement, v.String(), was.Summary)
	return o
}

// schemaReport collects the cases' violations into the run's findings,
// one per distinct definition, pointer and keyword, in the order run.
func schemaReport(version string, rs []results.Result) results.SchemaReport {
	rep := results.SchemaReport{Revision: version}
	if _, err := wireschema.Load(version); err != nil {
		rep.Err = err.Error()
		return rep
	}
	index := map[string]int{}
	for _, res := range rs {
		rep.Checked += res.Schema.Checked
		rep.Unchecked += res.Schema.Unchecked
		inCase := map[string]bool{}
		for _, v := range res.Schema.Violations {
			f := results.SchemaFinding{SchemaViolation: v, FirstCase: res.ID}
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
