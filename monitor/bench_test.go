package monitor

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// benchHistory25 is a 2025-11-25 conversation of n rounds, each a call
// with progress and a log message, and a task created, polled, listed,
// its status notified and its result fetched: the traffic whose answers
// the task rules read.
func benchHistory25(n int) *history {
	h := init25()
	for i := range n {
		id, tid := 10*i+1, fmt.Sprintf("T%d", i)
		task := func(status string) string {
			return `{"taskId":"` + tid + `","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttl":60000,"pollInterval":25}`
		}
		h.c(call(fmt.Sprint(id), fmt.Sprintf(`"t%d"`, i))).s(progress(fmt.Sprintf(`"t%d"`, i), 1)).
			s(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step"}}`).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"done"}]}}`, id)).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"w","task":{"ttl":60000}}}`, id+1)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"task":%s}}`, id+1, task("working"))).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"%s"}}`, id+2, tid)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id+2, task("working"))).
			s(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + task("completed") + `}`).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":"%s"}}`, id+3, tid)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"%s"}},"content":[{"type":"text","text":"done"}],"isError":false}}`, id+3, tid)).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/list"}`, id+4)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tasks":[%s]}}`, id+4, task("completed")))
	}
	return h
}

// meta2026 is a 2026-07-28 request's _meta that declares the tasks
// extension and asks for log messages at info and above.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/logLevel":"info"}`

// benchHistory2026 is a 2026-07-28 conversation of n rounds: a call that
// logs, a tools/call answered with a task, polled to its end, a
// subscription to it acknowledged and notified, then cancelled; every
// result names the server (RPC-56).
func benchHistory2026(n int) *history {
	h := &history{}
	for i := range n {
		id, tid := 10*i+1, fmt.Sprintf("T%d", i)
		task := func(status, extra string) string {
			return `"taskId":"` + tid + `","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":60000,"pollIntervalMs":25` + extra
		}
		h.c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow",%s}}`, id, meta2026)).
			s(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step"}}`).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete","content":[{"type":"text","text":"done"}]}}`, id)).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"w",%s}}`, id+1, meta2026)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"task",%s}}`, id+1, task("working", ""))).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,"notifications":{"taskIds":["%s"]}}}`, id+2, meta2026, tid)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"notifications":{"taskIds":["%s"]}}}`, id+2, tid)).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{%s,"taskId":"%s"}}`, id+3, meta2026, tid)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete",%s}}`, id+3, task("working", ""))).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},%s}}`, id+2, task("completed", `,"result":{"content":[]}`))).
			c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{%s,"taskId":"%s"}}`, id+4, meta2026, tid)).
			s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete",%s}}`, id+4, task("completed", `,"result":{"content":[]}`))).
			c(cancel(fmt.Sprint(id + 2)))
	}
	return h
}

// BenchmarkMonitor is the monitor's cost per event of a conversation
// under each revision, the schema check off (as explore runs it).
func BenchmarkMonitor(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    *history
	}{{"2025-11-25", benchHistory25(200)}, {"2026-07-28", benchHistory2026(200)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m := New(Options{Transport: "stdio", Sides: []Side{Server}})
				for _, ev := range bc.h.events {
					m.Event("s", ev)
				}
				m.End()
				if fs := m.Findings(); len(fs) != 0 {
					b.Fatalf("findings in a conforming conversation: %v", brief(fs[:min(len(fs), 3)]))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bc.h.events)), "ns/event")
		})
	}
}

// BenchmarkHTTPSessionMemory feeds one Streamable HTTP session b.N POST
// exchanges, each a call answered on its own SSE stream, and every
// hundredth one cancelled and never answered, and reports the live heap
// after them (heap-MB): it stays flat as b.N grows when memory follows
// what is in flight. "schema" also validates every message, as watch
// and judge do.
func BenchmarkHTTPSessionMemory(b *testing.B) {
	for _, schema := range []bool{false, true} {
		name := "rules"
		if schema {
			name = "schema"
		}
		b.Run(name, func(b *testing.B) { httpSessionMemory(b, schema) })
	}
}

func httpSessionMemory(b *testing.B, schema bool) {
	m := New(Options{Transport: "http", Revision: "2025-11-25", Schema: schema})
	h := init25()
	for _, ev := range h.events {
		m.Event("s", ev)
	}
	log := newBenchLog()
	b.ReportAllocs()
	for i := range b.N {
		post, stream, id := fmt.Sprintf("POST #%d", i), fmt.Sprintf("SSE POST #%d", i), fmt.Sprint(i+1)
		log.at += time.Millisecond
		m.Event("s", log.frame(chrono.Out, post, call(id, `"t`+id+`"`)))
		if i%100 == 0 {
			m.Event("s", log.frame(chrono.Out, "POST #c"+id, cancel(id)))
			continue
		}
		m.Event("s", log.head(chrono.In, post, "HTTP 200 Content-Type: text/event-stream"))
		m.Event("s", log.head(chrono.In, stream, "sse id="+id+"-0 (empty data: priming)"))
		m.Event("s", log.frame(chrono.In, stream, result(id)))
		m.Event("s", log.note(stream, "stream ended"))
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	runtime.KeepAlive(m)
}

// benchLog numbers events and sets their time, as a recorder does,
// keeping none of them.
type benchLog struct {
	seq uint64
	at  time.Duration
}

func newBenchLog() *benchLog { return &benchLog{} }

func (l *benchLog) next(ev chrono.Event) chrono.Event {
	l.seq++
	ev.Seq, ev.Offset = l.seq, l.at
	return ev
}

func (l *benchLog) frame(dir chrono.Direction, channel, raw string) chrono.Event {
	return l.next(chrono.New().Frame(dir, channel, []byte(raw), nil, nil))
}

func (l *benchLog) head(dir chrono.Direction, channel, text string) chrono.Event {
	return l.next(chrono.Event{Dir: dir, Kind: chrono.KindHTTP, Channel: channel, Text: text})
}

func (l *benchLog) note(channel, text string) chrono.Event {
	return l.next(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindNote, Channel: channel, Text: text})
}
