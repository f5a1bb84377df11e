package probe

import (
	"context"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// Cancel sends the cancel of op and, on a target without checkpoints, a
// barrier right behind it: a request the target answers at once (ping;
// server/discover under 2026-07-28). The target reads its input in
// order, so the barrier's answer shows it had read the cancel by then.
// A progress notification read between the cancel and that answer may
// have been written before the target read the cancel (the two crossed
// on the wire, most often on a loaded machine, where the step timer of
// the handler fires before the target is scheduled to read): it is no
// evidence that the cancel was ignored (ProgressAfterCancel). On a
// controlled target the checkpoints order everything and no barrier is
// needed.
//
// Over Streamable HTTP the cancel is a POST of its own and a barrier
// would be one too, handled in no order with it (a busy server may answer
// it long after it acted on the cancel): there the cancel's own HTTP
// answer (202) shows the server had received it, and bounds the crossing.
//
// The call's response may already have been read when the cancel goes
// out, before the session has matched it to the call (a loaded machine
// widens that gap): the request then completed before the cancel, as
// when the session refuses to send it, and Cancel reports
// peer.ErrNotPending too, naming both sequence numbers.
func (e *Env) Cancel(ctx context.Context, op *Op, reason string) error {
	if err := e.S.Cancel(ctx, op.Call, reason); err != nil {
		return err
	}
	if ev, ok := e.FrameAfter(op.Call.SentSeq, ResponseTo(op.Call.ID)); ok && ev.Seq < op.Call.CancelSeq {
		return fmt.Errorf("%w: its response (seq %d) was read before the cancel went out (seq %d)", peer.ErrNotPending, ev.Seq, op.Call.CancelSeq)
	}
	switch {
	case e.Control != nil:
	case e.SeparateStreams():
		op.cancelRead = e.postAnswered(op.Call.CancelSeq)
	default:
		op.cancelRead = e.Barrier(ctx)
	}
	return nil
}

// postAnswered returns the sequence number of the HTTP answer to the
// POST that carried the frame at seq (0 when none is recorded).
func (e *Env) postAnswered(seq uint64) uint64 {
	if _, ev, ok := e.StatusAfter(seq); ok {
		return ev.Seq
	}
	return 0
}

// Barrier sends a prompt request (ping; server/discover under
// 2026-07-28) and waits for its answer: a target that reads its input in
// order has read everything sent before it. It returns the sequence
// number of the answer, 0 when none came within Env.Patience (no
// barrier: nothing is then taken to have crossed).
func (e *Env) Barrier(ctx context.Context) uint64 {
	method := mcp.MethodPing
	if e.Is2026() {
		method = mcp.MethodServerDiscover
	}
	bctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	c, err := e.S.Start(bctx, method, nil)
	if err != nil {
		e.Log.Harness(chrono.KindNote, "case", fmt.Sprintf("no barrier after the cancel: %s", chrono.Sanitize(err.Error(), false)))
		return 0
	}
	if _, err := c.Await(bctx); err != nil {
		e.Log.Harness(chrono.KindNote, "case", fmt.Sprintf("no barrier after the cancel: %s", chrono.Sanitize(err.Error(), false)))
		return 0
	}
	_, seq := c.Response()
	return seq
}

// CrossedCancel reports whether a frame read at seq, after op's cancel,
// came before the barrier's answer showed the target had read the cancel.
func (op *Op) CrossedCancel(seq uint64) bool {
	return op.cancelRead != 0 && seq > op.Call.CancelSeq && seq < op.cancelRead
}

// CrossedAllSteps begins the summary of a cancel case whose operation did
// all its work before the target read the cancel: a run on a loaded
// machine, or a target whose steps outrun its input, leaves the rule
// unobserved.
const CrossedAllSteps = "every step crossed the cancel"

// CrossedAllSteps reports whether the progress of each of op's steps was
// read before the target had read its cancel (op.Steps known, a barrier
// or the cancel's HTTP answer recorded).
func (op *Op) CrossedAllSteps() bool {
	if op.cancelRead == 0 || op.Steps <= 0 || !op.Call.Token.IsValid() {
		return false
	}
	isMine := ProgressFor(op.Call.Token)
	n := 0
	for _, ev := range op.e.Log.Since(op.Call.SentSeq) {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame || !isMine(ev) {
			continue
		}
		if ev.Seq > op.cancelRead {
			return false
		}
		n++
	}
	return n >= op.Steps
}
