package judge

import (
	"fmt"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/monitor"
)

// BenchmarkJudgePing: what judging one ping and its answer costs a live
// judge (the monitor's rules and the schema check), per round trip.
//
//	go test -run '^$' -bench JudgePing ./judge
func BenchmarkJudgePing(b *testing.B) {
	for _, schema := range []bool{false, true} {
		b.Run(fmt.Sprintf("schema=%v", schema), func(b *testing.B) {
			j := New(Options{Transport: "stdio", Monitor: monitor.Options{Schema: schema}})
			var seq uint64
			frame := func(dir chrono.Direction, raw string) chrono.Event {
				seq++
				return chrono.Event{Seq: seq, Dir: dir, Channel: "stdin", Kind: chrono.KindFrame, Raw: []byte(raw), Summary: chrono.Summarize(jsonrpc.Decode([]byte(raw)))}
			}
			feed := func(dir chrono.Direction, raw string) { j.Event(frame(dir, raw)) }
			feed(chrono.Out, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
			feed(chrono.In, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
			// The events as the recorder hands them over, decoded and
			// summarised: that is the recorder's cost, not the judge's.
			evs := make([]chrono.Event, 0, 2*b.N)
			for i := range b.N {
				evs = append(evs, frame(chrono.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)),
					frame(chrono.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i+1)))
			}
			b.ResetTimer()
			for _, ev := range evs {
				j.Event(ev)
			}
		})
	}
}
