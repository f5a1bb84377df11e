package report

import (
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// How every format shows the run's schema check (results.SchemaReport):
// each distinct violation once, as a fail of its requirement, with where
// it was first seen and how often; the run's summary counts them, and one
// makes the run non-conformant.

// schemaVerdict is the check's verdict: fail with a finding, error when
// the schema could not be loaded, pass otherwise.
func schemaVerdict(s results.SchemaReport) verdict.Verdict {
	switch {
	case len(s.Findings) > 0:
		return verdict.Fail
	case s.Err != "":
		return verdict.Error
	}
	return verdict.Pass
}

// schemaHeadline is the check's one-line summary.
func schemaHeadline(s results.SchemaReport) string {
	if s.Err != "" && len(s.Findings) == 0 {
		return "the schema could not be loaded: " + san(s.Err)
	}
	line := fmt.Sprintf("%s of the %s schema in %s checked", plural(len(s.Findings), "distinct violation"),
		san(s.Revision), plural(s.Checked, "inbound message"))
	if len(s.Findings) == 0 {
		line = fmt.Sprintf("%s checked against the %s schema: no violation", plural(s.Checked, "inbound message"), san(s.Revision))
	}
	if s.Unchecked > 0 {
		line += fmt.Sprintf(" (%d not checkable: cut short by a bound of the chronology)", s.Unchecked)
	}
	return line
}

// findingWhere says where a finding was first seen and how often.
func findingWhere(f results.SchemaFinding) string {
	return fmt.Sprintf("first in %s at seq %d; %s in %s", san(f.FirstCase), f.Seq, plural(f.Count, "message"), plural(f.Cases, "case"))
}

// schemaSummaryPart is the summary line's count of findings, "" for none.
func schemaSummaryPart(s results.SchemaReport) string {
	if len(s.Findings) == 0 {
		return ""
	}
	return " — " + plural(len(s.Findings), "schema violation")
}

// schema writes the text report's schema section: one block per
// finding, and each requirement's sentence once.
func (t textWriter) schema(s results.SchemaReport) {
	t.linef("%s", t.bold("schema"))
	t.linef("  %s %s", t.badge(schemaVerdict(s)), schemaHeadline(s))
	var reqs []string
	for _, f := range s.Findings {
		t.linef("%s%s  [%s]", indent, san(f.ID()), san(f.Requirement))
		t.linef("%s  %s", indent, san(f.String()))
		t.linef("%s  %s", indent, findingWhere(f))
		if !slices.Contains(reqs, f.Requirement) {
			reqs = append(reqs, f.Requirement)
		}
	}
	for _, id := range reqs {
		t.linef("%sRequirement: %s", indent, requirementLine(id, ""))
	}
}

// JSONSchemaCheck is results.SchemaReport: the schema check of every
// inbound frame of the run.
type JSONSchemaCheck struct {
	// Revision is the protocol revision whose schema.json was applied.
	Revision string `json:"revision"`
	// Checked counts the inbound frames validated; Unchecked those that
	// could not be (cut short by a chronology bound, or not JSON).
	Checked   int `json:"checked"`
	Unchecked int `json:"unchecked"`
	// Error is set when the schema could not be loaded.
	Error string `json:"error,omitempty"`
	// Findings lists each distinct violation once, in the order first
	// seen; any makes the run non-conformant (exitCode 1).
	Findings []JSONSchemaFinding `json:"findings"`
}

// JSONSchemaFinding is one distinct violation (results.SchemaFinding).
type JSONSchemaFinding struct {
	// ID is "schema/DEFINITION/POINTER#KEYWORD", as a baseline lists it.
	ID string `json:"id"`
	// Requirement is the requirement broken (RPC-2, or a more specific
	// RPC row of the run's revision).
	Requirement string `json:"requirement"`
	// Definition is the schema definition the message had to match;
	// "ext-tasks:" prefixes the tasks extension's.
	Definition string `json:"definition"`
	// Instance is the JSON pointer into the message; Keyword the schema
	// keyword that failed and KeywordLocation where it is in the schema.
	Instance        string `json:"instance"`
	Keyword         string `json:"keyword"`
	KeywordLocation string `json:"keywordLocation"`
	// Message says what the schema wants; it never quotes the target.
	Message string `json:"message"`
	// FirstCase and FirstSeq locate the first occurrence: a case ID of
	// "results" and a seq of its "events".
	FirstCase string `json:"firstCase"`
	FirstSeq  uint64 `json:"firstSeq"`
	// Count is how many messages broke it, Cases in how many cases.
	Count int `json:"count"`
	Cases int `json:"cases"`
}

// jsonSchemaCheck converts the run's schema check.
func jsonSchemaCheck(s results.SchemaReport) JSONSchemaCheck {
	// A finding's strings are short (wireschema bounds a pointer to 512
	// bytes): cut each to MaxText, not MaxJSONText.
	short := func(s string) string { return clipText(s, MaxText) }
	out := JSONSchemaCheck{Revision: short(s.Revision), Checked: s.Checked, Unchecked: s.Unchecked, Error: short(s.Err),
		Findings: make([]JSONSchemaFinding, 0, len(s.Findings))}
	for _, f := range s.Findings {
		out.Findings = append(out.Findings, JSONSchemaFinding{
			ID: short(f.ID()), Requirement: short(f.Requirement), Definition: short(f.Definition), Instance: short(f.Pointer),
			Keyword: short(f.Keyword), KeywordLocation: short(f.KeywordLocation), Message: short(f.Message),
			FirstCase: short(f.FirstCase), FirstSeq: f.Seq, Count: f.Count, Cases: f.Cases,
		})
	}
	return out
}

// junitSchema is the JUnit suite "schema": a failing testcase per
// finding, or one passing testcase saying how many messages were checked.
func junitSchema(s results.SchemaReport, stamp string) junitSuite {
	suite := junitSuite{Name: "schema", Timestamp: stamp, Time: "0.000"}
	for _, f := range s.Findings {
		body := "Requirement: " + requirementLine(f.Requirement, "") + "\n" +
			"Violation: " + san(f.String()) + "\n" +
			"Where: " + findingWhere(f) + "\n"
		suite.Cases = append(suite.Cases, junitTestcase{
			Name: xmlText(f.ID(), false), Classname: "mcpflight.schema", Time: "0.000",
			Failure: &junitMessage{Message: xmlText(f.Requirement+" violated: "+f.String(), false),
				Type: failureType(verdict.Outcome{Requirement: f.Requirement}), Body: xmlText(body, true)},
		})
		suite.Failures++
	}
	if len(s.Findings) == 0 {
		tc := junitTestcase{Name: "schema/every-inbound-message", Classname: "mcpflight.schema", Time: "0.000"}
		if s.Err != "" {
			tc.Error = &junitMessage{Message: xmlText(schemaHeadline(s), false), Type: "error", Body: xmlText(s.Err, true)}
			suite.Errors++
		} else {
			tc.SystemOut = cdata("PASS: " + xmlText(schemaHeadline(s), false) + "\n")
		}
		suite.Cases = append(suite.Cases, tc)
	}
	suite.Tests = len(suite.Cases)
	return suite
}

// htmlSchema is the HTML page's schema section.
type htmlSchema struct {
	Verdict, Headline string
	Findings          []htmlFinding
}

type htmlFinding struct {
	ID, Violation, Where, CaseAnchor string
	Req                              *htmlReq
}

func htmlSchemaOf(s results.SchemaReport) htmlSchema {
	h := htmlSchema{Verdict: string(schemaVerdict(s)), Headline: schemaHeadline(s)}
	for _, f := range s.Findings {
		h.Findings = append(h.Findings, htmlFinding{ID: san(f.ID()), Violation: san(f.String()),
			Where: findingWhere(f), CaseAnchor: anchorID(f.FirstCase), Req: htmlRequirement(f.Requirement)})
	}
	return h
}
