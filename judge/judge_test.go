package judge

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/watch"
)

// capture builds a recorded conversation as watch records it: one log,
// so that events are numbered in order.
type capture struct{ log *chrono.Log }

func newCapture() *capture { return &capture{log: chrono.New()} }

func (c *capture) frame(dir chrono.Direction, channel, raw string) {
	c.log.Frame(dir, channel, []byte(raw), nil, nil)
}

func (c *capture) http(dir chrono.Direction, channel, text string) {
	c.log.Append(chrono.Event{Dir: dir, Channel: channel, Kind: chrono.KindHTTP, Text: text})
}

func (c *capture) harness(kind chrono.Kind, channel, text string) {
	c.log.Append(chrono.Event{Dir: chrono.Harness, Channel: channel, Kind: kind, Text: text})
}

// post records exchange n: a POST of raw in session (none for the
// initialize that opens one), answered with answer in session answerIn.
func (c *capture) post(n int, session, raw, answerIn, answer string) {
	ch := fmt.Sprintf("POST #%d", n)
	head := "POST /mcp Content-Type: application/json"
	if session != "" {
		head = "POST /mcp Mcp-Session-Id: " + session + "; Content-Type: application/json"
	}
	c.http(chrono.Out, ch, head)
	c.frame(chrono.Out, ch, raw)
	status := "HTTP 200 Content-Type: application/json"
	if answerIn != "" {
		status = "HTTP 200 Mcp-Session-Id: " + answerIn + "; Content-Type: application/json"
	}
	c.http(chrono.In, ch, status)
	c.frame(chrono.In, ch, answer)
}

func (c *capture) judge(transport string) *results.Report {
	j := New(Options{Target: "test", Transport: transport, Monitor: monitor.Options{Schema: true}})
	for _, ev := range c.log.Events() {
		j.Event(ev)
	}
	return j.Report()
}

