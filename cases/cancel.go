package cases

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// cancelCases cover notifications/cancelled for ordinary requests
// (2025-11-25 utilities/cancellation).
func cancelCases() []probe.Case {
	return []probe.Case{
		// CAN-16 SHOULD: "This notification indicates that the result will be unused, so any
		//   associated processing SHOULD cease."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:              "cancel/mid-work-no-response",
			Title:           "a request cancelled mid-work gets no response",
			Reqs:            []string{"CAN-16", "CAN-11"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "tools/call with a progress token; after the first progress, notifications/cancelled",
			Expect:          "no response for that id; the session stays usable",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return cancelMidWork(ctx, e, false)
			},
		},
		// CAN-16 SHOULD: "This notification indicates that the result will be unused, so any
		//   associated processing SHOULD cease."
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:              "cancel/mid-work-no-progress",
			Title:           "no progress follows a cancel",
			Reqs:            []string{"CAN-16", "PRG-7", "CAN-11"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "tools/call with a progress token; after the first progress, notifications/cancelled",
			Expect:          "no progress for the token after the cancel",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return cancelMidWork(ctx, e, true)
			},
		},
		// CAN-15 SHOULD: "The request SHOULD still be in-flight, but due to communication latency,
		//   it is always possible that this notification MAY arrive after the request has already
		//   finished."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:              "cancel/before-first-progress",
			Title:           "a request cancelled before its first progress stays silent",
			Reqs:            []string{"CAN-15", "CAN-11"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "tools/call with a progress token, then notifications/cancelled before any progress",
			Expect:          "no progress and no response for the request",
			Run:             cancelBeforeFirstProgress,
		},
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-9 MAY (2025-11-25 only): "Receivers MAY ignore cancellation notifications if: ▸ The
		//   referenced request is unknown ▸ Processing has already completed ▸ The request cannot be
		//   cancelled"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// PRG-12 SHOULD (2025-11-25 only): "Senders and receivers SHOULD track active progress
		//   tokens"
		// CAN-49 MAY (2026-07-28 only): "Servers MAY ignore cancellation notifications if: ▸ The
		//   referenced request is unknown ▸ Processing has already completed ▸ The request cannot be
		//   cancelled"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// PRG-44 SHOULD (2026-07-28 only): "Clients and servers SHOULD track active progress
		//   tokens"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:        "cancel/after-completion",
			Tidy:      true,
			Title:     "a cancel for a completed request is ignored",
			Reqs:      []string{"CAN-11", "CAN-14", "RPC-15", "RPC-8"},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-9", "CAN-8", "PRG-12"}, spec.V20260728: {"CAN-49", "CAN-54", "CAN-56", "CAN-48", "PRG-44", "CAN-55"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{UsesSlowTool: true},
			Sends:     "tools/call run to completion (without a slow tool, tools/list), then notifications/cancelled for its id",
			Expect:    "the result stands; no response to the cancel; the session stays usable",
			Run:       cancelAfterCompletion,
		},
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-9 MAY (2025-11-25 only): "Receivers MAY ignore cancellation notifications if: ▸ The
		//   referenced request is unknown ▸ Processing has already completed ▸ The request cannot be
		//   cancelled"
		// CAN-49 MAY (2026-07-28 only): "Servers MAY ignore cancellation notifications if: ▸ The
		//   referenced request is unknown ▸ Processing has already completed ▸ The request cannot be
		//   cancelled"
		{
			ID:        "cancel/unknown-id-ignored",
			Tidy:      true,
			Title:     "a cancel for an unknown id touches nothing",
			Reqs:      []string{"CAN-14", "RPC-15", "CAN-11", "RPC-8"},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-9"}, spec.V20260728: {"CAN-49"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{UsesSlowTool: true},
			Sends:     "a running tools/call (none without a slow tool), then notifications/cancelled for ids never sent",
			Expect:    "the running request completes; no response to the cancels",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return bogusCancel(ctx, e, "a cancel for unknown ids",
					[]any{map[string]any{"requestId": 987654321}, map[string]any{"requestId": "mcpflight-never-sent"}})
			},
		},
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-6 MUST (2025-11-25 only): "This MUST be provided for cancelling non-task requests."
		{
			ID:        "cancel/missing-request-id",
			Tidy:      true,
			Title:     "a cancel without requestId is ignored",
			Reqs:      []string{"CAN-14", "CAN-11", "RPC-15", "RPC-8"},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-6"}},
			Versions:  bothRevisions(),
			Needs:     probe.Needs{UsesSlowTool: true},
			Sends:     `a running tools/call (none without a slow tool), then notifications/cancelled {"reason": "…"} with no requestId`,
			Expect:    "ignored: no response, no crash, the running request completes",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return bogusCancel(ctx, e, "a cancel without requestId",
					[]any{map[string]any{"reason": "mcpflight: no request id"}})
			},
		},
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// RPC-4 MUST: "Requests MUST include a string or integer ID."
		// RPC-5 MUST NOT: "Unlike base JSON-RPC, the ID MUST NOT be `null`."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		{
			ID:       "cancel/invalid-request-id",
			Tidy:     true,
			Title:    "cancels with structurally invalid ids are ignored",
			Reqs:     []string{"CAN-14", "RPC-4", "RPC-5", "CAN-11", "RPC-15", "RPC-8"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{UsesSlowTool: true},
			Sends:    "a running tools/call (none without a slow tool), then notifications/cancelled with requestId null, 1.5, true, {}, []",
			Expect:   "each is ignored: no response, no crash, the running request completes",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return bogusCancel(ctx, e, "cancels with invalid requestIds", []any{
					map[string]any{"requestId": nil},
					map[string]any{"requestId": 1.5},
					map[string]any{"requestId": true},
					map[string]any{"requestId": map[string]any{"id": 1}},
					map[string]any{"requestId": []any{1}},
				})
			},
		},
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		{
			ID:       "cancel/no-params",
			Tidy:     true,
			Title:    "a cancel with no params is ignored",
			Reqs:     []string{"CAN-14", "CAN-11", "RPC-15", "RPC-8"},
			Versions: bothRevisions(),
			Needs:    probe.Needs{UsesSlowTool: true},
			Sends:    "a running tools/call (none without a slow tool), then notifications/cancelled without params",
			Expect:   "ignored: no response, no crash, the running request completes",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return bogusCancel(ctx, e, "a cancel without params", []any{nil})
			},
		},
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// PRG-12 SHOULD (2025-11-25 only): "Senders and receivers SHOULD track active progress
		//   tokens"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		// PRG-44 SHOULD (2026-07-28 only): "Clients and servers SHOULD track active progress
		//   tokens"
		{
			ID:              "cancel/duplicate",
			Title:           "a repeated cancel is idempotent",
			Reqs:            []string{"CAN-14", "CAN-11", "RPC-15", "RPC-8"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-8", "PRG-12"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55", "PRG-44"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "tools/call; notifications/cancelled for it, twice",
			Expect:          "no response; one cleanup; no response to either notification; the session stays usable",
			Run:             cancelDuplicate,
		},
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:              "cancel/extra-fields",
			Title:           "extra members in a cancel do not break the receiver",
			Reqs:            []string{"CAN-14", "RPC-15", "CAN-11", "RPC-8"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "tools/call; notifications/cancelled with its id plus unknown members and _meta",
			Expect:          "either cancelled or ignored (recorded as info); no response to the notification; the session stays usable",
			Run:             cancelExtraFields,
		},
		// RPC-4 MUST: "Requests MUST include a string or integer ID."
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-5 MUST (2025-11-25 only): "This MUST correspond to the ID of a request previously
		//   issued in the same direction."
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// PRG-12 SHOULD (2025-11-25 only): "Senders and receivers SHOULD track active progress
		//   tokens"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		// PRG-44 SHOULD (2026-07-28 only): "Clients and servers SHOULD track active progress
		//   tokens"
		{
			ID:              "cancel/id-zero",
			Title:           "request id 0 can be cancelled",
			Reqs:            []string{"RPC-4", "CAN-11"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-5", "CAN-8", "PRG-12"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55", "PRG-44"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			IDs:             []jsonrpc.ID{jsonrpc.IntID(0)},
			Sends:           "tools/call with id 0; notifications/cancelled {requestId: 0}",
			Expect:          "no response; on a controlled target the operation is cancelled, not left running",
			Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
				return cancelByID(ctx, e, jsonrpc.IntID(0))
			},
		},
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-14 SHOULD: "Invalid cancellation notifications SHOULD be ignored: ▸ Unknown request
		//   IDs ▸ Already completed requests ▸ Malformed notifications"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-5 MUST (2025-11-25 only): "This MUST correspond to the ID of a request previously
		//   issued in the same direction."
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// PRG-12 SHOULD (2025-11-25 only): "Senders and receivers SHOULD track active progress
		//   tokens"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		// PRG-44 SHOULD (2026-07-28 only): "Clients and servers SHOULD track active progress
		//   tokens"
		{
			ID:              "cancel/string-vs-integer-target",
			Title:           `cancelling "5" leaves request 5 alone`,
			Reqs:            []string{"RPC-8", "CAN-14", "CAN-11"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-5", "CAN-8", "PRG-12"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55", "PRG-44"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			IDs:             []jsonrpc.ID{jsonrpc.StringID("5"), jsonrpc.IntID(5)},
			Sends:           `two tools/call with ids "5" and 5; notifications/cancelled {requestId: "5"}`,
			Expect:          `no response for "5"; request 5 completes with a response whose id is the integer 5`,
			Run:             cancelStringVsInteger,
		},
		// PRG-4 MUST: "The `progress` value MUST increase with each notification, even if the
		//   total is unknown."
		// PRG-7 MUST: "Progress notifications MUST only reference tokens that: ▸ Were provided in
		//   an active request ▸ Are associated with an in-progress operation"
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// PRG-1 MUST: "Progress tokens MUST be a string or integer value"
		// PRG-14 MUST: "Progress notifications MUST stop after completion"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:              "cancel/interleaved-other-completes",
			Title:           "cancelling one of two requests leaves the other intact",
			Reqs:            []string{"PRG-4", "PRG-7", "CAN-11", "PRG-1", "PRG-14"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "two tools/call with progress tokens; cancel the first after its first progress",
			Expect:          "the first gets no response or progress after the cancel; the second completes with strictly increasing progress",
			Run:             cancelInterleaved,
		},
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// PRG-12 SHOULD (2025-11-25 only): "Senders and receivers SHOULD track active progress
		//   tokens"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		// PRG-44 SHOULD (2026-07-28 only): "Clients and servers SHOULD track active progress
		//   tokens"
		{
			ID:        "cancel/cleanup-exactly-once",
			Title:     "an accepted cancel frees the operation exactly once",
			Reqs:      []string{},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-8", "PRG-12"}, spec.V20260728: {"CAN-54", "CAN-56", "CAN-48", "CAN-55", "PRG-44"}},
			Versions:  bothRevisions(),
			Needs: probe.Needs{SlowTool: true, Control: true,
				ControlFor: "its cleanup counters (the operation released once, nothing active, no live progress token), which no message on the wire shows and an observer's counts (profile \"observer\", docs/observer.md) do not cover"},
			Sends:  "tools/call with a progress token; notifications/cancelled mid-work",
			Expect: "the counters show the operation cancelled, one release, nothing active, no live token",
			Run:    cancelCleanupOnce,
		},
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		{
			ID:        "cancel/handler-stops",
			Title:     "a cancelled handler stops its work",
			Reqs:      []string{},
			ReqsUnder: map[string][]string{spec.V20251125: {"CAN-8"}, spec.V20260728: {"CAN-48"}},
			Versions:  bothRevisions(),
			Needs: probe.Needs{SlowTool: true, Witness: "whether a cancelled handler stops",
				ElsewhereOnHTTP2026: "over 2026-07-28 Streamable HTTP the cancel is the close of the request's stream: http26/stream-close-cancels-during-progress judges whether the handler stops"},
			Sends:  "tools/call with a progress token; notifications/cancelled after its first progress",
			Expect: "the handler stops: the operation ends cancelled (control), or the observer counts the handler cancelled, not completed, within the time its remaining steps need",
			Run:    cancelHandlerStops,
		},
		// CAN-11 MUST: "Both parties MUST handle these race conditions gracefully:"
		// CAN-15 SHOULD: "The request SHOULD still be in-flight, but due to communication latency,
		//   it is always possible that this notification MAY arrive after the request has already
		//   finished."
		// RPC-15 MUST NOT: "The receiver MUST NOT send a response."
		// RPC-8 MUST: "Result responses MUST include the same ID as the request they correspond
		//   to."
		// CAN-9 MAY (2025-11-25 only): "Receivers MAY ignore cancellation notifications if: ▸ The
		//   referenced request is unknown ▸ Processing has already completed ▸ The request cannot be
		//   cancelled"
		// CAN-8 SHOULD (2025-11-25 only): "Receivers of cancellation notifications SHOULD: ▸ Stop
		//   processing the cancelled request ▸ Free associated resources ▸ Not send a response for
		//   the cancelled request"
		// PRG-12 SHOULD (2025-11-25 only): "Senders and receivers SHOULD track active progress
		//   tokens"
		// CAN-49 MAY (2026-07-28 only): "Servers MAY ignore cancellation notifications if: ▸ The
		//   referenced request is unknown ▸ Processing has already completed ▸ The request cannot be
		//   cancelled"
		// CAN-54 MUST NOT (2026-07-28 only): "Servers SHOULD stop work on a cancelled request as
		//   soon as practical and MUST NOT send any further messages for it."
		// CAN-56 MUST NOT (2026-07-28 only): "The server SHOULD stop work on the cancelled request
		//   as soon as practical and MUST NOT send any further messages for it."
		// CAN-48 SHOULD (2026-07-28 only): "Servers receiving cancellation notifications SHOULD: ▸
		//   Stop processing the cancelled request ▸ Free associated resources ▸ Not send a response
		//   for the cancelled request"
		// PRG-44 SHOULD (2026-07-28 only): "Clients and servers SHOULD track active progress
		//   tokens"
		// CAN-55 MUST (2026-07-28 only): "Closing the SSE response stream MUST be treated by the
		//   server as cancellation of that request."
		{
			ID:              "cancel/crossing-response",
			Title:           "a cancel that crosses the response is handled gracefully",
			Reqs:            []string{"CAN-11", "CAN-15", "RPC-15", "RPC-8"},
			ReqsUnder:       map[string][]string{spec.V20251125: {"CAN-9", "CAN-8", "PRG-12"}, spec.V20260728: {"CAN-49", "CAN-54", "CAN-56", "CAN-48", "PRG-44", "CAN-55"}},
			Versions:        bothRevisions(),
			Needs:           probe.Needs{SlowTool: true},
			LeavesCancelled: true,
			Sends:           "tools/call; the last step released and notifications/cancelled sent back to back",
			Expect:          "exactly one terminal outcome (response or none, recorded as info); one cleanup; the session stays usable",
			Run:             cancelCrossing,
		},
	}
}

