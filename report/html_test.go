package report

import (
	"bytes"
	"regexp"
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

// TestHTMLContent checks the parts of the page the issue asks for.
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
		`<g class="row in wrong" data-seq="3">`, `<g class="row in race wrong" data-seq="5">`,
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
	if n := strings.Count(out, "<svg"); n != 4 {
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
