package refserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/wireschema"
)

// Helpers for the 2026-07-28 tests: the per-request envelope, a client
// that sends it over a harness (stdio, raw frames), and the check of every
// frame against the 2026-07-28 schema and the tasks extension's.

// tasksCaps are client capabilities that declare the tasks extension.
func tasksCaps() map[string]any {
	return map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}
}

// meta2026 is a 2026-07-28 request's _meta: protocol version, client
// identity and capabilities (none), then the key/value pairs of kv, which
// replace those (a nil value deletes the key).
func meta2026(kv ...any) map[string]any {
	m := map[string]any{
		mcp.MetaProtocolVersion:    spec.V20260728,
		mcp.MetaClientInfo:         map[string]any{"name": "refserver-test", "version": "0"},
		mcp.MetaClientCapabilities: map[string]any{},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(m, k)
			continue
		}
		m[k] = kv[i+1]
	}
	return m
}

// withMeta returns params with _meta set to meta (meta2026() when nil).
func withMeta(params map[string]any, meta map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range params {
		out[k] = v
	}
	if meta == nil {
		meta = meta2026()
	}
	out[mcp.MetaKey] = meta
	return out
}

// client2026 sends 2026-07-28 requests over a harness and remembers each
// request's method, so that the frames can be checked against the schema.
type client2026 struct {
	*harness
	methods map[string]string // request ID key -> method
}

func newClient2026(h *harness) *client2026 {
	return &client2026{harness: h, methods: map[string]string{}}
}

// send2026 sends a 2026-07-28 request with id and returns nothing.
func (c *client2026) send2026(id jsonrpc.ID, method string, params map[string]any, meta map[string]any) {
	c.t.Helper()
	c.methods[id.Key()] = method
	c.request(id, method, withMeta(params, meta))
}

// call2026 sends a 2026-07-28 request with a fresh id and returns its
// response.
func (c *client2026) call2026(method string, params map[string]any, meta map[string]any) *jsonrpc.Message {
	c.t.Helper()
	id := c.id()
	c.send2026(id, method, params, meta)
	return c.waitResponse(id)
}

// result2026 is call2026 for a success result, decoded into v.
func (c *client2026) result2026(method string, params map[string]any, meta map[string]any, v any) *jsonrpc.Message {
	c.t.Helper()
	m := c.call2026(method, params, meta)
	if m.Kind != jsonrpc.KindResult {
		c.t.Fatalf("%s: got %s, want a result", method, m.Raw)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			c.t.Fatalf("%s: decoding %s: %v", method, m.Result, err)
		}
	}
	return m
}

// await2026, release2026 and counters2026 are the control extension with the
// envelope; scope, when not empty, is the control scope.
func (c *client2026) await2026(cp string, meta map[string]any) mcp.ControlReached {
	c.t.Helper()
	var r mcp.ControlReached
	c.result2026(mcp.MethodControlAwait, map[string]any{"checkpoint": cp}, meta, &r)
	return r
}

func (c *client2026) release2026(cp string, meta map[string]any) {
	c.t.Helper()
	c.result2026(mcp.MethodControlRelease, map[string]any{"checkpoint": cp}, meta, nil)
}

func (c *client2026) counters2026(meta map[string]any) mcp.ControlCounters {
	c.t.Helper()
	var r mcp.ControlCounters
	c.result2026(mcp.MethodControlCounters, map[string]any{}, meta, &r)
	return r
}

// schemaCheck validates every frame in frames against the 2026-07-28
// schema: results by the method of the request they answer (methods),
// notifications by their method, errors as error responses. It fails the
// test with every problem found.
func schemaCheck(t testing.TB, frames [][]byte, methods map[string]string) {
	t.Helper()
	s, err := wireschema.Load(wireschema.Rev20260728)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, raw := range frames {
		msg, err := decode2026(raw)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: not JSON-RPC: %v", raw, err))
			continue
		}
		inst, err := wireschema.DecodeInstance(raw)
		if err != nil {
			t.Fatal(err)
		}
		obj := inst.(map[string]any)
		var d wireschema.Def
		var at any = obj
		where := ""
		switch msg.Kind {
		case jsonrpc.KindNotification:
			d, _ = s.NotificationDef(msg.Method)
		case jsonrpc.KindResult:
			method := methods[msg.ID.Key()]
			if method == "" {
				continue // not a request of the client2026
			}
			result := obj["result"].(map[string]any)
			d, _ = s.ResultDef(wireschema.Request{Method: method}, result)
			at, where = result, "/result"
		case jsonrpc.KindError:
			d = wireschema.Def{Name: "JSONRPCErrorResponse"}
			switch msg.Error.Code {
			case mcp.CodeUnsupportedProtocolVersion:
				d.Name = "UnsupportedProtocolVersionError"
			case mcp.CodeMissingRequiredClientCapability:
				d.Name = "MissingRequiredClientCapabilityError"
			case mcp.CodeHeaderMismatch:
				d.Name = "HeaderMismatchError"
			}
		default:
			continue
		}
		probs, err := s.Validate(d, at, where)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			bad = append(bad, fmt.Sprintf("%s against %s: %s %s: %s", raw, d, p.Pointer, p.Keyword, p.Message))
		}
	}
	if len(bad) > 0 {
		t.Errorf("frames that break the 2026-07-28 schema:\n%s", strings.Join(bad, "\n"))
	}
}

// seenFrames is every frame the harness has read.
func (h *harness) seenFrames() [][]byte {
	out := make([][]byte, len(h.seen))
	for i, f := range h.seen {
		out[i] = f.raw
	}
	return out
}

// resultObject decodes a result into a map.
func resultObject(t testing.TB, m *jsonrpc.Message) map[string]json.RawMessage {
	t.Helper()
	var obj map[string]json.RawMessage
	if m.Kind != jsonrpc.KindResult || json.Unmarshal(m.Result, &obj) != nil {
		t.Fatalf("not a result object: %s", m.Raw)
	}
	return obj
}

// str decodes a JSON string, or returns "(absent)" for nil.
func str(raw json.RawMessage) string {
	if raw == nil {
		return "(absent)"
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

// decode2026 is jsonrpc.Decode, which also takes an error response without
// an id: 2026-07-28 leaves the id out of an error whose request id is
// unknown (basic/index §Error Responses), where JSON-RPC 2.0 wants null.
func decode2026(raw []byte) (*jsonrpc.Message, error) {
	m, err := jsonrpc.Decode(raw)
	if err == nil {
		return m, nil
	}
	var e struct {
		Version string           `json:"jsonrpc"`
		Error   *jsonrpc.Error   `json:"error"`
		ID      *json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Version != "2.0" || e.Error == nil || e.ID != nil {
		return nil, err
	}
	return &jsonrpc.Message{Kind: jsonrpc.KindError, NullID: true, Error: e.Error, Raw: raw}, nil
}
