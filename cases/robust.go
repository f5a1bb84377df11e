package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// robustCases are the target's robustness to bad input: what
// a receiver owes a frame that is no JSON-RPC message (JSON-RPC 2.0 §5: an
// error whose id is null when the id could not be read, -32700 for
// invalid JSON, -32600 for an invalid request), a request that reuses an
// ID still in flight, and a request with a missing, null or ill-typed
// required parameter (-32602). The client sending such frames breaks a
// rule itself (STD-5, RPC-6, the schema); what is judged is the server,
// which must answer or ignore them and keep answering afterwards: a
// server that exits or stops answering takes a whole host down.
//
// The bad-frame cases and the ill-typed params cases other than those that
// call a tool or set a level are tidy: what they send is either no request
// or a request answered with an error, and a pass (or an info) rests on
// the server answering after it, so a session goes on after them as
// after a ping (probe.Case.Tidy).
func robustCases() []probe.Case {
	both := []string{spec.V20251125, spec.V20260728}
	return []probe.Case{
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-11 MUST: "Error responses MUST include the same ID as the request they correspond to
		//   (except in error cases where the ID could not be read due a malformed request)."
		{
			ID:       "robust/not-json",
			Title:    "a line that is not JSON is refused or ignored, and the server keeps answering",
			Reqs:     []string{"RPC-2", "RPC-11"},
			Versions: both,
			Sends:    "one frame that is not JSON (a stdio line, or a POST body), then the revision's liveness request",
			Expect:   "error -32700 (or -32600) with id null, or no answer; the liveness request answered",
			Tidy:     true,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return badFrames(ctx, e, badFrame{what: "a line that is not JSON", raw: []byte("mcpflight: this line is not JSON {")})
			},
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-11 MUST: "Error responses MUST include the same ID as the request they correspond to
		//   (except in error cases where the ID could not be read due a malformed request)."
		{
			ID:       "robust/truncated-then-valid",
			Title:    "a truncated object does not swallow the valid line after it",
			Reqs:     []string{"RPC-2", "RPC-11"},
			Versions: both,
			Sends:    `{"jsonrpc":"2.0","method":"ping","id": cut short, then two liveness requests as the next lines (or POSTs): the second ends the wait for a server that took the first for the rest of the object`,
			Expect:   "error -32700 with id null, or no answer, for the first; both liveness requests answered",
			Tidy:     true,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return badFrames(ctx, e, badFrame{what: "a truncated JSON object", raw: jsonrpc.Malformed(jsonrpc.ClassParse), unfinished: true})
			},
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-11 MUST: "Error responses MUST include the same ID as the request they correspond to
		//   (except in error cases where the ID could not be read due a malformed request)."
		{
			ID:       "robust/empty-batch",
			Title:    "an empty batch is refused or ignored, and the server keeps answering",
			Reqs:     []string{"RPC-2", "RPC-11"},
			Versions: both,
			Sends:    "[]",
			Expect:   "error -32600 with id null, or no answer; the liveness request answered",
			Tidy:     true,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return badFrames(ctx, e, badFrame{what: "an empty batch", raw: []byte("[]")})
			},
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-11 MUST: "Error responses MUST include the same ID as the request they correspond to
		//   (except in error cases where the ID could not be read due a malformed request)."
		{
			ID:       "robust/non-object",
			Title:    "a bare number and a bare string are refused or ignored",
			Reqs:     []string{"RPC-2", "RPC-11"},
			Versions: both,
			Sends:    `42, then "x", each followed by the liveness request`,
			Expect:   "error -32600 with id null, or no answer, for each; the liveness requests answered",
			Tidy:     true,
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return badFrames(ctx, e, badFrame{what: "a bare number", raw: []byte("42")}, badFrame{what: "a bare string", raw: []byte(`"x"`)})
			},
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-11 MUST: "Error responses MUST include the same ID as the request they correspond to
		//   (except in error cases where the ID could not be read due a malformed request)."
		{
			ID:       "robust/wrong-version",
			Title:    `a request with "jsonrpc":"1.0" is refused or ignored`,
			Reqs:     []string{"RPC-2", "RPC-11"},
			Versions: both,
			Sends:    `{"jsonrpc":"1.0","method":"ping","id":"mcpflight-v1"}`,
			Expect:   `error -32600 with id null or "mcpflight-v1", or no answer (a result is recorded as info); the liveness request answered`,
			Tidy:     true,
			IDs:      []jsonrpc.ID{jsonrpc.StringID("mcpflight-v1")},
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return badFrames(ctx, e, badFrame{what: `a request with "jsonrpc":"1.0"`,
					raw: []byte(`{"jsonrpc":"1.0","method":"ping","id":"mcpflight-v1"}`), id: jsonrpc.StringID("mcpflight-v1")})
			},
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		// RPC-6 MUST NOT (2025-11-25 only): "The request ID MUST NOT have been previously used by
		//   the requestor within the same session."
		// RPC-7 MUST NOT (2026-07-28 only): "The request ID MUST NOT match the ID of any other
		//   request the sender has issued and not yet received a response for."
		{
			ID:        "robust/duplicate-inflight-id",
			Title:     "a request reusing an in-flight id does not cost the first its answer",
			Reqs:      []string{"RPC-2"},
			ReqsUnder: map[string][]string{spec.V20251125: {"RPC-6"}, spec.V20260728: {"RPC-7"}},
			Versions:  both,
			Needs:     probe.Needs{SlowTool: true},
			Sends:     "the slow tool with progress; once it is running, a ping (server/discover under 2026-07-28, which has no ping) whose id is the call's",
			Expect:    "the call answered; the duplicate answered, refused or dropped (info: RPC-6, and RPC-7 under 2026-07-28, bind only the sender)",
			Run:       duplicateInFlightID,
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-tools-call",
			Title:    "tools/call with a missing, null or ill-typed name or arguments is refused",
			Reqs:     []string{"RPC-2"},
			Versions: both,
			Needs:    probe.Needs{Capabilities: []string{"tools"}},
			Sends:    `tools/call with {}, {"name":null}, {"name":42} and a listed tool with "arguments":"x"`,
			Expect:   "error -32602 for each (another answer is recorded as info: no sentence fixes the code); the server keeps answering",
			Run:      paramsToolsCall,
		},
		// TSK-68 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Invalid or nonexistent `taskId` in `tasks/get`, `tasks/result`, or
		//   `tasks/cancel`: `-32602` (Invalid params)"
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-task-id",
			Title:    "tasks/get, tasks/result and tasks/cancel with a missing, null or ill-typed taskId get -32602",
			Reqs:     []string{"TSK-68", "RPC-2"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    `tasks/get, tasks/result and tasks/cancel, each with {}, {"taskId":null} and {"taskId":42}`,
			Expect:   "error -32602 for each; the server keeps answering",
			Tidy:     true,
			Run:      paramsTaskID,
		},
		// TSK-69 MUST: "Receivers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Invalid or nonexistent cursor in `tasks/list`: `-32602` (Invalid params)"
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-tasks-list-cursor",
			Title:    "tasks/list with an ill-typed cursor gets -32602",
			Reqs:     []string{"TSK-69", "RPC-2"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{TasksCapability: true},
			Sends:    `tasks/list with {"cursor":42} and {"cursor":true}`,
			Expect:   "error -32602 for each; the server keeps answering",
			Tidy:     true,
			Run:      paramsTasksListCursor,
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-tools-list-cursor",
			Title:    "tools/list with an ill-typed cursor is refused, and the server keeps answering",
			Reqs:     []string{"RPC-2"},
			Versions: both,
			Needs:    probe.Needs{Capabilities: []string{"tools"}},
			Sends:    `tools/list with {"cursor":42} and {"cursor":true}`,
			Expect:   "error -32602 for each (another answer is recorded as info: no sentence fixes the code); the server keeps answering",
			Tidy:     true,
			Run:      paramsToolsListCursor,
		},
		// TSX-53 MUST: "Servers MUST return standard JSON-RPC errors for the following protocol
		//   error cases: ▸ Invalid or nonexistent `taskId`: `-32602` (Invalid params) ▸ Servers MUST
		//   return this error for `tasks/get`."
		// TSX-54 SHOULD: "Servers SHOULD return this error for `tasks/update` and `tasks/cancel`."
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-task-id-ext",
			Title:    "the tasks extension's tasks/get, tasks/update and tasks/cancel with a missing, null or ill-typed taskId get -32602",
			Reqs:     []string{"TSX-53", "TSX-54", "RPC-2"},
			Versions: only2026(),
			Needs:    probe.Needs{TasksExtension: true},
			Sends:    `tasks/get, tasks/update and tasks/cancel, each declaring the extension, with no taskId, {"taskId":null} and {"taskId":42}`,
			Expect:   "error -32602 for each (tasks/get: MUST, TSX-53; tasks/update and tasks/cancel: SHOULD, TSX-54); the server keeps answering",
			Tidy:     true,
			Run:      paramsExtTaskID,
		},
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-listen",
			Title:    "subscriptions/listen with a missing, null or ill-typed notifications filter is refused, and the server keeps answering",
			Reqs:     []string{"RPC-2"},
			Versions: only2026(),
			Sends:    `subscriptions/listen with no notifications, {"notifications":null} and {"notifications":42} (the schema requires the filter object)`,
			Expect:   "error -32602 for each (another error, or the request taken for a subscription and acknowledged, is recorded as info: no sentence fixes the code); the server keeps answering",
			Run:      paramsListen,
		},
		// LOG-6 SHOULD: "Servers SHOULD return standard JSON-RPC errors for common failure cases:
		//   ▸ Invalid log level: `-32602` (Invalid params) ▸ Configuration errors: `-32603`
		//   (Internal error)"
		// RPC-2 MUST: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
		//   specification."
		{
			ID:       "robust/params-set-level",
			Title:    "logging/setLevel with a missing, null or ill-typed level gets -32602",
			Reqs:     []string{"LOG-6", "RPC-2"},
			Versions: []string{spec.V20251125},
			Needs:    probe.Needs{Capabilities: []string{"logging"}},
			Sends:    `logging/setLevel with {}, {"level":null} and {"level":42}`,
			Expect:   "error -32602 for each; the server keeps answering",
			Run:      paramsSetLevel,
		},
	}
}

