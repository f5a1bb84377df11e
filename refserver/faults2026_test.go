package refserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// probeEnv is what a fault probe drives: a stdio connection (c) or the
// HTTP endpoint (w), with raw frames.
type probeEnv struct {
	c *client2026
	w *http2026
}

// faultProbe shows one 2026-07-28 fault: probe observes the wire and
// returns what it saw; want is the conforming server's observation,
// faulted the one under the fault.
type faultProbe struct {
	fault         Fault
	opts          Options
	http          bool
	probe         func(t *testing.T, e probeEnv) string
	want, faulted string
}

// answerOf names a response: "result" or the error code.
func answerOf(m *jsonrpc.Message) string {
	if m == nil {
		return "none"
	}
	if m.Kind == jsonrpc.KindError {
		return strconv.Itoa(m.Error.Code)
	}
	return "result"
}

// resultType is a result's resultType, or its outcome when it is an error.
func resultTypeOf(t *testing.T, m *jsonrpc.Message) string {
	if m.Kind != jsonrpc.KindResult {
		return answerOf(m)
	}
	return str(resultObject(t, m)["resultType"])
}

// count counts the frames seen with method, from index from on.
func (c *client2026) count(method string, from int) int {
	n := 0
	for _, f := range c.seen[from:] {
		if f.msg != nil && f.msg.Method == method {
			n++
		}
	}
	return n
}

// listenAndTeardown opens a subscription (meta declares the extension),
// lets between run, tears the subscription down, and returns the index of
// the first frame after the listen request was sent and its ID.
func (c *client2026) listenAndTeardown(filter map[string]any, meta map[string]any, between func()) (int, jsonrpc.ID) {
	c.t.Helper()
	from := len(c.seen)
	sub := c.id()
	c.send2026(sub, mcp.MethodSubscriptionsListen, map[string]any{"notifications": filter}, meta)
	if between != nil {
		between()
	}
	c.result2026(mcp.MethodControlTeardown, map[string]any{"subscriptionId": sub}, nil, nil)
	return from, sub
}

// slowArgs2026 are the arguments of an ungated slow call.
func slowCall(key string) map[string]any {
	return map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": key, "steps": 1, "gated": false}}
}

func workerCall(args map[string]any) map[string]any {
	return map[string]any{"name": ToolTaskWorker, "arguments": args}
}

// logCall logs one debug and one error message.
func logCall() map[string]any {
	return map[string]any{"name": ToolLog, "arguments": map[string]any{"messages": []any{
		map[string]any{"level": "debug", "data": "d"}, map[string]any{"level": "error", "data": "e"}}}}
}

// finishedTask starts an ungated task_worker with args, waits for its end
// and returns its ID.
func (c *client2026) finishedTask(args map[string]any) string {
	c.t.Helper()
	args["gated"] = false
	r := c.startWorker(args)
	c.await2026(args["key"].(string)+"/end", nil)
	return r.TaskID
}