func cancelMidWork(ctx context.Context, e *probe.Env, judgeProgress bool) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.Cancel(ctx, op, "mcpflight: cancel mid-work"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-9); nothing to judge")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	judge := e.ResponseAfterCancel
	if judgeProgress {
		judge = e.ProgressAfterCancel
	}
	e.DecidedBy(func() bool { return judge(op) != nil })
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if o := judge(op); o != nil {
		return *o
	}
	if judgeProgress {
		if o := e.CrossedOnly(op); o != nil {
			return *o
		}
	}
	if h := e.Healthy(ctx, "a cancel"); h != nil {
		return *h
	}
	if judgeProgress {
		return verdict.Passf("no progress for token %s after the cancel at seq %d", op.Call.Token, op.Call.CancelSeq)
	}
	return verdict.Passf("no response for request %s after the cancel at seq %d", op.Call.ID, op.Call.CancelSeq)
}

func cancelBeforeFirstProgress(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if e.Control != nil {
		if _, err := op.Checkpoint(ctx, "start"); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	if err := e.Cancel(ctx, op, "mcpflight: cancel before progress"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-9)")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if ev, ok := e.FrameAfter(op.Call.SentSeq, probe.ProgressFor(op.Call.Token)); ok && ev.Seq < op.Call.CancelSeq {
		return verdict.Unexercised("progress arrived (seq %d) before the cancel could be sent; the target is too fast to test this without checkpoints", ev.Seq)
	}
	// A response after the cancel decides AfterCancel (it is judged
	// first, and shows the cancel ignored outright); progress alone does
	// not, since a response may still follow it.
	e.DecidedBy(func() bool { return e.ResponseAfterCancel(op) != nil })
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if o := e.AfterCancel(op); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel before the first progress"); h != nil {
		return *h
	}
	return verdict.Passf("no progress and no response after the cancel at seq %d", op.Call.CancelSeq)
}

