package hostcancel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpflight/mcpflight/mcp"
)

// Instrumentation scope and instrument names. The three cancellation
// counters are kept apart, as seed 002 asks: a local stop signal is not a
// task cancellation request, and a request is not a verified stop.
const (
	InstrumentationName = "github.com/mcpflight/mcpflight/hostcancel"

	MetricRequestCancelSignal = "request_cancel_signal"
	MetricTaskCancelRequested = "task_cancel_requested"
	MetricTaskCancelVerified  = "task_cancel_verified"
	MetricAlerts              = "hostcancel.alerts"
	MetricOperations          = "hostcancel.operations"

	SpanOperation = "hostcancel.operation"
	SpanCancel    = mcp.MethodTasksCancel
)

// Attribute keys on spans, span events and metrics.
const (
	AttrTool           = attribute.Key("mcp.tool.name")
	AttrServer         = attribute.Key("mcp.server.name")
	AttrRevision       = attribute.Key("mcp.protocol.version")
	AttrTaskID         = attribute.Key("mcp.task.id")
	AttrRequestID      = attribute.Key("jsonrpc.request.id")
	AttrMethod         = attribute.Key("mcp.method.name")
	AttrStatus         = attribute.Key("mcp.task.status")
	AttrStatusBefore   = attribute.Key("mcp.task.status.before")
	AttrStatusAfter    = attribute.Key("mcp.task.status.after")
	AttrAnswer         = attribute.Key("hostcancel.cancel.answer")
	AttrReason         = attribute.Key("hostcancel.reason")
	AttrDetail         = attribute.Key("hostcancel.detail")
	AttrAbortTime      = attribute.Key("hostcancel.abort.time")
	AttrAbortReason    = attribute.Key("hostcancel.abort.reason")
	AttrClassification = attribute.Key("hostcancel.classification")
	AttrAlert          = attribute.Key("hostcancel.alert")
	AttrLastProgress   = attribute.Key("hostcancel.progress.last")
	AttrReceipt        = attribute.Key("hostcancel.receipt")
	AttrEffect         = attribute.Key("hostcancel.effect")
	AttrWorkerStopped  = attribute.Key("hostcancel.worker.stopped")
	AttrIdempotencyKey = attribute.Key("hostcancel.idempotency_key")
)

// telemetry is the controller's OpenTelemetry instruments. It is nil when
// the host configured neither a TracerProvider nor a MeterProvider: then
// no OpenTelemetry call is made at all.
type telemetry struct {
	tracer                       trace.Tracer
	signals, requested, verified metric.Int64Counter
	alerts, operations           metric.Int64Counter
	meterOn                      bool
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	if tp == nil && mp == nil {
		return nil
	}
	t := &telemetry{}
	if tp != nil {
		t.tracer = tp.Tracer(InstrumentationName)
	}
	if mp != nil {
		m := mp.Meter(InstrumentationName)
		// An instrument that fails to register is the API's no-op one,
		// which is what a failed registration should cost.
		t.signals, _ = m.Int64Counter(MetricRequestCancelSignal, metric.WithDescription("local stop signals for an operation (phase one); not a task cancellation"))
		t.requested, _ = m.Int64Counter(MetricTaskCancelRequested, metric.WithDescription("tasks/cancel requests sent"))
		t.verified, _ = m.Int64Counter(MetricTaskCancelVerified, metric.WithDescription("task cancellations verified by tasks/get (and the worker acknowledgement)"))
		t.alerts, _ = m.Int64Counter(MetricAlerts, metric.WithDescription("seed 002 alerts, by alert"))
		t.operations, _ = m.Int64Counter(MetricOperations, metric.WithDescription("settled operations, by classification"))
		t.meterOn = true
	}
	return t
}

// opSpan is one operation's span and metric attributes.
type opSpan struct {
	t      *telemetry
	span   trace.Span
	cancel trace.Span
	attrs  metric.MeasurementOption
}

// start opens the operation's span.
func (t *telemetry) start(ctx context.Context, tool, server string, rev Revision) *opSpan {
	if t == nil {
		return nil
	}
	s := &opSpan{t: t}
	base := []attribute.KeyValue{AttrTool.String(tool), AttrServer.String(server), AttrRevision.String(string(rev))}
	if t.tracer != nil {
		_, s.span = t.tracer.Start(ctx, SpanOperation, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(base...))
	}
	if t.meterOn {
		s.attrs = metric.WithAttributeSet(attribute.NewSet(base...))
	}
	return s
}

