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
	"github.com/mcpflight/mcpflight/verdict"
)

// logging2026Cases cover logging in 2026-07-28 (server/utilities/logging,
// deprecated): there is no logging/setLevel; a request asks for log
// messages with io.modelcontextprotocol/logLevel in its own _meta, and
// gets none without it.
func logging2026Cases() []probe.Case {
	return []probe.Case{
		// LOG-41 MUST NOT: "The server MUST NOT emit `notifications/message` for a request that
		//   does not include this field."
		// LOG-42 MUST NOT: "If absent, the server MUST NOT send any notifications/message
		//   notifications for this request."
		{
			ID:       "logging/none-without-level",
			Title:    "no log message for a request without logLevel",
			Reqs:     []string{"LOG-41", "LOG-42"},
			Versions: only2026(),
			Needs:    probe.Needs{LogTool: true},
			Sends:    "the profile's log tool (on a controlled target: messages at debug, info, warning and error) with no logLevel in _meta",
			Expect:   "no notifications/message at all",
			Run:      loggingNoneWithoutLevel,
		},
		// LOG-43 MAY: "When the field is present, the server MAY send `notifications/message`
		//   notifications at or above the requested level on the response stream of that request,
		//   before the final response."
		// LOG-2 DEF: "The protocol follows the standard syslog severity levels specified in RFC
		//   5424:"
		{
			ID:       "logging/request-level-filter",
			Title:    "a request's logLevel filters lower levels",
			Reqs:     []string{"LOG-43", "LOG-2"},
			Versions: only2026(),
			Needs:    probe.Needs{LogTool: true},
			Sends:    `the log tool with _meta logLevel "warning" (on a controlled target: messages at debug, info, warning and error)`,
			Expect:   "only warning and error messages, before the response",
			Run:      loggingRequestLevelFilter,
		},
		// LOG-45 SHOULD: "If the `io.modelcontextprotocol/logLevel` value carried in a request's
		//   `_meta` is not a recognized log level, the server SHOULD reject that request with a
		//   standard JSON-RPC error: ▸ Invalid log level: `-32602` (Invalid params) ▸ Internal
		//   errors: `-32603` (Internal error)"
		{
			ID:       "logging/unknown-level-rejected",
			Title:    "an unknown logLevel rejects the whole request",
			Reqs:     []string{"LOG-45"},
			Versions: only2026(),
			Needs:    probe.Needs{LogTool: true},
			Sends:    `the log tool with _meta logLevel "verbose"`,
			Expect:   "error -32602 (Invalid params), and no log message: the tool is not run",
			Run:      loggingUnknownLevel,
		},
	}
}

// logArgs are the log tool's arguments; on a controlled target it logs
// one message at each of levels.
func logArgs(e *probe.Env, levels ...string) map[string]any {
	args := e.Profile.Log.CloneArgs()
	if e.Control != nil {
		var msgs []any
		for _, lvl := range levels {
			msgs = append(msgs, map[string]any{"level": lvl, "logger": "mcpflight", "data": "probe at " + lvl})
		}
		args["messages"] = msgs
	}
	return args
}

// logMessagesAfter are the notifications/message read after seq, with
// their levels.
func logMessagesAfter(e *probe.Env, seq uint64) ([]chrono.Event, []string) {
	var evs []chrono.Event
	var levels []string
	for _, ev := range e.Log.Since(seq) {
		if ev.Dir != chrono.In || ev.Summary == nil || ev.Summary.Method != mcp.NotificationMessage {
			continue
		}
		var p struct {
			Level string `json:"level"`
		}
		if m, err := ev.Message(); err == nil {
			_ = json.Unmarshal(m.Params, &p)
		}
		evs, levels = append(evs, ev), append(levels, p.Level)
	}
	return evs, levels
}

func loggingNoneWithoutLevel(ctx context.Context, e *probe.Env) verdict.Outcome {
	first := e.Log.Len()
	if err := e.S.Request(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Log.Name, "arguments": logArgs(e, "debug", "info", "warning", "error")}, nil,
		peer.WithoutMeta(mcp.MetaLogLevel)); err != nil {
		return verdict.Errorf("calling %s: %v", e.Profile.Log.Name, err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if evs, _ := logMessagesAfter(e, first); len(evs) > 0 {
		return e.Breaks("LOG-41", []string{"no notifications/message for a request without io.modelcontextprotocol/logLevel"}, probe.Describe(evs[0]), evs[0].Seq)
	}
	return verdict.Passf("no log message for a request that set no logLevel")
}

func loggingRequestLevelFilter(ctx context.Context, e *probe.Env) verdict.Outcome {
	first := e.Log.Len()
	c, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Log.Name, "arguments": logArgs(e, "debug", "info", "warning", "error")},
		peer.WithLogLevel("warning"))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if _, err := c.Await(ctx); err != nil {
		return verdict.Errorf("calling %s: %v", e.Profile.Log.Name, err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	_, respSeq := c.Response()
	evs, levels := logMessagesAfter(e, first)
	for i, ev := range evs {
		idx := slices.Index(mcp.LogLevels(), levels[i])
		switch {
		case idx < 0:
			return e.Breaks("LOG-2", []string{fmt.Sprintf("a level that is one of %v", mcp.LogLevels())}, probe.Describe(ev), ev.Seq)
		case idx < slices.Index(mcp.LogLevels(), "warning"):
			return e.Broke(verdict.Req("LOG-43").Except(verdict.Warn,
				"LOG-43 grants messages at or above the requested level only: one below it is outside what the sentence allows, though no MUST NOT forbids it in so many words"),
				[]string{"only messages at warning or above for a request whose logLevel is warning"}, probe.Describe(ev), ev.Seq)
		case !e.SeparateStreams() && ev.Seq > respSeq:
			return e.Broke(verdict.Req("LOG-43").Except(verdict.Warn,
				"LOG-43 grants messages before the final response only: one after it is outside what the sentence allows"),
				[]string{"log messages before the request's response"}, probe.Describe(ev), ev.Seq)
		}
	}
	if len(evs) == 0 {
		return verdict.Infof("no log messages arrived at all (LOG-43 allows none)")
	}
	return verdict.Passf("%d messages at warning or above; nothing below", len(evs))
}

func loggingUnknownLevel(ctx context.Context, e *probe.Env) verdict.Outcome {
	first := e.Log.Len()
	err := e.S.Request(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Log.Name, "arguments": logArgs(e, "error")}, nil,
		peer.WithLogLevel("verbose"))
	want := []string{"error -32602 (Invalid params) for the whole request"}
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
	case errors.As(err, &rpcErr):
		return e.Breaks("LOG-45", want, fmt.Sprintf("error %d: %s", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)), answerAfter(e, first))
	case err != nil:
		return verdict.Errorf("calling %s: %v", e.Profile.Log.Name, err)
	default:
		return e.Breaks("LOG-45", want, `logLevel "verbose" was accepted and the tool ran`, answerAfter(e, first))
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if evs, _ := logMessagesAfter(e, first); len(evs) > 0 {
		return e.Breaks("LOG-45", []string{"the request is rejected whole: the tool does not run, so nothing is logged"}, probe.Describe(evs[0]), evs[0].Seq)
	}
	return verdict.Passf("refused with -32602: %s", chrono.Sanitize(rpcErr.Message, false))
}
