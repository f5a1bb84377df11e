package hostcancel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) against
// the reference server, which serves it (refserver/tasksext.go): the same
// controller and API as 2025-11-25, and the reference server's worker
// counter, not a script's word, decides whether the work stopped.

// revisions are the task revisions every shared test runs under.
var revisions = []hostcancel.Revision{hostcancel.Rev20251125, hostcancel.RevTasksExtension}

// envelope2026 is a 2026-07-28 envelope that declares the tasks extension.
func envelope2026() peer.Envelope {
	return peer.Envelope{ProtocolVersion: spec.V20260728, ClientInfo: &peer.Implementation{Name: "hostcancel-test", Version: "0"},
		ClientCapabilities: map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}}
}

// newFixtureAt is a session to the reference server speaking rev: over an
// in-process stdio connection, initialized (2025-11-25) or with the
// 2026-07-28 envelope and server/discover (the extension).
func newFixtureAt(tb testing.TB, rev hostcancel.Revision, faults ...refserver.Fault) *fixture {
	if rev == hostcancel.Rev20251125 {
		return newFixture(tb, faults...)
	}
	srv := refserver.New(refserver.Options{Faults: faultSet(faults)})
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	log := chrono.New()
	conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
	return fixture2026(tb, ctx, cancel, peer.New(conn, peer.Options{Log: log}), log)
}

func faultSet(faults []refserver.Fault) refserver.FaultSet {
	fs := refserver.FaultSet{}
	for _, f := range faults {
		fs[f] = true
	}
	return fs
}

// fixture2026 makes s a 2026-07-28 session and finds the control
// extension in server/discover.
func fixture2026(tb testing.TB, ctx context.Context, cancel context.CancelFunc, s *peer.Session, log *chrono.Log) *fixture {
	tb.Cleanup(func() {
		cctx, c := context.WithTimeout(context.Background(), safety)
		defer c()
		s.Close(cctx)
		cancel()
	})
	s.SetEnvelope(envelope2026())
	if _, err := s.Discover(ctx); err != nil {
		tb.Fatal(err)
	}
	ctl := control.Detect(s)
	if ctl == nil {
		tb.Fatal("server/discover declares no control extension")
	}
	return &fixture{ctx: ctx, s: s, ctl: ctl, log: log}
}

// routed is one POST the HTTP endpoint received: its routing headers
// and the body's method and params.taskId.
type routed struct {
	headerMethod, headerName string
	method, taskID           string
}

// recorder wraps the reference server's HTTP handler and keeps every
// POST's routing headers beside its body.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []routed
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		rc.mu.Lock()
		rc.seen = append(rc.seen, routed{r.Header.Get(mcp.HeaderMethod), r.Header.Get(mcp.HeaderName), m.Method, m.Params.TaskID})
		rc.mu.Unlock()
	}
	rc.next.ServeHTTP(w, r)
}

func (rc *recorder) posts(method string) []routed {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []routed
	for _, p := range rc.seen {
		if p.method == method {
			out = append(out, p)
		}
	}
	return out
}

// newFixtureHTTP is a 2026-07-28 session to the reference server over
// Streamable HTTP (stateless: every request its own POST), with the
// endpoint's record of routing headers.
func newFixtureHTTP(tb testing.TB, faults ...refserver.Fault) (*fixture, *recorder) {
	srv := refserver.New(refserver.Options{Faults: faultSet(faults)})
	h := srv.HTTPHandler(refserver.HTTPOptions{})
	rc := &recorder{next: h}
	ts := httptest.NewServer(rc)
	tb.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	log := chrono.New()
	conn, err := transport.DialHTTP(ctx, transport.HTTPConfig{URL: ts.URL, Log: log})
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	return fixture2026(tb, ctx, cancel, peer.New(conn, peer.Options{Log: log}), log), rc
}

// afterAck calls f once, on its own goroutine, when the operation's
// tasks/cancel has been answered; the OnEvent hook must not block.
type afterAck struct {
	once sync.Once
	f    func()
	done chan struct{}
}

func newAfterAck(f func()) *afterAck { return &afterAck{f: f, done: make(chan struct{})} }

func (a *afterAck) event(ev hostcancel.Event) {
	if ev.Name == hostcancel.EventTaskCancelResponse {
		a.once.Do(func() {
			go func() {
				defer close(a.done)
				a.f()
			}()
		})
	}
}

