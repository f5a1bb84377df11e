package monitor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// history builds a chronology for the monitor: frames each side sends, at
// times the test sets, and harness events.
type history struct {
	events []chrono.Event
	at     time.Duration
}

// wait moves the history's clock on.
func (h *history) wait(d time.Duration) *history { h.at += d; return h }

func (h *history) frame(dir chrono.Direction, channel, raw string) *history {
	log := chrono.New()
	ev := log.Frame(dir, channel, []byte(raw), nil, nil)
	ev.Seq = uint64(len(h.events) + 1)
	ev.Offset = h.at
	h.events = append(h.events, ev)
	return h
}

// c is a frame the client sends, s one the server sends (over stdio).
func (h *history) c(raw string) *history { return h.frame(chrono.Out, "stdin", raw) }
func (h *history) s(raw string) *history { return h.frame(chrono.In, "stdout", raw) }

func (h *history) harness(text string) *history {
	h.events = append(h.events, chrono.Event{Seq: uint64(len(h.events) + 1), Offset: h.at, Dir: chrono.Harness, Kind: chrono.KindDecision, Channel: "SSE POST #1", Text: text})
	return h
}

// init25 opens a 2025-11-25 session.
func init25() *history {
	h := &history{}
	return h.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).
		s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`).
		c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// envelope2026 is a 2026-07-28 request's _meta.
const envelope2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// call is a tools/call with id and token.
func call(id, token string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":%s}}}`, id, token)
}

func call2026(id, token string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"slow",%s,"progressToken":%s}}}`, id, envelope2026, token)
}

func progress(token string, v float64) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%v}}`, token, v)
}

func progressOf(token string, v, total float64) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%v,"total":%v}}`, token, v, total)
}

func result(id string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
}

// nullErr is an error response with a null id.
const nullErr = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}`