// badFrame is one frame that is no JSON-RPC message: what it is, its
// bytes, and the request id it carries when one can be read.
type badFrame struct {
	what string
	raw  []byte
	id   jsonrpc.ID
	// unfinished is a frame that a reader of JSON values (not of lines)
	// takes for the beginning of one the next line completes: the
	// liveness check sends a second line after the first
	// (probe.Env.AliveAfterSwallow), so that it concludes at once.
	unfinished bool
}

// aliveAfter is Env.AliveAfter, or AliveAfterSwallow for an unfinished
// frame.
func (f badFrame) aliveAfter(ctx context.Context, e *probe.Env) *verdict.Outcome {
	if f.unfinished {
		return e.AliveAfterSwallow(ctx, verdict.Req("RPC-2"), f.what)
	}
	return e.AliveAfter(ctx, verdict.Req("RPC-2"), f.what)
}

// badFrames sends each frame, then the liveness request, and judges what
// answered the frame and whether the server still answers.
func badFrames(ctx context.Context, e *probe.Env, frames ...badFrame) verdict.Outcome {
	var notes []string
	for _, f := range frames {
		bad, err := e.SendBad(ctx, f.raw)
		if err != nil {
			// The write or the POST itself failed: over HTTP a connection
			// the server closed on the frame is its answer, and the
			// liveness request says whether it is gone.
			if o := f.aliveAfter(ctx, e); o != nil {
				return *o
			}
			notes = append(notes, fmt.Sprintf("%s: the exchange failed (%s), the server still answers", f.what, chrono.Sanitize(err.Error(), false)))
			continue
		}
		if o := f.aliveAfter(ctx, e); o != nil {
			return *o
		}
		e.FindBadAnswer(&bad)
		if bad.Answer == nil && bad.Status == 0 {
			// Nothing yet: a server that answers in a goroutine of its own
			// may write the error after the liveness answer. Watch for it
			// (a barrier on a controlled target).
			if err := e.Quiesce(ctx); err != nil {
				return verdict.Errorf("%v", err)
			}
			e.FindBadAnswer(&bad)
		}
		note, o := judgeBadAnswer(e, f, bad)
		if o != nil {
			return *o
		}
		notes = append(notes, note)
	}
	return verdict.Passf("%s; the server kept answering", strings.Join(notes, "; "))
}

