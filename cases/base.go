package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// All returns the whole catalogue in a stable order.
func All() []probe.Case {
	var all []probe.Case
	all = append(all, baseCases()...)
	all = append(all, cancelCases()...)
	all = append(all, progressCases()...)
	all = append(all, loggingCases()...)
	all = append(all, httpCases()...)
	all = append(all, taskCases()...)
	all = append(all, schemaCases()...)
	return all
}

func baseCases() []probe.Case {
	return []probe.Case{
		{
			ID:       "lifecycle/version-echo",
			Title:    "initialize answers the requested version",
			Reqs:     []string{"LIF-9", "LIF-3"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{NoHandshake: true},
			Sends:    `initialize with protocolVersion "2025-11-25"`,
			Expect:   `protocolVersion "2025-11-25", or (info) an older published version the server prefers`,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return versionProbe(ctx, e, spec.V20251125)
			},
		},
		{
			ID:       "lifecycle/unsupported-version",
			Title:    "initialize with an unknown version gets a supported one",
			Reqs:     []string{"LIF-10", "LIF-11"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{NoHandshake: true},
			Sends:    `initialize with protocolVersion "1900-01-01"`,
			Expect:   "a published protocol version the server supports (an error is recorded as info: ambiguity A-2)",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return versionProbe(ctx, e, "1900-01-01")
			},
		},
		{
			ID:       "ping/empty-result",
			Title:    "ping is answered with an empty result",
			Reqs:     []string{"PNG-1", "RPC-8"},
			Versions: []string{spec.V20251125},
			Sends:    "ping",
			Expect:   "{} with the same id",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				seq := e.Log.Len()
				if err := e.S.Ping(ctx); err != nil {
					ev, _ := e.FrameAfter(seq, probe.AnyResponse)
					return probe.Violation(verdict.Fail, "PNG-1", []string{`{"result":{}} with the ping's id`}, chrono.Sanitize(err.Error(), false)+"; "+probe.Describe(ev), ev.Seq)
				}
				if err := e.Quiesce(ctx); err != nil {
					return verdict.Errorf("%v", err)
				}
				if o := e.ExtraResponses(); o != nil {
					return *o
				}
				return verdict.Passf("ping answered with an empty result")
			},
		},
		{
			ID:       "rpc/id-zero",
			Title:    "request id 0 is answered",
			Reqs:     []string{"RPC-4", "RPC-8"},
			Versions: []string{spec.V20251125},
			Sends:    "ping with id 0",
			Expect:   "a response with the integer id 0",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return pingIDs(ctx, e, jsonrpc.IntID(0))
			},
		},
		{
			ID:       "rpc/string-and-integer-ids",
			Title:    `ids "7" and 7 are different requests`,
			Reqs:     []string{"RPC-4", "RPC-8"},
			Versions: []string{spec.V20251125},
			Sends:    `ping with id "7", ping with id 7, ping with id "-1" and -1, concurrently`,
			Expect:   "each answered once, with its id's exact JSON type",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return pingIDs(ctx, e, jsonrpc.StringID("7"), jsonrpc.IntID(7), jsonrpc.StringID("-1"), jsonrpc.IntID(-1))
			},
		},
		{
			ID:       "rpc/no-response-to-notifications",
			Title:    "notifications are never answered",
			Reqs:     []string{"RPC-15", "CAN-14"},
			Versions: []string{spec.V20251125},
			Sends:    "notifications/initialized again, cancelled for an unknown id, progress for an unknown token, and an unknown notification",
			Expect:   "no response of any kind; the session stays usable",
			Run:      noResponseToNotifications,
		},
		{
			ID:       "stdio/stdout-only-messages",
			Title:    "the target writes only JSON-RPC messages",
			Reqs:     []string{"STD-4", "STD-1", "RPC-2"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "a tools/call with progress run to completion",
			Expect:   "every frame the target wrote, from the start of the session, is one valid JSON-RPC message",
			Run:      stdoutOnlyMessages,
		},
		{
			ID:       "stdio/teardown-on-stdin-close",
			Title:    "the target exits when its input closes",
			Reqs:     []string{"STD-46", "STD-7", "STD-44"},
			Versions: []string{spec.V20251125},
			Sends:    "closes the target's stdin and climbs the shutdown ladder only if needed",
			Expect:   "the target exits after stdin closes, before SIGTERM",
			Run:      teardownOnStdinClose,
		},
	}
}

func versionProbe(ctx context.Context, e *probe.Env, asked string) verdict.Outcome {
	var res peer.InitResult
	err := e.S.Request(ctx, mcp.MethodInitialize, map[string]any{
		"protocolVersion": asked,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpflight", "version": "dev"},
	}, &res)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		if asked != spec.V20251125 {
			return verdict.Infof("initialize with %q was refused with error %d %q (the spec's error example allows it: ambiguity A-2)",
				asked, rpcErr.Code, chrono.Sanitize(rpcErr.Message, false))
		}
		return probe.Violation(verdict.Fail, "LIF-3", []string{"a result with the server's capabilities and information"},
			fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), 0)
	case err != nil:
		return verdict.Errorf("initialize: %v", err)
	}
	got := res.ProtocolVersion
	switch {
	case got == asked:
		return verdict.Passf("the server answered %q", got)
	case !slices.Contains(spec.Published(), got):
		req := "LIF-10"
		if asked == spec.V20251125 {
			req = "LIF-9"
		}
		return probe.Violation(verdict.Fail, req, []string{fmt.Sprintf("%q, or another published version the server supports: %v", asked, spec.Published())},
			fmt.Sprintf("protocolVersion %q, which no server can support", chrono.Sanitize(got, false)), 0)
	case asked == spec.V20251125:
		return verdict.Infof("the server prefers the older version %q over %q", got, asked)
	}
	return verdict.Passf("asked for %q, the server offered %q", asked, got)
}

