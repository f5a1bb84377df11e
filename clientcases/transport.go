package clientcases

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

func transportCases() []clientrun.Case {
	return []clientrun.Case{
		{
			ID:         "http/drop-resumed-not-cancelled",
			Title:      "a dropped SSE stream is resumed with Last-Event-ID, not taken for a cancel",
			Reqs:       []string{"HTTP-42", "HTTP-25", "HTTP-45"},
			Versions:   only(v2025),
			Transports: web,
			Sends:      "one progress (event ID 1-1), then ends the call's SSE stream without a response; the second progress and the result (\"resumed-result\") wait for a GET with Last-Event-ID",
			Expect:     "a GET with Last-Event-ID that gets the result to the caller; no notifications/cancelled",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				script := clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}},
					Call: func(ctx context.Context, c *clientrun.Call) {
						c.Progress(ctx)
						c.Drop()
						c.Progress(ctx)
						_ = c.Result(ctx, "resumed-result")
					}}
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "slow", Progress: true})}}, script)
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "slow")
				if len(calls) == 0 {
					return noCall(p, "slow")
				}
				c := calls[0]
				if cs := cancelsOf(p, c); len(cs) > 0 {
					return verdict.Broken(e.Revision, verdict.Req("HTTP-25"), []string{"the stream resumed; no cancel"},
						fmt.Sprintf("the client cancelled %s after the stream dropped", c.ID), cs[0].Seq)
				}
				var resumed uint64
				for _, ev := range e.Log.Snapshot() {
					if ev.Kind == chrono.KindHTTP && ev.Dir == chrono.In && strings.HasPrefix(ev.Text, "GET ") &&
						strings.Contains(ev.Text, "; Last-Event-Id: ") {
						resumed = ev.Seq
						break
					}
				}
				if resumed == 0 {
					return verdict.Broken(e.Revision, verdict.Req("HTTP-42"), []string{"GET with Last-Event-ID after the drop"},
						"the client never resumed the dropped stream ("+reportsText(p)+")", 0)
				}
				if r, _ := p.Report(1, 0); r.Outcome != clientrun.OutcomeResult || r.Text != "resumed-result" {
					return verdict.Broken(e.Revision, verdict.Req("HTTP-42"), []string{"the caller gets \"resumed-result\" from the resumed stream"},
						"the client resumed at seq "+fmt.Sprint(resumed)+" but its caller got: "+chrono.Sanitize(r.String(), false), reportSeq(e.Log, 1))
				}
				return verdict.Passf("the client resumed the stream at seq %d and its caller got the result", resumed)
			},
		},
		{
			ID:         "http/reissue-after-broken-stream",
			Title:      "a request whose 2026 response stream broke is re-issued with a new ID",
			Reqs:       []string{"HTTP-94", "HTTP-93"},
			Versions:   only(v2026),
			Transports: web,
			Sends:      "one progress, then ends the first call's stream without a response (no resumption in 2026-07-28); answers a second call of the tool with \"reissued\"",
			Expect:     "the same tool called again with a new request ID, and no GET resumption",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				// A client that does not re-issue may wait for the lost
				// response for ever: Patience after the drop (a safety net,
				// counted from the drop, not from the client's start) the
				// case stops it.
				pctx, stop := context.WithCancel(ctx)
				defer stop()
				reissued := make(chan struct{})
				var once sync.Once
				script := clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}},
					Call: func(ctx context.Context, c *clientrun.Call) {
						if c.In.Seq == firstCallSeq(e) {
							c.Progress(ctx)
							c.Drop()
							t := time.NewTimer(e.Patience())
							defer t.Stop()
							select {
							case <-reissued:
							case <-t.C:
								e.Log.Harness(chrono.KindDecision, "server", fmt.Sprintf("no re-issue of request %s %v after its stream was dropped: stopping the client", c.ID, e.Patience()))
								stop()
							case <-ctx.Done():
							}
							return
						}
						once.Do(func() { close(reissued) })
						_ = c.Result(ctx, "reissued")
					}}
				p := e.Play(pctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "slow", Progress: true})}}, script)
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "slow")
				if len(calls) == 0 {
					return noCall(p, "slow")
				}
				if len(calls) == 1 {
					why := "the broken request was not re-issued (" + reportsText(p) + ")"
					if p.StoppedByUs {
						why += fmt.Sprintf("; the client was still waiting for it %v after the drop, when the case stopped it", e.Patience())
					}
					return verdict.Broken(e.Revision, verdict.Req("HTTP-94"), []string{"the call re-issued as a new request"}, why, 0)
				}
				if calls[1].ID.Key() == calls[0].ID.Key() {
					return verdict.Broken(e.Revision, verdict.Req("HTTP-94"), []string{"a new request ID for the re-issued request"},
						fmt.Sprintf("the re-issued request has the broken one's ID %s", calls[0].ID), calls[1].In.Seq)
				}
				return verdict.Passf("the broken request %s was re-issued as %s", calls[0].ID, calls[1].ID)
			},
		},
		{
			ID:         "http/request-headers",
			Title:      "every POST carries the headers the revision requires",
			Reqs:       []string{"HTTP-9", "HTTP-50", "HTTP-56", "HTTP-83", "HTTP-95", "HTTP-96", "HTTP-100", "HTTP-107"},
			Versions:   both,
			Transports: web,
			Sends:      "answers the handshake and one tools/call",
			Expect:     "Accept lists application/json and text/event-stream; 2025-11-25: MCP-Protocol-Version and Mcp-Session-Id after initialize; 2026-07-28: MCP-Protocol-Version matching the body, Mcp-Method, and Mcp-Name for tools/call, and no Mcp-Session-Id (info)",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p, o := playQuick(ctx, e)
				if o != nil {
					return *o
				}
				afterInit := false
				var sessionID *clientrun.Inbound
				for _, in := range append(append([]clientrun.Inbound{}, p.Requests...), p.Notifications...) {
					h, m := in.Header, in.Msg
					accept := h.Get("Accept")
					if in.Msg.Kind.String() == "request" && (!strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream")) {
						return verdict.Broken(e.Revision, verdict.Req("HTTP-9").Under(v2026, "HTTP-83"), []string{"Accept: application/json, text/event-stream"},
							fmt.Sprintf("%s was POSTed with Accept %q", chrono.Sanitize(m.Method, false), chrono.Sanitize(accept, false)), in.Seq)
					}
					if e.Revision == v2025 {
						if m.Method == mcp.MethodInitialize {
							afterInit = true
							continue
						}
						if afterInit && h.Get("Mcp-Protocol-Version") == "" {
							return verdict.Broken(e.Revision, verdict.Req("HTTP-56"), []string{"MCP-Protocol-Version on every request after initialize"},
								fmt.Sprintf("%s without MCP-Protocol-Version", chrono.Sanitize(m.Method, false)), in.Seq)
						}
						if afterInit && h.Get("Mcp-Session-Id") == "" {
							return verdict.Broken(e.Revision, verdict.Req("HTTP-50"), []string{"the Mcp-Session-Id of the initialize response"},
								fmt.Sprintf("%s without Mcp-Session-Id", chrono.Sanitize(m.Method, false)), in.Seq)
						}
						continue
					}
					if h.Get("Mcp-Session-Id") != "" && sessionID == nil {
						sessionID = &in
					}
					if m.Kind.String() != "request" {
						continue // header requirements for notification POSTs are not defined (HTTP-99)
					}
					if v := h.Get("Mcp-Protocol-Version"); v == "" || v != metaVersion(m.Params) {
						return verdict.Broken(e.Revision, verdict.Req("HTTP-95"), []string{"MCP-Protocol-Version equal to _meta's io.modelcontextprotocol/protocolVersion"},
							fmt.Sprintf("%s with MCP-Protocol-Version %q and _meta version %q", chrono.Sanitize(m.Method, false), chrono.Sanitize(v, false), chrono.Sanitize(metaVersion(m.Params), false)), in.Seq)
					}
					if h.Get("Mcp-Method") != m.Method {
						return verdict.Broken(e.Revision, verdict.Req("HTTP-100"), []string{"Mcp-Method: " + m.Method},
							fmt.Sprintf("%s with Mcp-Method %q", chrono.Sanitize(m.Method, false), chrono.Sanitize(h.Get("Mcp-Method"), false)), in.Seq)
					}
					if m.Method == mcp.MethodToolsCall && h.Get("Mcp-Name") == "" {
						return verdict.Broken(e.Revision, verdict.Req("HTTP-100"), []string{"Mcp-Name: the tool's name"},
							"tools/call without Mcp-Name", in.Seq)
					}
				}
				if sessionID != nil {
					// The server minted none; a client that sends one anyway
					// carries 2025-11-25 state the revision removed.
					return verdict.Broken(e.Revision, verdict.Req("HTTP-107").Except(verdict.Info,
						"2026-07-28 removed sessions and the Mcp-Session-Id header (changelog); a server ignores the header, so nothing breaks"),
						[]string{"no Mcp-Session-Id on a 2026-07-28 request"},
						fmt.Sprintf("%s carried Mcp-Session-Id %q, which no server of this run minted", chrono.Sanitize(sessionID.Msg.Method, false), chrono.Sanitize(sessionID.Header.Get("Mcp-Session-Id"), false)), sessionID.Seq)
				}
				return verdict.Passf("every one of %d POSTs carried the required headers", len(p.Requests)+len(p.Notifications))
			},
		},
	}
}

// firstCallSeq is the seq of the first tools/call in the case's log.
func firstCallSeq(e *clientrun.Env) uint64 {
	for _, ev := range e.Log.Snapshot() {
		if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == mcp.MethodToolsCall {
			return ev.Seq
		}
	}
	return 0
}
