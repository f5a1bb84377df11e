package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/termsafe"
	"github.com/mcpflight/mcpflight/results"
)

// hostile holds everything a server can send to hurt a terminal, a page
// or an XML parser: CSI, OSC 52 (clipboard), OSC 8 (hyperlink), a bare
// CR, BEL, backspace, a C1 CSI, a bidi override, markup, a CDATA end,
// invalid UTF-8 and NUL.
const hostile = "csi\x1b[2J osc52\x1b]52;c;cHduZWQ=\x07 osc8\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ " +
	"cr\roverwrite bel\x07 bs\b c1\u009b31m bidi\u202eevil <script>alert(1)</script> \"><img src=x onerror=alert(2)> ]]> " +
	"bad\xff\xfeutf8 nul\x00end"

// huge is a 1 MB value.
var huge = strings.Repeat("M", 1<<20)

// hostileReport is fixedReport with hostile text in every field a
// server controls, and a 1 MB value in some.
func hostileReport() *results.Report {
	r := fixedReport()
	r.Target = "target " + hostile
	r.Server = &results.Implementation{Name: hostile, Version: hostile + huge, Title: hostile}
	r.Teardown.Summary = hostile
	r.Teardown.Errors = append(r.Teardown.Errors, hostile)
	// A finding's pointer and message are sanitised by wireschema, but
	// the renderers must not rely on it.
	for i := range r.Schema.Findings {
		f := &r.Schema.Findings[i]
		f.Pointer, f.Message, f.KeywordLocation, f.FirstCase = hostile+huge, hostile, hostile, hostile
	}
	r.Schema.Err = hostile
	for i := range r.Results {
		res := &r.Results[i]
		res.Outcome.Summary = hostile
		res.Outcome.Actual = hostile + huge
		res.Outcome.Expected = append(res.Outcome.Expected, hostile)
		if len(res.Events) == 0 {
			continue
		}
		res.Outcome.ActualSeq = 1
		n := uint64(len(res.Events))
		raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": hostile, "method": hostile,
			"params": map[string]any{"progressToken": hostile, "message": hostile}})
		res.Events = append(res.Events,
			chrono.Event{Seq: n + 1, Dir: chrono.In, Channel: "stdout", Kind: chrono.KindFrame, Raw: raw, Size: len(raw),
				Summary: chrono.Summarize(jsonDecode(string(raw)))},
			chrono.Event{Seq: n + 2, Dir: chrono.In, Channel: "stderr", Kind: chrono.KindStderr, Raw: []byte(hostile + huge), Size: len(hostile) + len(huge)},
			chrono.Event{Seq: n + 3, Dir: chrono.In, Channel: "POST #1" + hostile, Kind: chrono.KindHTTP, Text: "HTTP 200 X-Evil: " + hostile},
			chrono.Event{Seq: n + 4, Dir: chrono.Harness, Channel: hostile, Kind: chrono.KindState, From: hostile, To: hostile},
			chrono.Event{Seq: n + 5, Dir: chrono.Harness, Channel: "runner", Kind: chrono.KindError, Text: hostile + huge},
			chrono.Event{Seq: n + 6, Dir: chrono.In, Channel: "stdout", Kind: chrono.KindFrame, Raw: []byte(hostile), Size: len(hostile),
				Summary: &chrono.Summary{Malformed: hostile}},
		)
		res.Outcome.ActualSeq = n + 1
	}
	return r
}

// MaxHostileOutput bounds a rendering of hostileReport: 1 MB values
// must be cut, not copied (the JSON report, which keeps values up to
// MaxJSONText, is allowed one of those per result: 1.04 MB for the
// seven results, where one uncut value alone would take it past 2 MB).
const maxHostileOutput = 3 << 19

func checkSafe(t *testing.T, format string, out []byte) {
	t.Helper()
	if what, i := termsafe.FirstUnsafe(out); i >= 0 {
		t.Errorf("%s: %s at byte %d: %q", format, what, i, out[max(0, i-40):min(len(out), i+40)])
	}
	if len(out) > maxHostileOutput {
		t.Errorf("%s: %d bytes: a 1 MB value was not truncated", format, len(out))
	}
}

