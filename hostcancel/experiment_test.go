package hostcancel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/refserver"
)

// experiment is the seed's fixture (002), replayed on checkpoints instead
// of timers: a client polls a task and aborts locally; then the
// controller's explicit cancel runs.
type experiment struct {
	// After the local abort.
	AbortErr        error
	CancelsAtAbort  int
	StatusAtAbort   string
	TicksAtAbort    int
	TicksLater      int
	ProgressAtAbort bool
	// After the explicit cancel.
	Result            hostcancel.Result
	CancelsAfter      int
	StatusAfter       string
	TicksAtCancel     int
	TicksAfterRelease int
	Counters          hostcancel.Counters
	// RequestCancels counts notifications/cancelled sent for anything
	// but a subscriptions/listen stream: the controller never addresses
	// a task through its request (CAN-4).
	RequestCancels int
}

// runExperiment runs both halves under rev. fatal reports a harness
// failure.
func runExperiment(f *fixture, rev hostcancel.Revision, fatal func(error)) experiment {
	var x experiment
	ctx := f.ctx
	c := hostcancel.New(hostcancel.Config{Session: f.s, Revision: rev, Policy: hostcancel.Cancel, Ack: f.ack("embedding-index", 10)})
	op, err := c.Start(ctx, hostcancel.Call{Tool: refserver.ToolTaskWorker,
		Arguments: map[string]any{"key": "embedding-index", "ticks": 10}, TTL: time.Minute, Progress: true})
	if err != nil {
		fatal(err)
		return x
	}
	must := func(err error) {
		if err != nil {
			fatal(err)
		}
	}
	// The worker does two ticks while the client polls.
	must(f.ctl.Release(ctx, "embedding-index/start"))
	must(f.ctl.Release(ctx, "embedding-index/tick/1"))
	_, err = f.ctl.Await(ctx, "embedding-index/tick/2")
	must(err)
	// Half one: the client's wait budget ends; it polls once more first.
	wctx, abort := context.WithCancelCause(ctx)
	if _, err := op.Poll(wctx); err != nil {
		fatal(err)
	}
	abort(errors.New("local agent wait budget ended"))
	_, x.AbortErr = op.Wait(wctx)
	x.CancelsAtAbort = f.cancelsOnWire()
	got, err := f.s.GetTask(ctx, op.TaskID())
	must(err)
	x.StatusAtAbort = got.Status
	_, x.ProgressAtAbort = op.LastProgress()
	w, err := f.ctl.Worker(ctx, "embedding-index")
	must(err)
	x.TicksAtAbort = w.Ticks
	// The work goes on after the client is done: two more ticks.
	must(f.ctl.Release(ctx, "embedding-index/tick/2"))
	must(f.ctl.Release(ctx, "embedding-index/tick/3"))
	_, err = f.ctl.Await(ctx, "embedding-index/tick/4")
	must(err)
	w, err = f.ctl.Worker(ctx, "embedding-index")
	must(err)
	x.TicksLater = w.Ticks
	// Half two: the controller's explicit cancel.
	x.TicksAtCancel = x.TicksLater
	x.Result = op.Settle(ctx)
	x.CancelsAfter = f.cancelsOnWire()
	got, err = f.s.GetTask(ctx, op.TaskID())
	must(err)
	x.StatusAfter = got.Status
	// Every later gate opens; a stopped worker does not move.
	for i := 4; i <= 10; i++ {
		must(f.ctl.Release(ctx, fmt.Sprintf("embedding-index/tick/%d", i)))
	}
	w, err = f.ctl.Worker(ctx, "embedding-index")
	must(err)
	x.TicksAfterRelease = w.Ticks
	x.Counters = c.Counters()
	methods := map[string]string{} // request ID -> method, of our requests
	for _, ev := range f.log.Events() {
		if ev.Dir != chrono.Out || ev.Summary == nil {
			continue
		}
		if ev.Summary.Method != mcp.NotificationCancelled {
			methods[ev.Summary.ID] = ev.Summary.Method
			continue
		}
		// Ending the extension's subscriptions/listen stream is what
		// notifications/cancelled is for there (SUB-10); any other is a
		// request cancellation.
		if methods[ev.Summary.RequestID] != mcp.MethodSubscriptionsListen {
			x.RequestCancels++
		}
	}
	return x
}

