package wireschema

import "github.com/mcpflight/mcpflight/mcp"

// Which definition each message from a server must match, per revision.
// The tables hold only what a server sends: its requests and
// notifications (the ServerRequest and ServerNotification unions of the
// schema), and the result of each request a client sends (ClientRequest).
// A method a table does not name (a vendor method such as the control
// extension's mcpflight/*, or a client method sent by the server) is
// checked against the generic JSON-RPC envelope only.

// The generic JSON-RPC envelopes, which both core schemas define.
const (
	envRequest      = "JSONRPCRequest"
	envNotification = "JSONRPCNotification"
	envResult       = "JSONRPCResultResponse"
	envError        = "JSONRPCErrorResponse"
)

// revisionMap is one revision's tables.
type revisionMap struct {
	// requests and notifications a server sends, by method.
	requests, notifications map[string]Def
	// results of the requests a client sends, by the request's method.
	results map[string]Def
	// taskResult is the result of a task-augmented request when it
	// created a task (2025-11-25 CreateTaskResult: a "task" member).
	taskResult Def
	// inputRequired is the result that asks for more input (2026-07-28
	// resultType "input_required"), for the methods in inputMethods.
	inputRequired Def
	inputMethods  map[string]bool
	// resultTypeTask is the tasks extension's CreateTaskResult (2026-07-28
	// resultType "task").
	resultTypeTask Def
}

func core(name string) Def { return Def{Name: name} }
func ext(name string) Def  { return Def{Name: name, Ext: true} }

var maps = map[string]revisionMap{
	Rev20251125: {
		requests: map[string]Def{
			mcp.MethodPing:                  core("PingRequest"),
			mcp.MethodTasksGet:              core("GetTaskRequest"),
			mcp.MethodTasksResult:           core("GetTaskPayloadRequest"),
			mcp.MethodTasksCancel:           core("CancelTaskRequest"),
			mcp.MethodTasksList:             core("ListTasksRequest"),
			mcp.MethodSamplingCreateMessage: core("CreateMessageRequest"),
			mcp.MethodRootsList:             core("ListRootsRequest"),
			mcp.MethodElicitationCreate:     core("ElicitRequest"),
		},
		notifications: map[string]Def{
			mcp.NotificationCancelled:            core("CancelledNotification"),
			mcp.NotificationProgress:             core("ProgressNotification"),
			mcp.NotificationResourcesListChanged: core("ResourceListChangedNotification"),
			mcp.NotificationResourcesUpdated:     core("ResourceUpdatedNotification"),
			mcp.NotificationPromptsListChanged:   core("PromptListChangedNotification"),
			mcp.NotificationToolsListChanged:     core("ToolListChangedNotification"),
			mcp.NotificationTaskStatus:           core("TaskStatusNotification"),
			mcp.NotificationMessage:              core("LoggingMessageNotification"),
			mcp.NotificationElicitationComplete:  core("ElicitationCompleteNotification"),
		},
		results: map[string]Def{
			mcp.MethodInitialize:             core("InitializeResult"),
			mcp.MethodPing:                   core("EmptyResult"),
			mcp.MethodResourcesList:          core("ListResourcesResult"),
			mcp.MethodResourcesTemplatesList: core("ListResourceTemplatesResult"),
			mcp.MethodResourcesRead:          core("ReadResourceResult"),
			mcp.MethodResourcesSubscribe:     core("EmptyResult"),
			mcp.MethodResourcesUnsubscribe:   core("EmptyResult"),
			mcp.MethodPromptsList:            core("ListPromptsResult"),
			mcp.MethodPromptsGet:             core("GetPromptResult"),
			mcp.MethodToolsList:              core("ListToolsResult"),
			mcp.MethodToolsCall:              core("CallToolResult"),
			mcp.MethodLoggingSetLevel:        core("EmptyResult"),
			mcp.MethodCompletionComplete:     core("CompleteResult"),
			mcp.MethodTasksGet:               core("GetTaskResult"),
			mcp.MethodTasksList:              core("ListTasksResult"),
			mcp.MethodTasksCancel:            core("CancelTaskResult"),
			// tasks/result carries the result of the task's request; see
			// Tracker, which knows it. Without it, the generic payload.
			mcp.MethodTasksResult: core("GetTaskPayloadResult"),
		},
		taskResult: core("CreateTaskResult"),
	},
	Rev20260728: {
		// Servers MUST NOT initiate requests (RPC-61): none is known.
		requests: map[string]Def{},
		notifications: map[string]Def{
			mcp.NotificationCancelled:                 core("CancelledNotification"),
			mcp.NotificationProgress:                  core("ProgressNotification"),
			mcp.NotificationResourcesListChanged:      core("ResourceListChangedNotification"),
			mcp.NotificationSubscriptionsAcknowledged: core("SubscriptionsAcknowledgedNotification"),
			mcp.NotificationResourcesUpdated:          core("ResourceUpdatedNotification"),
			mcp.NotificationPromptsListChanged:        core("PromptListChangedNotification"),
			mcp.NotificationToolsListChanged:          core("ToolListChangedNotification"),
			mcp.NotificationMessage:                   core("LoggingMessageNotification"),
			mcp.NotificationTasks:                     ext("TaskStatusNotification"),
		},
		results: map[string]Def{
			mcp.MethodServerDiscover:         core("DiscoverResult"),
			mcp.MethodResourcesList:          core("ListResourcesResult"),
			mcp.MethodResourcesTemplatesList: core("ListResourceTemplatesResult"),
			mcp.MethodResourcesRead:          core("ReadResourceResult"),
			mcp.MethodSubscriptionsListen:    core("SubscriptionsListenResult"),
			mcp.MethodPromptsList:            core("ListPromptsResult"),
			mcp.MethodPromptsGet:             core("GetPromptResult"),
			mcp.MethodToolsList:              core("ListToolsResult"),
			mcp.MethodToolsCall:              core("CallToolResult"),
			mcp.MethodCompletionComplete:     core("CompleteResult"),
			mcp.MethodTasksGet:               ext("GetTaskResult"),
			mcp.MethodTasksUpdate:            ext("UpdateTaskResult"),
			mcp.MethodTasksCancel:            ext("CancelTaskResult"),
		},
		inputRequired: core("InputRequiredResult"),
		// The *ResultResponse definitions whose result may be an
		// InputRequiredResult.
		inputMethods:   map[string]bool{mcp.MethodToolsCall: true, mcp.MethodPromptsGet: true, mcp.MethodResourcesRead: true},
		resultTypeTask: ext("CreateTaskResult"),
	},
}