func cancelAfterCompletion(ctx context.Context, e *probe.Env) verdict.Outcome {
	if !e.HasSlowTool() {
		return cancelAfterCompletionWithoutWork(ctx, e)
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, Free: true})
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
	seq, err := e.CancelRaw(ctx, map[string]any{"requestId": op.Call.ID, "reason": "mcpflight: cancel after completion"})
	if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(seq - 1); o != nil {
		return *o
	}
	if o := e.CleanupOnce(ctx, op, "completed"); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel for a completed request"); h != nil {
		return *h
	}
	return verdict.Passf("the result stood; the late cancel at seq %d was ignored", seq)
}

// cancelAfterCompletionWithoutWork is cancel/after-completion on a
// target whose profile names no slow tool: the completed request is a
// tools/list (a cancel may name any request, CAN-1), whose answer, even an
// error, completes it.
func cancelAfterCompletionWithoutWork(ctx context.Context, e *probe.Env) verdict.Outcome {
	call, err := e.S.Start(ctx, mcp.MethodToolsList, map[string]any{})
	if err != nil {
		return verdict.Errorf("sending tools/list: %v", err)
	}
	if _, err := call.Await(ctx); err != nil {
		if _, isRPC := probe.RPCCode(err); !isRPC {
			return verdict.Errorf("awaiting tools/list: %v", err)
		}
	}
	seq, err := e.CancelRaw(ctx, map[string]any{"requestId": call.ID, "reason": "mcpflight: cancel after completion"})
	if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(seq - 1); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel for a completed request"); h != nil {
		return *h
	}
	return verdict.Passf("the late cancel at seq %d of the completed tools/list %s was ignored (the profile names no slow tool)", seq, call.ID)
}

