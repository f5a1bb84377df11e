package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpflight/mcpflight/verdict"
)

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JUnit(&buf, fixedReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.junit.xml.golden", buf.Bytes())
}

// TestJUnitShape parses the XML back and checks the counts and the
// elements CI viewers read.
func TestJUnitShape(t *testing.T) {
	rep := fixedReport()
	// Characters XML 1.0 forbids, from the target.
	rep.Results[0].Outcome.Actual += "\x00\x01\ufffe\uffff]]>"
	var buf bytes.Buffer
	if err := JUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	assertXMLChars(t, out)

	var got junitSuites
	if err := xml.Unmarshal(out, &got); err != nil {
		t.Fatalf("the output does not parse: %v", err)
	}
	// The schema finding is a testcase and a failure of its own; the
	// blocked case is a skip, not an error.
	if got.Tests != 9 || got.Failures != 2 || got.Errors != 1 || got.Skipped != 2 {
		t.Errorf("tests %d failures %d errors %d skipped %d; want 9 2 1 2", got.Tests, got.Failures, got.Errors, got.Skipped)
	}
	var names []string
	for _, s := range got.Suites {
		names = append(names, s.Name)
	}
	if want := "cancel progress logging rpc ping teardown schema"; strings.Join(names, " ") != want {
		t.Fatalf("suites %v, want %s", names, want)
	}
	if blocked := got.Suites[3].Cases[0].Skipped; blocked == nil || !strings.HasPrefix(blocked.Message, "blocked by ping/empty-result: ") {
		t.Errorf("the blocked case is not a skip naming the case that carries the finding: %+v", got.Suites[3].Cases[0])
	}
	schema := got.Suites[6]
	if schema.Failures != 1 || len(schema.Cases) != 1 || schema.Cases[0].Failure == nil {
		t.Fatalf("schema suite: %+v", schema)
	}
	for _, want := range []string{
		"Requirement: RPC-2 MUST", "MUST follow the JSON-RPC 2.0 specification",
		`ProgressNotification at /params/total\u001b[2J`, "first in progress/strictly-increasing at seq 3; 2 messages in 1 case",
	} {
		if !strings.Contains(schema.Cases[0].Failure.Body, want) {
			t.Errorf("schema failure body lacks %q:\n%s", want, schema.Cases[0].Failure.Body)
		}
	}
	if schema.Cases[0].Failure.Type != "MUST RPC-2" {
		t.Errorf("schema failure type %q", schema.Cases[0].Failure.Type)
	}
	fail := got.Suites[1].Cases[0]
	if fail.Failure == nil {
		t.Fatalf("progress/strictly-increasing has no <failure>: %+v", fail)
	}
	for _, want := range []string{
		"Requirement: PRG-4 MUST", "The `progress` value MUST increase",
		"Expected:\n  - each progress value greater than the one before",
		"Actual: progress 1 after progress 1", "seq 3: in stdout notification notifications/progress",
		"https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress",
	} {
		if !strings.Contains(fail.Failure.Body, want) {
			t.Errorf("failure body lacks %q:\n%s", want, fail.Failure.Body)
		}
	}
	if fail.Failure.Type != "MUST PRG-4" {
		t.Errorf("failure type %q", fail.Failure.Type)
	}
	warn := got.Suites[0].Cases[0]
	if warn.Failure != nil || warn.SystemOut == nil || !strings.HasPrefix(warn.SystemOut.Text, "WARN") || !strings.Contains(warn.SystemOut.Text, `\u0000\u0001`) {
		t.Errorf("warn case: %+v", warn)
	}
	if e := got.Suites[4].Cases[0].Error; e == nil || !strings.Contains(e.Message, "deadline") {
		t.Errorf("error case: %+v", got.Suites[4].Cases[0])
	}
	if s := got.Suites[2].Cases[0].Skipped; s == nil || s.Message != "profile names no log tool; pass --profile" {
		t.Errorf("skip case: %+v", got.Suites[2].Cases[0])
	}
}

// TestJUnitStrictWarnFails: under --strict the runner has made a warn a
// fail, and JUnit shows a <failure>.
func TestJUnitStrictWarnFails(t *testing.T) {
	rep := fixedReport()
	rep.Results[0].Outcome.Verdict = verdict.Fail
	var buf bytes.Buffer
	if err := JUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Failures != 3 || got.Suites[0].Cases[0].Failure == nil { // the schema finding is the third
		t.Errorf("failures %d, first case %+v", got.Failures, got.Suites[0].Cases[0])
	}
}

// assertXMLChars checks that every character is allowed by XML 1.0 and
// that no escape character from the target survived.
func assertXMLChars(t *testing.T, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatal("output is not UTF-8")
	}
	for i, r := range string(out) {
		ok := r == 0x9 || r == 0xa || r == 0xd || (r >= 0x20 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
		if !ok {
			t.Fatalf("character %U at %d is not allowed in XML 1.0", r, i)
		}
	}
	if bytes.Contains(out, []byte("\x1b")) {
		t.Error("an escape character reached the output")
	}
}