// judgeBadAnswer judges what answered one bad frame: nothing, an error
// with a null id (or, for a readable id, that id) and -32700 or -32600,
// or, over HTTP, an error status. It returns a note for the pass, or the
// outcome that ends the case.
func judgeBadAnswer(e *probe.Env, f badFrame, bad probe.BadInput) (string, *verdict.Outcome) {
	status := ""
	if bad.Status != 0 {
		status = fmt.Sprintf("HTTP %d", bad.Status)
	}
	want := []string{"error -32700 (invalid JSON) or -32600 (invalid request) with id null", "no answer at all"}
	if f.id.IsValid() {
		want[0] = fmt.Sprintf("error -32600 with id null or %s", f.id)
	}
	m := bad.Answer
	switch {
	case m == nil && bad.Body != "":
		if bad.Status/100 == 2 {
			o := e.Breaks("RPC-2", want, fmt.Sprintf("%s with a body that is no JSON-RPC message: %s", status, bad.Body), bad.AnswerSeq)
			return "", &o
		}
		return fmt.Sprintf("%s: refused with %s", f.what, status), nil
	case m == nil && bad.Status != 0 && bad.Status/100 != 2:
		return fmt.Sprintf("%s: refused with %s and no body", f.what, status), nil
	case m == nil:
		return fmt.Sprintf("%s: ignored (%s)", f.what, orText(status, "no answer")), nil
	case m.Kind == jsonrpc.KindError:
		idOK := m.NullID || (f.id.IsValid() && m.ID == f.id)
		if !idOK {
			o := e.Breaks("RPC-11", want, fmt.Sprintf("error %d with id %s, where the id could not be read: %s", m.Error.Code, m.ID, probe.Describe(e.EventAt(bad.AnswerSeq))), bad.AnswerSeq)
			return "", &o
		}
		if m.Error.Code != jsonrpc.CodeParseError && m.Error.Code != jsonrpc.CodeInvalidRequest {
			rule := verdict.Req("RPC-2").Except(verdict.Warn, "JSON-RPC 2.0 names -32700 and -32600 for these inputs but does not word their use as a MUST")
			o := e.Broke(rule, want, fmt.Sprintf("error %d (%s)", m.Error.Code, chrono.Sanitize(m.Error.Message, false)), bad.AnswerSeq)
			return "", &o
		}
		return fmt.Sprintf("%s: refused with error %d, id %s%s", f.what, m.Error.Code, idText(m), orText(prefixed(", ", status), "")), nil
	case m.Kind == jsonrpc.KindResult && f.id.IsValid() && m.ID == f.id:
		// JSON-RPC 2.0's "jsonrpc" MUST binds the sender; a receiver that
		// serves the request anyway is lenient, not broken.
		o := verdict.Infof(`%s was served as a valid request (a result for %s at seq %d): JSON-RPC 2.0 binds the sender, the receiver may be lenient`, f.what, f.id, bad.AnswerSeq)
		return "", &o
	}
	o := e.Breaks("RPC-2", want, "a "+m.Kind.String()+" answering input that is no request: "+probe.Describe(e.EventAt(bad.AnswerSeq)), bad.AnswerSeq)
	return "", &o
}

