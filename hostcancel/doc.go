// Package hostcancel is a two-phase cancellation controller for hosts that
// run MCP tools as durable tasks, under MCP 2025-11-25 tasks and under the
// io.modelcontextprotocol/tasks extension of 2026-07-28, through one API.
//
// Stopping to wait is a local event; stopping the server's work is a
// separate claim that needs evidence (seed 002). notifications/cancelled
// names a request, tasks/cancel names a task (CAN-4), and a host that only
// aborts its own polling leaves the task working. The controller keeps the
// two apart:
//
//   - Phase one (Stop, or Wait whose context ends) stops waiting locally
//     and keeps what is needed later: the task ID, every request ID, the
//     server's identity and the last known status. An abort that comes
//     before the CreateTaskResult keeps the request in flight and learns
//     the task ID if it comes: notifications/cancelled is never sent
//     for a task request (CAN-4, CAN-7).
//   - Phase two (Settle) follows the policy. Detach sends nothing. Cancel
//     sends exactly one tasks/cancel, however many local signals race,
//     then verifies with tasks/get (and status notifications, and the
//     worker acknowledgement where the host has one) for a bounded grace
//     period, and reconciles a race with completion by reading the state
//     and, where there is one, the result.
//
// # Revisions
//
// Config.Revision picks the wire (it defaults to the session's negotiated
// version). Everything that differs sits behind one internal seam, the
// wire: how a task is asked for and recognised, how tasks/get, tasks/cancel
// and the result read, and where status notifications come from. Under
// 2025-11-25 a tasks/cancel answers with the cancelled Task (TSK-64) or
// -32602 for a terminal task (TSK-63, reconciled, A-15); the result comes
// from tasks/result; notifications/tasks/status only prompts a confirming
// tasks/get (TSK-22). Under the extension tasks/cancel is an empty ack,
// also for a terminal task (TSX-44, A-17); the status may stay working and
// may end other than cancelled, which the verification allows; there is no
// tasks/result (TSX-65): the result or error is inlined in tasks/get
// (TSX-27, TSX-29); notifications/tasks arrive on a subscriptions/listen
// stream the controller opens per task (TSX-48) and are the state itself
// (TSX-50); every request carries the per-request _meta that declares the
// extension (RPC-51, TSX-2); ttlMs and pollIntervalMs are honoured
// (TSX-11, TSX-19). Over Streamable HTTP the extension needs Mcp-Name set
// to params.taskId (TSX-52): RoutingHeaders adds it (and Mcp-Method) to the
// requests of an http.Client.
//
// # Classifications
//
// Every operation ends with one Classification: cancelled and verified,
// completed before the cancel, failed, still working past the grace period,
// cancelled but the worker still running, effect committed, or outcome
// unknown. Unknown is first-class: the Result says why (UnknownReason) and
// carries what is known (task ID, request IDs, server, last status).
//
// # Side effects
//
// Tools listed in Config.Effects are consequential. Each operation on one
// carries an idempotency key (Call.Key, in the arguments or _meta as
// configured), and the controller refuses a replacement operation with the
// same key until the previous one is reconciled: completed, failed,
// verified cancelled, known to have committed its effect, or abandoned by
// the caller (Controller.Abandon). An execution receipt in the result, or
// the host's system-of-record check, decides whether the effect happened;
// a cancelled status never hides a committed effect (EffectCommitted).
//
// # Alerts and the circuit breaker
//
// The alerts of seed 002 (Alert) each fire once per operation, count, and
// reach Config.OnAlert. Those in the Breaker's set open the circuit of the
// operation's (server, tool); Start then refuses new work there with
// ErrCircuitOpen until the host calls Breaker.Reset after re-verifying the
// server (see Breaker).
//
// # Telemetry
//
// Structured Events (Config.OnEvent) and Counters are always kept, and each
// Operation keeps its decision trail (Trail, FormatTrail). With a
// TracerProvider or MeterProvider configured, the same record goes to
// OpenTelemetry through its API only: one span per operation, a child span
// for the tasks/cancel, span events for every request ID, status, abort and
// acknowledgement, and the counters request_cancel_signal,
// task_cancel_requested and task_cancel_verified kept apart. With neither
// configured no OpenTelemetry call is made (BenchmarkOperation measures
// both).
package hostcancel
