package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/baseline"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// racyReport is fixedReport with the late response of its first case
// arriving 0.5ms after the cancel, so that the two cross.
func racyReport() *results.Report {
	rep := fixedReport()
	rep.Results[0].Events[3].Offset = 5200 * time.Microsecond
	rep.Results[0].Events[4].Offset = 5500 * time.Microsecond
	return rep
}

func TestHTMLGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, racyReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html.golden", buf.Bytes())
}

// TestHTMLContent checks the parts a reader of the page relies on: the
// matrix and its filter, the sequence diagrams with their lanes, the
// quoted requirement and its link, the first wrong event and the link to
// it, the race marks, and the expected alternatives.
func TestHTMLContent(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, racyReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`<table class="matrix" id="matrix">`,
		`<input id="filter"`,
		`<svg class="seq"`,
		// lanes
		`>checker</text>`, `>harness</text>`, `>server</text>`,
		// the quoted requirement and its link
		`The `, `https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress`,
		// the first wrong event of the fail (seq 3) and of the warn (seq 5)
		`<g class="row in wrong" data-seq="3" id="case-progress_strictly-increasing-wrong">`,
		`<g class="row in race wrong" data-seq="5" id="case-cancel_mid-work-no-response-wrong">`,
		// the link from the actual event to its row
		`<a href="#case-progress_strictly-increasing-wrong">seq 3</a>`,
		`first wrong`,
		// the response crossing the cancel
		`<g class="row out race" data-seq="3">`, `race ↔ #5`,
		// the expected alternatives
		`<li>an error response with code -32800 (request cancelled)</li>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(out, `<svg class="seq"`); n != 4 {
		t.Errorf("%d sequence diagrams, want 4 (one per case with a chronology)", n)
	}
}

// TestHTMLSelfContained: no external scripts, styles, images or fonts.
func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, fixedReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\ssrc=`), regexp.MustCompile(`(?i)<link\b`), regexp.MustCompile(`(?i)@import`),
		regexp.MustCompile(`(?i)url\(`), regexp.MustCompile(`(?i)<iframe`),
	} {
		if loc := bad.FindStringIndex(out); loc != nil {
			t.Errorf("external asset %q at %d", out[loc[0]:loc[1]], loc[0])
		}
	}
	// The only links out are to the spec.
	for _, m := range regexp.MustCompile(`href="([^"#][^"]*)"`).FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[1], "https://modelcontextprotocol.io/") && !strings.HasPrefix(m[1], "https://github.com/modelcontextprotocol/") {
			t.Errorf("unexpected link %q", m[1])
		}
	}
}

// TestHTMLEscapesUntrusted feeds markup and control characters from the
// target and checks none of it is live in the page.
func TestHTMLEscapesUntrusted(t *testing.T) {
	rep := fixedReport()
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	rep.Target = evil
	rep.Server.Name = evil
	rep.Results[0].Outcome.Actual = evil + "\x1b[31m"
	rep.Results[0].Outcome.Expected = []string{evil}
	rep.Results[0].Title = evil
	rep.Results[1].ID = `cancel/"><svg onload=alert(3)>`
	rep.Results[2].Events = append(rep.Results[2].Events, chrono.Event{
		Seq: 4, Offset: 3 * time.Millisecond, Dir: chrono.In, Channel: "stderr</title><script>alert(4)</script>",
		Kind: chrono.KindStderr, Raw: []byte(evil + "\x07"), Size: len(evil) + 1,
	})
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"<script>alert", "<img src", "<svg onload", "\x1b", "\x07"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("%q is live in the page at %d: %q", bad, i, out[max(0, i-60):min(len(out), i+60)])
		}
	}
	if n := strings.Count(out, "<script"); n != 1 {
		t.Errorf("%d <script elements, want only the page's own", n)
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the escaped markup is not shown as text")
	}
}

