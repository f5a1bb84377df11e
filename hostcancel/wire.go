package hostcancel

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// Revision is the task protocol an operation speaks.
type Revision string

// The revisions the controller drives.
const (
	// Rev20251125 is the experimental tasks of MCP 2025-11-25
	// (basic/utilities/tasks): task-augmented tools/call, tasks/get,
	// tasks/cancel answered with the Task, tasks/result,
	// notifications/tasks/status.
	Rev20251125 Revision = "2025-11-25"
	// RevTasksExtension is the io.modelcontextprotocol/tasks extension
	// of MCP 2026-07-28: server-directed tasks (resultType "task"),
	// tasks/cancel acknowledged with an empty result, the result inlined
	// in tasks/get, notifications/tasks on a subscriptions/listen stream.
	RevTasksExtension Revision = "2026-07-28"
)

// Wire names of the tasks extension and of 2026-07-28 requests, as the
// mcp package declares them (kept here for hosts that read them from the
// controller's package).
const (
	// ExtensionTasks is the extension identifier.
	ExtensionTasks = mcp.ExtensionTasks
	// MethodListen opens a subscription stream (SUB-*).
	MethodListen = mcp.MethodSubscriptionsListen
	// NotificationTasks is the extension's status notification (TSX-48).
	NotificationTasks = mcp.NotificationTasks
	// MetaProtocolVersion, MetaClientCapabilities and MetaServerInfo are
	// the per-request and per-result _meta keys of 2026-07-28 (RPC-51).
	MetaProtocolVersion    = mcp.MetaProtocolVersion
	MetaClientCapabilities = mcp.MetaClientCapabilities
	MetaServerInfo         = mcp.MetaServerInfo
	// HeaderName is the routing header that carries params.taskId over
	// Streamable HTTP (TSX-52), HeaderMethod the method (HTTP-100).
	HeaderName   = mcp.HeaderName
	HeaderMethod = mcp.HeaderMethod
)

// ErrRevision reports a revision the controller does not drive.
var ErrRevision = errors.New("hostcancel: unsupported task revision")

// Task is a task's state as either revision reports it. The extension
// inlines a terminal task's outcome (TSX-27, TSX-29); under 2025-11-25
// Result and Error stay empty and tasks/result fetches them. TTL and
// PollInterval are milliseconds in both (ttl/pollInterval in 2025-11-25,
// ttlMs/pollIntervalMs in the extension, TSX-11, TSX-12).
type Task struct {
	peer.Task
	// Result is the inlined result of a completed task (extension).
	Result json.RawMessage
	// Error is the inlined JSON-RPC error of a failed task (extension).
	Error *jsonrpc.Error
}

// wire is the seam between the controller and a revision: everything
// that differs on the wire between 2025-11-25 and the tasks extension is
// behind it; the controller's decisions are not.
type wire interface {
	revision() Revision
	// support reports whether the server runs tools/call as a task and
	// accepts tasks/cancel.
	support(s *peer.Session) (tasks, cancel bool)
	// callParams is the tools/call params; meta is merged into _meta.
	callParams(tool string, args, meta map[string]any, ttl int64) map[string]any
	// taskParams is the params of tasks/get, tasks/cancel, tasks/result.
	taskParams(taskID string) map[string]any
	// created reads a tools/call result: a task, or (isTask false) the
	// tool's own result (TSX-3).
	created(result json.RawMessage) (t Task, isTask bool, err error)
	// task reads a tasks/get result.
	task(result json.RawMessage) (Task, error)
	// cancelled reads a successful tasks/cancel result: the Task under
	// 2025-11-25 (TSK-64), nil for the extension's empty ack (TSX-44).
	cancelled(result json.RawMessage) (*Task, error)
	// fetchesResult reports whether a terminal task's outcome needs
	// tasks/result (2025-11-25) or is inlined (extension, TSX-65).
	fetchesResult() bool
	// progressForTasks reports whether progress may follow the
	// CreateTaskResult (PRG-9; forbidden by the extension, PRG-46).
	progressForTasks() bool
	// notification decodes a status notification of this revision.
	notification(m *jsonrpc.Message) (Task, bool)
	// notificationsAreState reports whether a notification is the task's
	// state itself (extension, TSX-50) or only a hint that is confirmed
	// with tasks/get (2025-11-25, TSK-22).
	notificationsAreState() bool
	// listenParams is the subscriptions/listen params for status
	// notifications, ok false when the revision needs no subscription.
	listenParams(taskID string) (params map[string]any, ok bool)
	// server reads the server's identity from a result, if it has one.
	server(result json.RawMessage) (peer.Implementation, bool)
}

// wireFor returns the wire of rev.
func wireFor(rev Revision) (wire, error) {
	switch rev {
	case Rev20251125:
		return wire2025{}, nil
	case RevTasksExtension:
		return wireExtension{}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrRevision, rev)
}

// mergeMeta returns params with meta merged into params["_meta"].
func mergeMeta(params, meta map[string]any) map[string]any {
	if len(meta) == 0 {
		return params
	}
	m := map[string]any{}
	if old, ok := params["_meta"].(map[string]any); ok {
		for k, v := range old {
			m[k] = v
		}
	}
	for k, v := range meta {
		m[k] = v
	}
	params["_meta"] = m
	return params
}
