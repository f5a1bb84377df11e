package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// RaceWindow is how soon after a cancel a response or progress for the
// cancelled request must arrive for the diagrams to mark the two as
// racing: the server may have sent it before it read the cancel.
const RaceWindow = time.Millisecond

// MaxDiagramEvents bounds the events one sequence diagram draws; the
// rest are listed as a count (the JSON report has them all). A first
// wrong event past the bound is drawn: the window moves to it.
const MaxDiagramEvents = 400

// findingsFirst is the order the page lists verdicts, areas and cases
// in: the findings (fail, error, warn), then blocked (its finding is
// another case's), info and pass, and the skips last, collapsed, so
// that a reader sees what broke without scrolling past what did not
// run.
var findingsFirst = []verdict.Verdict{verdict.Fail, verdict.Error, verdict.Warn, verdict.Blocked, verdict.Info, verdict.Pass, verdict.Skip}

// findingRank is v's place in findingsFirst; a verdict it does not list
// ranks with the skips.
func findingRank(v verdict.Verdict) int {
	if i := slices.Index(findingsFirst, v); i >= 0 {
		return i
	}
	return slices.Index(findingsFirst, verdict.Skip)
}

//go:embed html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// HTML writes the report as one self-contained HTML page (inline CSS and
// JavaScript, no external assets): a matrix of cases by verdict with
// counts, a text filter (by ID, verdict or area), and for every case its
// quoted requirement with links to the spec, expected against actual, and
// its chronology drawn as an SVG sequence diagram between the checker,
// the harness and the server, with racing frames marked and the first
// wrong event highlighted. The findings come first, in the matrix and in
// the list of cases, and the skips last and collapsed; a long diagram
// scrolls in a box of its own, which opens at the first wrong event. A
// server the harness started for the run (results.Report.Served) has a
// section of its own with its output. Everything from the target is
// sanitised and escaped by html/template.
func HTML(w io.Writer, r *results.Report) error {
	if err := htmlTemplate.Execute(w, htmlPage(r)); err != nil {
		return fmt.Errorf("report: writing HTML: %w", err)
	}
	return nil
}

// The page's view model. Every string in it is sanitised; html/template
// escapes it for its context.
type (
	page struct {
		Title      string
		Header     []kv
		Summary    string
		Notes      []string
		Conclusion string
		ExitCode   int
		Verdicts   []verdictCount
		Matrix     []matrixRow
		// Cases are the cases that ran, findings first; Skipped the
		// skips, listed in a group of their own, collapsed.
		Cases, Skipped []htmlCase
		Served         *htmlServed
		Teardown       htmlTeardown
		Schema         htmlSchema
		Changes        *htmlChanges
		Total          int
		RaceWindow     string
		// LeftLane and RightLane name the diagram's two ends.
		LeftLane, RightLane string
	}
	kv struct {
		Key, Value string
	}
	verdictCount struct {
		Verdict string
		Count   int
	}
	matrixRow struct {
		Area  string
		Cells []matrixCell
		Total int
	}
	matrixCell struct {
		Verdict string
		Cases   []caseRef
		// Collapsed cells (the skips) list their cases folded away.
		Collapsed bool
	}
	caseRef struct {
		ID, Anchor, Verdict string
	}
	htmlCase struct {
		ID, Title, Area, Verdict, Anchor string
		Transport, Duration, Summary     string
		Open                             bool
		Req                              *htmlReq
		OtherReqs                        []string
		Expected                         []string
		Actual                           string
		ActualSeq                        uint64
		ActualEvent                      string
		Diagram                          *diagram
		Events                           []eventRow
		Filter                           string
		// WrongDrawn is set when the diagram draws the first wrong event,
		// whose row then has the id Anchor+"-wrong".
		WrongDrawn bool
		// Served is set when the run had a served server, whose output
		// is in a section of its own.
		Served bool
	}
	htmlServed struct {
		Command string
		Lines   int
		Events  []eventRow
	}
	htmlReq struct {
		ID, Level, Versions, Quote string
		Links                      []spec.Link
		Unknown                    bool
	}
	eventRow struct {
		Seq                  uint64
		Offset, Dir, Channel string
		Line, Raw            string
		Wrong, Race          bool
	}
	htmlTeardown struct {
		Verdict, Summary, Requirement, Advice, Detail string
	}
)