func idText(m *jsonrpc.Message) string {
	if m.NullID {
		return "null"
	}
	return m.ID.String()
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// duplicateInFlightID starts the slow tool, and once it is running sends
// a ping with the call's id. RPC-6 binds the sender, so what the server
// does with the duplicate (answer it, refuse it, drop it) is recorded as
// info; the first request was valid and is owed its answer (JSON-RPC 2.0,
// RPC-2), so a call left unanswered fails.
func duplicateInFlightID(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "dup-id", Progress: true})
	if err != nil {
		return verdict.Errorf("starting the slow tool: %v", err)
	}
	defer op.ReleaseAll(context.WithoutCancel(ctx))
	if err := op.AtStep(ctx, 1); err != nil {
		return verdict.Errorf("the slow call never reached its first step: %v", err)
	}
	id := op.Call.ID
	// 2026-07-28 has no ping: its liveness request is server/discover,
	// sent with the envelope like any request of the revision.
	dup, isDupAnswer := mcp.MethodPing, probe.IsEmptyResult
	if e.Is2026() {
		dup, isDupAnswer = mcp.MethodServerDiscover, isDiscoverResult
	}
	// The rule that binds the sender, named in the text only.
	sender := verdict.Req("RPC-6").Under(spec.V20260728, "RPC-7").ID(e.Revision)
	raw, err := e.S.Encode(id, dup, nil)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	from := e.Log.Len()
	if err := e.S.SendRaw(ctx, raw); err != nil {
		return verdict.Errorf("sending the duplicate: %v", err)
	}
	isID := probe.ResponseTo(id)
	collect := func() []chrono.Event {
		var answers []chrono.Event
		for _, ev := range e.Log.Since(from) {
			if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && isID(ev) {
				answers = append(answers, ev)
			}
		}
		return answers
	}
	// heldUntil is the last event before the call was released: an answer
	// before it came while the call was held, so it answered the
	// duplicate. Zero without control.
	var heldUntil uint64
	if e.Control != nil {
		// The call is held at its checkpoint: a barrier shows whatever
		// answered the duplicate. Then the call is released, and its end
		// checkpoint (reached after its answer) and a barrier show the
		// rest: nothing is left to wait for.
		if err := e.Quiesce(ctx); err != nil {
			return verdict.Errorf("%v", err)
		}
		heldUntil = e.Log.Len()
		if err := op.ReleaseAll(ctx); err != nil {
			return verdict.Errorf("releasing the slow call: %v", err)
		}
		if _, serr := op.Settle(ctx); serr != nil {
			return verdict.Errorf("the slow call did not end after its release: %v", serr)
		}
		if qerr := e.Quiesce(ctx); qerr != nil {
			return verdict.Errorf("%v", qerr)
		}
	} else {
		// The call's answer may take the slow tool's whole run; once it is
		// in, the duplicate's answer, which may never come (dropping it is
		// the server's choice), has the grace window and no more.
		// The call's remaining steps at the pace learned, plus windows
		// (Op.ResultBudget): only its remaining work can bring it. Each
		// progress of the call moves that end on, as Op.AwaitWhileProgressing
		// does: a call still stepping has not lost its answer, however
		// slowly a loaded machine lets it step. SlowBudget bounds it all.
		limit := e.SlowBudget()
		if dl, ok := ctx.Deadline(); ok {
			// An answer that never comes is the verdict, not a deadline error.
			limit = min(limit, time.Until(dl)-time.Second)
		}
		stop := time.Now().Add(max(limit, 0))
		end := time.Now().Add(op.ResultBudget())
		progress := probe.ProgressFor(op.Call.Token)
		watched := from
		for {
			answers := collect()
			if len(answers) >= 2 {
				break
			}
			if len(answers) == 1 && callAnswer(answers[0], isDupAnswer) {
				if err := e.Observe(ctx); err != nil {
					return verdict.Errorf("%v", err)
				}
				break
			}
			until := end
			if stop.Before(until) {
				until = stop
			}
			wctx, cancel := context.WithDeadline(ctx, until)
			ev, err := e.Log.WaitFor(wctx, watched, func(ev chrono.Event) bool {
				return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && (isID(ev) || progress(ev))
			})
			cancel()
			if err != nil {
				break
			}
			watched = ev.Seq
			if progress(ev) {
				end = time.Now().Add(op.ResultBudget())
			}
		}
	}
	if ctx.Err() != nil {
		return verdict.Errorf("the case deadline ended the wait: %v", ctx.Err())
	}
	answers := collect()
	if len(answers) > 2 {
		answers = answers[:2]
	}
	describe := func(ev chrono.Event) string { return probe.Describe(ev) }
	want := []string{fmt.Sprintf("the slow call answered (the duplicate answered, refused or dropped: %s binds only the sender)", sender)}
	switch len(answers) {
	case 0:
		return e.Breaks("RPC-2", want, fmt.Sprintf("neither the call nor the duplicate with id %s was ever answered", id), 0)
	case 1:
		m, merr := answers[0].Message()
		if merr != nil {
			return verdict.Errorf("reading the answer: %v", merr)
		}
		switch {
		case isDupAnswer(m):
			return e.Breaks("RPC-2", want, fmt.Sprintf("the duplicate %s got %s and the slow call with id %s was never answered", dup, describe(answers[0]), id), 0)
		case m.Kind == jsonrpc.KindError && answers[0].Seq <= heldUntil:
			return e.Breaks("RPC-2", want, fmt.Sprintf("the duplicate was refused (%s) while the call was held, and the call was never answered after it was released", describe(answers[0])), 0)
		case m.Kind == jsonrpc.KindError:
			return verdict.Infof("one answer for id %s, an error (%s): either the duplicate was refused and the call's answer dropped, or the call failed and the duplicate was dropped; the wire cannot tell which", id, describe(answers[0]))
		}
		if o := e.AliveAfter(ctx, verdict.Req("RPC-2"), "a duplicate request id"); o != nil {
			return *o
		}
		return verdict.Infof("the slow call was answered (%s) and the duplicate dropped: %s binds the sender, so dropping it is the server's choice", describe(answers[0]), sender)
	}
	if o := e.AliveAfter(ctx, verdict.Req("RPC-2"), "a duplicate request id"); o != nil {
		return *o
	}
	m0, merr := answers[0].Message()
	if merr == nil && m0.Kind == jsonrpc.KindError {
		return verdict.Infof("the duplicate with id %s was refused (%s) and the call answered (%s): %s binds the sender, refusing is the server's choice", id, describe(answers[0]), describe(answers[1]), sender)
	}
	if e.Control == nil && merr == nil && !isDupAnswer(m0) {
		// The call answered first, and nothing held it: it may have
		// ended before the duplicate reached the server, and then the
		// duplicate was never in flight beside it.
		return verdict.Unexercised("the slow call answered first (%s), then the duplicate (%s): nothing held the call, so whether the duplicate reached the server while the call still ran cannot be seen in this run", describe(answers[0]), describe(answers[1]))
	}
	return verdict.Infof("both requests with id %s were answered: %s, then %s (%s binds the sender; the server served both)", id, describe(answers[0]), describe(answers[1]), sender)
}

