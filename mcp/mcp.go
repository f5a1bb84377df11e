// Package mcp declares the Model Context Protocol's wire names once: the
// method and notification names, the _meta keys, the error codes MCP
// defines on top of JSON-RPC, the task statuses, and the test-only
// io.mcpflight/control extension's methods and messages. The checker side
// (peer, control, the catalogue) and the reference server both use it, so
// that the two sides cannot drift apart on a spelling.
//
// It is a leaf: it imports only jsonrpc, whose ID type the control
// extension's messages carry. The JSON-RPC 2.0 standard error codes
// (-32700, -32600, -32601, -32602, -32603) belong to JSON-RPC itself and
// are declared in jsonrpc (jsonrpc.CodeParseError and its siblings); the
// codes here are MCP's own and the reference server's.
package mcp

// Methods and notifications of MCP 2025-11-25 used by mcpflight.
const (
	MethodInitialize        = "initialize"
	NotificationInitialized = "notifications/initialized"
	MethodPing              = "ping"
	MethodToolsList         = "tools/list"
	MethodToolsCall         = "tools/call"
	MethodLoggingSetLevel   = "logging/setLevel"
	NotificationMessage     = "notifications/message"
	NotificationProgress    = "notifications/progress"
	NotificationCancelled   = "notifications/cancelled"

	// Tasks (2025-11-25 basic/utilities/tasks).
	MethodTasksGet         = "tasks/get"
	MethodTasksList        = "tasks/list"
	MethodTasksCancel      = "tasks/cancel"
	MethodTasksResult      = "tasks/result"
	NotificationTaskStatus = "notifications/tasks/status"
)

// Methods of MCP 2026-07-28 (the modern, per-request-metadata era).
const (
	// MethodServerDiscover replaces the initialize handshake (26/discover).
	MethodServerDiscover = "server/discover"
	// MethodSubscriptionsListen opens the subscription stream (26/subs).
	MethodSubscriptionsListen = "subscriptions/listen"
	// NotificationSubscriptionsAcknowledged is the first message of a
	// subscription (SUB-2).
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"

	// The tasks extension (io.modelcontextprotocol/tasks, ext/tasks):
	// tasks/get and tasks/cancel keep their names, tasks/update is new,
	// and the status notification is renamed.
	MethodTasksUpdate = "tasks/update"
	NotificationTasks = "notifications/tasks"
	// ExtensionTasks is the extension's identifier, a key of
	// capabilities.extensions.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
	// ResultTypeComplete, ResultTypeInputRequired and ResultTypeTask are
	// the resultType values of 2026-07-28 and the tasks extension (RPC-40,
	// TSX-8).
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required"
	ResultTypeTask          = "task"
)

// The other methods and notifications of the two schemas, which
// mcpflight does not send but the wire schema check (wireschema) maps to
// their definitions: what a server may send, and the results of the
// requests a client may send.
const (
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodPromptsList            = "prompts/list"
	MethodCompletionComplete     = "completion/complete"
	// Requests a 2025-11-25 server sends to its client.
	MethodSamplingCreateMessage = "sampling/createMessage"
	MethodRootsList             = "roots/list"
	MethodElicitationCreate     = "elicitation/create"

	NotificationResourcesListChanged = "notifications/resources/list_changed"
	NotificationResourcesUpdated     = "notifications/resources/updated"
	NotificationPromptsListChanged   = "notifications/prompts/list_changed"
	NotificationToolsListChanged     = "notifications/tools/list_changed"
	// NotificationElicitationComplete exists in 2025-11-25 only.
	NotificationElicitationComplete = "notifications/elicitation/complete"
)

// Keys of a request's or notification's _meta object.
const (
	// MetaKey is the member of params (or result) that holds the metadata.
	MetaKey = "_meta"
	// MetaProgressToken asks for progress under a token (PRG-1).
	MetaProgressToken = "progressToken"
	// MetaRelatedTask ties a message to a task (TSK-55).
	MetaRelatedTask = "io.modelcontextprotocol/related-task"

	// Per-request metadata of 2026-07-28, which replaces the handshake.
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// Error codes MCP defines in the JSON-RPC implementation-defined range.
const (
	// CodeResourceNotFound is 2025-11-25's resource-not-found error;
	// 2026-07-28 replaces it with -32602 and keeps it reserved.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired exists in 2025-11-25 only.
	CodeURLElicitationRequired = -32042

	// CodeHeaderMismatch (2026-07-28): the HTTP headers do not match the
	// body, or required headers are missing or malformed (HTTP-104).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability (2026-07-28): the request needs
	// a client capability the client did not declare.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion (2026-07-28): the request's protocol
	// version is not supported by the server.
	CodeUnsupportedProtocolVersion = -32022
)

// CodeTooManyRequests is the reference server's own code (outside the
// range JSON-RPC reserves) for a request refused because its session has
// too many requests in flight (docs/control-extension.md).
const CodeTooManyRequests = -31000

// Task statuses (TSK-29, TSK-30).
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether a task status is terminal (TSK-31).
func TaskTerminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}