// bogusCancel sends cancels that name no running request while one runs,
// and expects them all to be ignored. Without a slow tool no request
// runs: the cancels must be ignored all the same, and the session go on.
func bogusCancel(ctx context.Context, e *probe.Env, what string, params []any) verdict.Outcome {
	if !e.HasSlowTool() {
		return bogusCancelWithoutWork(ctx, e, what, params)
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	first := e.Log.Len() + 1
	for _, p := range params {
		if _, err := e.CancelRaw(ctx, p); err != nil {
			return e.GoneOrError(ctx, err, verdict.Req("CAN-14"), what, first)
		}
	}
	if o := e.CompleteAfterNoise(ctx, op, what, first); o != nil {
		return *o
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(first - 1); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, what); h != nil {
		return *h
	}
	return verdict.Passf("%s ignored: the running request completed and nothing answered the notifications", what)
}

// bogusCancelWithoutWork is bogusCancel with no request running: the
// cancels name nothing, are answered by nothing, and the session goes on.
func bogusCancelWithoutWork(ctx context.Context, e *probe.Env, what string, params []any) verdict.Outcome {
	first := e.Log.Len() + 1
	for _, p := range params {
		if _, err := e.CancelRaw(ctx, p); err != nil {
			return e.GoneOrError(ctx, err, verdict.Req("CAN-14"), what, first)
		}
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(first - 1); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, what); h != nil {
		return *h
	}
	return verdict.Passf("%s ignored: nothing answered the notifications and the session went on (no request was running: the profile names no slow tool)", what)
}

func cancelDuplicate(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.Cancel(ctx, op, "mcpflight: first cancel"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-9)")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	second, err := e.CancelRaw(ctx, map[string]any{"requestId": op.Call.ID, "reason": "mcpflight: second cancel"})
	if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	e.DecidedBy(func() bool { return e.ResponseAfterCancel(op) != nil })
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AfterCancel(op); o != nil {
		return *o
	}
	if o := e.AnsweredNotification(op.Call.CancelSeq - 1); o != nil {
		return *o
	}
	if o := e.CleanupOnce(ctx, op, "cancelled"); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a duplicate cancel"); h != nil {
		return *h
	}
	return verdict.Passf("both cancels (seq %d, %d) handled idempotently", op.Call.CancelSeq, second)
}

