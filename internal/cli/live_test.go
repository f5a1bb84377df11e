package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// screen renders what a terminal shows after out: '\r' returns to the
// first column, "\x1b[K" erases to the end of the line, '\n' starts a new
// line, and SGR sequences ("\x1b[…m") take no room; any other control or
// escape sequence fails the test. It returns the lines shown and the
// widest line there was at any moment, in columns.
func screen(t *testing.T, out string) (lines []string, widest int) {
	t.Helper()
	var cur []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case out[i] == '\r':
			col = 0
			i++
		case out[i] == '\n':
			lines = append(lines, string(cur))
			cur, col = nil, 0
			i++
		case strings.HasPrefix(out[i:], "\x1b[K"):
			cur = cur[:col]
			i += 3
		case out[i] == '\x1b':
			j := i + 2
			for j < len(out) && (out[j] == ';' || (out[j] >= '0' && out[j] <= '9')) {
				j++
			}
			if out[i+1] != '[' || j >= len(out) || out[j] != 'm' {
				t.Fatalf("escape sequence %q at byte %d is neither SGR nor an erase", out[i:min(i+8, len(out))], i)
			}
			i = j + 1
		case out[i] < 0x20 || out[i] == 0x7f:
			t.Fatalf("control byte %#x at byte %d", out[i], i)
		default:
			r, size := utf8.DecodeRuneInString(out[i:])
			if col < len(cur) {
				cur[col] = r
			} else {
				cur = append(cur, r)
			}
			col++
			widest = max(widest, len(cur))
			i += size
		}
	}
	if len(cur) > 0 {
		t.Fatalf("the output ends with %q left on the last line", string(cur))
	}
	return lines, widest
}

// liveRun is a run as a Watcher sees it: its header, and its results in
// catalogue order (the first has no handshake, the second names the
// server), over two areas that alternate, as the catalogue's areas
// interleave.
func liveRun(verdicts ...verdict.Verdict) (results.Report, []results.Result) {
	server := &results.Implementation{Name: "srv", Version: "1"}
	header := results.Report{Target: "t", Transport: runner.TransportStdio, Version: spec.V20251125, Profile: "reference", Started: time.Now()}
	var rs []results.Result
	for i, v := range verdicts {
		area := "alpha"
		if i%2 == 1 {
			area = "beta"
		}
		r := results.Result{ID: fmt.Sprintf("%s/case-%d", area, i), Title: "title", Area: area, Transport: runner.TransportStdio,
			Outcome:  verdict.Outcome{Verdict: v, Summary: "summary " + string(v)},
			Teardown: results.Teardown{ExitedAfter: results.StepCloseInput}}
		if v == verdict.Fail {
			r.Outcome = verdict.Broken(spec.V20251125, verdict.Req("PNG-1"), []string{"an empty result"}, "an error", 0)
		}
		if i > 0 {
			r.Server = server
		}
		rs = append(rs, r)
	}
	return header, rs
}

// areasOf is the area of each result, as caseAreas gives them of the
// cases.
func areasOf(rs []results.Result) []string {
	areas := make([]string, len(rs))
	for i, r := range rs {
		areas[i] = r.Area
	}
	return areas
}

// finalReport is the report Run would return for these results.
func finalReport(header results.Report, rs []results.Result) *results.Report {
	rep := header
	rep.Results = rs
	rep.Counts = map[verdict.Verdict]int{}
	for _, r := range rs {
		rep.Counts[r.Outcome.Verdict]++
		if rep.Server == nil {
			rep.Server = r.Server
		}
	}
	rep.Teardown = runner.GradeTeardown(rs, false)
	rep.Duration = 1500 * time.Millisecond
	return &rep
}

// feed plays a run to a liveOutput: every case starts, then they finish
// in the order given.
func feed(l *liveOutput, header results.Report, rs []results.Result, order []int) {
	l.Began(header)
	for i, r := range rs {
		l.Started(i, probe.Case{ID: r.ID})
	}
	for _, i := range order {
		l.Finished(i, rs[i])
	}
}

