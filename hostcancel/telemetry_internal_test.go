package hostcancel

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// telemetryOnce is what one cancelled operation asks of telemetry.
func telemetryOnce(t *telemetry, op *Operation) {
	s := t.start(context.Background(), "task_worker", "mcpflight-reference", Rev20251125)
	now := time.Now()
	for _, name := range []string{EventRequest, EventTaskCreated, EventLocalAbort, EventRequest, EventTaskCancelRequested, EventTaskCancelResponse, EventRequest, EventStatus, EventClassified} {
		s.event(Event{Name: name, Time: now, TaskID: "task-1", RequestID: "7", Method: "tasks/get", Status: "working"})
	}
	s.signal()
	s.cancelStart("task-1", "working")
	s.cancelEnd("8", "accepted", "cancelled", false)
	s.verified()
	s.end(op, Result{Classification: CancelledVerified, TaskID: "task-1"})
}

// TestTelemetryOffAllocatesNothing: with no provider configured the
// telemetry hooks of a whole operation allocate nothing.
func TestTelemetryOffAllocatesNothing(t *testing.T) {
	op := &Operation{}
	if n := testing.AllocsPerRun(100, func() { telemetryOnce(newTelemetry(nil, nil), op) }); n != 0 {
		t.Errorf("%v allocations per operation with telemetry off, want 0", n)
	}
}

// BenchmarkTelemetry measures the telemetry of one operation alone: off
// (no provider: no OpenTelemetry call at all) and on the SDK.
func BenchmarkTelemetry(b *testing.B) {
	op := &Operation{}
	b.Run("off", func(b *testing.B) {
		t := newTelemetry(nil, nil)
		b.ReportAllocs()
		for range b.N {
			telemetryOnce(t, op)
		}
	})
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		t := newTelemetry(tp, mp)
		b.ReportAllocs()
		for range b.N {
			telemetryOnce(t, op)
		}
	})
}