func TestRacing(t *testing.T) {
	at := func(seq uint64, us int, dir chrono.Direction, s chrono.Summary) chrono.Event {
		return chrono.Event{Seq: seq, Offset: time.Duration(us) * time.Microsecond, Dir: dir, Kind: chrono.KindFrame, Summary: &s}
	}
	cancel := func(seq uint64, us int, id string) chrono.Event {
		return at(seq, us, chrono.Out, chrono.Summary{Kind: "notification", Method: "notifications/cancelled", RequestID: id})
	}
	events := []chrono.Event{
		at(1, 0, chrono.Out, chrono.Summary{Kind: "request", Method: "tools/call", ID: "2", Token: `"t"`}),
		at(2, 300, chrono.In, chrono.Summary{Kind: "notification", Method: "notifications/progress", Token: `"t"`}), // before the cancel
		cancel(3, 5000, "2"),
		at(4, 5100, chrono.In, chrono.Summary{Kind: "notification", Method: "notifications/message"}),                // unrelated
		at(5, 5200, chrono.In, chrono.Summary{Kind: "notification", Method: "notifications/progress", Token: `"t"`}), // crosses
		at(6, 5400, chrono.In, chrono.Summary{Kind: "result", ID: "2"}),                                              // crosses too
		at(7, 9000, chrono.Out, chrono.Summary{Kind: "request", Method: "ping", ID: "3"}),
		at(8, 9200, chrono.In, chrono.Summary{Kind: "result", ID: "3"}), // its answer
		{Seq: 9, Offset: 9300 * time.Microsecond, Dir: chrono.Harness, Kind: chrono.KindNote},
		at(10, 20000, chrono.Out, chrono.Summary{Kind: "request", Method: "tools/call", ID: "4"}),
		cancel(11, 20100, "4"),
		at(12, 22000, chrono.In, chrono.Summary{Kind: "result", ID: "4"}), // too late to have crossed
	}
	got := racing(events)
	want := map[uint64]uint64{3: 5, 5: 3, 6: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("racing (-want +got):\n%s", diff)
	}
}

func TestSequenceGolden(t *testing.T) {
	rep := racyReport()
	var buf bytes.Buffer
	for _, res := range rep.Results {
		if len(res.Events) == 0 {
			continue
		}
		buf.WriteString("== " + res.ID + "\n")
		if err := Sequence(&buf, res.Events, SequenceOptions{Mark: res.Outcome.ActualSeq}); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "sequence.golden", buf.Bytes())
	if strings.Contains(buf.String(), "\x1b") {
		t.Error("an escape reached the diagram")
	}
}

func TestBaselineGolden(t *testing.T) {
	rep := fixedReport()
	entries := []baseline.Entry{
		{ID: "cancel/mid-work-no-response", Verdict: verdict.Warn}, // known
		{ID: "cancel/unknown-id-ignored", Verdict: verdict.Fail},   // stale: passes now
		{ID: "ping/empty-result", Verdict: verdict.Fail},           // unchecked: error now
		{ID: "gone/case", Verdict: verdict.Fail},                   // unchecked: not run
		{ID: baseline.TeardownID, Verdict: verdict.Warn},           // known
	}
	var buf bytes.Buffer
	if err := Baseline(&buf, rep, baseline.Compare(rep, entries), "known\x1b.json"); err != nil {
		t.Fatal(err)
	}
	golden(t, "baseline.golden", buf.Bytes())
}

// TestRacingCancelShape: the race panel tells a cancel by its shape (a
// notification whose params name a requestId), which in both revisions
// is notifications/cancelled alone among the notifications.
func TestRacingCancelShape(t *testing.T) {
	for _, tt := range []struct {
		frame string
		want  bool
	}{
		{`{"jsonrpc":"2.0","method":"` + mcp.NotificationCancelled + `","params":{"requestId":3}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}`, false},
		{`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":"t"}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"requestId":3}}`, false},
	} {
		msg, err := jsonrpc.Decode([]byte(tt.frame))
		if err != nil {
			t.Fatal(err)
		}
		if got := namesRequest(chrono.Summarize(msg, nil)); got != tt.want {
			t.Errorf("%s: namesRequest = %v, want %v", tt.frame, got, tt.want)
		}
	}
}

