package hostcancel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

// The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) driven
// against extServer, a small scripted server written for these tests. The
// reference server serves the extension too, and refext_test.go runs the
// controller against it with its worker counter as the stop evidence; the
// script stays for what a conforming reference server never does by
// itself: a status that stays working for a number of polls, a task whose
// seed state is already terminal (TSX-13), a tool result answered without
// a task (TSX-3), and a task ID unknown to tasks/cancel (TSX-54).

// extScript says how extServer answers.
type extScript struct {
	initial string   // the CreateTaskResult's status (TSX-13); working if empty
	before  []string // tasks/get statuses before tasks/cancel; the last repeats
	after   []string // tasks/get statuses after tasks/cancel; the last repeats
	// cancelUnknown: tasks/cancel and later tasks/get answer -32602
	// (TSX-53, TSX-54).
	cancelUnknown bool
	// direct: tools/call is answered with the tool's result (TSX-3).
	direct bool
	// hold: the tools/call answer waits for extServer.releaseCreate.
	hold bool
	// notifyOnCancel: after the ack, notifications/tasks carries the
	// final status of after on the listen stream (TSX-48, TSX-50).
	notifyOnCancel bool
	// workerKeepsGoing: the script's worker counter advances at every
	// tasks/get, also after the cancel (TSX-45: the server need not stop).
	workerKeepsGoing bool
}

const (
	extTaskID    = "786512e2-9e0d-44bd-8f29-789f320fe840"
	extResult    = `{"content":[{"type":"text","text":"Operation completed successfully."}],"isError":false}`
	extToolError = `{"content":[{"type":"text","text":"Failed to process request: invalid input"}],"isError":true}`
	extRPCError  = `{"code":-32603,"message":"API rate limit exceeded"}`
)

// extServer is the scripted extension server.
type extServer struct {
	sc       extScript
	result   string // the completed result
	wmu      sync.Mutex
	w        io.WriteCloser
	mu       sync.Mutex
	requests []*jsonrpc.Message
	cancels  int
	gets     int
	worker   int // the script's worker counter
	listenID *jsonrpc.ID
	held     chan struct{} // closed when a held tools/call arrived
	release  chan struct{}
	// unlistened is closed when notifications/cancelled arrives,
	// cancelSeen when the first tasks/cancel does.
	unlistened chan struct{}
	unlisten   sync.Once
	cancelSeen chan struct{}
}

func (x *extServer) write(format string, args ...any) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	fmt.Fprintf(x.w, format+"\n", args...)
}

// taskJSON is a DetailedTask of status with its inlined outcome.
func (x *extServer) taskJSON(resultType, status string) string {
	extra := ""
	switch status {
	case mcp.TaskCompleted:
		extra = `,"result":` + x.result
	case mcp.TaskFailed:
		extra = `,"statusMessage":"Tool execution failed: API rate limit exceeded","error":` + extRPCError
	}
	return fmt.Sprintf(`{"resultType":%q,"taskId":%q,"status":%q,"createdAt":"2026-07-28T10:30:00Z","lastUpdatedAt":"2026-07-28T10:40:00Z","ttlMs":60000,"pollIntervalMs":5%s,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake-ext","version":"2"}}}`,
		resultType, extTaskID, status, extra)
}

func pick(list []string, i int) string {
	if len(list) == 0 {
		return mcp.TaskWorking
	}
	return list[min(i, len(list)-1)]
}

func (x *extServer) serve(r io.Reader) {
	defer x.w.Close()
	frames := transport.NewFrameReader(r, 0)
	for {
		raw, err := frames.ReadFrame()
		if err != nil {
			return
		}
		m, err := jsonrpc.Decode(raw)
		if err != nil {
			continue
		}
		x.mu.Lock()
		x.requests = append(x.requests, m)
		x.mu.Unlock()
		if m.Method == "notifications/cancelled" {
			x.unlisten.Do(func() { close(x.unlistened) })
		}
		if m.Kind != jsonrpc.KindRequest {
			continue
		}
		x.answer(m)
	}
}