func cancel(id string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`, id)
}

// run feeds h to a monitor with opts (stdio unless set) and ends it.
// The histories' 2026-07-28 results carry no serverInfo in _meta, which
// RPC-56 and LIF-51 (SHOULDs) ask of every result: unless opts.Owned is
// set, run leaves those two to the tests of the rule (TestEraRules), as
// check leaves a requirement to the case that owns it.
func run(h *history, opts Options) ([]Finding, []Open, *Monitor) {
	if opts.Transport == "" {
		opts.Transport = "stdio"
	}
	if opts.Owned == nil {
		opts.Owned = func(_, requirement string) bool { return requirement == "RPC-56" || requirement == "LIF-51" }
	}
	m := New(opts)
	for _, ev := range h.events {
		m.Event("s1", ev)
	}
	open := m.End()
	return m.Findings(), open, m
}

// brief is a finding's rule, requirement, verdict and side.
func brief(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s %s", f.Rule, f.Requirement, f.Verdict, f.Side))
	}
	return out
}

// TestRules: each rule is broken by a history that breaks it, with the
// requirement and severity of the session's revision, and a conforming
// history of the same shape breaks nothing.
func TestRules(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		h    *history
		want []string // briefs; none for a conforming history
	}{
		{"conforming call", init25().c(call("1", `"t1"`)).s(progress(`"t1"`, 1)).s(progress(`"t1"`, 2)).s(result("1")), nil},
		{"progress not increasing", init25().c(call("1", `"t1"`)).s(progress(`"t1"`, 2)).s(progress(`"t1"`, 2)).s(result("1")),
			[]string{"progress-increasing PRG-4 fail server"}},
		{"progress after the response", init25().c(call("1", `"t1"`)).s(result("1")).s(progress(`"t1"`, 1)),
			[]string{"no-progress-after-end PRG-14 fail server"}},
		{"progress after a cancelled request's response", init25().c(call("1", `"t"`)).c(cancel("1")).s(result("1")).wait(500 * ms).s(progress(`"t"`, 1)),
			[]string{"no-progress-after-end PRG-14 fail server"}},
		{"progress for a token never given", init25().c(call("1", `"t1"`)).s(progress(`"zz"`, 1)).s(result("1")),
			[]string{"progress-token-known PRG-7 fail server"}},
		{"a token reused while active", init25().c(call("1", `"t1"`)).c(call("2", `"t1"`)).s(result("1")).s(result("2")),
			[]string{"progress-token-unique PRG-2 fail client"}},
		{"a token reused after its request ended", init25().c(call("1", `"t1"`)).s(result("1")).c(call("2", `"t1"`)).s(result("2")), nil},
		{"an ID reused in flight, each answered", init25().c(call("1", `"a"`)).c(call("1", `"b"`)).s(result("1")).s(result("1")),
			[]string{"ids-unique RPC-6 fail client"}},
		{"an ID reused after its answer (2025-11-25)", init25().c(call("1", `"a"`)).s(result("1")).c(call("1", `"b"`)).s(result("1")),
			[]string{"ids-unique RPC-6 fail client"}},
		{"a second response", init25().c(call("1", `"a"`)).s(result("1")).s(result("1")),
			[]string{"one-response RPC-8 fail server"}},
		{`"5" is not 5`, init25().c(call(`"5"`, `"a"`)).s(result("5")).s(result(`"5"`)),
			[]string{"one-response RPC-8 fail server"}},
		{"a response for an ID never sent", init25().s(result("77")),
			[]string{"one-response RPC-8 fail server"}},
		{"a null-id error with every ID readable and nothing in flight", init25().c(`{"jsonrpc":"2.0","method":"notifications/x"}`).s(nullErr),
			[]string{"no-response-to-notification RPC-15 fail server"}},
		{"a null-id error while a request is in flight, which then has its own answer", init25().c(call("1", `"t"`)).c(`{"jsonrpc":"2.0","method":"notifications/x"}`).
			s(nullErr).s(result("1")),
			[]string{"no-response-to-notification RPC-15 fail server"}},
		{"a null-id error while a request is in flight that never has its own", init25().c(call("1", `"t"`)).c(`{"jsonrpc":"2.0","method":"notifications/x"}`).
			s(nullErr),
			[]string{"one-response RPC-11 fail server"}},
		{"a null-id error before any notification", (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).
			s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`).s(nullErr),
			[]string{"one-response RPC-11 fail server"}},
		{"a null-id error for an unreadable frame", init25().c(`{not json`).s(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`),
			[]string{"frames-well-formed STD-5 fail client"}},
		{"an error with an ID never sent after an unreadable frame", init25().c(`{not json`).s(`{"jsonrpc":"2.0","id":77,"error":{"code":-32700,"message":"parse"}}`),
			[]string{"frames-well-formed STD-5 fail client", "one-response RPC-11 fail server"}},
		{"a lenient result for a request with the wrong jsonrpc version", init25().c(`{"jsonrpc":"1.0","id":"v1","method":"ping"}`).s(`{"jsonrpc":"2.0","id":"v1","result":{}}`),
			[]string{"frames-well-formed STD-5 fail client"}},
		{"a banner on stdout", (&history{}).s(`Server listening`).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`),
			[]string{"frames-well-formed STD-4 fail server"}},
		{"a response after a cancel, within the window", init25().c(call("1", `"t"`)).s(progress(`"t"`, 1)).c(cancel("1")).wait(10 * ms).s(result("1")), nil},
		{"an error naming the cancel, within the window (2026-07-28)", (&history{}).c(call2026("1", `"t"`)).c(cancel("1")).wait(ms).
			s(`{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"context canceled"}}`),
			[]string{"cancel-no-response CAN-54 fail server"}},
		{"the window follows the session's round trips", init25().c(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).wait(ms).s(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`).
			c(call("1", `"t"`)).s(progress(`"t"`, 1)).c(cancel("1")).wait(50 * ms).s(result("1")),
			[]string{"cancel-no-response CAN-8 warn server"}},
		{"an answer sooner than the call's own pace allows", init25().c(call("1", `"t"`)).wait(150 * ms).s(progressOf(`"t"`, 1, 3)).c(cancel("1")).wait(ms).s(result("1")),
			[]string{"cancel-no-response CAN-8 warn server"}},
		{"an answer once the work was done", init25().c(call("1", `"t"`)).wait(150 * ms).s(progressOf(`"t"`, 3, 3)).c(cancel("1")).wait(ms).s(result("1")), nil},
		{"an error of another kind, within the window", init25().c(call("1", `"t"`)).c(cancel("1")).wait(ms).
			s(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"disk full"}}`), nil},
		{"a response after a cancel, beyond the window (2025-11-25: SHOULD)", init25().c(call("1", `"t"`)).s(progress(`"t"`, 1)).c(cancel("1")).wait(500 * ms).s(result("1")),
			[]string{"cancel-no-response CAN-8 warn server"}},
		{"a response after a cancel, beyond the window (2026-07-28: MUST NOT)", (&history{}).c(call2026("1", `"t"`)).s(progress(`"t"`, 1)).c(cancel("1")).wait(500 * ms).s(result("1")),
			[]string{"cancel-no-response CAN-54 fail server"}},
		{"progress after a cancel, beyond the window", init25().c(call("1", `"t"`)).s(progress(`"t"`, 1)).c(cancel("1")).wait(500 * ms).s(progress(`"t"`, 2)),
			[]string{"cancel-no-progress CAN-8 warn server"}},
		{"initialize cancelled", (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).c(cancel("0")).s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`),
			[]string{"initialize-not-cancelled CAN-2 fail client"}},
		{"initialize cancelled, answered beyond the window", (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).c(cancel("0")).wait(500 * ms).
			s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`),
			[]string{"initialize-not-cancelled CAN-2 fail client"}},
		{"a cancel of the other side's request", init25().s(`{"jsonrpc":"2.0","id":9,"method":"roots/list"}`).c(cancel("9")).c(`{"jsonrpc":"2.0","id":9,"result":{"roots":[]}}`),
			[]string{"cancel-names-own-request CAN-1 fail client"}},
		{"a cancel long after the response", init25().c(call("1", `"t"`)).s(result("1")).wait(time.Second).c(cancel("1")),
			[]string{"cancel-names-own-request CAN-1 fail client"}},
		{"a cancel crossing the response", init25().c(call("1", `"t"`)).s(result("1")).wait(5 * ms).c(cancel("1")), nil},
		{"a cancel of an ID never issued", init25().c(call("1", `"t"`)).c(cancel("2")).s(result("1")),
			[]string{"cancel-names-own-request CAN-5 fail client"}},
		{"a cancel of an ID never issued (2026-07-28)", (&history{}).c(call2026("1", `"t"`)).c(cancel("2")).s(result("1")),
			[]string{"cancel-names-own-request CAN-51 fail client"}},
		{"a cancel without requestId", init25().c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"x"}}`),
			[]string{"cancel-names-own-request CAN-6 fail client"}},
		{"a server cancel of a client request (2026-07-28)", (&history{}).c(call2026("1", `"t"`)).s(cancel("1")).s(result("1")),
			[]string{"cancel-names-own-request CAN-42 fail server"}},
		{"a server request under 2026-07-28 (stdio)", (&history{}).c(call2026("1", `"t"`)).s(`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`).s(result("1")),
			[]string{"one-response STD-43 fail server"}},
		{"a log below the level set", init25().c(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}`).s(result("1")).
			s(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`),
			[]string{"log-level LOG-4 warn server"}},
		{"a log for no request that asked (2026-07-28 stdio)", (&history{}).c(call2026("1", `"t"`)).s(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`).s(result("1")),
			[]string{"log-level LOG-41 fail server"}},
		{"a log just after the answer of the request that asked (2026-07-28 stdio)", (&history{}).
			c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}}}`).
			s(result("1")).s(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":"x"}}`),
			[]string{"log-level LOG-43 warn server"}},
		{"a log below the level of the request just answered (2026-07-28 stdio)", (&history{}).
			c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"error"}}}`).
			s(result("1")).s(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`),
			[]string{"log-level LOG-41 fail server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{})
			got := brief(fs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(texts: %v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}

// TestTaskRules: a terminal task stays terminal, tasks/cancel of a
// terminal one is refused with -32602, notifications/cancelled never
// cancels a task, and a task left working past the grace after the host
// stopped waiting is one of seed 002's alerts, naming the task and the
// requests.
func TestTaskRules(t *testing.T) {
	created := func(h *history) *history {
		return h.c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","task":{"ttl":60000},"_meta":{"progressToken":"tk"}}}`).
			s(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"T1","status":"working"}}}`)
	}
	get := func(id, status string) func(*history) *history {
		return func(h *history) *history {
			return h.c(`{"jsonrpc":"2.0","id":` + id + `,"method":"tasks/get","params":{"taskId":"T1"}}`).
				s(`{"jsonrpc":"2.0","id":` + id + `,"result":{"taskId":"T1","ttl":60000,"status":"` + status + `"}}`)
		}
	}
	grace := 50 * time.Millisecond
	for _, tc := range []struct {
		name string
		h    *history
		want []string
		text string
	}{
		{"progress after the task is terminal", created(init25()).s(progress(`"tk"`, 1)).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"T1","ttl":60000,"status":"completed"}}`).
			s(progress(`"tk"`, 2)), []string{"no-progress-after-end PRG-11 fail server"}, ""},
		{"a terminal task comes back", get("3", "working")(get("2", "completed")(created(init25()))), []string{"task-terminal-stable TSK-31 fail server"}, ""},
		{"tasks/cancel of a completed task accepted", get("2", "completed")(created(init25())).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","ttl":60000,"status":"cancelled"}}`),
			[]string{"task-cancel-terminal TSK-63 fail server"}, ""},
		{"a cancel notification for the creating request", created(init25()).c(cancel("1")).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","ttl":60000,"status":"cancelled"}}`),
			[]string{"task-cancelled-by-tasks-cancel CAN-4 fail client"}, ""},
		{"the host aborts its poll and never cancels", get("4", "working")(created(init25()).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"T1","ttl":60000,"status":"working"}}`).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`).c(cancel("3")).wait(2 * grace)),
			[]string{"task-still-working  info client"}, "after the host stopped waiting for it (it cancelled request 3"},
		{"tasks/cancel acknowledged, still working after the grace", created(init25()).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","ttl":60000,"status":"cancelled"}}`).
			wait(2 * grace).s(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"working"}}`),
			[]string{"task-terminal-stable TSK-65 fail server", "task-still-working  info client"}, "after tasks/cancel was acknowledged"},
		{"left working at the end", created(init25()), []string{"task-still-working  info client"}, "whether it still works is not on the wire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Grace: grace})
			got := brief(fs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
			if tc.text != "" {
				last := fs[len(fs)-1]
				if !strings.Contains(last.Text, tc.text) || last.TaskID != "T1" || len(last.RequestIDs) == 0 {
					t.Errorf("alert %+v; want it to say %q and name the task and requests", last, tc.text)
				}
			}
		})
	}
}

// TestSidesAndRevision: the checker's own sessions judge only the server;
// a finding made before the session showed its revision (a banner before
// initialize) is judged in the revision it then shows; a session that
// never shows one is judged under the fallback; requests still open at
// the end are listed, not reported.
func TestSidesAndRevision(t *testing.T) {
	h := init25().c(call("1", `"t"`)).c(call("1", `"u"`)).s(progress(`"zz"`, 1))
	fs, _, _ := run(h, Options{Sides: []Side{Server}})
	if got := brief(fs); len(got) != 1 || got[0] != "progress-token-known PRG-7 fail server" {
		t.Errorf("server side only: %v", got)
	}
	banner := (&history{}).s("hello").c(call2026("1", `"t"`)).s(result("1"))
	fs, _, _ = run(banner, Options{})
	if len(fs) != 1 || fs[0].Revision != "2026-07-28" || fs[0].Requirement != "STD-4" {
		t.Errorf("a banner before the revision was known: %+v", fs)
	}
	silent := (&history{}).s("hello")
	fs, _, _ = run(silent, Options{Fallback: "2026-07-28"})
	if len(fs) != 1 || fs[0].Revision != "2026-07-28" {
		t.Errorf("judged under the fallback: %+v", fs)
	}
	_, open, _ := run(init25().c(call("7", `"t"`)).s(progress(`"t"`, 1)), Options{})
	if len(open) != 1 || open[0].ID != "7" || open[0].Method != "tools/call" || open[0].Side != Client {
		t.Errorf("open requests %+v; want request 7", open)
	}
}

// http is a history over Streamable HTTP: the client's frames on POST
// channels, the server's on their SSE streams.
func (h *history) post(n int, raw string) *history {
	return h.frame(chrono.Out, fmt.Sprintf("POST #%d", n), raw)
}
func (h *history) sse(n int, raw string) *history {
	return h.frame(chrono.In, fmt.Sprintf("SSE POST #%d", n), raw)
}

// TestStreamClose: over Streamable HTTP under 2026-07-28 the client's
// closing of a response stream is the request's cancel (CAN-43), so a
// response that still comes (on another stream) past the window breaks
// CAN-56; under 2025-11-25 it is a disconnection, and a request whose
// stream was dropped and neither resumed nor cancelled was abandoned
// (HTTP-26), unless the client resumed it.
func TestStreamClose(t *testing.T) {
	ms := time.Millisecond
	modern := (&history{}).post(1, call2026("1", `"t"`)).sse(1, progress(`"t"`, 1)).harness(chrono.TextStreamClosed+"1: the client closed it").
		wait(500*ms).frame(chrono.In, "SSE GET #1", result("1"))
	fs, _, _ := run(modern, Options{Transport: "http"})
	if got := brief(fs); len(got) != 1 || got[0] != "cancel-no-response CAN-56 fail server" {
		t.Errorf("2026-07-28: %v", got)
	}
	legacy := init25().post(1, call("1", `"t"`)).sse(1, progress(`"t"`, 1)).harness(chrono.TextStreamClosed + "1: the client closed it")
	fs, open, _ := run(legacy, Options{Transport: "http"})
	if got := brief(fs); len(got) != 1 || got[0] != "abandoned-without-cancel HTTP-26 warn client" || len(open) != 1 {
		t.Errorf("2025-11-25 dropped: %v, open %v", got, open)
	}
	resumed := init25().post(1, call("1", `"t"`)).harness(chrono.TextStreamClosed + "1: the client closed it")
	resumed.events = append(resumed.events, chrono.Event{Seq: uint64(len(resumed.events) + 1), Dir: chrono.Out, Kind: chrono.KindHTTP, Channel: "GET #1", Text: "GET /mcp; Last-Event-Id: 1-3"})
	resumed.frame(chrono.In, "SSE GET #1", result("1"))
	if fs, _, _ := run(resumed, Options{Transport: "http"}); len(fs) != 0 {
		t.Errorf("a resumed stream: %v", brief(fs))
	}
}

// TestSchemaFindings: with Options.Schema, a server message that breaks
// the revision's schema is a finding of the schema check, kept as check's
// reports show it (each distinct violation once, where first seen).
func TestSchemaFindings(t *testing.T) {
	h := (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).
		s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":7,"version":"1"}}}`)
	// Told the revision, and learning it from the initialize result the
	// violation is in (a live conversation): the same finding.
	for _, rev := range []string{"2025-11-25", ""} {
		fs, _, m := run(h, Options{Schema: true, Revision: rev})
		sc := m.Schema()
		if len(fs) != 0 || len(sc.Findings) != 1 || sc.Findings[0].Requirement != "RPC-2" || sc.Findings[0].Pointer != "/result/serverInfo/name" || sc.Checked != 1 {
			t.Errorf("revision %q: findings %+v, schema check %+v", rev, fs, sc)
		}
	}
}

