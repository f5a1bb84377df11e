package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// SlowSpec describes a long-running operation for a case to start.
type SlowSpec struct {
	// Key names the operation's checkpoints on a controlled target.
	Key string
	// ID, when valid, is the exact request ID to use.
	ID jsonrpc.ID
	// Token, when valid, is the exact progress token to send.
	Token jsonrpc.ProgressToken
	// Progress asks for progress under a fresh token.
	Progress bool
	// Steps overrides the number of steps on a controlled target.
	Steps int
	// Unit is the progress increment on a controlled target (default 1).
	Unit float64
	// Free runs without gates: the operation runs to its end unattended.
	Free bool
	// LogSteps, on a controlled target under 2026-07-28, asks for a log
	// message at each step (logLevel debug in the request's _meta), whose
	// data names the operation's key (see LogsOnOwnStreams).
	LogSteps bool
}

// Op is one long-running operation a case started.
type Op struct {
	// Call is the tools/call request.
	Call *peer.Call
	// Key names its checkpoints (controlled targets only).
	Key   string
	Steps int
	e     *Env
	// cancelRead is the sequence number of the answer to the barrier
	// sent behind the cancel (Env.Cancel): by then the target had read
	// the cancel. 0: no barrier.
	cancelRead uint64
}

// Follow makes an Op of a call the case started itself (a slow tool with
// arguments of its own), with the key and step count of its checkpoints.
func (e *Env) Follow(call *peer.Call, key string, steps int) *Op {
	return &Op{Call: call, Key: key, Steps: steps, e: e}
}

// ErrNoControl reports a step that needs the control extension.
var ErrNoControl = errors.New("target offers no io.mcpflight/control extension")

// StartSlow calls the profile's slow tool. On a controlled target the
// operation's key, step count and gating are set; elsewhere the profile's
// arguments are used as they are.
func (e *Env) StartSlow(ctx context.Context, spec SlowSpec) (*Op, error) {
	if e.Profile == nil || e.Profile.Slow == nil {
		return nil, errors.New("profile names no slow tool")
	}
	args := e.Profile.Slow.CloneArgs()
	steps := e.Profile.SlowSteps
	if e.Control != nil {
		args["key"] = spec.Key
		args["gated"] = !spec.Free
		if spec.Steps > 0 {
			args["steps"] = spec.Steps
			steps = spec.Steps
		}
		if spec.Unit != 0 {
			args["unit"] = spec.Unit
		}
	}
	var opts []peer.CallOption
	if spec.LogSteps && e.Control != nil && e.Is2026() {
		args["logSteps"] = true
		opts = append(opts, peer.WithLogLevel("debug"))
	}
	if spec.ID.IsValid() {
		opts = append(opts, peer.WithID(spec.ID))
	}
	switch {
	case spec.Token.IsValid():
		opts = append(opts, peer.WithProgressToken(spec.Token))
	case spec.Progress:
		opts = append(opts, peer.WithProgress())
	}
	call, err := e.S.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": e.Profile.Slow.Name, "arguments": args}, opts...)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", e.Profile.Slow.Name, err)
	}
	return &Op{Call: call, Key: spec.Key, Steps: steps, e: e}, nil
}

// Checkpoint awaits one of the operation's checkpoints ("start",
// "step/1", "end"). It gives up at once when the transport reports the
// call's exchange lost (callFailed): the operation may never have
// started, and the error then names the broken exchange.
func (o *Op) Checkpoint(ctx context.Context, name string) (control.Reached, error) {
	if o.e.Control == nil {
		return control.Reached{}, ErrNoControl
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-o.Call.Done():
			if o.callFailed() != nil {
				cancel()
			}
		case <-wctx.Done():
		}
	}()
	r, err := o.e.Control.Await(wctx, o.Key+"/"+name)
	if err != nil && ctx.Err() == nil {
		if cerr := o.callFailed(); cerr != nil {
			return r, fmt.Errorf("checkpoint %s: the call failed: %w", name, cerr)
		}
	}
	return r, err
}

// Release opens one of the operation's gates.
func (o *Op) Release(ctx context.Context, name string) error {
	if o.e.Control == nil {
		return ErrNoControl
	}
	return o.e.Control.Release(ctx, o.Key+"/"+name)
}

