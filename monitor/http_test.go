package monitor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/verdict"
)

// The Streamable HTTP events a history holds, as the recorders write
// them (transport.HTTP, watch.Proxy).

// head records an HTTP head of direction dir on channel: a request line
// ("GET /mcp Last-Event-Id: 1-3") or a status ("HTTP 200
// Content-Type: text/event-stream").
func (h *history) head(dir chrono.Direction, channel, text string) *history {
	h.events = append(h.events, chrono.Event{Seq: uint64(len(h.events) + 1), Offset: h.at, Dir: dir, Kind: chrono.KindHTTP, Channel: channel, Text: text})
	return h
}

// answered records the status and headers POST #n was answered with.
func (h *history) answered(n int, text string) *history {
	return h.head(chrono.In, fmt.Sprintf("POST #%d", n), text)
}

// said sets the text of the last event: the head the checker's
// transport records with a request frame ("POST Accept: …").
func (h *history) said(text string) *history {
	h.events[len(h.events)-1].Text = text
	return h
}

// sseHead is the head of an SSE response that says what 2026-07-28 wants.
const sseHead = "HTTP 200 Content-Type: text/event-stream; X-Accel-Buffering: no"

// event records an SSE event carrying a message on channel ("SSE POST
// #1"), with its ID when id is not "".
func (h *history) event(channel, id, raw string) *history {
	h.frame(chrono.In, channel, raw)
	ev := &h.events[len(h.events)-1]
	ev.Text = "sse"
	if id != "" {
		ev.Text += " id=" + id
	}
	return h
}

// prime records a priming event (an ID and empty data) on channel.
func (h *history) prime(channel, id string) *history {
	text := "sse (empty data: priming)"
	if id != "" {
		text = "sse id=" + id + " retry=1000ms (empty data: priming)"
	}
	return h.head(chrono.In, channel, text)
}

// ended records how a stream ended: "stream ended" when the server ended
// it.
func (h *history) ended(channel, text string) *history {
	kind := chrono.KindNote
	if strings.HasPrefix(text, "stream failed") {
		kind = chrono.KindError
	}
	h.events = append(h.events, chrono.Event{Seq: uint64(len(h.events) + 1), Offset: h.at, Dir: chrono.Harness, Kind: kind, Channel: channel, Text: text})
	return h
}

