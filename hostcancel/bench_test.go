package hostcancel_test

import (
	"fmt"
	"testing"

	"github.com/mcpflight/mcpflight/hostcancel"
)

// BenchmarkOperation runs whole operations (create, local abort, one
// tasks/cancel, verification) against the in-process reference server,
// with no OpenTelemetry setup and with the SDK's in-memory exporter; the
// difference in allocations per operation is what telemetry costs.
func BenchmarkOperation(b *testing.B) {
	for _, withOtel := range []bool{false, true} {
		name := "no-otel"
		if withOtel {
			name = "otel-sdk"
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b)
			cfg := hostcancel.Config{Session: f.s}
			if withOtel {
				sink := newOtelSink()
				cfg.TracerProvider, cfg.MeterProvider = sink.tp, sink.mp
			}
			c := hostcancel.New(cfg)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				call := f.call(fmt.Sprintf("b%d", i), map[string]any{"ticks": 1})
				call.Progress = false
				op, err := c.Start(f.ctx, call)
				if err != nil {
					b.Fatal(err)
				}
				if r := op.Abort(f.ctx, "bench"); r.Classification != hostcancel.CancelledVerified {
					b.Fatalf("%s (%s)", r.Classification, r.Detail)
				}
			}
		})
	}
}