func faultProbes() []faultProbe {
	only2026 := Options{Protocols: []string{spec.V20260728}}
	return []faultProbe{
		{fault: FaultNoResultType, want: "complete", faulted: "(absent)", probe: func(t *testing.T, e probeEnv) string {
			return resultTypeOf(t, e.c.call2026(mcp.MethodToolsList, nil, nil))
		}},
		{fault: FaultNoServerInfo, want: "true true", faulted: "false false", probe: func(t *testing.T, e probeEnv) string {
			has := func(m *jsonrpc.Message) bool {
				return strings.Contains(string(resultObject(t, m)[mcp.MetaKey]), mcp.MetaServerInfo)
			}
			return fmt.Sprint(has(e.c.call2026(mcp.MethodServerDiscover, nil, nil)), has(e.c.call2026(mcp.MethodToolsCall, slowCall("a"), nil)))
		}},
		{fault: FaultDiscoverMissingVersion, want: "2026-07-28,2025-11-25,2025-06-18,2025-03-26 2025-11-25", faulted: "2026-07-28 2025-11-25", probe: func(t *testing.T, e probeEnv) string {
			var d struct {
				Versions []string `json:"supportedVersions"`
			}
			e.c.result2026(mcp.MethodServerDiscover, nil, nil, &d)
			var init struct {
				Version string `json:"protocolVersion"`
			}
			e.c.result(mcp.MethodInitialize, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}, &init)
			return strings.Join(d.Versions, ",") + " " + init.Version
		}},
		{fault: FaultWrongVersionError, want: `-32022 {"requested":"1900-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]}`, faulted: "-32602 ", probe: func(t *testing.T, e probeEnv) string {
			m := e.c.call2026(mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, "1900-01-01"))
			return answerOf(m) + " " + string(m.Error.Data)
		}},
		{fault: FaultStickyVersion, want: "-32022 result -32022", faulted: "-32022 result result", probe: func(t *testing.T, e probeEnv) string {
			unknown := func() string {
				return answerOf(e.c.call2026(mcp.MethodToolsList, nil, meta2026(mcp.MetaProtocolVersion, "1900-01-01")))
			}
			first := unknown()
			return first + " " + answerOf(e.c.call2026(mcp.MethodToolsList, nil, nil)) + " " + unknown()
		}},
		{fault: FaultEnvelopeNotChecked, want: "-32602", faulted: "result", probe: func(t *testing.T, e probeEnv) string {
			return answerOf(e.c.call2026(mcp.MethodToolsList, nil, meta2026(mcp.MetaClientCapabilities, nil)))
		}},
		{fault: FaultStickyCapabilities, want: "task complete", faulted: "task task", probe: func(t *testing.T, e probeEnv) string {
			first := resultTypeOf(t, e.c.call2026(mcp.MethodToolsCall, slowCall("a"), taskMeta()))
			return first + " " + resultTypeOf(t, e.c.call2026(mcp.MethodToolsCall, slowCall("b"), nil))
		}},
		{fault: FaultTaskForUndeclaredClient, want: "complete -32021", faulted: "task task", probe: func(t *testing.T, e probeEnv) string {
			slow := resultTypeOf(t, e.c.call2026(mcp.MethodToolsCall, slowCall("a"), nil))
			return slow + " " + resultTypeOf(t, e.c.call2026(mcp.MethodToolsCall, workerCall(map[string]any{"key": "w", "gated": false}), nil))
		}},
		{fault: FaultTaskMethodsWithoutCapability, want: "-32021 -32021 -32021", faulted: "-32602 -32602 -32602", probe: func(t *testing.T, e probeEnv) string {
			var out []string
			for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
				out = append(out, answerOf(e.c.call2026(m, map[string]any{"taskId": "task-x", "inputResponses": map[string]any{}}, nil)))
			}
			return strings.Join(out, " ")
		}},
		{fault: FaultHeaderMismatchAccepted, http: true, want: "400 -32020 400 -32020", faulted: "200 result 200 result", probe: func(t *testing.T, e probeEnv) string {
			_, b := e.w.body(mcp.MethodToolsList, nil, nil)
			x := e.w.do(b, map[string]string{HeaderMethod: mcp.MethodToolsCall})
			_, b = e.w.body(mcp.MethodToolsCall, slowCall("a"), nil)
			y := e.w.do(b, map[string]string{HeaderName: ""})
			return fmt.Sprint(x.resp.StatusCode, " ", answerOf(x.response()), " ", y.resp.StatusCode, " ", answerOf(y.response()))
		}},
		{fault: FaultPingOn2026, want: "-32601 -32601", faulted: "result result", probe: func(t *testing.T, e probeEnv) string {
			return answerOf(e.c.call2026(mcp.MethodPing, nil, nil)) + " " + answerOf(e.c.call2026(mcp.MethodLoggingSetLevel, map[string]any{"level": "info"}, nil))
		}},
		{fault: FaultTasksResultOn2026, want: "-32601", faulted: "result", probe: func(t *testing.T, e probeEnv) string {
			return answerOf(e.c.call2026(mcp.MethodTasksList, nil, taskMeta()))
		}},
		{fault: FaultUnknownMethod200, http: true, want: "404 -32601", faulted: "200 -32601", probe: func(t *testing.T, e probeEnv) string {
			x := e.w.call("nope/nothing", nil, nil)
			return fmt.Sprint(x.resp.StatusCode, " ", answerOf(x.response()))
		}},
		{fault: FaultStreamCloseNotCancel, http: true, want: "cancelled", faulted: "running", probe: func(t *testing.T, e probeEnv) string {
			_, b := e.w.body(mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a"}}, nil)
			s := e.w.start(b)
			e.w.await("a/start", nil)
			s.close()
			e.w.await("a/disconnected", nil)
			return e.w.counters(nil).Operations["a"].State
		}},
		{fault: FaultLogWithoutLevel, want: "0", faulted: "2", probe: func(t *testing.T, e probeEnv) string {
			from := len(e.c.seen)
			e.c.call2026(mcp.MethodToolsCall, logCall(), nil)
			return strconv.Itoa(e.c.count(mcp.NotificationMessage, from))
		}},
		{fault: FaultLogBelowLevel, want: "1", faulted: "2", probe: func(t *testing.T, e probeEnv) string {
			from := len(e.c.seen)
			e.c.call2026(mcp.MethodToolsCall, logCall(), meta2026(mcp.MetaLogLevel, "warning"))
			return strconv.Itoa(e.c.count(mcp.NotificationMessage, from))
		}},
		{fault: FaultAcceptUnknownLogLevel, want: "-32602 0", faulted: "result 2", probe: func(t *testing.T, e probeEnv) string {
			from := len(e.c.seen)
			m := e.c.call2026(mcp.MethodToolsCall, logCall(), meta2026(mcp.MetaLogLevel, "loud"))
			return answerOf(m) + " " + strconv.Itoa(e.c.count(mcp.NotificationMessage, from))
		}},
		{fault: FaultListenLogs, want: "0", faulted: "1", probe: func(t *testing.T, e probeEnv) string {
			from, _ := e.c.listenAndTeardown(map[string]any{"toolsListChanged": true}, meta2026(mcp.MetaLogLevel, "debug"), nil)
			return strconv.Itoa(e.c.count(mcp.NotificationMessage, from))
		}},
		{fault: FaultListenNoAck, want: "1", faulted: "0", probe: func(t *testing.T, e probeEnv) string {
			from, _ := e.c.listenAndTeardown(map[string]any{"toolsListChanged": true}, nil, nil)
			return strconv.Itoa(e.c.count(mcp.NotificationSubscriptionsAcknowledged, from))
		}},
		{fault: FaultListenNoSubscriptionID, want: "ack result", faulted: "", probe: func(t *testing.T, e probeEnv) string {
			_, sub := e.c.listenAndTeardown(map[string]any{"toolsListChanged": true}, nil, nil)
			var out []string
			for _, f := range e.c.seen {
				if f.msg == nil || !strings.Contains(string(f.raw), `"`+mcp.MetaSubscriptionID+`":`+sub.String()) {
					continue
				}
				if f.msg.Kind.IsResponse() {
					out = append(out, "result")
				} else {
					out = append(out, "ack")
				}
			}
			return strings.Join(out, " ")
		}},
		{fault: FaultListenUnrequested, want: "0", faulted: "1", probe: func(t *testing.T, e probeEnv) string {
			asked := e.c.finishedTask(map[string]any{"key": "asked", "ticks": 1})
			e.c.startWorker(map[string]any{"key": "other", "ticks": 1})
			from, _ := e.c.listenAndTeardown(map[string]any{"taskIds": []string{asked}}, taskMeta(), func() {
				e.c.release2026("other/start", nil)
				e.c.release2026("other/tick/1", nil)
				e.c.await2026("other/end", nil)
			})
			return strconv.Itoa(e.c.count(mcp.NotificationTasks, from))
		}},
		{fault: FaultTeardownSilent, want: "result", faulted: "none", probe: func(t *testing.T, e probeEnv) string {
			_, sub := e.c.listenAndTeardown(map[string]any{"toolsListChanged": true}, nil, nil)
			if at := e.c.responsesTo(sub); len(at) > 0 {
				return answerOf(e.c.seen[at[0]].msg)
			}
			return "none"
		}},
		{fault: FaultServerSendsCancelled, want: "0", faulted: "1", probe: func(t *testing.T, e probeEnv) string {
			id := e.c.id()
			e.c.send2026(id, mcp.MethodToolsCall, map[string]any{"name": ToolSlow, "arguments": map[string]any{"key": "a"}}, nil)
			e.c.await2026("a/start", nil)
			from := len(e.c.seen)
			e.c.cancelReq(id)
			e.c.await2026("a/end", nil)
			return strconv.Itoa(e.c.count(mcp.NotificationCancelled, from))
		}},
		{fault: FaultRequestOnStdout, want: "0 result", faulted: "1 result", probe: func(t *testing.T, e probeEnv) string {
			from := len(e.c.seen)
			m := e.c.call2026(mcp.MethodToolsCall, logCall(), nil)
			n := 0
			for _, f := range e.c.seen[from:] {
				if f.msg != nil && f.msg.Kind == jsonrpc.KindRequest {
					n++
				}
			}
			return strconv.Itoa(n) + " " + answerOf(m)
		}},
		{fault: FaultProgressCrossesStreams, http: true, want: "own", faulted: "other", probe: func(t *testing.T, e probeEnv) string {
			return firstStreamOfA(t, e, map[string]any{}, `"pa"`, meta2026(mcp.MetaProgressToken, "pa"), meta2026(mcp.MetaProgressToken, "pb"))
		}},
		{fault: FaultLogCrossesStreams, http: true, want: "own", faulted: "other", probe: func(t *testing.T, e probeEnv) string {
			// Step logs at debug and no progress token.
			debug := meta2026(mcp.MetaLogLevel, "debug")
			return firstStreamOfA(t, e, map[string]any{"logSteps": true}, `"operation":"a"`, debug, debug)
		}},
		{fault: FaultTaskCancelErrorOnTerminal, want: "result", faulted: "-32602", probe: func(t *testing.T, e probeEnv) string {
			id := e.c.finishedTask(map[string]any{"key": "w", "ticks": 1})
			return answerOf(e.c.call2026(mcp.MethodTasksCancel, map[string]any{"taskId": id}, taskMeta()))
		}},
		{fault: FaultCreateBeforeDurable, want: "result", faulted: "-32602", probe: func(t *testing.T, e probeEnv) string {
			r := e.c.startWorker(map[string]any{"key": "w", "ticks": 1})
			return answerOf(e.c.call2026(mcp.MethodTasksGet, map[string]any{"taskId": r.TaskID}, taskMeta()))
		}},
		{fault: FaultIsErrorTaskFailed, want: mcp.TaskCompleted, faulted: mcp.TaskFailed, probe: func(t *testing.T, e probeEnv) string {
			return e.c.getTask(e.c.finishedTask(map[string]any{"key": "w", "ticks": 1, "end": "fail"})).Status
		}},
		{fault: FaultTaskResultNotInlined, want: "true true", faulted: "false false", probe: func(t *testing.T, e probeEnv) string {
			done := e.c.getTask(e.c.finishedTask(map[string]any{"key": "w", "ticks": 1}))
			failed := e.c.getTask(e.c.finishedTask(map[string]any{"key": "x", "ticks": 1, "end": "error"}))
			return fmt.Sprint(done.Result != nil, failed.Error != nil)
		}},
		{fault: FaultGetTaskResultTypeTask, want: "complete", faulted: "task", probe: func(t *testing.T, e probeEnv) string {
			id := e.c.finishedTask(map[string]any{"key": "w", "ticks": 1})
			return resultTypeOf(t, e.c.call2026(mcp.MethodTasksGet, map[string]any{"taskId": id}, taskMeta()))
		}},
		{fault: FaultTaskUpdateRejectsUnknownKey, want: "result", faulted: "-32602", probe: func(t *testing.T, e probeEnv) string {
			r := e.c.startWorker(map[string]any{"key": "w", "ticks": 1})
			return answerOf(e.c.call2026(mcp.MethodTasksUpdate, map[string]any{"taskId": r.TaskID, "inputResponses": map[string]any{"never": map[string]any{"action": "accept"}}}, taskMeta()))
		}},
		{fault: FaultExtTaskIDInternalError, want: "-32602 -32602 -32602", faulted: "-32603 -32603 -32603", probe: func(t *testing.T, e probeEnv) string {
			var out []string
			for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
				out = append(out, answerOf(e.c.call2026(m, map[string]any{"taskId": 42}, taskMeta())))
			}
			return strings.Join(out, " ")
		}},
		{fault: FaultListenBadFilterCrash, want: "-32602", faulted: "crashed", probe: func(t *testing.T, e probeEnv) string {
			id := e.c.id()
			e.c.send2026(id, mcp.MethodSubscriptionsListen, map[string]any{"notifications": 42}, nil)
			for {
				f, ok := e.c.next()
				if !ok {
					return "crashed"
				}
				if f.msg != nil && f.msg.Kind.IsResponse() && f.msg.ID == id {
					return answerOf(f.msg)
				}
			}
		}},
		{fault: FaultNoAccelBuffering, http: true, want: "no", faulted: "", probe: func(t *testing.T, e probeEnv) string {
			return e.w.call(mcp.MethodToolsCall, slowCall("a"), nil).resp.Header.Get("X-Accel-Buffering")
		}},
		{fault: FaultEventIDsOn2026, http: true, want: "false", faulted: "true", probe: func(t *testing.T, e probeEnv) string {
			return fmt.Sprint(e.w.call(mcp.MethodToolsCall, slowCall("a"), nil).eventID)
		}},
		{fault: FaultSessionOn2026, http: true, want: "false", faulted: "true", probe: func(t *testing.T, e probeEnv) string {
			return fmt.Sprint(e.w.call(mcp.MethodServerDiscover, nil, nil).resp.Header.Get("Mcp-Session-Id") != "")
		}},
		{fault: FaultGetOn2026, http: true, want: "405 405", faulted: "200 200", probe: func(t *testing.T, e probeEnv) string {
			var out []string
			for _, m := range []string{http.MethodGet, http.MethodDelete} {
				resp := e.w.open(context.Background(), m, nil, nil)
				resp.Body.Close()
				out = append(out, strconv.Itoa(resp.StatusCode))
			}
			return strings.Join(out, " ")
		}},
		{fault: FaultStreamStaysOpen, http: true, want: "ends", faulted: "stays open", probe: func(t *testing.T, e probeEnv) string {
			id, b := e.w.body(mcp.MethodToolsCall, slowCall("a"), nil)
			s := e.w.start(b)
			if m := s.next(t); m == nil || m.ID != id {
				t.Fatalf("no response: %v", m)
			}
			// The server says what it did with the stream once the
			// response is on it; a conforming stream then ends.
			prefix := "http: the response stream of request " + id.String() + " "
			e.w.stderr.wait(t, prefix)
			if strings.Contains(e.w.stderr.text(), prefix+"ends") {
				if m := s.next(t); m != nil {
					t.Errorf("a frame after the response: %s", m.Raw)
				}
				return "ends"
			}
			return "stays open"
		}},
		{fault: FaultInitializeErrorWithoutVersions, opts: only2026, want: `-32022 {"requested":"2025-11-25","supported":["2026-07-28"]}`, faulted: "-32601 ", probe: func(t *testing.T, e probeEnv) string {
			m := e.c.call(mcp.MethodInitialize, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})
			return answerOf(m) + " " + string(m.Error.Data)
		}},
	}
}

