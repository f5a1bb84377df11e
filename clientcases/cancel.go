package clientcases

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/verdict"
)

// holdAfterProgress is a slow tool: n progress notifications, then no
// answer until the client cancels (or the case ends).
func holdAfterProgress(n int) func(ctx context.Context, c *clientrun.Call) {
	return func(ctx context.Context, c *clientrun.Call) {
		for i := 0; i < n; i++ {
			c.Progress(ctx)
		}
		holdUntil(ctx, c.Cancelled(), c.Gone())
	}
}

// closeWitness tells, over 2026-07-28 Streamable HTTP, a stream closed to
// cancel from one closed with the client: a client that closes its
// transport closes every stream it has open, so a stream closed at the
// end proves no cancel. The case adds a next call ("quick"), which the
// server holds until the first call's stream is closed or its cancel
// arrives (Patience is only the safety net of a client that never does);
// a stream closed before that answer was the cancel, one closed after it
// went with the client's close.
type closeWitness struct {
	e     *clientrun.Env
	first chan *clientrun.Call
	seq   atomic.Uint64
}

func newCloseWitness(e *clientrun.Env) *closeWitness {
	return &closeWitness{e: e, first: make(chan *clientrun.Call, 1)}
}

// play is Env.Play with the witness added under 2026-07-28 HTTP: the
// next call after told's steps, and its tool beside the script's.
func (w *closeWitness) play(ctx context.Context, told clientrun.Told, script clientrun.Script) *clientrun.Played {
	if !http2026(w.e) {
		return w.e.Play(ctx, told, script)
	}
	told.Steps = append(slices.Clone(told.Steps), step(clientrun.CallStep{Tool: "quick"}))
	script.Tools = append(slices.Clone(script.Tools), clientrun.Tool{Name: "quick"})
	serve := script.Call
	script.Call = func(ctx context.Context, c *clientrun.Call) {
		if c.Tool != "quick" {
			select {
			case w.first <- c:
			default:
			}
			serve(ctx, c)
			return
		}
		var first *clientrun.Call
		select {
		case first = <-w.first:
		case <-ctx.Done():
			return
		}
		hctx, cancel := context.WithTimeout(ctx, w.e.Patience())
		got := holdUntil(hctx, first.Gone(), first.Cancelled())
		cancel()
		if got == 1 {
			// A notifications/cancelled is not the 2026-07-28 HTTP
			// signal (CAN-43): a client may POST it before it closes
			// the stream (go-sdk does, off the caller's path), so the
			// close gets the observation window to follow.
			gctx, cancel := context.WithTimeout(ctx, w.e.Grace)
			holdUntil(gctx, first.Gone())
			cancel()
		}
		closed := got >= 0
		text := "request " + first.ID.String() + " was cancelled: answering the next call"
		if !closed {
			text = "the stream of request " + first.ID.String() + " is still open: answering the next call"
		}
		w.seq.Store(w.e.Log.Harness(chrono.KindDecision, "server", text).Seq)
		_ = c.Result(ctx, "ok")
	}
	return w.e.Play(ctx, told, script)
}

