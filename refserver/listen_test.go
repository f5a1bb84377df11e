package refserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// listenFrames are the frames seen so far that carry subscription id in
// _meta, answer it, or cancel it, as their method or "result"/"error".
func (c *client2026) listenFrames(id jsonrpc.ID) []string {
	var out []string
	for _, f := range c.seen {
		if f.msg == nil {
			continue
		}
		if f.msg.Kind.IsResponse() && f.msg.ID == id {
			out = append(out, f.msg.Kind.String())
			continue
		}
		var p struct {
			Meta      map[string]json.RawMessage `json:"_meta"`
			RequestID json.RawMessage            `json:"requestId"`
		}
		if f.msg.Kind == jsonrpc.KindNotification && json.Unmarshal(f.msg.Params, &p) == nil {
			sid, ok := p.Meta[mcp.MetaSubscriptionID]
			if (ok && string(sid) == id.String()) || (f.msg.Method == mcp.NotificationCancelled && string(p.RequestID) == id.String()) {
				out = append(out, f.msg.Method)
			}
		}
	}
	return out
}

// TestListen2026: subscriptions/listen acknowledges first, with the filter
// it agreed to (SUB-2, SUB-4), and then carries notifications/tasks of the
// tasks it asked for only, each with the subscription ID and the full
// DetailedTask (SUB-1, SUB-5, TSX-48, TSX-50), never a log message even
// with a logLevel (LOG-44). The server's teardown answers the listen
// request (SUB-6, SUB-7), or, with TeardownCancelled, sends
// notifications/cancelled naming it (CAN-41); a client's cancel ends it
// with nothing sent (CAN-48).
func TestListen2026(t *testing.T) {
	for _, mode := range []ListenTeardown{TeardownResult, TeardownCancelled, ""} {
		name := string(mode)
		if mode == "" {
			name = "client-cancel"
		}
		t.Run(name, func(t *testing.T) {
			opts := Options{}
			if mode != "" {
				opts.ListenTeardown = mode
			}
			c := newClient2026(newHarnessWith(t, opts))
			mine := c.startWorker(map[string]any{"key": "w", "ticks": 1})
			other := c.startWorker(map[string]any{"key": "o", "ticks": 1, "gated": false})
			c.await2026("o/end", nil)
			sub := c.id()
			c.send2026(sub, mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{
				"toolsListChanged": true, "promptsListChanged": true, "taskIds": []string{mine.TaskID, "task-unknown"}}},
				taskMeta(mcp.MetaLogLevel, "debug"))
			c.release2026("w/start", nil)
			c.release2026("w/tick/1", nil)
			c.await2026("w/end", nil)
			if n := c.counters2026(nil).SubscriptionsOpen; n != 1 {
				t.Errorf("subscriptionsOpen %d", n)
			}
			if mode == "" {
				c.cancelReq(sub)
			} else {
				var ended struct {
					Ended int `json:"ended"`
				}
				c.result2026(mcp.MethodControlTeardown, map[string]any{"subscriptionId": sub}, nil, &ended)
				if ended.Ended != 1 {
					t.Errorf("teardown ended %d", ended.Ended)
				}
			}
			end := c.await2026(subscriptionCheckpoint(sub), nil)
			// The task's one status change after the subscription opened
			// is its end.
			want := []string{mcp.NotificationSubscriptionsAcknowledged, mcp.NotificationTasks}
			switch mode {
			case TeardownResult:
				want = append(want, "result")
			case TeardownCancelled:
				want = append(want, mcp.NotificationCancelled)
			}
			got := c.listenFrames(sub)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the subscription's frames (-want +got):\n%s", diff)
			}
			wantOutcome := map[ListenTeardown]string{"": mcp.OutcomeCancelled, TeardownResult: mcp.OutcomeCompleted, TeardownCancelled: mcp.OutcomeCompleted}[mode]
			if end.Outcome != wantOutcome {
				t.Errorf("%s %+v", subscriptionCheckpoint(sub), end)
			}
			var ack struct {
				Notifications map[string]json.RawMessage `json:"notifications"`
			}
			for _, f := range c.seen {
				if f.msg != nil && f.msg.Method == mcp.NotificationSubscriptionsAcknowledged {
					_ = json.Unmarshal(f.msg.Params, &ack)
				}
				if f.msg != nil && f.msg.Method == mcp.NotificationTasks && strings.Contains(string(f.msg.Params), other.TaskID) {
					t.Errorf("a notification of a task not asked for: %s (SUB-1)", f.raw)
				}
				if f.msg != nil && f.msg.Method == mcp.NotificationMessage {
					t.Errorf("a log message: %s (LOG-44)", f.raw)
				}
			}
			if diff := cmp.Diff(`{"taskIds":["`+mine.TaskID+`"],"toolsListChanged":true}`, string(mustJSON(ack.Notifications))); diff != "" {
				t.Errorf("acknowledged filter (-want +got):\n%s", diff)
			}
			if n := c.counters2026(nil).SubscriptionsOpen; n != 0 {
				t.Errorf("subscriptionsOpen %d after the end", n)
			}
			// The notification is the DetailedTask tasks/get shows (TSX-50).
			var pushed, polled map[string]json.RawMessage
			for _, f := range c.seen {
				if f.msg != nil && f.msg.Method == mcp.NotificationTasks {
					_ = json.Unmarshal(f.msg.Params, &pushed)
				}
			}
			polled = resultObject(t, c.call2026(mcp.MethodTasksGet, map[string]any{"taskId": mine.TaskID}, taskMeta()))
			for _, k := range []string{mcp.MetaKey, "resultType"} {
				delete(pushed, k)
				delete(polled, k)
			}
			if diff := cmp.Diff(polled, pushed); diff != "" || str(pushed["status"]) != mcp.TaskCompleted {
				t.Errorf("notifications/tasks differs from tasks/get (-get +notification):\n%s", diff)
			}
			schemaCheck(t, c.seenFrames(), c.methods)
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestListenErrors2026: task status notifications need the extension
// declared (-32021, TSX-49, TSX-55); a listen without a filter is -32602.
func TestListenErrors2026(t *testing.T) {
	c := newClient2026(newHarness(t))
	wantError(t, c.call2026(mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"taskIds": []string{}}}, nil),
		mcp.CodeMissingRequiredClientCapability)
	wantError(t, c.call2026(mcp.MethodSubscriptionsListen, map[string]any{}, nil), jsonrpc.CodeInvalidParams)
	schemaCheck(t, c.seenFrames(), c.methods)
}
