package clientcases

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/verdict"
)

// holdPair holds each slow call until n calls have arrived, then answers
// each with its number, so that the calls are in flight together. A
// client that never has n in flight (it serialises its calls) is answered
// after patience, a safety net: the case then says so.
func holdPair(n int, patience time.Duration) func(ctx context.Context, c *clientrun.Call) {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	return func(ctx context.Context, c *clientrun.Call) {
		mu.Lock()
		arrived++
		k := arrived
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		if c.Tool != "quick" {
			t := time.NewTimer(patience)
			defer t.Stop()
			expired := make(chan struct{})
			go func() {
				select {
				case <-t.C:
					close(expired)
				case <-ctx.Done():
				}
			}()
			holdUntil(ctx, all, expired)
		}
		c.Progress(ctx)
		_ = c.Result(ctx, fmt.Sprintf("r%d", k))
	}
}

func idCases() []clientrun.Case {
	return []clientrun.Case{
		{
			ID:       "rpc/no-id-reuse",
			Title:    "request IDs are never reused in flight (and, under 2025-11-25, never within the session)",
			Reqs:     []string{"RPC-6", "RPC-7"},
			Versions: both,
			Sends:    "holds two concurrent calls until both have arrived, answers both, then answers a third call",
			Expect:   "two different IDs in flight; under 2025-11-25 the third call's ID is new too",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{
					{Op: clientrun.OpParallel, Calls: []clientrun.CallStep{{Tool: "slow"}, {Tool: "slow"}}},
					step(clientrun.CallStep{Tool: "quick"}),
				}}, clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}, {Name: "quick"}}, Call: holdPair(2, e.Patience())})
				if o := p.Unusable(); o != nil {
					return *o
				}
				if len(p.Requests) == 0 {
					return noCall(p, "slow")
				}
				seen := map[string]clientrun.Inbound{}
				for _, r := range p.Requests {
					key := fmt.Sprintf("%d/%s", r.Conn, r.Msg.ID.Key())
					prior, dup := seen[key]
					seen[key] = r
					if !dup {
						continue
					}
					inFlight := priorInFlight(e.Log, prior, r)
					switch {
					case inFlight:
						return verdict.Broken(e.Revision, verdict.Req("RPC-6").Under(v2026, "RPC-7"), []string{"a fresh ID for each request in flight"},
							fmt.Sprintf("%s %s reuses the ID of %s (seq %d), still unanswered", chrono.Sanitize(r.Msg.Method, false), r.Msg.ID, prior.Msg.Method, prior.Seq), r.Seq)
					case e.Revision == v2025:
						return verdict.Broken(e.Revision, verdict.Req("RPC-6"), []string{"an ID never used before in the session"},
							fmt.Sprintf("%s %s reuses the ID of %s (seq %d)", chrono.Sanitize(r.Msg.Method, false), r.Msg.ID, prior.Msg.Method, prior.Seq), r.Seq)
					}
				}
				if n := len(callsTo(p, "slow")); n < 2 || !priorInFlight(e.Log, callsTo(p, "slow")[0].In, callsTo(p, "slow")[1].In) {
					return verdict.Skipf("the client never had the two calls in flight together (%d arrived), so in-flight reuse was not exercised (%s)", n, reportsText(p))
				}
				return verdict.Passf("%d requests, every ID distinct in its session", len(p.Requests))
			},
		},
		{
			ID:       "progress/tokens-unique",
			Title:    "progress tokens are unique across the requests in flight",
			Reqs:     []string{"PRG-2", "PRG-41", "PRG-1"},
			Versions: both,
			Sends:    "holds two concurrent calls that ask for progress until both have arrived, then one progress and the answer for each",
			Expect:   "two different progress tokens, each a string or an integer",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{
					{Op: clientrun.OpParallel, Calls: []clientrun.CallStep{{Tool: "slow", Progress: true}, {Tool: "slow", Progress: true}}},
				}}, clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}}, Call: holdPair(2, e.Patience())})
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "slow")
				if len(calls) < 2 || !priorInFlight(e.Log, calls[0].In, calls[1].In) {
					return verdict.Skipf("the client never had the two calls in flight together (%d arrived), so the rule was not exercised (%s)", len(calls), reportsText(p))
				}
				a, b := calls[0], calls[1]
				for _, c := range calls {
					if !c.Token.IsValid() {
						if hasMetaToken(c) {
							return verdict.Broken(e.Revision, verdict.Req("PRG-1"), []string{"a string or integer progress token"},
								"the call's _meta.progressToken is neither a string nor an integer", c.In.Seq)
						}
						return verdict.Errorf("the client was told to ask for progress but call %s carried no progress token", c.ID)
					}
				}
				if a.Token.Key() == b.Token.Key() && priorInFlight(e.Log, a.In, b.In) {
					return verdict.Broken(e.Revision, verdict.Req("PRG-2").Under(v2026, "PRG-41"), []string{"a progress token no other active request has"},
						fmt.Sprintf("calls %s, both in flight, share the progress token %s", idPair(a.ID.String(), b.ID.String()), a.Token), b.In.Seq)
				}
				return verdict.Passf("the concurrent calls used the tokens %s and %s", a.Token, b.Token)
			},
		},
	}
}

// priorInFlight reports whether prior had no response from us before r
// arrived.
func priorInFlight(log *chrono.Log, prior, r clientrun.Inbound) bool {
	want := prior.Msg.ID.String()
	for _, ev := range log.Snapshot() {
		if ev.Seq <= prior.Seq || ev.Seq >= r.Seq {
			continue
		}
		if ev.Dir == chrono.Out && ev.Summary != nil && (ev.Summary.Kind == "result" || ev.Summary.Kind == "error") &&
			ev.Summary.ID == want && connOf(ev.Channel) == prior.Conn {
			return false
		}
	}
	return true
}

// hasMetaToken reports whether the call's params carry a progressToken.
func hasMetaToken(c *clientrun.Call) bool {
	return c.In.Msg != nil && c.In.Seq != 0 && containsToken(c.In.Msg.Params)
}

// idPair names two request ids in a fixed order ("2 and 3"), whatever
// order the client sent them in: a client that runs its calls side by
// side sends them in either order, and a report must not change with it.
func idPair(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " and " + b
}
