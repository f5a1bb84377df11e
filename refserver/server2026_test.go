package refserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// TestDiscover: server/discover lists every version the server serves,
// its 2026 capabilities (the tasks extension, no legacy tasks capability,
// TSX-69) and its identity in _meta (LIF-42, LIF-51, RPC-56), for each
// era the server is started with.
func TestDiscover(t *testing.T) {
	tests := []struct {
		name      string
		protocols []string
		noTasks   bool
		versions  []string
		ext       bool
	}{
		{"both-revisions", nil, false, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}, true},
		{"2026-only", []string{spec.V20260728}, false, []string{"2026-07-28"}, true},
		{"no-tasks", nil, true, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient2026(newHarnessWith(t, Options{Protocols: tt.protocols, NoTasks: tt.noTasks}))
			var got struct {
				ResultType        string                     `json:"resultType"`
				SupportedVersions []string                   `json:"supportedVersions"`
				Capabilities      map[string]json.RawMessage `json:"capabilities"`
				Meta              map[string]json.RawMessage `json:"_meta"`
				TTL               *int                       `json:"ttlMs"`
				CacheScope        string                     `json:"cacheScope"`
			}
			c.result2026(mcp.MethodServerDiscover, nil, nil, &got)
			if got.ResultType != "complete" || got.TTL == nil || got.CacheScope != "public" {
				t.Errorf("resultType %q ttlMs %v cacheScope %q", got.ResultType, got.TTL, got.CacheScope)
			}
			if diff := cmp.Diff(tt.versions, got.SupportedVersions); diff != "" {
				t.Errorf("supportedVersions (-want +got):\n%s", diff)
			}
			if _, is2025 := got.Capabilities["tasks"]; is2025 {
				t.Error("the legacy tasks capability is advertised under 2026-07-28 (TSX-69)")
			}
			if has := strings.Contains(string(got.Capabilities["extensions"]), TasksExtension); has != tt.ext {
				t.Errorf("extensions %s, want the tasks extension %v", got.Capabilities["extensions"], tt.ext)
			}
			if !strings.Contains(string(got.Meta[mcp.MetaServerInfo]), `"name":"mcpflight-reference"`) {
				t.Errorf("serverInfo %s", got.Meta[mcp.MetaServerInfo])
			}
			schemaCheck(t, c.seenFrames(), c.methods)
		})
	}
}

// Test2026ResultsDecorated: every 2026-07-28 result carries resultType
// "complete" and the serverInfo (RPC-40, RPC-56), the control extension's
// and an ordinary tool's alike, and every frame keeps to the schema.
func Test2026ResultsDecorated(t *testing.T) {
	c := newClient2026(newHarness(t))
	id := c.id()
	c.send2026(id, mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a", "steps": 2, "gated": false}},
		meta2026(mcp.MetaProgressToken, "p"))
	call := c.waitResponse(id)
	for _, m := range []*jsonrpc.Message{
		call,
		c.call2026(mcp.MethodToolsList, nil, nil),
		c.call2026(mcp.MethodControlCounters, nil, nil),
		c.call2026(mcp.MethodControlAwait, map[string]any{"checkpoint": "a/end"}, nil),
	} {
		obj := resultObject(t, m)
		if str(obj["resultType"]) != "complete" || !strings.Contains(string(obj[mcp.MetaKey]), mcp.MetaServerInfo) {
			t.Errorf("result without resultType or serverInfo: %s", m.Raw)
		}
	}
	ps, _ := c.progressSeen()
	if len(ps) != 2 {
		t.Errorf("%d progress notifications, want 2", len(ps))
	}
	var tools struct {
		Tools []map[string]any `json:"tools"`
	}
	_ = json.Unmarshal(c.call2026(mcp.MethodToolsList, nil, nil).Result, &tools)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool["name"].(string))
		if _, ok := tool["execution"]; ok {
			t.Errorf("tool %s has execution under 2026-07-28", tool["name"])
		}
	}
	if diff := cmp.Diff([]string{ToolSlow, ToolEffect, ToolLog, ToolObserver, ToolTaskWorker}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	schemaCheck(t, c.seenFrames(), c.methods)
}

