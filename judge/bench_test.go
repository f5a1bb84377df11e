package judge

import (
	"fmt"
	"runtime"
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

// BenchmarkJudgeHTTPSessions feeds a live judge b.N Streamable HTTP
// exchanges of 2025-11-25 sessions, each opened by initialize and holding
// eight pings, then ended by DELETE (or abandoned: the host opens the
// next without ending it), as watch's proxy records them, and reports
// the live heap after them (heap-MB): it stays flat as b.N grows when
// memory follows what is in flight.
//
//	go test -run '^$' -bench JudgeHTTPSessions -benchtime 1000000x ./judge
func BenchmarkJudgeHTTPSessions(b *testing.B) {
	for _, deleted := range []bool{true, false} {
		b.Run(fmt.Sprintf("deleted=%v", deleted), func(b *testing.B) { benchHTTPSessions(b, deleted) })
	}
}

func benchHTTPSessions(b *testing.B, deleted bool) {
	j := New(Options{Transport: "http", Monitor: monitor.Options{}})
	var seq uint64
	next := func(ev chrono.Event) {
		seq++
		ev.Seq = seq
		j.Event(ev)
	}
	head := func(dir chrono.Direction, ch, text string) {
		next(chrono.Event{Dir: dir, Channel: ch, Kind: chrono.KindHTTP, Text: text})
	}
	frame := func(dir chrono.Direction, ch, raw string) {
		next(chrono.New().Frame(dir, ch, []byte(raw), nil, nil))
	}
	b.ReportAllocs()
	session := ""
	for i := range b.N {
		ch := fmt.Sprintf("POST #%d", i)
		switch {
		case i%10 == 0:
			session = fmt.Sprintf("s%d", i)
			head(chrono.Out, ch, "POST /mcp Content-Type: application/json")
			frame(chrono.Out, ch, initialize)
			head(chrono.In, ch, "HTTP 200 Mcp-Session-Id: "+session+"; Content-Type: application/json")
			frame(chrono.In, ch, initResult)
		case i%10 == 9 && deleted:
			ch = fmt.Sprintf("DELETE #%d", i)
			head(chrono.Out, ch, "DELETE /mcp Mcp-Session-Id: "+session)
			head(chrono.In, ch, "HTTP 200")
		default:
			head(chrono.Out, ch, "POST /mcp Mcp-Session-Id: "+session+"; Content-Type: application/json")
			frame(chrono.Out, ch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
			head(chrono.In, ch, "HTTP 200 Content-Type: application/json")
			frame(chrono.In, ch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i))
		}
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	runtime.KeepAlive(j)
}
