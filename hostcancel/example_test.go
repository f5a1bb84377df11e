package hostcancel_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/hostcancel"
)

// Example_policies runs a host against the reference server with the
// detach policy and with the cancel policy, and prints what the controller
// decided, what the worker counter says, and the OpenTelemetry record (an
// in-memory SDK stands in for the host's exporter). This is 2025-11-25;
// the tasks extension's run slots in as Config.Revision
// hostcancel.RevTasksExtension once the reference server speaks it.
func Example_policies() {
	for _, policy := range []hostcancel.Policy{hostcancel.Detach, hostcancel.Cancel} {
		tb := &exampleTB{}
		f := newFixture(tb)
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
		fmt.Printf("%s: %s, %d tasks/cancel, worker 1 → %d ticks once every gate is open\n", policy, r.Classification, f.cancelsOnWire(), after.Ticks)
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
			fmt.Printf("  span %s %s\n", s.Name(), strings.Join(shown, " "))
			if len(events) > 0 {
				fmt.Printf("    events %s\n", strings.Join(events, " "))
			}
		}
		sums, _, err := sink.sums()
		if err != nil {
			panic(err)
		}
		fmt.Printf("  counters request_cancel_signal=%d task_cancel_requested=%d task_cancel_verified=%d\n",
			sums[hostcancel.MetricRequestCancelSignal], sums[hostcancel.MetricTaskCancelRequested], sums[hostcancel.MetricTaskCancelVerified])
		tb.done()
	}
	// Output:
	// detach: outcome-unknown, 0 tasks/cancel, worker 1 → 3 ticks once every gate is open
	//   span hostcancel.operation hostcancel.classification=outcome-unknown mcp.task.status.after=working hostcancel.abort.reason=wait budget ended
	//     events jsonrpc_request task_created request_cancel_signal local_abort progress classified
	//   counters request_cancel_signal=1 task_cancel_requested=0 task_cancel_verified=0
	// cancel: cancelled-verified, 1 tasks/cancel, worker 1 → 1 ticks once every gate is open
	//   span tasks/cancel mcp.task.status.before=working mcp.task.status.after=cancelled hostcancel.cancel.answer=accepted
	//   span hostcancel.operation hostcancel.classification=cancelled-verified mcp.task.status.after=cancelled hostcancel.abort.reason=wait budget ended
	//     events jsonrpc_request task_created request_cancel_signal local_abort task_cancel_requested status_notification task_status task_cancel_response worker_ack progress task_cancel_verified classified
	//   counters request_cancel_signal=1 task_cancel_requested=1 task_cancel_verified=1
}
