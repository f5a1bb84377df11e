package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// The rules of 2025-11-25's handshake and utilities that the wire
// decides: a ping's answer (PNG-1), notifications/initialized before the
// client's first request but ping (LIF-4), logging/setLevel's answer to a
// valid level (LOG-2), and a plain call of a tool that requires a task
// (TSK-12).

// maxRequiredTools bounds the names of the tools a session keeps as
// requiring a task; past it the oldest are forgotten, and a plain call of
// one goes unjudged.
const maxRequiredTools = 1024

// handshake is what the lifecycle rules keep of a session.
type handshake struct {
	// initAnswered: the server answered initialize with a result;
	// initialized: the client then sent notifications/initialized.
	initAnswered, initialized bool
	// early is the client's first request but ping after initialize's
	// result and before notifications/initialized, over Streamable HTTP,
	// where the two may have been sent side by side on separate POSTs:
	// it is judged once the crossing window has passed without the
	// notification. reported is set once LIF-4 was reported.
	early    *request
	reported bool
	// taskCalls: the server's initialize result declared
	// tasks.requests.tools.call; required are the tools its tools/list
	// gave execution.taskSupport "required", nil until one did.
	taskCalls bool
	required  *boundedSet
}

// initializeAnswered takes the server's result to initialize: the
// handshake is done, and the capabilities say whether tools/list's
// taskSupport binds (TSK-12's tool-level negotiation).
func (s *session) initializeAnswered(result json.RawMessage) {
	s.hand.initAnswered = true
	var r struct {
		Capabilities struct {
			Tasks struct {
				Requests struct {
					Tools struct {
						Call declaration `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) == nil {
		s.hand.taskCalls = bool(r.Capabilities.Tasks.Requests.Tools.Call)
	}
}

// clientRequested judges a request the client sent after initialize's
// result: until notifications/initialized, only ping (LIF-4: the client
// sends it after a successful initialization, to say it is ready for
// normal operations). Over stdio the pipe keeps the order the client
// wrote in; over Streamable HTTP the notification and the request may
// travel side by side, so the request waits for the crossing window.
func (s *session) clientRequested(r *request, ev chrono.Event) {
	h := &s.hand
	if !h.initAnswered || h.initialized || h.reported || r.method == mcp.MethodPing || r.method == mcp.MethodInitialize || s.is2026() {
		return
	}
	if s.http() {
		if h.early == nil {
			h.early = r
		}
		return
	}
	s.uninitialized(r, ev.Seq, "")
}

// initializedSent takes the client's notifications/initialized: a
// request it was waiting for (Streamable HTTP) is excused when the
// notification came within the crossing window after it.
func (s *session) initializedSent(ev chrono.Event) {
	h := &s.hand
	if h.initialized {
		return
	}
	h.initialized = true
	if r := h.early; r != nil {
		h.early = nil
		if ev.Offset-r.at > s.window() {
			s.uninitialized(r, r.seq, fmt.Sprintf(" (it came at #%d, after the crossing window)", ev.Seq))
		}
	}
}

// graceUninitialized judges the request waiting for notifications/initialized
// once the crossing window has passed without it (advance, end).
func (s *session) graceUninitialized(ended bool) {
	h := &s.hand
	if r := h.early; r != nil && (ended || s.now-r.at > s.window()) {
		h.early = nil
		s.uninitialized(r, r.seq, "")
	}
}

// uninitialized reports LIF-4 once for r, sent at seq before
// notifications/initialized.
func (s *session) uninitialized(r *request, seq uint64, after string) {
	s.hand.reported = true
	s.exercise(RuleInitializedFirst, Client)
	s.find(RuleInitializedFirst, Client, verdict.Req("LIF-4"), seq, false,
		"request %s (%s) came after initialize's result and before notifications/initialized%s: the client sends it first, to say it is ready for normal operations",
		r.id, quote(r.method), after)
}

// pingAnswered judges the answer to a ping under 2025-11-25: an empty
// result (PNG-1), a result with no member but _meta. A ping cancelled by
// its sender, or whose POST was refused at the HTTP layer (a session the
// server no longer knows), is not judged.
func (s *session) pingAnswered(side Side, r *request, ev chrono.Event, m *jsonrpc.Message, isError bool) {
	if s.is2026() || r.cancelSeq > 0 || r.status != 0 && r.status/100 != 2 {
		return
	}
	if !isError && m.Result == nil {
		return // an answer cut short: its body is unread
	}
	s.exercise(RulePingAnswered, side)
	switch {
	case isError:
		s.find(RulePingAnswered, side, verdict.Req("PNG-1"), ev.Seq, false,
			"ping %s (sent at #%d) was answered with error %s: the receiver answers a ping with an empty result", r.id, r.seq, errText(m))
	case !emptyResult(m.Result):
		s.find(RulePingAnswered, side, verdict.Req("PNG-1"), ev.Seq, false,
			"ping %s (sent at #%d) was answered with %s: the receiver answers a ping with an empty result", r.id, r.seq, quote(string(m.Result)))
	}
}

// emptyResult reports whether a result is an object with no member but
// _meta, which every result may carry.
func emptyResult(raw json.RawMessage) bool {
	if inner, ok := bytes.CutPrefix(raw, []byte("{")); ok && len(bytes.Trim(inner, " \t\r\n")) == 1 && inner[len(inner)-1] == '}' {
		return true // "{}", spaced or not: a ping's result, decoded for nothing
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil || members == nil {
		return false
	}
	delete(members, mcp.MetaKey)
	return len(members) == 0
}

// levelAnswered judges logging/setLevel's error under 2025-11-25: a
// level that is one of RFC 5424's eight (LOG-2) refused with -32602
// (Invalid params) calls a valid level invalid. Other errors are not
// judged: a server without logging answers -32601, a configuration
// error is -32603 (LOG-6).
func (s *session) levelAnswered(r *request, ev chrono.Event, level string) {
	if s.is2026() || !slices.Contains(levels, level) {
		return
	}
	s.exercise(RuleLevelAccepted, Server)
	if r.isError && r.errCode == jsonrpc.CodeInvalidParams {
		s.find(RuleLevelAccepted, Server, verdict.Req("LOG-2"), ev.Seq, false,
			"logging/setLevel %s asked for %s, one of RFC 5424's eight levels, and was refused with %d %s", r.id, quote(level), r.errCode, quote(r.errMsg))
	}
}

// toolsListed takes a page of tools/list while the server declares
// task-augmented tools/call: each tool's execution.taskSupport, kept for
// the tools that require a task and forgotten for those listed
// otherwise.
func (s *session) toolsListed(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	h := &s.hand
	for _, t := range r.Tools {
		switch {
		case t.Execution.TaskSupport == "required":
			if h.required == nil {
				h.required = newBoundedSet(maxRequiredTools)
			}
			h.required.add(t.Name)
		case h.required != nil:
			h.required.remove(t.Name)
		}
	}
}

// toolsChanged forgets the tools that required a task: after
// notifications/tools/list_changed the list the client read may be stale
// until it lists them again.
func (s *session) toolsChanged() { s.hand.required = nil }

// requiresTask reports whether a tools/call of tool without a task is
// one TSK-12 binds: the server declared task-augmented tools/call and
// listed the tool with taskSupport "required".
func (s *session) requiresTask(tool string, taskAug bool) bool {
	h := &s.hand
	return !taskAug && h.taskCalls && h.required != nil && h.required.has(tool) && !s.is2026()
}

// plainCallAnswered judges the answer to a tools/call without a task of
// a tool that requires one: the server refuses it (TSK-12 names -32601,
// TSK-72 allows -32600, ambiguity A-3), so a result, isError or not,
// served what it may not. An error is not judged here: which code the
// server picks is check's tasks/required-without-task's to grade.
func (s *session) plainCallAnswered(r *request, ev chrono.Event, isError bool) {
	s.exercise(RuleTaskRequired, Server)
	if !isError {
		s.find(RuleTaskRequired, Server, verdict.Req("TSK-12"), ev.Seq, false,
			"tools/call %s (sent at #%d) called tool %s without a task, which tools/list said requires one, and was served with a result: the server refuses it with -32601",
			r.id, r.seq, quote(r.tool))
	}
}