// Request is what Resolve knows of the request a response answers.
type Request struct {
	// Method is the request's method.
	Method string
	// TaskAugmented is set when its params carried a "task" member
	// (2025-11-25 task augmentation).
	TaskAugmented bool
	// TaskMethod is, for tasks/result, the method of the request that
	// created the task, when known.
	TaskMethod string
	// MayAnswer2025 is set under 2026-07-28 for a request sent without the
	// envelope's protocol version: its answer may be a legacy one.
	MayAnswer2025 bool
}

// RequestDef is the definition a request from the server with this
// method must match, and whether the method is known; unknown methods get
// the generic envelope.
func (s *Schema) RequestDef(method string) (Def, bool) {
	if d, ok := maps[s.Revision].requests[method]; ok {
		return d, true
	}
	return core(envRequest), false
}

// NotificationDef is the definition a notification from the server must
// match, and whether its method is known.
func (s *Schema) NotificationDef(method string) (Def, bool) {
	if d, ok := maps[s.Revision].notifications[method]; ok {
		return d, true
	}
	return core(envNotification), false
}

// ResultDef is the definition the result of req must match, given the
// result's members (to tell a CreateTaskResult or an InputRequiredResult
// from the ordinary result), and whether it is known. When it is not, the
// result is checked only as the generic envelope's "result".
func (s *Schema) ResultDef(req Request, result map[string]any) (Def, bool) {
	m := maps[s.Revision]
	method := req.Method
	if method == mcp.MethodTasksResult && req.TaskMethod != "" {
		method = req.TaskMethod
	}
	if rt, _ := result["resultType"].(string); s.Revision == Rev20260728 {
		switch {
		case rt == "task" && m.resultTypeTask.Name != "":
			return m.resultTypeTask, true
		case rt == "input_required" && m.inputMethods[method]:
			return m.inputRequired, true
		}
	}
	if _, created := result["task"]; req.TaskAugmented && created && m.taskResult.Name != "" {
		return m.taskResult, true
	}
	if d, ok := m.results[method]; ok {
		return d, true
	}
	return core("Result"), false
}