// wait waits for f to have run, if it was started.
func (a *afterAck) wait(ctx context.Context) {
	a.once.Do(func() { close(a.done) }) // never started: nothing to wait for
	select {
	case <-a.done:
	case <-ctx.Done():
	}
}

// TestExtensionOnReferenceServer drives the terminal paths of the
// extension against the reference server. Each row's stop or no stop is
// the worker counter's: read at the abort, read again with every gate
// open. lateCancel rows make the reference server eventually consistent
// (TSX-44): the acknowledgement comes while the task is still working,
// and the test reads that status itself before it lets the worker reach
// its next tick.
func TestExtensionOnReferenceServer(t *testing.T) {
	const ticks = 5
	for _, tc := range []struct {
		name, reqs string
		faults     []refserver.Fault
		policy     hostcancel.Policy
		args       map[string]any
		finish     bool // the task ends before the abort
		// noListen: no subscription, so the controller learns nothing
		// between its polls (a finished task is news to its tasks/cancel).
		noListen bool
		// releaseAfterAck: the test reads the status after the ack, then
		// opens the worker's gate (a lateCancel row).
		releaseAfterAck bool
		grace           time.Duration
		want            hostcancel.Classification
		unknown         hostcancel.UnknownReason
		alerts          []hostcancel.Alert
		status          string // the task's final status on the server
		cancels         int
		stopped         bool
	}{
		{name: "cancelled-verified", reqs: "TSX-44 acknowledged; TSX-28 cancelled; the counter stands still",
			want: hostcancel.CancelledVerified, status: mcp.TaskCancelled, cancels: 1, stopped: true},
		{name: "completed-known-by-notification", reqs: "TSX-48, TSX-50: notifications/tasks said completed before the abort; nothing to cancel",
			finish: true, want: hostcancel.CompletedBeforeCancel, status: mcp.TaskCompleted, cancels: 0, stopped: true},
		{name: "completed-before-cancel", reqs: "TSX-44, A-17: a terminal task's cancel is acknowledged; TSX-27 the result inlined; TSX-65 no tasks/result",
			finish: true, noListen: true, want: hostcancel.CompletedBeforeCancel, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace},
			status: mcp.TaskCompleted, cancels: 1, stopped: true},
		{name: "iserror-completes-task", reqs: "TSX-14, TSX-59, TSX-61: completed with the isError result on the wire, failed for the host (as TSK-76)",
			args: map[string]any{"end": "fail"}, finish: true, noListen: true, want: hostcancel.Failed, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace},
			status: mcp.TaskCompleted, cancels: 1, stopped: true},
		{name: "failed-rpc-error", reqs: "TSX-29, TSX-60: failed with the JSON-RPC error inlined",
			args: map[string]any{"end": "error"}, finish: true, noListen: true, want: hostcancel.Failed, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace},
			status: mcp.TaskFailed, cancels: 1, stopped: true},
		{name: "ack-while-working", reqs: "TSX-44: the status stays working after the ack, then cancelled",
			args: map[string]any{"lateCancel": "cancel"}, releaseAfterAck: true,
			want: hostcancel.CancelledVerified, status: mcp.TaskCancelled, cancels: 1, stopped: true},
		{name: "ack-then-completed", reqs: "TSX-44: after the ack the task may reach a terminal status other than cancelled",
			args: map[string]any{"lateCancel": "finish"}, releaseAfterAck: true,
			want: hostcancel.CompletedBeforeCancel, alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace},
			status: mcp.TaskCompleted, cancels: 1, stopped: true},
		// The server holds the task at a gate: the grace ending is the
		// event under test. The deferred cancel takes effect once the
		// gate opens, so the counter still stands still.
		{name: "still-working-past-grace", reqs: "TSX-45: eventual transition to cancelled is not guaranteed within any time",
			args: map[string]any{"lateCancel": "cancel"}, grace: 150 * time.Millisecond,
			want: hostcancel.StillWorkingPastGrace, alerts: []hostcancel.Alert{hostcancel.AlertStillWorkingPastGrace},
			status: mcp.TaskCancelled, cancels: 1, stopped: true},
		{name: "cancel-acked-worker-running", reqs: "TSX-45: acknowledged and cancelled on paper, the work goes on",
			faults: []refserver.Fault{refserver.FaultCancelDoesNotStopWorker},
			want:   hostcancel.WorkerStillRunning, alerts: []hostcancel.Alert{hostcancel.AlertCancelAckedWorkerRunning},
			status: mcp.TaskCancelled, cancels: 1},
		{name: "detached", reqs: "seed 002: a host may detach; the work goes on",
			policy: hostcancel.Detach, want: hostcancel.OutcomeUnknown, unknown: hostcancel.UnknownDetached,
			status: mcp.TaskCompleted, cancels: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Log(tc.reqs)
			f := newFixtureAt(t, hostcancel.RevTasksExtension, tc.faults...)
			var ev events
			var statusAfterAck string
			var op *hostcancel.Operation
			var late *afterAck
			if tc.releaseAfterAck {
				late = newAfterAck(func() {
					if got, err := f.s.GetTask(f.ctx, op.TaskID()); err == nil {
						statusAfterAck = got.Status
					}
					_ = f.ctl.Release(f.ctx, "k/tick/1")
				})
			}
			c := hostcancel.New(hostcancel.Config{Session: f.s, Policy: tc.policy, Grace: cmpOr(tc.grace, safety/2), Ack: f.ack("k", ticks),
				NoListen: tc.noListen, OnEvent: func(e hostcancel.Event) {
					ev.event(e)
					if late != nil {
						late.event(e)
					}
				}, OnAlert: ev.alert})
			if c.Revision() != hostcancel.RevTasksExtension {
				t.Fatalf("revision %s from server/discover", c.Revision())
			}
			op = f.start(t, c, "k", tc.args)
			f.release(t, "k/start")
			f.await(t, "k/tick/1")
			if tc.finish {
				f.release(t, "k/tick/1", "k/tick/2", "k/tick/3", "k/tick/4", "k/tick/5")
				f.await(t, "k/end")
			}
			atAbort, err := f.ctl.Worker(f.ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			r := op.Abort(f.ctx, "test: "+tc.name)
			if late != nil {
				late.wait(f.ctx)
				if statusAfterAck != mcp.TaskWorking {
					t.Errorf("tasks/get after the acknowledgement: %q, want working (the cancel is eventually consistent, TSX-44)", statusAfterAck)
				}
			}
			if r.Classification != tc.want || r.Unknown != tc.unknown {
				t.Errorf("classification %s/%s (%s), want %s/%s", r.Classification, r.Unknown, r.Detail, tc.want, tc.unknown)
			}
			ev.check(t, c, r, tc.alerts)
			if got := f.cancelsOnWire(); got != tc.cancels {
				t.Errorf("%d tasks/cancel on the wire, want %d", got, tc.cancels)
			}
			if n := f.sent(mcp.MethodTasksResult); n != 0 {
				t.Errorf("%d tasks/result: the extension has none (TSX-65)", n)
			}
			checkOutcome(t, r, tc.want, tc.args)
			if r.Revision != hostcancel.RevTasksExtension || r.TaskID == "" || r.TaskID != op.TaskID() || r.Server.Name != refserver.DefaultName ||
				r.AbortedAt.IsZero() || r.AbortReason == "" || r.RequestIDs[0] != op.Call.ID {
				t.Errorf("what is known: %s task %q server %+v abort %v %q ids %v", r.Revision, r.TaskID, r.Server, r.AbortedAt, r.AbortReason, r.RequestIDs)
			}
			if r.LastProgress != nil {
				t.Errorf("progress %+v for an extension task (PRG-46)", r.LastProgress)
			}
			_, after, err := f.runOut(f.ctx, "k", ticks)
			if err != nil {
				t.Fatal(err)
			}
			if moved := after.Ticks != atAbort.Ticks; moved == tc.stopped {
				t.Errorf("worker counter %d at the abort, %d with every gate open; stopped want %v", atAbort.Ticks, after.Ticks, tc.stopped)
			}
			if after.Status != tc.status {
				t.Errorf("the server's final status %q, want %q", after.Status, tc.status)
			}
		})
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// checkOutcome checks what a Result holds of the task's outcome: the
// inlined result of a completed task, the tool's isError result or the
// JSON-RPC error of a failed one.
func checkOutcome(t *testing.T, r hostcancel.Result, want hostcancel.Classification, args map[string]any) {
	t.Helper()
	text := func() string {
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(r.Result, &res) != nil || len(res.Content) == 0 {
			return ""
		}
		return res.Content[0].Text
	}
	switch {
	case want == hostcancel.CompletedBeforeCancel && !strings.HasPrefix(text(), "done after"):
		t.Errorf("result %s, want the inlined completed result (TSX-27)", r.Result)
	case want == hostcancel.Failed && args["end"] == "fail" && !strings.HasPrefix(text(), "failed after"):
		t.Errorf("result %s, want the tool's isError result (TSX-61)", r.Result)
	case want == hostcancel.Failed && args["end"] == "error" && (r.ResultError == nil || r.ResultError.Code != -32603):
		t.Errorf("error %+v, want the inlined -32603 (TSX-60)", r.ResultError)
	}
}