func cancelExtraFields(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	seq, err := e.CancelRaw(ctx, map[string]any{
		"requestId":      op.Call.ID,
		"reason":         "mcpflight: \x1b[31mextra fields\x1b[0m",
		"x-mcpflight":    map[string]any{"nested": []any{1, "two", nil}},
		mcp.MetaKey:      map[string]any{"io.mcpflight/probe": true},
		"requestIdAlias": 123456,
	})
	if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	// Release everything: an ignored cancel lets the request complete, an
	// accepted one ends it silently.
	if err := op.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	// On a controlled target the end checkpoint says which way the cancel
	// went; elsewhere the operation's remaining work and a window decide:
	// a response within them is an ignored cancel.
	wait := op.ResultBudget()
	if e.Control != nil {
		r, err := op.Settle(ctx)
		switch {
		case errors.Is(err, probe.ErrNotSettled):
			// The cancel was accepted (nothing holds the operation back
			// otherwise), and the operation never ended.
			return e.NotSettled(op)
		case err != nil:
			return e.GoneOrError(ctx, err, verdict.Req("CAN-11"), "a cancel with extra members", seq)
		case r.Outcome == mcp.OutcomeCancelled:
			wait = 0
		default:
			wait = e.Patience()
		}
	}
	branch := ""
	var resp *jsonrpc.Message
	err = context.DeadlineExceeded
	if wait > 0 {
		resp, err = op.AwaitWhileProgressing(ctx, wait)
	} else if r, _ := op.Call.Response(); r != nil {
		resp, err = r, nil
	}
	switch {
	case errors.Is(err, peer.ErrConnectionClosed):
		return e.Breaks("CAN-11", []string{"the target handles a cancel with extra members and stays connected"},
			"the target closed its output", seq)
	case err != nil:
		branch = "accepted as a cancel: no response followed"
	case resp.Error != nil:
		branch = "ignored; the request then ended with an error"
	default:
		branch = "ignored; the request completed"
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(seq - 1); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel with extra members"); h != nil {
		return *h
	}
	return verdict.Infof("cancel with extra members %s", branch)
}