// TestSchemaOfInitialize: when the revision is learned from the
// initialize exchange (judge, watch), the schema check still knows the
// answer for an InitializeResult, so a capability of the wrong shape
// (tasks.list true, TSK-2) is a violation of the schema.
func TestSchemaOfInitialize(t *testing.T) {
	h := (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).
		s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":true}},"serverInfo":{"name":"s","version":"1"}}}`)
	_, _, m := run(h, Options{Schema: true})
	sc := m.Schema()
	if len(sc.Findings) != 1 || sc.Findings[0].Pointer != "/result/capabilities/tasks/list" {
		t.Errorf("schema check %+v; want tasks.list found not an object", sc)
	}
}

// TestMemoryFollowsWhatIsInFlight: a long conversation of answered calls
// leaves the session holding no request in flight and at most maxEnded
// answered ones: memory follows what is in flight, not the
// conversation's length (the IDs RPC-6 remembers are a boundedSet).
func TestMemoryFollowsWhatIsInFlight(t *testing.T) {
	m := New(Options{Transport: "stdio", Revision: "2025-11-25"})
	log := chrono.New(chrono.WithCaps(0, 0))
	const n = 3 * maxEnded
	for i := range n {
		id := fmt.Sprint(i)
		for _, f := range []struct {
			dir chrono.Direction
			raw string
		}{{chrono.Out, call(id, `"t`+id+`"`)}, {chrono.In, progress(`"t`+id+`"`, 1)}, {chrono.In, result(id)}} {
			ev := log.Frame(f.dir, "std", []byte(f.raw), nil, nil)
			m.Event("s", ev)
		}
	}
	s := m.sessions["s"]
	if got := len(s.reqs[Client]); got != 0 {
		t.Errorf("%d requests in flight", got)
	}
	if got := len(s.ended[Client]); got > maxEnded {
		t.Errorf("%d answered requests kept", got)
	}
	if fs := m.Findings(); len(fs) != 0 {
		t.Errorf("findings in a conforming conversation: %v", brief(fs[:min(len(fs), 5)]))
	}
	if got := m.Counts()[CountRequests]; got != n {
		t.Errorf("%d requests counted", got)
	}
}

