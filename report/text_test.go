package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// textReport is a report of rs under one revision, with a teardown and a
// schema check that passed, counted as the runner counts.
func textReport(rs ...results.Result) *results.Report {
	r := &results.Report{Target: "t", Transport: "stdio", Version: spec.V20251125, Results: rs,
		Counts: map[verdict.Verdict]int{}, Teardown: results.TeardownGrade{Verdict: verdict.Pass, Summary: "all sessions exited"},
		Schema: results.SchemaReport{Revision: spec.V20251125, Checked: 3}}
	for _, res := range rs {
		r.Counts[res.Outcome.Verdict]++
	}
	return r
}

func textResult(id string, o verdict.Outcome) results.Result {
	area, _, _ := strings.Cut(id, "/")
	return results.Result{ID: id, Title: "title", Area: area, Transport: "stdio", Outcome: o}
}

// textLines renders r and returns its lines.
func textLines(t *testing.T, r *results.Report, opts TextOptions) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := Text(&buf, r, opts); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// section is the lines of r's text section headed title, up to the blank
// line that ends it; nil when there is none.
func section(lines []string, title string) []string {
	for i, l := range lines {
		if l != title {
			continue
		}
		end := i + 1
		for end < len(lines) && lines[end] != "" {
			end++
		}
		return lines[i+1 : end]
	}
	return nil
}

// TestTextNamesEachAreaOnce: results whose areas interleave, as the
// catalogue's do, are written under one heading per area, areas in the
// order of their first result.
func TestTextNamesEachAreaOnce(t *testing.T) {
	r := textReport(
		textResult("rpc/a", verdict.Passf("")),
		textResult("cancel/b", verdict.Passf("")),
		textResult("rpc/c", verdict.Passf("")),
		textResult("ping/d", verdict.Passf("")),
		textResult("cancel/e", verdict.Passf("")),
	)
	lines := textLines(t, r, TextOptions{})
	var got []string
	for _, l := range lines[2:] {
		if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "mcpflight:") {
			got = append(got, l)
		} else if strings.HasPrefix(l, "  PASS  ") && strings.HasSuffix(l, "[stdio]") {
			got = append(got, strings.Fields(l)[1])
		}
	}
	want := []string{"rpc", "rpc/a", "rpc/c", "cancel", "cancel/b", "cancel/e", "ping", "ping/d", "teardown", "schema"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headings and cases (-want +got):\n%s", diff)
	}
}

func TestAreaOrder(t *testing.T) {
	got := AreaOrder([]string{"rpc", "cancel", "rpc", "ping", "cancel", "rpc"})
	if diff := cmp.Diff([]int{0, 2, 5, 1, 4, 3}, got); diff != "" {
		t.Errorf("AreaOrder (-want +got):\n%s", diff)
	}
	if got := AreaOrder(nil); len(got) != 0 {
		t.Errorf("AreaOrder(nil) = %v", got)
	}
}

// TestTextFoldsSkips: by default the skips are one line per reason,
// sanitised, after the areas, most cases first; one case alone is named;
// a skip that was not exercised keeps a line of its own, since its reason
// is about its own chronology; an area with only skips has no heading.
// With Verbose every skip is in its area and there is no skips section.
func TestTextFoldsSkips(t *testing.T) {
	const profile = "profile names no slow tool; pass --profile"
	r := textReport(
		textResult("cancel/a", verdict.Skipf(profile)),
		textResult("progress/b", verdict.Skipf(profile)),
		textResult("cancel/c", verdict.Unexercised("the request completed before the cancel could be sent")),
		textResult("progress/d", verdict.Passf("")),
		textResult("tasks/e", verdict.Skipf("capability \x1b[2Jtasks not advertised")),
		textResult("tasks/f", verdict.Skipf(profile)),
		textResult("progress/g", verdict.Unexercised("the request completed before the cancel could be sent")),
	)
	lines := textLines(t, r, TextOptions{})
	want := []string{
		"  SKIP  3 cases: " + profile,
		"  SKIP  cancel/c: not exercised: the request completed before the cancel could be sent",
		"  SKIP  progress/g: not exercised: the request completed before the cancel could be sent",
		`  SKIP  tasks/e: capability \u001b[2Jtasks not advertised`,
	}
	if diff := cmp.Diff(want, section(lines, "skipped (-v names each case)")); diff != "" {
		t.Errorf("skips section (-want +got):\n%s", diff)
	}
	for _, area := range []string{"cancel", "tasks"} {
		if section(lines, area) != nil {
			t.Errorf("area %s, all skips, has a heading:\n%s", area, strings.Join(lines, "\n"))
		}
	}
	if diff := cmp.Diff([]string{"  PASS  progress/d  title  [stdio]"}, section(lines, "progress")); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}

	verbose := textLines(t, r, TextOptions{Verbose: true})
	if s := section(verbose, "skipped (-v names each case)"); s != nil {
		t.Errorf("verbose: a skips section %q", s)
	}
	if got := section(verbose, "tasks"); len(got) < 2 || got[0] != "  SKIP  tasks/e  title  [stdio]" {
		t.Errorf("verbose: tasks is %q, want each skip listed", got)
	}
	n := 0
	for _, l := range verbose {
		if strings.HasPrefix(l, "  SKIP  ") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("verbose: %d skip lines, want 6:\n%s", n, strings.Join(verbose, "\n"))
	}
}