// http25 opens a 2025-11-25 session over Streamable HTTP, the
// session ID given by the initialize response's head.
func http25(sessionID string) *history {
	h := &history{}
	return h.post(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).
		answered(0, "HTTP 200 Content-Type: application/json; Mcp-Session-Id: "+sessionID).
		frame(chrono.In, "POST #0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`).
		post(99, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).answered(99, "HTTP 202 Mcp-Session-Id: "+sessionID)
}

// call25 is a 2025-11-25 call on POST #n with its SSE head and priming
// event (n-1).
func (h *history) call25(n int, token string) *history {
	return h.post(n, call(fmt.Sprint(n), token)).answered(n, "HTTP 200 Content-Type: text/event-stream; Mcp-Session-Id: abc").
		prime(fmt.Sprintf("SSE POST #%d", n), fmt.Sprintf("%d-1", n))
}

// call2026 is a 2026-07-28 call on POST #n with its SSE head.
func (h *history) call2026(n int, token string) *history {
	return h.post(n, call2026(fmt.Sprint(n), token)).answered(n, sseHead)
}

func sse(n int) string { return fmt.Sprintf("SSE POST #%d", n) }

// TestHTTPRules: each Streamable HTTP rule is broken by a history that
// breaks it, citing the requirement of the session's revision with its
// severity, and a conforming history of each revision, which gives every
// rule something to judge, breaks none. A rule of one revision never
// fires in the other.
func TestHTTPRules(t *testing.T) {
	ms := time.Millisecond
	const later = 500 * time.Millisecond // beyond any crossing window
	for _, tc := range []struct {
		name string
		h    *history
		want []string
	}{
		{"a conforming 2025-11-25 session", http25("abc").
			call25(1, `"t1"`).event(sse(1), "1-2", progress(`"t1"`, 1)).event(sse(1), "1-3", result("1")).ended(sse(1), "stream ended").
			head(chrono.Out, "GET #1", "GET /mcp Mcp-Session-Id: abc; Accept: text/event-stream").head(chrono.In, "GET #1", "HTTP 200 Content-Type: text/event-stream").
			call25(2, `"t2"`).event(sse(2), "2-2", progress(`"t2"`, 1)).ended(sse(2), "stream dropped by the client").
			head(chrono.Out, "GET #2", "GET /mcp Mcp-Session-Id: abc; Accept: text/event-stream; Last-Event-Id: 2-2").head(chrono.In, "GET #2", "HTTP 200 Content-Type: text/event-stream").
			event("SSE GET #2", "2-3", progress(`"t2"`, 2)).event("SSE GET #2", "2-4", result("2")).ended("SSE GET #2", "stream ended"), nil},
		{"the same event delivered again on a resumption of its stream", http25("abc").
			call25(1, `"t1"`).event(sse(1), "1-2", progress(`"t1"`, 1)).ended(sse(1), "the client closed the response stream").
			head(chrono.Out, "GET #1", "GET /mcp Last-Event-Id: 1-1").event("SSE GET #1", "1-2", progress(`"t1"`, 1)).event("SSE GET #1", "1-3", result("1")), nil},

		{"a request's stream begins with a message", http25("abc").
			post(1, call("1", `"t"`)).answered(1, "HTTP 200 Content-Type: text/event-stream").event(sse(1), "1-1", progress(`"t"`, 1)).event(sse(1), "1-2", result("1")),
			[]string{"http-stream-primed HTTP-16 warn server"}},
		{"a stream primed with no ID", http25("abc").
			post(1, call("1", `"t"`)).prime(sse(1), "").event(sse(1), "", result("1")),
			[]string{"http-stream-primed HTTP-16 warn server"}},
		{"a raw request's stream is not judged for priming", http25("abc").
			post(1, call("1", `"t"`)).head(chrono.In, sse(1), "sse id=1-1 (raw request, not delivered)").head(chrono.In, sse(1), "sse id= (raw request, not delivered)"), nil},
		{"event IDs repeated across streams", http25("abc").
			call25(1, `"t1"`).event(sse(1), "1", result("1")).call25(2, `"t2"`).event(sse(2), "1", result("2")),
			[]string{"http-event-ids-unique HTTP-40 fail server"}},
		{"progress on the GET stream", http25("abc").
			head(chrono.Out, "GET #1", "GET /mcp Accept: text/event-stream").head(chrono.In, "GET #1", "HTTP 200 Content-Type: text/event-stream").
			call25(1, `"t1"`).event("SSE GET #1", "g-1", progress(`"t1"`, 1)).event(sse(1), "1-2", result("1")),
			[]string{"http-stream-routing HTTP-31 warn server"}},
		{"progress on another request's stream", http25("abc").
			call25(1, `"t1"`).call25(2, `"t2"`).event(sse(2), "2-2", progress(`"t1"`, 1)).event(sse(1), "1-2", result("1")).event(sse(2), "2-3", result("2")),
			[]string{"http-stream-routing HTTP-22 warn server"}},
		{"a resumption replays another stream's response", http25("abc").
			call25(1, `"t1"`).event(sse(1), "1-2", result("1")).
			call25(2, `"t2"`).event(sse(2), "2-2", progress(`"t2"`, 1)).ended(sse(2), "stream dropped by the client").
			head(chrono.Out, "GET #1", "GET /mcp Last-Event-Id: 2-2").event("SSE GET #1", "1-2", result("1")).event("SSE GET #1", "2-3", result("2")),
			[]string{"http-replay-own-stream HTTP-44 fail server"}},
		{"a resumption replays another stream's progress", http25("abc").
			call25(1, `"t1"`).call25(2, `"t2"`).event(sse(2), "2-2", progress(`"t2"`, 1)).ended(sse(2), "stream dropped by the client").
			head(chrono.Out, "GET #1", "GET /mcp Last-Event-Id: 2-2").event("SSE GET #1", "1-2", progress(`"t1"`, 1)).event("SSE GET #1", "2-3", result("2")).
			event(sse(1), "1-3", result("1")),
			[]string{"http-replay-own-stream HTTP-44 fail server"}},
		{"a session ID outside visible ASCII", http25("a b\u00e9"), []string{"http-session-id-visible HTTP-48 fail server"}},
		{"a notification's POST answered 200", http25("abc").post(2, `{"jsonrpc":"2.0","method":"notifications/x"}`).answered(2, "HTTP 200 Content-Type: application/json"),
			[]string{"no-response-to-notification HTTP-11 fail server"}},
		{"a notification's POST refused with 400", http25("abc").post(2, `{"jsonrpc":"2.0","method":"notifications/x"}`).answered(2, "HTTP 400 Content-Type: text/plain"), nil},
		{"2026-07-28 rules under 2025-11-25", http25("abc").
			post(1, call("1", `"t"`)).answered(1, "HTTP 200 Content-Type: text/event-stream; Mcp-Session-Id: abc").prime(sse(1), "1-1").event(sse(1), "1-2", result("1")).
			wait(later).ended(sse(1), "stream closed by the client").
			head(chrono.Out, "GET #2", "GET /mcp").head(chrono.In, "GET #2", "HTTP 200 Content-Type: text/event-stream").
			post(3, `{"jsonrpc":"2.0","id":3,"method":"x/y"}`).answered(3, "HTTP 200 Content-Type: application/json").
			frame(chrono.In, "POST #3", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`), nil},

		{"a 2026-07-28 probe before a 2025-11-25 session, on the same channel names", (&history{}).
			post(1, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+envelope2026+`}}}`).said("POST Accept: application/json; Mcp-Protocol-Version: 2026-07-28").
			answered(1, "HTTP 200 Content-Type: application/json").frame(chrono.In, "POST #1", `{"jsonrpc":"2.0","id":1,"result":{}}`).
			post(1, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).said("POST Accept: application/json").
			answered(1, "HTTP 200 Content-Type: application/json; Mcp-Session-Id: abc").
			frame(chrono.In, "POST #1", `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`).
			post(2, call("3", `"t"`)).said("POST Accept: application/json; Mcp-Protocol-Version: 2025-11-25; Mcp-Session-Id: abc").
			answered(2, "HTTP 200 Content-Type: text/event-stream").prime(sse(2), "2-1").event(sse(2), "2-2", result("3")).
			wait(later).ended(sse(2), "stream closed by the client"), nil},
		{"a conforming 2026-07-28 session", (&history{}).
			call2026(1, `"t1"`).event(sse(1), "", progress(`"t1"`, 1)).event(sse(1), "", result("1")).ended(sse(1), "stream ended").
			post(2, `{"jsonrpc":"2.0","method":"notifications/x"}`).answered(2, "HTTP 202").
			head(chrono.Out, "GET #1", "GET Accept: text/event-stream; Mcp-Protocol-Version: 2026-07-28").head(chrono.In, "GET #1", "HTTP 405 Allow: POST; Content-Type: application/json").
			head(chrono.Out, "DELETE #2", "DELETE Mcp-Protocol-Version: 2026-07-28").head(chrono.In, "DELETE #2", "HTTP 405 Allow: POST").
			post(3, `{"jsonrpc":"2.0","id":3,"method":"x/y","params":{`+envelope2026+`}}}`).answered(3, "HTTP 404 Content-Type: application/json").
			frame(chrono.In, "POST #3", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`).
			call2026(4, `"t4"`).event(sse(4), "", result("4")).ended(sse(4), "the client closed the response stream of request 4 after its response"), nil},
		{"an SSE response without X-Accel-Buffering", (&history{}).post(1, call2026("1", `"t"`)).answered(1, "HTTP 200 Content-Type: text/event-stream").event(sse(1), "", result("1")),
			[]string{"http-sse-unbuffered HTTP-92 warn server"}},
		{"X-Accel-Buffering: yes", (&history{}).post(1, call2026("1", `"t"`)).answered(1, "HTTP 200 Content-Type: text/event-stream; charset=utf-8; X-Accel-Buffering: yes").event(sse(1), "", result("1")),
			[]string{"http-sse-unbuffered HTTP-92 warn server"}},
		{"X-Accel-Buffering cut from the record", (&history{}).post(1, call2026("1", `"t"`)).
			answered(1, "HTTP 200 Content-Type: text/event-stream; X-Padding: "+strings.Repeat("p", 40)+"… (truncated, 3000 bytes)").event(sse(1), "", result("1")), nil},
		{"event IDs under 2026-07-28", (&history{}).call2026(1, `"t"`).event(sse(1), "1", progress(`"t"`, 1)).event(sse(1), "2", result("1")),
			[]string{"http-event-ids-unique HTTP-93 fail server"}},
		{"a session ID minted under 2026-07-28", (&history{}).post(1, call2026("1", `"t"`)).answered(1, "HTTP 200 Content-Type: application/json; Mcp-Session-Id: a b").
			frame(chrono.In, "POST #1", result("1")),
			[]string{"http-stateless-endpoint HTTP-107 warn server"}},
		{"a GET served under 2026-07-28", (&history{}).
			head(chrono.Out, "GET #1", "GET Accept: text/event-stream; Mcp-Protocol-Version: 2026-07-28").head(chrono.In, "GET #1", "HTTP 200 Content-Type: text/event-stream").
			ended("SSE GET #1", "stream ended"),
			[]string{"http-stateless-endpoint HTTP-107 warn server", "http-sse-unbuffered HTTP-92 warn server"}},
		{"a DELETE served under 2026-07-28", (&history{}).post(1, call2026("1", `"t"`)).answered(1, "HTTP 200 Content-Type: application/json").frame(chrono.In, "POST #1", result("1")).
			head(chrono.Out, "DELETE #1", "DELETE /mcp").head(chrono.In, "DELETE #1", "HTTP 200"),
			[]string{"http-stateless-endpoint HTTP-107 warn server"}},
		{"-32601 with HTTP 200", (&history{}).post(1, `{"jsonrpc":"2.0","id":1,"method":"x/y","params":{`+envelope2026+`}}}`).answered(1, "HTTP 200 Content-Type: application/json").
			frame(chrono.In, "POST #1", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`),
			[]string{"http-method-not-found-404 HTTP-81 fail server"}},
		{"-32601 on an SSE stream", (&history{}).post(1, `{"jsonrpc":"2.0","id":1,"method":"x/y","params":{`+envelope2026+`}}}`).answered(1, sseHead).
			event(sse(1), "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`),
			[]string{"http-method-not-found-404 HTTP-81 fail server"}},
		{"a stream held open after its response", (&history{}).call2026(1, `"t"`).event(sse(1), "", result("1")).wait(later).ended(sse(1), "stream closed by the client"),
			[]string{"http-response-ends-stream HTTP-91 warn server"}},
		{"a stream held open until it failed", (&history{}).call2026(1, `"t"`).event(sse(1), "", result("1")).wait(later).ended(sse(1), "stream failed: stalled"),
			[]string{"http-response-ends-stream HTTP-91 warn server"}},
		{"a stream the client closed as its response came", (&history{}).call2026(1, `"t"`).event(sse(1), "", result("1")).wait(ms).
			ended(sse(1), "the client closed the response stream of request 1 after its response"), nil},
		{"a stream still open when the recording ends", (&history{}).call2026(1, `"t"`).event(sse(1), "", result("1")).wait(later), nil},
		{"a stream the client closed to cancel, its response crossing", (&history{}).call2026(1, `"t"`).harness(chrono.TextStreamClosed+"1: the cancellation signal").
			event(sse(1), "", result("1")).wait(later).ended(sse(1), "stream closed by the client: request 1 cancelled"), nil},
		{"progress on another request's stream (2026-07-28)", (&history{}).call2026(1, `"t1"`).call2026(2, `"t2"`).
			event(sse(2), "", progress(`"t1"`, 1)).event(sse(1), "", result("1")).event(sse(2), "", result("2")),
			[]string{"http-stream-routing LOG-46 fail server"}},
		{"a notification's POST answered 200 with {} (2026-07-28)", (&history{}).call2026(1, `"t"`).event(sse(1), "", result("1")).
			post(2, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`).answered(2, "HTTP 200 Content-Type: application/json").
			frame(chrono.In, "POST #2", `{}`),
			[]string{"no-response-to-notification HTTP-86 fail server", "frames-well-formed HTTP-86 fail server"}},
		{"2025-11-25 rules under 2026-07-28", (&history{}).
			post(1, call2026("1", `"t"`)).answered(1, sseHead).event(sse(1), "", progress(`"t"`, 1)).event(sse(1), "", result("1")).ended(sse(1), "stream ended").
			head(chrono.Out, "GET #1", "GET /mcp Mcp-Protocol-Version: 2026-07-28; Last-Event-Id: 1").head(chrono.In, "GET #1", "HTTP 405"), nil},
		{"a server request over HTTP (2026-07-28)", (&history{}).call2026(1, `"t"`).event(sse(1), "", `{"jsonrpc":"2.0","id":5,"method":"roots/list"}`).event(sse(1), "", result("1")),
			[]string{"one-response RPC-61 fail server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: "http"})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(texts: %v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}

// TestHTTPConformingExercisesEveryRule: the conforming sessions of
// TestHTTPRules give every HTTP rule of their revision something to
// judge, so that each passes rather than skips: a rule that never ran
// would pass them too.
func TestHTTPConformingExercisesEveryRule(t *testing.T) {
	old := http25("abc").
		call25(1, `"t1"`).event(sse(1), "1-2", progress(`"t1"`, 1)).event(sse(1), "1-3", result("1")).ended(sse(1), "stream ended").
		call25(2, `"t2"`).event(sse(2), "2-2", progress(`"t2"`, 1)).ended(sse(2), "stream dropped by the client").
		head(chrono.Out, "GET #2", "GET /mcp Last-Event-Id: 2-2").event("SSE GET #2", "2-3", result("2")).
		post(3, `{"jsonrpc":"2.0","method":"notifications/x"}`).answered(3, "HTTP 202")
	modern := (&history{}).
		call2026(1, `"t1"`).event(sse(1), "", progress(`"t1"`, 1)).event(sse(1), "", result("1")).ended(sse(1), "stream ended").
		post(2, `{"jsonrpc":"2.0","method":"notifications/x"}`).answered(2, "HTTP 202").
		head(chrono.Out, "GET #1", "GET Mcp-Protocol-Version: 2026-07-28").head(chrono.In, "GET #1", "HTTP 405").
		post(3, `{"jsonrpc":"2.0","id":3,"method":"x/y","params":{`+envelope2026+`}}}`).answered(3, "HTTP 404 Content-Type: application/json").
		frame(chrono.In, "POST #3", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`)
	for _, tc := range []struct {
		name  string
		h     *history
		rules []string
	}{
		{"2025-11-25", old, []string{RuleStreamPrimed, RuleEventIDs, RuleStreamRouting, RuleReplayOwnStream, RuleSessionIDVisible, RuleNoNotificationRepl}},
		{"2026-07-28", modern, []string{RuleEventIDs, RuleStreamRouting, RuleStreamEnds, RuleUnbuffered, RuleStateless, RuleMethodNotFound, RuleNoNotificationRepl}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, m := run(tc.h, Options{Transport: "http", Sides: []Side{Server}})
			got := map[string]verdict.Outcome{}
			for _, r := range m.Results(nil) {
				got[r.ID] = r.Outcome
			}
			for _, id := range tc.rules {
				if o := got[ResultID(Server, id)]; o.Verdict != verdict.Pass {
					t.Errorf("%s: %s %s", id, o.Verdict, o.Summary)
				}
			}
		})
	}
}

