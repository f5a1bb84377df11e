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
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// Text writes a human-readable report: the target; the results grouped
// by area, each area's heading once (one line per case; for fail, warn
// and error the requirement's sentence, every expected alternative and
// the actual event); the skips folded into one line per reason (every
// skip in its area with Verbose); the teardown grade, the schema check,
// a recap of the findings (one line each, none on a clean run) and a
// summary line. The findings come last so that the end of the output,
// all a user may see of a long report, names every one of them.
func Text(w io.Writer, r *results.Report, opts TextOptions) error {
	s := NewTextStream(w, opts)
	s.Header(r)
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
	switch r.Role {
	case results.RoleClient:
		command = "check-client"
	case results.RoleConversation:
		command = "judge"
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
// a later (or another) revision's rule, applied as advice.
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
	what := plural(len(r.Results), resultNoun(r))
	if n := passiveCount(r); n > 0 {
		what = plural(len(r.Results)-n, resultNoun(r)) + " and " + plural(n, "passive rule")
	}
	return fmt.Sprintf("mcpflight: %s — %s (%s)%s%s — %s",
		what, strings.Join(counts, ", "), seconds(r.Duration), schemaSummaryPart(r.Schema), inconsistencyPart(r), conclusion(r))
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

// inAreaOrder is results in the text report's order: grouped by area,
// areas in order of first appearance, each area's results in their
// order (groupByArea).
func inAreaOrder(rs []results.Result) []results.Result {
	out := make([]results.Result, 0, len(rs))
	for _, g := range groupByArea(rs) {
		out = append(out, g.results...)
	}
	return out
}

type areaGroup struct {
	area    string
	results []results.Result
}

// groupByArea groups results by area, in the order of AreaOrder.
func groupByArea(rs []results.Result) []areaGroup {
	areas := make([]string, len(rs))
	for i, r := range rs {
		areas[i] = r.Area
	}
	var groups []areaGroup
	for _, i := range AreaOrder(areas) {
		if len(groups) == 0 || groups[len(groups)-1].area != rs[i].Area {
			groups = append(groups, areaGroup{area: rs[i].Area})
		}
		groups[len(groups)-1].results = append(groups[len(groups)-1].results, rs[i])
	}
	return groups
}

// AreaOrder is the order every report lists results in, given each
// one's area: the indices of areas grouped by area, areas in order of
// first appearance, indices in order within each. The catalogue
// interleaves areas (its cases are appended by the file that defines
// them), and the reports name each area once.
func AreaOrder(areas []string) []int {
	var names []string
	byArea := map[string][]int{}
	for i, a := range areas {
		if _, seen := byArea[a]; !seen {
			names = append(names, a)
		}
		byArea[a] = append(byArea[a], i)
	}
	order := make([]int, 0, len(areas))
	for _, a := range names {
		order = append(order, byArea[a]...)
	}
	return order
}

// plural is "1 case", "2 cases".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// folds reports whether the text report folds res into a line of its
// skips section instead of writing it in its area: every skip, unless
// the report is verbose, which lists each skip in its area.
func folds(res results.Result, verbose bool) bool {
	return !verbose && res.Outcome.Verdict == verdict.Skip
}

// caseName is how a recap or a folded line names a result: its ID, and
// in a report of several revisions the revision it ran under.
func caseName(r *results.Report, res results.Result) string {
	if multiRevision(r) {
		return san(res.ID) + " (" + san(revisionOf(r, res)) + ")"
	}
	return san(res.ID)
}

// summaryFold is the results of one verdict and one summary.
type summaryFold struct {
	summary string
	names   []string // caseName of each, in the report's order
}

// foldBySummary groups the results of rs whose verdict is v by their
// summary, sanitised, largest group first (ties in order of first
// appearance in rs). The skips a case could not exercise (Unexercised)
// are never grouped: each has a reason of its own, about its own
// chronology, so each is a group of one.
func foldBySummary(r *results.Report, rs []results.Result, v verdict.Verdict) []summaryFold {
	var folds []summaryFold
	index := map[string]int{}
	for _, res := range rs {
		if res.Outcome.Verdict != v {
			continue
		}
		summary, name := san(res.Outcome.Summary), caseName(r, res)
		if res.Outcome.Unexercised {
			folds = append(folds, summaryFold{summary, []string{name}})
			continue
		}
		i, ok := index[summary]
		if !ok {
			i = len(folds)
			index[summary] = i
			folds = append(folds, summaryFold{summary: summary})
		}
		folds[i].names = append(folds[i].names, name)
	}
	slices.SortStableFunc(folds, func(a, b summaryFold) int { return len(b.names) - len(a.names) })
	return folds
}

// foldedLine is one line for the results of a fold: "ID: summary" for
// one, "N cases: summary" (a conversation's: "N rules") for several.
func (t textWriter) foldedLine(r *results.Report, v verdict.Verdict, f summaryFold) {
	who := f.names[0]
	if len(f.names) > 1 {
		who = plural(len(f.names), resultNoun(r))
	}
	text := who + ": " + f.summary
	if f.summary == "" {
		text = who
	}
	if v == verdict.Skip {
		text = t.paint(ansiDim, text)
	}
	t.linef("  %s %s", t.badge(v), text)
}

// skips writes the skips section of a report that folds them: one line
// per reason, so that a run that skips most of the catalogue for want of
// a profile says so once, not once per case. Nothing when no case
// skipped.
func (t textWriter) skips(r *results.Report, rs []results.Result) {
	folds := foldBySummary(r, rs, verdict.Skip)
	if len(folds) == 0 {
		return
	}
	t.linef("")
	t.linef("%s", t.bold("skipped (-v names each "+resultNoun(r)+")"))
	for _, f := range folds {
		t.foldedLine(r, verdict.Skip, f)
	}
}

// findings writes the recap of the run's findings, the report's last
// section before the summary line, so that the end of the output names
// every one: a line per failed and per warned case (its verdict, ID,
// requirement and the seq of the first wrong event, their columns
// aligned), the errors folded by summary (an error says nothing of
// conformance, and a run cut short by --timeout has one per case not
// run, all alike), then the teardown's and the schema check's. Nothing
// on a run without a finding.
func (t textWriter) findings(r *results.Report, rs []results.Result) {
	type finding struct {
		v           verdict.Verdict
		who         string
		requirement string
		seq         uint64
	}
	var found []finding
	for _, v := range []verdict.Verdict{verdict.Fail, verdict.Warn} {
		for _, res := range rs {
			if res.Outcome.Verdict == v {
				found = append(found, finding{v, caseName(r, res), san(res.Outcome.Requirement), res.Outcome.ActualSeq})
			}
		}
	}
	errored := foldBySummary(r, rs, verdict.Error)
	var teardown []finding
	if g := r.Teardown; g.Verdict == verdict.Fail || g.Verdict == verdict.Warn || g.Verdict == verdict.Error {
		teardown = append(teardown, finding{g.Verdict, "teardown", san(g.Requirement), 0})
	}
	schema := schemaVerdict(r.Schema)
	if len(found) == 0 && len(errored) == 0 && len(teardown) == 0 && schema == verdict.Pass {
		return
	}
	t.linef("")
	t.linef("%s", t.bold("findings"))
	whoWidth, reqWidth := 0, 0
	for _, f := range slices.Concat(found, teardown) {
		whoWidth = max(whoWidth, utf8.RuneCountInString(f.who))
		reqWidth = max(reqWidth, len(f.requirement))
	}
	write := func(f finding) {
		line := fmt.Sprintf("  %s %s", t.badge(f.v), padRight(f.who, whoWidth))
		if reqWidth > 0 {
			line += "  " + padRight(f.requirement, reqWidth)
		}
		if f.seq != 0 {
			line += fmt.Sprintf("  seq %d", f.seq)
		}
		t.linef("%s", strings.TrimRight(line, " "))
	}
	for _, f := range found {
		write(f)
	}
	for _, f := range errored {
		t.foldedLine(r, verdict.Error, f)
	}
	for _, f := range teardown {
		write(f)
	}
	for _, f := range r.Schema.Findings {
		t.linef("  %s %s  %s  first in %s seq %d", t.badge(verdict.Fail), san(f.ID()), san(f.Requirement), san(f.FirstCase), f.Seq)
	}
	if schema == verdict.Error {
		t.linef("  %s schema: the schema could not be loaded", t.badge(verdict.Error))
	}
}

// padRight pads s with spaces to width columns.
func padRight(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

// resultNoun is what a report's results are: cases, or the rules a
// conversation was judged by.
// passiveCount is how many of r's results are the passive rules'
// findings, not cases.
func passiveCount(r *results.Report) int {
	n := 0
	for _, res := range r.Results {
		if res.Area == results.AreaPassive {
			n++
		}
	}
	return n
}

func resultNoun(r *results.Report) string {
	if r.Role == results.RoleConversation {
		return "rule"
	}
	return "case"
}
