package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// ms is a duration in milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// frame builds a recorded frame event.
func frame(seq uint64, offMs int, dir chrono.Direction, channel, raw string) chrono.Event {
	msg, err := jsonDecode(raw)
	return chrono.Event{Seq: seq, Offset: ms(offMs), Dir: dir, Channel: channel, Kind: chrono.KindFrame,
		Raw: []byte(raw), Size: len(raw), Summary: chrono.Summarize(msg, err)}
}

func harness(seq uint64, offMs int, kind chrono.Kind, channel, text string) chrono.Event {
	return chrono.Event{Seq: seq, Offset: ms(offMs), Dir: chrono.Harness, Channel: channel, Kind: kind, Text: text}
}

// fixedReport is a report built by hand, with fixed times, so that its
// renderings are stable.
func fixedReport() *results.Report {
	closed := results.Teardown{ExitedAfter: results.StepCloseInput, Waited: ms(3)}
	cancelEvents := []chrono.Event{
		frame(1, 0, chrono.Out, "stdin", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":3},"_meta":{"progressToken":"mcpflight-1"}}}`),
		frame(2, 4, chrono.In, "stdout", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpflight-1","progress":1,"total":3,"message":"step 1 of 3"}}`),
		frame(3, 5, chrono.Out, "stdin", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`),
		{Seq: 4, Offset: ms(6), Dir: chrono.Harness, Channel: "request 2", Kind: chrono.KindState, From: "pending", To: "cancel-requested"},
		frame(5, 9, chrono.In, "stdout", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done \u001b[31mred\u0007"}]}}`),
		{Seq: 6, Offset: ms(10), Dir: chrono.In, Channel: "stderr", Kind: chrono.KindStderr, Raw: []byte("cancel \x1b[2Jignored\a"), Size: 19},
		harness(7, 11, chrono.KindState, "stdin", "closing stdin"),
	}
	rs := []results.Result{
		{
			ID: "cancel/mid-work-no-response", Title: "no response after an accepted cancel", Area: "cancel",
			Reqs: []string{"CAN-8"}, Transport: "stdio", Duration: ms(12), Teardown: closed, Events: cancelEvents,
			Outcome: verdict.Outcome{
				Verdict: verdict.Warn, Requirement: "CAN-8",
				Summary:   "CAN-8 violated: a response for request 2 arrived after the cancel",
				Expected:  []string{"no response for request 2 within the grace window", "an error response with code -32800 (request cancelled)"},
				Actual:    "result for request 2: done \x1b[31mred\a",
				ActualSeq: 5,
			},
		},
		{
			ID: "cancel/unknown-id-ignored", Title: "a cancel for an unknown id is ignored", Area: "cancel",
			Reqs: []string{"CAN-14"}, Transport: "stdio", Duration: ms(8), Teardown: closed,
			Outcome: verdict.Passf("the session stayed usable"),
			Events: []chrono.Event{
				frame(1, 0, chrono.Out, "stdin", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`),
				frame(2, 1, chrono.Out, "stdin", `{"jsonrpc":"2.0","id":3,"method":"ping"}`),
				frame(3, 2, chrono.In, "stdout", `{"jsonrpc":"2.0","id":3,"result":{}}`),
			},
		},
		{
			ID: "progress/strictly-increasing", Title: "progress values increase", Area: "progress",
			Reqs: []string{"PRG-4"}, Transport: "stdio", Duration: ms(20), Teardown: closed,
			Outcome: verdict.Outcome{
				Verdict: verdict.Fail, Requirement: "PRG-4",
				Summary:  "PRG-4 violated: progress 1 followed progress 1",
				Expected: []string{"each progress value greater than the one before"},
				Actual:   "progress 1 after progress 1", ActualSeq: 3,
			},
			Events: []chrono.Event{
				frame(1, 0, chrono.In, "stdout", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`),
				frame(2, 1, chrono.In, "stdout", "not json \x1b]0;owned\a"),
				frame(3, 2, chrono.In, "stdout", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`),
			},
		},
		{
			ID: "progress/total-optional", Title: "progress without total", Area: "progress", Transport: "stdio",
			Duration: ms(7), Teardown: closed, Outcome: verdict.Infof("the server sends no total"),
		},
		{
			ID: "logging/level-filter", Title: "logging/setLevel filters messages", Area: "logging", Transport: "stdio",
			Outcome: verdict.Skipf("profile names no log tool; pass --profile"),
		},
		{
			ID: "rpc/id-zero", Title: "request id 0 is answered", Area: "rpc", Transport: "stdio",
			Duration: ms(6), Teardown: closed,
			Outcome: verdict.Blamed("ping carrying the ids under test", "PNG-1", "ping/empty-result", "error -32603"),
		},
		{
			ID: "ping/empty-result", Title: "ping answers an empty result", Area: "ping", Transport: "stdio",
			Duration: ms(15000), Teardown: results.Teardown{ExitedAfter: results.StepSIGTERM, Waited: ms(2004), ExitCode: -1, Signal: "terminated"},
			Outcome: verdict.Errorf("case deadline of 15s exceeded; the case did not return and was abandoned"),
			Events: []chrono.Event{
				harness(1, 15000, chrono.KindDeadline, "runner", "case deadline of 15s exceeded"),
				{Seq: 2, Offset: ms(17004), Dir: chrono.Harness, Channel: "process", Kind: chrono.KindExit, Text: "exited on signal terminated"},
			},
		},
	}
	rep := &results.Report{
		Target:    "npx -y evil-server",
		Transport: "stdio",
		Version:   spec.V20251125,
		Profile:   "reference",
		Server:    &results.Implementation{Name: "evil\x1b[2J\x1b]0;title\a-server", Version: "1.0\u202e"},
		Started:   time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC),
		Duration:  ms(17062),
		Results:   rs,
		Counts:    map[verdict.Verdict]int{},
	}
	for _, r := range rs {
		rep.Counts[r.Outcome.Verdict]++
	}
	rep.Teardown = runner.CiteTeardown(runner.GradeTeardown(rs, false), spec.V20251125)
	rep.Schema = results.SchemaReport{Revision: spec.V20251125, Checked: 5, Unchecked: 1, Findings: []results.SchemaFinding{{
		SchemaViolation: results.SchemaViolation{Seq: 3, Revision: spec.V20251125, Definition: "ProgressNotification", Requirement: "RPC-2",
			Pointer: "/params/total\x1b[2J\x1b]0;x\a", Keyword: "type",
			KeywordLocation: "2025-11-25/schema.json#/$defs/ProgressNotificationParams/properties/total/type",
			Message:         "a string where the schema wants a number"},
		FirstCase: "progress/strictly-increasing", Count: 2, Cases: 1,
	}}}
	return rep
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test ./report -update to accept):\n%s", path, diff)
	}
}

func TestTextGolden(t *testing.T) {
	tests := []struct {
		file string
		opts TextOptions
	}{
		{"text.golden", TextOptions{}},
		{"text-verbose.golden", TextOptions{Verbose: true}},
		{"text-color.golden", TextOptions{Color: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Text(&buf, fixedReport(), tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, buf.Bytes())
		})
	}
}

func TestJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, fixedReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json.golden", buf.Bytes())

	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != Schema || doc["exitCode"] != float64(1) || doc["conformant"] != false {
		t.Errorf("schema %v exitCode %v conformant %v", doc["schema"], doc["exitCode"], doc["conformant"])
	}
}

// ourSGR matches the colour sequences Text itself writes.
var ourSGR = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestUntrustedTextIsSanitised checks that escape sequences, BEL and
// bidirectional overrides from the target never reach the text output.
func TestUntrustedTextIsSanitised(t *testing.T) {
	for _, opts := range []TextOptions{{}, {Verbose: true}, {Verbose: true, Color: true}} {
		var buf bytes.Buffer
		if err := Text(&buf, fixedReport(), opts); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if opts.Color {
			out = ourSGR.ReplaceAllString(out, "")
		}
		for _, bad := range []string{"\x1b", "\a", "\u202e"} {
			if i := strings.Index(out, bad); i >= 0 {
				t.Errorf("opts %+v: %q reached the output at %d: %q", opts, bad, i, out[max(0, i-40):min(len(out), i+40)])
			}
		}
		for _, want := range []string{`evil\u001b[2J\u001b]0;title\u0007-server`, `1.0\u202e`} {
			if !strings.Contains(out, want) {
				t.Errorf("opts %+v: output lacks the visible escape %q", opts, want)
			}
		}
	}
}

func TestTextColorOnlyWhenAsked(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, fixedReport(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "\x1b") {
		t.Error("plain output contains an escape")
	}
	buf.Reset()
	if err := Text(&buf, fixedReport(), TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\x1b[1;31mFAIL \x1b[0m") {
		t.Error("colour output lacks a red FAIL")
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		r    *results.Report
		want string
	}{
		{"conformant", &results.Report{
			Results:  make([]results.Result, 3),
			Counts:   map[verdict.Verdict]int{verdict.Pass: 2, verdict.Warn: 1},
			Duration: ms(840),
			Teardown: results.TeardownGrade{Verdict: verdict.Pass},
		}, "mcpflight: 3 cases — 2 pass, 0 fail, 1 warn, 0 info, 0 skip, 0 error (0.84s) — conformant"},
		{"fixed", fixedReport(), "mcpflight: 7 cases — 1 pass, 1 fail, 1 warn, 1 info, 1 skip, 1 blocked, 1 error (17.06s) — 1 schema violation — non-conformant"},
		{"schema violation alone", &results.Report{
			Results:  make([]results.Result, 1),
			Counts:   map[verdict.Verdict]int{verdict.Pass: 1},
			Duration: ms(840),
			Teardown: results.TeardownGrade{Verdict: verdict.Pass},
			Schema:   results.SchemaReport{Findings: make([]results.SchemaFinding, 2)},
		}, "mcpflight: 1 case — 1 pass, 0 fail, 0 warn, 0 info, 0 skip, 0 error (0.84s) — 2 schema violations — non-conformant"},
		{"a passive rule's finding is no case", &results.Report{
			Results:  []results.Result{{ID: "a/b", Outcome: verdict.Passf("ok")}, {ID: "passive/x", Area: results.AreaPassive, Outcome: verdict.Outcome{Verdict: verdict.Fail}}},
			Counts:   map[verdict.Verdict]int{verdict.Pass: 1, verdict.Fail: 1},
			Duration: ms(840),
			Teardown: results.TeardownGrade{Verdict: verdict.Pass},
		}, "mcpflight: 1 case and 1 passive rule — 1 pass, 1 fail, 0 warn, 0 info, 0 skip, 0 error (0.84s) — non-conformant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summary(tt.r); got != tt.want {
				t.Errorf("Summary =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestEventLine(t *testing.T) {
	tests := []struct {
		name string
		e    chrono.Event
		want string
	}{
		{"request", frame(1, 0, chrono.Out, "stdin", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"progressToken":5}}}`),
			`out stdin request tools/call id="a" progressToken=5`},
		{"cancel", frame(1, 0, chrono.Out, "stdin", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`),
			`out stdin notification notifications/cancelled requestId=0`},
		{"error", frame(1, 0, chrono.In, "stdout", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`),
			`in stdout error id=null`},
		{"malformed", frame(1, 0, chrono.In, "stdout", "\x1b[31m"), "in stdout malformed frame (not-json)"},
		{"truncated", chrono.Event{Dir: chrono.In, Channel: "stdout", Kind: chrono.KindFrame, Truncated: true, Size: 9000,
			Summary: &chrono.Summary{Kind: "result", ID: "1"}}, "in stdout result id=1 (truncated, 9000 bytes)"},
		{"stderr", chrono.Event{Dir: chrono.In, Channel: "stderr", Kind: chrono.KindStderr, Raw: []byte("warn\x07")},
			`in stderr: warn\u0007`},
		{"state", chrono.Event{Dir: chrono.Harness, Channel: "session", Kind: chrono.KindState, From: "new", To: "ready"},
			"harness session state new -> ready"},
		{"deadline", harness(1, 0, chrono.KindDeadline, "runner", "case deadline of 1s exceeded"),
			"harness runner deadline: case deadline of 1s exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EventLine(tt.e)
			if tt.name == "malformed" {
				// The class name belongs to jsonrpc; only its shape matters here.
				if !strings.HasPrefix(got, "in stdout malformed frame (") || strings.Contains(got, "\x1b") {
					t.Errorf("EventLine = %q", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("EventLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRawTextClipped(t *testing.T) {
	raw := bytes.Repeat([]byte("x"), 500)
	got := rawText(raw, 500)
	if want := strings.Repeat("x", MaxRawText) + "… (500 bytes)"; got != want {
		t.Errorf("rawText = %q", got)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	if err := Text(failWriter{}, fixedReport(), TextOptions{}); err == nil {
		t.Error("Text: no error from a failing writer")
	}
	if err := JSON(failWriter{}, fixedReport()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("JSON: %v", err)
	}
}

func jsonDecode(raw string) (*jsonrpc.Message, error) { return jsonrpc.Decode([]byte(raw)) }

// TestJSONStreamsTheDocument: the streamed JSON is byte for byte the
// Document encoded at once and made terminal safe (chrono.SafeJSON), with
// and without results.
func TestJSONStreamsTheDocument(t *testing.T) {
	empty := fixedReport()
	empty.Results = nil
	for _, r := range []*results.Report{fixedReport(), empty} {
		var streamed, whole bytes.Buffer
		if err := JSON(&streamed, r); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&whole)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(Document(r)); err != nil {
			t.Fatal(err)
		}
		if want := string(chrono.SafeJSON(whole.Bytes())); streamed.String() != want {
			t.Errorf("streamed JSON differs from the document encoded at once:\n%s\n---\n%s", streamed.String(), want)
		}
	}
}
