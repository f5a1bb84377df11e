package negotiate_test

import (
	"context"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// BenchmarkSurveyTarget measures what negotiating costs a run before its
// first case, against the in-process reference server (a 2025-11-25
// server: server/discover is refused, initialize agrees): one connection
// per probe.
func BenchmarkSurveyTarget(b *testing.B) {
	dial := func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		conn, _ := refserver.InProcess(ctx, refserver.Options{}, transport.StreamConfig{Log: log})
		return conn, nil
	}
	for _, mode := range []negotiate.Mode{negotiate.Mode20251125, negotiate.ModeAuto} {
		b.Run(string(mode), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := negotiate.SurveyTarget(context.Background(), dial, mode, negotiate.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