// callAnswer reports whether ev, a response to the id the slow call and
// the duplicate share, is the call's: a result that is not the
// duplicate's (isDup: ping's empty result, or a server/discover result
// under 2026-07-28).
func callAnswer(ev chrono.Event, isDup func(*jsonrpc.Message) bool) bool {
	m, err := ev.Message()
	return err == nil && m.Kind == jsonrpc.KindResult && !isDup(m)
}

// paramProbe is one request with a bad parameter.
type paramProbe struct {
	method string
	params any
	what   string
	// opts apply to the request (a capability it declares).
	opts []peer.CallOption
}

// sendProbes sends each probe and judges its answer: -32602 passes; judge
// decides the rest. The server must keep answering after them.
func sendProbes(ctx context.Context, e *probe.Env, probes []paramProbe, judge func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome) verdict.Outcome {
	var infos []string
	for _, p := range probes {
		a := e.SendParams(ctx, p.method, p.params, p.opts...)
		if a.Err != nil {
			if o := e.AliveAfter(ctx, verdict.Req("RPC-2"), p.method+" with "+p.what); o != nil {
				return *o
			}
			if ctx.Err() != nil {
				return verdict.Errorf("%v", ctx.Err())
			}
			o := e.Breaks("RPC-2", []string{"error -32602 (Invalid params)"}, fmt.Sprintf("%s with %s was never answered (%s), though the server answers other requests", p.method, p.what, a.Describe()), 0)
			return o
		}
		if a.Code == jsonrpc.CodeInvalidParams {
			continue
		}
		if o := judge(p, a); o != nil {
			if o.Verdict == verdict.Info {
				infos = append(infos, o.Summary)
				continue
			}
			return *o
		}
	}
	if o := e.AliveAfter(ctx, verdict.Req("RPC-2"), "requests with bad parameters"); o != nil {
		return *o
	}
	if len(infos) > 0 {
		return verdict.Infof("%s", strings.Join(infos, "; "))
	}
	return verdict.Passf("%d requests with a missing, null or ill-typed parameter, each refused with -32602", len(probes))
}