// judgeCancel grades how the client signalled the cancel of c, by the
// run's revision and transport; w is the case's close witness.
func judgeCancel(e *clientrun.Env, p *clientrun.Played, c *clientrun.Call, what string, missing verdict.Rule, w *closeWitness) verdict.Outcome {
	for _, n := range allCancels(p) {
		id, ok := requestIDOf(n.Msg)
		if !ok {
			return verdict.Broken(e.Revision, verdict.Req("CAN-6").Under(v2026, "CAN-51"),
				[]string{"notifications/cancelled with the requestId " + c.ID.String()}, "a notifications/cancelled without a valid requestId", n.Seq)
		}
		if id.Key() != c.ID.Key() || n.Conn != c.In.Conn {
			return verdict.Broken(e.Revision, verdict.Req("CAN-5").Under(v2026, "CAN-51"),
				[]string{"notifications/cancelled naming the request " + c.ID.String()},
				fmt.Sprintf("notifications/cancelled names %s, which is not the request in flight", id), n.Seq)
		}
	}
	if http2026(e) {
		gone := goneSeq(e.Log, c)
		if gone == 0 {
			return verdict.Broken(e.Revision, missing, []string{"the client closes the request's SSE stream (CAN-43: the cancellation signal)"},
				fmt.Sprintf("after %s the stream of request %s stayed open (%s)", what, c.ID, reportsText(p)), 0)
		}
		if next := w.seq.Load(); next != 0 && gone > next {
			return verdict.Broken(e.Revision, missing, []string{"the client closes the request's SSE stream (CAN-43: the cancellation signal)"},
				fmt.Sprintf("after %s the stream of request %s stayed open while the client went on (its next call was answered at seq %d); it closed only at seq %d, with the client (%s)",
					what, c.ID, next, gone, reportsText(p)), gone)
		}
		if cs := cancelsOf(p, c); len(cs) > 0 {
			return verdict.Broken(e.Revision, verdict.Req("HTTP-99").Except(verdict.Info,
				"2026-07-28 expects no notifications/cancelled over Streamable HTTP but forbids none"),
				[]string{"the stream closed, and no notification"},
				fmt.Sprintf("the stream was closed at seq %d and a notifications/cancelled was POSTed too at seq %d", gone, cs[0].Seq), cs[0].Seq)
		}
		return verdict.Passf("after %s the client closed the stream of request %s at seq %d", what, c.ID, gone)
	}
	// Outside 2026-07-28 HTTP the notification is the cancel, whatever
	// came before it: a client that closes the stream first and then
	// POSTs notifications/cancelled has cancelled.
	cs := cancelsOf(p, c)
	gone := goneSeq(e.Log, c)
	if len(cs) == 0 {
		actual := fmt.Sprintf("after %s no notifications/cancelled named request %s (%s)", what, c.ID, reportsText(p))
		if gone != 0 {
			actual += "; it only closed the stream at seq " + fmt.Sprint(gone)
		}
		return verdict.Broken(e.Revision, missing, []string{"notifications/cancelled with requestId " + c.ID.String()}, actual, 0)
	}
	if gone != 0 && gone < cs[0].Seq {
		return verdict.Passf("after %s the client closed the stream of request %s at seq %d and then sent notifications/cancelled for it at seq %d",
			what, c.ID, gone, cs[0].Seq)
	}
	return verdict.Passf("after %s the client sent notifications/cancelled for %s at seq %d", what, c.ID, cs[0].Seq)
}