// TestCancelledRequestsRetired: a host that cancels calls the server
// never answers (a receiver need not answer a cancelled request) leaves
// at most maxOpen requests open, not one per cancel; a response or
// progress for a retired request is still judged as after its cancel
// (CAN-8, warn under 2025-11-25), not as an answer to an ID never sent,
// and one for a request forgotten since is counted, not judged.
func TestCancelledRequestsRetired(t *testing.T) {
	h := init25()
	const n = 2 * maxOpen
	for i := 1; i <= n; i++ {
		id := fmt.Sprint(i)
		h.c(call(id, `"t`+id+`"`)).wait(time.Millisecond).c(cancel(id)).wait(time.Second)
	}
	// Requests 1 to maxOpen are retired; the latest maxEnded of them
	// are kept among the ended ones, the others forgotten.
	last := fmt.Sprint(maxOpen)
	h.s(result(last)).s(progress(`"t`+fmt.Sprint(maxOpen-1)+`"`, 1))
	h.s(result("1")).s(progress(`"t2"`, 1))
	m := New(Options{Transport: "stdio", Revision: "2025-11-25"})
	for _, ev := range h.events {
		m.Event("s1", ev)
	}
	s := m.sessions["s1"]
	if got := len(s.reqs[Client]); got > maxOpen {
		t.Errorf("%d requests open after %d unanswered cancels; want at most %d", got, n, maxOpen)
	}
	if got := len(s.cancelled); got > 2*maxOpen {
		t.Errorf("%d cancelled requests queued", got)
	}
	if open := m.End(); len(open) > maxOpen || len(open) == 0 {
		t.Errorf("%d requests reported open; want between 1 and %d", len(open), maxOpen)
	}
	fs := m.Findings()
	if got := m.Counts()[CountForgotten]; got != 2 {
		t.Errorf("%d answers to forgotten requests counted; want 2 (a response and progress)", got)
	}
	want := []string{
		"cancel-no-response CAN-8 warn server",
		"cancel-no-progress CAN-8 warn server",
	}
	if got := brief(fs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnsweredExchangesForgotten: over Streamable HTTP, each answered
// POST exchange is forgotten once maxEnded later ones were answered,
// while an exchange whose request is open is kept however old.
func TestAnsweredExchangesForgotten(t *testing.T) {
	h := (&history{}).frame(chrono.Out, "POST #0", call("0", `"t0"`))
	const n = 4 * maxEnded
	for i := 1; i <= n; i++ {
		post := fmt.Sprintf("POST #%d", i)
		id := fmt.Sprint(i)
		h.frame(chrono.Out, post, call(id, `"t`+id+`"`)).
			head(chrono.In, post, "HTTP 200 Content-Type: application/json").
			frame(chrono.In, post, result(id))
	}
	h.head(chrono.In, "POST #0", "HTTP 200 Content-Type: application/json").frame(chrono.In, "POST #0", result("0"))
	m := New(Options{Transport: "http", Revision: "2025-11-25"})
	for _, ev := range h.events {
		m.Event("s1", ev)
	}
	fs := m.Findings()
	s := m.sessions["s1"]
	if got := len(s.streams); got > maxEnded+1 {
		t.Errorf("%d exchanges followed after %d answered; want at most %d", got, n+1, maxEnded+1)
	}
	if r := s.streams["POST #0"]; r == nil || !r.responded {
		t.Errorf("the oldest exchange, open until the end, was forgotten before its answer: %v", r)
	}
	if len(fs) != 0 {
		t.Errorf("findings in a conforming conversation: %v", brief(fs[:min(len(fs), 5)]))
	}
}

// TestBoundedSet: past its bound the set forgets its oldest members, and
// holds no more than the bound.
func TestBoundedSet(t *testing.T) {
	b := newBoundedSet(3)
	for _, k := range []string{"a", "b", "c", "a", "d"} {
		b.add(k)
	}
	if b.has("a") || !b.has("b") || !b.has("d") || len(b.in) != 3 {
		t.Errorf("set %v", b.order)
	}
}

// TestRuleCites: every requirement a rule cites is a row of the registry
// in the revision it is cited under, so that a finding never cites a
// sentence the session's revision does not have.
func TestRuleCites(t *testing.T) {
	for _, r := range Rules() {
		for rev, ids := range r.Cites {
			for _, id := range ids {
				req, ok := spec.Lookup(id)
				if !ok || !req.AppliesTo(rev) {
					t.Errorf("%s cites %s under %s: in the registry %v, applies %v", r.ID, id, rev, ok, ok && req.AppliesTo(rev))
				}
			}
		}
	}
}

// TestResults: the report has a result per rule and side judged: the
// worst finding with its requirement and the count of the others, pass
// for a rule the conversation exercised that held, skip for one it gave
// nothing to judge.
func TestResults(t *testing.T) {
	h := init25().c(call("1", `"t"`)).s(progress(`"t"`, 2)).s(progress(`"t"`, 2)).s(progress(`"t"`, 1)).s(result("1"))
	_, _, m := run(h, Options{})
	byID := map[string]verdict.Outcome{}
	for _, r := range m.Results(nil) {
		byID[r.ID] = r.Outcome
	}
	inc := byID["server/"+RuleProgressIncreasing]
	if inc.Verdict != verdict.Fail || inc.Requirement != "PRG-4" || !strings.Contains(inc.Summary, "1 more findings of this rule") || inc.ActualSeq == 0 {
		t.Errorf("progress-increasing: %+v", inc)
	}
	if o := byID["server/"+RuleTokenKnown]; o.Verdict != verdict.Pass {
		t.Errorf("progress-token-known: %+v", o)
	}
	if o := byID["client/"+RuleCancelInitialize]; o.Verdict != verdict.Skip {
		t.Errorf("initialize-not-cancelled, with no cancel at all: %+v", o)
	}
	if _, judged := byID["client/"+RuleProgressIncreasing]; judged {
		t.Error("a rule about the server's frames has a client result")
	}
}

// TestObserve: a view of the conversation is told of each request, its
// response (with when it was sent and whether it was cancelled), each
// cancel and each change of a task's status, without pairing anything
// itself; each activity names the session's revision once it is known.
func TestObserve(t *testing.T) {
	var got []string
	h := init25().c(call("1", `"t"`)).c(cancel("1")).s(result("1")).
		c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","task":{"ttl":1}}}`).
		s(`{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"T","status":"working"}}}`).
		s(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T","status":"completed"}}`)
	run(h, Options{Observe: func(a Activity) {
		got = append(got, fmt.Sprintf("%s %s %s %s cancelled=%v %s rev=%s", a.Kind, a.Side, a.ID, a.Method, a.Cancelled, a.Status, a.Revision))
	}})
	want := []string{
		"request client 0 initialize cancelled=false  rev=2025-11-25",
		"response client 0 initialize cancelled=false  rev=2025-11-25",
		"request client 1 tools/call cancelled=false  rev=2025-11-25",
		"cancel client 1 tools/call cancelled=false  rev=2025-11-25",
		"response client 1 tools/call cancelled=true  rev=2025-11-25",
		"request client 2 tools/call cancelled=false  rev=2025-11-25",
		"task client 2 tools/call cancelled=false working rev=2025-11-25",
		"response client 2 tools/call cancelled=false  rev=2025-11-25",
		"task client 2 tools/call cancelled=false completed rev=2025-11-25",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("activities\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// status records the HTTP status line POST #n was answered with.
func (h *history) status(n, code int) *history {
	h.events = append(h.events, chrono.Event{Seq: uint64(len(h.events) + 1), Offset: h.at, Dir: chrono.In, Kind: chrono.KindHTTP,
		Channel: fmt.Sprintf("POST #%d", n), Text: fmt.Sprintf("HTTP %d Content-Type: application/json", code)})
	return h
}

// TestNullIDOverHTTP: over Streamable HTTP an error with a null id answers
// the POST it came on: a notification's accepted one breaks RPC-15 (its
// POST is answered with 202 and no body); one refused at the HTTP layer
// (a notification's 400, HTTP-12, whose body may be such an error,
// HTTP-4; the 404 of a session the server no longer knows) is the
// exchange's answer and not judged; a request's accepted one answers it
// without its readable ID (RPC-11).
func TestNullIDOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *history
		want []string
	}{
		{"a notification's POST", init25().post(2, `{"jsonrpc":"2.0","method":"notifications/x"}`).status(2, 200).frame(chrono.In, "POST #2", nullErr),
			[]string{"no-response-to-notification HTTP-11 fail server", "no-response-to-notification RPC-15 fail server"}},
		{"a notification's POST refused with 400", init25().post(2, `{"jsonrpc":"2.0","method":"notifications/x"}`).status(2, 400).frame(chrono.In, "POST #2", nullErr), nil},
		{"a request's POST refused with 404", init25().post(2, call("1", `"t"`)).status(2, 404).frame(chrono.In, "POST #2", nullErr), nil},
		{"a request's POST accepted", init25().post(2, call("1", `"t"`)).status(2, 200).frame(chrono.In, "POST #2", nullErr),
			[]string{"one-response RPC-11 fail server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: "http"})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProgressOrderAcrossStreams: over Streamable HTTP progress is judged
// increasing (PRG-4) in the order one stream carried it: a server that
// sends a request's progress on its POST stream and on the GET stream
// (mcp-go does) has it read in an order that is not the order written.
func TestProgressOrderAcrossStreams(t *testing.T) {
	base := func() *history { return init25().post(1, call("1", `"t"`)) }
	for _, tc := range []struct {
		name string
		h    *history
		want []string
	}{
		{"2 on the POST stream after 3 on the GET stream", base().frame(chrono.In, "SSE GET #1", progress(`"t"`, 1)).
			frame(chrono.In, "SSE GET #1", progress(`"t"`, 3)).sse(1, progress(`"t"`, 2)).sse(1, result("1")), nil},
		{"1 after 3 on the GET stream, 2 between on the POST stream", base().frame(chrono.In, "SSE GET #1", progress(`"t"`, 3)).
			sse(1, progress(`"t"`, 2)).frame(chrono.In, "SSE GET #1", progress(`"t"`, 1)).sse(1, result("1")),
			[]string{"progress-increasing PRG-4 fail server"}},
		{"2 after 3 on the POST stream", base().sse(1, progress(`"t"`, 3)).sse(1, progress(`"t"`, 2)).sse(1, result("1")),
			[]string{"progress-increasing PRG-4 fail server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: "http"})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTaskProgressAcrossStreams: over Streamable HTTP a task's progress
// read after the task was seen terminal breaks PRG-11 only when it came on
// the stream that showed the task terminal: across two streams the order
// read is not the order written.
func TestTaskProgressAcrossStreams(t *testing.T) {
	base := func() *history {
		return init25().post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","task":{"ttl":60000},"_meta":{"progressToken":"tk"}}}`).
			sse(1, `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"T1","status":"working"}}}`).
			post(2, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T1"}}`).
			sse(2, `{"jsonrpc":"2.0","id":2,"result":{"taskId":"T1","ttl":60000,"status":"completed"}}`)
	}
	other := base().frame(chrono.In, "SSE GET #1", progress(`"tk"`, 1))
	if fs, _, _ := run(other, Options{Transport: "http"}); len(fs) != 0 {
		t.Errorf("progress on another stream: %v", brief(fs))
	}
	same := base().sse(2, progress(`"tk"`, 1))
	if got := brief(func() []Finding { fs, _, _ := run(same, Options{Transport: "http"}); return fs }()); len(got) != 1 || got[0] != "no-progress-after-end PRG-11 fail server" {
		t.Errorf("progress on the stream that showed the task terminal: %v", got)
	}
}

// TestTaskSightingsOrder: a task's sightings are ordered by their
// lastUpdatedAt (two HTTP streams are not read in the order they were
// written, and on one stream an answer's snapshot may be written after a
// newer status): a sighting read late but older than the terminal one is
// no change, a newer one with another status is, and so is a sighting
// newer than a terminal one read after it. Without lastUpdatedAt the
// order read decides. A tasks/list entry is a sighting too.
func TestTaskSightingsOrder(t *testing.T) {
	task := func(status, at string) string {
		return `{"taskId":"T","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:0` + at + `Z","ttl":600000}`
	}
	notif := func(status, at string) string {
		return `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + task(status, at) + `}`
	}
	created := func() *history {
		return init25().post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","task":{"ttl":600000}}}`).
			sse(1, `{"jsonrpc":"2.0","id":1,"result":{"task":`+task("working", "0")+`}}`)
	}
	on := func(h *history, ch, raw string) *history { return h.frame(chrono.In, ch, raw) }
	for _, tc := range []struct {
		name      string
		h         *history
		transport string
		want      []string
	}{
		{"a stale sighting read late", on(on(created(), "SSE GET #1", notif("completed", "2")), "SSE GET #2", notif("working", "1")), "http", nil},
		{"a newer sighting with another status", on(on(on(created(), "SSE GET #1", notif("completed", "2")), "SSE GET #2", notif("working", "1")), "SSE GET #2", notif("cancelled", "3")),
			"http", []string{"task-terminal-stable TSK-31 fail server"}},
		{"an older terminal sighting read after a newer one", on(on(created(), "SSE GET #1", notif("working", "3")), "SSE GET #2", notif("completed", "2")),
			"http", []string{"task-terminal-stable TSK-31 fail server"}},
		{"a stale sighting over stdio", on(on(created(), "stdout", notif("completed", "2")), "stdout", notif("working", "1")), "stdio", nil},
		{"without lastUpdatedAt, the order read", on(on(created(), "stdout", notif("completed", "2")), "stdout",
			`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T","status":"working"}}`),
			"stdio", []string{"task-terminal-stable TSK-31 fail server"}},
		{"a tasks/list entry", created().post(2, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T"}}`).sse(2, `{"jsonrpc":"2.0","id":2,"result":`+task("completed", "2")+`}`).
			post(3, `{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`).sse(3, `{"jsonrpc":"2.0","id":3,"result":{"tasks":[`+task("working", "3")+`]}}`),
			"http", []string{"task-terminal-stable TSK-31 fail server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: tc.transport})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings %v, want %v (%v)", got, tc.want, fs)
			}
		})
	}
}

// cut appends a server frame cut short as a recorder keeps a frame too
// large for it: its first keep bytes, with the summary of the whole.
func (h *history) cut(raw string, keep int) *history {
	h.s(raw)
	ev := &h.events[len(h.events)-1]
	ev.Size, ev.Raw, ev.Truncated = len(ev.Raw), ev.Raw[:keep], true
	return h
}

// TestTruncatedResponse: a response too large to keep whole still ends
// its request (a second answer is one too many, and nothing is left
// open), while a rule that reads the body of an answer cut short (the
// status of tasks/cancel) judges nothing.
func TestTruncatedResponse(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100) + `"}]}}`
	fs, open, _ := run(init25().c(call("1", `"t"`)).cut(big, 30).s(result("1")), Options{})
	if got := strings.Join(brief(fs), "\n"); got != "one-response RPC-8 fail server" || len(open) != 0 {
		t.Errorf("findings %q, open %v; want the whole result to be the first answer", got, open)
	}
	fs, open, _ = run(init25().c(call("1", `"t"`)).cut(big, 30), Options{})
	if len(fs) != 0 || len(open) != 0 {
		t.Errorf("findings %v, open %v; want a cut result to end its request", fs, open)
	}
	cancelled := init25().c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","task":{"ttl":60000}}}`).
		s(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"T1","status":"working"}}}`).
		c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`).
		cut(`{"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","ttl":60000,"status":"cancelled"}}`, 30)
	fs, _, _ = run(cancelled, Options{Sides: []Side{Server}})
	for _, f := range fs {
		if f.Rule == RuleTaskCancelResult {
			t.Errorf("a cut tasks/cancel answer was judged by a body never read: %+v", f)
		}
	}
}

// TestCancelHonouredToTheEnd: a cancelled request never answered passes
// the cancel rules when its session outlived the crossing window, and
// leaves them unjudged when the session ended within it.
func TestCancelHonouredToTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration
		want  verdict.Verdict
	}{
		{"outlived the window", 2 * DefaultWindow, verdict.Pass},
		{"ended within the window", MinWindow / 2, verdict.Skip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := init25().c(call("1", `"t"`)).s(progress(`"t"`, 1)).c(cancel("1")).wait(tc.after).c(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			_, open, m := run(h, Options{})
			for _, r := range m.Results(nil) {
				if (r.ID == "server/"+RuleCancelNoResponse || r.ID == "server/"+RuleCancelNoProgress) && r.Outcome.Verdict != tc.want {
					t.Errorf("%s: %s, want %s", r.ID, r.Outcome.Verdict, tc.want)
				}
			}
			if len(open) != 2 {
				t.Errorf("open %v; want the cancelled call and the ping listed", open)
			}
		})
	}
}

// TestSkipsThatCannotApply: a rule the conversation gave nothing to judge
// says why when it could not apply: a rule of a revision no session spoke
// applies to the other only, which a report's completeness does not count
// as a rule the conversation could have exercised; a rule of the revision
// spoken was not exercised.
func TestSkipsThatCannotApply(t *testing.T) {
	outcomes := func(h *history, opts Options) map[string]string {
		_, _, m := run(h, opts)
		out := map[string]string{}
		for _, r := range m.Results(nil) {
			out[r.ID] = string(r.Outcome.Verdict) + " " + r.Outcome.Summary
		}
		return out
	}
	modern := outcomes((&history{}).c(call2026("1", `"t"`)).s(result("1")), Options{})
	if got := modern["server/"+RuleTaskTimestamps]; got != "skip applies to 2025-11-25 only" {
		t.Errorf("a 2025-11-25 rule of a 2026-07-28 conversation: %q", got)
	}
	if got := modern["server/"+RuleLogLevel]; got != "skip not exercised: the conversation gave it nothing to judge" {
		t.Errorf("a rule of the revision spoken, with nothing to judge: %q", got)
	}
	if got := modern["client/"+RuleCancelInitialize]; got != "skip applies to 2025-11-25 only" {
		t.Errorf("a rule that cites nothing under 2026-07-28: %q", got)
	}
	old := outcomes(init25().c(call("1", `"t"`)).s(result("1")), Options{})
	if got := old["server/"+RuleTaskTerminalStable]; got != "skip not exercised: the conversation gave it nothing to judge" {
		t.Errorf("a 2025-11-25 rule of a 2025-11-25 conversation: %q", got)
	}
	if got := old["client/"+RuleTaskStillWorking]; got != "skip not exercised: the conversation gave it nothing to judge" {
		t.Errorf("an alert, which cites nothing anywhere: %q", got)
	}
}

// TestIdleSessionsEnded: past maxSessions the session idle longest is
// ended as EndSession would, and End still returns the open requests of
// every session; the sessions followed stay at the bound.
func TestIdleSessionsEnded(t *testing.T) {
	m := New(Options{Transport: "http", Revision: "2025-11-25"})
	const n = maxSessions + 10
	for i := range n {
		key := fmt.Sprint("s", i)
		for _, ev := range init25().c(call("1", `"t1"`)).events {
			m.Event(key, ev)
		}
	}
	if got := len(m.sessions); got > maxSessions {
		t.Errorf("%d sessions followed; want at most %d", got, maxSessions)
	}
	if _, ok := m.sessions["s0"]; ok {
		t.Error("the session idle longest is still followed")
	}
	open := m.End()
	if len(open) != n {
		t.Errorf("%d requests reported open; want %d, one per session", len(open), n)
	}
}

// TestFindingsKeptPerRule: a server that breaks a rule on every message
// does not grow the monitor's list of findings past keepPerRule for that
// rule; every finding is still emitted, and the rule's result counts them
// all.
func TestFindingsKeptPerRule(t *testing.T) {
	const n = 10 * keepPerRule
	h := init25()
	for i := range n {
		h.s(result(fmt.Sprint(1000 + i))) // a response for an ID never sent
	}
	emitted := 0
	fs, _, m := run(h, Options{Emit: func(Finding) { emitted++ }})
	if len(fs) != keepPerRule || emitted != n {
		t.Fatalf("%d findings kept and %d emitted for %d responses to IDs never sent; want %d kept, %d emitted", len(fs), emitted, n, keepPerRule, n)
	}
	if got := m.RuleSessions(Server, RuleOneResponse); got != 1 {
		t.Errorf("RuleSessions = %d for one session; want 1", got)
	}
	for _, r := range m.Results(nil) {
		if r.ID != "server/one-response" {
			continue
		}
		if want := fmt.Sprintf("%d more findings of this rule", n-1); r.Outcome.Verdict != verdict.Fail || !strings.Contains(r.Outcome.Summary, want) {
			t.Errorf("server/one-response: %s %q; want fail counting %q", r.Outcome.Verdict, r.Outcome.Summary, want)
		}
		return
	}
	t.Error("no result for server/one-response")
}

// TestGapUndecidesTokenReuse: request 1's progress token is reused by
// request 2 once 1 is over, but 1's response was among the frames the
// recording lost. Without the gap's mark, request 2's first progress is
// judged against request 1's (PRG-4, and PRG-2 for the reuse); after
// it, the rules are undecided, not failed.
func TestGapUndecidesTokenReuse(t *testing.T) {
	h := init25().c(call("1", `"t"`)).s(progress(`"t"`, 5))
	after := (&history{}).c(call("2", `"t"`)).s(progress(`"t"`, 1))
	judge := func(gap bool) (*Monitor, []Finding) {
		m := New(Options{Transport: "stdio"})
		for _, ev := range h.events {
			m.Event("s1", ev)
		}
		if gap {
			m.Gap()
		}
		for i, ev := range after.events {
			ev.Seq = uint64(len(h.events) + i + 1)
			m.Event("s1", ev)
		}
		m.End()
		return m, m.Findings()
	}
	_, whole := judge(false)
	if !slices.ContainsFunc(whole, func(f Finding) bool { return f.Rule == RuleProgressIncreasing }) {
		t.Fatalf("without a gap no progress-increasing finding: %v", whole)
	}
	m, gapped := judge(true)
	for _, f := range gapped {
		if f.Rule == RuleProgressIncreasing || f.Rule == RuleTokenUnique {
			t.Errorf("after a gap: %s", f)
		}
	}
	for _, r := range m.Results(nil) {
		if r.ID == "server/progress-increasing" && r.Outcome.Verdict != verdict.Info {
			t.Errorf("server/progress-increasing after a gap: %s %q; want info (undecided)", r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
}

// TestRuleSessionsCountsPastTheList: the sessions that made findings of
// a rule are all counted, past the findings the list keeps (check's
// passive rows name how many cases' chronologies show a rule broken).
func TestRuleSessionsCountsPastTheList(t *testing.T) {
	m := New(Options{Transport: "stdio"})
	const sessions = 2 * keepPerRule
	for i := range sessions {
		key := fmt.Sprint("case", i)
		for _, ev := range init25().s(result("999")).events {
			m.Event(key, ev)
		}
		m.EndSession(key)
	}
	if got := m.RuleSessions(Server, RuleOneResponse); got != sessions {
		t.Errorf("RuleSessions = %d; want %d", got, sessions)
	}
}