func paramsToolsCall(ctx context.Context, e *probe.Env) verdict.Outcome {
	probes := []paramProbe{
		{method: mcp.MethodToolsCall, params: map[string]any{}, what: "no name"},
		{method: mcp.MethodToolsCall, params: map[string]any{"name": nil}, what: "a null name"},
		{method: mcp.MethodToolsCall, params: map[string]any{"name": 42}, what: "a name that is a number"},
	}
	if tools, err := e.S.ListTools(ctx); err == nil && len(tools) > 0 {
		probes = append(probes, paramProbe{method: mcp.MethodToolsCall, params: map[string]any{"name": tools[0].Name, "arguments": "x"},
			what: fmt.Sprintf("arguments that are a string (tool %q)", chrono.Sanitize(tools[0].Name, false))})
	}
	return sendProbes(ctx, e, probes, func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome {
		// No sentence of either revision fixes the code for a malformed
		// tools/call: -32602 is what JSON-RPC 2.0 names for it.
		o := verdict.Infof("tools/call with %s got %s, not -32602 (no sentence of the registry fixes the code)", p.what, a.Describe())
		return &o
	})
}

func paramsTaskID(ctx context.Context, e *probe.Env) verdict.Outcome {
	var probes []paramProbe
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		probes = append(probes,
			paramProbe{method: m, params: map[string]any{}, what: "no taskId"},
			paramProbe{method: m, params: map[string]any{"taskId": nil}, what: "a null taskId"},
			paramProbe{method: m, params: map[string]any{"taskId": 42}, what: "a taskId that is a number"})
	}
	return sendProbes(ctx, e, probes, func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome {
		o := e.Breaks("TSK-68", []string{"error -32602 (Invalid params)"}, fmt.Sprintf("%s with %s got %s", p.method, p.what, a.Describe()), a.Seq)
		return &o
	})
}

