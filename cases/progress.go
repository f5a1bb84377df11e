package cases

import (
	"context"
	"fmt"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// progressCases cover notifications/progress (2025-11-25 utilities/progress).
func progressCases() []probe.Case {
	return []probe.Case{
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-8 MAY (2025-11-25 only): "Receivers of progress requests MAY: ▸ Choose not to send
		//   any progress notifications ▸ Send notifications at whatever frequency they deem
		//   appropriate ▸ Omit the total value if unknown"
		// PRG-43 MAY (2026-07-28 only): "Servers receiving a request with a progress token MAY: ▸
		//   Choose not to send any progress notifications ▸ Send notifications at whatever frequency
		//   they deem appropriate ▸ Omit the total value if unknown"
		{
			ID:        "progress/strictly-increasing",
			Tidy:      true,
			Title:     "progress values strictly increase",
			Reqs:      []string{"PRG-4", "PRG-1", "PRG-14", "PRG-7"},
			ReqsUnder: map[string][]string{spec.V20251125: {"PRG-8"}, spec.V20260728: {"PRG-43"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{SlowTool: true},
			Sends:     "tools/call with a progress token, run to completion",
			Expect:    "each progress value is greater than the one before (no progress at all is recorded as info)",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return runWithToken(ctx, e, probe.SlowSpec{Key: "a", Progress: true, Free: true})
			},
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		{
			ID:       "progress/token-echo-string",
			Tidy:     true,
			Title:    "a string token is echoed exactly",
			Reqs:     []string{"PRG-7", "PRG-1", "PRG-14", "PRG-4"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    `tools/call with progressToken "mcpflight-tök-\"q\"-7"`,
			Expect:   "every progress notification carries that exact string",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return runWithToken(ctx, e, probe.SlowSpec{Key: "a", Token: jsonrpc.StringToken(`mcpflight-tök-"q"-7`), Free: true})
			},
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		{
			ID:       "progress/token-echo-integer",
			Tidy:     true,
			Title:    "an integer token is echoed as an integer",
			Reqs:     []string{"PRG-7", "PRG-1", "PRG-14", "PRG-4"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call with progressToken 42",
			Expect:   "every progress notification carries the integer 42, not the string",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return runWithToken(ctx, e, probe.SlowSpec{Key: "a", Token: jsonrpc.IntToken(42), Free: true})
			},
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		{
			ID:       "progress/token-zero",
			Tidy:     true,
			Title:    "progress token 0 is a real token",
			Reqs:     []string{"PRG-7", "PRG-1", "PRG-14", "PRG-4"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call with progressToken 0",
			Expect:   "progress notifications carry the integer 0; a target that sends progress for other tokens but none for 0 treats 0 as absent",
			Run:      progressTokenZero,
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		{
			ID:       "progress/none-without-token",
			Tidy:     true,
			Title:    "no progress is sent for a request without a token",
			Reqs:     []string{"PRG-7"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call without _meta.progressToken, run to completion",
			Expect:   "no notifications/progress at all",
			Run:      progressNoneWithoutToken,
		},
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		{
			ID:       "progress/none-after-response",
			Tidy:     true,
			Title:    "progress stops at the response",
			Reqs:     []string{"PRG-14", "PRG-7", "PRG-1", "PRG-4"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call with a progress token, run to completion",
			Expect:   "no progress for the token after the response",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return runWithToken(ctx, e, probe.SlowSpec{Key: "a", Progress: true, Free: true})
			},
		},
		// PRG-5 MAY: "The `progress` and the `total` values MAY be floating point."
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		{
			ID:       "progress/fractional-total",
			Tidy:     true,
			Title:    "fractional progress and total survive",
			Reqs:     []string{"PRG-5", "PRG-4", "PRG-1", "PRG-14", "PRG-7"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{SlowTool: true},
			Sends:    "tools/call with a progress token; on a controlled target, steps of 0.5",
			Expect:   "floating-point progress and total are valid, and still strictly increase",
			Run:      progressFractional,
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-2 MUST (2025-11-25 only): "Progress tokens can be chosen by the sender using any
		//   means, but MUST be unique across all active requests."
		// PRG-41 MUST (2026-07-28 only): "Progress tokens can be chosen by the client using any
		//   means, but MUST be unique across all active requests."
		{
			ID:        "progress/token-reuse-after-cleanup",
			Tidy:      true,
			Title:     "a token reused after its request ended starts afresh",
			Reqs:      []string{"PRG-7", "PRG-4", "PRG-1", "PRG-14"},
			ReqsUnder: map[string][]string{spec.V20251125: {"PRG-2"}, spec.V20260728: {"PRG-41"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{SlowTool: true},
			Sends:     "two tools/call in turn with the same progress token",
			Expect:    "the second request is accepted and gets its own strictly increasing progress",
			Run:       progressTokenReuse,
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-2 MUST (2025-11-25 only): "Progress tokens can be chosen by the sender using any
		//   means, but MUST be unique across all active requests."
		// HTTP-22 MAY/SHOULD (2025-11-25 only): "The server MAY send JSON-RPC _requests_ and
		//   _notifications_ before sending the JSON-RPC _response_. These messages SHOULD relate to
		//   the originating client _request_."
		// PRG-41 MUST (2026-07-28 only): "Progress tokens can be chosen by the client using any
		//   means, but MUST be unique across all active requests."
		// PRG-40 MAY (2026-07-28 only): "The server MAY send progress notifications to report the
		//   status of requests the client has issued."
		// LOG-46 MUST (2026-07-28 only): "These notifications MUST relate to the originating
		//   client request."
		{
			ID:        "progress/interleaved-tokens",
			Tidy:      true,
			Title:     "concurrent requests keep their progress apart",
			Reqs:      []string{"PRG-7", "PRG-4", "PRG-1", "PRG-14"},
			ReqsUnder: map[string][]string{spec.V20251125: {"PRG-2", "HTTP-22"}, spec.V20260728: {"PRG-41", "PRG-40", "LOG-46"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{SlowTool: true},
			Sends:     `three concurrent tools/call with tokens "a", 7 and "7" (under 2026-07-28 over Streamable HTTP, on a controlled target, each also with logLevel debug and a log message per step)`,
			Expect:    "every notification carries one of those exact tokens and each sequence strictly increases; over Streamable HTTP each call's progress, and under 2026-07-28 each call's log messages, come on its own response stream",
			Run:       progressInterleaved,
		},
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// CAN-5 MUST (2025-11-25 only): "This MUST correspond to the ID of a request previously
		//   issued in the same direction."
		// HTTP-22 MAY/SHOULD (2025-11-25 only): "The server MAY send JSON-RPC _requests_ and
		//   _notifications_ before sending the JSON-RPC _response_. These messages SHOULD relate to
		//   the originating client _request_."
		// PRG-40 MAY (2026-07-28 only): "The server MAY send progress notifications to report the
		//   status of requests the client has issued."
		// LOG-46 MUST (2026-07-28 only): "These notifications MUST relate to the originating
		//   client request."
		{
			ID:        "progress/token-independent-of-id",
			Tidy:      true,
			IDs:       []jsonrpc.ID{jsonrpc.IntID(101), jsonrpc.IntID(102)},
			Title:     "progress tokens are not request IDs",
			Reqs:      []string{"PRG-7", "PRG-1", "PRG-14", "PRG-4"},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-5", "HTTP-22"}, spec.V20260728: {"PRG-40", "LOG-46"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{SlowTool: true},
			Sends:     "request 101 with token 102 and request 102 with token 101, concurrently",
			Expect:    "each request's progress carries its own token; over Streamable HTTP it comes on that request's own response stream",
			Run:       progressIndependentOfID,
		},
	}
}

func runWithToken(ctx context.Context, e *probe.Env, spec probe.SlowSpec) verdict.Outcome {
	op, err := e.StartSlow(ctx, spec)
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := op.Complete(ctx)
	if err != nil {
		return verdict.Errorf("awaiting the result: %v", err)
	}
	if resp.Error != nil {
		return verdict.Errorf("the slow tool failed: %s", resp.Error.Message)
	}
	if _, err := op.Settle(ctx); err != nil {
		return verdict.Errorf("settling: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.JudgeProgress(op.Call); o != nil {
		return *o
	}
	n := op.Call.ProgressCount()
	if n == 0 {
		return verdict.Infof("no progress notifications for token %s (PRG-8 allows none)", op.Call.Token)
	}
	return verdict.Passf("%d progress notifications for token %s, strictly increasing, none after the response", n, op.Call.Token)
}

func progressTokenZero(ctx context.Context, e *probe.Env) verdict.Outcome {
	ref, err := e.StartSlow(ctx, probe.SlowSpec{Key: "ref", Token: jsonrpc.StringToken("mcpflight-ref"), Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	zero, err := e.StartSlow(ctx, probe.SlowSpec{Key: "zero", Token: jsonrpc.IntToken(0), Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	for _, op := range []*probe.Op{ref, zero} {
		resp, err := op.Complete(ctx)
		if err != nil {
			return verdict.Errorf("awaiting the result: %v", err)
		}
		if resp.Error != nil {
			return e.Breaks("PRG-1", []string{"a request with progress token " + op.Call.Token.String() + " is accepted"},
				"it failed: "+probe.Describe(e.EventAt(op.Call.SentSeq+1)), 0)
		}
		if _, err := op.Settle(ctx); err != nil {
			return verdict.Errorf("settling: %v", err)
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.JudgeProgress(ref.Call, zero.Call); o != nil {
		return *o
	}
	nRef, nZero := ref.Call.ProgressCount(), zero.Call.ProgressCount()
	switch {
	case nZero > 0:
		return verdict.Passf("%d progress notifications carried token 0", nZero)
	case nRef > 0:
		return e.Broke(verdict.Req("PRG-1").Except(verdict.Warn,
			"0 is a valid integer token (PRG-1), and the same call with another token got progress, so 0 was most likely dropped as falsy; but PRG-8 lets a receiver send no progress at all, so the evidence cannot prove a MUST broken"),
			[]string{"progress for token 0, as for the string token"},
			fmt.Sprintf("%d notifications for the string token, none for 0: 0 looks treated as absent", nRef), 0)
	}
	return verdict.Infof("the target sent no progress for either token (PRG-8 allows none)")
}

func progressNoneWithoutToken(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := op.Complete(ctx)
	if err != nil {
		return verdict.Errorf("awaiting the result: %v", err)
	}
	if resp.Error != nil {
		return verdict.Errorf("the slow tool failed: %s", resp.Error.Message)
	}
	if _, err := op.Settle(ctx); err != nil {
		return verdict.Errorf("settling: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if ev, ok := e.FrameAfter(0, probe.AnyProgress); ok {
		return e.Breaks("PRG-7", []string{"no notifications/progress: the request carried no token"}, probe.Describe(ev), ev.Seq)
	}
	return verdict.Passf("no progress without a token")
}

func progressFractional(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true, Unit: 0.5})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := op.Complete(ctx)
	if err != nil || resp.Error != nil {
		return verdict.Errorf("the slow tool failed: %s", errOr(err, resp))
	}
	if _, err := op.Settle(ctx); err != nil {
		return verdict.Errorf("settling: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.JudgeProgress(op.Call); o != nil {
		return *o
	}
	seen := op.Call.ProgressSeen()
	if len(seen) == 0 {
		return verdict.Infof("no progress notifications (PRG-8 allows none)")
	}
	fractional := false
	for _, p := range seen {
		if p.Progress != float64(int64(p.Progress)) || (p.Total != nil && *p.Total != float64(int64(*p.Total))) {
			fractional = true
		}
	}
	if e.Control != nil && !fractional {
		return e.Breaks("PRG-5", []string{"fractional progress values, as requested with unit 0.5"},
			"every value was whole", seen[0].Seq)
	}
	if !fractional {
		return verdict.Infof("%d progress notifications, all whole numbers; accepted", len(seen))
	}
	return verdict.Passf("%d fractional progress notifications accepted, strictly increasing", len(seen))
}

func progressTokenReuse(ctx context.Context, e *probe.Env) verdict.Outcome {
	tok := jsonrpc.StringToken("mcpflight-reused")
	first, err := e.StartSlow(ctx, probe.SlowSpec{Key: "first", Token: tok, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if resp, err := first.Complete(ctx); err != nil || resp.Error != nil {
		return verdict.Errorf("the first request failed: %s", errOr(err, resp))
	}
	if _, err := first.Settle(ctx); err != nil {
		return verdict.Errorf("settling: %v", err)
	}
	second, err := e.StartSlow(ctx, probe.SlowSpec{Key: "second", Token: tok, Free: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	resp, err := second.Complete(ctx)
	if err != nil {
		return verdict.Errorf("awaiting the second result: %v", err)
	}
	if resp.Error != nil {
		_, seq := second.Call.Response()
		return e.Broke(verdict.Req("PRG-2").Under(spec.V20260728, "PRG-41"), []string{"a token is free again once its request has ended: the second request is accepted"},
			probe.Describe(e.EventAt(seq)), seq)
	}
	if _, err := second.Settle(ctx); err != nil {
		return verdict.Errorf("settling: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.JudgeProgress(first.Call, second.Call); o != nil {
		return *o
	}
	return verdict.Passf("token reused: %d then %d progress notifications, each sequence fresh", first.Call.ProgressCount(), second.Call.ProgressCount())
}

func progressInterleaved(ctx context.Context, e *probe.Env) verdict.Outcome {
	// LOG-46 binds notifications/message as it binds progress: where a
	// request has a response stream of its own, the steps log too.
	logs := e.Is2026() && e.SeparateStreams()
	specs := []probe.SlowSpec{
		{Key: "a", Token: jsonrpc.StringToken("a"), LogSteps: logs},
		{Key: "b", Token: jsonrpc.IntToken(7), LogSteps: logs},
		{Key: "c", Token: jsonrpc.StringToken("7"), LogSteps: logs},
	}
	return runConcurrently(ctx, e, specs)
}

func progressIndependentOfID(ctx context.Context, e *probe.Env) verdict.Outcome {
	specs := []probe.SlowSpec{
		{Key: "a", ID: jsonrpc.IntID(101), Token: jsonrpc.IntToken(102)},
		{Key: "b", ID: jsonrpc.IntID(102), Token: jsonrpc.IntToken(101)},
	}
	return runConcurrently(ctx, e, specs)
}

// runConcurrently starts every spec, then walks them step by step in
// turn so that their progress interleaves, and judges each sequence.
func runConcurrently(ctx context.Context, e *probe.Env, specs []probe.SlowSpec) verdict.Outcome {
	ops := make([]*probe.Op, 0, len(specs))
	calls := make([]*peer.Call, 0, len(specs))
	for _, s := range specs {
		op, err := e.StartSlow(ctx, s)
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		ops = append(ops, op)
		calls = append(calls, op.Call)
	}
	if e.Control != nil {
		for step := 1; step <= ops[0].Steps; step++ {
			for _, op := range ops {
				if err := op.AtStep(ctx, step); err != nil {
					return e.StepFailed(err)
				}
			}
		}
	}
	for _, op := range ops {
		resp, err := op.Complete(ctx)
		if err != nil || resp.Error != nil {
			return verdict.Errorf("request %s failed: %s", op.Call.ID, errOr(err, resp))
		}
		if _, err := op.Settle(ctx); err != nil {
			return verdict.Errorf("settling: %v", err)
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.JudgeProgress(calls...); o != nil {
		return *o
	}
	if o := e.ProgressOnOwnStreams(calls...); o != nil {
		return *o
	}
	if o := e.LogsOnOwnStreams(ops...); o != nil {
		return *o
	}
	total := 0
	for _, op := range ops {
		n := op.Call.ProgressCount()
		total += n
		if e.Control != nil && n != op.Steps {
			return e.Breaks("PRG-7", []string{fmt.Sprintf("%d progress notifications for token %s", op.Steps, op.Call.Token)},
				fmt.Sprintf("%d arrived", n), 0)
		}
	}
	return verdict.Passf("%d progress notifications across %d concurrent requests, each routed to its own token", total, len(ops))
}
