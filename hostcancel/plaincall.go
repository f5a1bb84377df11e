package hostcancel

import (
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
)

// ClassifyCall says how a plain request (one not augmented as a task)
// ended, in the controller's vocabulary, so that a host (mcpflight call,
// the shell) names a call's end as it names a task's:
//
//   - CompletedBeforeCancel: a result arrived, with no cancel, or before
//     the cancel took effect (a response after the cancel is to be
//     ignored, CAN-10: Detail says so);
//   - Failed: a JSON-RPC error, or a result with isError (ResultError,
//     Result);
//   - OutcomeUnknown with UnknownCancelUnanswered: cancelled, and no
//     response came. That is the silence the spec asks of the receiver
//     (CAN-7), and with a plain request nothing can verify that the work
//     stopped: no status to read, unlike a task;
//   - OutcomeUnknown with UnknownConnectionLost: the connection ended
//     before a response.
//
// Detail is one sanitised line; Result holds the result when one came.
func ClassifyCall(c *peer.Call) Result {
	resp, _ := c.Response()
	r := Result{RequestIDs: []jsonrpc.ID{c.ID}, CancelSent: c.CancelRequested()}
	switch {
	case c.State() == peer.StateStreamClosed && resp == nil:
		r.Classification, r.Unknown = OutcomeUnknown, UnknownCancelUnanswered
		r.Detail = "its response stream was closed (the 2026-07-28 cancellation over HTTP), so no response can arrive"
	case c.State() == peer.StateFailed:
		r.Classification, r.Unknown = OutcomeUnknown, UnknownConnectionLost
		r.Detail = "the connection ended before a response"
	case resp == nil && c.CancelRequested():
		r.Classification, r.Unknown = OutcomeUnknown, UnknownCancelUnanswered
	case resp == nil:
		r.Classification = OutcomeUnknown
		r.Detail = "no response"
	case resp.Error != nil:
		r.Classification, r.ResultError = Failed, resp.Error
		r.Detail = fmt.Sprintf("error %d: %s", resp.Error.Code, chrono.Sanitize(resp.Error.Message, false))
	default:
		r.Classification, r.Result = CompletedBeforeCancel, resp.Result
		var tr struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(resp.Result, &tr)
		if tr.IsError {
			r.Classification, r.Detail = Failed, "the tool reported an error"
		}
	}
	if c.LateResponse() && r.Classification != OutcomeUnknown {
		r.Detail = "the response came after the cancel and is to be ignored (CAN-10)"
	}
	return r
}