// TestHTMLFindingsFirst: wherever the page lists cases, the findings come
// first (fail, error, warn), and the skips last, folded away: in the
// matrix, by area and by column, and in the list of cases.
func TestHTMLFindingsFirst(t *testing.T) {
	rep := fixedReport()
	// Skips ahead of everything in the run's order, as a catalogue with
	// many cases for another transport has them.
	skips := []results.Result{
		{ID: "lifecycle/a", Title: "a", Area: "lifecycle", Transport: "stdio", Outcome: verdict.Skipf("over HTTP only")},
		{ID: "lifecycle/b", Title: "b", Area: "lifecycle", Transport: "stdio", Outcome: verdict.Skipf("over HTTP only")},
	}
	rep.Results = append(skips, rep.Results...)
	rep.Counts[verdict.Skip] += len(skips)
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	matrix := out[strings.Index(out, `<table class="matrix"`):strings.Index(out, "</table>")]

	// The matrix: its rows by their worst verdict, its columns findings
	// first.
	var areas []string
	for _, m := range regexp.MustCompile(`<tr data-area="([^"]*)">`).FindAllStringSubmatch(matrix, -1) {
		areas = append(areas, m[1])
	}
	if want := []string{"progress", "ping", "cancel", "rpc", "lifecycle", "logging"}; !slices.Equal(areas, want) {
		t.Errorf("matrix rows %v, want %v (by worst verdict: fail, error, warn, blocked, skip)", areas, want)
	}
	var columns []string
	for _, m := range regexp.MustCompile(`<th><span class="badge v-([a-z]+)">`).FindAllStringSubmatch(matrix, -1) {
		columns = append(columns, m[1])
	}
	if want := []string{"fail", "error", "warn", "blocked", "info", "pass", "skip"}; !slices.Equal(columns, want) {
		t.Errorf("matrix columns %v, want %v", columns, want)
	}
	// Every skip chip is in a folded cell, and no other chip is.
	for _, cell := range regexp.MustCompile(`<td class="[^"]*">.*?</td>`).FindAllString(matrix, -1) {
		folded := strings.Contains(cell, `<details class="chips">`)
		if skip := strings.Contains(cell, "c-skip"); skip != folded {
			t.Errorf("a cell with skips %v is folded %v: %s", skip, folded, cell)
		}
		if strings.Contains(cell, "<details class=\"chips\" open") {
			t.Errorf("a folded cell is open: %s", cell)
		}
	}

	// The list of cases: findings first, then by rank, the skips last in
	// their closed group.
	caseRe := regexp.MustCompile(`<details class="case" id="[^"]*" data-filter="[^"]*" data-verdict="([a-z]+)"`)
	var verdicts []string
	for _, m := range caseRe.FindAllStringSubmatch(out, -1) {
		verdicts = append(verdicts, m[1])
	}
	if want := []string{"fail", "error", "warn", "blocked", "info", "pass", "skip", "skip", "skip"}; !slices.Equal(verdicts, want) {
		t.Errorf("cases listed %v, want %v", verdicts, want)
	}
	group := strings.Index(out, `<details class="group" id="skipped">`)
	if group < 0 {
		t.Fatal("no closed group of skips")
	}
	if first := strings.Index(out, `data-verdict="skip"`); first < group {
		t.Errorf("a skip is listed at %d, before the group of skips at %d", first, group)
	}
	if !strings.Contains(out, `<summary>3 skipped (not run: each says why)</summary>`) {
		t.Error("the group of skips does not say how many it holds")
	}
}

// TestDiagramShowsTheWrongEvent: of a chronology longer than the
// diagram's bound, the diagram draws a window that holds the first wrong
// event.
func TestDiagramShowsTheWrongEvent(t *testing.T) {
	const n = MaxDiagramEvents + 600
	events := make([]chrono.Event, n)
	for i := range events {
		events[i] = chrono.Event{Seq: uint64(i + 1), Dir: chrono.In, Channel: "server stderr", Kind: chrono.KindStderr, Raw: []byte("noise")}
	}
	for _, tt := range []struct {
		wrong          uint64
		earlier, after int
	}{
		{0, 0, 600},
		{5, 0, 600},
		{MaxDiagramEvents, 0, 600},
		{MaxDiagramEvents + 1, MaxDiagramEvents + 1 - 1 - MaxDiagramEvents*3/4, 600 - (MaxDiagramEvents + 1 - 1 - MaxDiagramEvents*3/4)},
		{n - 10, 600, 0},
		{n, 600, 0},
	} {
		d := buildDiagram(events, tt.wrong, nil, Lanes{})
		if d.Earlier != tt.earlier || d.More != tt.after || len(d.Rows) != MaxDiagramEvents {
			t.Errorf("wrong #%d: %d earlier, %d drawn, %d more; want %d, %d, %d", tt.wrong, d.Earlier, len(d.Rows), d.More, tt.earlier, MaxDiagramEvents, tt.after)
		}
		drawn := slices.ContainsFunc(d.Rows, func(r diagramRow) bool { return r.Wrong && r.Seq == tt.wrong })
		if drawn != (tt.wrong != 0) || d.Wrong != drawn {
			t.Errorf("wrong #%d: drawn %v (diagram says %v)", tt.wrong, drawn, d.Wrong)
		}
	}
}

