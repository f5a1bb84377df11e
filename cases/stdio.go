package cases

import (
	"context"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// stdioCases cover the stdio transport (2025-11-25 basic/transports):
// what the server writes to stdout, and its exit when stdin closes.
func stdioCases() []probe.Case {
	return []probe.Case{
		// STD-4 MUST NOT: "The server MUST NOT write anything to its `stdout` that is not a valid
		//   MCP message."
		// STD-1 MUST NOT: "Messages are delimited by newlines, and MUST NOT contain embedded
		//   newlines."
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "stdio/stdout-only-messages",
			Title:    "the target writes only JSON-RPC messages",
			Reqs:     []string{"STD-4", "STD-1", "RPC-2"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{UsesSlowTool: true},
			Sends:    "a tools/call with progress run to completion; without a slow tool, tools/list and a liveness check",
			Expect:   "every frame the target wrote, from the start of the session, is one valid JSON-RPC message",
			Run:      stdoutOnlyMessages,
		},
		// STD-43 MUST NOT: "The server MUST NOT write JSON-RPC _requests_ to `stdout`."
		{
			ID:       "stdio/no-requests-on-stdout",
			Title:    "the target writes no JSON-RPC request to stdout",
			Reqs:     []string{"STD-43"},
			Versions: only2026(),
			Needs:    probe.Needs{UsesSlowTool: true},
			Sends:    "tools/list, a liveness check, a tools/call with progress run to completion when the profile names a slow tool, and the profile's log tool with logLevel debug when it names one: the calls a 2025-11-25 server might answer with a request of its own (sampling, roots, elicitation)",
			Expect:   "no frame the target wrote to stdout, from the start of the session, is a JSON-RPC request (a method and an id): a 2026-07-28 server asks for input with an input_required result",
			Run:      noRequestsOnStdout,
		},
		// STD-7 SHOULD (2025-11-25 only): "For the stdio transport, the client SHOULD initiate
		//   shutdown by: ▸ First, closing the input stream to the child process (the server) ▸
		//   Waiting for the server to exit, or sending `SIGTERM` if the server does not exit within
		//   a reasonable time ▸ Sending `SIGKILL` if the server does not exit within a reasonable
		//   time after `SIGTERM`"
		// STD-46 SHOULD (2026-07-28 only): "Servers SHOULD exit promptly when their standard input
		//   is closed or reads return end-of-file."
		{
			ID:        "stdio/teardown-on-stdin-close",
			Title:     "the target exits when its input closes",
			Reqs:      []string{},
			ReqsUnder: map[string][]string{spec.V20251125: {"STD-7"}, spec.V20260728: {"STD-46"}},
			Versions:  bothRevisions(),
			Sends:     "closes the target's stdin and climbs the shutdown ladder only if needed",
			Expect:    "the target exits after stdin closes, before SIGTERM",
			Run:       teardownOnStdinClose,
		},
	}
}

func stdoutOnlyMessages(ctx context.Context, e *probe.Env) verdict.Outcome {
	did := "a tools/call with progress run to completion"
	if e.HasSlowTool() {
		op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		if _, err := op.Complete(ctx); err != nil {
			return verdict.Errorf("awaiting the result: %v", err)
		}
	} else {
		var o *verdict.Outcome
		if did, o = e.ExchangeWithoutWork(ctx); o != nil {
			return *o
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	// Over stdio the frames are the target's stdout (STD-4); over HTTP
	// they are its answers, held to JSON-RPC itself (RPC-2).
	rule := "STD-4"
	if e.Transport == "http" {
		rule = "RPC-2"
	}
	if o := e.MalformedAfter(0, rule); o != nil {
		return *o
	}
	n := 0
	for _, ev := range e.Log.Events() {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame {
			n++
		}
	}
	return verdict.Passf("%d frames from the target, all valid JSON-RPC messages, after %s", n, did)
}

func noRequestsOnStdout(ctx context.Context, e *probe.Env) verdict.Outcome {
	if e.Transport == "http" {
		// The wording otherTransport counts: not a case of this target.
		return verdict.Skipf("needs the stdio transport; the target uses http (STD-43 is a rule of what a server writes to stdout)")
	}
	did, o := e.ExchangeWithoutWork(ctx)
	if o != nil {
		return *o
	}
	if e.HasSlowTool() {
		op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		if _, err := op.Complete(ctx); err != nil {
			return verdict.Errorf("awaiting the result: %v", err)
		}
		did = "tools/list, a tools/call with progress run to completion and a liveness check"
	}
	if e.Profile != nil && e.Profile.Log != nil {
		params := map[string]any{"name": e.Profile.Log.Name, "arguments": logArgs(e, "debug", "error")}
		if err := e.S.Request(ctx, mcp.MethodToolsCall, params, nil, peer.WithLogLevel("debug")); err != nil {
			return verdict.Errorf("calling %s: %v", e.Profile.Log.Name, err)
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	n := 0
	for _, ev := range e.Log.Events() {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame || ev.Summary == nil {
			continue
		}
		n++
		if ev.Summary.Kind == jsonrpc.KindRequest.String() {
			return e.Breaks("STD-43", []string{"no JSON-RPC request on stdout (a 2026-07-28 server asks for input with an input_required result)"}, probe.Describe(ev), ev.Seq)
		}
	}
	return verdict.Passf("%d frames from the target, none a JSON-RPC request, after %s", n, did)
}

func teardownOnStdinClose(ctx context.Context, e *probe.Env) verdict.Outcome {
	if e.Transport == "http" {
		return verdict.Skipf("stdin exists only for a process the harness runs; over HTTP teardown is DELETE, graded with the run")
	}
	if e.Close == nil {
		return verdict.Errorf("the runner gave the case no way to close the transport")
	}
	td := e.Close(ctx)
	switch {
	case td.Err != nil:
		return verdict.Errorf("teardown failed: %v", td.Err)
	case td.Leftovers > 0:
		return verdict.Errorf("%d processes of the target's group survived SIGKILL", td.Leftovers)
	case td.ExitedAfter == transport.StepNone || td.ExitedAfter == transport.StepCloseInput:
		return verdict.Passf("the target exited %v after its input closed (exit code %d)", td.Waited.Round(1e5), td.ExitCode)
	}
	// STD-46 (servers SHOULD exit once stdin closes) is 2026-07-28's;
	// 2025-11-25 has no server sentence, only the client's ladder STD-7,
	// whose "waiting for the server to exit" relies on it (the registry's
	// note on STD-46).
	return e.Broke(verdict.Req("STD-7").Under(spec.V20260728, "STD-46"), []string{"the target exits promptly once stdin is closed"},
		fmt.Sprintf("it had to be sent %s after %v", td.ExitedAfter, td.Waited.Round(1e6)), 0)
}