func paramsTasksListCursor(ctx context.Context, e *probe.Env) verdict.Outcome {
	if !e.S.Server().Tasks().List {
		return verdict.Skipf("capability tasks.list not advertised")
	}
	probes := []paramProbe{
		{method: mcp.MethodTasksList, params: map[string]any{"cursor": 42}, what: "a cursor that is a number"},
		{method: mcp.MethodTasksList, params: map[string]any{"cursor": true}, what: "a cursor that is a boolean"},
	}
	return sendProbes(ctx, e, probes, func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome {
		o := e.Breaks("TSK-69", []string{"error -32602 (Invalid params)"}, fmt.Sprintf("tasks/list with %s got %s", p.what, a.Describe()), a.Seq)
		return &o
	})
}

func paramsSetLevel(ctx context.Context, e *probe.Env) verdict.Outcome {
	probes := []paramProbe{
		{method: mcp.MethodLoggingSetLevel, params: map[string]any{}, what: "no level"},
		{method: mcp.MethodLoggingSetLevel, params: map[string]any{"level": nil}, what: "a null level"},
		{method: mcp.MethodLoggingSetLevel, params: map[string]any{"level": 42}, what: "a level that is a number"},
	}
	return sendProbes(ctx, e, probes, func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome {
		o := e.Breaks("LOG-6", []string{"error -32602 (Invalid params)"}, fmt.Sprintf("logging/setLevel with %s got %s", p.what, a.Describe()), a.Seq)
		return &o
	})
}

// isDiscoverResult reports whether m is a server/discover result: the
// answer to the duplicate under 2026-07-28.
func isDiscoverResult(m *jsonrpc.Message) bool {
	if m == nil || m.Kind != jsonrpc.KindResult {
		return false
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(m.Result, &v) != nil {
		return false
	}
	_, ok := v["supportedVersions"]
	return ok
}

func paramsToolsListCursor(ctx context.Context, e *probe.Env) verdict.Outcome {
	probes := []paramProbe{
		{method: mcp.MethodToolsList, params: map[string]any{"cursor": 42}, what: "a cursor that is a number"},
		{method: mcp.MethodToolsList, params: map[string]any{"cursor": true}, what: "a cursor that is a boolean"},
	}
	return sendProbes(ctx, e, probes, func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome {
		// The schema makes the cursor a string; no sentence of either
		// revision fixes the answer to one that is not.
		o := verdict.Infof("tools/list with %s got %s, not -32602 (no sentence of the registry fixes the code)", p.what, a.Describe())
		return &o
	})
}

// paramsExtTaskID is robust/params-task-id for the tasks extension of
// 2026-07-28: each request declares the extension, so that what is
// judged is the taskId, not the missing capability (TSX-56).
func paramsExtTaskID(ctx context.Context, e *probe.Env) verdict.Outcome {
	var probes []paramProbe
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
		opts := []peer.CallOption{declareTasks()}
		probes = append(probes,
			paramProbe{m, map[string]any{}, "no taskId", opts},
			paramProbe{m, map[string]any{"taskId": nil}, "a null taskId", opts},
			paramProbe{m, map[string]any{"taskId": 42}, "a taskId that is a number", opts})
	}
	return sendProbes(ctx, e, probes, func(p paramProbe, a probe.ParamsAnswer) *verdict.Outcome {
		rule := "TSX-54" // SHOULD, for tasks/update and tasks/cancel
		if p.method == mcp.MethodTasksGet {
			rule = "TSX-53" // MUST
		}
		o := e.Breaks(rule, []string{"error -32602 (Invalid params)"}, fmt.Sprintf("%s with %s got %s", p.method, p.what, a.Describe()), a.Seq)
		return &o
	})
}

