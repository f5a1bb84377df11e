package monitor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// listen is subscriptions/listen, request id, asking for filter.
func listen(id int, filter string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,"notifications":%s}}`, id, meta2026Tasks, filter)
}

// subMeta is the _meta of a message of subscription id ("" for an empty
// _meta).
func subMeta(id string) string {
	if id == "" {
		return `"_meta":{}`
	}
	return `"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}`
}

// acked is the acknowledgement of subscription id (subMeta).
func acked(id, filter string) string {
	return `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{` + subMeta(id) + `,"notifications":` + filter + `}}`
}

// tasksNotice is notifications/tasks for task tid on subscription id.
func tasksNotice(id, tid string) string {
	return `{"jsonrpc":"2.0","method":"notifications/tasks","params":{` + subMeta(id) + `,"taskId":"` + tid + `","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null}}`
}

// listenResult is the result that ends subscription id.
func listenResult(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete",` + subMeta(id) + `}}`
}

// logAt is notifications/message at level, with _meta meta ("" for none).
func logAt(level, meta string) string {
	if meta != "" {
		meta += ","
	}
	return `{"jsonrpc":"2.0","method":"notifications/message","params":{` + meta + `"level":"` + level + `","data":"x"}}`
}

// call2026At is a 2026-07-28 tools/call, request id, asking for log
// messages at level ("" for none).
func call2026At(id int, level string) string {
	meta := meta2026Plain
	if level != "" {
		meta = strings.Replace(meta2026Plain, `}}`, `},"io.modelcontextprotocol/logLevel":"`+level+`"}`, 1)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow",%s}}`, id, meta)
}

// TestSubscriptionRules: a subscription's acknowledgement comes first
// (SUB-2), its notifications carry its ID (SUB-5) and are what it asked
// for (SUB-1), no log message comes on it (LOG-44), and a subscription
// the server ends gets its result before its stream closes (SUB-7); each
// rule breaks on a history that shows it (a log message naming a
// subscription the client has cancelled is still on it), and a history
// of the same shape that conforms breaks nothing.
func TestSubscriptionRules(t *testing.T) {
	tasksFilter := `{"taskIds":["T1"]}`
	for _, tc := range []struct {
		name      string
		h         *history
		transport string
		want      []string
	}{
		// SUB-2
		{"a notification before the acknowledgement", (&history{}).c(listen(2, tasksFilter)).s(tasksNotice("2", "T1")).s(acked("2", tasksFilter)).s(listenResult("2")),
			"stdio", []string{"listen-acknowledged-first SUB-2 fail server"}},
		{"a subscription ended without an acknowledgement", (&history{}).c(listen(2, tasksFilter)).s(listenResult("2")),
			"stdio", []string{"listen-acknowledged-first SUB-2 fail server"}},
		{"acknowledged, notified, ended", (&history{}).c(listen(2, tasksFilter)).s(acked("2", tasksFilter)).s(tasksNotice("2", "T1")).s(listenResult("2")), "stdio", nil},
		{"a subscription refused", (&history{}).c(listen(2, tasksFilter)).s(`{"jsonrpc":"2.0","id":2,"error":{"code":-32021,"message":"declare tasks"}}`), "stdio", nil},
		{"another subscription's message before this one's acknowledgement", (&history{}).c(listen(2, tasksFilter)).c(listen(3, tasksFilter)).
			s(acked("3", tasksFilter)).s(tasksNotice("3", "T1")).s(acked("2", tasksFilter)).s(listenResult("2")).s(listenResult("3")), "stdio", nil},
		{"the server's notifications/cancelled ends an unacknowledged one", (&history{}).c(listen(2, tasksFilter)).s(cancel("2")),
			"stdio", []string{"listen-acknowledged-first SUB-2 fail server"}},
		// SUB-5
		{"an acknowledgement without the subscription ID", (&history{}).c(listen(2, tasksFilter)).s(acked("", tasksFilter)).s(listenResult("2")),
			"stdio", []string{"listen-subscription-id SUB-5 fail server"}},
		{"a notification on the subscription's stream without its ID", (&history{}).post(2, listen(2, tasksFilter)).sse(2, acked("2", tasksFilter)).
			sse(2, tasksNotice("", "T1")).sse(2, listenResult("2")), "http", []string{"listen-subscription-id SUB-5 fail server"}},
		{"notifications on the subscription's stream with its ID", (&history{}).post(2, listen(2, tasksFilter)).sse(2, acked("2", tasksFilter)).
			sse(2, tasksNotice("2", "T1")).sse(2, listenResult("2")), "http", nil},
		// SUB-1
		{"a task's status on a subscription that asked for tool list changes", (&history{}).c(listen(2, `{"toolsListChanged":true}`)).
			s(acked("2", `{"toolsListChanged":true}`)).s(tasksNotice("2", "T1")).s(listenResult("2")),
			"stdio", []string{"listen-only-requested SUB-1 fail server"}},
		{"a task's status on a subscription that asked for another task", (&history{}).c(listen(2, `{"taskIds":["T9"]}`)).
			s(acked("2", `{"taskIds":["T9"]}`)).s(tasksNotice("2", "T1")).s(listenResult("2")),
			"stdio", []string{"listen-only-requested SUB-1 fail server"}},
		{"a tool list change on a subscription that asked for it", (&history{}).c(listen(2, `{"toolsListChanged":true}`)).s(acked("2", `{"toolsListChanged":true}`)).
			s(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + subMeta("2") + `}}`).s(listenResult("2")), "stdio", nil},
		// LOG-44
		{"a log message on a subscription (stdio)", (&history{}).c(listen(2, tasksFilter)).s(acked("2", tasksFilter)).s(logAt("info", subMeta("2"))).s(listenResult("2")),
			"stdio", []string{"log-level LOG-44 fail server"}},
		{"a log message on a subscription the client just cancelled (stdio)", (&history{}).c(strings.Replace(listen(2, tasksFilter), `"io.modelcontextprotocol/clientCapabilities"`, `"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/clientCapabilities"`, 1)).
			s(acked("2", tasksFilter)).c(cancel("2")).s(logAt("info", subMeta("2"))),
			"stdio", []string{"log-level LOG-44 fail server"}},
		{"a log message on a subscription's stream", (&history{}).post(2, strings.Replace(listen(2, tasksFilter), `"io.modelcontextprotocol/clientCapabilities"`, `"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/clientCapabilities"`, 1)).
			sse(2, acked("2", tasksFilter)).sse(2, logAt("info", "")).sse(2, listenResult("2")),
			"http", []string{"log-level LOG-44 fail server"}},
		// SUB-7
		{"the server closes a subscription's stream without its result", (&history{}).post(2, listen(2, tasksFilter)).sse(2, acked("2", tasksFilter)).
			note("SSE POST #2", "stream ended"), "http", []string{"listen-ended-with-result SUB-7 warn server"}},
		{"watch's record of it", (&history{}).post(2, listen(2, tasksFilter)).sse(2, acked("2", tasksFilter)).
			note("SSE POST #2", "the server ended the response stream of request 2 before its response"), "http", []string{"listen-ended-with-result SUB-7 warn server"}},
		{"the server ends it with its result", (&history{}).post(2, listen(2, tasksFilter)).sse(2, acked("2", tasksFilter)).sse(2, listenResult("2")).
			note("SSE POST #2", "stream ended"), "http", nil},
		{"the client closes it", (&history{}).post(2, listen(2, tasksFilter)).sse(2, acked("2", tasksFilter)).harness(chrono.TextStreamClosed+"2: the client closed it").
			note("SSE POST #2", "stream ended"), "http", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: tc.transport, Sides: []Side{Server}})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}

// note appends a recorder's note about channel (how a stream ended).
func (h *history) note(channel, text string) *history {
	h.events = append(h.events, chrono.Event{Seq: uint64(len(h.events) + 1), Offset: h.at, Dir: chrono.Harness, Kind: chrono.KindNote, Channel: channel, Text: text})
	return h
}

// TestLogRules2026: a log message below the level of every request that
// asked for log messages breaks LOG-43 over stdio as over Streamable HTTP
// (a warn: LOG-43 is a MAY that grants only messages at or above the
// level); one a request in flight asked for does not; and a log message
// for a cancelled request beyond the crossing window breaks the cancel
// (CAN-54 over stdio under 2026-07-28; CAN-8 over Streamable HTTP under
// 2025-11-25), within it may have crossed the cancel, and under
// 2025-11-25 over stdio names no request.
func TestLogRules2026(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		h         *history
		transport string
		want      []string
	}{
		{"below the only level asked for (stdio)", (&history{}).c(call2026At(1, "warning")).s(logAt("debug", "")).s(result("1")),
			"stdio", []string{"log-level LOG-43 warn server"}},
		{"at the level asked for (stdio)", (&history{}).c(call2026At(1, "warning")).s(logAt("error", "")).s(result("1")), "stdio", nil},
		{"below one request's level, at another's", (&history{}).c(call2026At(1, "warning")).c(call2026At(2, "debug")).s(logAt("info", "")).s(result("1")).s(result("2")), "stdio", nil},
		{"below the level asked for (http)", (&history{}).post(1, call2026At(1, "warning")).sse(1, logAt("debug", "")).sse(1, result("1")),
			"http", []string{"log-level LOG-43 warn server"}},
		{"a log message long after the cancel (stdio)", (&history{}).c(call2026At(1, "debug")).s(logAt("info", "")).c(cancel("1")).wait(500 * ms).s(logAt("info", "")),
			"stdio", []string{"cancel-no-log CAN-54 fail server"}},
		{"a log message crossing the cancel (stdio)", (&history{}).c(call2026At(1, "debug")).s(logAt("info", "")).c(cancel("1")).wait(ms).s(logAt("info", "")), "stdio", nil},
		{"a log message long after the cancel (2025-11-25 http)", init25().post(2, call("1", `"t"`)).sse(2, logAt("info", "")).post(3, cancel("1")).wait(500*ms).sse(2, logAt("info", "")),
			"http", []string{"cancel-no-log CAN-8 warn server"}},
		{"a log message long after a cancel (2025-11-25 stdio)", init25().c(call("1", `"t"`)).s(logAt("info", "")).c(cancel("1")).wait(500 * ms).s(logAt("info", "")), "stdio", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: tc.transport, Sides: []Side{Server}})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}