// TestFaults2026: every 2026-07-28 fault changes the wire as its
// description says, and without it the server does the right thing; each
// names requirements of the registry, of the 2026-07-28 revision or the
// tasks extension.
func TestFaults2026(t *testing.T) {
	probed := map[Fault]bool{}
	for _, p := range faultProbes() {
		probed[p.fault] = true
		reqs, transport, ok := Fault2026Requirements(p.fault)
		if !ok || len(reqs) == 0 {
			t.Errorf("%s: no requirements", p.fault)
		}
		for _, id := range reqs {
			if r, ok := spec.Lookup(id); !ok || !r.AppliesTo(spec.V20260728) {
				t.Errorf("%s: requirement %s is not a 2026-07-28 one of the registry", p.fault, id)
			}
		}
		if (transport == OnHTTP) != p.http {
			t.Errorf("%s shows on %s but is probed over %s", p.fault, transport, map[bool]string{true: "http", false: "stdio"}[p.http])
		}
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fault=%v", p.fault, on), func(t *testing.T) {
				opts := p.opts
				opts.Faults = FaultSet{p.fault: on}
				var e probeEnv
				if p.http {
					e.w = newHTTP2026(t, opts)
				} else {
					e.c = newClient2026(newHarnessWith(t, opts))
				}
				want := p.want
				if on {
					want = p.faulted
				}
				if got := p.probe(t, e); got != want {
					t.Errorf("observed %q, want %q", got, want)
				}
			})
		}
	}
	for _, f := range Faults2026() {
		if !probed[f] {
			t.Errorf("fault %s has no probe", f)
		}
		if f.Description() == "" {
			t.Errorf("fault %s has no description", f)
		}
		if _, err := ParseFault(string(f)); err != nil {
			t.Errorf("ParseFault(%s): %v", f, err)
		}
	}
}