func (x *extServer) answer(m *jsonrpc.Message) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch m.Method {
	case "tools/call":
		out := x.taskJSON("task", firstOf(x.sc.initial, mcp.TaskWorking))
		if x.sc.direct {
			out = `{"resultType":"complete","content":[{"type":"text","text":"done at once"}],"isError":false}`
		}
		if x.sc.hold {
			close(x.held)
			go func() {
				<-x.release
				x.write(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, out)
			}()
			return
		}
		x.write(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, out)
	case "tasks/get":
		if x.sc.cancelUnknown && x.cancels > 0 {
			x.write(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}`, m.ID)
			return
		}
		status := pick(x.sc.before, x.gets)
		if x.cancels > 0 {
			status = pick(x.sc.after, x.gets)
		}
		if x.cancels == 0 || x.sc.workerKeepsGoing {
			x.worker++
		}
		x.gets++
		x.write(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, x.taskJSON("complete", status))
	case "tasks/cancel":
		x.cancels++
		if x.cancels == 1 {
			defer close(x.cancelSeen)
		}
		x.gets = 0
		if x.sc.cancelUnknown {
			x.write(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}`, m.ID)
			return
		}
		// An empty acknowledgement, also for a terminal task (TSX-44, A-17).
		x.write(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete"}}`, m.ID)
		if x.sc.notifyOnCancel && x.listenID != nil {
			final := x.sc.after[len(x.sc.after)-1]
			x.write(`{"jsonrpc":"2.0","method":"notifications/tasks","params":%s}`,
				x.withSubscription(x.taskJSON("complete", final)))
		}
	case hostcancel.MethodListen:
		id := m.ID
		x.listenID = &id
		x.write(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"taskIds":[%q]},"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, extTaskID, id)
	default:
		// tasks/result is removed (TSX-65).
		x.write(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID)
	}
}

// withSubscription puts the listen request's ID in a notification's _meta
// (SUB-5).
func (x *extServer) withSubscription(task string) string {
	var obj map[string]any
	_ = json.Unmarshal([]byte(task), &obj)
	meta, _ := obj["_meta"].(map[string]any)
	meta["io.modelcontextprotocol/subscriptionId"] = json.RawMessage(x.listenID.String())
	out, _ := json.Marshal(obj)
	return string(out)
}

// ack is the script's worker acknowledgement: the counter across one
// more tasks/get.
func (x *extServer) ack(ctx context.Context, op *hostcancel.Operation) (bool, string, error) {
	x.mu.Lock()
	before := x.worker
	x.mu.Unlock()
	if _, err := op.Poll(ctx); err != nil {
		return false, "", err
	}
	x.mu.Lock()
	after := x.worker
	x.mu.Unlock()
	return after == before, fmt.Sprintf("script worker %d → %d", before, after), nil
}

