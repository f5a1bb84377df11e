package watch

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// summariseLarge summarises frame as a frame too large to keep: through
// the shape scanner, fed in pieces of n bytes.
func summariseLarge(frame string, n int) (*chrono.Summary, string) {
	f := frameBuilder{limit: 1}
	for i := 0; i < len(frame); i += n {
		f.write([]byte(frame[i:min(i+n, len(frame))]))
	}
	sum, _, note := f.summary()
	return sum, note
}

// TestShapeSummaryMatchesDecode: for frames whose members are small, the
// summary read from the top-level members of a frame too large to keep
// is the one jsonrpc.Decode gives of the whole frame, however the frame
// is cut into pieces.
func TestShapeSummaryMatchesDecode(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t"}}}`,
		`{"result":{"content":[{"type":"text","text":"a\"b\\"}]},"jsonrpc":"2.0","id":"abc"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"nope"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
		" \t{ \"jsonrpc\" : \"2.0\" ,\r\n \"id\" : 5 , \"result\" : { } } ",
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"method":"x","id":1}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","id":true,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
		`{"a\"b":1,"jsonrpc":"2.0","method":"m","params":[1,{"x":[]}]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`"just a string"`,
		`42`,
		`{}`,
		`{"jsonrpc":"2.0","id":1`,
		`{"jsonrpc":"2.0","id":1}}`,
		`{"jsonrpc":"2.0" "id":1}`,
		`{"jsonrpc":"2.0",}`,
		`{"jsonrpc":"2.0","id":}`,
		`{"jsonrpc":"2.0","id":tru"e"}`,
		`{"jsonrpc":"2.0","method":"\u0070ing","id":7}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"bad \xff utf8\",\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"caf\xc3\xa9\",\"id\":1}",
		`<html>`,
	}
	for _, frame := range frames {
		want := chrono.Summarize(jsonrpc.Decode([]byte(frame)))
		for _, n := range []int{1, 2, 7, len(frame)} {
			got, note := summariseLarge(frame, n)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%q in pieces of %d: summary differs from Decode's (-decode +shape):\n%s", frame, n, diff)
			}
			if !strings.Contains(note, "summarised from its top-level members") {
				t.Errorf("%q: note %q does not say how it was summarised", frame, note)
			}
		}
	}
}

// TestShapeSummaryOfHugeFrames: whatever the size of params or result,
// the summary has the kind, id, method, and the progress token or
// request id in params.
func TestShapeSummaryOfHugeFrames(t *testing.T) {
	pad := strings.Repeat(`x\"\\y`, 3*shapeMaxValue)
	tests := []struct {
		frame string
		want  chrono.Summary
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","arguments":{"pad":"` + pad + `"},"_meta":{"progressToken":"big"}}}`,
			chrono.Summary{Kind: "request", ID: "7", Method: "tools/call", Token: `"big"`}},
		{`{"result":{"blob":"` + pad + `","more":[` + strings.Repeat(`{"a":[1,2]},`, shapeMaxValue) + `{}]},"jsonrpc":"2.0","id":"r8"}`,
			chrono.Summary{Kind: "result", ID: `"r8"`}},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"` + pad + `"}}`,
			chrono.Summary{Kind: "notification", Method: "notifications/cancelled", RequestID: "9"}},
		{`{"jsonrpc":"2.0","id":10,"error":{"code":-32603,"message":"` + pad + `"}}`,
			chrono.Summary{Kind: "error", ID: "10"}},
	}
	for _, tt := range tests {
		for _, n := range []int{3, 4096, len(tt.frame)} {
			got, _ := summariseLarge(tt.frame, n)
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("%.60q… in pieces of %d (-want +got):\n%s", tt.frame, n, diff)
			}
		}
	}
}

// TestFrameBuilderKeepsPrefixAndSize: a frame within the limit is kept
// whole and decoded exactly; a longer one keeps its first limit bytes
// and its full size.
func TestFrameBuilderKeepsPrefixAndSize(t *testing.T) {
	f := newFrameBuilder(16)
	small := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	f.write([]byte(small[:5]))
	f.write([]byte(small[5:]))
	if !f.whole() || string(f.keep) != small || f.size != len(small) {
		t.Fatalf("small frame: whole=%v keep=%q size=%d", f.whole(), f.keep, f.size)
	}
	if s, _, note := f.summary(); s.Method != "ping" || note != "" {
		t.Errorf("small frame summary %+v, note %q", s, note)
	}
	f.reset()
	big := `{"jsonrpc":"2.0","id":2,"result":{"x":"` + strings.Repeat("z", 2*f.limit) + `"}}`
	for i := 0; i < len(big); i += 1000 {
		f.write([]byte(big[i:min(i+1000, len(big))]))
	}
	if f.whole() || len(f.keep) != f.limit || string(f.keep) != big[:f.limit] || f.size != len(big) {
		t.Fatalf("big frame: whole=%v kept %d bytes (limit %d), size %d of %d", f.whole(), len(f.keep), f.limit, f.size, len(big))
	}
	if s, _, _ := f.summary(); s.Kind != "result" || s.ID != "2" {
		t.Errorf("big frame summary %+v", s)
	}
}