// firstStreamOfA starts two gated slow calls, a and b (with extra
// arguments, and the _meta of each), on two POSTs, releases only a's
// first step, and reports whether the first event on either stream, which
// must contain want (a's notification), came on a's stream ("own") or
// b's ("other").
func firstStreamOfA(t *testing.T, e probeEnv, extra map[string]any, want string, metaA, metaB map[string]any) string {
	t.Helper()
	args := func(key string) map[string]any {
		a := map[string]any{"key": key, "steps": 2}
		maps.Copy(a, extra)
		return map[string]any{"name": ToolSlow, "arguments": a}
	}
	_, ba := e.w.body(mcp.MethodToolsCall, args("a"), metaA)
	sa := e.w.start(ba)
	_, bb := e.w.body(mcp.MethodToolsCall, args("b"), metaB)
	sb := e.w.start(bb)
	e.w.await("a/start", nil)
	e.w.await("b/start", nil)
	e.w.release("a/start", nil)
	select {
	case ev := <-sa.events:
		if !strings.Contains(ev.Data, want) {
			t.Fatalf("a's stream: %s", ev.Data)
		}
		return "own"
	case ev := <-sb.events:
		if !strings.Contains(ev.Data, want) {
			t.Fatalf("b's stream: %s", ev.Data)
		}
		return "other"
	case <-time.After(safety):
		t.Fatal("nothing on either stream within the safety bound")
	}
	return ""
}