// ReleaseAll opens every gate of the operation, in advance where needed.
func (o *Op) ReleaseAll(ctx context.Context) error {
	if o.e.Control == nil {
		return nil
	}
	if err := o.Release(ctx, "start"); err != nil {
		return err
	}
	for i := 1; i <= o.Steps; i++ {
		if err := o.Release(ctx, fmt.Sprintf("step/%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// AtStep brings the operation to just after its n-th progress
// notification. On a controlled target it opens the gates before step n
// and awaits the step-n checkpoint; elsewhere it waits for the n-th
// progress notification on the wire, which needs a progress token.
func (o *Op) AtStep(ctx context.Context, n int) error {
	if o.e.Control != nil {
		if err := o.Release(ctx, "start"); err != nil {
			return err
		}
		for i := 1; i < n; i++ {
			if err := o.Release(ctx, fmt.Sprintf("step/%d", i)); err != nil {
				return err
			}
		}
		wctx, cancel := context.WithTimeout(ctx, o.e.Patience())
		defer cancel()
		_, err := o.Checkpoint(wctx, fmt.Sprintf("step/%d", n))
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			if cerr := o.callFailed(); cerr != nil {
				return fmt.Errorf("the call failed before step %d: %w", n, cerr)
			}
			return fmt.Errorf("%w: step %d within %v", ErrNotReached, n, o.e.Patience())
		}
		if err == nil && o.e.SeparateStreams() && o.Call.Token.IsValid() {
			// Over HTTP the await's answer and the call's progress travel
			// on different streams: the checkpoint says the progress was
			// sent, so wait until it has also been read.
			err = o.waitStreamProgress(wctx, n)
			if err != nil && ctx.Err() == nil {
				if cerr := o.callFailed(); cerr != nil {
					return fmt.Errorf("the call failed before its progress %d arrived: %w", n, cerr)
				}
				return fmt.Errorf("%w: progress %d of a reached step/%d never arrived within %v", ErrNotReached, n, n, o.e.Patience())
			}
		}
		return err
	}
	if !o.Call.Token.IsValid() {
		return errors.New("an uncontrolled target can only be followed through progress; the call has no token")
	}
	// The step is due within the target's pace: the time the steps up to
	// it take, by what was learned, else the case's patience (a call that
	// neither progresses nor ends is not reached, as a checkpoint that
	// never comes is on a controlled target).
	wctx, cancel := context.WithTimeout(ctx, o.stepBudget(n))
	defer cancel()
	if err := o.waitProgress(wctx, n); err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return fmt.Errorf("waiting for progress notification %d: %w: within %v", n, ErrNotReached, o.stepBudget(n))
		}
		return fmt.Errorf("waiting for progress notification %d: %w", n, err)
	}
	return nil
}

// stepBudget bounds a wait, without the control extension, for the call's
// progress n: Patience, and more when the run's learned step interval
// says n steps take longer (at half as long again each).
func (o *Op) stepBudget(n int) time.Duration {
	d := o.e.Patience()
	if o.e.Pacing != nil {
		if step := o.e.Pacing.Step(); step > 0 {
			d = max(d, time.Duration(n)*(step+step/2)+o.e.Patience())
		}
	}
	return d
}

// callFailed is the error the call ended with when the transport
// reported its exchange ended without the response (transport.ErrNoAnswer:
// a body that is not JSON, a stream cut off by a limit), nil otherwise. A
// step not reached is then that broken exchange, not a rule the
// operation broke.
func (o *Op) callFailed() error {
	select {
	case <-o.Call.Done():
	default:
		return nil
	}
	if _, err := o.Call.Await(context.Background()); errors.Is(err, transport.ErrNoAnswer) {
		return err
	}
	return nil
}

// WaitAnyProgress waits, at most Env.Patience, until n progress
// notifications have been read since the call was sent, whatever token
// they name: for a case that runs one call at a time.
func (o *Op) WaitAnyProgress(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, o.e.Patience())
	defer cancel()
	seen := 0
	_, err := o.e.Log.WaitFor(wctx, o.Call.SentSeq, func(ev chrono.Event) bool {
		if ev.Dir == chrono.In && AnyProgress(ev) {
			seen++
		}
		return seen >= n
	})
	return err
}