// outcome is what one run of a fault row showed.
type outcome struct {
	Classification hostcancel.Classification
	Unknown        hostcancel.UnknownReason
	Alerts         []hostcancel.Alert
	Reconciles     int64
	TasksResult    int
	Stopped        bool
	// Evidence is the row's own reading of the Result.
	Evidence string
}

// TestExtensionFaults runs the extension against the reference server's
// 2026-07-28 faults, one row per fault that reaches the controller, each
// twice: on the conforming server and with the fault. The pair shows
// that the controller tells the misbehaviour apart, and what it
// concludes; the worker counter says whether the work stopped.
//
// The other 2026-07-28 faults change nothing the controller decides, and
// why: the listen faults (listen-no-ack, listen-no-subscription-id,
// listen-unrequested, listen-logs, teardown-silent) touch a stream the
// controller reads by task ID and only as state it may also poll
// (TSX-51); the envelope, version, header and HTTP framing faults are
// the session's and the transport's, judged by the case catalogue; the
// log faults and ping-on-2026 touch no task; task-for-undeclared-client,
// task-methods-without-capability and sticky-capabilities need a request
// that does not declare the extension, which the controller never sends;
// task-update-rejects-unknown-key needs tasks/update, which it never
// sends (it answers no input requests).
func TestExtensionFaults(t *testing.T) {
	const ticks = 3
	for _, tc := range []struct {
		fault refserver.Fault
		args  map[string]any
		// when: "tick" aborts at KEY/tick/1, "finished" after KEY/end,
		// "unstarted" before the worker's KEY/start.
		when             string
		noListen         bool
		evidence         func(r hostcancel.Result) string
		conforming, with outcome
	}{
		{fault: refserver.FaultTaskCancelErrorOnTerminal, when: "finished", noListen: true,
			conforming: outcome{Classification: hostcancel.CompletedBeforeCancel, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true},
			// -32602 is reconciled by tasks/get, which says completed.
			with: outcome{Classification: hostcancel.CompletedBeforeCancel, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Reconciles: 1, Stopped: true,
				Evidence: "cites TSX-44"},
			evidence: func(r hostcancel.Result) string {
				if strings.Contains(r.Detail, "TSX-44") && strings.Contains(r.Detail, "-32602") {
					return "cites TSX-44"
				}
				return ""
			}},
		{fault: refserver.FaultCreateBeforeDurable, when: "unstarted",
			conforming: outcome{Classification: hostcancel.CancelledVerified, Stopped: true},
			// Neither tasks/cancel nor tasks/get finds the task: not
			// vanished, never durable; its work starts later.
			with: outcome{Classification: hostcancel.OutcomeUnknown, Unknown: hostcancel.UnknownNotFound, Reconciles: 1}},
		{fault: refserver.FaultIsErrorTaskFailed, args: map[string]any{"end": "fail"}, when: "finished", noListen: true,
			conforming: outcome{Classification: hostcancel.Failed, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true,
				Evidence: "the tool's isError result"},
			// The server turned the tool's result into a JSON-RPC error:
			// the host reports the error it was given, not a result.
			with: outcome{Classification: hostcancel.Failed, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true,
				Evidence: "a JSON-RPC error, no result"},
			evidence: func(r hostcancel.Result) string {
				switch {
				case isErrorResult(r.Result) && r.ResultError == nil:
					return "the tool's isError result"
				case r.Result == nil && r.ResultError != nil:
					return "a JSON-RPC error, no result"
				}
				return fmt.Sprintf("result %s error %v", r.Result, r.ResultError)
			}},
		{fault: refserver.FaultTaskResultNotInlined, when: "finished", noListen: true,
			conforming: outcome{Classification: hostcancel.CompletedBeforeCancel, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true},
			// Completed without its result, and no tasks/result to ask:
			// the outcome is unknown, not a completion without a result.
			with: outcome{Classification: hostcancel.OutcomeUnknown, Unknown: hostcancel.UnknownResultMissing, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true}},
		// resultType "task" on tasks/get (the A-13 confusion) is tolerated:
		// the task's status decides, and it is the same.
		{fault: refserver.FaultGetTaskResultTypeTask, when: "tick",
			conforming: outcome{Classification: hostcancel.CancelledVerified, Stopped: true},
			with:       outcome{Classification: hostcancel.CancelledVerified, Stopped: true}},
		// tasks/result is served against TSX-65, and never asked for.
		{fault: refserver.FaultTasksResultOn2026, when: "finished", noListen: true,
			conforming: outcome{Classification: hostcancel.CompletedBeforeCancel, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true},
			with:       outcome{Classification: hostcancel.CompletedBeforeCancel, Alerts: []hostcancel.Alert{hostcancel.AlertTerminalRace}, Stopped: true}},
		// The 2025-11-25 fault carries over to the extension (TSX-45 allows
		// it; the worker acknowledgement catches it).
		{fault: refserver.FaultCancelDoesNotStopWorker, when: "tick",
			conforming: outcome{Classification: hostcancel.CancelledVerified, Stopped: true},
			with:       outcome{Classification: hostcancel.WorkerStillRunning, Alerts: []hostcancel.Alert{hostcancel.AlertCancelAckedWorkerRunning}}},
	} {
		for _, faulted := range []bool{false, true} {
			name := string(tc.fault)
			want := tc.with
			var faults []refserver.Fault
			if faulted {
				faults = []refserver.Fault{tc.fault}
			} else {
				name, want = name+"/conforming", tc.conforming
			}
			t.Run(name, func(t *testing.T) {
				if faulted {
					if reqs, _, ok := refserver.Fault2026Requirements(tc.fault); ok {
						t.Logf("the fault breaks %v", reqs)
					}
				}
				f := newFixtureAt(t, hostcancel.RevTasksExtension, faults...)
				c := hostcancel.New(hostcancel.Config{Session: f.s, Grace: safety / 2, Ack: f.ack("k", ticks), NoListen: tc.noListen})
				args := map[string]any{"ticks": ticks}
				for k, v := range tc.args {
					args[k] = v
				}
				op := f.start(t, c, "k", args)
				switch tc.when {
				case "tick":
					f.release(t, "k/start")
					f.await(t, "k/tick/1")
				case "finished":
					f.release(t, "k/start", "k/tick/1", "k/tick/2", "k/tick/3")
					f.await(t, "k/end")
				}
				atAbort, err := f.ctl.Worker(f.ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				r := op.Abort(f.ctx, "test")
				got := outcome{Classification: r.Classification, Unknown: r.Unknown, Alerts: r.Alerts,
					Reconciles: c.Counters().Reconciles, TasksResult: f.sent(mcp.MethodTasksResult)}
				if tc.evidence != nil {
					got.Evidence = tc.evidence(r)
				}
				_, after, err := f.runOut(f.ctx, "k", ticks)
				if err != nil {
					t.Fatal(err)
				}
				got.Stopped = after.Ticks == atAbort.Ticks
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s\ndetail: %s\nworker %d → %d", diff, r.Detail, atAbort.Ticks, after.Ticks)
				}
			})
		}
	}
}

