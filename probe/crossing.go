package probe

import (
	"context"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
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
func (e *Env) Cancel(ctx context.Context, op *Op, reason string) error {
	if err := e.S.Cancel(ctx, op.Call, reason); err != nil {
		return err
	}
	if e.Control == nil {
		op.cancelRead = e.barrier(ctx)
	}
	return nil
}

// barrier sends a prompt request and returns the sequence number of its
// answer, 0 when none came within Env.Patience (no barrier: nothing is
// then taken to have crossed).
func (e *Env) barrier(ctx context.Context) uint64 {
	method := mcp.MethodPing
	if e.Modern() {
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
