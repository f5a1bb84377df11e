package clientcases

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

func lifecycleCases() []clientrun.Case {
	return []clientrun.Case{
		{
			ID:       "lifecycle/initialize-not-cancelled",
			Title:    "the client never cancels initialize, even when it times out",
			Reqs:     []string{"CAN-2", "CAN-3"},
			Versions: only(v2025),
			Sends:    "never answers initialize; the adapter is told to give up on connecting after 1 s (3 s over HTTP), then to keep its connection open for the observation window (lingerMs), so that a cancel sent off the caller's path shows",
			Expect:   "no notifications/cancelled naming the initialize request (CAN-2: \"The initialize request MUST NOT be cancelled by clients\")",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				// The first request of a fresh Node process over HTTP can take
				// seconds on a loaded machine: the timeout must outlast it.
				timeout := 1000
				if e.Transport == clientrun.TransportHTTP {
					timeout = 3000
				}
				p := e.Play(ctx, clientrun.Told{Connect: clientrun.Connect{TimeoutMs: timeout}, Linger: e.Linger()}, clientrun.Script{HoldInitialize: true})
				if o := p.Unusable(); o != nil {
					return *o
				}
				inits := requests(p, mcp.MethodInitialize)
				if len(inits) == 0 {
					// lifecycle/initialize-first judges a client that never
					// initializes; here it may have given up before its
					// request reached us.
					return verdict.Skipf("no initialize reached the server before the client gave up (%s), so the rule was not exercised", reportsText(p))
				}
				for _, in := range inits {
					for _, n := range allCancels(p) {
						if id, ok := requestIDOf(n.Msg); ok && id.Key() == in.Msg.ID.Key() && n.Conn == in.Conn {
							return verdict.Broken(e.Revision, verdict.Req("CAN-2"),
								[]string{"no notifications/cancelled for the initialize request " + in.Msg.ID.String()},
								fmt.Sprintf("notifications/cancelled for initialize %s at seq %d", in.Msg.ID, n.Seq), n.Seq)
						}
					}
				}
				if p.StoppedByUs {
					return verdict.Skipf("the client did not give up on initialize within the case deadline (it was told %d ms), so the rule was not exercised", timeout)
				}
				r, _ := p.Report(0, 0)
				return verdict.Passf("initialize %s held unanswered; the client gave up (%s) without cancelling it", inits[0].Msg.ID, chrono.Sanitize(r.Outcome, false))
			},
		},
		{
			ID:       "lifecycle/initialize-first",
			Title:    "initialize comes first, and initialized before anything but ping",
			Reqs:     []string{"LIF-1", "LIF-2", "LIF-4", "LIF-5"},
			Versions: only(v2025),
			Sends:    "answers initialize; the adapter calls one tool",
			Expect:   "each session begins with initialize; notifications/initialized follows its response, before any request other than ping",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "quick"})}}, clientrun.Script{Tools: []clientrun.Tool{{Name: "quick"}}})
				if o := p.Unusable(); o != nil {
					return *o
				}
				conns := map[int]bool{}
				for _, r := range p.Requests {
					conns[r.Conn] = true
				}
				if len(conns) == 0 {
					return verdict.Broken(e.Revision, verdict.Req("LIF-2"), []string{"an initialize request"}, "the client sent no request at all ("+reportsText(p)+")", 0)
				}
				for conn := range conns {
					var first, initAnswered bool
					initialized := false
					for _, ev := range e.Log.Snapshot() {
						if ev.Kind != chrono.KindFrame || ev.Summary == nil || connOf(ev.Channel) != conn {
							continue
						}
						s := ev.Summary
						switch {
						case ev.Dir == chrono.In && s.Kind == "request" && !first:
							first = true
							if s.Method != mcp.MethodInitialize {
								return verdict.Broken(e.Revision, verdict.Req("LIF-1"), []string{"initialize as the first request"},
									fmt.Sprintf("the first request was %s", chrono.Sanitize(s.Method, false)), ev.Seq)
							}
						case ev.Dir == chrono.Out && s.Kind == "result" && !initAnswered:
							initAnswered = true
						case ev.Dir == chrono.In && s.Method == mcp.NotificationInitialized:
							initialized = true
						case ev.Dir == chrono.In && s.Kind == "request" && s.Method != mcp.MethodPing:
							if !initAnswered {
								return verdict.Broken(e.Revision, verdict.Req("LIF-5"), []string{"no request but ping before the initialize response"},
									fmt.Sprintf("%s before the initialize response", chrono.Sanitize(s.Method, false)), ev.Seq)
							}
							if !initialized {
								return verdict.Broken(e.Revision, verdict.Req("LIF-4"), []string{"notifications/initialized before " + s.Method},
									fmt.Sprintf("%s before notifications/initialized", chrono.Sanitize(s.Method, false)), ev.Seq)
							}
						}
					}
				}
				return verdict.Passf("every session began with initialize and sent initialized before its first call")
			},
		},
		{
			ID:       "lifecycle/ping-answered",
			Title:    "the client answers the server's ping promptly with an empty result",
			Reqs:     []string{"PNG-1", "PNG-2"},
			Versions: only(v2025),
			Sends:    "while a tools/call is in flight, a ping request to the client; the call is answered once the ping is",
			Expect:   "an empty result to the ping, with its id",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				type pong struct {
					seq uint64
					ok  bool
					why string
				}
				got := make(chan pong, 1)
				script := clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}},
					Call: func(ctx context.Context, c *clientrun.Call) {
						pctx, cancel := context.WithTimeout(ctx, e.Patience())
						defer cancel()
						resp, err := c.Ping(pctx)
						switch {
						case err != nil:
							got <- pong{why: fmt.Sprintf("no answer within %v", e.Patience())}
						case resp.Msg.Error != nil:
							got <- pong{seq: resp.Seq, why: "an error: " + chrono.Sanitize(resp.Msg.Error.Message, false)}
						case string(resp.Msg.Result) != "{}":
							got <- pong{seq: resp.Seq, why: "a result that is not empty: " + chrono.Sanitize(string(resp.Msg.Result), false)}
						default:
							got <- pong{seq: resp.Seq, ok: true}
						}
						_ = c.Result(ctx, "pinged")
					}}
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "slow"})}}, script)
				if o := p.Unusable(); o != nil {
					return *o
				}
				if len(p.Calls) == 0 {
					return noCall(p, "slow")
				}
				select {
				case r := <-got:
					if !r.ok {
						return verdict.Broken(e.Revision, verdict.Req("PNG-1"), []string{"an empty result with the ping's id"}, r.why, r.seq)
					}
					return verdict.Passf("the ping was answered with an empty result at seq %d", r.seq)
				default:
					return verdict.Errorf("the ping was never sent: the client ended the call first (%s)", reportsText(p))
				}
			},
		},
		{
			ID:         "stdio/shutdown-closes-stdin",
			Title:      "the client shuts the stdio server down by closing its stdin first",
			Reqs:       []string{"STD-7", "STD-44"},
			Versions:   both,
			Transports: stdio,
			Sends:      "answers one tools/call; exits as soon as its stdin is closed",
			Expect:     "each server the client spawned sees its stdin closed before the client exits, and no signal: it exits at once on end of input, so a signal that reaches it came without waiting for it to exit",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "quick"})}}, clientrun.Script{Tools: []clientrun.Tool{{Name: "quick"}}})
				if o := p.Unusable(); o != nil {
					return *o
				}
				if p.Spawns == 0 {
					return verdict.Errorf("the client never started the server (%s)", reportsText(p))
				}
				rule := verdict.Req("STD-7").Under(v2026, "STD-44")
				exit := exitSeq(e.Log)
				// A signal our teardown sent (the client's group, with the
				// servers it spawned) is not the client's.
				stopped := uint64(0)
				for _, ev := range e.Log.Snapshot() {
					if ev.Kind == chrono.KindDecision && ev.Channel == "client" && strings.HasPrefix(ev.Text, "the client is still running") {
						stopped = ev.Seq
						break
					}
				}
				for n := 1; n <= p.Spawns; n++ {
					ch := fmt.Sprintf("server %d", n)
					var eof, sig uint64
					for _, ev := range e.Log.Snapshot() {
						if ev.Kind == chrono.KindState && ev.Channel == ch {
							switch {
							case ev.To == "stdin closed by the client" && eof == 0:
								eof = ev.Seq
							case len(ev.To) > len("received signal") && ev.To[:len("received signal")] == "received signal" && sig == 0:
								sig = ev.Seq
							}
						}
					}
					switch {
					case sig != 0 && (eof == 0 || sig < eof):
						return verdict.Broken(e.Revision, rule, []string{"stdin closed first; a signal only if the server does not exit"},
							fmt.Sprintf("server %d got a signal before its stdin was closed (it exits at once on end of input)", n), sig)
					case eof == 0 || (exit != 0 && eof > exit):
						return verdict.Broken(e.Revision, rule, []string{"stdin closed by the client before it exits"},
							fmt.Sprintf("server %d's stdin was not closed before the client exited (seq %d)", n, exit), exit)
					case sig != 0 && (stopped == 0 || sig < stopped):
						// The server exits as soon as it has reported the end
						// of its input: a signal that still finds it alive
						// came without waiting for it to exit.
						return verdict.Broken(e.Revision, rule, []string{"after closing stdin, waiting for the server to exit; a signal only if it does not"},
							fmt.Sprintf("server %d had its stdin closed at seq %d and got a signal at seq %d, before it could exit (it exits at once on end of input): the client did not wait for it", n, eof, sig), sig)
					}
				}
				return verdict.Passf("every server (%d spawned) had its stdin closed first and exited on it", p.Spawns)
			},
		},
	}
}

// connOf is the stdio connection number of a chronology channel ("stdin
// 2" → 2), or 0 (HTTP, where the whole endpoint is one session).
func connOf(channel string) int {
	var n int
	for _, prefix := range []string{"stdin ", "stdout "} {
		if len(channel) > len(prefix) && channel[:len(prefix)] == prefix {
			_, _ = fmt.Sscanf(channel[len(prefix):], "%d", &n)
			return n
		}
	}
	return 0
}

var _ = time.Second