// event records e on the span.
func (s *opSpan) event(e Event) {
	if s == nil || s.span == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	for _, kv := range []struct {
		k attribute.Key
		v string
	}{{AttrTaskID, e.TaskID}, {AttrRequestID, e.RequestID}, {AttrMethod, e.Method}, {AttrStatus, e.Status}, {AttrReason, e.Reason}, {AttrDetail, e.Detail}} {
		if kv.v != "" {
			attrs = append(attrs, kv.k.String(kv.v))
		}
	}
	s.span.AddEvent(e.Name, trace.WithTimestamp(e.Time), trace.WithAttributes(attrs...))
	switch e.Name {
	case EventTaskCreated:
		s.span.SetAttributes(AttrTaskID.String(e.TaskID))
	case EventLocalAbort:
		s.span.SetAttributes(AttrAbortTime.String(e.Time.UTC().Format(time.RFC3339Nano)), AttrAbortReason.String(e.Reason))
	}
}

func (s *opSpan) count(c metric.Int64Counter, extra ...attribute.KeyValue) {
	if s == nil || !s.t.meterOn {
		return
	}
	if len(extra) == 0 {
		c.Add(context.Background(), 1, s.attrs)
		return
	}
	c.Add(context.Background(), 1, s.attrs, metric.WithAttributes(extra...))
}

func (s *opSpan) signal() {
	if s != nil {
		s.count(s.t.signals)
	}
}

// cancelStart opens the tasks/cancel span.
func (s *opSpan) cancelStart(taskID, statusBefore string) {
	if s == nil {
		return
	}
	s.count(s.t.requested)
	if s.span == nil {
		return
	}
	_, s.cancel = s.t.tracer.Start(trace.ContextWithSpan(context.Background(), s.span), SpanCancel,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(AttrMethod.String(SpanCancel), AttrTaskID.String(taskID), AttrStatusBefore.String(statusBefore)))
}

// cancelEnd closes the tasks/cancel span with its answer.
func (s *opSpan) cancelEnd(requestID, answer, statusAfter string, failed bool) {
	if s == nil || s.cancel == nil {
		return
	}
	s.cancel.SetAttributes(AttrRequestID.String(requestID), AttrAnswer.String(answer), AttrStatusAfter.String(statusAfter))
	if failed {
		s.cancel.SetStatus(codes.Error, answer)
	}
	s.cancel.End()
	s.cancel = nil
}

func (s *opSpan) verified() {
	if s != nil {
		s.count(s.t.verified)
	}
}

func (s *opSpan) alert(a Alert) {
	if s == nil {
		return
	}
	s.count(s.t.alerts, AttrAlert.String(string(a)))
	if s.span != nil {
		s.span.AddEvent(EventAlert, trace.WithAttributes(AttrAlert.String(string(a))))
	}
}

// end records the reconciliation and closes the span.
func (s *opSpan) end(op *Operation, r Result) {
	if s == nil {
		return
	}
	s.count(s.t.operations, AttrClassification.String(string(r.Classification)))
	if s.span == nil {
		return
	}
	if s.cancel != nil {
		s.cancelEnd("", "no answer", r.Task.Status, true)
	}
	attrs := []attribute.KeyValue{AttrClassification.String(string(r.Classification)), AttrTaskID.String(r.TaskID),
		AttrStatusAfter.String(r.Task.Status), AttrDetail.String(r.Detail)}
	if r.LastProgress != nil {
		attrs = append(attrs, AttrLastProgress.Float64(r.LastProgress.Progress))
	}
	if r.Receipt != nil {
		attrs = append(attrs, AttrReceipt.String(r.Receipt.ID))
	}
	if r.Effect != "" {
		attrs = append(attrs, AttrEffect.String(string(r.Effect)))
	}
	if r.WorkerStopped != nil {
		attrs = append(attrs, AttrWorkerStopped.Bool(*r.WorkerStopped))
	}
	if op.Key != "" {
		attrs = append(attrs, AttrIdempotencyKey.String(op.Key))
	}
	s.span.SetAttributes(attrs...)
	if r.Alert {
		s.span.SetStatus(codes.Error, string(r.Classification))
	}
	s.span.End()
}
