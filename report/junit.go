package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// MaxJUnitEvents bounds the chronology lines JUnit writes into one
// testcase's <system-out>.
const MaxJUnitEvents = 200

// junitSuites is the <testsuites> root of the JUnit XML format as Jenkins,
// GitLab, GitHub test reporters and Azure DevOps read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties *junitProps     `xml:"properties,omitempty"`
	Cases      []junitTestcase `xml:"testcase"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitTestcase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut *junitCDATA   `xml:"system-out,omitempty"`
}

// junitCDATA is an element whose text is written as CDATA, so that
// multi-line bodies stay readable in the raw file.
type junitCDATA struct {
	Text string `xml:",cdata"`
}

// cdata wraps text for <system-out>; nil for none.
func cdata(text string) *junitCDATA {
	if text == "" {
		return nil
	}
	return &junitCDATA{Text: text}
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",cdata"`
}

// JUnit writes the report as JUnit XML: one <testsuite> per area, one
// for the teardown grade and one, "schema", for the schema check (a
// <failure> per distinct violation, or one passing testcase), one <testcase> per case (name the case ID,
// classname "mcpflight.AREA"). A fail is a <failure> and an error an
// <error>, each with the requirement, its quoted sentence, every expected
// alternative and the actual event with its chronology sequence number; a
// skip is <skipped> with its reason. Warn and info are passing testcases
// with a note in <system-out> (--strict has already turned warns into
// fails). Every string is sanitised (control characters become visible
// \u escapes) and escaped; characters XML 1.0 forbids never reach the
// output.
func JUnit(w io.Writer, r *results.Report) error {
	root := junitSuites{Name: "mcpflight " + xmlText(r.Target, false), Time: secondsAttr(r.Duration)}
	props := &junitProps{Props: []junitProp{
		{"target", xmlText(r.Target, false)},
		{"transport", xmlText(r.Transport, false)},
		{"protocolVersion", xmlText(r.Version, false)},
		{"profile", xmlText(r.Profile, false)},
		{"strict", strconv.FormatBool(r.Strict)},
	}}
	if r.Server != nil {
		props.Props = append(props.Props, junitProp{"server", xmlText(r.Server.Name+" "+r.Server.Version, false)})
	}
	props.Props = append(props.Props, junitProp{"exitCode", strconv.Itoa(r.ExitCode())})
	if r.ExitCode() == results.ExitIncomplete {
		props.Props = append(props.Props, junitProp{"incomplete", xmlText(r.Completeness().Line(), false)})
	}
	for _, l := range revisionLines(r) {
		props.Props = append(props.Props, junitProp{"revision", xmlText(l, false)})
	}
	for _, l := range inconsistencyLines(r) {
		props.Props = append(props.Props, junitProp{"inconsistent", xmlText(l, false)})
	}
	stamp := r.Started.UTC().Format("2006-01-02T15:04:05")
	for _, g := range groupByArea(r.Results) {
		s := junitSuite{Name: xmlText(g.area, false), Timestamp: stamp, Properties: props}
		var d time.Duration
		for _, res := range g.results {
			tc := junitCase(res)
			if multiRevision(r) {
				// Each revision's run of a case is a testcase of its own.
				tc.Name = xmlText(res.ID+" @"+revisionOf(r, res), false)
			}
			s.Tests++
			d += res.Duration
			switch {
			case tc.Failure != nil:
				s.Failures++
			case tc.Error != nil:
				s.Errors++
			case tc.Skipped != nil:
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
		s.Time = secondsAttr(d)
		root.Suites = append(root.Suites, s)
	}
	if td := junitTeardown(r.Teardown); td != nil {
		s := junitSuite{Name: "teardown", Timestamp: stamp, Tests: 1, Time: td.Time, Cases: []junitTestcase{*td}}
		switch {
		case td.Failure != nil:
			s.Failures++
		case td.Error != nil:
			s.Errors++
		}
		root.Suites = append(root.Suites, s)
	}
	if r.NoSession != nil {
		// The run's one outcome: no case ran, and no message was checked.
		line := xmlText(r.NoSession.Line, false)
		root.Suites = append(root.Suites, junitSuite{Name: "session", Timestamp: stamp, Tests: 1, Errors: 1, Time: secondsAttr(r.Duration),
			Cases: []junitTestcase{{Name: "session/open", Classname: "mcpflight.session", Time: secondsAttr(r.Duration),
				Error: &junitMessage{Message: line, Type: "no-session", Body: xmlText(strings.Join(r.NoSession.Probes, "\n"), true)}}}})
	} else {
		root.Suites = append(root.Suites, junitSchema(r.Schema, stamp))
	}
	for _, s := range root.Suites {
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("report: writing JUnit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("report: writing JUnit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("report: writing JUnit: %w", err)
	}
	return nil
}

func junitCase(res results.Result) junitTestcase {
	o := res.Outcome
	tc := junitTestcase{
		Name:      xmlText(res.ID, false),
		Classname: "mcpflight." + xmlText(res.Area, false),
		Time:      secondsAttr(res.Duration),
	}
	summary := xmlText(o.Summary, false)
	switch o.Verdict {
	case verdict.Fail:
		tc.Failure = &junitMessage{Message: summary, Type: failureType(o), Body: violationText(res)}
		tc.SystemOut = cdata(chronologyText(res.Events))
	case verdict.Error:
		tc.Error = &junitMessage{Message: summary, Type: "error", Body: violationText(res)}
		tc.SystemOut = cdata(chronologyText(res.Events))
	case verdict.Skip, verdict.Blocked:
		// A blocked case did not judge its rule: JUnit's nearest is a
		// skip, whose message names the case that carries the finding.
		tc.Skipped = &junitMessage{Message: summary}
	case verdict.Warn:
		tc.SystemOut = cdata("WARN (a SHOULD was broken; a fail under --strict): " + summary + "\n" + violationText(res) + "\n" + chronologyText(res.Events))
	case verdict.Info:
		tc.SystemOut = cdata("INFO (the spec leaves this open): " + summary + "\n")
	default:
		if summary != "" {
			tc.SystemOut = cdata("PASS: " + summary + "\n")
		}
	}
	return tc
}

// failureType is the <failure type>: the requirement's level and ID.
func failureType(o verdict.Outcome) string {
	if req, ok := spec.Lookup(o.Requirement); ok {
		return xmlText(req.Level+" "+req.ID, false)
	}
	if o.Requirement != "" {
		return xmlText(o.Requirement, false)
	}
	return "fail"
}

// violationText is the body of a failure, error or warn: what the text
// report prints under the case, without colour.
func violationText(res results.Result) string {
	o := res.Outcome
	var b strings.Builder
	if o.Requirement != "" {
		fmt.Fprintf(&b, "Requirement: %s\n", requirementLine(o.Requirement, res.Revision))
		if req, ok := spec.Lookup(o.Requirement); ok {
			for _, l := range spec.Links(req.Source) {
				fmt.Fprintf(&b, "Source: %s", l.Label)
				if l.URL != "" {
					fmt.Fprintf(&b, " <%s>", l.URL)
				}
				b.WriteByte('\n')
			}
		}
	}
	if len(o.Expected) > 0 {
		b.WriteString("Expected:\n")
		for _, alt := range o.Expected {
			fmt.Fprintf(&b, "  - %s\n", san(alt))
		}
	}
	if o.Actual != "" || o.ActualSeq != 0 {
		fmt.Fprintf(&b, "Actual: %s\n", san(o.Actual))
		if o.ActualSeq != 0 {
			if ev, ok := findEvent(res.Events, o.ActualSeq); ok {
				fmt.Fprintf(&b, "  seq %d: %s\n", o.ActualSeq, EventLine(ev))
			} else {
				fmt.Fprintf(&b, "  seq %d\n", o.ActualSeq)
			}
		}
	}
	if b.Len() == 0 {
		return xmlText(o.Summary, false) + "\n"
	}
	return xmlText(b.String(), true)
}

// chronologyText is the case's chronology, one event a line, bounded by
// MaxJUnitEvents.
func chronologyText(events []chrono.Event) string {
	if len(events) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Chronology:\n")
	for i, e := range events {
		if i == MaxJUnitEvents {
			fmt.Fprintf(&b, "  … %d more events (see the JSON report)\n", len(events)-i)
			break
		}
		fmt.Fprintf(&b, "  #%-4d %9s  %s\n", e.Seq, offset(e.Offset), EventLine(e))
	}
	return xmlText(b.String(), true)
}

func junitTeardown(g results.TeardownGrade) *junitTestcase {
	if g.Sessions == 0 {
		return nil
	}
	tc := &junitTestcase{Name: "teardown/sessions", Classname: "mcpflight.teardown", Time: secondsAttr(g.Slowest)}
	body := xmlText(g.Summary, false) + "\n"
	if g.Requirement != "" {
		body += "Requirement: " + requirementLine(g.Requirement, g.Revision) + "\n"
		if g.Advice != "" {
			body += "Advice: " + adviceLine(g.Advice, g.Revision) + "\n"
		}
	}
	switch g.Verdict {
	case verdict.Fail:
		tc.Failure = &junitMessage{Message: xmlText(g.Summary, false), Type: failureType(verdict.Outcome{Requirement: g.Requirement}), Body: body}
	case verdict.Error:
		tc.Error = &junitMessage{Message: xmlText(g.Summary, false), Type: "error", Body: body}
	case verdict.Warn:
		tc.SystemOut = cdata("WARN (a SHOULD was broken; a fail under --strict): " + body)
	default:
		tc.SystemOut = cdata("PASS: " + body)
	}
	return tc
}

// xmlText sanitises untrusted text for XML 1.0: control characters and
// bidirectional overrides become visible \u escapes (newlines and tabs
// survive in bodies when keepNewlines), and any other character XML 1.0
// forbids (U+FFFE, U+FFFF) becomes U+FFFD. The encoder escapes the rest.
// A single value (not keepNewlines) is cut to MaxText; a body is built
// of values already cut.
func xmlText(s string, keepNewlines bool) string {
	if !keepNewlines {
		s = clipText(s, MaxText)
	}
	s = chrono.Sanitize(s, keepNewlines)
	return strings.Map(func(r rune) rune {
		if r == 0xfffe || r == 0xffff {
			return 0xfffd
		}
		return r
	}, s)
}

// secondsAttr is a duration in seconds with millisecond precision, as
// JUnit's time attributes want it.
func secondsAttr(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}