// paramsListen sends subscriptions/listen with a broken notifications
// filter. A server that takes such a request for a subscription answers
// nothing but its acknowledgement (SUB-2): that is recorded as info, and
// the subscription is cancelled. A request neither answered nor
// acknowledged while the server answers others fails RPC-2.
func paramsListen(ctx context.Context, e *probe.Env) verdict.Outcome {
	probes := []paramProbe{
		{method: mcp.MethodSubscriptionsListen, params: map[string]any{}, what: "no notifications filter"},
		{method: mcp.MethodSubscriptionsListen, params: map[string]any{"notifications": nil}, what: "a null notifications filter"},
		{method: mcp.MethodSubscriptionsListen, params: map[string]any{"notifications": 42}, what: "a notifications filter that is a number"},
	}
	var infos []string
	for _, p := range probes {
		c, err := e.S.Start(ctx, p.method, p.params)
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		isResp := probe.ResponseTo(c.ID)
		wctx, cancel, _ := e.WithPatience(ctx)
		ev, werr := e.Log.WaitFor(wctx, c.SentSeq, func(ev chrono.Event) bool {
			return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && (isResp(ev) || isAck(ev))
		})
		cancel()
		if ctx.Err() != nil {
			return verdict.Errorf("%v", ctx.Err())
		}
		if werr != nil {
			if o := e.AliveAfter(ctx, verdict.Req("RPC-2"), "subscriptions/listen with "+p.what); o != nil {
				return *o
			}
			return e.Breaks("RPC-2", []string{"error -32602 (Invalid params)", "an acknowledgement (the request taken for a subscription)"},
				fmt.Sprintf("subscriptions/listen with %s was neither answered nor acknowledged within %v, though the server answers other requests (were it taken for a subscription, its missing acknowledgement would break SUB-2)", p.what, e.Patience()), 0)
		}
		if isAck(ev) {
			infos = append(infos, fmt.Sprintf("subscriptions/listen with %s was taken for a subscription and acknowledged (seq %d)", p.what, ev.Seq))
			// A subscription the server has ended already (its result
			// came right behind the acknowledgement) needs no cancel.
			if err := e.S.Cancel(ctx, c, "mcpflight: end the subscription"); err != nil && !errors.Is(err, peer.ErrNotPending) {
				return verdict.Errorf("cancelling the subscription: %v", err)
			}
			continue
		}
		m, merr := ev.Message()
		if merr != nil {
			return verdict.Errorf("reading the answer: %v", merr)
		}
		switch {
		case m.Kind == jsonrpc.KindError && m.Error.Code == jsonrpc.CodeInvalidParams:
		case m.Kind == jsonrpc.KindError && m.Error.Code == jsonrpc.CodeMethodNotFound:
			return listenFailed(errListenNotServed)
		case m.Kind == jsonrpc.KindError:
			infos = append(infos, fmt.Sprintf("subscriptions/listen with %s got error %d (seq %d), not -32602 (no sentence of the registry fixes the code)", p.what, m.Error.Code, ev.Seq))
		default:
			infos = append(infos, fmt.Sprintf("subscriptions/listen with %s got a result (seq %d): a subscription ended at once, not -32602 (no sentence of the registry fixes the code)", p.what, ev.Seq))
		}
	}
	if o := e.AliveAfter(ctx, verdict.Req("RPC-2"), "subscriptions/listen with a broken filter"); o != nil {
		return *o
	}
	if len(infos) > 0 {
		return verdict.Infof("%s", strings.Join(infos, "; "))
	}
	return verdict.Passf("%d subscriptions/listen requests with a missing, null or ill-typed notifications filter, each refused with -32602", len(probes))
}