// TestHeaderText: a recorded head's headers are found whatever their
// case, after the request line or status, in either recorder's order,
// with watch's note on an encoded body left out; a header past the cut
// of a text too long to keep is unknown, not absent.
func TestHeaderText(t *testing.T) {
	for _, tc := range []struct {
		text, name string
		value      string
		known      int
	}{
		{"HTTP 200 Content-Type: text/event-stream; X-Accel-Buffering: no", "x-accel-buffering", "no", headerPresent},
		{"HTTP 200 Mcp-Session-Id: a1; Content-Type: text/event-stream", "Mcp-Session-Id", "a1", headerPresent},
		{"GET /mcp Mcp-Session-Id: a1; Last-Event-Id: 1-3", "Last-Event-ID", "1-3", headerPresent},
		{"GET Accept: text/event-stream; Last-Event-Id: 1-3", "Accept", "text/event-stream", headerPresent},
		{"HTTP 200 Content-Type: text/event-stream; charset=utf-8; X-Accel-Buffering: no (gzip-encoded: the body is recorded decoded)", "X-Accel-Buffering", "no", headerPresent},
		{"HTTP 200 Content-Type: text/event-stream", "X-Accel-Buffering", "", headerAbsent},
		{"HTTP 200 Content-Type: text/event-stream; X-Long: xxxxx… (truncated, 5000 bytes)", "X-Accel-Buffering", "", headerUnknown},
		{"HTTP 200 Content-Type: text/event-stream; X-Accel-Buffering: n… (truncated, 5000 bytes)", "X-Accel-Buffering", "", headerUnknown},
	} {
		v, known := header(tc.text, tc.name)
		if v != tc.value || known != tc.known {
			t.Errorf("header(%q, %q) = %q, %d; want %q, %d", tc.text, tc.name, v, known, tc.value, tc.known)
		}
	}
	for text, want := range map[string]string{
		"sse id=1-3": "1-3",
		"sse id=1-3 retry=1000ms (empty data: priming)": "1-3",
		"sse id=a b event=x comments=2":                 "a b",
		"sse id=7; part of this event was dropped":      "7",
		"sse id= (raw request, not delivered)":          "",
	} {
		if id, ok := sseEventID(text); !ok || id != want {
			t.Errorf("sseEventID(%q) = %q, %v; want %q", text, id, ok, want)
		}
	}
	if _, ok := sseEventID("sse event=ping"); ok {
		t.Error("an event without an id field has an ID")
	}
}