func isErrorResult(raw json.RawMessage) bool {
	var v struct {
		IsError bool `json:"isError"`
	}
	return raw != nil && json.Unmarshal(raw, &v) == nil && v.IsError
}

// TestExtensionOverHTTP runs the extension over Streamable HTTP against
// the reference server's endpoint: each request its own POST, Mcp-Name
// carrying the task ID on every tasks/get and tasks/cancel (TSX-52), and
// status on the subscriptions/listen stream (TSX-48).
func TestExtensionOverHTTP(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		f, rc := newFixtureHTTP(t)
		c := hostcancel.New(hostcancel.Config{Session: f.s, Grace: safety / 2, Ack: f.ack("k", 5)})
		op := f.start(t, c, "k", nil)
		f.release(t, "k/start")
		f.await(t, "k/tick/1")
		r := op.Abort(f.ctx, "user pressed stop")
		if r.Classification != hostcancel.CancelledVerified || r.WorkerStopped == nil || !*r.WorkerStopped {
			t.Errorf("%s (%s), worker stopped %v", r.Classification, r.Detail, r.WorkerStopped)
		}
		checkRouting(t, rc, op.TaskID(), 1)
		if w, err := f.ctl.Worker(f.ctx, "k"); err != nil || w.Ticks != 1 || w.WorkerRunning || w.Status != mcp.TaskCancelled {
			t.Errorf("worker %+v %v: want counter 1, stopped, cancelled", w, err)
		}
	})
	// Polling is slowed to an hour: after the acknowledgement (the task
	// still working, TSX-44) only notifications/tasks on the listen
	// stream can tell the controller that the cancel took effect.
	t.Run("status-by-notification", func(t *testing.T) {
		f, rc := newFixtureHTTP(t)
		var op *hostcancel.Operation
		var statusAfterAck string
		late := newAfterAck(func() {
			if got, err := f.s.GetTask(f.ctx, op.TaskID()); err == nil {
				statusAfterAck = got.Status
			}
			_ = f.ctl.Release(f.ctx, "k/tick/1")
		})
		c := hostcancel.New(hostcancel.Config{Session: f.s, Grace: safety / 2, Ack: f.ack("k", 5),
			MinPoll: time.Hour, MaxPoll: time.Hour, OnEvent: late.event})
		op = f.start(t, c, "k", map[string]any{"lateCancel": "cancel"})
		f.release(t, "k/start")
		f.await(t, "k/tick/1")
		r := op.Abort(f.ctx, "user pressed stop")
		late.wait(f.ctx)
		if statusAfterAck != mcp.TaskWorking {
			t.Errorf("status after the acknowledgement %q, want working", statusAfterAck)
		}
		if r.Classification != hostcancel.CancelledVerified {
			t.Errorf("%s (%s)", r.Classification, r.Detail)
		}
		if n := c.Counters().StatusNotifications; n < 1 {
			t.Errorf("%d status notifications routed", n)
		}
		if n := len(rc.posts(mcp.MethodSubscriptionsListen)); n != 1 {
			t.Errorf("%d subscriptions/listen POSTs, want 1", n)
		}
		// One tasks/get is the controller's check that cancelled sticks
		// (TSX-15); the test's own is the other.
		checkRouting(t, rc, op.TaskID(), 1)
		if w, err := f.ctl.Worker(f.ctx, "k"); err != nil || w.Ticks != 1 || w.WorkerRunning {
			t.Errorf("worker %+v %v: want counter 1, stopped", w, err)
		}
	})
	// The abort comes while the tools/call POST waits for its
	// CreateTaskResult: the controller keeps the request (its stream
	// open: closing it would cancel the request, CAN-43), learns the
	// task ID and cancels the task.
	for _, tc := range []earlyAbort{
		{name: "early-abort-cancel", policy: hostcancel.Cancel, release: true, want: hostcancel.CancelledVerified, cancels: 1, stopped: true},
		{name: "early-abort-detach", policy: hostcancel.Detach, release: true, want: hostcancel.OutcomeUnknown, unknown: hostcancel.UnknownDetached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFixtureHTTP(t)
			tc.run(t, f)
		})
	}
}

// checkRouting checks that every tasks/get and tasks/cancel POST carried
// Mcp-Name equal to its params.taskId, the operation's task (TSX-52),
// and Mcp-Method its method; cancels is the tasks/cancel POSTs expected.
func checkRouting(t *testing.T, rc *recorder, taskID string, cancels int) {
	t.Helper()
	if got := len(rc.posts(mcp.MethodTasksCancel)); got != cancels {
		t.Errorf("%d tasks/cancel POSTs, want %d", got, cancels)
	}
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel} {
		for _, p := range rc.posts(m) {
			if p.headerName != taskID || p.taskID != taskID || p.headerMethod != m {
				t.Errorf("%s POST: Mcp-Method %q, Mcp-Name %q, params.taskId %q; want %s and the task %q (TSX-52)", m, p.headerMethod, p.headerName, p.taskID, m, taskID)
			}
		}
	}
	for _, p := range rc.posts(mcp.MethodToolsCall) {
		if p.headerName != refserver.ToolTaskWorker {
			t.Errorf("tools/call POST: Mcp-Name %q, want the tool (HTTP-100)", p.headerName)
		}
	}
}