func pingIDs(ctx context.Context, e *probe.Env, ids ...jsonrpc.ID) verdict.Outcome {
	calls := make([]*peer.Call, 0, len(ids))
	for _, id := range ids {
		c, err := e.S.Start(ctx, mcp.MethodPing, nil, peer.WithID(id))
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		calls = append(calls, c)
	}
	for _, c := range calls {
		wctx, cancel := context.WithTimeout(ctx, e.Patience())
		resp, err := c.Await(wctx)
		cancel()
		if err != nil {
			actual := fmt.Sprintf("no response with id %s", c.ID)
			var seq uint64
			if ev, ok := e.FrameAfter(c.SentSeq, probe.AnyResponse); ok {
				actual += "; the nearest response was " + probe.Describe(ev)
				seq = ev.Seq
			}
			return probe.Violation(verdict.Fail, "RPC-8", []string{fmt.Sprintf("a response whose id is exactly %s", c.ID)}, actual, seq)
		}
		if resp.Error != nil {
			_, seq := c.Response()
			return probe.Violation(verdict.Fail, "PNG-1", []string{"an empty result"}, probe.Describe(e.EventAt(seq)), seq)
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.ExtraResponses(); o != nil {
		return *o
	}
	return verdict.Passf("%d requests answered with their exact ids", len(ids))
}

func noResponseToNotifications(ctx context.Context, e *probe.Env) verdict.Outcome {
	first := e.Log.Len()
	notes := []struct {
		method string
		params any
	}{
		{mcp.NotificationInitialized, nil},
		{mcp.NotificationCancelled, map[string]any{"requestId": "mcpflight-never-sent", "reason": "probe"}},
		{mcp.NotificationProgress, map[string]any{"progressToken": "mcpflight-never-issued", "progress": 1}},
		{"notifications/mcpflight/unknown", map[string]any{"probe": true}},
	}
	for _, n := range notes {
		if err := e.S.Notify(ctx, n.method, n.params); err != nil {
			return verdict.Errorf("sending %s: %v", n.method, err)
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(first); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "unsolicited notifications"); h != nil {
		return *h
	}
	return verdict.Passf("%d notifications sent, none answered", len(notes))
}

func stdoutOnlyMessages(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := op.Complete(ctx); err != nil {
		return verdict.Errorf("awaiting the result: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.MalformedAfter(0, "STD-4"); o != nil {
		return *o
	}
	n := 0
	for _, ev := range e.Log.Events() {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame {
			n++
		}
	}
	return verdict.Passf("%d frames from the target, all valid JSON-RPC messages", n)
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
	return probe.Violation(verdict.Warn, "STD-46", []string{"the target exits promptly once stdin is closed"},
		fmt.Sprintf("it had to be sent %s after %v", td.ExitedAfter, td.Waited.Round(1e6)), 0)
}

// loggingCases cover notifications/message level filtering.
func loggingCases() []probe.Case {
	return append([]probe.Case{
		{
			ID:       "logging/level-filter",
			Title:    "logging/setLevel filters lower levels",
			Reqs:     []string{"LOG-4", "LOG-3", "LOG-1"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{LogTool: true, Capabilities: []string{"logging"}},
			Sends:    `logging/setLevel "warning", then a tool that logs at debug, info, warning and error`,
			Expect:   "only warning and error messages arrive",
			Run:      loggingLevelFilter,
		},
	}, moreLoggingCases()...)
}

// logLevels are the RFC 5424 levels in order of severity (LOG-2).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func loggingLevelFilter(ctx context.Context, e *probe.Env) verdict.Outcome {
	if err := e.S.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": "warning"}, nil); err != nil {
		return probe.Violation(verdict.Fail, "LOG-3", []string{"logging/setLevel answered with an empty result"}, chrono.Sanitize(err.Error(), false), 0)
	}
	args := e.Profile.Log.CloneArgs()
	if e.Control != nil {
		var msgs []any
		for _, lvl := range []string{"debug", "info", "warning", "error"} {
			msgs = append(msgs, map[string]any{"level": lvl, "logger": "mcpflight", "data": "probe at " + lvl})
		}
		args["messages"] = msgs
	}
	first := e.Log.Len()
	var res json.RawMessage
	if err := e.S.Request(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Log.Name, "arguments": args}, &res); err != nil {
		return verdict.Errorf("calling %s: %v", e.Profile.Log.Name, err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	seen := 0
	for _, ev := range e.Log.Since(first) {
		if ev.Dir != chrono.In || ev.Summary == nil || ev.Summary.Method != mcp.NotificationMessage {
			continue
		}
		m, err := ev.Message()
		if err != nil {
			continue
		}
		var p struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(m.Params, &p)
		seen++
		if slices.Index(logLevels, p.Level) < slices.Index(logLevels, "warning") {
			return probe.Violation(verdict.Warn, "LOG-4", []string{"only messages at warning or above after logging/setLevel warning"},
				probe.Describe(ev), ev.Seq)
		}
	}
	if seen == 0 {
		return verdict.Infof("no log messages arrived at all")
	}
	return verdict.Passf("%d messages at warning or above; nothing below", seen)
}
