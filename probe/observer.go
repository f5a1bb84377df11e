package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
)

// The observer (docs/observer.md) is the evidence path for what the wire
// cannot show on a target without the control extension: whether a
// handler stopped, ran on, or completed after a cancel, a stream close
// or a disconnect. Its counts are server-wide, so a case that reads them
// runs alone against a shared server (Needs.Alone).

// HasObserver reports whether the profile names an observer.
func (e *Env) HasObserver() bool {
	return e.Profile.NamesObserver()
}

// NoObserverSkip is the skip reason of a case whose only evidence path,
// on a target without the control extension, is the observer, which the
// profile does not name: it names the profile field that would let the
// case run.
func NoObserverSkip(what string) string {
	return fmt.Sprintf("the target offers no io.mcpflight/control extension and the profile names no observer: %s cannot be seen on the wire; add \"observer\" to the profile (docs/observer.md)", what)
}

// ReadObserver calls the profile's observer and reads its counts; an
// error when the profile names none (the runner skips a case that needs
// one first: Needs.Witness).
func (e *Env) ReadObserver(ctx context.Context) (profile.Observation, error) {
	o, _, err := e.readObserver(ctx)
	return o, err
}

// readObserver is ReadObserver that also returns the sequence number of
// the observer's answer, so that a verdict drawn from the counts can
// point at the frame that carried them.
func (e *Env) readObserver(ctx context.Context) (profile.Observation, uint64, error) {
	if !e.HasObserver() {
		return profile.Observation{}, 0, errors.New("the profile names no observer")
	}
	obs := e.Profile.Observer
	id := e.S.NewID()
	var raw json.RawMessage
	method, params := obs.Request()
	err := e.S.Request(ctx, method, params, &raw, peer.WithID(id))
	if err != nil {
		return profile.Observation{}, 0, fmt.Errorf("reading the observer: %w", err)
	}
	var seq uint64
	isAnswer := ResponseTo(id)
	for _, ev := range e.Log.Events() {
		if ev.Dir == chrono.In && isAnswer(ev) {
			seq = ev.Seq
		}
	}
	doc, err := obs.Document(raw)
	if err != nil {
		return profile.Observation{}, seq, err
	}
	o, err := obs.Observe(doc)
	return o, seq, err
}

// AwaitHandlerStarted reads the observer until it counts a handler more
// than before, within Env.Patience, pausing a tenth of the grace window
// between reads: the only evidence that a silent handler has begun.
func (e *Env) AwaitHandlerStarted(ctx context.Context, before profile.Observation) (profile.Observation, error) {
	wctx, cancel, d := e.WithPatience(ctx)
	defer cancel()
	for {
		now, err := e.ReadObserver(wctx)
		if err != nil {
			return now, err
		}
		if now.Started > before.Started {
			return now, nil
		}
		if !e.pauseBetweenReads(wctx) {
			return now, fmt.Errorf("the observer counted no handler started within %v (%s)", d, now)
		}
	}
}

// AwaitHandlerEnd reads the observer until it counts the handler of op
// completed or cancelled, or until the handler's remaining work has had
// the time it needs (HandlerRestBound), never more than the case's
// patience: a handler that only runs on ends inside the bound, and one
// that stops ends the wait at once. It returns the last counts, the
// sequence number of the answer that carried them, and how long it
// waited.
func (e *Env) AwaitHandlerEnd(ctx context.Context, op *Op, before profile.Observation) (profile.Observation, uint64, time.Duration, error) {
	start := time.Now()
	bound := e.HandlerRestBound(op)
	wctx, cancel, _ := e.WithPatience(ctx)
	defer cancel()
	wctx, cancelBound := context.WithTimeout(wctx, bound)
	defer cancelBound()
	for {
		now, seq, err := e.readObserver(ctx)
		if err != nil {
			return now, seq, 0, err
		}
		if now.Completed > before.Completed || now.Cancelled > before.Cancelled {
			return now, seq, time.Since(start), nil
		}
		if !e.pauseBetweenReads(wctx) {
			e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("the handler's remaining work had %v: the observer still counts it running", bound))
			return now, seq, time.Since(start), nil
		}
	}
}

// pauseBetweenReads waits a tenth of the grace window (at least 10 ms)
// between two reads of the observer; false when ctx ended first.
func (e *Env) pauseBetweenReads(ctx context.Context) bool {
	t := time.NewTimer(max(e.Grace/10, 10*time.Millisecond))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// HandlerRestBound is how long the rest of op's handler may take when
// nothing stops it: the steps not yet seen at the step interval shown
// (the call's first progress, else the run's learned step), doubled,
// plus the grace window; the case's patience when neither the steps nor
// the interval are known.
func (e *Env) HandlerRestBound(op *Op) time.Duration {
	step := e.Pace(op)
	if step <= 0 && e.Pacing != nil {
		step = e.Pacing.Step()
	}
	steps := 0
	if e.Profile != nil {
		steps = e.Profile.SlowSteps
	}
	if step <= 0 || steps <= 0 {
		return e.Patience()
	}
	isMine := ProgressFor(op.Call.Token)
	done := 0
	for _, ev := range e.Log.Since(op.Call.SentSeq) {
		if ev.Dir == chrono.In && isMine(ev) {
			done++
		}
	}
	return min(2*time.Duration(max(steps-done, 1))*step+e.Grace, e.Patience())
}

// HandlerEnd is what the observer showed of one handler between two
// reads: Started, Completed and Cancelled are the differences of the
// counts; Seq is the sequence number of the second read's answer, the
// frame a verdict drawn from them points at; Seen renders both reads for
// an Actual line.
type HandlerEnd struct {
	Started, Completed, Cancelled int
	Seq                           uint64
	Seen                          string
}

// ObserveHandlerEnd waits for op's handler to end (AwaitHandlerEnd) and
// returns the differences from before; after says what preceded the wait
// in the Seen text ("after the close").
func (e *Env) ObserveHandlerEnd(ctx context.Context, op *Op, before profile.Observation, after string) (HandlerEnd, error) {
	now, seq, waited, err := e.AwaitHandlerEnd(ctx, op, before)
	if err != nil {
		return HandlerEnd{}, err
	}
	return HandlerEnd{
		Started:   now.Started - before.Started,
		Completed: now.Completed - before.Completed,
		Cancelled: now.Cancelled - before.Cancelled,
		Seq:       seq,
		Seen: fmt.Sprintf("observer before: %s; %s and %v more, its answer at seq %d: %s", before, after,
			waited.Round(time.Millisecond), seq, now),
	}, nil
}