func cancelCases() []clientrun.Case {
	return []clientrun.Case{
		{
			ID:       "cancel/abort-signals-cancel",
			Title:    "a call the user aborts is cancelled with its request ID (or, on 2026 HTTP, by closing its stream)",
			Reqs:     []string{"HTTP-26", "CAN-5", "CAN-6", "CAN-53", "CAN-44", "CAN-40", "CAN-51", "HTTP-99"},
			Versions: both,
			Sends:    "one progress notification for the call, then no answer; the adapter aborts after that progress (2026-07-28 HTTP: then makes a next call, which the server holds until the first call's stream is closed) and keeps its connection open for the observation window (lingerMs)",
			Expect:   "notifications/cancelled naming the call's request ID (stdio; 2025-11-25 HTTP), or the call's SSE stream closed before the next call is answered (2026-07-28 HTTP)",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				w := newCloseWitness(e)
				p := w.play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "slow", Progress: true, AbortAfterProgress: 1})}, Linger: e.Linger()},
					clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}}, Call: holdAfterProgress(1)})
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "slow")
				if len(calls) == 0 {
					return noCall(p, "slow")
				}
				c := calls[0]
				if !c.Token.IsValid() {
					return verdict.Errorf("the client was told to ask for progress but its call carried no progress token, so it could not be told to abort after one")
				}
				// 2025-11-25 makes cancelling optional on stdio: the
				// missing notification only leaves the server working.
				missing := verdict.Req("HTTP-26")
				switch {
				case e.Revision == v2026 && e.Transport == clientrun.TransportStdio:
					missing = verdict.Req("CAN-53")
				case e.Revision == v2026:
					missing = verdict.Req("CAN-40")
				case e.Transport == clientrun.TransportStdio:
					missing = verdict.Req("CAN-6").Except(verdict.Info,
						"2025-11-25 makes cancellation optional; without the notification the server is left working")
				}
				return judgeCancel(e, p, c, "the abort", missing, w)
			},
		},
		{
			ID:       "cancel/timeout-signals-cancel",
			Title:    "a call that times out is cancelled, not just abandoned",
			Reqs:     []string{"LIF-16", "CAN-45", "CAN-5", "CAN-51"},
			Versions: both,
			Sends:    "never answers the call; the adapter gives it 1 s (2026-07-28 HTTP: then makes a next call, held until the first call's stream is closed) and keeps its connection open for the observation window (lingerMs)",
			Expect:   "when the timeout fires, notifications/cancelled naming the call (or, 2026-07-28 HTTP, its stream closed before the next call is answered)",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				w := newCloseWitness(e)
				p := w.play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "slow", TimeoutMs: 1000})}, Linger: e.Linger()},
					clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}}, Call: holdAfterProgress(0)})
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "slow")
				if len(calls) == 0 {
					return noCall(p, "slow")
				}
				return judgeCancel(e, p, calls[0], "its timeout", verdict.Req("LIF-16").Under(v2026, "CAN-45"), w)
			},
		},
		{
			ID:       "cancel/none-after-response",
			Title:    "no cancel for a request that was already answered",
			Reqs:     []string{"CAN-1", "CAN-46"},
			Versions: both,
			Sends:    "answers the call at once; the adapter aborts its signal after the result, then makes a second call and keeps its connection open for the observation window (lingerMs)",
			Expect:   "no notifications/cancelled naming the answered request",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{
					step(clientrun.CallStep{Tool: "quick", AbortAfterResponse: true}),
					step(clientrun.CallStep{Tool: "quick"}),
				}, Linger: e.Linger()}, clientrun.Script{Tools: []clientrun.Tool{{Name: "quick"}}})
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "quick")
				if len(calls) == 0 {
					return noCall(p, "quick")
				}
				if cs := cancelsOf(p, calls[0]); len(cs) > 0 {
					return verdict.Broken(e.Revision, verdict.Req("CAN-1").Under(v2026, "CAN-46"),
						[]string{"no cancel for a request no longer in progress"},
						fmt.Sprintf("notifications/cancelled for %s after its response", calls[0].ID), cs[0].Seq)
				}
				return verdict.Passf("no cancel named %s after it was answered", calls[0].ID)
			},
		},
		{
			ID:         "cancel/late-response-ignored",
			Title:      "a response that arrives after the cancel reaches neither the caller nor the next call",
			Reqs:       []string{"CAN-10", "CAN-50", "CAN-11"},
			Versions:   both,
			Transports: nil,
			Sends:      "one progress, then, once the client cancelled and made its next call, the cancelled call's response (\"late-1\") before the next call's (\"fresh-2\")",
			Expect:     "the aborted call is not given \"late-1\", and the next call gets \"fresh-2\"",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				if http2026(e) {
					return verdict.Skipf("over 2026-07-28 Streamable HTTP a cancelled request's stream is closed: no late response can be delivered")
				}
				second := make(chan struct{})
				lateSent := make(chan struct{})
				var secondOnce, lateOnce sync.Once
				script := clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}, {Name: "quick"}},
					Call: func(ctx context.Context, c *clientrun.Call) {
						switch c.Tool {
						case "slow":
							c.Progress(ctx)
							// The next call arrives once the client has given
							// up on this one (cancelled or not).
							holdUntil(ctx, second)
							_ = c.Result(ctx, "late-1")
							lateOnce.Do(func() { close(lateSent) })
						default:
							secondOnce.Do(func() { close(second) })
							holdUntil(ctx, lateSent)
							_ = c.Result(ctx, "fresh-2")
						}
					}}
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{
					step(clientrun.CallStep{Tool: "slow", Progress: true, AbortAfterProgress: 1}),
					step(clientrun.CallStep{Tool: "quick"}),
				}}, script)
				if o := p.Unusable(); o != nil {
					return *o
				}
				if len(callsTo(p, "slow")) == 0 {
					return noCall(p, "slow")
				}
				if len(callsTo(p, "quick")) == 0 {
					return noCall(p, "quick")
				}
				r1, _ := p.Report(1, 0)
				r2, ok2 := p.Report(2, 0)
				if ok2 && r2.Text == "late-1" {
					return verdict.Broken(e.Revision, verdict.Req("CAN-11"), []string{"the second call gets its own response \"fresh-2\""},
						"the late response of the cancelled call was given to the next call: "+chrono.Sanitize(r2.String(), false), reportSeq(e.Log, 2))
				}
				if r1.Outcome == clientrun.OutcomeResult && r1.Text == "late-1" {
					return verdict.Broken(e.Revision, verdict.Req("CAN-10").Under(v2026, "CAN-50"), []string{"the aborted call ends aborted; its late response is ignored"},
						"the caller of the aborted call was given the late response: "+chrono.Sanitize(r1.String(), false), reportSeq(e.Log, 1))
				}
				if !ok2 || r2.Outcome != clientrun.OutcomeResult || r2.Text != "fresh-2" {
					return verdict.Broken(e.Revision, verdict.Req("CAN-11"), []string{"the second call gets \"fresh-2\" after the late response"},
						"after the late response the next call did not get its own: "+reportsText(p), reportSeq(e.Log, 2))
				}
				return verdict.Passf("the late response was ignored (step 1: %s) and the next call got its own", chrono.Sanitize(r1.Outcome, false))
			},
		},
		{
			ID:       "timeout/maximum-despite-progress",
			Title:    "a maximum timeout is enforced while progress keeps resetting the request timeout",
			Reqs:     []string{"LIF-19", "LIF-18"},
			Versions: both,
			Sends:    "a progress notification every 50 ms and never an answer; after 8 times the maximum timeout (on our clock) the progress stops",
			Expect:   "the client gives up (cancel, or closing the stream) while progress is still coming: it was told timeoutMs 4000 reset on progress, maxTotalTimeoutMs 400",
			Run: func(ctx context.Context, e *clientrun.Env) verdict.Outcome {
				const maxTotal = 400
				stopped := make(chan uint64, 1)
				script := clientrun.Script{Tools: []clientrun.Tool{{Name: "slow"}},
					Call: func(ctx context.Context, c *clientrun.Call) {
						t, stop := ticker(50 * time.Millisecond)
						defer stop()
						until := time.Now().Add(8 * maxTotal * time.Millisecond)
						for time.Now().Before(until) {
							select {
							case <-t.C:
								c.Progress(ctx)
							case <-c.Cancelled():
								return
							case <-c.Gone():
								return
							case <-ctx.Done():
								return
							}
						}
						stopped <- e.Log.Harness(chrono.KindDecision, "server", "progress stops now: 8 times the maximum timeout the client was told").Seq
						holdUntil(ctx, c.Cancelled(), c.Gone())
					}}
				p := e.Play(ctx, clientrun.Told{Steps: []clientrun.Step{step(clientrun.CallStep{Tool: "slow", Progress: true,
					TimeoutMs: 4000, ResetTimeoutOnProgress: true, MaxTotalTimeoutMs: maxTotal})}}, script)
				if o := p.Unusable(); o != nil {
					return *o
				}
				calls := callsTo(p, "slow")
				if len(calls) == 0 {
					return noCall(p, "slow")
				}
				c := calls[0]
				if !c.Token.IsValid() {
					return verdict.Errorf("the client was told to ask for progress but its call carried no progress token")
				}
				var stopSeq uint64
				select {
				case stopSeq = <-stopped:
				default:
				}
				told := fmt.Sprintf("told timeoutMs 4000 reset on progress and maxTotalTimeoutMs %d; %d progress notifications sent", maxTotal, c.ProgressSent())
				sig, how := signalOf(p, e.Log, c)
				gaveUp := reportSeq(e.Log, 1)
				switch {
				case sig != 0 && (stopSeq == 0 || sig < stopSeq):
					return verdict.Passf("the client gave up by %s at seq %d while progress was still coming (%s)", how, sig, told)
				case gaveUp != 0 && (stopSeq == 0 || gaveUp < stopSeq):
					r, _ := p.Report(1, 0)
					return verdict.Passf("the client gave up (%s) while progress was still coming, without a cancel signal (the timeout cases judge that) (%s)",
						chrono.Sanitize(r.Outcome, false), told)
				case sig != 0:
					return verdict.Broken(e.Revision, verdict.Req("LIF-19"), []string{"giving up while progress keeps coming, at the maximum timeout"},
						fmt.Sprintf("the client gave up only after the progress stopped (seq %d), by %s at seq %d: the per-request timeout, not a maximum (%s)", stopSeq, how, sig, told), sig)
				}
				return verdict.Broken(e.Revision, verdict.Req("LIF-19"), []string{"giving up while progress keeps coming, at the maximum timeout"},
					fmt.Sprintf("the client never gave up on the call (%s; %s)", told, reportsText(p)), stopSeq)
			},
		},
	}
}
