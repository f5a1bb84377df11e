package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Wire-only evidence of a resumption. Without the control
// extension nothing says whether a call whose stream was dropped went
// on: the only witness is what a resumed stream carries. A resumed
// stream that stays silent fits two causes, a call the drop cancelled
// (HTTP-25) and a resumption that loses the call's messages (HTTP-21,
// HTTP-43); a second resume from the same event ID, once the call must
// have ended, tells them apart whenever the server replays anything:
// any message of the call read after the drop shows that it went on.

// ResumeEvidence is what the wire showed of a dropped call's resumption.
type ResumeEvidence struct {
	// Op is the call, Dropped its dropped stream and Last the event ID
	// the resumes sent as Last-Event-ID.
	Op      *Op
	Dropped string
	Last    string
	// Resumed are the resumed streams, in order (a second one only when
	// the first carried no response).
	Resumed []string
	// Response is the call's response event, when one came; On names the
	// stream that carried it.
	Response *chrono.Event
	On       string
	// FirstSilent says the first resumed stream carried no response
	// within Window; Window is how long it was watched.
	FirstSilent bool
	Window      time.Duration
	// Refused is the error of a resume the server refused.
	Refused error
}

// Pace is the time from the call's request to its first progress: the
// call's own step time, which bounds how long its rest should take.
func (e *Env) Pace(op *Op) time.Duration {
	sent := e.EventAt(op.Call.SentSeq)
	isMine := ProgressFor(op.Call.Token)
	for _, ev := range e.Log.Since(op.Call.SentSeq) {
		if ev.Dir == chrono.In && isMine(ev) {
			return ev.Offset - sent.Offset
		}
	}
	return 0
}

// RestWindow is how long the rest of a call whose first step took pace
// should take, doubled, plus the grace window; Patience when the
// profile does not say how many steps the call has, and never more.
func (e *Env) RestWindow(pace time.Duration) time.Duration {
	steps := 0
	if e.Profile != nil {
		steps = e.Profile.SlowSteps
	}
	if steps <= 0 || pace <= 0 {
		return e.Patience()
	}
	return min(2*time.Duration(steps-1)*pace+e.Grace, e.Patience())
}

// WentOn returns the first message of the call read on a resumed stream
// (its progress or its response): the wire's evidence that the call went
// on after its stream was dropped.
func (r *ResumeEvidence) WentOn(e *Env) (chrono.Event, bool) {
	isMine, isResp := ProgressFor(r.Op.Call.Token), ResponseTo(r.Op.Call.ID)
	for _, s := range r.Resumed {
		for _, ev := range e.FramesOn(s) {
			if isMine(ev) || isResp(ev) {
				return ev, true
			}
		}
	}
	return chrono.Event{}, false
}

// ResumeOnWire resumes the dropped stream of op with Last-Event-ID last
// and watches the resumed stream for the call's response over window.
// When none comes it drops that stream and resumes again from the last
// event ID it reached, once, and watches the second stream until the
// response, its end or Env.Patience (and a second before the case's
// deadline). It never judges: the cases read the evidence.
func (e *Env) ResumeOnWire(ctx context.Context, h *transport.HTTP, op *Op, dropped, last string, window time.Duration) (*ResumeEvidence, error) {
	r := &ResumeEvidence{Op: op, Dropped: dropped, Last: last, Window: window}
	from := last
	for attempt := 0; attempt < 2; attempt++ {
		stream, err := h.Resume(ctx, from)
		if err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			r.Refused = err
			return r, nil
		}
		r.Resumed = append(r.Resumed, stream)
		var wctx context.Context
		var cancel context.CancelFunc
		if attempt == 0 {
			wctx, cancel = context.WithTimeout(ctx, window)
		} else {
			wctx, cancel, _ = e.WithPatience(ctx)
		}
		ev, err := e.awaitOn(wctx, h, stream, op.Call.ID)
		cancel()
		if err == nil {
			r.Response, r.On = &ev, stream
			return r, nil
		}
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		if attempt > 0 {
			e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("no response for request %s on %s", op.Call.ID, stream))
			return r, nil
		}
		r.FirstSilent = true
		e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("no response for request %s on %s within %v: resuming again from the same point", op.Call.ID, stream, window.Round(time.Millisecond)))
		if err := h.Drop(stream); err != nil {
			return r, err
		}
		if id := h.LastEventID(stream); id != "" { // once its reader stopped
			from = id
		}
	}
	return r, nil
}

// awaitOn waits for the response to id on the named stream; it ends
// early, with an error, when the stream ends without it.
func (e *Env) awaitOn(ctx context.Context, h *transport.HTTP, stream string, id jsonrpc.ID) (chrono.Event, error) {
	isResp := ResponseTo(id)
	channel := "SSE " + stream
	match := func(ev chrono.Event) bool {
		return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && ev.Channel == channel && isResp(ev)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.StreamDone(stream):
			// Whatever the stream carried is in the log before its end.
			cancel()
		case <-wctx.Done():
		}
	}()
	ev, err := e.Log.WaitFor(wctx, 0, match)
	if err != nil {
		// The stream may have ended right after carrying the response.
		for _, ev := range e.Log.Events() {
			if match(ev) {
				return ev, nil
			}
		}
	}
	return ev, err
}

// ResumeVerdict judges the evidence of ResumeOnWire: nil when the first
// resumed stream carried the call's response. A response that came only
// on the second resume shows a call that went on and a first resumption
// that lost it (HTTP-21); no response at all is SilentResume's.
func (e *Env) ResumeVerdict(r *ResumeEvidence, cause string) *verdict.Outcome {
	switch {
	case r.Response != nil && !r.FirstSilent:
		return nil
	case r.Response != nil:
		o := e.Breaks("HTTP-21", []string{"the call's response on the stream resumed with Last-Event-ID " + r.Last},
			fmt.Sprintf("the call ran to completion (its response came only when resumed again, on %s at seq %d), so the disconnection was not taken for a cancel (HTTP-25 holds), but the first resumed stream %s carried nothing of it for %v: the resumption lost the call's messages",
				r.On, r.Response.Seq, r.Resumed[0], r.Window.Round(time.Millisecond)), r.Response.Seq)
		return &o
	}
	o := e.SilentResume(r, cause)
	return &o
}

// SilentResume judges a resumption whose streams never carried the
// call's response: the evidence fits two causes, a disconnection taken
// for a cancel (HTTP-25) and a resumption that loses the call's messages
// (HTTP-21), and the verdict cites cause (the case's own subject) and
// names both. Progress of the call on a resumed stream says the call
// still ran for a while after the drop, not that it ran to its end: a
// cancel may have taken effect later.
func (e *Env) SilentResume(r *ResumeEvidence, cause string) verdict.Outcome {
	streams := fmt.Sprint(r.Resumed)
	seen := "nothing of the call came"
	var seq uint64
	if ev, ok := r.WentOn(e); ok {
		seen = "the call's progress came (" + Describe(ev) + ") but never its response"
		seq = ev.Seq
	}
	both := fmt.Sprintf("%s on %s after the drop of %s: either the disconnection was taken for a cancel (HTTP-25) or the resumption loses the call's messages (HTTP-21); the wire cannot tell them apart (a second resume brought no response), an observer (docs/observer.md) or the io.mcpflight/control extension would",
		seen, streams, r.Dropped)
	return e.Breaks(cause, []string{"the call goes on after its stream dropped (HTTP-25) and its response comes on the resumed stream (HTTP-21)"}, both, seq)
}