func htmlPage(r *results.Report) page {
	p := page{
		Title:      "mcpflight: " + san(r.Target),
		Summary:    Summary(r),
		Notes:      sanAll(r.Notes),
		Conclusion: conclusion(r),
		ExitCode:   r.ExitCode(),
		Total:      len(r.Results),
		RaceWindow: RaceWindow.String(),
		LeftLane:   LanesOf(r.Role).Left,
		RightLane:  LanesOf(r.Role).Right,
	}
	server := "no successful handshake"
	if r.Server != nil {
		server = strings.TrimSpace(san(r.Server.Name) + " " + san(r.Server.Version))
		if r.Server.Title != "" {
			server += " (" + san(r.Server.Title) + ")"
		}
	}
	p.Header = []kv{
		{"target", san(r.Target)},
		{"transport", san(r.Transport)},
		{"server", server},
		{"protocol", san(r.Version)},
		{"profile", orDash(san(r.Profile))},
		{"strict", strconv.FormatBool(r.Strict)},
		{"started", r.Started.UTC().Format(time.RFC3339)},
		{"duration", seconds(r.Duration)},
	}
	p.Header = append(p.Header, htmlRevisionHeader(r)...)
	p.Changes = htmlChangesOf(r)
	for _, v := range findingsFirst {
		p.Verdicts = append(p.Verdicts, verdictCount{string(v), r.Counts[v]})
	}
	areas := groupByArea(r.Results)
	slices.SortStableFunc(areas, func(a, b areaGroup) int { return worstRank(a.results) - worstRank(b.results) })
	for _, g := range areas {
		row := matrixRow{Area: san(g.area), Total: len(g.results)}
		for _, v := range findingsFirst {
			cell := matrixCell{Verdict: string(v), Collapsed: v == verdict.Skip}
			for _, res := range g.results {
				if res.Outcome.Verdict == v {
					cell.Cases = append(cell.Cases, caseRef{ID: san(res.ID) + revisionNote(r, res), Anchor: resultAnchor(r, res), Verdict: string(v)})
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		p.Matrix = append(p.Matrix, row)
	}
	ordered := slices.Clone(r.Results)
	slices.SortStableFunc(ordered, func(a, b results.Result) int {
		return findingRank(a.Outcome.Verdict) - findingRank(b.Outcome.Verdict)
	})
	for _, res := range ordered {
		c := htmlCaseOf(res, LanesOf(r.Role))
		c.Anchor, c.Transport = resultAnchor(r, res), c.Transport+revisionNote(r, res)
		c.Served = r.Served != nil && len(res.Events) > 0
		if res.Outcome.Verdict == verdict.Skip {
			p.Skipped = append(p.Skipped, c)
		} else {
			p.Cases = append(p.Cases, c)
		}
	}
	p.Served = htmlServedOf(r.Served)
	p.Schema = htmlSchemaOf(r.Schema)
	if multiRevision(r) {
		for i, f := range r.Schema.Findings {
			if i < len(p.Schema.Findings) {
				p.Schema.Findings[i].CaseAnchor = anchorID(f.FirstCase + "@" + f.Revision)
			}
		}
	}
	g := r.Teardown
	p.Teardown = htmlTeardown{Verdict: string(g.Verdict), Summary: san(g.Summary)}
	if g.Requirement != "" && g.Verdict != verdict.Pass {
		p.Teardown.Requirement = requirementLine(g.Requirement, g.Revision)
		if g.Advice != "" {
			p.Teardown.Advice = adviceLine(g.Advice, g.Revision)
		}
	}
	if g.Sessions > 0 {
		p.Teardown.Detail = fmt.Sprintf("%d sessions; worst rung %s; leftover processes %d; slowest %s",
			g.Sessions, san(string(g.Worst)), g.Leftovers, seconds(g.Slowest))
	}
	return p
}

func htmlCaseOf(res results.Result, lanes Lanes) htmlCase {
	o := res.Outcome
	c := htmlCase{
		ID:        san(res.ID),
		Title:     san(res.Title),
		Area:      san(res.Area),
		Verdict:   string(o.Verdict),
		Anchor:    anchorID(res.ID),
		Transport: san(res.Transport),
		Duration:  seconds(res.Duration),
		Summary:   san(o.Summary),
		Open:      o.Verdict == verdict.Fail || o.Verdict == verdict.Warn || o.Verdict == verdict.Error,
		Actual:    san(o.Actual),
		ActualSeq: o.ActualSeq,
	}
	c.Filter = strings.ToLower(c.ID + " " + c.Verdict + " " + c.Area + " verdict:" + c.Verdict + " area:" + c.Area)
	for _, alt := range o.Expected {
		c.Expected = append(c.Expected, san(alt))
	}
	if o.Requirement != "" {
		c.Req = htmlRequirement(o.Requirement)
	}
	for _, id := range res.Reqs {
		if id != o.Requirement {
			c.OtherReqs = append(c.OtherReqs, san(id))
		}
	}
	if o.ActualSeq != 0 {
		if ev, ok := findEvent(res.Events, o.ActualSeq); ok {
			c.ActualEvent = EventLine(ev)
		}
	}
	races := racing(res.Events)
	if len(res.Events) > 0 {
		c.Diagram = buildDiagram(res.Events, o.ActualSeq, races, lanes)
		c.WrongDrawn = c.Diagram.Wrong
	}
	c.Events = eventRows(res.Events, o.ActualSeq, races)
	return c
}

// eventRows are the rows of a chronology's table of events: wrong marks
// the first wrong event, races the racing frames.
func eventRows(events []chrono.Event, wrong uint64, races map[uint64]uint64) []eventRow {
	var rows []eventRow
	for _, e := range events {
		row := eventRow{
			Seq: e.Seq, Offset: offset(e.Offset), Dir: string(e.Dir), Channel: san(e.Channel),
			Line: EventLine(e), Wrong: wrong != 0 && e.Seq == wrong, Race: races[e.Seq] != 0,
		}
		// A stderr line is its raw bytes, which its event line quotes.
		if len(e.Raw) > 0 && e.Kind != chrono.KindStderr {
			row.Raw = rawText(e.Raw, e.Size)
		}
		rows = append(rows, row)
	}
	return rows
}

// htmlServedOf is the section of a served server; nil for none.
func htmlServedOf(s *results.ServedServer) *htmlServed {
	if s == nil {
		return nil
	}
	h := &htmlServed{Command: san(s.Command), Events: eventRows(s.Events, 0, nil)}
	for _, e := range s.Events {
		if e.Kind == chrono.KindStderr {
			h.Lines++
		}
	}
	return h
}

// worstRank is the findingRank of the most severe verdict among rs.
func worstRank(rs []results.Result) int {
	worst := len(findingsFirst)
	for _, r := range rs {
		worst = min(worst, findingRank(r.Outcome.Verdict))
	}
	return worst
}

func htmlRequirement(id string) *htmlReq {
	req, ok := spec.Lookup(id)
	if !ok {
		return &htmlReq{ID: san(id), Unknown: true}
	}
	return &htmlReq{ID: req.ID, Level: req.Level, Versions: versionsText(req.Versions), Quote: req.Quote, Links: spec.Links(req.Source)}
}

// anchorID is a case's element id: "case-" and the ID with anything but
// letters, digits and hyphens replaced.
func anchorID(id string) string {
	var b strings.Builder
	b.WriteString("case-")
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// racing pairs frames whose arrows may have crossed in flight: a
// notifications/cancelled for a request, and that request's response or
// progress arriving within RaceWindow after it, which the server may have
// sent before it read the cancel. The map goes from each of the two
// sequence numbers to the other; a frame keeps its first partner.
//
// The cancels are told by their shape, as the chronology summarised it: a
// notification whose params name a request (requestId). In both
// revisions notifications/cancelled is the one notification that does,
// so the report needs no table of method names (TestRacingCancelShape
// keeps that true).
func racing(events []chrono.Event) map[uint64]uint64 {
	out := map[uint64]uint64{}
	tokens := map[string]string{} // request id → its progress token
	for i, a := range events {
		if !isWire(a) || a.Dir != chrono.Out || a.Summary == nil {
			continue
		}
		if a.Summary.Method != "" && a.Summary.ID != "" && a.Summary.Token != "" {
			tokens[a.Summary.ID] = a.Summary.Token
		}
		if !namesRequest(a.Summary) {
			continue
		}
		id := a.Summary.RequestID
		for _, b := range events[i+1:] {
			if b.Offset-a.Offset > RaceWindow {
				break
			}
			if !isWire(b) || b.Dir != chrono.In || b.Summary == nil {
				continue
			}
			response := b.Summary.Method == "" && b.Summary.ID == id
			progress := b.Summary.Token != "" && b.Summary.Token == tokens[id]
			if !response && !progress {
				continue
			}
			if out[a.Seq] == 0 {
				out[a.Seq] = b.Seq
			}
			if out[b.Seq] == 0 {
				out[b.Seq] = a.Seq
			}
		}
	}
	return out
}

// isWire reports whether an event is a frame on the wire between the
// checker and the server.
func isWire(e chrono.Event) bool {
	return e.Kind == chrono.KindFrame && (e.Dir == chrono.In || e.Dir == chrono.Out)
}

// Sequence diagram geometry, in SVG user units. The lane heads are an
// SVG of their own (headHeight tall) that stays at the top of the
// diagram's scroll box; the rows begin rowsTop below the top of theirs,
// or rowsTop+earlierHeight below it when a line says how many earlier
// events are not drawn.
const (
	diagramWidth  = 980
	laneChecker   = 190
	laneHarness   = 545
	laneServer    = 900
	rowHeight     = 30
	headHeight    = 40
	rowsTop       = 4
	earlierHeight = 22
	maxLabel      = 72
)

type (
	diagram struct {
		Width, Height, LaneBottom, HLWidth int
		HeadHeight                         int
		Lanes                              []diagramLane
		Rows                               []diagramRow
		// Earlier and More count the events before and after the ones
		// drawn (MaxDiagramEvents).
		Earlier, More int
		// Wrong is set when a row is the first wrong event.
		Wrong bool
	}
	diagramLane struct {
		X    int
		Name string
	}
	diagramRow struct {
		Seq              uint64
		Y, LineY, TextY  int
		Offset           string
		Class            string
		Arrow            bool
		X1, X2, Head     int
		HeadPoints       string
		LabelX           int
		Label, Tip       string
		BoxX, BoxY, BoxW int
		Wrong            bool
		Race             uint64
	}
)

// buildDiagram lays out events as rows of a sequence diagram: frames are
// arrows between the checker and server lanes, stderr a dashed arrow from
// the server, harness events boxes on the harness lane. Of a chronology
// longer than MaxDiagramEvents it draws the first ones, or, when the
// first wrong event is not among them, a window with it three quarters
// of the way down.
func buildDiagram(events []chrono.Event, wrong uint64, races map[uint64]uint64, lanes Lanes) *diagram {
	lanes = lanes.orDefault()
	d := &diagram{Width: diagramWidth, HLWidth: diagramWidth - 4, HeadHeight: headHeight, Lanes: []diagramLane{
		{laneChecker, lanes.Left}, {laneHarness, "harness"}, {laneServer, lanes.Right},
	}}
	if len(events) > MaxDiagramEvents {
		start := 0
		if w := slices.IndexFunc(events, func(e chrono.Event) bool { return wrong != 0 && e.Seq == wrong }); w >= MaxDiagramEvents {
			start = min(w-MaxDiagramEvents*3/4, len(events)-MaxDiagramEvents)
		}
		d.Earlier, d.More = start, len(events)-start-MaxDiagramEvents
		events = events[start : start+MaxDiagramEvents]
	}
	top := rowsTop
	if d.Earlier > 0 {
		top += earlierHeight
	}
	for i, e := range events {
		y := top + i*rowHeight
		row := diagramRow{
			Seq: e.Seq, Y: y, LineY: y + 20, TextY: y + 15, Offset: offsetMicros(e.Offset),
			Wrong: wrong != 0 && e.Seq == wrong, Race: races[e.Seq],
			Tip: fmt.Sprintf("#%d %s %s", e.Seq, offset(e.Offset), EventLine(e)),
		}
		label := diagramLabel(e)
		switch {
		case e.Kind == chrono.KindStderr:
			row.Arrow, row.Class = true, "stderr"
			row.X1, row.X2 = laneServer, laneHarness+20
		case e.Dir == chrono.Out:
			row.Arrow, row.Class = true, "out"
			row.X1, row.X2 = laneChecker, laneServer
		case e.Dir == chrono.In:
			row.Arrow, row.Class = true, "in"
			row.X1, row.X2 = laneServer, laneChecker
		default:
			row.Class = "harness"
		}
		if e.Kind == chrono.KindHTTP {
			row.Class += " http"
		}
		if e.Kind == chrono.KindFrame && e.Summary != nil && e.Summary.Malformed != "" {
			row.Class += " malformed"
		}
		label = clip(label, maxLabel)
		if row.Arrow {
			row.LabelX = (row.X1 + row.X2) / 2
			row.LineY = y + 22
			row.TextY = y + 16
			dir := 1
			if row.X2 < row.X1 {
				dir = -1
			}
			tip := row.X2
			row.HeadPoints = fmt.Sprintf("%d,%d %d,%d %d,%d", tip, row.LineY, tip-dir*9, row.LineY-5, tip-dir*9, row.LineY+5)
		} else {
			row.LabelX = laneHarness
			row.BoxW = min(len([]rune(label))*7+16, laneServer-laneChecker-20)
			row.BoxX = laneHarness - row.BoxW/2
			row.BoxY = row.TextY - 14
		}
		row.Label = label
		if row.Race != 0 {
			row.Class += " race"
		}
		if row.Wrong {
			row.Class += " wrong"
			d.Wrong = true
		}
		d.Rows = append(d.Rows, row)
	}
	d.LaneBottom = top + len(d.Rows)*rowHeight + 6
	d.Height = d.LaneBottom + 10
	return d
}

// diagramLabel is what an arrow or box says: for a frame its kind,
// method, id and token; for others the event line without direction.
func diagramLabel(e chrono.Event) string {
	switch e.Kind {
	case chrono.KindFrame:
		s := frameSummary(e.Summary)
		if e.Channel != "" {
			s += " [" + san(e.Channel) + "]"
		}
		return s
	case chrono.KindStderr:
		return "stderr: " + rawText(e.Raw, e.Size)
	}
	line := EventLine(e)
	return strings.TrimPrefix(line, string(e.Dir)+" ")
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// namesRequest reports whether s is a notification naming a request by
// its requestId: notifications/cancelled.
func namesRequest(s *chrono.Summary) bool {
	return s.ID == "" && s.Method != "" && s.RequestID != ""
}

// sanAll is san of each of ss.
func sanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = san(s)
	}
	return out
}
