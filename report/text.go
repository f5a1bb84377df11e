// Package report renders runner Reports: Text for a terminal and JSON for
// machines. Renderers are pure: they read a Report and write bytes, and
// never talk to a peer. Everything that came from the target (server
// names, messages, frames, stderr) passes through chrono.Sanitize before
// it is written as text.
package report

import (
	"bufio"
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

// TextOptions configures Text.
type TextOptions struct {
	// Verbose prints every case's whole chronology.
	Verbose bool
	// Color marks verdicts with ANSI colours; only for a terminal.
	Color bool
}

// MaxRawText is how many bytes of a frame Text prints in verbose mode.
const MaxRawText = 200

// verdictOrder is the order of the summary line's counts.
var verdictOrder = verdict.All

// ANSI colours of the verdicts.
const (
	ansiReset = "\x1b[0m"
	ansiDim   = "\x1b[2m"
)

func verdictColor(v verdict.Verdict) string {
	switch v {
	case verdict.Pass:
		return "\x1b[32m" // green
	case verdict.Fail:
		return "\x1b[1;31m" // bold red
	case verdict.Warn:
		return "\x1b[33m" // yellow
	case verdict.Info:
		return "\x1b[36m" // cyan
	case verdict.Skip:
		return ansiDim
	case verdict.Blocked:
		return "\x1b[35m" // magenta
	case verdict.Error:
		return "\x1b[1;35m" // bold magenta
	}
	return ""
}

// MaxText bounds one untrusted value (a summary, an actual, a server's
// name, a harness event's text) in the text, HTML and JUnit reports:
// a longer value is cut at a character boundary and marked
// "… (truncated, N bytes)".
const MaxText = 2048

// clipText cuts s to at most n bytes with a marker (chrono.Clip).
func clipText(s string, n int) string { return chrono.Clip(s, n) }

// san makes untrusted text safe for a terminal, on one line, and cuts it
// to MaxText.
func san(s string) string { return chrono.Sanitize(clipText(s, MaxText), false) }

// Text writes a human-readable report: the target, the results grouped by
// area (one line per case; for fail, warn and error the requirement's
// sentence, every expected alternative and the actual event), the
// teardown grade, and a summary line.
func Text(w io.Writer, r *results.Report, opts TextOptions) error {
	s := NewTextStream(w, opts)
	s.Header(r)
	for _, group := range groupByArea(r.Results) {
		for _, res := range group.results {
			s.result(res, revisionNote(r, res))
		}
	}
	return s.End(r)
}

type textWriter struct {
	w     *bufio.Writer
	color bool
}

func (t textWriter) linef(format string, args ...any) {
	fmt.Fprintf(t.w, format, args...)
	t.w.WriteByte('\n')
}

func (t textWriter) paint(code, s string) string {
	if !t.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

func (t textWriter) bold(s string) string { return t.paint("\x1b[1m", s) }

// badge is the verdict in a fixed-width column.
func (t textWriter) badge(v verdict.Verdict) string {
	return t.paint(verdictColor(v), fmt.Sprintf("%-5s", strings.ToUpper(string(v))))
}

func (t textWriter) header(r *results.Report) {
	command := "check"
	if r.Role == results.RoleClient {
		command = "check-client"
	}
	line := "mcpflight " + command + ": " + san(r.Target)
	if r.Transport != "" {
		line += " over " + san(r.Transport)
	}
	line += ", protocol " + san(r.Version)
	if r.Profile != "" {
		line += ", profile " + san(r.Profile)
	}
	if r.Strict {
		line += ", strict"
	}
	t.linef("%s", line)
	if r.Role == results.RoleClient {
		t.linef("server: mcpflight's scripted server, one per case")
		return
	}
	t.negotiation(r)
	if r.Server != nil {
		s := "server: " + san(r.Server.Name)
		if r.Server.Version != "" {
			s += " " + san(r.Server.Version)
		}
		if r.Server.Title != "" {
			s += " (" + san(r.Server.Title) + ")"
		}
		t.linef("%s", s)
	} else {
		t.linef("server: no successful handshake")
	}
}

const indent = "        " // under the case's ID

func (t textWriter) result(res results.Result, verbose bool, revision string) {
	line := fmt.Sprintf("  %s %s  %s", t.badge(res.Outcome.Verdict), san(res.ID), san(res.Title))
	if res.Transport != "" {
		line += "  [" + san(res.Transport) + revision + "]"
	}
	t.linef("%s", line)
	o := res.Outcome
	switch o.Verdict {
	case verdict.Skip, verdict.Blocked, verdict.Info, verdict.Pass:
		if o.Summary != "" && (o.Verdict != verdict.Pass || verbose) {
			t.linef("%s%s", indent, t.paint(ansiDim, san(o.Summary)))
		}
	case verdict.Fail, verdict.Warn, verdict.Error:
		t.violation(res)
	}
	if verbose {
		t.chronology(res.Events)
	}
}

func (t textWriter) violation(res results.Result) {
	o := res.Outcome
	// A summary made by verdict.Broken only repeats the requirement and
	// the actual line printed below.
	if o.Summary != "" && o.Summary != fmt.Sprintf("%s violated: %s", o.Requirement, o.Actual) {
		t.linef("%s%s", indent, san(o.Summary))
	}
	if o.Requirement != "" {
		t.linef("%sRequirement: %s", indent, requirementLine(o.Requirement, res.Revision))
	}
	if o.Exception != "" {
		t.linef("%sException: %s, not what %s gives: %s", indent, o.Verdict, san(o.Level), san(o.Exception))
	}
	if len(o.Expected) > 0 {
		t.linef("%sExpected:", indent)
		for _, alt := range o.Expected {
			t.linef("%s  - %s", indent, san(alt))
		}
	}
	if o.Actual != "" || o.ActualSeq != 0 {
		t.linef("%sActual:   %s", indent, san(o.Actual))
		if o.ActualSeq != 0 {
			ev, ok := findEvent(res.Events, o.ActualSeq)
			if ok {
				t.linef("%s          seq %d: %s", indent, o.ActualSeq, EventLine(ev))
			} else {
				t.linef("%s          seq %d", indent, o.ActualSeq)
			}
		}
	}
}

// requirementLine is "ID LEVEL (versions): "quote"" from the registry.
// Under revision (empty: not checked) a requirement whose sentence is not
// in that revision says so plainly instead of passing for its rule: it is
// a later (or another) revision's rule, applied as advice (issue 14.6).
func requirementLine(id, revision string) string {
	req, ok := spec.Lookup(id)
	if !ok {
		return san(id) + " (not in the requirement registry)"
	}
	if revision != "" && !req.AppliesTo(revision) {
		return fmt.Sprintf("%s %s (%s only, not a rule of this %s run: applied as advice): %q", req.ID, req.Level, versionsText(req.Versions), revision, req.Quote)
	}
	if req.Derived {
		return fmt.Sprintf("%s %s (%s; derived by mcpflight from this sentence, spec/DERIVED.md): %q", req.ID, req.Level, versionsText(req.Versions), req.Quote)
	}
	return fmt.Sprintf("%s %s (%s): %q", req.ID, req.Level, versionsText(req.Versions), req.Quote)
}

// adviceLine is the line of a requirement cited as advice: a later
// revision's sentence on the same point, never the run's rule.
func adviceLine(id, revision string) string {
	req, ok := spec.Lookup(id)
	if !ok {
		return san(id) + " (not in the requirement registry)"
	}
	return fmt.Sprintf("%s %s (%s, a later revision's rule; not a rule of %s, applied as advice): %q", req.ID, req.Level, versionsText(req.Versions), revision, req.Quote)
}

func versionsText(v string) string {
	switch v {
	case "25":
		return spec.V20251125
	case "26":
		return spec.V20260728
	case "25+26":
		return spec.V20251125 + " and " + spec.V20260728
	case "ext":
		return "tasks extension"
	}
	return v
}

func findEvent(events []chrono.Event, seq uint64) (chrono.Event, bool) {
	// Sequence numbers start at 1 and have no gaps.
	if seq >= 1 && seq <= uint64(len(events)) && events[seq-1].Seq == seq {
		return events[seq-1], true
	}
	for _, e := range events {
		if e.Seq == seq {
			return e, true
		}
	}
	return chrono.Event{}, false
}

func (t textWriter) chronology(events []chrono.Event) {
	if len(events) == 0 {
		t.linef("%s(no chronology)", indent)
		return
	}
	for _, e := range events {
		line := fmt.Sprintf("%s#%-4d %9s  %s", indent, e.Seq, offset(e.Offset), EventLine(e))
		if e.Kind == chrono.KindFrame && len(e.Raw) > 0 {
			line += "  " + t.paint(ansiDim, rawText(e.Raw, e.Size))
		}
		t.linef("%s", line)
	}
}

// offset formats a chronology offset as +seconds with millisecond
// precision.
func offset(d time.Duration) string {
	return "+" + strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
}

// rawText is a frame's bytes, sanitised and clipped to MaxRawText.
func rawText(raw []byte, size int) string {
	size = max(size, len(raw))
	if len(raw) > MaxRawText {
		raw = raw[:MaxRawText]
	}
	s := san(string(raw))
	if size > len(raw) {
		s += fmt.Sprintf("… (%d bytes)", size)
	}
	return s
}

// EventLine is the one-line summary of a chronology event: direction,
// channel and what it was (a frame's kind, method, id and progress token;
// a harness event's text), sanitised.
func EventLine(e chrono.Event) string {
	var b strings.Builder
	b.WriteString(string(e.Dir))
	if e.Channel != "" {
		b.WriteString(" " + san(e.Channel))
	}
	if e.Kind == chrono.KindStderr {
		b.WriteString(": " + rawText(e.Raw, e.Size))
		return b.String()
	}
	b.WriteString(" ")
	switch e.Kind {
	case chrono.KindFrame:
		b.WriteString(frameSummary(e.Summary))
		if e.Truncated {
			fmt.Fprintf(&b, " (truncated, %d bytes)", e.Size)
		}
	case chrono.KindState:
		if e.From != "" || e.To != "" {
			b.WriteString("state " + san(e.From) + " -> " + san(e.To))
		} else {
			b.WriteString("state: " + san(e.Text))
		}
	default:
		b.WriteString(string(e.Kind))
		if e.Text != "" {
			b.WriteString(": " + san(e.Text))
		}
	}
	return b.String()
}

func frameSummary(s *chrono.Summary) string {
	if s == nil {
		return "frame"
	}
	if s.Malformed != "" {
		return "malformed frame (" + san(s.Malformed) + ")"
	}
	parts := []string{san(s.Kind)}
	if s.Method != "" {
		parts = append(parts, san(s.Method))
	}
	if s.ID != "" {
		parts = append(parts, "id="+san(s.ID))
	}
	if s.Token != "" {
		parts = append(parts, "progressToken="+san(s.Token))
	}
	if s.RequestID != "" {
		parts = append(parts, "requestId="+san(s.RequestID))
	}
	return strings.Join(parts, " ")
}

func (t textWriter) teardown(g results.TeardownGrade) {
	t.linef("%s", t.bold("teardown"))
	t.linef("  %s %s", t.badge(g.Verdict), san(g.Summary))
	if g.Requirement != "" && g.Verdict != verdict.Pass {
		t.linef("%sRequirement: %s", indent, requirementLine(g.Requirement, g.Revision))
		if g.Advice != "" {
			t.linef("%sAdvice: %s", indent, adviceLine(g.Advice, g.Revision))
		}
	}
	if g.Sessions == 0 {
		return
	}
	var steps []string
	for _, s := range []results.Step{results.StepNone, results.StepCloseInput, results.StepDelete, results.StepSIGTERM, results.StepSIGKILL} {
		if n := g.Steps[s]; n > 0 {
			label := string(s)
			if s == results.StepNone {
				label = "exited before close"
			}
			steps = append(steps, fmt.Sprintf("%s %d", label, n))
		}
	}
	t.linef("%ssessions by rung: %s; leftover processes %d; slowest %s",
		indent, strings.Join(steps, ", "), g.Leftovers, seconds(g.Slowest))
}

// Summary is the report's last line, e.g. "mcpflight: 31 cases — 29 pass,
// 0 fail, 1 warn, 1 info, 0 skip, 0 error (0.84s) — conformant"; a run
// whose schema check found violations says "… (0.84s) — 2 schema
// violations — non-conformant".
func Summary(r *results.Report) string {
	if r.NoSession != nil {
		return fmt.Sprintf("mcpflight: %s: %s (%s)", san(r.Target), san(r.NoSession.Line), seconds(r.Duration))
	}
	counts := make([]string, 0, len(verdictOrder))
	for _, v := range verdictOrder {
		if v == verdict.Blocked && r.Counts[v] == 0 {
			continue // said only when a case was blocked
		}
		counts = append(counts, fmt.Sprintf("%d %s", r.Counts[v], v))
	}
	return fmt.Sprintf("mcpflight: %s — %s (%s)%s%s — %s",
		plural(len(r.Results), "case"), strings.Join(counts, ", "), seconds(r.Duration), schemaSummaryPart(r.Schema), inconsistencyPart(r), conclusion(r))
}

func conclusion(r *results.Report) string {
	if r.NoSession != nil {
		return san(r.NoSession.Line)
	}
	switch r.ExitCode() {
	case 0:
		if scope := r.Completeness().Scope(); scope != "" {
			return "conformant; " + san(scope)
		}
		return "conformant"
	case 1:
		if r.Interrupted {
			return "non-conformant (interrupted: not every case ran)"
		}
		return "non-conformant"
	}
	if r.ExitCode() == results.ExitIncomplete {
		return r.Completeness().Line()
	}
	if r.Interrupted {
		return "inconclusive: interrupted before every case ran"
	}
	return "inconclusive: the harness or the target broke"
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

type areaGroup struct {
	area    string
	results []results.Result
}

// groupByArea groups results by area, areas in order of first appearance.
func groupByArea(results []results.Result) []areaGroup {
	var groups []areaGroup
	index := map[string]int{}
	for _, r := range results {
		i, ok := index[r.Area]
		if !ok {
			i = len(groups)
			index[r.Area] = i
			groups = append(groups, areaGroup{area: r.Area})
		}
		groups[i].results = append(groups[i].results, r)
	}
	return groups
}

// plural is "1 case", "2 cases".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