func cancelByID(ctx context.Context, e *probe.Env, id jsonrpc.ID) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true, ID: id})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); errors.Is(err, probe.ErrNotReached) {
		if o := ordinaryIDReachesStep(ctx, e); o != nil {
			return *o
		}
		return e.Breaks("RPC-4", []string{fmt.Sprintf("request %s is served like any other request", id)},
			fmt.Sprintf("the operation started by request %s never reached its first step", id), op.Call.SentSeq)
	} else if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := e.Cancel(ctx, op, "mcpflight: cancel id "+id.String()); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-9)")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	e.DecidedBy(func() bool { return e.ResponseAfterCancel(op) != nil })
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if o := e.AfterCancel(op); o != nil {
		return *o
	}
	if o := e.CleanupOnce(ctx, op, "cancelled"); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel of id "+id.String()); h != nil {
		return *h
	}
	return verdict.Passf("request %s cancelled cleanly", id)
}

// ordinaryIDReachesStep starts a slow call with an ordinary ID and brings
// it to its first step, then lets it run to its end. When it does not get
// there either, the slow tool does not work at all (a broken exchange, a
// silent stream), nothing is particular to the ID under test, and the
// returned outcome is an error; nil when it gets there.
func ordinaryIDReachesStep(ctx context.Context, e *probe.Env) *verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "ordinary", Progress: true})
	if err != nil {
		o := verdict.Errorf("a call with an ordinary id, for comparison: %v", err)
		return &o
	}
	defer func() { _ = op.ReleaseAll(ctx) }()
	if err := op.AtStep(ctx, 1); err != nil {
		o := verdict.Errorf("a call with an ordinary id did not reach its first step either, so nothing is particular to the id under test: %v", err)
		return &o
	}
	return nil
}

func cancelStringVsInteger(ctx context.Context, e *probe.Env) verdict.Outcome {
	strOp, err := e.StartSlow(ctx, probe.SlowSpec{Key: "str", Progress: true, ID: jsonrpc.StringID("5")})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	intOp, err := e.StartSlow(ctx, probe.SlowSpec{Key: "int", Progress: true, ID: jsonrpc.IntID(5)})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := strOp.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.Cancel(ctx, strOp, `mcpflight: cancel "5" only`); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised(`request "5" completed before the cancel could be sent`)
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if err := intOp.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, e.SlowBudget())
	resp, err := intOp.Call.Await(wctx)
	cancel()
	if err != nil {
		if ev, ok := e.FrameAfter(intOp.Call.SentSeq, probe.AnyResponse); ok {
			return e.Breaks("RPC-8", []string{"a response whose id is the integer 5"},
				"no response with integer id 5; instead "+probe.Describe(ev), ev.Seq)
		}
		return e.Breaks("RPC-8", []string{"a response whose id is the integer 5"},
			"no response for integer id 5: "+err.Error(), 0)
	}
	_, respSeq := intOp.Call.Response()
	if resp.Error != nil {
		return e.Breaks("RPC-8", []string{`request 5 completes; cancelling "5" does not touch it`},
			"request 5 failed: "+probe.Describe(e.EventAt(respSeq)), respSeq)
	}
	e.DecidedBy(func() bool { return e.ResponseAfterCancel(strOp) != nil })
	if o := e.SettleAfterCancel(ctx, strOp); o != nil {
		return *o
	}
	if o := e.AfterCancel(strOp); o != nil {
		return *o
	}
	if o := e.CleanupOnce(ctx, strOp, "cancelled"); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, `cancelling "5" beside 5`); h != nil {
		return *h
	}
	return verdict.Passf(`request "5" cancelled; request 5 completed at seq %d`, respSeq)
}

