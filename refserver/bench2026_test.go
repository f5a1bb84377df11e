package refserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/testchild"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// stdioHelperEnv makes the test binary a reference server on its stdin and
// stdout (TestStdioHelper), for the benchmarks over a real child process.
const stdioHelperEnv = "MCPFLIGHT_REFSERVER_HELPER"

// TestStdioHelper is the child process of BenchmarkRoundTrip's stdio
// runs; it does nothing in an ordinary test run.
func TestStdioHelper(t *testing.T) {
	if os.Getenv(stdioHelperEnv) == "" {
		t.Skip("the reference server as a child process, for the benchmarks")
	}
	err := refserver.New(refserver.Options{}).Serve(context.Background(), os.Stdin, os.Stdout)
	code := 0
	if err != nil {
		code = 1
	}
	os.Exit(code)
}

// conn is the client end of a transport: a child process or in process.
type conn interface {
	Send(ctx context.Context, raw []byte) error
	Inbound() <-chan transport.Inbound
	Close(ctx context.Context) transport.Teardown
}

// envelope2026 is a 2026-07-28 request's _meta, as raw JSON members.
const envelope2026 = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}`

// roundTrips are the requests measured, per revision: a quick one, and a
// one-step ungated slow call with a progress token (a progress
// notification, then the result). %d is the request number, which keys
// the operation.
var roundTrips = map[string]map[string]string{
	"2025-11-25": {
		"quick": `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`,
		"slow":  `{"jsonrpc":"2.0","id":%[1]d,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k%[1]d","steps":1,"gated":false},"_meta":{"progressToken":%[1]d}}}`,
	},
	"2026-07-28": {
		"quick": `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{` + envelope2026 + `}}}`,
		"slow":  `{"jsonrpc":"2.0","id":%[1]d,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k%[1]d","steps":1,"gated":false},"_meta":{"progressToken":%[1]d,` + envelope2026 + `}}}`,
	},
}

// BenchmarkRoundTrip measures one request and its answer against the
// reference server, in process (refserver.InProcess) and over stdio (a
// child process), under 2025-11-25 (after initialize) and 2026-07-28 (the
// envelope on every request, the result decorated with resultType and
// serverInfo).
func BenchmarkRoundTrip(b *testing.B) {
	for _, where := range []string{"inprocess", "stdio"} {
		for _, rev := range []string{"2025-11-25", "2026-07-28"} {
			for _, kind := range []string{"quick", "slow"} {
				b.Run(where+"/"+rev+"/"+kind, func(b *testing.B) {
					c := dial(b, where)
					ctx := context.Background()
					if rev == "2025-11-25" {
						roundTrip(b, c, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`), jsonrpc.IntID(0))
					}
					format := roundTrips[rev][kind]
					b.ResetTimer()
					for i := 1; i <= b.N; i++ {
						roundTrip(b, c, fmt.Appendf(nil, format, i), jsonrpc.IntID(int64(i)))
					}
					b.StopTimer()
					c.Close(ctx)
				})
			}
		}
	}
}

// dial starts the reference server in process or as a child process.
func dial(b *testing.B, where string) conn {
	log := chrono.New(chrono.WithMaxRaw(64))
	if where == "inprocess" {
		s, _ := refserver.InProcess(context.Background(), refserver.Options{}, transport.StreamConfig{Log: log})
		return s
	}
	s, err := transport.StartStdio(context.Background(), transport.StdioConfig{
		Argv: []string{os.Args[0], "-test.run=^TestStdioHelper$"},
		Env:  []string{stdioHelperEnv + "=1", testchild.RaceEnv()},
		Log:  log,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// roundTrip sends frame and reads until the response to id.
func roundTrip(b *testing.B, c conn, frame []byte, id jsonrpc.ID) {
	ctx := context.Background()
	if err := c.Send(ctx, frame); err != nil {
		b.Fatal(err)
	}
	for in := range c.Inbound() {
		if in.Err != nil {
			b.Fatal(in.Err)
		}
		if in.Msg != nil && in.Msg.Kind.IsResponse() && in.Msg.ID == id {
			if in.Msg.Kind != jsonrpc.KindResult {
				b.Fatalf("%s", in.Raw)
			}
			return
		}
	}
	b.Fatal("the server ended")
}

// TestInProcessTwoConnections2026: two in-process connections of one Server
// (as two connections to one process) share the default control scope: a
// task created by a 2026-07-28 request on one is found, cancelled and
// seen stopped on the other (RPC-60, TSX-16, TSX-44), while neither has
// a 2025-11-25 session.
func TestInProcessTwoConnections2026(t *testing.T) {
	ctx := context.Background()
	srv := refserver.New(refserver.Options{})
	a, aDone := srv.InProcess(ctx, transport.StreamConfig{Log: chrono.New()})
	b, bDone := srv.InProcess(ctx, transport.StreamConfig{Log: chrono.New()})
	tasks := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	ask := func(c conn, id int, method, params string) string {
		t.Helper()
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{%s}}}`, id, method, params, tasks)
		if err := c.Send(ctx, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		for in := range c.Inbound() {
			if in.Err != nil {
				t.Fatal(in.Err)
			}
			if in.Msg != nil && in.Msg.Kind.IsResponse() && in.Msg.ID == jsonrpc.IntID(int64(id)) {
				return string(in.Raw)
			}
		}
		t.Fatal("the connection ended")
		return ""
	}
	created := ask(a, 1, "tools/call", `"name":"task_worker","arguments":{"key":"w","ticks":2},`)
	var r struct {
		Result struct {
			TaskID     string `json:"taskId"`
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(created), &r); err != nil || r.Result.ResultType != "task" {
		t.Fatalf("CreateTaskResult %s", created)
	}
	id := fmt.Sprintf(`"taskId":%q,`, r.Result.TaskID)
	if got := ask(b, 1, "tasks/get", id); !strings.Contains(got, `"status":"working"`) {
		t.Errorf("tasks/get on the other connection: %s", got)
	}
	ask(b, 2, "mcpflight/release", `"checkpoint":"w/start",`)
	ask(a, 2, "mcpflight/await", `"checkpoint":"w/tick/1",`)
	if got := ask(b, 3, "tasks/cancel", id); !strings.Contains(got, `"result":{"resultType":"complete","_meta":{`) || strings.Contains(got, "error") {
		t.Errorf("tasks/cancel: %s", got)
	}
	ask(a, 3, "mcpflight/release", `"checkpoint":"w/tick/1",`)
	ask(a, 4, "mcpflight/release", `"checkpoint":"w/tick/2",`)
	if got := ask(b, 4, "mcpflight/await", `"checkpoint":"w/end",`); !strings.Contains(got, `"outcome":"cancelled"`) {
		t.Errorf("w/end: %s", got)
	}
	if got := ask(a, 5, "mcpflight/counters", ""); !strings.Contains(got, `"status":"cancelled","ticks":1,"workerRunning":false`) {
		t.Errorf("counters: %s", got)
	}
	for _, c := range []conn{a, b} {
		c.Close(ctx)
	}
	for _, done := range []<-chan error{aDone, bDone} {
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}
