package mcp

import "github.com/mcpflight/mcpflight/jsonrpc"

// The io.mcpflight/control extension (docs/control-extension.md): a
// server that advertises it lets a client await and release named
// checkpoints and read cleanup counters.
const (
	// ControlCapability is the experimental capability a server
	// advertises.
	ControlCapability = "io.mcpflight/control"
	// MethodControlAwait blocks until a checkpoint has been reached.
	MethodControlAwait = "mcpflight/await"
	// MethodControlRelease opens a gate, now or in advance.
	MethodControlRelease = "mcpflight/release"
	// MethodControlCounters returns the server's accounting.
	MethodControlCounters = "mcpflight/counters"
	// MethodControlTeardown ends subscriptions/listen streams from the
	// server's side, as a shutdown would (2026-07-28 only).
	MethodControlTeardown = "mcpflight/teardown"
	// MetaControlScope is the _meta key of a 2026-07-28 request that names
	// its control scope: requests with the same scope share checkpoints,
	// operations, counters and tasks (there is no session to do it).
	MetaControlScope = "io.mcpflight/scope"
)

// Outcomes a KEY/end checkpoint reports.
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
	// OutcomeExpired ends a task deleted at its ttl.
	OutcomeExpired = "expired"
)

// ControlCheckpoint is the params of mcpflight/await and
// mcpflight/release.
type ControlCheckpoint struct {
	Checkpoint string `json:"checkpoint"`
}

// ControlReached is the result of mcpflight/await.
type ControlReached struct {
	// Checkpoint is the name awaited.
	Checkpoint string `json:"checkpoint"`
	// RequestID is the ID of the request that reached it.
	RequestID jsonrpc.ID `json:"requestId"`
	// Outcome is OutcomeCompleted, OutcomeCancelled or OutcomeExpired for
	// KEY/end, and empty for every other checkpoint.
	Outcome string `json:"outcome"`
}

// ControlOperation is one operation's entry in ControlCounters.Operations.
type ControlOperation struct {
	// RequestID is the ID of the tools/call that started the operation.
	RequestID jsonrpc.ID `json:"requestId"`
	// State is "running", "completed" or "cancelled" (a cancel was
	// accepted, whether or not the operation has ended since).
	State string `json:"state"`
	// Releases counts releases of the operation's resource; exactly 1
	// once it has ended.
	Releases int `json:"releases"`
	// ProgressSent counts progress notifications sent for it.
	ProgressSent int `json:"progressSent"`
}

// ControlTask is one durable task's worker in ControlCounters.Tasks: its
// counter advances once per unit of work, so a checker can tell whether
// the work really stopped after tasks/cancel.
type ControlTask struct {
	// TaskID is the receiver-generated task ID.
	TaskID string `json:"taskId"`
	// RequestID is the ID of the tools/call that created the task.
	RequestID jsonrpc.ID `json:"requestId"`
	// Status is the task's status as tasks/get would report it.
	Status string `json:"status"`
	// Ticks is the worker's counter: how many units of work it has done.
	Ticks int `json:"ticks"`
	// WorkerRunning is true until the worker has stopped for good.
	WorkerRunning bool `json:"workerRunning"`
	// ProgressSent counts progress notifications sent for the task.
	ProgressSent int `json:"progressSent"`
	// CancelRequests counts tasks/cancel requests that named the task.
	CancelRequests int `json:"cancelRequests"`
	// Deleted is true once the task has expired (ttl) and been purged.
	Deleted bool `json:"deleted"`
}

// ControlCounters is the result of mcpflight/counters.
type ControlCounters struct {
	// OperationsStarted counts operations registered in the session.
	OperationsStarted int `json:"operationsStarted"`
	// OperationsActive counts operations holding their resource.
	OperationsActive int `json:"operationsActive"`
	// OperationsCompleted counts operations that sent their result.
	OperationsCompleted int `json:"operationsCompleted"`
	// OperationsCancelled counts cancelled operations that have ended.
	OperationsCancelled int `json:"operationsCancelled"`
	// ResourcesReleased counts resource releases, one per ended
	// operation on a conforming server.
	ResourcesReleased int `json:"resourcesReleased"`
	// ProgressTokensLive counts progress tokens still bound to a request.
	ProgressTokensLive int `json:"progressTokensLive"`
	// EffectsApplied counts side effects of the effect tool.
	EffectsApplied int `json:"effectsApplied"`
	// Operations is keyed by operation key.
	Operations map[string]ControlOperation `json:"operations"`
	// Tasks is keyed by the task's operation key.
	Tasks map[string]ControlTask `json:"tasks,omitempty"`
	// SubscriptionsOpen counts open subscriptions/listen streams
	// (2026-07-28).
	SubscriptionsOpen int `json:"subscriptionsOpen,omitempty"`
}
