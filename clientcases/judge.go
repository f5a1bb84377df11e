// Package clientcases is the client-under-test catalogue: each row says
// what mcpflight's scripted server does, what the client's adapter is
// told, and which requirement the chronology proves kept or broken, in
// the words of the run's revision. clientrun runs the rows; the verdicts
// are the verdict package's, so that reports and baselines are shared
// with "check".
package clientcases

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

const (
	v2025 = spec.V20251125
	v2026 = spec.V20260728
)

var (
	both  = []string{v2025, v2026}
	only  = func(v string) []string { return []string{v} }
	stdio = []string{clientrun.TransportStdio}
	web   = []string{clientrun.TransportHTTP}
)

// All returns the catalogue in order.
func All() []clientrun.Case {
	var out []clientrun.Case
	out = append(out, lifecycleCases()...)
	out = append(out, cancelCases()...)
	out = append(out, idCases()...)
	out = append(out, taskCases()...)
	out = append(out, transportCases()...)
	out = append(out, versioningCases()...)
	return out
}

// step builds a one-call step.
func step(c clientrun.CallStep) clientrun.Step {
	return clientrun.Step{Op: clientrun.OpCall, Call: &c}
}

// cancelsOf lists the notifications/cancelled that name id on conn (any
// connection over HTTP).
func cancelsOf(p *clientrun.Played, c *clientrun.Call) []clientrun.Inbound {
	var out []clientrun.Inbound
	for _, n := range p.Notifications {
		if n.Msg.Method != mcp.NotificationCancelled || n.Conn != c.In.Conn {
			continue
		}
		if id, ok := requestIDOf(n.Msg); ok && id.Key() == c.ID.Key() {
			out = append(out, n)
		}
	}
	return out
}

// allCancels lists every notifications/cancelled.
func allCancels(p *clientrun.Played) []clientrun.Inbound {
	var out []clientrun.Inbound
	for _, n := range p.Notifications {
		if n.Msg.Method == mcp.NotificationCancelled {
			out = append(out, n)
		}
	}
	return out
}

// requestIDOf is the requestId a cancel names.
func requestIDOf(m *jsonrpc.Message) (jsonrpc.ID, bool) {
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &params) != nil || params.RequestID == nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.ParseID(params.RequestID)
	return id, err == nil
}

// goneSeq is the seq at which the client closed the call's stream (HTTP),
// 0 when it did not.
func goneSeq(log *chrono.Log, c *clientrun.Call) uint64 {
	num := strings.TrimPrefix(c.In.Channel, "POST ")
	for _, ev := range log.Snapshot() {
		if ev.Kind == chrono.KindState && ev.To == "closed by the client" &&
			(ev.Channel == c.In.Channel || ev.Channel == "SSE "+num || strings.HasPrefix(ev.Channel, "SSE "+num+" via ")) {
			return ev.Seq
		}
	}
	return 0
}

// playQuick plays the handshake and one call of the tool "quick", and
// returns what happened, or the outcome of a case that cannot judge: the
// client unusable, or no request at all.
func playQuick(ctx context.Context, e *clientrun.Env) (*clientrun.Played, *verdict.Outcome) {
	p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "quick"})}}, clientrun.Script{Tools: []clientrun.Tool{{Name: "quick"}}})
	if o := p.Unusable(); o != nil {
		return p, o
	}
	if len(p.Requests) == 0 {
		o := noCall(p, "quick")
		return p, &o
	}
	return p, nil
}

// callsTo lists the calls of a tool, in arrival order.
func callsTo(p *clientrun.Played, tool string) []*clientrun.Call {
	var out []*clientrun.Call
	for _, c := range p.Calls {
		if c.Tool == tool {
			out = append(out, c)
		}
	}
	return out
}