// TestLiveOutputIsTheTextReport: whatever order the cases finish in, what
// check prints as the run goes is, in all, the text report; on a terminal
// the screen shows exactly that too, the status line never wider than
// the terminal and gone at the end.
func TestLiveOutputIsTheTextReport(t *testing.T) {
	t.Parallel()
	all := []verdict.Verdict{verdict.Skip, verdict.Pass, verdict.Fail, verdict.Warn, verdict.Pass}
	tests := []struct {
		name     string
		verdicts []verdict.Verdict
		order    []int
		// ran is how many results the final report has (an interrupted
		// run reports the cases that started).
		ran int
	}{
		{"in order", all, []int{0, 1, 2, 3, 4}, 5},
		{"out of order", all, []int{4, 2, 0, 3, 1}, 5},
		{"server known last", all, []int{2, 3, 4, 0, 1}, 5},
		{"interrupted", all, []int{3, 0}, 4},
		{"no handshake anywhere", []verdict.Verdict{verdict.Skip}, []int{0}, 1},
	}
	for _, tt := range tests {
		for _, terminal := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, terminal %v", tt.name, terminal), func(t *testing.T) {
				header, rs := liveRun(tt.verdicts...)
				if tt.name == "no handshake anywhere" {
					rs[0].Server = nil
				}
				var out bytes.Buffer
				const width = 40
				l := newLiveOutput(&out, areasOf(rs), report.TextOptions{}, terminal, false, width, chrono.NewRedactor())
				feed(l, header, rs, tt.order)
				rep := finalReport(header, rs[:tt.ran])
				if err := l.End(rep); err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				if err := report.Text(&want, rep, report.TextOptions{}); err != nil {
					t.Fatal(err)
				}
				if !terminal {
					if diff := cmp.Diff(want.String(), out.String()); diff != "" {
						t.Errorf("live output (-Text +live):\n%s", diff)
					}
					if tt.ran >= 4 {
						// Both areas have a case that is not a skip.
						for _, area := range []string{"alpha", "beta"} {
							if n := strings.Count("\n"+out.String(), "\n"+area+"\n"); n != 1 {
								t.Errorf("the heading %q is printed %d times, want once:\n%s", area, n, out.String())
							}
						}
					}
					return
				}
				lines, widest := screen(t, out.String())
				if diff := cmp.Diff(strings.Split(strings.TrimSuffix(want.String(), "\n"), "\n"), lines); diff != "" {
					t.Errorf("screen (-Text +screen):\n%s", diff)
				}
				if !strings.Contains(out.String(), fmt.Sprintf("[0/%d] %d running:", len(rs), len(rs))) {
					t.Errorf("no status line naming the running cases in %q", out.String())
				}
				// The report's own lines may be long; the status line
				// must never wrap.
				if reportWidth := maxLineWidth(want.String()); widest > max(reportWidth, width-1) {
					t.Errorf("a line %d columns wide on a terminal of %d", widest, width)
				}
			})
		}
	}
}

func maxLineWidth(s string) int {
	widest := 0
	for _, line := range strings.Split(s, "\n") {
		widest = max(widest, utf8.RuneCountInString(line))
	}
	return widest
}