// TestHTTPMemory: a long session over Streamable HTTP leaves no stream
// followed once each has ended, and keeps at most maxEventIDs event IDs:
// memory follows what is in flight.
func TestHTTPMemory(t *testing.T) {
	m := New(Options{Transport: "http", Revision: "2025-11-25"})
	log := chrono.New(chrono.WithCaps(0, 0))
	add := func(ev chrono.Event) { m.Event("s", log.Append(ev)) }
	const n = 2 * maxHTTPStreams
	for i := range n {
		post, channel := fmt.Sprintf("POST #%d", i), fmt.Sprintf("SSE POST #%d", i)
		id := fmt.Sprint(i)
		add(chrono.Event{Dir: chrono.Out, Kind: chrono.KindFrame, Channel: post, Raw: []byte(call(id, `"t`+id+`"`)), Summary: &chrono.Summary{Kind: "request", Method: "tools/call", ID: id, Token: `"t` + id + `"`}})
		add(chrono.Event{Dir: chrono.In, Kind: chrono.KindHTTP, Channel: post, Text: "HTTP 200 Content-Type: text/event-stream"})
		add(chrono.Event{Dir: chrono.In, Kind: chrono.KindHTTP, Channel: channel, Text: "sse id=" + id + "-0 (empty data: priming)"})
		add(chrono.Event{Dir: chrono.In, Kind: chrono.KindFrame, Channel: channel, Text: "sse id=" + id + "-1", Raw: []byte(result(id)), Summary: &chrono.Summary{Kind: "result", ID: id}})
		add(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindNote, Channel: channel, Text: "stream ended"})
	}
	hs := m.sessions["s"].hs
	if len(hs.byExchange) != 0 || len(hs.order) > 2*maxHTTPStreams {
		t.Errorf("%d streams followed, %d names kept, after every stream ended", len(hs.byExchange), len(hs.order))
	}
	if len(hs.ids.at) != 2*n || len(hs.ids.order) != 2*n {
		t.Errorf("%d event IDs kept; want %d", len(hs.ids.at), 2*n)
	}
	if fs := m.Findings(); len(fs) != 0 {
		t.Errorf("findings in a conforming conversation: %v", brief(fs[:min(len(fs), 5)]))
	}
	ids := newBoundedMap[eventSighting](3)
	for i, id := range []string{"a", "b", "c", "b", "d"} {
		ids.put(id, eventSighting{seq: uint64(i)})
	}
	if _, ok := ids.get("a"); ok || len(ids.at) != 3 || len(ids.order) != 3 {
		t.Errorf("event IDs past the bound: %v", ids.order)
	}
	if b, _ := ids.get("b"); b.seq != 3 {
		t.Errorf("a key put again holds %d; want the last value, 3", b.seq)
	}
	st := &httpStreams{byExchange: map[string]*sseStream{}}
	for i := range maxHTTPStreams + 10 {
		st.stream(fmt.Sprintf("POST #%d", i))
	}
	if len(st.byExchange) != maxHTTPStreams {
		t.Errorf("%d streams followed; want at most %d", len(st.byExchange), maxHTTPStreams)
	}
}