// requests lists the requests of a method.
func requests(p *clientrun.Played, method string) []clientrun.Inbound {
	var out []clientrun.Inbound
	for _, r := range p.Requests {
		if r.Msg.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// noCall is the outcome of a case whose client never made the call it
// was told to: the connection or the adapter failed before it.
func noCall(p *clientrun.Played, tool string) verdict.Outcome {
	if r, ok := p.Report(0, 0); ok && r.Outcome != clientrun.OutcomeConnected {
		return verdict.Errorf("the client did not connect (%s), so it never called %s", chrono.Sanitize(r.String(), false), tool)
	}
	for _, r := range p.Reports {
		if r.Step > 0 && (r.Outcome == clientrun.OutcomeError || r.Outcome == clientrun.OutcomeTimeout) {
			// The client's own account: it could not make the call, so the
			// case's rule was not exercised (other cases judge why).
			return verdict.Skipf("the client could not call %s (%s), so the rule was not exercised", tool, chrono.Sanitize(r.String(), false))
		}
	}
	return verdict.Errorf("the client never called the tool %s it was told to call (%s)", tool, reportsText(p))
}

// reportsText lists the adapter's reports for a summary.
func reportsText(p *clientrun.Played) string {
	if len(p.Reports) == 0 {
		return "the adapter reported nothing"
	}
	parts := make([]string, 0, len(p.Reports))
	for _, r := range p.Reports {
		parts = append(parts, r.String())
	}
	return chrono.Sanitize("adapter: "+strings.Join(parts, "; "), false)
}

// reportSeq is the seq of the adapter's report note for step (0 when not
// reported).
func reportSeq(log *chrono.Log, step int) uint64 {
	prefix := fmt.Sprintf("report: step %d:", step)
	for _, ev := range log.Snapshot() {
		if ev.Kind == chrono.KindNote && ev.Channel == "adapter" && strings.HasPrefix(ev.Text, prefix) {
			return ev.Seq
		}
	}
	return 0
}

// exitSeq is the seq of the client's exit, 0 while it had not exited.
func exitSeq(log *chrono.Log) uint64 {
	for _, ev := range log.Snapshot() {
		if ev.Kind == chrono.KindExit && ev.Channel == "client" {
			return ev.Seq
		}
	}
	return 0
}

// holdUntil waits until one of chs is closed or ctx ends, and says
// which (its index, or -1 for ctx).
func holdUntil(ctx context.Context, chs ...<-chan struct{}) int {
	cases := make([]<-chan struct{}, len(chs))
	copy(cases, chs)
	done := make(chan int, len(chs))
	stop := make(chan struct{})
	defer close(stop)
	for i, ch := range cases {
		go func() {
			select {
			case <-ch:
				done <- i
			case <-stop:
			}
		}()
	}
	select {
	case i := <-done:
		return i
	case <-ctx.Done():
		return -1
	}
}

// ticker paces the script's progress: how the server behaves, never how
// a case synchronises.
func ticker(d time.Duration) (*time.Ticker, func()) {
	t := time.NewTicker(d)
	return t, t.Stop
}

// signalOf says how the client signalled a cancel of c: the seq of its
// notifications/cancelled, or of closing the stream (HTTP); 0 for none.
func signalOf(p *clientrun.Played, log *chrono.Log, c *clientrun.Call) (seq uint64, how string) {
	if cs := cancelsOf(p, c); len(cs) > 0 {
		seq, how = cs[0].Seq, mcp.NotificationCancelled
	}
	if g := goneSeq(log, c); g != 0 && (seq == 0 || g < seq) {
		seq, how = g, "closing the stream"
	}
	return seq, how
}

// http2026 reports whether the run is 2026-07-28 over Streamable HTTP,
// where closing the stream is the cancel (CAN-43).
func http2026(e *clientrun.Env) bool {
	return e.Revision == v2026 && e.Transport == clientrun.TransportHTTP
}

// containsToken reports whether params have _meta.progressToken.
func containsToken(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta[mcp.MetaProgressToken]
	return ok
}
