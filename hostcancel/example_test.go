package hostcancel_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/hostcancel"
)

// Example_policies runs a host against the reference server under both
// task revisions, 2025-11-25 and the tasks extension of 2026-07-28, once
// with the detach policy and once with the cancel policy. It prints what
// the controller decided, what the reference server's worker counter says
// once every gate is open, the decision trail's verdict lines, and the
// OpenTelemetry record (an in-memory SDK stands in for the host's
// exporter). Every step waits on a reference-server checkpoint, never on
// time, so the output is the same on every run.
func Example_policies() {
	for _, rev := range revisions {
		fmt.Println(rev)
		for _, policy := range []hostcancel.Policy{hostcancel.Detach, hostcancel.Cancel} {
			runPolicy(rev, policy)
		}
	}
	// Output:
	// 2025-11-25
	//   detach: outcome-unknown, 0 tasks/cancel, worker 1 → 3 ticks once every gate is open
	//     trail decided outcome-unknown: detached: the task was left working
	//     span hostcancel.operation hostcancel.classification=outcome-unknown mcp.task.status.after=working hostcancel.abort.reason=wait budget ended
	//       events jsonrpc_request task_created request_cancel_signal local_abort progress classified
	//     counters request_cancel_signal=1 task_cancel_requested=0 task_cancel_verified=0
	//   cancel: cancelled-verified, 1 tasks/cancel, worker 1 → 1 ticks once every gate is open
	//     trail decided cancel the task (policy cancel): one tasks/cancel, status before working
	//     trail verified worker acknowledgement stopped=true: worker counter 1 → 1 with every gate open, running false
	//     trail verified task cancellation verified: status cancelled
	//     trail decided cancelled-verified: tasks/cancel accepted and verified
	//     span tasks/cancel mcp.task.status.before=working mcp.task.status.after=cancelled hostcancel.cancel.answer=accepted
	//     span hostcancel.operation hostcancel.classification=cancelled-verified mcp.task.status.after=cancelled hostcancel.abort.reason=wait budget ended
	//       events jsonrpc_request task_created request_cancel_signal local_abort task_cancel_requested status_notification task_status task_cancel_response worker_ack progress task_cancel_verified classified
	//     counters request_cancel_signal=1 task_cancel_requested=1 task_cancel_verified=1
	// 2026-07-28
	//   detach: outcome-unknown, 0 tasks/cancel, worker 1 → 3 ticks once every gate is open
	//     trail decided outcome-unknown: detached: the task was left working
	//     span hostcancel.operation hostcancel.classification=outcome-unknown mcp.task.status.after=working hostcancel.abort.reason=wait budget ended
	//       events jsonrpc_request task_created status_subscription request_cancel_signal local_abort classified
	//     counters request_cancel_signal=1 task_cancel_requested=0 task_cancel_verified=0
	//   cancel: cancelled-verified, 1 tasks/cancel, worker 1 → 1 ticks once every gate is open
	//     trail decided cancel the task (policy cancel): one tasks/cancel, status before working
	//     trail verified worker acknowledgement stopped=true: worker counter 1 → 1 with every gate open, running false
	//     trail verified task cancellation verified: status cancelled
	//     trail decided cancelled-verified: tasks/cancel accepted and verified
	//     span tasks/cancel mcp.task.status.before=working hostcancel.cancel.answer=accepted
	//     span hostcancel.operation hostcancel.classification=cancelled-verified mcp.task.status.after=cancelled hostcancel.abort.reason=wait budget ended
	//       events jsonrpc_request task_created status_subscription request_cancel_signal local_abort task_cancel_requested status_notification task_status task_cancel_response worker_ack task_cancel_verified classified
	//     counters request_cancel_signal=1 task_cancel_requested=1 task_cancel_verified=1
}

// runPolicy is one run of Example_policies: task_worker "index" held at
// its first tick, aborted by the host, settled by policy.
func runPolicy(rev hostcancel.Revision, policy hostcancel.Policy) {
	tb := &exampleTB{}
	defer tb.done()
	f := newFixtureAt(tb, rev)
	sink := newOtelSink()
	c := hostcancel.New(hostcancel.Config{Session: f.s, Policy: policy, Ack: f.ack("index", 3),
		TracerProvider: sink.tp, MeterProvider: sink.mp})
	op, err := c.Start(f.ctx, f.call("index", map[string]any{"ticks": 3}))
	if err != nil {
		panic(err)
	}
	f.release(tb, "index/start")
	f.await(tb, "index/tick/1")
	r := op.Abort(f.ctx, "wait budget ended")
	_, after, err := f.runOut(f.ctx, "index", 3)
	if err != nil {
		panic(err)
	}
	fmt.Printf("  %s: %s, %d tasks/cancel, worker 1 → %d ticks once every gate is open\n", policy, r.Classification, f.cancelsOnWire(), after.Ticks)
	for _, l := range hostcancel.DecisionTrail(op.Trail()) {
		if l.Verb == hostcancel.TrailDecided || l.Verb == hostcancel.TrailVerified {
			fmt.Printf("    trail %s %s\n", l.Verb, l.Text)
		}
	}
	for _, s := range sink.spans.Ended() {
		a := attrs(s.Attributes())
		var shown []string
		for _, k := range []string{"hostcancel.classification", "mcp.task.status.before", "mcp.task.status.after", "hostcancel.cancel.answer", "hostcancel.abort.reason"} {
			if v := a[attributeKey(k)]; v != "" {
				shown = append(shown, k+"="+v)
			}
		}
		var events []string
		for _, e := range s.Events() {
			if !slices.Contains(events, e.Name) {
				events = append(events, e.Name)
			}
		}
		fmt.Printf("    span %s %s\n", s.Name(), strings.Join(shown, " "))
		if len(events) > 0 {
			fmt.Printf("      events %s\n", strings.Join(events, " "))
		}
	}
	sums, _, err := sink.sums()
	if err != nil {
		panic(err)
	}
	fmt.Printf("    counters request_cancel_signal=%d task_cancel_requested=%d task_cancel_verified=%d\n",
		sums[hostcancel.MetricRequestCancelSignal], sums[hostcancel.MetricTaskCancelRequested], sums[hostcancel.MetricTaskCancelVerified])
}