// TestLiveOutputPrintsAnAreaInItsTurn: results are printed grouped by
// area, areas in the order the catalogue first names them, each as soon
// as it and every result before it in that order have finished: a
// finished case of the second area waits for the first area to end, and
// is printed then, before the run ends.
func TestLiveOutputPrintsAnAreaInItsTurn(t *testing.T) {
	t.Parallel()
	// alpha/case-0, beta/case-1, alpha/case-2, beta/case-3; the first
	// has no handshake, so the header waits for the second too.
	header, rs := liveRun(verdict.Pass, verdict.Pass, verdict.Pass, verdict.Pass)
	var out bytes.Buffer
	l := newLiveOutput(&out, areasOf(rs), report.TextOptions{}, false, false, 80, chrono.NewRedactor())
	l.Began(header)
	for i, r := range rs {
		l.Started(i, probe.Case{ID: r.ID})
	}
	line := func(i int) string { return "  PASS  " + rs[i].ID + "  title  [stdio]" }
	steps := []struct {
		finished int
		printed  []string // the lines printed so far, past the header
	}{
		{1, nil},
		{0, []string{"", "alpha", line(0)}},
		{3, []string{"", "alpha", line(0)}},
		{2, []string{"", "alpha", line(0), line(2), "", "beta", line(1), line(3)}},
	}
	for _, step := range steps {
		l.Finished(step.finished, rs[step.finished])
		var printed []string
		if out.Len() > 0 {
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) < 2 || !strings.HasPrefix(lines[1], "server: srv 1") {
				t.Fatalf("after case %d finished: no header naming the server:\n%s", step.finished, out.String())
			}
			printed = lines[2:]
		}
		if diff := cmp.Diff(step.printed, printed); diff != "" {
			t.Errorf("after case %d finished (-want +printed):\n%s", step.finished, diff)
		}
	}
	if err := l.End(finalReport(header, rs)); err != nil {
		t.Fatal(err)
	}
}

// TestLiveOutputQuiet: -q prints the summary line alone, and no status
// line even on a terminal.
func TestLiveOutputQuiet(t *testing.T) {
	t.Parallel()
	header, rs := liveRun(verdict.Pass, verdict.Fail)
	var out bytes.Buffer
	l := newLiveOutput(&out, areasOf(rs), report.TextOptions{}, true, true, 80, chrono.NewRedactor())
	feed(l, header, rs, []int{1, 0})
	rep := finalReport(header, rs)
	if err := l.End(rep); err != nil {
		t.Fatal(err)
	}
	if want := report.Summary(rep) + "\n"; out.String() != want {
		t.Errorf("quiet output %q, want %q", out.String(), want)
	}
}

// TestStatusLine: the status line names the running cases in the order
// they started, as many as fit, counts the rest, and fits the width.
func TestStatusLine(t *testing.T) {
	t.Parallel()
	l := &liveOutput{total: 84, done: 37, width: 60}
	for i, id := range []string{"cancel/duplicate", "progress/token-zero", "tasks/list-pagination", "http/session-404"} {
		l.running = append(l.running, runningCase{i, id})
	}
	tests := []struct {
		width int
		want  string
	}{
		{200, "[37/84] 4 running: cancel/duplicate, progress/token-zero, tasks/list-pagination, http/session-404  12s"},
		{70, "[37/84] 4 running: cancel/duplicate, progress/token-zero +2  12s"},
		{60, "[37/84] 4 running: cancel/duplicate +3  12s"},
		{40, "[37/84] 4 running  12s"},
		{10, "[37/84] 4 running  12s"},
	}
	for _, tt := range tests {
		l.width = tt.width
		got := l.statusLine(12300 * time.Millisecond)
		if got != tt.want {
			t.Errorf("width %d: %q, want %q", tt.width, got, tt.want)
		}
		if tt.width >= 25 && len(got) > tt.width-1 {
			t.Errorf("width %d: %d columns", tt.width, len(got))
		}
	}
	l.running = []runningCase{{0, "evil/\x1b]52;c;aGk=\x07"}}
	l.width = 200
	if got := l.statusLine(0); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("status line %q holds control characters", got)
	}
}

// TestCheckUsageNamesEveryVerdict: every verdict the report can print
// has a line of its own under "Verdicts:" in check -h.
func TestCheckUsageNamesEveryVerdict(t *testing.T) {
	t.Parallel()
	_, section, ok := strings.Cut(checkUsage, "\nVerdicts:\n")
	if !ok {
		t.Fatal("check -h has no Verdicts: section")
	}
	section, _, _ = strings.Cut(section, "\n\n")
	for _, v := range verdict.All {
		if !strings.Contains("\n"+section, fmt.Sprintf("\n  %-8s ", v)) {
			t.Errorf("check -h's Verdicts: section has no line for %s:\n%s", v, section)
		}
	}
}
