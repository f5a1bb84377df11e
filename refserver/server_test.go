package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

func TestInitializeEchoesSupportedVersions(t *testing.T) {
	for _, tc := range []struct{ asked, want string }{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"1900-01-01", "2025-11-25"}, // LIF-10, LIF-11
	} {
		t.Run(tc.asked, func(t *testing.T) {
			h := newHarness(t)
			var got map[string]any
			h.result("initialize", map[string]any{
				"protocolVersion": tc.asked,
				"capabilities":    map[string]any{},
				"clientInfo":      map[string]any{"name": "t", "version": "1"},
			}, &got)
			want := map[string]any{
				"protocolVersion": tc.want,
				"capabilities": map[string]any{
					"tools":   map[string]any{},
					"logging": map[string]any{},
					"tasks": map[string]any{
						"list":     map[string]any{},
						"cancel":   map[string]any{},
						"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
					},
					"experimental": map[string]any{"io.mcpflight/control": map[string]any{"version": float64(1)}},
				},
				"serverInfo": map[string]any{"name": "mcpflight-reference", "version": "test"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("initialize result (-want +got):\n%s", diff)
			}
			h.notify("notifications/initialized", nil)
			h.result("ping", nil, nil)
			if err := h.finish(); err != nil {
				t.Fatalf("Serve: %v", err)
			}
		})
	}
}

func TestInitializeBadParams(t *testing.T) {
	h := newHarness(t)
	wantError(t, h.call("initialize", map[string]any{"protocolVersion": 2025}), jsonrpc.CodeInvalidParams)
	wantError(t, h.call("initialize", nil), jsonrpc.CodeInvalidParams)
}

func TestPing(t *testing.T) {
	h := newHarness(t)
	// Before initialize: served (PNG-1 allows it; the server is lenient).
	for _, id := range []jsonrpc.ID{jsonrpc.IntID(0), jsonrpc.StringID("0"), jsonrpc.IntID(-1), jsonrpc.StringID("")} {
		h.request(id, "ping", nil)
		m := h.waitResponse(id)
		if m.Kind != jsonrpc.KindResult || string(m.Result) != "{}" {
			t.Errorf("ping %s: got %s, want an empty result", id, m.Raw)
		}
	}
	wantError(t, h.call("ping", []int{1}), jsonrpc.CodeInvalidParams)
}