// TestEnvelopeErrors: a request without a required envelope field gets
// -32602 (RPC-52), an unknown revision -32022 with the supported versions
// and the requested one (LIF-40), an unknown log level -32602 and the
// request does not run (LOG-45), and the methods 2026-07-28 removed
// -32601 (PNG-40, TSX-65).
func TestEnvelopeErrors(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params map[string]any
		meta   map[string]any
		code   int
		data   string
	}{
		{"no protocol version", mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, nil), jsonrpc.CodeInvalidParams, ""},
		{"no capabilities", mcp.MethodToolsList, nil, meta2026(mcp.MetaClientCapabilities, nil), jsonrpc.CodeInvalidParams, ""},
		{"capabilities not an object", mcp.MethodToolsList, nil, meta2026(mcp.MetaClientCapabilities, "all"), jsonrpc.CodeInvalidParams, ""},
		{"version not a string", mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, 2026), jsonrpc.CodeInvalidParams, ""},
		{"bad client info", mcp.MethodToolsList, nil, meta2026(mcp.MetaClientInfo, map[string]any{"name": "x"}), jsonrpc.CodeInvalidParams, ""},
		{"unknown revision", mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, "1900-01-01"), mcp.CodeUnsupportedProtocolVersion,
			`{"requested":"1900-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]}`},
		{"2025-11-25 in the envelope", mcp.MethodServerDiscover, nil, meta2026(mcp.MetaProtocolVersion, "2025-11-25"), mcp.CodeUnsupportedProtocolVersion,
			`{"requested":"2025-11-25","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]}`},
		{"unknown log level", mcp.MethodToolsCall, map[string]any{"name": ToolLog, "arguments": map[string]any{"messages": []any{map[string]any{"level": "error"}}}},
			meta2026(mcp.MetaLogLevel, "verbose"), jsonrpc.CodeInvalidParams, ""},
		{"ping", mcp.MethodPing, nil, nil, jsonrpc.CodeMethodNotFound, `{"method":"ping"}`},
		{"logging/setLevel", mcp.MethodLoggingSetLevel, map[string]any{"level": "info"}, nil, jsonrpc.CodeMethodNotFound, `{"method":"logging/setLevel"}`},
		{"tasks/result", mcp.MethodTasksResult, map[string]any{"taskId": "x"}, meta2026(mcp.MetaClientCapabilities, tasksCaps()), jsonrpc.CodeMethodNotFound, `{"method":"tasks/result"}`},
		{"tasks/list", mcp.MethodTasksList, nil, meta2026(mcp.MetaClientCapabilities, tasksCaps()), jsonrpc.CodeMethodNotFound, `{"method":"tasks/list"}`},
		{"initialize with an envelope", mcp.MethodInitialize, nil, nil, jsonrpc.CodeInvalidParams, ""},
		{"unknown method", "resources/subscribe", nil, nil, jsonrpc.CodeMethodNotFound, `{"method":"resources/subscribe"}`},
		{"task_worker undeclared", mcp.MethodToolsCall, map[string]any{"name": ToolTaskWorker, "arguments": map[string]any{"key": "w"}}, nil,
			mcp.CodeMissingRequiredClientCapability, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`},
		{"tasks/get undeclared", mcp.MethodTasksGet, map[string]any{"taskId": "x"}, nil,
			mcp.CodeMissingRequiredClientCapability, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`},
		{"bad scope", mcp.MethodToolsList, nil, meta2026(MetaScope, ""), jsonrpc.CodeInvalidParams, ""},
	}
	c := newClient2026(newHarness(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := c.call2026(tt.method, tt.params, tt.meta)
			if tt.method == mcp.MethodInitialize {
				// On a dual-era server initialize is legacy whatever it
				// carries; without protocolVersion it is -32602.
				wantError(t, m, tt.code)
				return
			}
			wantError(t, m, tt.code)
			if tt.data != "" && string(m.Error.Data) != tt.data {
				t.Errorf("data %s, want %s", m.Error.Data, tt.data)
			}
		})
	}
	if n := len(c.counters2026(nil).Operations); n != 0 {
		t.Errorf("%d operations ran, want none: a rejected request does not run", n)
	}
	schemaCheck(t, c.seenFrames(), c.methods)
}