// waitProgress waits until n progress notifications for the call's token
// have been read.
func (o *Op) waitProgress(ctx context.Context, n int) error {
	isMine := ProgressFor(o.Call.Token)
	count := func() int {
		seen := 0
		for _, ev := range o.e.Log.Events() {
			if ev.Dir == chrono.In && isMine(ev) {
				seen++
			}
		}
		return seen
	}
	// The wait ends when the call does: no progress of it is due after
	// its response (PRG-14), and a call that failed sends none.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-o.Call.Done():
			cancel()
		case <-wctx.Done():
		}
	}()
	seen := 0
	_, err := o.e.Log.WaitFor(wctx, 0, func(ev chrono.Event) bool {
		if ev.Dir == chrono.In && isMine(ev) {
			seen++
		}
		return seen >= n
	})
	if err == nil || ctx.Err() != nil {
		return err
	}
	if got := count(); got >= n {
		return nil
	}
	return o.ended(n)
}

// StepFailed is the outcome of a case whose wait for a step of its call
// (Op.AtStep) failed: a call that completed before the step could be
// watched leaves the case's rule unexercised (its progress came after its
// response, which the progress cases judge, or it has fewer steps than
// the profile says); any other failure is an error that says why.
func (e *Env) StepFailed(err error) verdict.Outcome {
	var ce *CallEndedError
	if errors.As(err, &ce) && ce.Completed() {
		return verdict.Unexercised("%s", chrono.Sanitize(ce.Error(), false))
	}
	return verdict.Errorf("%v", err)
}

// ErrCallEnded reports a wait for a step of a call that ended first: its
// response (or its failure) came before the step's progress.
var ErrCallEnded = errors.New("the call ended first")

// CallEndedError is an ErrCallEnded: the call, the step waited for, and
// the response that ended it (nil when the call failed without one, Err
// then says how).
type CallEndedError struct {
	ID       jsonrpc.ID
	Step     int
	Response *jsonrpc.Message
	Event    chrono.Event
	Err      error
}

func (e *CallEndedError) Error() string {
	if e.Response == nil {
		return fmt.Sprintf("request %s failed before its progress %d: %v", e.ID, e.Step, e.Err)
	}
	return fmt.Sprintf("request %s was answered before its progress %d: %s", e.ID, e.Step, Describe(e.Event))
}

// Completed reports whether the call ended with a result (not with an
// error response, nor a failure without one).
func (e *CallEndedError) Completed() bool { return e.Response != nil && e.Response.Error == nil }

// Is makes errors.Is(err, ErrCallEnded) hold.
func (e *CallEndedError) Is(target error) bool { return target == ErrCallEnded }

// ended is the CallEndedError of a wait for progress n of o. A call that
// asked for progress and ended before its first, on a target without the
// control extension, is noted for the run's SlowFit.
func (o *Op) ended(n int) error {
	resp, seq := o.Call.Response()
	ce := &CallEndedError{ID: o.Call.ID, Step: n, Response: resp, Event: o.e.EventAt(seq)}
	if resp == nil {
		_, ce.Err = o.Call.Await(context.Background())
	}
	if resp != nil && o.Call.Token.IsValid() && o.e.Control == nil {
		how := "answered"
		if resp.Error != nil {
			how = fmt.Sprintf("failed with %d %s", resp.Error.Code, chrono.Sanitize(chrono.Clip(resp.Error.Message, 120), false))
		}
		took := ce.Event.Offset - o.e.EventAt(o.Call.SentSeq).Offset
		o.e.SlowFit.note(o.e.Log, slowCall{token: o.Call.Token, seq: o.Call.SentSeq, took: took, how: how})
	}
	return ce
}

