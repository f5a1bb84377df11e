package monitor

import (
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
)

// FuzzTaskAndSubscriptionFrames: a client frame and a server frame of any
// bytes, in a 2025-11-25 session following a task and in a 2026-07-28
// one following a task and a subscription, over stdio and HTTP, and in
// one after server/discover (the version rules) and one whose server
// declared task-augmented tools/call (the handshake's rules), never
// crash the monitor, and every finding's text is sanitised.
func FuzzTaskAndSubscriptionFrames(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`), []byte(`{"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","status":"completed"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"T1"}}`), []byte(`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":7}}}}`))
	f.Add([]byte(listen(3, `{"taskIds":"T1"}`)), []byte(`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":{"x":1}},"taskId":"T1"}}`))
	f.Add([]byte(call2026At(3, "bogus")), []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":7,"_meta":[]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"\u0000x","io.modelcontextprotocol/clientCapabilities":7}}}`),
		[]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"\u001b[31m","data":{"supported":[1]}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`), []byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no","data":"2026-07-28"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`), []byte(`{"jsonrpc":"2.0","id":3,"result":[]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":{"x":1}}}`), []byte(`{"jsonrpc":"2.0","id":3,"result":{"isError":true}}`))
	f.Fuzz(func(t *testing.T, client, server []byte) {
		histories := []*history{
			created25(init25()).frame(chrono.Out, "stdin", string(client)).frame(chrono.In, "stdout", string(server)),
			created2026(meta2026Tasks).c(listen(2, `{"taskIds":["T1"]}`)).frame(chrono.Out, "stdin", string(client)).frame(chrono.In, "stdout", string(server)),
			(&history{}).post(1, listen(2, `{"taskIds":["T1"]}`)).post(2, string(client)).sse(1, string(server)).sse(2, string(server)).note("SSE POST #1", "stream ended"),
			discover26(`["2026-07-28"]`).frame(chrono.Out, "stdin", string(client)).frame(chrono.In, "stdout", string(server)),
			taskServer("required").frame(chrono.Out, "stdin", string(client)).frame(chrono.In, "stdout", string(server)),
		}
		for i, h := range histories {
			transport := "stdio"
			if i == 2 {
				transport = "http"
			}
			fs, _, _ := run(h, Options{Transport: transport})
			for _, f := range fs {
				if chrono.Sanitize(f.Text, false) != f.Text {
					t.Errorf("finding text not sanitised: %q", f.Text)
				}
			}
		}
	})
}