// TestBothRevisionsOneConnection: one connection serves a 2025-11-25 session
// (initialize, ping, logging/setLevel) and 2026-07-28 requests side by
// side; neither sees the other's state: the legacy session's log level
// does not reach a modern request, which logs only with its own logLevel
// (LOG-41, RPC-57).
func TestBothRevisionsOneConnection(t *testing.T) {
	c := newClient2026(newHarness(t))
	init := c.call(mcp.MethodInitialize, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})
	if !strings.Contains(string(init.Result), `"protocolVersion":"2025-11-25"`) || strings.Contains(string(init.Result), "resultType") {
		t.Fatalf("initialize: %s", init.Raw)
	}
	if m := c.call(mcp.MethodPing, nil); m.Kind != jsonrpc.KindResult || string(m.Result) != "{}" {
		t.Fatalf("legacy ping: %s", m.Raw)
	}
	c.result(mcp.MethodLoggingSetLevel, map[string]any{"level": "debug"}, nil)
	logCall := map[string]any{"name": ToolLog, "arguments": map[string]any{"messages": []any{
		map[string]any{"level": "debug", "data": "d"}, map[string]any{"level": "error", "data": "e"}}}}
	count := func(m *jsonrpc.Message) string {
		var r toolResult
		_ = json.Unmarshal(m.Result, &r)
		return r.Content[0].Text
	}
	if got := count(c.call(mcp.MethodToolsCall, logCall)); got != "sent 2 of 2 messages" {
		t.Errorf("legacy log: %s", got)
	}
	if got := count(c.call2026(mcp.MethodToolsCall, logCall, nil)); got != "sent 0 of 2 messages" {
		t.Errorf("modern log without logLevel: %s (LOG-41)", got)
	}
	if got := count(c.call2026(mcp.MethodToolsCall, logCall, meta2026(mcp.MetaLogLevel, "warning"))); got != "sent 1 of 2 messages" {
		t.Errorf("modern log at warning: %s (LOG-43)", got)
	}
	var levels []string
	for _, f := range c.seen {
		if f.msg != nil && f.msg.Method == mcp.NotificationMessage {
			var p struct {
				Level string `json:"level"`
			}
			_ = json.Unmarshal(f.msg.Params, &p)
			levels = append(levels, p.Level)
		}
	}
	if diff := cmp.Diff([]string{"debug", "error", "error"}, levels); diff != "" {
		t.Errorf("log levels sent (-want +got):\n%s", diff)
	}
	if m := c.call2026(mcp.MethodPing, nil, nil); m.Kind != jsonrpc.KindError || m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("modern ping after a legacy initialize: %s", m.Raw)
	}
	// The legacy session's counters and the default scope's are apart.
	c.call2026(mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "m", "steps": 1, "gated": false}}, nil)
	if ops := c.counters().Operations; len(ops) != 0 {
		t.Errorf("the legacy session sees modern operations: %v", ops)
	}
	if ops := c.counters2026(nil).Operations; len(ops) != 1 {
		t.Errorf("the modern scope has operations %v, want m", ops)
	}
}

