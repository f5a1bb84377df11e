package cases

import (
	"context"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// The wire-only paths of the resumption cases: against a
// target without the io.mcpflight/control extension nothing holds the
// call at a step and no counter says how it ended, so the cases judge
// what the resumed streams carry (probe.ResumeOnWire) and say so in
// their verdict.

// wireNote is appended to a wire-only pass: which evidence decided.
const wireNote = "wire evidence only (no io.mcpflight/control)"

// disconnectOnWire judges http/disconnect-is-not-cancel on a target
// without the control extension. With an observer (before: its counts
// read before the call) the handler's end decides HTTP-25 first, whether
// or not the stream can be resumed: counted cancelled after the drop, the
// server took the disconnection for a cancel. Then the resumed stream
// must carry the rest of the call, as on the wire alone; a stream that
// carried no event ID (last "") cannot be resumed, which is no breach,
// and without an observer leaves nothing to judge.
func disconnectOnWire(ctx context.Context, e *probe.Env, h *transport.HTTP, op *probe.Op, last string, before *profile.Observation) verdict.Outcome {
	dropped := h.StreamOf(op.Call.ID)
	var seen string
	if before != nil {
		end, err := e.ObserveHandlerEnd(ctx, op, *before, "after the drop")
		if err != nil {
			return verdict.Errorf("the observer read after the drop failed: %s", chrono.Sanitize(err.Error(), false))
		}
		switch {
		case end.Started < 1:
			return verdict.Errorf("the observer never saw the call start (%s): its profile entry names the wrong tool or counts other handlers", end.Seen)
		case end.Cancelled >= 1:
			return e.Breaks("HTTP-25", []string{"the call goes on after its stream dropped (a disconnection is not a cancellation): the observer counts its handler completed"},
				"the handler was cancelled after the client dropped its stream ("+end.Seen+")", end.Seq)
		case end.Completed < 1:
			return verdict.Infof("the handler was neither completed nor cancelled after the time its remaining steps need (%s): it was not cancelled by the drop so far, or it is slower than its progress showed", end.Seen)
		}
		seen = "; the observer counts its handler completed (" + end.Seen + ")"
		if last == "" {
			return verdict.Passf("the call went on after its stream dropped%s; %s", seen, probe.NotResumable)
		}
	}
	if last == "" {
		return verdict.Infof("%s, and %s", probe.NotResumable, probe.NoObserverSkip("whether the work went on after the drop"))
	}
	r, err := e.ResumeOnWire(ctx, h, op, dropped, last, e.RestWindow(e.Pace(op)))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if r.Refused != nil {
		if before != nil {
			return verdict.Passf("the call went on after its stream dropped%s; resuming was refused (%s)", seen, chrono.Sanitize(r.Refused.Error(), false))
		}
		return verdict.Skipf("resuming was refused (%s), and %s", chrono.Sanitize(r.Refused.Error(), false),
			probe.NoObserverSkip("whether the work went on after the drop"))
	}
	if o := e.ResumeVerdict(r, "HTTP-25"); o != nil {
		return *o
	}
	return verdict.Passf("the call went on after its stream dropped: its result came on %s (seq %d); %s%s", r.On, r.Response.Seq, wireNote, seen)
}

// remainingProgress is how many progress notifications of op the
// resumed streams should carry: the profile's steps less those read on
// the dropped stream; -1 when the profile does not say.
func remainingProgress(e *probe.Env, op *probe.Op, dropped string) int {
	if e.Profile == nil || e.Profile.SlowSteps <= 0 {
		return -1
	}
	isMine := probe.ProgressFor(op.Call.Token)
	before := 0
	for _, ev := range e.FramesOn(dropped) {
		if isMine(ev) {
			before++
		}
	}
	return e.Profile.SlowSteps - before
}

// countOn counts the progress of op on the resumed streams.
func countOn(e *probe.Env, op *probe.Op, streams []string) int {
	isMine := probe.ProgressFor(op.Call.Token)
	n := 0
	for _, s := range streams {
		for _, ev := range e.FramesOn(s) {
			if isMine(ev) {
				n++
			}
		}
	}
	return n
}

// resumeOnWire drops the call after its first progress and resumes it
// at once (while it runs), or once it has completed. Completion is
// inferred from the wire: a second call b, the same call started after
// a's first step, has been answered.
func resumeOnWire(ctx context.Context, e *probe.Env, h *transport.HTTP, afterCompletion bool) verdict.Outcome {
	op, dropped, last, o := e.DropAfterStep(ctx, h, "a")
	if o != nil {
		return *o
	}
	pace := e.Pace(op)
	when := "resumed at once after the drop, while the call ran (by its pace: the wire cannot prove it had not finished)"
	if afterCompletion {
		b, err := e.StartSlow(ctx, probe.SlowSpec{Key: "b", Progress: true, Free: true})
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		_, err = e.AwaitHelper(ctx, b)
		if err != nil {
			return verdict.Errorf("call b, the clock of a's completion: %v", err)
		}
		_, seq := b.Call.Response()
		when = fmt.Sprintf("resumed after completion (inferred: call b, the same call started after a's first step, was answered at seq %d)", seq)
	}
	r, err := e.ResumeOnWire(ctx, h, op, dropped, last, e.RestWindow(pace))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if r.Refused != nil {
		return verdict.Infof("resuming was refused (%s): the server does not resume (HTTP-27 is MAY)", chrono.Sanitize(r.Refused.Error(), false))
	}
	if o := e.ResumeVerdict(r, "HTTP-21"); o != nil {
		return *o
	}
	got := countOn(e, op, r.Resumed)
	if want := remainingProgress(e, op, dropped); want >= 0 && got != want {
		return e.Breaks("HTTP-43", []string{fmt.Sprintf("the %d progress notifications after event %s replayed or sent on %v", want, last, r.Resumed)},
			fmt.Sprintf("%d progress notifications for the call on %v; %s", got, r.Resumed, when), 0)
	}
	return verdict.Passf("%s: %s carried %d progress notifications and the result; %s", when, r.On, got, wireNote)
}

// replayOnWire runs calls a and b at once, drops a's stream after its
// first progress, waits for b's result on b's own stream, and resumes a:
// nothing of b may come on a's resumed streams (HTTP-44).
func replayOnWire(ctx context.Context, e *probe.Env, h *transport.HTTP) verdict.Outcome {
	a, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	b, err := e.StartSlow(ctx, probe.SlowSpec{Key: "b", Progress: true, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := a.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	dropped, o := probe.StreamOf(h, a.Call.ID)
	if o != nil {
		return *o
	}
	if err := h.Drop(dropped); err != nil {
		return verdict.Errorf("dropping %s: %v", dropped, err)
	}
	last := h.LastEventID(dropped) // once its reader stopped (Env.DropAfterStep)
	if last == "" {
		return verdict.Infof("%s", probe.NotResumable)
	}
	if _, err := e.AwaitHelper(ctx, b); err != nil {
		return verdict.Errorf("call b: %v", err)
	}
	r, err := e.ResumeOnWire(ctx, h, a, dropped, last, e.RestWindow(e.Pace(a)))
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if r.Refused != nil {
		return verdict.Infof("resuming was refused (%s): nothing replayed, nothing crossed", chrono.Sanitize(r.Refused.Error(), false))
	}
	isB, bResp := probe.ProgressFor(b.Call.Token), probe.ResponseTo(b.Call.ID)
	for _, s := range r.Resumed {
		for _, ev := range e.FramesOn(s) {
			if isB(ev) || bResp(ev) {
				return e.Breaks("HTTP-44", []string{"only call a's messages on the stream resumed after event " + last},
					fmt.Sprintf("call b's %s replayed on %s", probe.Describe(ev), s), ev.Seq)
			}
		}
	}
	if o := e.ResumeVerdict(r, "HTTP-21"); o != nil {
		return *o
	}
	return verdict.Passf("the resumed stream %s carried only the disconnected call's messages (b had completed on its own stream); %s", r.On, wireNote)
}