func TestToolsList(t *testing.T) {
	h := newHarness(t)
	var got struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	h.result("tools/list", nil, &got)
	var names []string
	for _, tool := range got.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("tool %s: description %q, inputSchema %v", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	if diff := cmp.Diff([]string{"slow", "effect", "log", "observer", "task_worker"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestMalformedInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name string
		line string
		code int
		id   jsonrpc.ID // absent: null
	}{
		{"parse", string(jsonrpc.Malformed(jsonrpc.ClassParse)), jsonrpc.CodeParseError, jsonrpc.ID{}},
		{"utf8", string(jsonrpc.Malformed(jsonrpc.ClassInvalidUTF8)), jsonrpc.CodeParseError, jsonrpc.ID{}},
		{"not-object", string(jsonrpc.Malformed(jsonrpc.ClassNotObject)), jsonrpc.CodeInvalidRequest, jsonrpc.ID{}},
		{"batch", string(jsonrpc.Malformed(jsonrpc.ClassBatch)), jsonrpc.CodeInvalidRequest, jsonrpc.ID{}},
		{"null-id", string(jsonrpc.Malformed(jsonrpc.ClassInvalidID)), jsonrpc.CodeInvalidRequest, jsonrpc.ID{}},
		{"float-id", `{"jsonrpc":"2.0","method":"ping","id":1.5}`, jsonrpc.CodeInvalidRequest, jsonrpc.ID{}},
		{"empty", "", jsonrpc.CodeParseError, jsonrpc.ID{}},
		{"deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), jsonrpc.CodeParseError, jsonrpc.ID{}}, // over encoding/json's nesting limit
		{"huge number", `{"jsonrpc":"2.0","method":"ping","id":1e999}`, jsonrpc.CodeInvalidRequest, jsonrpc.ID{}},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, jsonrpc.CodeInvalidRequest, jsonrpc.ID{}},
		// The id of a malformed request is sent back when it can be
		// read (RPC-11).
		{"version", string(jsonrpc.Malformed(jsonrpc.ClassWrongVersion)), jsonrpc.CodeInvalidRequest, jsonrpc.IntID(1)},
		{"no version", `{"method":"ping","id":"v"}`, jsonrpc.CodeInvalidRequest, jsonrpc.StringID("v")},
		{"method not a string", `{"jsonrpc":"2.0","method":7,"id":8}`, jsonrpc.CodeInvalidRequest, jsonrpc.IntID(8)},
		{"ambiguous", string(jsonrpc.Malformed(jsonrpc.ClassAmbiguous)), jsonrpc.CodeInvalidRequest, jsonrpc.IntID(1)},
	} {
		// Malformed frames are answered before the next frame is read,
		// so the answer is the very next frame.
		h.send(tc.line)
		f, _ := h.next()
		if f.msg == nil || f.msg.Kind != jsonrpc.KindError || f.msg.NullID == tc.id.IsValid() || f.msg.ID != tc.id || f.msg.Error.Code != tc.code {
			t.Errorf("%s: got %.200s, want error %d with id %s", tc.name, f.raw, tc.code, tc.id)
		}
	}
	// Deep nesting inside params is not the server's business: a ping
	// with deep params is answered.
	h.send(`{"jsonrpc":"2.0","method":"ping","id":9,"params":{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`)
	if m := h.waitResponse(jsonrpc.IntID(9)); m.Kind != jsonrpc.KindResult {
		t.Errorf("ping with deep params: got %s", m.Raw)
	}
	// Notifications and stray responses get no answer (RPC-15): the next
	// frame is the ping's.
	h.send(`{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}`)
	h.send(`{"jsonrpc":"2.0","method":"ping"}`) // a request method without id is a notification
	h.send(`{"jsonrpc":"2.0","method":"tools/list","params":[]}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
	h.send(`{"jsonrpc":"2.0","id":5,"result":{}}`)
	h.send(`{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}`)
	h.request(jsonrpc.IntID(1), "ping", nil)
	if f, _ := h.next(); f.msg == nil || f.msg.ID != jsonrpc.IntID(1) {
		t.Errorf("after notifications: got %s, want the ping response", f.raw)
	}
	wantError(t, h.call("no/such/method", nil), jsonrpc.CodeMethodNotFound)
	wantError(t, h.call("tools/list", []any{}), jsonrpc.CodeInvalidParams)
	wantError(t, h.call("tools/list", "x"), jsonrpc.CodeInvalidParams)
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestFrameTooLarge(t *testing.T) {
	h := newHarness(t)
	h.send(`{"jsonrpc":"2.0","method":"ping","id":1,"params":{"pad":"` + strings.Repeat("x", MaxFrame) + `"}}`)
	f, _ := h.next()
	if f.msg == nil || f.msg.Kind != jsonrpc.KindError || !f.msg.NullID || f.msg.Error.Code != jsonrpc.CodeParseError {
		t.Errorf("got %.200s, want error -32700 with id null", f.raw)
	}
	h.result("ping", nil, nil)
}

func TestSlowWithoutTokenSendsNoProgress(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.IntID(1)
	h.slow(id, nil, map[string]any{"key": "k", "gated": false})
	m := h.waitResponse(id)
	want := `{"content":[{"type":"text","text":"done"}],"isError":false}`
	if m.Kind != jsonrpc.KindResult || string(m.Result) != want {
		t.Errorf("got %s, want result %s", m.Raw, want)
	}
	end := h.await("k/end")
	if diff := cmp.Diff(mcp.ControlReached{Checkpoint: "k/end", RequestID: id, Outcome: mcp.OutcomeCompleted}, end, idEq()); diff != "" {
		t.Errorf("await (-want +got):\n%s", diff)
	}
	if ps, _ := h.progressSeen(); len(ps) != 0 {
		t.Errorf("progress without a token: %+v", ps)
	}
}

func TestSlowProgressEchoesTokenExactly(t *testing.T) {
	for _, token := range []string{`"tok"`, `7`, `0`, `"0"`, `-3`, `"7"`} {
		t.Run(token, func(t *testing.T) {
			h := newHarness(t)
			id := jsonrpc.StringID("call-" + token)
			h.slow(id, json.RawMessage(token), map[string]any{"key": "k", "gated": false, "unit": 0.5})
			h.waitResponse(id)
			h.await("k/end") // every frame of the operation is in
			ps, _ := h.progressSeen()
			if len(ps) != 3 {
				t.Fatalf("got %d progress notifications, want 3:\n%s", len(ps), h.dump())
			}
			for i, p := range ps {
				if string(p.Token) != token {
					t.Errorf("progress %d token %s, want %s exactly", i, p.Token, token)
				}
				if want := 0.5 * float64(i+1); p.Progress != want {
					t.Errorf("progress %d = %v, want %v", i, p.Progress, want)
				}
				if p.Total == nil || *p.Total != 1.5 {
					t.Errorf("progress %d total %v, want 1.5", i, p.Total)
				}
				if want := "step " + string(rune('1'+i)) + " of 3"; p.Message != want {
					t.Errorf("progress %d message %q, want %q", i, p.Message, want)
				}
			}
			if ids := h.responsesTo(id); len(ids) != 1 {
				t.Errorf("%d responses, want 1", len(ids))
			}
			c := h.counters()
			if c.ProgressTokensLive != 0 || c.OperationsCompleted != 1 || c.Operations["k"].ProgressSent != 3 {
				t.Errorf("counters %+v", c)
			}
		})
	}
}

func TestSlowNoTotal(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.IntID(1)
	h.slow(id, json.RawMessage(`"t"`), map[string]any{"key": "k", "gated": false, "steps": 2, "noTotal": true})
	h.waitResponse(id)
	ps, at := h.progressSeen()
	if len(ps) != 2 || ps[0].Total != nil || ps[1].Progress <= ps[0].Progress {
		t.Fatalf("progress %+v", ps)
	}
	if at[1] > h.indexOfResponse(id) {
		t.Errorf("progress after the response")
	}
}

func TestGatedSlowFollowsCheckpoints(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.IntID(1)
	h.slow(id, json.RawMessage(`"g"`), map[string]any{"key": "k", "steps": 2})
	if got := h.await("k/start"); got.RequestID != id || got.Outcome != "" {
		t.Errorf("await k/start: %+v", got)
	}
	if ps, _ := h.progressSeen(); len(ps) != 0 {
		t.Fatalf("progress before the start gate opened: %+v", ps)
	}
	c := h.counters()
	if c.OperationsActive != 1 || c.ProgressTokensLive != 1 || c.Operations["k"].State != "running" {
		t.Errorf("counters while running: %+v", c)
	}
	h.release("k/start")
	h.await("k/step/1")
	if ps, _ := h.progressSeen(); len(ps) != 1 || ps[0].Progress != 1 {
		t.Fatalf("after k/step/1: progress %+v, want exactly [1]", ps)
	}
	h.release("k/step/1")
	h.await("k/step/2")
	if h.indexOfResponse(id) >= 0 {
		t.Fatalf("response before the last gate opened")
	}
	h.release("k/step/2")
	end := h.await("k/end")
	if end.Outcome != mcp.OutcomeCompleted {
		t.Errorf("k/end outcome %q", end.Outcome)
	}
	// KEY/end is reached after the last frame: the response is already in.
	if h.indexOfResponse(id) < 0 {
		t.Fatalf("k/end reached before the response was written")
	}
	want := mcp.ControlCounters{
		OperationsStarted: 1, OperationsCompleted: 1, ResourcesReleased: 1,
		Operations: map[string]mcp.ControlOperation{"k": {RequestID: id, State: "completed", Releases: 1, ProgressSent: 2}},
	}
	if diff := cmp.Diff(want, h.counters(), idEq()); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
}

func TestCancelMidWork(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.IntID(1)
	h.slow(id, json.RawMessage(`"c"`), map[string]any{"key": "k", "steps": 3})
	h.release("k/start")
	h.await("k/step/1")
	h.cancelReq(id)
	end := h.await("k/end")
	if diff := cmp.Diff(mcp.ControlReached{Checkpoint: "k/end", RequestID: id, Outcome: mcp.OutcomeCancelled}, end, idEq()); diff != "" {
		t.Errorf("await k/end (-want +got):\n%s", diff)
	}
	want := mcp.ControlCounters{
		OperationsStarted: 1, OperationsCancelled: 1, ResourcesReleased: 1,
		Operations: map[string]mcp.ControlOperation{"k": {RequestID: id, State: "cancelled", Releases: 1, ProgressSent: 1}},
	}
	if diff := cmp.Diff(want, h.counters(), idEq()); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
	// Opening the gates of a cancelled operation changes nothing.
	h.release("k/step/1")
	h.release("k/step/2")
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if at := h.responsesTo(id); len(at) != 0 {
		t.Errorf("cancelled request answered: %s", h.seen[at[0]].raw)
	}
	if ps, _ := h.progressSeen(); len(ps) != 1 {
		t.Errorf("progress after cancel: %+v", ps)
	}
	h.stderr.wait(t, "cancel of request 1 (operation \"k\") accepted")
}

func TestCancelBeforeStart(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.StringID("a")
	h.slow(id, json.RawMessage(`1`), map[string]any{"key": "k"})
	// No await: the operation is registered before the next frame is
	// read, so the cancel right behind the call always finds it.
	h.cancelReq(id)
	if end := h.await("k/end"); end.Outcome != mcp.OutcomeCancelled {
		t.Fatalf("k/end outcome %q, want cancelled", end.Outcome)
	}
	c := h.counters()
	if c.OperationsActive != 0 || c.ResourcesReleased != 1 || c.ProgressTokensLive != 0 {
		t.Errorf("counters %+v", c)
	}
	if err := h.finish(); err != nil {
		t.Fatal(err)
	}
	if ps, _ := h.progressSeen(); len(ps) != 0 || len(h.responsesTo(id)) != 0 {
		t.Errorf("output for a request cancelled at its start:\n%s", h.dump())
	}
}

func TestCancelledTokenCanBeReused(t *testing.T) {
	h := newHarness(t)
	h.slow(jsonrpc.IntID(1), json.RawMessage(`"t"`), map[string]any{"key": "a"})
	h.cancelReq(jsonrpc.IntID(1))
	// No wait for a/end: the token dies with the accepted cancel.
	h.slow(jsonrpc.IntID(2), json.RawMessage(`"t"`), map[string]any{"key": "b", "gated": false})
	if m := h.waitResponse(jsonrpc.IntID(2)); m.Kind != jsonrpc.KindResult {
		t.Fatalf("reusing the token of a cancelled request: %s", m.Raw)
	}
}

func TestCancelForFutureIDIsIgnored(t *testing.T) {
	h := newHarness(t)
	h.cancelReq(jsonrpc.IntID(77))
	h.slow(jsonrpc.IntID(77), nil, map[string]any{"key": "k", "gated": false})
	if m := h.waitResponse(jsonrpc.IntID(77)); m.Kind != jsonrpc.KindResult {
		t.Fatalf("got %s", m.Raw)
	}
}

func TestInvalidCancelsAreIgnored(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.IntID(5)
	h.slow(id, nil, map[string]any{"key": "k", "steps": 1})
	h.await("k/start")
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[5]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"no id"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5.0}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5.5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"id":5}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[5]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"5"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999,"extra":true,"_meta":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"unknown","reason":7}}`,
	} {
		h.send(line)
	}
	h.request(jsonrpc.IntID(6), "ping", nil)
	if f, _ := h.next(); f.msg == nil || f.msg.ID != jsonrpc.IntID(6) {
		t.Fatalf("after invalid cancels: got %s, want the ping response", f.raw)
	}
	c := h.counters()
	if c.OperationsCancelled != 0 || c.Operations["k"].State != "running" {
		t.Fatalf("an invalid cancel hit the operation: %+v", c)
	}
	h.release("k/start")
	h.release("k/step/1")
	if m := h.waitResponse(id); m.Kind != jsonrpc.KindResult {
		t.Fatalf("got %s", m.Raw)
	}
	if err := h.finish(); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateAndLateCancelsAreIgnored(t *testing.T) {
	h := newHarness(t)
	h.slow(jsonrpc.IntID(1), nil, map[string]any{"key": "a"})
	h.slow(jsonrpc.IntID(2), nil, map[string]any{"key": "b", "gated": false})
	h.waitResponse(jsonrpc.IntID(2))
	h.cancelReq(jsonrpc.IntID(1))
	h.cancelReq(jsonrpc.IntID(1)) // duplicate
	h.cancelReq(jsonrpc.IntID(2)) // already completed
	h.await("a/end")
	want := mcp.ControlCounters{
		OperationsStarted: 2, OperationsCompleted: 1, OperationsCancelled: 1, ResourcesReleased: 2,
		Operations: map[string]mcp.ControlOperation{
			"a": {RequestID: jsonrpc.IntID(1), State: "cancelled", Releases: 1},
			"b": {RequestID: jsonrpc.IntID(2), State: "completed", Releases: 1},
		},
	}
	if diff := cmp.Diff(want, h.counters(), idEq()); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
}

func TestStringAndIntegerIDsAreKeptApart(t *testing.T) {
	h := newHarness(t)
	h.slow(jsonrpc.IntID(5), nil, map[string]any{"key": "int", "steps": 0})
	h.slow(jsonrpc.StringID("5"), nil, map[string]any{"key": "str", "steps": 0})
	h.await("int/start")
	h.await("str/start")
	h.cancelReq(jsonrpc.StringID("5"))
	if end := h.await("str/end"); end.Outcome != mcp.OutcomeCancelled || end.RequestID != jsonrpc.StringID("5") {
		t.Fatalf("str/end: %+v", end)
	}
	h.release("int/start")
	m := h.waitResponse(jsonrpc.IntID(5))
	if m.Kind != jsonrpc.KindResult || !strings.HasPrefix(string(m.Raw), `{"jsonrpc":"2.0","id":5,`) {
		t.Fatalf("response to integer 5: %s", m.Raw)
	}
	c := h.counters()
	if c.Operations["int"].State != "completed" || c.Operations["str"].State != "cancelled" {
		t.Errorf("counters %+v", c)
	}
	raw := mustMarshal(t, c.Operations["str"].RequestID)
	if raw != `"5"` {
		t.Errorf("counters requestId of str: %s", raw)
	}
}

func TestAwaitAlreadyReached(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.IntID(9)
	h.slow(id, nil, map[string]any{"key": "k", "gated": false, "steps": 1})
	h.waitResponse(id)
	h.await("k/end")
	for _, cp := range []string{"k/start", "k/step/1", "k/end"} {
		if got := h.await(cp); got.RequestID != id || got.Checkpoint != cp {
			t.Errorf("await %s: %+v", cp, got)
		}
	}
}

func TestPreRelease(t *testing.T) {
	h := newHarness(t)
	h.release("k/start")
	h.release("k/step/1")
	h.release("k/step/1") // idempotent
	id := jsonrpc.IntID(1)
	h.slow(id, nil, map[string]any{"key": "k", "steps": 1})
	if m := h.waitResponse(id); m.Kind != jsonrpc.KindResult {
		t.Fatalf("got %s", m.Raw)
	}
	h.stderr.wait(t, "checkpoint k/start released in advance")
}

func TestControlBadParams(t *testing.T) {
	h := newHarness(t)
	wantError(t, h.call(mcp.MethodControlAwait, map[string]any{}), jsonrpc.CodeInvalidParams)
	wantError(t, h.call(mcp.MethodControlAwait, map[string]any{"checkpoint": 1}), jsonrpc.CodeInvalidParams)
	wantError(t, h.call(mcp.MethodControlRelease, map[string]any{"checkpoint": ""}), jsonrpc.CodeInvalidParams)
	// An await whose id is in flight is refused.
	h.request(jsonrpc.IntID(1), mcp.MethodControlAwait, map[string]any{"checkpoint": "never"})
	h.request(jsonrpc.IntID(1), mcp.MethodControlAwait, map[string]any{"checkpoint": "never"})
	wantError(t, h.waitResponse(jsonrpc.IntID(1)), jsonrpc.CodeInvalidRequest)
}

func TestCancelledAwaitNeverAnswers(t *testing.T) {
	h := newHarness(t)
	id := jsonrpc.StringID("w")
	h.request(id, mcp.MethodControlAwait, map[string]any{"checkpoint": "k/start"})
	h.cancelReq(id)
	h.slow(jsonrpc.IntID(1), nil, map[string]any{"key": "k", "gated": false, "steps": 0})
	h.waitResponse(jsonrpc.IntID(1))
	h.await("k/end")
	if err := h.finish(); err != nil {
		t.Fatal(err)
	}
	if at := h.responsesTo(id); len(at) != 0 {
		t.Errorf("cancelled await answered: %s", h.seen[at[0]].raw)
	}
}

func TestEffect(t *testing.T) {
	h := newHarness(t)
	h.request(jsonrpc.IntID(1), "tools/call", map[string]any{"name": "effect", "arguments": map[string]any{"key": "e1"},
		"_meta": map[string]any{"progressToken": "p"}})
	h.await("e1/start")
	if ps, _ := h.progressSeen(); len(ps) != 1 || ps[0].Progress != 1 || *ps[0].Total != 1 {
		t.Errorf("effect progress: %+v", ps)
	}
	if c := h.counters(); c.EffectsApplied != 0 {
		t.Fatalf("effect applied before its gate opened")
	}
	h.release("e1/start")
	m := h.waitResponse(jsonrpc.IntID(1))
	want := `{"content":[{"type":"text","text":"applied effect 1"}],"structuredContent":{"receipt":"effect-1","applied":true},"isError":false}`
	if string(m.Result) != want {
		t.Errorf("effect result %s, want %s", m.Result, want)
	}
	// A cancelled effect applies nothing and says nothing.
	h.request(jsonrpc.IntID(2), "tools/call", map[string]any{"name": "effect", "arguments": map[string]any{"key": "e2"}})
	h.await("e2/start")
	h.cancelReq(jsonrpc.IntID(2))
	if end := h.await("e2/end"); end.Outcome != mcp.OutcomeCancelled {
		t.Fatalf("e2/end %+v", end)
	}
	h.request(jsonrpc.IntID(3), "tools/call", map[string]any{"name": "effect", "arguments": map[string]any{"key": "e3", "gated": false}})
	if m := h.waitResponse(jsonrpc.IntID(3)); !strings.Contains(string(m.Result), `"receipt":"effect-2"`) {
		t.Errorf("third effect: %s", m.Result)
	}
	c := h.counters()
	if c.EffectsApplied != 2 || c.OperationsCancelled != 1 || c.OperationsActive != 0 {
		t.Errorf("counters %+v", c)
	}
	if err := h.finish(); err != nil {
		t.Fatal(err)
	}
	if len(h.responsesTo(jsonrpc.IntID(2))) != 0 {
		t.Errorf("cancelled effect answered")
	}
}

func TestLogTool(t *testing.T) {
	h := newHarness(t)
	msgs := map[string]any{"name": "log", "arguments": map[string]any{"messages": []map[string]any{
		{"level": "debug", "data": "d"},
		{"level": "warning", "logger": "w", "data": map[string]any{"n": 1}},
		{"level": "emergency", "data": []int{1}},
	}}}
	mark := 0
	logged := func() []string {
		var got []string
		for _, f := range h.seen[mark:] {
			if f.msg != nil && f.msg.Method == "notifications/message" {
				got = append(got, string(f.msg.Params))
			}
		}
		mark = len(h.seen)
		return got
	}
	// No level set: everything (LOG-5).
	h.result("tools/call", msgs, nil)
	want := []string{
		`{"data":"d","level":"debug"}`,
		`{"data":{"n":1},"level":"warning","logger":"w"}`,
		`{"data":[1],"level":"emergency"}`,
	}
	if diff := cmp.Diff(want, logged()); diff != "" {
		t.Errorf("without a level (-want +got):\n%s", diff)
	}
	h.result("logging/setLevel", map[string]any{"level": "warning"}, nil)
	h.result("tools/call", msgs, nil)
	if diff := cmp.Diff(want[1:], logged()); diff != "" {
		t.Errorf("at warning (-want +got):\n%s", diff)
	}
	wantError(t, h.call("logging/setLevel", map[string]any{"level": "verbose"}), jsonrpc.CodeInvalidParams) // LOG-6
	wantError(t, h.call("logging/setLevel", map[string]any{}), jsonrpc.CodeInvalidParams)
	wantError(t, h.call("tools/call", map[string]any{"name": "log", "arguments": map[string]any{
		"messages": []map[string]any{{"level": "loud"}}}}), jsonrpc.CodeInvalidParams)
}

func TestToolCallBadParams(t *testing.T) {
	h := newHarness(t)
	call := func(args any, meta any) *jsonrpc.Message {
		p := map[string]any{"name": "slow", "arguments": args}
		if meta != nil {
			p["_meta"] = meta
		}
		return h.call("tools/call", p)
	}
	wantError(t, h.call("tools/call", map[string]any{"name": "nope"}), jsonrpc.CodeInvalidParams)
	wantError(t, h.call("tools/call", map[string]any{}), jsonrpc.CodeInvalidParams)
	// Without a key the call is an ordinary one (TestSlowWithoutKeyIsOrdinary),
	// which cannot be gated: no client could name its gate.
	wantError(t, call(map[string]any{"gated": true}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": ""}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k", "steps": "3"}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k", "steps": 2.5}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k", "steps": -1}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k", "unit": 0}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k", "stpes": 2}, nil), jsonrpc.CodeInvalidParams)
	wantError(t, call("k", nil), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k"}, map[string]any{"progressToken": 1.5}), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k"}, map[string]any{"progressToken": nil}), jsonrpc.CodeInvalidParams)
	wantError(t, call(map[string]any{"key": "k"}, "meta"), jsonrpc.CodeInvalidParams)

	// A key, a token and a request id are each unique while in use.
	h.slow(jsonrpc.IntID(1), json.RawMessage(`"t"`), map[string]any{"key": "k"})
	h.await("k/start")
	wantError(t, call(map[string]any{"key": "k", "gated": false}, nil), jsonrpc.CodeInvalidParams)
	m := call(map[string]any{"key": "k2", "gated": false}, map[string]any{"progressToken": "t"})
	wantError(t, m, jsonrpc.CodeInvalidParams)
	if m.Error.Message != "progress token already in use" {
		t.Errorf("message %q", m.Error.Message)
	}
	h.slow(jsonrpc.IntID(1), nil, map[string]any{"key": "k3", "gated": false})
	wantError(t, h.waitResponse(jsonrpc.IntID(1)), jsonrpc.CodeInvalidRequest)
	if c := h.counters(); c.OperationsStarted != 1 {
		t.Errorf("refused calls were started: %+v", c)
	}
}