// Test2026OnlyServer: a server without the legacy era answers
// initialize with -32022 naming its versions (LIF-49) and refuses a
// request without the envelope with -32602 (RPC-52); a legacy-only server
// knows no server/discover.
func Test2026OnlyServer(t *testing.T) {
	c := newClient2026(newHarnessWith(t, Options{Protocols: []string{spec.V20260728}}))
	m := c.call(mcp.MethodInitialize, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})
	wantError(t, m, mcp.CodeUnsupportedProtocolVersion)
	if string(m.Error.Data) != `{"requested":"2025-11-25","supported":["2026-07-28"]}` || !strings.Contains(m.Error.Message, "2026-07-28") {
		t.Errorf("initialize refused with %s", m.Raw)
	}
	wantError(t, c.call(mcp.MethodToolsList, nil), jsonrpc.CodeInvalidParams)
	wantError(t, c.call(mcp.MethodPing, nil), jsonrpc.CodeInvalidParams)
	if m := c.call2026(mcp.MethodToolsList, nil, nil); m.Kind != jsonrpc.KindResult {
		t.Errorf("tools/list: %s", m.Raw)
	}
	schemaCheck(t, c.seenFrames(), c.methods)

	client2025 := newClient2026(newHarnessWith(t, Options{Protocols: []string{spec.V20251125}}))
	wantError(t, client2025.call2026(mcp.MethodServerDiscover, nil, nil), jsonrpc.CodeMethodNotFound)
	if m := client2025.call2026(mcp.MethodPing, nil, nil); m.Kind != jsonrpc.KindResult || string(m.Result) != "{}" {
		t.Errorf("a legacy-only server ignores the envelope: ping %s", m.Raw)
	}
	if got := client2025.seen[len(client2025.seen)-1].raw; strings.Contains(string(got), "resultType") {
		t.Errorf("a legacy-only server decorated a result: %s", got)
	}

}

// TestStdio2026Cancel: over stdio a 2026-07-28 request is cancelled with
// notifications/cancelled, and the server sends nothing more for it: no
// response, no progress, no log message (CAN-53, CAN-54); its cleanup
// counter shows the cancellation. Both after the first progress and for a
// silent handler still at its first gate.
func TestStdio2026Cancel(t *testing.T) {
	for _, at := range []string{"start", "step/1"} {
		t.Run(at, func(t *testing.T) {
			c := newClient2026(newHarness(t))
			id, before := c.cancelSlow2026(at)
			cnt := c.counters2026(nil)
			op := cnt.Operations["a"]
			if op.State != "cancelled" || op.Releases != 1 || cnt.OperationsActive != 0 || cnt.ProgressTokensLive != 0 {
				t.Errorf("counters %+v", cnt)
			}
			for _, f := range c.seen[before:] {
				if f.msg != nil && (f.msg.Kind == jsonrpc.KindNotification || f.msg.ID == id) {
					t.Errorf("a frame for the cancelled request: %s (CAN-54)", f.raw)
				}
			}
			ps, _ := c.progressSeen()
			if want := map[string]int{"start": 0, "step/1": 1}[at]; len(ps) != want || op.ProgressSent != want {
				t.Errorf("%d progress notifications (%d counted), want %d", len(ps), op.ProgressSent, want)
			}
			schemaCheck(t, c.seenFrames(), c.methods)
		})
	}
	// The 2025-11-25 faults that write after a cancel break CAN-54 here.
	for _, fault := range []Fault{FaultRespondAfterCancel, FaultProgressAfterCancel, FaultLogAfterCancel} {
		t.Run(string(fault), func(t *testing.T) {
			c := newClient2026(newHarness(t, fault))
			id, before := c.cancelSlow2026("step/1")
			n := 0
			for _, f := range c.seen[before:] {
				if f.msg != nil && (f.msg.Kind == jsonrpc.KindNotification || f.msg.ID == id) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d frames for the cancelled request, want the fault's one", n)
			}
		})
	}
}

// cancelSlow2026 starts a gated slow call under 2026-07-28 with a token and
// step logs at info, cancels it at checkpoint at, and waits for its end.
// It returns its ID and the index of the first frame after the cancel.
func (c *client2026) cancelSlow2026(at string) (jsonrpc.ID, int) {
	c.t.Helper()
	id := c.id()
	c.send2026(id, mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a", "steps": 3, "logSteps": true}},
		meta2026(mcp.MetaProgressToken, "p", mcp.MetaLogLevel, "info"))
	if at == "step/1" {
		c.release2026("a/start", nil)
	}
	c.await2026("a/"+at, nil)
	before := len(c.seen)
	c.cancelReq(id)
	c.release2026("a/step/1", nil)
	c.release2026("a/step/2", nil)
	if end := c.await2026("a/end", nil); end.Outcome != mcp.OutcomeCancelled {
		c.t.Fatalf("a/end %+v", end)
	}
	return id, before
}
