package wireschema

import (
	"testing"
)

// BenchmarkCheckFrame measures the validation of one inbound frame of
// each common kind, as Check does it for every frame of a chronology
// (decoding included); ns/op and allocs/op are per frame.
func BenchmarkCheckFrame(b *testing.B) {
	tools := `{"jsonrpc":"2.0","id":2,"result":{"tools":[`
	for i := range 10 {
		if i > 0 {
			tools += ","
		}
		tools += `{"name":"tool","description":"a tool","inputSchema":{"type":"object","properties":{"n":{"type":"number"}}},"execution":{"taskSupport":"optional"}}`
	}
	tools += `]}}`
	frames := []struct {
		name    string
		request string
		frame   string
	}{
		{"progress", "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpflight-1","progress":3,"total":10}}`},
		{"call-result", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done after 10 steps"}]}}`},
		{"initialize", initReq, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"mcpflight-reference","version":"dev"}}}`},
		{"tools-list-10", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, tools},
		{"error", `{"jsonrpc":"2.0","id":4,"method":"ping"}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}`},
	}
	s, err := Load(Rev20251125)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range frames {
		b.Run(f.name, func(b *testing.B) {
			var fs []frame
			if f.request != "" {
				fs = append(fs, out(f.request))
			}
			evs := chronology(append(fs, in(f.frame))...)
			t := NewTracker(s)
			for _, ev := range evs[:len(evs)-1] {
				t.Event(ev)
			}
			ev := evs[len(evs)-1]
			b.SetBytes(int64(len(ev.Raw)))
			b.ReportAllocs()
			for b.Loop() {
				if checked, vs := t.Event(ev); !checked || len(vs) > 0 {
					b.Fatalf("checked %v, violations %+v", checked, vs)
				}
			}
		})
	}
}