func TestServeEndsWithBlockedWork(t *testing.T) {
	h := newHarness(t)
	h.slow(jsonrpc.IntID(1), json.RawMessage(`1`), map[string]any{"key": "a"})
	h.slow(jsonrpc.IntID(2), nil, map[string]any{"key": "b", "steps": 5})
	h.request(jsonrpc.IntID(3), "tools/call", map[string]any{"name": "effect", "arguments": map[string]any{"key": "e"}})
	h.request(jsonrpc.IntID(4), mcp.MethodControlAwait, map[string]any{"checkpoint": "never"})
	h.await("a/start")
	h.release("b/start")
	h.await("b/step/1")
	h.await("e/start")
	// finish checks srv.live == 0 when Serve has returned.
	if err := h.finish(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, id := range []int64{1, 2, 3, 4} {
		if len(h.responsesTo(jsonrpc.IntID(id))) != 0 {
			t.Errorf("abandoned request %d answered", id)
		}
	}
	// Serve has returned and counted its goroutines down to zero; no
	// goroutine may still be running the server's code either, once the
	// ones that have done their last step (the reader closes readDone, then
	// returns) have had the chance to return.
	if left := settledServerGoroutines(); len(left) > 0 {
		t.Errorf("%d goroutines still in the server's code after Serve returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// settledServerGoroutines is serverGoroutines once the scheduler has let
// every runnable goroutine run: a goroutine that signalled its end (Serve
// waits for that signal) may still be between the signal and its return,
// which nothing can wait for. A goroutine that is still there after a
// thousand yields is not finishing.
func settledServerGoroutines() []string {
	left := serverGoroutines()
	for i := 0; i < 1000 && len(left) > 0; i++ {
		runtime.Gosched()
		left = serverGoroutines()
	}
	return left
}

// serverGoroutines returns the stacks of goroutines that have a frame in
// the package's non-test code: the server's own work. The harness's
// goroutines (test files) and the runtime's do not count, whether or not
// they have finished exiting, so no polling is needed.
func serverGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self) + string(filepath.Separator)
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			line = strings.TrimSpace(line)
			file, _, _ := strings.Cut(line, ":")
			if strings.HasPrefix(file, dir) && !strings.HasSuffix(file, "_test.go") && !strings.Contains(file[len(dir):], string(filepath.Separator)) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

func TestServeEndsWithContext(t *testing.T) {
	srv := New(Options{})
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	out := newQueue[frame]()
	outR, outW := io.Pipe()
	go func() {
		defer out.close()
		b := make([]byte, 4096)
		for {
			if _, err := outR.Read(b); err != nil {
				return
			}
			out.push(frame{})
		}
	}()
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		errc <- err
	}()
	line := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	line(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k"}}}`)
	line(`{"jsonrpc":"2.0","id":2,"method":"mcpflight/await","params":{"checkpoint":"k/start"}}`)
	if _, ok, _ := out.pop(time.After(safety)); !ok {
		t.Fatal("no await response")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve returned %v, want context.Canceled", err)
		}
	case <-time.After(safety):
		t.Fatal("Serve did not return when its context ended")
	}
	if n := srv.live.Load(); n != 0 {
		t.Errorf("%d goroutines still running", n)
	}
}

func TestServeSessionsAreIndependent(t *testing.T) {
	srv := New(Options{})
	run := func() string {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			_ = srv.Serve(context.Background(), inR, outW)
			outW.Close()
		}()
		go func() {
			io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k","gated":false,"steps":1}}}`+"\n")
			io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"mcpflight/await","params":{"checkpoint":"k/end"}}`+"\n")
			io.WriteString(inW, `{"jsonrpc":"2.0","id":3,"method":"mcpflight/counters"}`+"\n")
			inW.Close()
		}()
		b, _ := io.ReadAll(outR)
		return string(b)
	}
	for range 2 {
		if out := run(); !strings.Contains(out, `"operationsStarted":1,`) {
			t.Errorf("second session sees the first one's state:\n%s", out)
		}
	}
}

func TestParseFault(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range AllFaults() {
		got, err := ParseFault(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFault(%q) = %q, %v", f, got, err)
		}
		d := f.Description()
		if d == "" || strings.Contains(d, "\n") || seen[d] {
			t.Errorf("fault %s: bad description %q", f, d)
		}
		seen[d] = true
	}
	if len(AllFaults()) != len(seen) || len(AllFaults()) < 28+len(HTTPFaults()) {
		t.Errorf("%d faults", len(AllFaults()))
	}
	if _, err := ParseFault("no-such-fault"); err == nil || !strings.Contains(err.Error(), "hang-after-cancel") {
		t.Errorf("ParseFault(bad) error %v", err)
	}
}

// idEq compares IDs exactly: "5" and 5 differ.
func idEq() cmp.Option { return cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b }) }

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