// TestHTTPSkipsThatCannotApply: a Streamable HTTP rule of a stdio
// conversation needs the http transport, and an HTTP rule of a revision
// no session spoke applies to the other only: a report's completeness
// counts neither as a rule the conversation could have exercised.
func TestHTTPSkipsThatCannotApply(t *testing.T) {
	outcomes := func(h *history, opts Options) map[string]string {
		_, _, m := run(h, opts)
		out := map[string]string{}
		for _, r := range m.Results(nil) {
			out[r.ID] = string(r.Outcome.Verdict) + " " + r.Outcome.Summary
		}
		return out
	}
	stdio := outcomes(init25().c(call("1", `"t"`)).s(result("1")), Options{})
	if got := stdio["server/"+RuleStreamPrimed]; got != "skip needs the http transport; the target uses stdio" {
		t.Errorf("an HTTP rule over stdio: %q", got)
	}
	old := outcomes(http25("abc").call25(1, `"t"`).event(sse(1), "1-2", result("1")).ended(sse(1), "stream ended"), Options{Transport: "http"})
	if got := old["server/"+RuleStreamEnds]; got != "skip applies to 2026-07-28 only" {
		t.Errorf("a 2026-07-28 rule of a 2025-11-25 conversation: %q", got)
	}
	if got := old["server/"+RuleLogLevel]; got != "skip not exercised: the conversation gave it nothing to judge" {
		t.Errorf("a rule of the revision spoken, with nothing to judge: %q", got)
	}
	modern := outcomes((&history{}).call2026(1, `"t"`).event(sse(1), "", result("1")).ended(sse(1), "stream ended"), Options{Transport: "http"})
	if got := modern["server/"+RuleReplayOwnStream]; got != "skip applies to 2025-11-25 only" {
		t.Errorf("a 2025-11-25 rule of a 2026-07-28 conversation: %q", got)
	}
	if got := modern["server/"+RuleStreamEnds]; !strings.HasPrefix(got, "pass") {
		t.Errorf("the rule the conversation exercised: %q", got)
	}
}