// drainStream waits, until ctx ends, for the SSE stream that answered the
// request id to end: over HTTP an operation's end checkpoint says its
// frames were sent on that stream, not that they were read.
func (e *Env) drainStream(ctx context.Context, id jsonrpc.ID) {
	h, ok := e.S.Conn().(*transport.HTTP)
	if !ok {
		return
	}
	if done := h.StreamDone(h.StreamOf(id)); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// waitStreamProgress waits until the call's SSE stream has carried n
// progress notifications, whatever token they name (a wrong token is for
// the case to judge, not for the wait to trip on).
func (o *Op) waitStreamProgress(ctx context.Context, n int) error {
	h, ok := o.e.S.Conn().(*transport.HTTP)
	stream := ""
	if ok {
		stream = h.StreamOf(o.Call.ID)
	}
	if stream == "" {
		return o.waitProgress(ctx, n)
	}
	// Progress with the call's token read on another stream has been
	// read too: the barrier holds, and where it came is judged by the
	// cases that look (ProgressOnOwnStreams, LOG-46).
	tok, _ := o.Call.Token.MarshalJSON()
	seen := 0
	_, err := o.e.Log.WaitFor(ctx, 0, func(ev chrono.Event) bool {
		if ev.Dir == chrono.In && AnyProgress(ev) && (ev.Channel == "SSE "+stream || ev.Summary != nil && ev.Summary.Token == string(tok)) {
			seen++
		}
		return seen >= n
	})
	return err
}

// SeparateStreams reports whether the session's messages travel on
// independent streams (Streamable HTTP), so that the order in which two
// answers are read says nothing about the order they were sent.
func (e *Env) SeparateStreams() bool {
	_, ok := e.S.Conn().(*transport.HTTP)
	return ok
}

// ErrNotReached reports that a controlled operation did not reach a
// checkpoint within Env.Patience, although nothing held it back.
var ErrNotReached = errors.New("operation did not reach its checkpoint")

// ErrNotSettled reports that an operation did not reach its end within
// Env.Patience after it should have stopped.
var ErrNotSettled = errors.New("operation did not reach its end checkpoint")

// Settle waits until everything the operation will ever send is on the
// wire. On a controlled target that is the KEY/end checkpoint (bounded by
// Env.Patience); elsewhere it is the grace window itself, recorded as
// a deadline event: an observation window, not a synchronisation.
func (o *Op) Settle(ctx context.Context) (control.Reached, error) {
	if o.e.Control != nil {
		wctx, cancel := context.WithTimeout(ctx, o.e.Patience())
		defer cancel()
		r, err := o.Checkpoint(wctx, "end")
		if err != nil && ctx.Err() == nil {
			return r, fmt.Errorf("%w within %v: %w", ErrNotSettled, o.e.Patience(), err)
		}
		if err == nil {
			o.e.drainStream(wctx, o.Call.ID)
		}
		return r, err
	}
	return control.Reached{}, o.e.Observe(ctx)
}

// Observe watches for something that must not happen while frames keep
// being recorded, for one window (Window). With Pacing the window lasts
// until nothing has been received for that long (at most maxWindows
// windows from its start: a server still streaming a cancelled call's
// progress is still working on it, and its response may yet come), and
// a window right after another, with nothing sent
// or received in between, is not watched again: it would watch for the
// same thing. Without Pacing it is Grace, as it always was. The window's
// end is recorded as a deadline event: an observation, not a
// synchronisation.
func (e *Env) Observe(ctx context.Context) error {
	if e.Pacing == nil {
		t := time.NewTimer(e.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("grace window of %v elapsed", e.Grace))
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if to := e.watchedTo; to != 0 && !e.wireActiveSince(to) {
		e.Log.Harness(chrono.KindNote, "case", fmt.Sprintf("nothing sent or received since the window that ended at seq %d: not watched again", to))
		return nil
	}
	// The events to watch are those after the decision was last looked
	// at: one that arrives between the look and the window's start would
	// otherwise never be seen, and the window would run its length.
	after := e.Log.Len()
	if e.isDecided() {
		return nil
	}
	w, why := e.window()
	start := time.Now()
	end, last := start.Add(w), start.Add(maxWindows*w)
	t := time.NewTimer(w)
	defer t.Stop()
	for {
		changed := e.Log.Changed()
		arrived := false
		for _, ev := range e.Log.Since(after) {
			after = ev.Seq
			if ev.Dir == chrono.In {
				arrived = true
				if quiet := time.Now().Add(w); quiet.After(end) {
					end = quiet
				}
				if end.After(last) {
					end = last
				}
			}
		}
		if arrived && e.isDecided() {
			return nil
		}
		t.Reset(time.Until(end))
		select {
		case <-t.C:
			if time.Now().Before(end) {
				continue
			}
			text := fmt.Sprintf("window of %v elapsed with nothing received for %v (%s)",
				time.Since(start).Round(time.Millisecond), w.Round(time.Millisecond), why)
			if !end.Before(last) {
				text = fmt.Sprintf("window ended at its cap of %v (%d windows of %v) while frames still arrived (%s)",
					time.Since(start).Round(time.Millisecond), maxWindows, w.Round(time.Millisecond), why)
			}
			ev := e.Log.Harness(chrono.KindDeadline, "case", text)
			e.watchedTo = ev.Seq
			return nil
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// maxWindows caps an observation window that arrivals keep extending,
// in windows: long enough for a ten-step call that ignored its cancel
// to finish and answer at the pace it showed, bounded against a stream
// that never goes quiet.
const maxWindows = 10

// isDecided reports whether the case's verdict is fixed (DecidedBy), and
// records the first time a window ends for it.
func (e *Env) isDecided() bool {
	if e.decidedAt != 0 {
		return true
	}
	if e.decided == nil || !e.decided() {
		return false
	}
	e.decidedAt = e.Log.Harness(chrono.KindNote, "case", "the verdict is decided by what has arrived: windows end here").Seq
	return true
}

// ResultBudget bounds a wait for the operation's response when only its
// remaining work can bring it (a resumed stream, a request that noise
// must not have touched): with Pacing, the steps not yet seen at half as
// long again as the longest step interval learned (before any, the time
// this call took to its first step), plus two windows; SlowBudget
// without Pacing, on a controlled target (its steps wait on gates), or
// while neither is known.
func (o *Op) ResultBudget() time.Duration {
	e := o.e
	if e.Pacing == nil || e.Control != nil || o.Steps <= 0 {
		return e.SlowBudget()
	}
	w := e.Window() // learns this case's steps first
	seen, first := o.progressSeen()
	step := e.Pacing.Step()
	if step == 0 {
		// No two steps of one call seen yet in the run: the time to
		// this call's first step (its start and one step) bounds one.
		step = first
	}
	if step == 0 {
		return e.SlowBudget()
	}
	left := max(o.Steps-seen, 0)
	return min(time.Duration(left)*(step+step/2)+2*w, e.SlowBudget())
}

// AwaitWhileProgressing waits for the call's response within budget;
// every progress notification of the call that arrives meanwhile moves
// the end of the wait to ResultBudget after it: a step slower than the
// pace learned (a loaded machine stalls the target as much as us) is not
// a call that stopped, and once the last step has been seen only two
// windows are left for the response. It gives up at that end, after
// SlowBudget in all, or when ctx ends.
func (o *Op) AwaitWhileProgressing(ctx context.Context, budget time.Duration) (*jsonrpc.Message, error) {
	tctx, tcancel := context.WithTimeout(ctx, o.e.SlowBudget())
	defer tcancel()
	end := time.Now().Add(budget)
	from := o.e.Log.Len()
	var isMine func(chrono.Event) bool
	if o.Call.Token.IsValid() {
		progress := ProgressFor(o.Call.Token)
		isMine = func(ev chrono.Event) bool { return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && progress(ev) }
	}
	for {
		wctx, cancel := context.WithDeadline(tctx, end)
		progressed := make(chan uint64, 1)
		if isMine != nil {
			go func() {
				if ev, err := o.e.Log.WaitFor(wctx, from, isMine); err == nil {
					progressed <- ev.Seq
				}
			}()
		}
		select {
		case <-o.Call.Done():
			cancel()
			return o.Call.Await(ctx)
		case seq := <-progressed:
			cancel()
			from = seq
			// The newest step is the best evidence of what is left: the
			// end moves, earlier as well as later, to its budget.
			next := time.Now().Add(o.ResultBudget())
			o.e.Log.Harness(chrono.KindNote, "case", fmt.Sprintf("progress for request %s at seq %d: its response is waited for %v more", o.Call.ID, seq, time.Until(next).Round(time.Millisecond)))
			end = next
		case <-wctx.Done():
			resp, err := o.Call.Await(wctx)
			cancel()
			return resp, err
		}
	}
}

// progressSeen counts the progress notifications read for the call's
// token, and says how long after the call the first came (0: none yet).
func (o *Op) progressSeen() (int, time.Duration) {
	if !o.Call.Token.IsValid() {
		return 0, 0
	}
	isMine, n, first := ProgressFor(o.Call.Token), 0, time.Duration(0)
	sent := o.e.EventAt(o.Call.SentSeq).Offset
	for _, ev := range o.e.Log.Since(o.Call.SentSeq) {
		if ev.Dir == chrono.In && isMine(ev) {
			if n == 0 {
				first = ev.Offset - sent
			}
			n++
		}
	}
	return n, first
}

// ErrUnanswered reports a request the target did not answer, although
// nothing of its own work held the answer back (AwaitAnswer).
var ErrUnanswered = errors.New("request not answered")

// AwaitAnswer waits for the answer to a request that the target can give
// at once (a status read, a ping). On a target without checkpoints, with
// Pacing, the absence is decided by evidence rather than a fixed bound:
// after one window without the answer a ping is sent, and once the ping
// is answered (the target has read and handled what came after the
// request) one more window passes; a request still unanswered then is
// ErrUnanswered. A ping that fails leaves the decision to Patience, the
// bound of every other case (and of a run without Pacing). It returns
// how long it waited.
func (e *Env) AwaitAnswer(ctx context.Context, call *peer.Call) (*jsonrpc.Message, time.Duration, error) {
	start := time.Now()
	pctx, cancel, patience := e.WithPatience(ctx)
	defer cancel()
	unanswered := func(err error, why string) (*jsonrpc.Message, time.Duration, error) {
		if ctx.Err() == nil && pctx.Err() != nil {
			e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("no answer to request %s %s", call.ID, why))
			return nil, time.Since(start), fmt.Errorf("%w: %s %s", ErrUnanswered, call.ID, why)
		}
		return nil, time.Since(start), err
	}
	if e.Pacing == nil || e.Control != nil {
		resp, err := call.Await(pctx)
		if err != nil {
			return unanswered(err, fmt.Sprintf("within %v", patience))
		}
		return resp, time.Since(start), nil
	}
	wctx, wcancel := context.WithTimeout(pctx, e.Window())
	resp, err := call.Await(wctx)
	wcancel()
	if err == nil || wctx.Err() == nil {
		return resp, time.Since(start), err
	}
	ping, err := e.S.Start(pctx, mcp.MethodPing, nil)
	if err != nil {
		return nil, time.Since(start), err
	}
	pinged := make(chan error, 1)
	go func() {
		_, err := ping.Await(pctx)
		pinged <- err
	}()
	select {
	case <-call.Done():
		resp, err := call.Await(pctx)
		return resp, time.Since(start), err
	case err := <-pinged:
		if err != nil {
			resp, err := call.Await(pctx)
			if err != nil {
				return unanswered(err, fmt.Sprintf("within %v (the ping after it failed too)", patience))
			}
			return resp, time.Since(start), nil
		}
	}
	_, pingSeq := ping.Response()
	w := e.Window()
	wctx, wcancel = context.WithTimeout(pctx, w)
	defer wcancel()
	resp, err = call.Await(wctx)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		e.Log.Harness(chrono.KindDeadline, "case", fmt.Sprintf("no answer to request %s in %v, although the ping sent after it was answered (seq %d) and a window of %v passed since",
			call.ID, time.Since(start).Round(time.Millisecond), pingSeq, w.Round(time.Millisecond)))
		return nil, time.Since(start), fmt.Errorf("%w: %s, although the ping sent after it was answered at seq %d", ErrUnanswered, call.ID, pingSeq)
	}
	return resp, time.Since(start), err
}

// Window is how long a case watches for something that must not happen
// on a target without checkpoints: sized from the run's Pacing (see
// Pace.Window), or Grace without it. A case's own frames teach the Pace
// first.
func (e *Env) Window() time.Duration {
	w, _ := e.window()
	return w
}

func (e *Env) window() (time.Duration, string) {
	if e.Pacing == nil {
		return e.Grace, "fixed"
	}
	e.Pacing.Learn(e.Log, e.Control == nil, e.Transport == "stdio")
	return e.Pacing.Window()
}

// wireActiveSince reports whether anything was sent or received after
// seq (harness notes do not count).
func (e *Env) wireActiveSince(seq uint64) bool {
	for _, ev := range e.Log.Since(seq) {
		if ev.Dir != chrono.Harness {
			return true
		}
	}
	return false
}

// Complete releases every gate and waits for the response.
func (o *Op) Complete(ctx context.Context) (*jsonrpc.Message, error) {
	if err := o.ReleaseAll(ctx); err != nil {
		return nil, err
	}
	return o.Call.Await(ctx)
}

// OperationState reads the server's view of the operation, when the
// target has counters.
func (o *Op) OperationState(ctx context.Context) (control.Operation, control.Counters, error) {
	if o.e.Control == nil {
		return control.Operation{}, control.Counters{}, ErrNoControl
	}
	c, err := o.e.Control.Counters(ctx)
	if err != nil {
		return control.Operation{}, c, err
	}
	op, ok := c.Operations[o.Key]
	if !ok {
		return op, c, fmt.Errorf("counters list no operation %q", o.Key)
	}
	return op, c, nil
}

// CancelRaw sends notifications/cancelled with arbitrary params, for
// unknown, duplicate and malformed cancels.
// A cancel the server refuses over HTTP counts as sent and not acted on
// (Notify).
func (e *Env) CancelRaw(ctx context.Context, params any) (uint64, error) {
	seq, _, err := e.Notify(ctx, mcp.NotificationCancelled, params)
	return seq, err
}

// Notify sends a notification and returns the sequence number of its
// frame. Over Streamable HTTP a server may refuse a notification it
// cannot accept with an HTTP error status (HTTP-12 under 2025-11-25,
// HTTP-87 under 2026-07-28): such a refusal is no error but the server's
// decision, recorded in the chronology and returned for the case to
// judge what follows.
func (e *Env) Notify(ctx context.Context, method string, params any) (uint64, *transport.StatusError, error) {
	from := e.Log.Len()
	seq, err := e.S.NotifySeq(ctx, method, params)
	se, refused := HTTPRefusal(err)
	if !refused {
		return seq, nil, err
	}
	for _, ev := range e.Log.Since(from) {
		if ev.Dir == chrono.Out && ev.Summary != nil && ev.Summary.Method == method {
			seq = ev.Seq
			break
		}
	}
	e.Log.Harness(chrono.KindDecision, "case", fmt.Sprintf("%s refused with HTTP %d: a server may refuse what it cannot accept (HTTP-12, HTTP-87), and will not act on it", method, se.Status))
	return seq, se, nil
}

// FrameAfter returns the first inbound frame after seq that matches.
func (e *Env) FrameAfter(seq uint64, match func(chrono.Event) bool) (chrono.Event, bool) {
	for _, ev := range e.Log.Since(seq) {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && match(ev) {
			return ev, true
		}
	}
	return chrono.Event{}, false
}

// ResponseTo matches a response frame for the request ID.
func ResponseTo(id jsonrpc.ID) func(chrono.Event) bool {
	want := id.String()
	return func(ev chrono.Event) bool {
		return ev.Summary != nil && (ev.Summary.Kind == "result" || ev.Summary.Kind == "error") && ev.Summary.ID == want
	}
}

// ProgressFor matches a progress notification for the token.
func ProgressFor(tok jsonrpc.ProgressToken) func(chrono.Event) bool {
	want := tok.String()
	return func(ev chrono.Event) bool {
		return ev.Summary != nil && ev.Summary.Method == mcp.NotificationProgress && ev.Summary.Token == want
	}
}

// AnyProgress matches every progress notification.
func AnyProgress(ev chrono.Event) bool {
	return ev.Summary != nil && ev.Summary.Method == mcp.NotificationProgress
}

// AnyResponse matches every response frame.
func AnyResponse(ev chrono.Event) bool {
	return ev.Summary != nil && (ev.Summary.Kind == "result" || ev.Summary.Kind == "error")
}

// Describe renders an event for an Actual line.
func Describe(ev chrono.Event) string {
	if ev.Summary == nil {
		return fmt.Sprintf("seq %d %s %s", ev.Seq, ev.Kind, chrono.Sanitize(ev.Text, false))
	}
	s := ev.Summary
	raw := string(ev.Raw)
	if len(raw) > 160 {
		raw = raw[:160] + "…"
	}
	return fmt.Sprintf("seq %d %s %s %s", ev.Seq, ev.Channel, s.Kind, chrono.Sanitize(raw, false))
}
