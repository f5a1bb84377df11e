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
	"github.com/mcpflight/mcpflight/verdict"
)

// loggingCases cover logging/setLevel and notifications/message
// (2025-11-25 server/utilities/logging).
func loggingCases() []probe.Case {
	return []probe.Case{
		// LOG-4 should (lc): "The level of logging that the client wants to receive from the
		//   server. The server should send all logs at this level and higher (i.e., more severe) to
		//   the client as notifications/message."
		// LOG-3 MAY: "To configure the minimum log level, clients MAY send a `logging/setLevel`
		//   request:"
		// LOG-1 MUST: "Servers that emit log message notifications MUST declare the `logging`
		//   capability:"
		// LOG-2 DEF: "The protocol follows the standard syslog severity levels specified in RFC
		//   5424:"
		{
			ID:       "logging/level-filter",
			Title:    "logging/setLevel filters lower levels",
			Reqs:     []string{"LOG-4", "LOG-3", "LOG-1", "LOG-2"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{LogTool: true, Capabilities: []string{"logging"}},
			Sends:    `logging/setLevel "warning", then a tool that logs at debug, info, warning and error`,
			Expect:   "only warning and error messages arrive",
			Run:      loggingLevelFilter,
		},
		// LOG-2 DEF: "The protocol follows the standard syslog severity levels specified in RFC
		//   5424:"
		// LOG-3 MAY: "To configure the minimum log level, clients MAY send a `logging/setLevel`
		//   request:"
		{
			ID:       "logging/every-level-accepted",
			Title:    "logging/setLevel accepts each RFC 5424 level",
			Reqs:     []string{"LOG-2", "LOG-3"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{Capabilities: []string{"logging"}},
			Sends:    "logging/setLevel with debug, info, notice, warning, error, critical, alert and emergency in turn",
			Expect:   "an empty result for every one",
			Run:      loggingEveryLevel,
		},
		// LOG-6 SHOULD: "Servers SHOULD return standard JSON-RPC errors for common failure cases:
		//   ▸ Invalid log level: `-32602` (Invalid params) ▸ Configuration errors: `-32603`
		//   (Internal error)"
		// LOG-2 DEF: "The protocol follows the standard syslog severity levels specified in RFC
		//   5424:"
		{
			ID:       "logging/invalid-level-rejected",
			Title:    "an unknown level is refused with -32602",
			Reqs:     []string{"LOG-6", "LOG-2"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{Capabilities: []string{"logging"}},
			Sends:    `logging/setLevel "verbose"`,
			Expect:   "error -32602 (Invalid params)",
			Run:      loggingInvalidLevel,
		},
		// LOG-2 DEF: "The protocol follows the standard syslog severity levels specified in RFC
		//   5424:"
		// LOG-1 MUST: "Servers that emit log message notifications MUST declare the `logging`
		//   capability:"
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "logging/message-shape",
			Title:    "log messages carry a valid level and data",
			Reqs:     []string{"LOG-2", "LOG-1", "RPC-2"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{LogTool: true},
			Sends:    "logging/setLevel debug, then the profile's log tool",
			Expect:   "every notifications/message has one of the eight levels, data, and a string logger if any; the logging capability is declared",
			Run:      loggingMessageShape,
		},
		// LOG-7 SHOULD: "Servers SHOULD: ▸ Rate limit log messages ▸ Include relevant context in
		//   data field ▸ Use consistent logger names ▸ Remove sensitive information"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:        "logging/no-flood-after-cancel",
			Title:     "a cancelled operation stops logging",
			Reqs:      []string{"LOG-7"},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55"}},
			Versions:  bothRevisions(),
			Needs: probe.Needs{SlowTool: true, Control: true, Capabilities: []string{"logging"},
				ControlFor: "the slow tool's end checkpoint, the barrier after which no log message can still be on its way: without it the wire cannot tell a message sent after the cancel from one sent before it and read late, and no profile field gives that barrier"},
			Sends:  "logging/setLevel debug; a slow call that logs every step; notifications/cancelled after step 1",
			Expect: "no notifications/message after the cancel",
			Run:    loggingNoFloodAfterCancel,
		},
	}
}

// logLevels are the RFC 5424 levels in order of severity (LOG-2).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func loggingLevelFilter(ctx context.Context, e *probe.Env) verdict.Outcome {
	if err := e.S.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": "warning"}, nil); err != nil {
		return e.Breaks("LOG-2", []string{"logging/setLevel with the RFC 5424 level \"warning\" answered with an empty result"}, chrono.Sanitize(err.Error(), false), 0)
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
		if !slices.Contains(logLevels, p.Level) {
			return e.Breaks("LOG-2", []string{fmt.Sprintf("a level that is one of %v", logLevels)}, probe.Describe(ev), ev.Seq)
		}
		if slices.Index(logLevels, p.Level) < slices.Index(logLevels, "warning") {
			return e.Breaks("LOG-4", []string{"only messages at warning or above after logging/setLevel warning"},
				probe.Describe(ev), ev.Seq)
		}
	}
	if seen == 0 {
		return verdict.Infof("no log messages arrived at all")
	}
	return verdict.Passf("%d messages at warning or above; nothing below", seen)
}

