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

// otelRow is one row of TestOpenTelemetry.
type otelRow struct {
	name     string
	race     bool // the task completes before the cancel
	effectAt int  // the tick that applies the side effect
	signals  int
	want     hostcancel.Classification
	// counters: request_cancel_signal, task_cancel_requested,
	// task_cancel_verified.
	counters [3]int64
	// after and answer are the tasks/cancel span's status after and
	// answer under 2025-11-25; the extension's ack is empty (TSX-44).
	after, answer string
	receipt       string // the receipt ID on the operation span
	effect        hostcancel.EffectState
	stopped       string // the worker acknowledgement, "" when none ran
}

// TestOpenTelemetry runs operations of a consequential tool under both
// revisions with the SDK's in-memory exporter, and asserts the spans,
// their attributes (the receipt, the effect, the idempotency key and the
// worker acknowledgement among them) and the three separate counters.
// The reference server's worker counter is the acknowledgement; its
// effectsApplied counter is the system of record.
func TestOpenTelemetry(t *testing.T) {
	for _, rev := range revisions {
		for _, tc := range []otelRow{
			{name: "cancel-verified", effectAt: 2, signals: 2, want: hostcancel.CancelledVerified, counters: [3]int64{2, 1, 1},
				after: "cancelled", answer: "accepted", effect: hostcancel.EffectNotApplied, stopped: "true"},
			// The cancel is not verified: the effect it would hide
			// committed before it.
			{name: "effect-committed", effectAt: 1, signals: 1, want: hostcancel.EffectCommitted, counters: [3]int64{1, 1, 0},
				after: "cancelled", answer: "accepted", effect: hostcancel.EffectApplied, stopped: "true"},
			{name: "cancel-races-completion", race: true, effectAt: 1, signals: 1, want: hostcancel.CompletedBeforeCancel, counters: [3]int64{1, 1, 0},
				after: "", answer: "error -32602", receipt: "effect-1", effect: hostcancel.EffectApplied},
		} {
			t.Run(string(rev)+"/"+tc.name, func(t *testing.T) { tc.run(t, rev) })
		}
	}
}

// run runs the row under rev: task_worker k (two ticks, the effect at
// tc.effectAt) held at its first tick, then stopped and settled.
func (tc otelRow) run(t *testing.T, rev hostcancel.Revision) {
	f := newFixtureAt(t, rev)
	sink := newOtelSink()
	// NoListen: a completion is news to the tasks/cancel under the
	// extension too (with the listen stream the controller would know it
	// and send none).
	c := hostcancel.New(hostcancel.Config{Session: f.s, Ack: f.ack("k", 2), Effects: f.effects(), NoListen: true,
		TracerProvider: sink.tp, MeterProvider: sink.mp})
	op := f.start(t, c, "k", map[string]any{"ticks": 2, "effectAt": tc.effectAt})
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
	// The extension's tasks have no progress (PRG-46): no attribute.
	lastProgress := ""
	if progress, ok := op.LastProgress(); ok {
		lastProgress = attribute.Float64Value(progress.Progress).Emit()
	} else if rev == hostcancel.Rev20251125 {
		t.Error("no progress kept under 2025-11-25")
	}
	if op.Key == "" {
		t.Fatal("a consequential operation without an idempotency key")
	}
	wantOp := map[attribute.Key]string{
		hostcancel.AttrTool:           refserver.ToolTaskWorker,
		hostcancel.AttrServer:         refserver.DefaultName,
		hostcancel.AttrRevision:       string(rev),
		hostcancel.AttrTaskID:         op.TaskID(),
		hostcancel.AttrClassification: string(tc.want),
		hostcancel.AttrAbortReason:    "budget ended",
		hostcancel.AttrLastProgress:   lastProgress,
		hostcancel.AttrReceipt:        tc.receipt,
		hostcancel.AttrEffect:         string(tc.effect),
		hostcancel.AttrWorkerStopped:  tc.stopped,
		hostcancel.AttrIdempotencyKey: op.Key,
	}
	for k, v := range wantOp {
		if oa[k] != v {
			t.Errorf("operation span %s = %q, want %q", k, oa[k], v)
		}
	}
	if oa[hostcancel.AttrAbortTime] == "" {
		t.Error("no abort time on the operation span")
	}
	// The span and the Result say the same of the effect.
	if r.Effect != tc.effect || (r.Receipt == nil) != (tc.receipt == "") {
		t.Errorf("result effect %s receipt %+v", r.Effect, r.Receipt)
	}
	ca := attrs(cancelSpan.Attributes())
	after, answer := tc.after, tc.answer
	if rev == hostcancel.RevTasksExtension {
		// The ack is empty, also for a terminal task (TSX-44, A-17).
		after, answer = "", "accepted"
	}
	wantCancel := map[attribute.Key]string{
		hostcancel.AttrTaskID:       op.TaskID(),
		hostcancel.AttrStatusBefore: "working",
		hostcancel.AttrStatusAfter:  after,
		hostcancel.AttrAnswer:       answer,
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
	if (tc.stopped != "") != (names[hostcancel.EventWorkerAck] == 1) || tc.counters[2] != int64(names[hostcancel.EventTaskCancelVerified]) {
		t.Errorf("worker acknowledgement and verification events: %v", names)
	}
	if names[hostcancel.EventEffect] != 1 {
		t.Errorf("no effect event on the operation span: %v", names)
	}
}