const (
	initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	initResult = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`
	call1      = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	result1    = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
)

// verdictOf is the verdict of result id in rep, "" when rep has none.
func verdictOf(rep *results.Report, id string) verdict.Verdict {
	for _, r := range rep.Results {
		if r.ID == id {
			return r.Outcome.Verdict
		}
	}
	return ""
}

// TestSessionsOfAnHTTPCapture: each HTTP session is judged on its own, by
// the Mcp-Session-Id of its exchanges, so two sessions that each use
// request ID 1 break nothing; the same requests in one stdio session
// reuse an ID in flight. Events of no exchange (a client connection,
// the recorder's own) hold nothing up, and the recorder's marks of what
// it lost make the report say the capture is incomplete.
func TestSessionsOfAnHTTPCapture(t *testing.T) {
	c := newCapture()
	c.harness(chrono.KindState, "connection", "client connection 127.0.0.1:5000 opened")
	c.post(1, "", initialize, "A", initResult)
	c.post(2, "", initialize, "B", initResult)
	// Both calls are sent before either is answered.
	c.http(chrono.Out, "POST #3", "POST /mcp Mcp-Session-Id: A; Content-Type: application/json")
	c.frame(chrono.Out, "POST #3", call1)
	c.http(chrono.Out, "POST #4", "POST /mcp Mcp-Session-Id: B; Content-Type: application/json")
	c.frame(chrono.Out, "POST #4", call1)
	c.harness(chrono.KindError, "recorder", watch.TextCaptureIncomplete+": 3 pieces (120 bytes) were dropped")
	c.http(chrono.In, "POST #3", "HTTP 200 Mcp-Session-Id: A; Content-Type: application/json")
	c.frame(chrono.In, "POST #3", result1)
	c.http(chrono.In, "POST #4", "HTTP 200 Mcp-Session-Id: B; Content-Type: application/json")
	c.frame(chrono.In, "POST #4", result1)
	rep := c.judge("http")
	if v := verdictOf(rep, "client/ids-unique"); v != verdict.Pass {
		t.Errorf("client/ids-unique is %q over two HTTP sessions; want pass (each session has its own IDs)", v)
	}
	if v := verdictOf(rep, "server/one-response"); v != verdict.Pass {
		t.Errorf("server/one-response is %q; want pass", v)
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, watch.TextCaptureIncomplete) || !strings.Contains(notes, "1 gaps") {
		t.Errorf("notes %q; want the capture said incomplete", notes)
	}
	if strings.Contains(notes, "still open") {
		t.Errorf("notes %q; want no request left open", notes)
	}

	s := newCapture()
	s.harness(chrono.KindState, "process", "started")
	for _, f := range []struct {
		dir chrono.Direction
		raw string
	}{{chrono.Out, initialize}, {chrono.In, initResult}, {chrono.Out, call1}, {chrono.Out, call1}, {chrono.In, result1}, {chrono.In, result1}} {
		ch := "stdin"
		if f.dir == chrono.In {
			ch = "stdout"
		}
		s.frame(f.dir, ch, f.raw)
	}
	s.harness(chrono.KindExit, "process", "exited")
	if v := verdictOf(s.judge("stdio"), "client/ids-unique"); v != verdict.Fail {
		t.Errorf("client/ids-unique is %q in one stdio session reusing ID 1 in flight; want fail", v)
	}
}

// TestConcurrentExchangesKeepTheirOrder: two 2026-07-28 calls with one ID,
// each on its POST, the second answered first, reuse an ID in flight
// (RPC-7): the judge must see both requests before either answer, not
// each exchange once its answer came.
func TestConcurrentExchangesKeepTheirOrder(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	c := newCapture()
	for _, n := range []string{"POST #1", "POST #2"} {
		c.http(chrono.Out, n, "POST /mcp Content-Type: application/json")
		c.frame(chrono.Out, n, call)
	}
	for _, n := range []string{"POST #2", "POST #1"} {
		c.http(chrono.In, n, "HTTP 200 Content-Type: application/json")
		c.frame(chrono.In, n, result1)
	}
	rep := c.judge("http")
	if v := verdictOf(rep, "client/ids-unique"); v != verdict.Fail {
		t.Errorf("client/ids-unique is %q; want fail (ID 1 reused while in flight)", v)
	}
}

// TestSessionsOfACheckChronology: the checker's own recording carries a
// request's headers in the text of its frame, not in a head of its own;
// its Mcp-Session-Id keys the exchange like watch's head does, so that
// progress of a call that came on the session's GET stream is judged in
// the session that sent the call (HTTP-31), not in another that never
// gave its token (PRG-7).
func TestSessionsOfACheckChronology(t *testing.T) {
	c := newCapture()
	sent := func(channel, headers, raw string) {
		c.log.Append(chrono.Event{Dir: chrono.Out, Channel: channel, Kind: chrono.KindFrame, Raw: []byte(raw),
			Summary: chrono.Summarize(jsonrpc.Decode([]byte(raw))), Text: "POST Accept: application/json, text/event-stream" + headers})
	}
	sent("POST #1", "", initialize)
	c.http(chrono.In, "POST #1", "HTTP 200 Content-Type: application/json; Mcp-Session-Id: A")
	c.frame(chrono.In, "POST #1", initResult)
	c.http(chrono.Out, "GET #1", "GET Accept: text/event-stream; Mcp-Protocol-Version: 2025-11-25; Mcp-Session-Id: A")
	c.http(chrono.In, "GET #1", "HTTP 200 Content-Type: text/event-stream")
	sent("POST #2", "; Mcp-Protocol-Version: 2025-11-25; Mcp-Session-Id: A",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`)
	c.http(chrono.In, "POST #2", "HTTP 200 Content-Type: text/event-stream")
	c.http(chrono.In, "SSE POST #2", "sse id=2-1 (empty data: priming)")
	c.log.Append(chrono.Event{Dir: chrono.In, Channel: "SSE GET #1", Kind: chrono.KindFrame, Text: "sse id=1-1",
		Raw:     []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`),
		Summary: chrono.Summarize(jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)))})
	c.log.Append(chrono.Event{Dir: chrono.In, Channel: "SSE POST #2", Kind: chrono.KindFrame, Text: "sse id=2-2", Raw: []byte(result1),
		Summary: chrono.Summarize(jsonrpc.Decode([]byte(result1)))})
	rep := c.judge("http")
	if v := verdictOf(rep, "server/progress-token-known"); v != verdict.Pass {
		t.Errorf("server/progress-token-known is %q; want pass (the call and its progress are one session's)", v)
	}
	if v := verdictOf(rep, "server/"+monitor.RuleStreamRouting); v != verdict.Warn {
		t.Errorf("server/%s is %q; want warn (HTTP-31: the call's progress on the GET stream)", monitor.RuleStreamRouting, v)
	}
}

// TestForgottenAnswersNoted: a response for a request the monitor has
// forgotten (past its memory bounds) is not judged, and the report says
// so instead of passing it in silence.
func TestForgottenAnswersNoted(t *testing.T) {
	c := newCapture()
	c.frame(chrono.Out, "stdin", initialize)
	c.frame(chrono.In, "stdout", initResult)
	const n = 300
	for i := 1; i <= n; i++ {
		c.frame(chrono.Out, "stdin", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		c.frame(chrono.In, "stdout", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i))
	}
	c.frame(chrono.In, "stdout", `{"jsonrpc":"2.0","id":1,"result":{}}`)
	rep := c.judge("stdio")
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "answers to forgotten requests: 1 responses") {
		t.Errorf("notes do not count the answer to a forgotten request:\n%s", notes)
	}
	for _, r := range rep.Results {
		if r.Outcome.Verdict == verdict.Fail {
			t.Errorf("%s fails: %s (a forgotten request's answer is not judged)", r.ID, r.Outcome.Summary)
		}
	}
}

// TestHTTPSessionsForgotten: a session the host ends with DELETE is
// judged and forgotten once keptDeleted later ones were, its open
// requests reported as open; the
// keys of ended exchanges are forgotten past maxDoneExchanges, while a
// stream still open keeps its session however old.
func TestHTTPSessionsForgotten(t *testing.T) {
	c := newCapture()
	c.post(1, "", initialize, "S1", initResult)
	c.http(chrono.Out, "GET #2", "GET /mcp Mcp-Session-Id: S1")
	c.http(chrono.In, "GET #2", "HTTP 200 Content-Type: text/event-stream")
	c.http(chrono.Out, "POST #3", "POST /mcp Mcp-Session-Id: S1; Content-Type: application/json")
	c.frame(chrono.Out, "POST #3", call1)
	n := 2 * maxDoneExchanges
	for i := range n {
		ch := fmt.Sprintf("POST #%d", 10+i)
		c.http(chrono.Out, ch, "POST /mcp Mcp-Session-Id: S1; Content-Type: application/json")
		c.frame(chrono.Out, ch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 10+i))
		c.http(chrono.In, ch, "HTTP 200 Content-Type: application/json")
		c.frame(chrono.In, ch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, 10+i))
	}
	c.http(chrono.Out, "DELETE #9", "DELETE /mcp Mcp-Session-Id: S1")
	c.http(chrono.In, "DELETE #9", "HTTP 200")
	// keptDeleted more sessions, opened and ended, make S1 the oldest
	// session ended past the bound.
	for i := range keptDeleted {
		id := fmt.Sprintf("D%d", i)
		c.post(100000+2*i, "", initialize, id, initResult)
		c.http(chrono.Out, fmt.Sprintf("DELETE #%d", 100001+2*i), "DELETE /mcp Mcp-Session-Id: "+id)
		c.http(chrono.In, fmt.Sprintf("DELETE #%d", 100001+2*i), "HTTP 200")
	}
	j := New(Options{Target: "test", Transport: "http"})
	for _, ev := range c.log.Events() {
		j.Event(ev)
	}
	if got := len(j.keys.byChannel); got > maxDoneExchanges+3 {
		t.Errorf("%d exchanges keyed after %d ended; want at most %d", got, n, maxDoneExchanges+3)
	}
	if j.keys.byChannel["GET #2"] != "S1" {
		t.Errorf("the open GET stream lost its session: %q", j.keys.byChannel["GET #2"])
	}
	j.mu.Lock()
	open := slices.Clone(j.open)
	j.mu.Unlock()
	if len(open) != 1 || open[0].Session != "S1" || open[0].Method != "tools/call" {
		t.Errorf("open requests after the DELETE: %+v; want S1's tools/call", open)
	}
	rep := j.Report()
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "tools/call") {
		t.Errorf("the report does not list the call left open:\n%s", notes)
	}
}

// TestLostFramesFakeNoFinding: once the recording marks a gap (frames it
// lost), a rule that judges by what the record lacks makes no finding:
// the answer to a request whose frame was lost is not "a response for an
// ID never sent". The rule is undecided (info), the notes count what was
// not found, and a rule that judges the frame in hand (a ping's answer)
// still finds. Without the gap the same record fails RPC-8.
func TestLostFramesFakeNoFinding(t *testing.T) {
	record := func(gap bool) *results.Report {
		c := newCapture()
		c.frame(chrono.Out, "stdin", initialize)
		c.frame(chrono.In, "stdout", initResult)
		c.frame(chrono.Out, "stdin", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if gap {
			c.harness(chrono.KindError, "stdin", watch.TextCaptureIncomplete+": 3 pieces (120 bytes) of stdin were dropped here because the recorder's queue was full")
		}
		c.frame(chrono.In, "stdout", `{"jsonrpc":"2.0","id":7,"result":{}}`)
		c.frame(chrono.Out, "stdin", `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
		c.frame(chrono.In, "stdout", `{"jsonrpc":"2.0","id":8,"result":{"busy":true}}`)
		return c.judge("stdio")
	}
	whole := record(false)
	if v := verdictOf(whole, "server/one-response"); v != verdict.Fail {
		t.Fatalf("without a gap, server/one-response is %q; want fail", v)
	}
	gapped := record(true)
	if v := verdictOf(gapped, "server/one-response"); v != verdict.Info {
		t.Errorf("after a gap, server/one-response is %q; want info (undecided)", v)
	}
	if v := verdictOf(gapped, "server/ping-empty-result"); v != verdict.Fail {
		t.Errorf("after a gap, server/ping-empty-result is %q; want fail: it judges the frame in hand", v)
	}
	if notes := strings.Join(gapped.Notes, "\n"); !strings.Contains(notes, "findings not made after the recording lost frames: 1,") {
		t.Errorf("the notes do not count the finding not made:\n%s", notes)
	}
}