// servedReport is fixedReport run against a server the harness started:
// its own chronology, and a note in a case's.
func servedReport() *results.Report {
	rep := fixedReport()
	rep.Target = "http://127.0.0.1:8080/mcp"
	rep.Served = &results.ServedServer{
		Command: "node server.js --port 8080",
		Events: []chrono.Event{
			harness(1, 0, chrono.KindState, "process", "started pid 42 in process group 42: node server.js --port 8080"),
			{Seq: 2, Offset: ms(30), Dir: chrono.In, Channel: "server stderr", Kind: chrono.KindStderr, Raw: []byte("listening on 8080"), Size: 17},
			harness(3, 40, chrono.KindCheckpoint, "process", "http://127.0.0.1:8080/mcp answered HTTP 405 after 40ms (probe 2): the server is up"),
			{Seq: 4, Offset: ms(50), Dir: chrono.In, Channel: "server stderr", Kind: chrono.KindStderr, Raw: []byte("session 0123456789abcdef0123 opened"), Size: 35},
			harness(5, 90, chrono.KindExit, "process", "pid 42 exited with code 0"),
		},
	}
	res := &rep.Results[1]
	res.Events = append(res.Events,
		chrono.Event{Seq: 4, Offset: ms(3), Dir: chrono.In, Channel: "server stderr", Kind: chrono.KindStderr, Raw: []byte("session 0123456789abcdef0123 opened"), Size: 35},
		harness(5, 4, chrono.KindNote, "server stderr", "the served server printed 3 stderr lines while this connection was open; the 1 that name its session ID are recorded here; the others are left to the run's record of the server's output"))
	return rep
}

// TestHTMLServedServer: a served server's output is in a section of its
// own, once, and a case with a chronology points to it.
func TestHTMLServedServer(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, servedReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`<h2 id="served">Served server</h2>`,
		`<div class="mono">node server.js --port 8080</div>`,
		`(2 lines, 5 events)`,
		`<td class="mono">in server stderr: listening on 8080</td>`,
		`is under <a href="#served">Served server</a>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(out, "listening on 8080"); n != 1 {
		t.Errorf("the served server's line is on the page %d times, want once", n)
	}
	if n := strings.Count(out, `<a href="#served">`); n != 4 {
		t.Errorf("%d cases point to the served server, want the 4 with a chronology", n)
	}
	buf.Reset()
	if err := HTML(&buf, fixedReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="served"`) {
		t.Error("a run without a served server has its section")
	}
}

// TestJSONServedServer: the JSON report carries the served server's
// chronology in servedServer, streamed as the document encodes it, and
// leaves it out for a run without one.
func TestJSONServedServer(t *testing.T) {
	for _, rep := range []*results.Report{servedReport(), fixedReport()} {
		var streamed, whole bytes.Buffer
		if err := JSON(&streamed, rep); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&whole)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(Document(rep)); err != nil {
			t.Fatal(err)
		}
		if want := string(chrono.SafeJSON(whole.Bytes())); streamed.String() != want {
			t.Errorf("streamed JSON differs from the document encoded at once:\n%s\n---\n%s", streamed.String(), want)
		}
		var doc struct {
			ServedServer *struct {
				Command string         `json:"command"`
				Events  []chrono.Event `json:"events"`
			} `json:"servedServer"`
		}
		if err := json.Unmarshal(streamed.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		switch {
		case rep.Served == nil && doc.ServedServer != nil:
			t.Errorf("servedServer %+v for a run without one", doc.ServedServer)
		case rep.Served != nil && (doc.ServedServer == nil || doc.ServedServer.Command != rep.Served.Command || len(doc.ServedServer.Events) != len(rep.Served.Events)):
			t.Errorf("servedServer %+v, want the command and the %d events", doc.ServedServer, len(rep.Served.Events))
		}
	}
}

// TestServedServerHostile: the served server's command and output are
// untrusted, in every format that shows them.
func TestServedServerHostile(t *testing.T) {
	rep := hostileReport()
	rep.Served = servedReport().Served
	rep.Served.Command = "node " + hostile
	rep.Served.Events = append(rep.Served.Events,
		chrono.Event{Seq: 6, Dir: chrono.In, Channel: "server stderr", Kind: chrono.KindStderr, Raw: []byte(hostile + huge), Size: len(hostile) + len(huge)},
		harness(7, 100, chrono.KindNote, hostile, hostile+huge))
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "html", buf.Bytes())
	checkHTML(t, buf.String())
	served := buf.String()[strings.Index(buf.String(), `<h2 id="served">`):]
	if !strings.Contains(served, `<div class="mono">node csi`) || !strings.Contains(served, "&lt;script&gt;alert(1)") || !strings.Contains(served, "truncated") {
		t.Error("html: the hostile command is not in the served server's section, escaped, or its 1 MB line is not cut")
	}
	buf.Reset()
	if err := JSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "json", buf.Bytes())
	checkJSON(t, buf.Bytes())
	var doc JSONReport
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(hostile, "\xff\xfe", "\ufffd\ufffd")
	if doc.ServedServer == nil || doc.ServedServer.Command != "node "+want {
		t.Errorf("json: servedServer %+v, want the exact command", doc.ServedServer)
	}
}