func loggingEveryLevel(ctx context.Context, e *probe.Env) verdict.Outcome {
	for _, lvl := range logLevels {
		seq := e.Log.Len() + 1
		err := e.S.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": lvl}, nil)
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			return e.Breaks("LOG-2", []string{fmt.Sprintf("level %q accepted with an empty result", lvl)},
				fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), seq+1)
		case err != nil:
			return verdict.Errorf("logging/setLevel %s: %v", lvl, err)
		}
	}
	return verdict.Passf("all %d levels accepted", len(logLevels))
}

func loggingInvalidLevel(ctx context.Context, e *probe.Env) verdict.Outcome {
	err := e.S.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": "verbose"}, nil)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
		return verdict.Passf("refused with -32602: %s", chrono.Sanitize(rpcErr.Message, false))
	case errors.As(err, &rpcErr):
		return e.Breaks("LOG-6", []string{"error -32602 (Invalid params)"},
			fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), 0)
	case err != nil:
		return verdict.Errorf("logging/setLevel: %v", err)
	}
	return e.Breaks("LOG-6", []string{"error -32602 (Invalid params)"}, `"verbose" was accepted with a result`, 0)
}

// judgeLogMessage checks one notifications/message against the schema's
// LoggingMessageNotification: level one of the eight, data present,
// logger a string when present.
func judgeLogMessage(e *probe.Env, ev chrono.Event) *verdict.Outcome {
	m, err := ev.Message()
	if err != nil {
		return nil
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil {
		o := e.Breaks("RPC-2", []string{"params is an object"}, probe.Describe(ev), ev.Seq)
		return &o
	}
	var level string
	if json.Unmarshal(p["level"], &level) != nil || !slices.Contains(logLevels, level) {
		o := e.Breaks("LOG-2", []string{fmt.Sprintf("level is one of %v", logLevels)}, probe.Describe(ev), ev.Seq)
		return &o
	}
	if _, ok := p["data"]; !ok {
		o := e.Breaks("LOG-2", []string{"a data member (required by LoggingMessageNotification)"}, probe.Describe(ev), ev.Seq)
		return &o
	}
	if raw, ok := p["logger"]; ok {
		var logger string
		if json.Unmarshal(raw, &logger) != nil {
			o := e.Breaks("LOG-2", []string{"logger is a string"}, probe.Describe(ev), ev.Seq)
			return &o
		}
	}
	return nil
}

func loggingMessageShape(ctx context.Context, e *probe.Env) verdict.Outcome {
	declared := e.S.Server() != nil && e.S.Server().HasCapability("logging")
	// 2026-07-28 has no logging/setLevel: the level is the request's own.
	var opts []peer.CallOption
	if e.Is2026() {
		opts = append(opts, peer.WithLogLevel("debug"))
	} else if declared {
		if err := e.S.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": "debug"}, nil); err != nil {
			return verdict.Errorf("logging/setLevel debug: %v", err)
		}
	}
	args := e.Profile.Log.CloneArgs()
	if e.Control != nil {
		args["messages"] = []any{
			map[string]any{"level": "info", "logger": "mcpflight", "data": map[string]any{"probe": 1}},
			map[string]any{"level": "error", "data": "a plain string"},
		}
	}
	first := e.Log.Len()
	if err := e.S.Request(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Log.Name, "arguments": args}, nil, opts...); err != nil {
		return verdict.Errorf("calling %s: %v", e.Profile.Log.Name, err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	n := 0
	for _, ev := range e.Log.Since(first) {
		if ev.Dir != chrono.In || ev.Summary == nil || ev.Summary.Method != mcp.NotificationMessage {
			continue
		}
		if !declared {
			return e.Breaks("LOG-1", []string{"no notifications/message from a server that did not declare logging"}, probe.Describe(ev), ev.Seq)
		}
		if o := judgeLogMessage(e, ev); o != nil {
			return *o
		}
		n++
	}
	if n == 0 {
		return verdict.Infof("the log tool sent no notifications/message")
	}
	return verdict.Passf("%d log messages, each with a valid level and data", n)
}

func loggingNoFloodAfterCancel(ctx context.Context, e *probe.Env) verdict.Outcome {
	opts := []peer.CallOption{peer.WithProgress()}
	if e.Is2026() {
		// The level is the request's own (LOG-43); there is no setLevel.
		opts = append(opts, peer.WithLogLevel("debug"))
	} else if err := e.S.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": "debug"}, nil); err != nil {
		return verdict.Errorf("logging/setLevel debug: %v", err)
	}
	args := e.Profile.Slow.CloneArgs()
	args["key"], args["logSteps"], args["steps"] = "a", true, 3
	c, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Slow.Name, "arguments": args}, opts...)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	op := e.Follow(c, "a", 3)
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.S.Cancel(ctx, c, "mcpflight: stop logging"); err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	before := 0
	for _, ev := range e.Log.Since(c.SentSeq) {
		if ev.Dir != chrono.In || ev.Summary == nil || ev.Summary.Method != mcp.NotificationMessage {
			continue
		}
		if ev.Seq > c.CancelSeq {
			return e.Broke(e.NoFurtherMessageRule(), []string{fmt.Sprintf("no log messages about the operation after its cancel (seq %d)", c.CancelSeq)},
				probe.Describe(ev), ev.Seq)
		}
		before++
	}
	if before == 0 {
		return verdict.Infof("the operation logged nothing before the cancel either")
	}
	return verdict.Passf("%d log messages before the cancel, none after", before)
}