// TestHostileTextEveryFormat renders a report full of hostile text in
// every format and checks each: no terminal control, bidi override or
// invalid UTF-8 reaches any output, markup is escaped in HTML (SVG
// included), the JUnit XML parses, 1 MB values are cut with a marker,
// and the JSON report keeps the exact text, escaped.
func TestHostileTextEveryFormat(t *testing.T) {
	rep := hostileReport()
	render := map[string]func(io.Writer) error{
		"text":          func(w io.Writer) error { return Text(w, rep, TextOptions{}) },
		"text -v":       func(w io.Writer) error { return Text(w, rep, TextOptions{Verbose: true}) },
		"text -v color": func(w io.Writer) error { return Text(w, rep, TextOptions{Verbose: true, Color: true}) },
		"chronology":    func(w io.Writer) error { return Chronology(w, rep.Results[0].Events) },
		"sequence":      func(w io.Writer) error { return Sequence(w, rep.Results[0].Events, SequenceOptions{Mark: 2}) },
		"junit":         func(w io.Writer) error { return JUnit(w, rep) },
		"html":          func(w io.Writer) error { return HTML(w, rep) },
		"json":          func(w io.Writer) error { return JSON(w, rep) },
	}
	for format, fn := range render {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := fn(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.Bytes()
			if strings.HasSuffix(format, "color") {
				out = ourSGR.ReplaceAll(out, nil)
			}
			checkSafe(t, format, out)
			switch format {
			case "text -v", "junit", "html":
				if !bytes.Contains(out, []byte("truncated")) {
					t.Errorf("%s: no truncation marker", format)
				}
			}
			switch format {
			case "html":
				checkHTML(t, string(out))
			case "junit":
				checkXML(t, out)
			case "json":
				checkJSON(t, out)
			}
		})
	}
}

func checkHTML(t *testing.T, out string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img", "onerror=alert(2)>"} {
		if strings.Contains(out, bad) {
			t.Errorf("html: unescaped %q", bad)
		}
	}
	if n := strings.Count(out, "<script"); n != 1 {
		t.Errorf("html: %d <script elements, want only the page's own", n)
	}
	first := out[strings.Index(out, `<svg class="seq"`):]
	svg := first[:strings.Index(first, "</svg>")]
	if !strings.Contains(svg, "&lt;script&gt;") {
		t.Error("html: the hostile text is not in the sequence diagram, escaped")
	}
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<img") {
		t.Error("html: markup in the sequence diagram")
	}
}

func checkXML(t *testing.T, out []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(out))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("junit: not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			if what, i := termsafe.FirstUnsafe(cd); i >= 0 {
				t.Errorf("junit: %s in character data: %q", what, cd[max(0, i-20):min(len(cd), i+20)])
			}
		}
	}
	if !bytes.Contains(out, []byte("&lt;script&gt;")) && !bytes.Contains(out, []byte("<![CDATA[")) {
		t.Error("junit: markup neither escaped nor in CDATA")
	}
}

func checkJSON(t *testing.T, out []byte) {
	t.Helper()
	var doc JSONReport
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("json: %v", err)
	}
	// The JSON keeps the exact text, escaped; invalid UTF-8 becomes
	// U+FFFD.
	want := strings.ReplaceAll(hostile, "\xff\xfe", "\ufffd\ufffd")
	if doc.Server == nil || doc.Server.Name != want {
		t.Errorf("json: server name %q, want %q", doc.Server.Name, want)
	}
	if got := doc.Results[0].Actual; !strings.HasPrefix(got, want) || len(got) > 64<<10+100 || !strings.Contains(got, "truncated") {
		t.Errorf("json: a 1 MB actual is kept as %d bytes (want the exact start, cut with a marker)", len(got))
	}
}