// TestSeedExperiment asserts both halves of seed 002 on checkpoints, per
// task revision, against the reference server: under 2025-11-25 and under
// the tasks extension (2026-07-28, status also by notifications/tasks on
// a subscriptions/listen stream).
func TestSeedExperiment(t *testing.T) {
	for _, rev := range []hostcancel.Revision{hostcancel.Rev20251125, hostcancel.RevTasksExtension} {
		t.Run(string(rev), func(t *testing.T) { seedExperiment(t, rev) })
	}
}

func seedExperiment(t *testing.T, rev hostcancel.Revision) {
	f := newFixtureAt(t, rev)
	x := runExperiment(f, rev, func(err error) { t.Helper(); t.Fatal(err) })
	// Half one: the local abort sent nothing and stopped nothing.
	if !errors.Is(x.AbortErr, hostcancel.ErrAborted) {
		t.Errorf("Wait: %v, want ErrAborted", x.AbortErr)
	}
	if x.CancelsAtAbort != 0 || x.StatusAtAbort != mcp.TaskWorking {
		t.Errorf("after the local abort: %d tasks/cancel, status %q; want 0, working", x.CancelsAtAbort, x.StatusAtAbort)
	}
	if x.TicksLater <= x.TicksAtAbort {
		t.Errorf("the worker did not advance after the local abort: %d then %d", x.TicksAtAbort, x.TicksLater)
	}
	// 2025-11-25 keeps the progress token for the task's lifetime
	// (PRG-9); the extension has no progress for tasks (PRG-46).
	progress := rev == hostcancel.Rev20251125
	if x.ProgressAtAbort != progress {
		t.Errorf("progress kept for the task %v, want %v (PRG-9, PRG-46)", x.ProgressAtAbort, progress)
	}
	// Half two: exactly one tasks/cancel, cancelled, the counter flat.
	if x.CancelsAfter != 1 || x.StatusAfter != mcp.TaskCancelled || x.Result.Classification != hostcancel.CancelledVerified {
		t.Errorf("after the cancel: %d tasks/cancel, status %q, %s (%s)", x.CancelsAfter, x.StatusAfter, x.Result.Classification, x.Result.Detail)
	}
	if (x.Result.LastProgress != nil) != progress || (progress && x.Result.LastProgress.Progress != 4) || x.Result.AbortReason == "" {
		t.Errorf("telemetry: last progress %+v, abort reason %q", x.Result.LastProgress, x.Result.AbortReason)
	}
	if x.RequestCancels != 0 {
		t.Errorf("%d notifications/cancelled on the wire; a task is cancelled only with tasks/cancel (CAN-4)", x.RequestCancels)
	}
	if x.TicksAfterRelease != x.TicksAtCancel {
		t.Errorf("the worker moved after tasks/cancel: %d then %d", x.TicksAtCancel, x.TicksAfterRelease)
	}
	if c := x.Counters; c.LocalAborts != 1 || c.TaskCancelRequested != 1 || c.TaskCancelVerified != 1 || c.WorkerAcks != 1 {
		t.Errorf("counters %+v", c)
	}
}

// Example replays seed 002 against the reference server: stopping the
// local wait sends no tasks/cancel and leaves the worker running; the
// controller's explicit cancel sends exactly one and stops it.
func Example() {
	tb := &exampleTB{}
	defer tb.done()
	f := newFixture(tb)
	x := runExperiment(f, hostcancel.Rev20251125, func(err error) { panic(err) })
	fmt.Printf("local abort: %d tasks/cancel, task %s, worker %d → %d ticks\n",
		x.CancelsAtAbort, x.StatusAtAbort, x.TicksAtAbort, x.TicksLater)
	fmt.Printf("explicit cancel: %d tasks/cancel, task %s, %s, worker %d → %d ticks\n",
		x.CancelsAfter, x.StatusAfter, x.Result.Classification, x.TicksAtCancel, x.TicksAfterRelease)
	// Output:
	// local abort: 0 tasks/cancel, task working, worker 2 → 4 ticks
	// explicit cancel: 1 tasks/cancel, task cancelled, cancelled-verified, worker 4 → 4 ticks
}

// exampleTB lets an example use the test fixture: it panics on Fatal and
// runs the cleanups when done.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (*exampleTB) Helper()             {}
func (*exampleTB) Fatal(args ...any)   { panic(fmt.Sprint(args...)) }
func (tb *exampleTB) Cleanup(f func()) { tb.cleanups = append(tb.cleanups, f) }

func (tb *exampleTB) done() {
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
}
