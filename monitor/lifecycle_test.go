package monitor

import (
	"encoding/json"
	"github.com/mcpflight/mcpflight/chrono"
	"strings"
	"testing"
	"time"
)

// initWith opens a 2025-11-25 session whose server declares caps; with
// initialized, the client sends notifications/initialized.
func initWith(caps string, initialized bool) *history {
	h := (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).
		s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"s","version":"1"}}}`)
	if initialized {
		h.c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	return h
}

// taskServer is a 2025-11-25 session with a server that declares
// task-augmented tools/call and lists tool w with taskSupport support.
func taskServer(support string) *history {
	return initWith(`{"tasks":{"requests":{"tools":{"call":{}}}},"tools":{}}`, true).
		c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).
		s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"q","inputSchema":{"type":"object"}},{"name":"w","inputSchema":{"type":"object"},"execution":{"taskSupport":"` + support + `"}}]}}`)
}

// plainW is a tools/call of tool w without a task, as request 2.
const plainW = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"w","arguments":{}}}`

// setLevel is logging/setLevel of level, as request 3.
func setLevel(level string) string {
	return `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"` + level + `"}}`
}

// TestLifecycleRules: the handshake's and the utilities' rules of
// 2025-11-25 each break on a history that shows the violation, and a
// history of the same shape that conforms, or that the wire cannot
// decide, breaks nothing.
func TestLifecycleRules(t *testing.T) {
	ms := time.Millisecond
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	noCaps := `{}`
	for _, tc := range []struct {
		name      string
		h         *history
		transport string
		want      []string
	}{
		// PNG-1
		{"ping answered with an empty result", init25().c(ping).s(`{"jsonrpc":"2.0","id":5,"result":{}}`), "", nil},
		{"ping answered with _meta alone", init25().c(ping).s(`{"jsonrpc":"2.0","id":5,"result":{"_meta":{"x":1}}}`), "", nil},
		{"ping answered with an error", init25().c(ping).s(`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"broken"}}`), "",
			[]string{"ping-empty-result PNG-1 fail server"}},
		{"ping answered with members", init25().c(ping).s(`{"jsonrpc":"2.0","id":5,"result":{"status":"ok"}}`), "",
			[]string{"ping-empty-result PNG-1 fail server"}},
		{"the server's ping answered by the client with an error", init25().s(ping).c(`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"ignored"}}`), "",
			[]string{"ping-empty-result PNG-1 fail client"}},
		{"a cancelled ping answered with an error", init25().c(ping).c(cancel("5")).s(`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"gave up"}}`), "", nil},
		{"a ping whose POST was refused", init25().post(2, ping).status(2, 404).frame(chrono.In, "POST #2", `{"jsonrpc":"2.0","id":5,"error":{"code":-32001,"message":"session not found"}}`), "http", nil},
		{"a ping before initialize's answer, answered", (&history{}).c(ping).s(`{"jsonrpc":"2.0","id":5,"result":{}}`), "", nil},

		// LIF-4
		{"a call after notifications/initialized", init25().c(call("1", `"t"`)).s(result("1")), "", nil},
		{"a ping before notifications/initialized", initWith(noCaps, false).c(ping).s(`{"jsonrpc":"2.0","id":5,"result":{}}`).
			c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "", nil},
		{"a call without notifications/initialized (stdio)", initWith(noCaps, false).c(call("1", `"t"`)).s(result("1")).c(call("2", `"u"`)).s(result("2")), "",
			[]string{"initialized-before-requests LIF-4 fail client"}},
		{"a call before a late notifications/initialized (stdio)", initWith(noCaps, false).c(call("1", `"t"`)).c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`).s(result("1")), "",
			[]string{"initialized-before-requests LIF-4 fail client"}},
		{"a call beside notifications/initialized (HTTP)", initWith(noCaps, false).post(2, call("1", `"t"`)).wait(ms).post(3, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).
			sse(2, result("1")), "http", nil},
		{"a call long before notifications/initialized (HTTP)", initWith(noCaps, false).post(2, call("1", `"t"`)).sse(2, result("1")).wait(500*ms).
			post(3, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), "http",
			[]string{"initialized-before-requests LIF-4 fail client"}},
		{"a call and never notifications/initialized (HTTP)", initWith(noCaps, false).post(2, call("1", `"t"`)).sse(2, result("1")), "http",
			[]string{"initialized-before-requests LIF-4 fail client"}},
		{"a call after initialize was refused", (&history{}).c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).
			s(`{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"no"}}`).c(call("1", `"t"`)).s(result("1")), "", nil},

		// LOG-2
		{"a valid level accepted", init25().c(setLevel("notice")).s(`{"jsonrpc":"2.0","id":3,"result":{}}`), "", nil},
		{"a valid level refused as invalid", init25().c(setLevel("notice")).s(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid level"}}`), "",
			[]string{"log-level-accepted LOG-2 fail server"}},
		{"an invalid level refused as invalid", init25().c(setLevel("verbose")).s(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid level"}}`), "", nil},
		{"a valid level refused by a server without logging", init25().c(setLevel("notice")).s(`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no logging"}}`), "", nil},

		// TSK-12
		{"a required tool called without a task, refused", taskServer("required").c(plainW).s(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"needs a task"}}`), "", nil},
		{"a required tool called without a task, served", taskServer("required").c(plainW).s(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`), "",
			[]string{"task-required-refused TSK-12 fail server"}},
		{"an optional tool called without a task, served", taskServer("optional").c(plainW).s(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`), "", nil},
		{"a required tool, then listed optional", taskServer("required").c(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`).
			s(`{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"w","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}}`).
			c(plainW).s(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`), "", nil},
		{"a required tool after the list changed", taskServer("required").s(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`).
			c(plainW).s(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`), "", nil},
		{"a required tool of a server without task-augmented tools/call", initWith(`{"tools":{}}`, true).c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).
			s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"w","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}}`).
			c(plainW).s(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`), "", nil},
		{"a required tool called with a task", taskServer("required").c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"w","task":{"ttl":1000}}}`).
			s(`{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"T","status":"completed"}}}`), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: tc.transport})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(texts: %v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}

// TestEmptyResult: an object with no member but _meta is empty, spaced
// or not; anything else is not.
func TestEmptyResult(t *testing.T) {
	for raw, want := range map[string]bool{`{}`: true, "{ \t\r\n}": true, `{"_meta":{}}`: true, ` {}`: true,
		`{"a":1}`: false, `{"_meta":{},"x":null}`: false, `[]`: false, `null`: false, `{`: false, `{}}`: false, `{ x}`: false, ``: false} {
		if got := emptyResult(json.RawMessage(raw)); got != want {
			t.Errorf("emptyResult(%q) = %v, want %v", raw, got, want)
		}
	}
}