func (x *extServer) seen(method string) []*jsonrpc.Message {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []*jsonrpc.Message
	for _, m := range x.requests {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// newExtServer returns the script's server and a session to it; there is
// no initialize in 2026-07-28.
func newExtServer(t *testing.T, sc extScript, result string) (*extServer, *peer.Session) {
	t.Helper()
	x := &extServer{sc: sc, result: firstOf(result, extResult), held: make(chan struct{}), release: make(chan struct{}),
		unlistened: make(chan struct{}), cancelSeen: make(chan struct{})}
	s, _ := pipeSession(t, func(r io.Reader, w io.WriteCloser) {
		x.wmu.Lock()
		x.w = w
		x.wmu.Unlock()
		x.serve(r)
	})
	return x, s
}

// TestExtensionTerminalPaths drives every terminal path of the tasks
// extension through the same controller API as TestTerminalPaths.
func TestExtensionTerminalPaths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reqs   string // the TSX requirements the row shows
		sc     extScript
		result string
		policy hostcancel.Policy
		listen bool
		// hourPolls: polling is slowed to an hour, so only a
		// notification can move the operation on.
		hourPolls bool
		want      hostcancel.Classification
		unknown   hostcancel.UnknownReason
		alerts    []hostcancel.Alert
		cancels   int
		errorCode int
		// ack: a worker acknowledgement from the script's counter.
		ack bool
	}{
		{name: "eventually-cancelled", reqs: "TSX-44: the status may stay working after the ack",
			sc:   extScript{after: []string{"working", "working", "cancelled"}},
			want: hostcancel.CancelledVerified, cancels: 1},
		{name: "stays-working", reqs: "TSX-45: the server need not stop; the grace ending is the event under test",
			sc:   extScript{after: []string{"working"}},
			want: hostcancel.StillWorkingPastGrace, alerts: []hostcancel.Alert{hostcancel.AlertStillWorkingPastGrace}, cancels: 1},
		{name: "completed-after-ack", reqs: "TSX-44: a terminal status other than cancelled; TSX-27 result inlined; TSX-65 no tasks/result",
			sc:   extScript{after: []string{"working", "completed"}},
			want: hostcancel.CompletedBeforeCancel, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, cancels: 1},
		{name: "failed-after-ack", reqs: "TSX-29, TSX-60: failed carries the JSON-RPC error",
			sc:   extScript{after: []string{"failed"}},
			want: hostcancel.Failed, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, cancels: 1, errorCode: -32603},
		{name: "iserror-is-completed", reqs: "TSX-59, TSX-61: isError is completed, not failed, on the wire; the host reads the tool's error as failed, as under 2025-11-25 (TSK-76); A-17 cancel of a terminal task is acked",
			sc: extScript{after: []string{"completed"}}, result: extToolError,
			want: hostcancel.Failed, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, cancels: 1},
		{name: "terminal-at-creation", reqs: "TSX-13: the seed state may already be terminal",
			sc:   extScript{initial: "completed", before: []string{"completed"}},
			want: hostcancel.CompletedBeforeCancel, cancels: 0},
		{name: "cancel-acked-worker-running", reqs: "TSX-44, TSX-45: acknowledged and cancelled on paper, the work goes on",
			sc:  extScript{after: []string{"cancelled"}, workerKeepsGoing: true},
			ack: true, want: hostcancel.WorkerStillRunning, alerts: []hostcancel.Alert{hostcancel.AlertCancelAckedWorkerRunning}, cancels: 1},
		{name: "cancelled-worker-stopped", reqs: "TSX-44: cancelled, and the worker counter stands still",
			sc:  extScript{after: []string{"working", "cancelled"}},
			ack: true, want: hostcancel.CancelledVerified, cancels: 1},
		{name: "cancel-unknown-task", reqs: "TSX-53, TSX-54: -32602 for an unknown task",
			sc:   extScript{cancelUnknown: true},
			want: hostcancel.OutcomeUnknown, unknown: hostcancel.UnknownTaskVanished, cancels: 1},
		{name: "direct-result", reqs: "TSX-3: the server may answer with the tool's result",
			sc:   extScript{direct: true},
			want: hostcancel.CompletedBeforeCancel, cancels: 0},
		{name: "detach", reqs: "seed 002: a host may detach",
			policy: hostcancel.Detach, want: hostcancel.OutcomeUnknown, unknown: hostcancel.UnknownDetached, cancels: 0},
		{name: "notification-is-state", reqs: "TSX-48, TSX-50, TSX-51: notifications/tasks on subscriptions/listen is the state",
			sc:     extScript{after: []string{"cancelled"}, notifyOnCancel: true},
			listen: true, hourPolls: true, want: hostcancel.CancelledVerified, cancels: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Log(tc.reqs)
			x, s := newExtServer(t, tc.sc, tc.result)
			ctx, cancel := context.WithTimeout(context.Background(), safety)
			defer cancel()
			grace := safety / 2
			if tc.want == hostcancel.StillWorkingPastGrace {
				grace = 150 * time.Millisecond
			}
			cfg := hostcancel.Config{Session: s, Revision: hostcancel.RevTasksExtension, Server: peer.Implementation{Name: "fake-ext"},
				Policy: tc.policy, Grace: grace, NoListen: !tc.listen}
			if tc.hourPolls {
				cfg.MinPoll, cfg.MaxPoll = time.Hour, time.Hour
			}
			if tc.ack {
				cfg.Ack = x.ack
			}
			c := hostcancel.New(cfg)
			op, err := c.Start(ctx, hostcancel.Call{Tool: "get_weather", Arguments: map[string]any{"city": "New York"}, Progress: true})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.sc.direct {
				created := op.LastKnown()
				if created.TaskID != extTaskID || created.TTL == nil || *created.TTL != 60000 || created.PollInterval == nil || *created.PollInterval != 5 {
					t.Errorf("CreateTaskResult read as %+v (ttlMs, pollIntervalMs: TSX-11, TSX-12)", created.Task)
				}
				if _, err := op.Poll(ctx); err != nil {
					t.Fatal(err)
				}
			}
			r := op.Abort(ctx, "budget ended")
			if r.Classification != tc.want || r.Unknown != tc.unknown {
				t.Errorf("%s/%s (%s), want %s/%s", r.Classification, r.Unknown, r.Detail, tc.want, tc.unknown)
			}
			if diff := cmp.Diff(tc.alerts, r.Alerts); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
			wantOpen := slices.ContainsFunc(tc.alerts, hostcancel.NewBreaker().Opens)
			if err := c.Breaker().Allow("fake-ext", "get_weather"); errors.Is(err, hostcancel.ErrCircuitOpen) != wantOpen {
				t.Errorf("circuit: %v, want open %v", err, wantOpen)
			}
			if n := len(x.seen("tasks/cancel")); n != tc.cancels {
				t.Errorf("%d tasks/cancel, want %d", n, tc.cancels)
			}
			if n := len(x.seen("tasks/result")); n != 0 {
				t.Errorf("%d tasks/result: the extension removed it (TSX-65)", n)
			}
			if r.Revision != hostcancel.RevTasksExtension || (!tc.sc.direct && (r.TaskID != extTaskID || r.Server.Name != "fake-ext" || r.Server.Version != "2")) {
				t.Errorf("what is known: revision %s task %q server %+v", r.Revision, r.TaskID, r.Server)
			}
			switch tc.want {
			case hostcancel.CompletedBeforeCancel:
				want := firstOf(tc.result, extResult)
				if tc.sc.direct {
					want = `{"resultType":"complete","content":[{"type":"text","text":"done at once"}],"isError":false}`
				}
				if string(r.Result) != want {
					t.Errorf("result %s, want %s (inlined, TSX-27)", r.Result, want)
				}
			case hostcancel.Failed:
				switch {
				case tc.result != "" && string(r.Result) != tc.result:
					t.Errorf("result %s, want the tool's isError result %s (TSX-61)", r.Result, tc.result)
				case tc.result == "" && (r.ResultError == nil || r.ResultError.Code != tc.errorCode):
					t.Errorf("error %+v, want code %d (TSX-60)", r.ResultError, tc.errorCode)
				}
			}
			if tc.hourPolls {
				// One tasks/get before the abort, one sticky check after
				// the notification: none in between.
				if n := len(x.seen("tasks/get")); n != 2 {
					t.Errorf("%d tasks/get; the notification should have settled it (TSX-51)", n)
				}
				if cs := c.Counters(); cs.StatusNotifications != 1 {
					t.Errorf("status notifications %d, want 1", cs.StatusNotifications)
				}
			}
			checkExtensionWire(t, x, tc.listen && !tc.sc.direct)
		})
	}
}