func cancelInterleaved(ctx context.Context, e *probe.Env) verdict.Outcome {
	a, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	b, err := e.StartSlow(ctx, probe.SlowSpec{Key: "b", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := a.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.Cancel(ctx, a, "mcpflight: cancel one of two"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the first request completed before the cancel could be sent")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if err := b.ReleaseAll(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, e.SlowBudget())
	resp, err := b.Call.Await(wctx)
	cancel()
	if err != nil || resp.Error != nil {
		return e.Broke(e.StopWorkRule(), []string{"the request that was not cancelled completes"},
			fmt.Sprintf("request %s did not complete: %v", b.Call.ID, errOr(err, resp)), 0)
	}
	e.DecidedBy(func() bool { return e.ResponseAfterCancel(a) != nil })
	if o := e.SettleAfterCancel(ctx, a); o != nil {
		return *o
	}
	if o := e.AfterCancel(a); o != nil {
		return *o
	}
	if o := e.JudgeProgress(b.Call); o != nil {
		return *o
	}
	if e.Control != nil && b.Call.ProgressCount() != b.Steps {
		return e.Breaks("PRG-7", []string{fmt.Sprintf("%d progress notifications for the other request", b.Steps)},
			fmt.Sprintf("%d arrived", b.Call.ProgressCount()), 0)
	}
	if h := e.Healthy(ctx, "cancelling one of two requests"); h != nil {
		return *h
	}
	return verdict.Passf("request %s cancelled; request %s completed with %d progress notifications", a.Call.ID, b.Call.ID, b.Call.ProgressCount())
}

func errOr(err error, resp *jsonrpc.Message) string {
	if err != nil {
		return err.Error()
	}
	if resp != nil && resp.Error != nil {
		return resp.Error.Message
	}
	return "no error"
}

func cancelCleanupOnce(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.S.Cancel(ctx, op.Call, "mcpflight: cleanup check"); err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	if o := e.SettleAfterCancel(ctx, op); o != nil {
		return *o
	}
	if o := e.CleanupOnce(ctx, op, "cancelled"); o != nil {
		return *o
	}
	return verdict.Passf("operation cancelled with exactly one release; nothing left active")
}

// cancelHandlerStops judges the "stop processing" of a cancel: the wire
// shows what the server sends after it, not whether its handler goes on,
// so the evidence is the operation's state (control) or the observer's
// counts. Over 2026-07-28 Streamable HTTP the cancel is the close of the
// request's stream, which http26/stream-close-cancels-during-progress
// judges the same way.
func cancelHandlerStops(ctx context.Context, e *probe.Env) verdict.Outcome {
	// Needs.Witness and Needs.ElsewhereOnHTTP2026 skipped the runs
	// that cannot judge this: the case has the extension or an observer.
	observed := e.Control == nil
	var before profile.Observation
	if observed {
		var err error
		if before, err = e.ReadObserver(ctx); err != nil {
			return verdict.Errorf("the observer read before the call failed: %s", chrono.Sanitize(err.Error(), false))
		}
	}
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	if err := op.AtStep(ctx, 1); err != nil {
		return e.StepFailed(err)
	}
	if err := e.Cancel(ctx, op, "mcpflight: stop the handler"); errors.Is(err, peer.ErrNotPending) {
		return verdict.Unexercised("the request completed before the cancel could be sent (CAN-9); nothing to judge")
	} else if err != nil {
		return verdict.Errorf("sending cancel: %v", err)
	}
	cseq := op.Call.CancelSeq
	stops := []string{"the handler stops after the cancel"}
	rule := verdict.Req("CAN-8").Under(spec.V20260728, "CAN-48")
	if !observed {
		if _, err := op.Settle(ctx); errors.Is(err, probe.ErrNotSettled) {
			return e.Broke(rule, stops, fmt.Sprintf("operation %q still had not ended %v after the cancel", op.Key, e.Patience()), cseq)
		} else if err != nil {
			return verdict.Errorf("settling after cancel: %v", err)
		}
		st, _, err := op.OperationState(ctx)
		if err != nil {
			return verdict.Errorf("%v", err)
		}
		if st.State != mcp.OutcomeCancelled {
			return e.Broke(rule, stops, fmt.Sprintf("the server reports operation %q %s after the cancel", op.Key, st.State), cseq)
		}
		return verdict.Passf("the server reports operation %q cancelled and ended after the cancel at seq %d", op.Key, cseq)
	}
	end, err := e.ObserveHandlerEnd(ctx, op, before, "after the cancel")
	if err != nil {
		return verdict.Errorf("the observer read after the cancel failed: %s", chrono.Sanitize(err.Error(), false))
	}
	switch {
	case end.Started < 1:
		return verdict.Errorf("the observer never saw the call start (%s): its profile entry names the wrong tool or counts other handlers", end.Seen)
	case end.Completed >= 1:
		if _, seq := op.Call.Response(); op.CrossedCancel(seq) {
			// The response came before the barrier's answer: the handler
			// may have ended before the target read the cancel (a loaded
			// machine, or a target whose steps outrun its input).
			return verdict.Unexercised("the handler completed, and its response (seq %d) came between the cancel (seq %d) and the sign that the target had read it: the handler ended before the target read the cancel, or ran on after it, which neither the wire nor the observer can tell apart (%s)",
				seq, cseq, end.Seen)
		}
		return e.Broke(rule, stops, "the handler ran to completion after the cancel ("+end.Seen+")", cseq)
	case end.Cancelled < 1:
		return e.Broke(rule, stops, "the handler was still running after the time its remaining steps need ("+end.Seen+")", cseq)
	}
	return verdict.Passf("the observer counts the handler cancelled after the cancel at seq %d (%s)", cseq, end.Seen)
}

func cancelCrossing(ctx context.Context, e *probe.Env) verdict.Outcome {
	op, err := e.StartSlow(ctx, probe.SlowSpec{Key: "a", Progress: true})
	if err != nil {
		return verdict.Errorf("%v", err)
	}
	last := max(op.Steps, 1)
	// A call answered before its last progress still has its cancel sent
	// (late, below): that is the crossing this case is about.
	var ended *probe.CallEndedError
	if err := op.AtStep(ctx, last); err != nil && !(errors.As(err, &ended) && ended.Completed()) {
		return e.StepFailed(err)
	}
	if e.Control != nil {
		if err := op.Release(ctx, fmt.Sprintf("step/%d", last)); err != nil {
			return verdict.Errorf("%v", err)
		}
	}
	cancelErr := e.S.Cancel(ctx, op.Call, "mcpflight: crossing cancel")
	if cancelErr != nil && !errors.Is(cancelErr, peer.ErrNotPending) {
		return verdict.Errorf("sending cancel: %v", cancelErr)
	}
	cancelSeq := op.Call.CancelSeq
	if cancelErr != nil {
		// The response won before the session could send the cancel; the
		// cancel still crosses it on the wire, as a late one (CAN-9).
		seq, err := e.CancelRaw(ctx, map[string]any{"requestId": op.Call.ID, "reason": "mcpflight: crossing cancel"})
		if err != nil {
			return verdict.Errorf("sending cancel: %v", err)
		}
		cancelSeq = seq
	}
	if _, err := op.Settle(ctx); err != nil && !errors.Is(err, probe.ErrNotSettled) {
		return verdict.Errorf("settling: %v", err)
	}
	if err := e.Quiesce(ctx); err != nil {
		return verdict.Errorf("%v", err)
	}
	if o := e.AnsweredNotification(cancelSeq - 1); o != nil {
		return *o
	}
	resp, _ := op.Call.Response()
	branch := "the cancel won: no response"
	want := "cancelled"
	if resp != nil {
		branch, want = "the response won the race", "completed"
	}
	if resp == nil && e.Is2026() && e.SeparateStreams() && e.Control != nil {
		// Over 2026-07-28 Streamable HTTP the cancel closes the stream: a
		// response written as it closed is never read, and only the
		// server's counters say which way the race went.
		if st, _, err := op.OperationState(ctx); err == nil && st.State == mcp.OutcomeCompleted {
			branch, want = "the response was written as the client closed the stream, and never read", "completed"
		}
	}
	if o := e.CleanupOnce(ctx, op, want); o != nil {
		return *o
	}
	if h := e.Healthy(ctx, "a cancel crossing the response"); h != nil {
		return *h
	}
	return verdict.Infof("%s; one terminal outcome, session usable", branch)
}
