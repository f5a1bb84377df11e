package hostcancel_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/refserver"
)

// otelSink is an in-memory OpenTelemetry SDK: a span recorder and a manual
// metric reader.
type otelSink struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
}

func newOtelSink() *otelSink {
	s := &otelSink{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	return s
}

// sums returns every int64 counter's total, by instrument name, and the
// attribute sets of its points.
func (s *otelSink) sums() (map[string]int64, map[string][]attribute.Set, error) {
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		return nil, nil, err
	}
	out, sets := map[string]int64{}, map[string][]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				out[m.Name] += dp.Value
				sets[m.Name] = append(sets[m.Name], dp.Attributes)
			}
		}
	}
	return out, sets, nil
}

func attributeKey(k string) attribute.Key { return attribute.Key(k) }

func attrs(kvs []attribute.KeyValue) map[attribute.Key]string {
	out := map[attribute.Key]string{}
	for _, kv := range kvs {
		out[kv.Key] = kv.Value.Emit()
	}
	return out
}

// TestOpenTelemetry runs operations with the SDK's in-memory exporter and
// asserts the spans, their attributes and the three separate counters.
func TestOpenTelemetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		race    bool // the task completes before the cancel
		signals int
		want    hostcancel.Classification
		// counters: request_cancel_signal, task_cancel_requested,
		// task_cancel_verified.
		counters [3]int64
		after    string // status after the tasks/cancel
		answer   string
	}{
		{name: "cancel-verified", signals: 2, want: hostcancel.CancelledVerified, counters: [3]int64{2, 1, 1}, after: "cancelled", answer: "accepted"},
		{name: "cancel-races-completion", race: true, signals: 1, want: hostcancel.CompletedBeforeCancel, counters: [3]int64{1, 1, 0}, after: "", answer: "error -32602"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			sink := newOtelSink()
			c := hostcancel.New(hostcancel.Config{Session: f.s, Ack: f.ack("k", 2), TracerProvider: sink.tp, MeterProvider: sink.mp})
			op := f.start(t, c, "k", map[string]any{"ticks": 2})
			f.release(t, "k/start")
			f.await(t, "k/tick/1")
			if tc.race {
				f.release(t, "k/tick/1", "k/tick/2")
				f.await(t, "k/end")
			}
			for range tc.signals {
				op.Stop("budget ended")
			}
			r := op.Settle(f.ctx)
			if r.Classification != tc.want {
				t.Fatalf("%s (%s)", r.Classification, r.Detail)
			}
			sums, sets, err := sink.sums()
			if err != nil {
				t.Fatal(err)
			}
			got := [3]int64{sums[hostcancel.MetricRequestCancelSignal], sums[hostcancel.MetricTaskCancelRequested], sums[hostcancel.MetricTaskCancelVerified]}
			if got != tc.counters {
				t.Errorf("request_cancel_signal, task_cancel_requested, task_cancel_verified = %v, want %v", got, tc.counters)
			}
			for _, set := range sets[hostcancel.MetricTaskCancelRequested] {
				if v, _ := set.Value(hostcancel.AttrTool); v.AsString() != refserver.ToolTaskWorker {
					t.Errorf("task_cancel_requested attributes %v", set.ToSlice())
				}
			}
			if sums[hostcancel.MetricOperations] != 1 {
				t.Errorf("operations %d, want 1", sums[hostcancel.MetricOperations])
			}

			spans := sink.spans.Ended()
			var opSpan, cancelSpan sdktrace.ReadOnlySpan
			for _, s := range spans {
				switch s.Name() {
				case hostcancel.SpanOperation:
					opSpan = s
				case hostcancel.SpanCancel:
					cancelSpan = s
				}
			}
			if opSpan == nil || cancelSpan == nil {
				t.Fatalf("spans %v", spans)
			}
			if cancelSpan.Parent().SpanID() != opSpan.SpanContext().SpanID() {
				t.Error("the tasks/cancel span is not a child of the operation's")
			}
			oa := attrs(opSpan.Attributes())
			ids := op.RequestIDs()
			progress, _ := op.LastProgress()
			wantOp := map[attribute.Key]string{
				hostcancel.AttrTool:           refserver.ToolTaskWorker,
				hostcancel.AttrServer:         refserver.DefaultName,
				hostcancel.AttrRevision:       "2025-11-25",
				hostcancel.AttrTaskID:         op.TaskID(),
				hostcancel.AttrClassification: string(tc.want),
				hostcancel.AttrAbortReason:    "budget ended",
				hostcancel.AttrLastProgress:   attribute.Float64Value(progress.Progress).Emit(),
			}
			for k, v := range wantOp {
				if oa[k] != v {
					t.Errorf("operation span %s = %q, want %q", k, oa[k], v)
				}
			}
			if oa[hostcancel.AttrAbortTime] == "" {
				t.Error("no abort time on the operation span")
			}
			ca := attrs(cancelSpan.Attributes())
			wantCancel := map[attribute.Key]string{
				hostcancel.AttrTaskID:       op.TaskID(),
				hostcancel.AttrStatusBefore: "working",
				hostcancel.AttrStatusAfter:  tc.after,
				hostcancel.AttrAnswer:       tc.answer,
			}
			for k, v := range wantCancel {
				if ca[k] != v {
					t.Errorf("tasks/cancel span %s = %q, want %q", k, ca[k], v)
				}
			}
			// Every JSON-RPC request ID is on the operation span, the
			// tasks/cancel's on its own span too.
			var seen []string
			names := map[string]int{}
			for _, e := range opSpan.Events() {
				names[e.Name]++
				if e.Name == hostcancel.EventRequest {
					seen = append(seen, attrs(e.Attributes)[hostcancel.AttrRequestID])
				}
			}
			var want []string
			for _, id := range ids {
				want = append(want, id.String())
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("request IDs on the span (-want +got):\n%s", diff)
			}
			if !slices.Contains(seen, ca[hostcancel.AttrRequestID]) {
				t.Errorf("the tasks/cancel span's request ID %q is not among %v", ca[hostcancel.AttrRequestID], seen)
			}
			for _, ev := range []string{hostcancel.EventTaskCreated, hostcancel.EventLocalAbort, hostcancel.EventTaskCancelRequested, hostcancel.EventClassified} {
				if names[ev] == 0 {
					t.Errorf("no %s event on the operation span: %v", ev, names)
				}
			}
			if !tc.race && (names[hostcancel.EventWorkerAck] != 1 || names[hostcancel.EventTaskCancelVerified] != 1) {
				t.Errorf("worker acknowledgement and verification events: %v", names)
			}
		})
	}
}