// checkExtensionWire checks what every row sends: the per-request _meta
// (RPC-51) declaring the extension on each request (TSX-2, TSX-56), no
// "task" parameter (TSX-66), no progress token for a task (PRG-46), and
// notifications/cancelled only to end the listen stream (SUB-10), never for
// a task (CAN-4).
func checkExtensionWire(t *testing.T, x *extServer, listened bool) {
	t.Helper()
	if listened {
		select {
		case <-x.unlistened:
		case <-time.After(safety):
			t.Error("the listen stream was not ended after the settlement (SUB-10)")
		}
	}
	x.mu.Lock()
	reqs := slices.Clone(x.requests)
	listenID := x.listenID
	x.mu.Unlock()
	for _, m := range reqs {
		var p struct {
			Task *json.RawMessage           `json:"task"`
			Meta map[string]json.RawMessage `json:"_meta"`
			Req  json.RawMessage            `json:"requestId"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Errorf("%s params %s: %v", m.Method, m.Params, err)
			continue
		}
		if m.Kind == jsonrpc.KindNotification {
			if m.Method != "notifications/cancelled" || listenID == nil || string(p.Req) != listenID.String() {
				t.Errorf("notification %s %s: only the listen stream is cancelled (SUB-10, CAN-4)", m.Method, m.Params)
			}
			continue
		}
		if string(p.Meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` {
			t.Errorf("%s: _meta protocolVersion %s (RPC-51)", m.Method, p.Meta["io.modelcontextprotocol/protocolVersion"])
		}
		var caps struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(p.Meta["io.modelcontextprotocol/clientCapabilities"], &caps) != nil || caps.Extensions[hostcancel.ExtensionTasks] == nil {
			t.Errorf("%s: the request does not declare the extension (TSX-2, TSX-56): %s", m.Method, m.Params)
		}
		if p.Task != nil {
			t.Errorf("%s carries a task parameter (TSX-66)", m.Method)
		}
		if _, ok := p.Meta["progressToken"]; ok {
			t.Errorf("%s asks for progress on a task (PRG-46)", m.Method)
		}
	}
	if got := len(x.seen(hostcancel.MethodListen)); got != map[bool]int{false: 0, true: 1}[listened] {
		t.Errorf("%d subscriptions/listen, want listened=%v", got, listened)
	}
	if n := len(x.seen("notifications/cancelled")); listened && n != 1 {
		t.Errorf("%d notifications/cancelled, want the one that ends the listen stream (SUB-10)", n)
	}
}

// TestExtensionCancelBeforeCreateTaskResult: under the extension too, an
// abort before the CreateTaskResult keeps the request; the cancel follows
// the task ID.
func TestExtensionCancelBeforeCreateTaskResult(t *testing.T) {
	x, s := newExtServer(t, extScript{hold: true, after: []string{"cancelled"}}, "")
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	c := hostcancel.New(hostcancel.Config{Session: s, Revision: hostcancel.RevTasksExtension, NoListen: true})
	op, err := c.Begin(ctx, hostcancel.Call{Tool: "get_weather"})
	if err != nil {
		t.Fatal(err)
	}
	<-x.held
	op.Stop("user pressed stop")
	if _, err := op.Wait(ctx); !errors.Is(err, hostcancel.ErrAborted) {
		t.Fatalf("Wait: %v, want ErrAborted", err)
	}
	settled := make(chan hostcancel.Result, 1)
	go func() { settled <- op.Settle(ctx) }()
	close(x.release)
	r := <-settled
	if r.Classification != hostcancel.CancelledVerified || r.TaskID != extTaskID {
		t.Errorf("%s task %q (%s)", r.Classification, r.TaskID, r.Detail)
	}
	if n := len(x.seen("tasks/cancel")); n != 1 {
		t.Errorf("%d tasks/cancel, want 1", n)
	}
	checkExtensionWire(t, x, false)
}

// TestExtensionConsequential: the key rides in the arguments when the
// host says so, a receipt in the inlined result is read, and a retry with
// the same key before reconciliation is refused with nothing sent.
func TestExtensionConsequential(t *testing.T) {
	receipt := `{"content":[{"type":"text","text":"charged"}],"structuredContent":{"receipt":"pay-9","applied":true},"isError":false}`
	x, s := newExtServer(t, extScript{before: []string{"working", "completed"}}, receipt)
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	c := hostcancel.New(hostcancel.Config{Session: s, Revision: hostcancel.RevTasksExtension, NoListen: true,
		Effects: &hostcancel.Effects{Tools: []string{"charge"}, KeyIn: hostcancel.KeyInArguments}})
	op, err := c.Start(ctx, hostcancel.Call{Tool: "charge", Arguments: map[string]any{"amount": 9}, Key: "invoice-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, hostcancel.Call{Tool: "charge", Key: "invoice-9"}); !errors.Is(err, hostcancel.ErrNotReconciled) {
		t.Errorf("a replacement before reconciliation: %v, want ErrNotReconciled", err)
	}
	if n := len(x.seen("tools/call")); n != 1 {
		t.Errorf("%d tools/call sent, want 1: the replacement must not go out", n)
	}
	if _, err := op.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	r := op.Settle(ctx)
	if r.Classification != hostcancel.CompletedBeforeCancel || r.Receipt == nil || *r.Receipt != (hostcancel.Receipt{ID: "pay-9", Applied: true}) || r.Effect != hostcancel.EffectApplied {
		t.Errorf("%s receipt %+v effect %s", r.Classification, r.Receipt, r.Effect)
	}
	var p struct {
		Arguments map[string]any `json:"arguments"`
	}
	_ = json.Unmarshal(x.seen("tools/call")[0].Params, &p)
	if p.Arguments["idempotencyKey"] != "invoice-9" || p.Arguments["amount"] != float64(9) {
		t.Errorf("arguments %v: the key goes in the arguments as configured", p.Arguments)
	}
	if e, ok := c.Ledger("invoice-9"); !ok || !e.Reconciled() {
		t.Errorf("ledger %+v", e)
	}
	if cs := c.Counters(); cs.ByAlert[hostcancel.AlertReplacementBeforeReconcile] != 1 {
		t.Errorf("counters %+v", cs)
	}
}

// firstOf returns the first non-empty string.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestExtensionRepeatedCancel: two cancellation requests for one task send
// one tasks/cancel and alert once.
func TestExtensionRepeatedCancel(t *testing.T) {
	x, s := newExtServer(t, extScript{after: []string{"cancelled"}}, "")
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	var ev events
	c := hostcancel.New(hostcancel.Config{Session: s, Revision: hostcancel.RevTasksExtension, NoListen: true, OnAlert: ev.alert})
	op, err := c.Start(ctx, hostcancel.Call{Tool: "get_weather"})
	if err != nil {
		t.Fatal(err)
	}
	first, second := op.Abort(ctx, "stop"), op.Abort(ctx, "stop again")
	if first.Classification != hostcancel.CancelledVerified || second.Classification != first.Classification {
		t.Errorf("%s then %s", first.Classification, second.Classification)
	}
	if n := len(x.seen("tasks/cancel")); n != 1 {
		t.Errorf("%d tasks/cancel, want 1", n)
	}
	if diff := cmp.Diff([]hostcancel.Alert{hostcancel.AlertRepeatedCancel}, ev.alertNames()); diff != "" {
		t.Errorf("alerts (-want +got):\n%s", diff)
	}
}

// TestExtensionSettlementInterrupted: a caller that stops the
// verification before the grace ends gets an unknown outcome, not the
// still-working alert: the grace did not end, so nothing is known.
func TestExtensionSettlementInterrupted(t *testing.T) {
	x, s := newExtServer(t, extScript{after: []string{"working"}}, "")
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	c := hostcancel.New(hostcancel.Config{Session: s, Revision: hostcancel.RevTasksExtension, NoListen: true, Grace: safety})
	op, err := c.Start(ctx, hostcancel.Call{Tool: "get_weather"})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopSettling := context.WithCancelCause(ctx)
	go func() {
		<-x.cancelSeen
		stopSettling(errors.New("second Ctrl-C"))
	}()
	r := op.Abort(sctx, "stop")
	if r.Classification != hostcancel.OutcomeUnknown || r.Unknown != hostcancel.UnknownInterrupted || r.Alert {
		t.Errorf("%s/%s alerts %v (%s), want outcome-unknown/settlement-interrupted and no alert", r.Classification, r.Unknown, r.Alerts, r.Detail)
	}
}
