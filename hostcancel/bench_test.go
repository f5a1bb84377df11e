package hostcancel_test

import (
	"fmt"
	"testing"

	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/mcp"
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
			cancelLoop(b, f, c)
		})
	}
}

// BenchmarkCancelRoundTrip is one cancel round trip (tools/call to the
// CreateTaskResult, local abort, one tasks/cancel, verification by
// tasks/get) against the reference server, per revision and transport.
// Under the extension each operation also opens and ends its
// subscriptions/listen stream unless NoListen.
func BenchmarkCancelRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name     string
		fixture  func(testing.TB) *fixture
		noListen bool
	}{
		{"2025-11-25/in-process", func(tb testing.TB) *fixture { return newFixtureAt(tb, hostcancel.Rev20251125) }, false},
		{"extension/in-process", func(tb testing.TB) *fixture { return newFixtureAt(tb, hostcancel.RevTasksExtension) }, false},
		{"extension/in-process/no-listen", func(tb testing.TB) *fixture { return newFixtureAt(tb, hostcancel.RevTasksExtension) }, true},
		{"extension/http", func(tb testing.TB) *fixture { f, _ := newFixtureHTTP(tb); return f }, false},
		{"extension/http/no-listen", func(tb testing.TB) *fixture { f, _ := newFixtureHTTP(tb); return f }, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := bc.fixture(b)
			c := hostcancel.New(hostcancel.Config{Session: f.s, NoListen: bc.noListen})
			cancelLoop(b, f, c)
			b.StopTimer()
			b.ReportMetric(float64(f.sent(mcp.MethodTasksGet))/float64(b.N), "tasks/get/op")
		})
	}
}

// cancelLoop runs b.N operations on f: create, abort, one tasks/cancel,
// verification.
func cancelLoop(b *testing.B, f *fixture, c *hostcancel.Controller) {
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
}