// TestTextFindingsRecap: a run with findings ends, before the summary,
// with one line per finding (verdict, case, requirement and the seq of
// the first wrong event, aligned; each case of a report of several
// revisions named with its revision), the errors folded by summary, and
// the teardown's; a clean run has none.
func TestTextFindingsRecap(t *testing.T) {
	clean := textReport(textResult("ping/a", verdict.Passf("")), textResult("ping/b", verdict.Skipf("x")),
		textResult("ping/c", verdict.Infof("y")), textResult("ping/d", verdict.Blamed("liveness ping", "PNG-1", "ping/a", "error")))
	if lines := textLines(t, clean, TextOptions{}); section(lines, "findings") != nil {
		t.Errorf("a clean run has a recap:\n%s", strings.Join(lines, "\n"))
	}

	warn := verdict.Broken(spec.V20251125, verdict.Req("CAN-8"), []string{"no response"}, "a response", 5)
	fail := verdict.Broken(spec.V20251125, verdict.Req("PRG-4"), []string{"increasing"}, "equal", 17)
	absent := verdict.Broken(spec.V20251125, verdict.Req("PRG-4"), []string{"a progress"}, "none", 0)
	notRun := verdict.Errorf("not run: run deadline exceeded")
	r := textReport(
		textResult("cancel/mid-work", warn),
		textResult("progress/strictly-increasing", fail),
		textResult("ping/a", notRun),
		textResult("progress/none", absent),
		textResult("ping/b", notRun),
		textResult("rpc/c", verdict.Errorf("case deadline of 15s exceeded")),
	)
	r.Teardown = results.TeardownGrade{Verdict: verdict.Warn, Summary: "1 of 6 sessions needed SIGTERM", Requirement: "STD-7"}
	lines := textLines(t, r, TextOptions{})
	want := []string{
		"  FAIL  progress/strictly-increasing  PRG-4  seq 17",
		"  FAIL  progress/none                 PRG-4",
		"  WARN  cancel/mid-work               CAN-8  seq 5",
		"  ERROR 2 cases: not run: run deadline exceeded",
		"  ERROR rpc/c: case deadline of 15s exceeded",
		"  WARN  teardown                      STD-7",
	}
	if diff := cmp.Diff(want, section(lines, "findings")); diff != "" {
		t.Errorf("recap (-want +got):\n%s", diff)
	}
	if n := len(lines); n < 2 || lines[n-2] != "" || lines[n-3] != want[len(want)-1] || !strings.HasPrefix(lines[n-1], "mcpflight: 6 cases") {
		t.Errorf("the recap is not just before the summary:\n%s", strings.Join(lines, "\n"))
	}

	// Under --protocol both each case is named with its revision.
	both := textReport(textResult("progress/strictly-increasing", fail), textResult("progress/strictly-increasing", fail))
	both.Results[0].Revision, both.Results[1].Revision = spec.V20251125, spec.V20260728
	both.Revisions = []string{spec.V20251125, spec.V20260728}
	want = []string{
		"  FAIL  progress/strictly-increasing (2025-11-25)  PRG-4  seq 17",
		"  FAIL  progress/strictly-increasing (2026-07-28)  PRG-4  seq 17",
	}
	if diff := cmp.Diff(want, section(textLines(t, both, TextOptions{}), "findings")); diff != "" {
		t.Errorf("recap of two revisions (-want +got):\n%s", diff)
	}
}
