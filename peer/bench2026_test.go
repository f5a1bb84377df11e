package peer_test

import (
	"context"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// BenchmarkRequest measures a tools/list round trip with the in-process
// reference server, on a 2025-11-25 session and on a 2026-07-28 one: the
// difference is what the envelope costs per request (merging it into
// params, and the resultType reading of the result).
func BenchmarkRequest(b *testing.B) {
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(revision, func(b *testing.B) {
			ctx := context.Background()
			log := chrono.New()
			conn, _ := refserver.InProcess(ctx, refserver.Options{}, transport.StreamConfig{Log: log})
			s := peer.New(conn, peer.Options{Log: log})
			defer s.Close(ctx)
			if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
				b.Fatal(err)
			}
			if revision == "2026-07-28" {
				s.SetEnvelope(negotiate.Options{}.Envelope())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := s.Request(ctx, "tools/list", nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
