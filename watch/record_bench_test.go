package watch_test

import (
	"io"
	"strconv"
	"testing"

	"github.com/mcpflight/mcpflight/judge"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/watch"
)

// BenchmarkRecordPing: the recorder's CPU and allocations per ping round
// trip of a stdio conversation, as the shipped shim records it (framing,
// decoding, JSON Lines) and judges it (a live judge, with and without the
// schema check), on one goroutine: what watch spends off the forwarding
// path on each round trip, measured apart from the scheduling around it.
//
//	go test -run '^$' -bench RecordPing -benchmem ./watch/
func BenchmarkRecordPing(b *testing.B) {
	for _, bc := range []struct {
		name          string
		judge, schema bool
	}{{"record", false, false}, {"judge", true, false}, {"judge+schema", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := watch.RecorderConfig{JSONL: io.Discard}
			if bc.judge {
				j := judge.New(judge.Options{Transport: "stdio", Monitor: monitor.Options{Schema: bc.schema}})
				cfg.Sinks = []watch.Sink{j}
			}
			r := watch.NewSyncRecorder(cfg)
			r.Host([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n"))
			r.Server([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}` + "\n"))
			r.Host([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			var ping, pong []byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id := strconv.Itoa(i + 1)
				ping = append(append(append(ping[:0], `{"jsonrpc":"2.0","id":`...), id...), `,"method":"ping"}`+"\n"...)
				pong = append(append(append(pong[:0], `{"jsonrpc":"2.0","id":`...), id...), `,"result":{}}`+"\n"...)
				r.Host(ping)
				r.Server(pong)
				if i%16 == 15 {
					r.Flush()
				}
			}
			b.StopTimer()
			r.Flush()
		})
	}
}
