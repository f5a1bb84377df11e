package hostcancel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// safety bounds every wait of the tests; nothing synchronises on it.
const safety = 10 * time.Second

// fixture is a session to the reference server with its control client.
type fixture struct {
	ctx context.Context
	s   *peer.Session
	ctl *control.Client
	log *chrono.Log
}

func newFixture(tb testing.TB, faults ...refserver.Fault) *fixture {
	fs := refserver.FaultSet{}
	for _, f := range faults {
		fs[f] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	log := chrono.New()
	conn, _ := refserver.InProcess(ctx, refserver.Options{Faults: fs}, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	cleanup := func() {
		cctx, c := context.WithTimeout(context.Background(), safety)
		defer c()
		s.Close(cctx)
		cancel()
	}
	if t, ok := tb.(*testing.T); ok {
		t.Cleanup(cleanup)
	}
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		tb.Fatal(err)
	}
	return &fixture{ctx: ctx, s: s, ctl: control.Detect(s), log: log}
}

// ack is the reference server's worker acknowledgement: the worker's end
// checkpoint, then its counters.
func (f *fixture) ack(key string) hostcancel.WorkerAck {
	return func(ctx context.Context, op *hostcancel.Operation) (bool, string, error) {
		if _, err := f.ctl.Await(ctx, key+"/end"); err != nil {
			if ctx.Err() != nil {
				return false, "the worker did not reach its end", nil
			}
			return false, "", err
		}
		w, err := f.ctl.Worker(f.ctx, key)
		if err != nil {
			return false, "", err
		}
		return !w.WorkerRunning, fmt.Sprintf("worker counter %d, running %v", w.Ticks, w.WorkerRunning), nil
	}
}

func (f *fixture) start(t *testing.T, c *hostcancel.Controller, key string, args map[string]any) *hostcancel.Operation {
	t.Helper()
	a := map[string]any{"key": key, "ticks": 5}
	for k, v := range args {
		a[k] = v
	}
	op, err := c.Start(f.ctx, map[string]any{"name": refserver.ToolTaskWorker, "arguments": a}, 60000, peer.WithProgress())
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func (f *fixture) release(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := f.ctl.Release(f.ctx, n); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) await(t testing.TB, name string) {
	t.Helper()
	if _, err := f.ctl.Await(f.ctx, name); err != nil {
		t.Fatal(err)
	}
}

// cancelsOnWire counts tasks/cancel requests in the chronology.
func (f *fixture) cancelsOnWire() int {
	n := 0
	for _, ev := range f.log.Events() {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Method == mcp.MethodTasksCancel {
			n++
		}
	}
	return n
}

func TestTerminalPaths(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  []refserver.Fault
		policy  hostcancel.Policy
		args    map[string]any
		finish  bool // the task ends before the abort, unknown to the controller
		want    hostcancel.Classification
		cancels int
		alert   bool
	}{
		{name: "cancelled-verified", want: hostcancel.CancelledVerified, cancels: 1},
		{name: "completed-before-cancel", finish: true, want: hostcancel.CompletedBeforeCancel, cancels: 1},
		{name: "failed-iserror", args: map[string]any{"end": "fail"}, finish: true, want: hostcancel.Failed, cancels: 1},
		{name: "failed-rpc-error", args: map[string]any{"end": "error"}, finish: true, want: hostcancel.Failed, cancels: 1},
		{name: "still-working-past-grace", faults: []refserver.Fault{refserver.FaultCancelDoesNotStopWorker}, want: hostcancel.StillWorkingPastGrace, cancels: 1, alert: true},
		{name: "outcome-unknown-detached", policy: hostcancel.Detach, want: hostcancel.OutcomeUnknown, cancels: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.faults...)
			var events []hostcancel.Event
			var mu sync.Mutex
			grace := safety / 2
			if tc.alert {
				grace = 200 * time.Millisecond // the grace ending is the event under test
			}
			c := hostcancel.New(hostcancel.Config{Session: f.s, Policy: tc.policy, Grace: grace, Ack: f.ack("k"),
				OnEvent: func(e hostcancel.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
			op := f.start(t, c, "k", tc.args)
			f.release(t, "k/start")
			f.await(t, "k/tick/1")
			if tc.finish {
				f.release(t, "k/tick/1", "k/tick/2", "k/tick/3", "k/tick/4", "k/tick/5")
				f.await(t, "k/end")
			}
			r := op.Abort(f.ctx, "test: "+tc.name)
			if r.Classification != tc.want || r.Alert != tc.alert {
				t.Errorf("classification %s alert %v (%s), want %s alert %v", r.Classification, r.Alert, r.Detail, tc.want, tc.alert)
			}
			if got := f.cancelsOnWire(); got != tc.cancels {
				t.Errorf("%d tasks/cancel on the wire, want %d", got, tc.cancels)
			}
			switch tc.want {
			case hostcancel.CompletedBeforeCancel:
				if r.Result == nil {
					t.Errorf("no result fetched: %+v", r)
				}
			case hostcancel.Failed:
				if r.Result == nil && r.ResultError == nil {
					t.Errorf("no result or error fetched: %+v", r)
				}
			}
			ids := op.RequestIDs()
			if len(ids) < 1+tc.cancels || ids[0] != op.Call.ID {
				t.Errorf("request ids %v", ids)
			}
			if at, reason := op.Aborted(); at.IsZero() || reason == "" {
				t.Errorf("abort not recorded: %v %q", at, reason)
			}
			if op.Server.Name != refserver.DefaultName {
				t.Errorf("server identity %+v", op.Server)
			}
			mu.Lock()
			defer mu.Unlock()
			last := events[len(events)-1]
			if last.Name != hostcancel.EventClassified || last.Reason != string(tc.want) {
				t.Errorf("last event %+v", last)
			}
		})
	}
}

// TestRacingCancels: however many local signals race, one tasks/cancel.
func TestRacingCancels(t *testing.T) {
	f := newFixture(t)
	c := hostcancel.New(hostcancel.Config{Session: f.s, Ack: f.ack("k")})
	op := f.start(t, c, "k", nil)
	f.release(t, "k/start")
	f.await(t, "k/tick/1")
	const n = 8
	results := make([]hostcancel.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = op.Abort(f.ctx, fmt.Sprintf("signal %d", i))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.Classification != hostcancel.CancelledVerified || r.Detail != results[0].Detail {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if got := f.cancelsOnWire(); got != 1 {
		t.Errorf("%d tasks/cancel on the wire, want 1", got)
	}
	cs := c.Counters()
	if cs.RequestCancelSignals != n || cs.LocalAborts != 1 || cs.TaskCancelRequested != 1 || cs.TaskCancelVerified != 1 || cs.WorkerAcks != 1 {
		t.Errorf("counters %+v", cs)
	}
}

// TestCancelRacesCompletion: the task completes between the last poll
// and tasks/cancel; the -32602 is reconciled into the completed result.
func TestCancelRacesCompletion(t *testing.T) {
	f := newFixture(t)
	c := hostcancel.New(hostcancel.Config{Session: f.s})
	op := f.start(t, c, "k", map[string]any{"ticks": 1})
	if got, err := op.Poll(f.ctx); err != nil || got.Status != mcp.TaskWorking {
		t.Fatalf("poll: %v %s", err, got.Raw)
	}
	f.release(t, "k/start", "k/tick/1")
	f.await(t, "k/end")
	r := op.Abort(f.ctx, "user pressed stop")
	if r.Classification != hostcancel.CompletedBeforeCancel || !r.CancelSent || r.Task.Status != mcp.TaskCompleted {
		t.Fatalf("%+v", r)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 || res.Content[0].Text != "done after 1 ticks" {
		t.Errorf("result %s", r.Result)
	}
	if cs := c.Counters(); cs.Reconciles != 1 || cs.TaskCancelVerified != 0 {
		t.Errorf("counters %+v", cs)
	}
}

// TestNoTasksCapability: a server without tasks cannot run an operation.
func TestNoTasksCapability(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	log := chrono.New()
	conn, _ := refserver.InProcess(ctx, refserver.Options{NoTasks: true}, transport.StreamConfig{Log: log})
	s := peer.New(conn, peer.Options{Log: log})
	defer s.Close(ctx)
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	c := hostcancel.New(hostcancel.Config{Session: s})
	if _, err := c.Start(ctx, map[string]any{"name": refserver.ToolSlow}, -1); !errors.Is(err, hostcancel.ErrNoTasks) {
		t.Errorf("Start: %v, want ErrNoTasks", err)
	}
}

// TestConnectionLost: with the connection gone, the cancel cannot be
// verified and the outcome is unknown, not cancelled.
func TestConnectionLost(t *testing.T) {
	f := newFixture(t)
	c := hostcancel.New(hostcancel.Config{Session: f.s})
	op := f.start(t, c, "k", nil)
	cctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	f.s.Close(cctx)
	r := op.Abort(f.ctx, "host shutting down")
	if r.Classification != hostcancel.OutcomeUnknown || r.Task.Status != mcp.TaskWorking {
		t.Errorf("%+v", r)
	}
	if c.Counters().TaskCancelVerified != 0 {
		t.Errorf("counters %+v", c.Counters())
	}
}
