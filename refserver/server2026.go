package refserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// MCP 2026-07-28, the modern era (basic/index, basic/versioning): no
// handshake; every request carries its protocol version and the client's
// capabilities in _meta, and is served on its own.
//
// A request is modern when its _meta carries any per-request protocol
// field (hasEnvelope); on a server that serves only 2026-07-28, every
// request is. It is then handled by a session bound to the Server's realm
// of its control scope (realm.go), which validates the envelope (RPC-52,
// LIF-40, LOG-45), refuses what the revision removed or what the
// request's capabilities do not cover (gate2026), and decorates every
// result with resultType and serverInfo (decorate). Over stdio such a
// session shares the connection's output; over Streamable HTTP each POST
// gets one (http2026.go).

// conn2026 routes a stdio (or in-process) connection's 2026-07-28
// requests. The connection's 2025-11-25 session reads every frame; a
// modern request goes to the connection's session for its realm, created
// on first use and holding the realm until the connection ends.
type conn2026 struct {
	owner *session
	mu    sync.Mutex
	// sessions are the connection's modern sessions, by scope.
	sessions map[string]*session
}

// newSession2026 is a session of realm r that writes to out. ctx, cancel
// and wg are those of the connection, or of the realm for a POST.
func newSession2026(r *realm, srv *Server, out *output, owner *session) *session {
	ss := &session{
		realm:    r,
		output:   out,
		srv:      srv,
		level:    -1,
		known:    map[string]bool{},
		inflight: map[string]*call{},
		tokens:   r.tokens2026,
		handlers: map[string]int{},
		replies:  map[string]int{},
		is2026:   true,
	}
	if owner != nil {
		ss.ctx, ss.cancel, ss.wg = owner.ctx, owner.cancel, owner.wg
	} else {
		ss.ctx, ss.cancel, ss.wg = r.life, func() {}, &r.bgWG
	}
	return ss
}

// route handles msg, a request the connection read, when it is a
// 2026-07-28 one (or initialize on a server without the legacy era), and
// reports whether it did. It runs in the reader, like handleRequest.
func (cm *conn2026) route(msg *jsonrpc.Message) bool {
	if cm == nil || !cm.owner.srv.serves2026() {
		return false
	}
	owner := cm.owner
	if owner.srv.serves2025() && msg.Method != mcp.MethodInitialize && !mayHaveEnvelope(msg.Params) {
		return false // the common 2025-11-25 request, not parsed twice
	}
	params, perr := objectParams(msg.Params)
	if msg.Method == mcp.MethodInitialize {
		if owner.srv.serves2025() {
			return false
		}
		// A modern-only server names its versions (LIF-49).
		rerr := owner.srv.initializeRefused(params)
		owner.spawnReq(msg.ID, func() { owner.answer(msg.ID, nil, rerr) })
		return true
	}
	meta := metaObject(params)
	if owner.srv.serves2025() && (perr != nil || !hasEnvelope(meta)) {
		return false
	}
	scope, rerr := requestScope(meta)
	var m *session
	if rerr == nil {
		m, rerr = cm.session(scope)
	}
	if rerr != nil {
		owner.spawnReq(msg.ID, func() { owner.answer(msg.ID, nil, rerr) })
		return true
	}
	m.handleMu.Lock()
	defer m.handleMu.Unlock()
	if err := m.handleDecoded(msg.Raw, msg); err != nil {
		owner.logf("modern request ends with: %v", err)
	}
	return true
}

// mayHaveEnvelope reports whether raw params might hold a per-request
// field: they name io.modelcontextprotocol, or hold an escape that could
// spell it.
func mayHaveEnvelope(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte("modelcontextprotocol")) || bytes.IndexByte(raw, '\\') >= 0
}

// session returns the connection's session for scope, taking a hold on
// its realm on first use (or when the realm it had was closed).
func (cm *conn2026) session(scope string) (*session, *rpcError) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if m := cm.sessions[scope]; m != nil && !m.realm.isClosed() {
		return m, nil
	}
	r, err := cm.owner.srv.realm2026(scope)
	if err != nil {
		return nil, &rpcError{code: mcp.CodeTooManyRequests, message: "Too many requests: " + err.Error()}
	}
	if cm.sessions == nil {
		cm.sessions = map[string]*session{}
	}
	if old := cm.sessions[scope]; old != nil {
		cm.owner.srv.releaseRealm(old.realm)
	}
	m := newSession2026(r, cm.owner.srv, cm.owner.output, cm.owner)
	cm.sessions[scope] = m
	return m, nil
}

// isClosed reports whether the realm was closed (evicted, or released by
// every holder).
func (r *realm) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// inflightCall finds the connection's modern request id in flight.
func (cm *conn2026) inflightCall(id jsonrpc.ID) (*session, *call) {
	if cm == nil {
		return nil, nil
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	for _, m := range cm.sessions {
		m.mu.Lock()
		c := m.inflight[m.idKey(id)]
		m.mu.Unlock()
		if c != nil {
			return m, c
		}
	}
	return nil, nil
}

// release gives back the connection's holds on its realms; Serve calls
// it once every goroutine of the connection has ended.
func (cm *conn2026) release() {
	if cm == nil {
		return
	}
	cm.mu.Lock()
	all := cm.sessions
	cm.sessions = nil
	cm.mu.Unlock()
	for _, m := range all {
		cm.owner.srv.releaseRealm(m.realm)
	}
}

// initializeRefused is the answer of a server without the legacy era to
// initialize: an UnsupportedProtocolVersionError naming the versions it
// supports (LIF-49), which a legacy client can show its user.
func (s *Server) initializeRefused(params map[string]json.RawMessage) *rpcError {
	var requested string
	_ = json.Unmarshal(params["protocolVersion"], &requested)
	if s.has(FaultInitializeErrorWithoutVersions) {
		return &rpcError{code: codeMethodNotFound, message: "Method not found"}
	}
	rerr := s.unsupportedVersion(requested)
	rerr.message = "Unsupported protocol version: this server serves only per-request metadata (no initialize); it supports " + strconv.Quote(ProtocolVersions2026()[0])
	return rerr
}

// methods2026 are the methods a 2026-07-28 request may name: the core
// ones this server implements, the tasks extension's and the control
// extension's. ping, logging/setLevel, initialize, tasks/result,
// tasks/list and the rest are unknown (PNG-40, TSX-65).
func (ss *session) method2026(method string) bool {
	switch method {
	case mcp.MethodServerDiscover, mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodSubscriptionsListen,
		mcp.MethodControlAwait, mcp.MethodControlRelease, mcp.MethodControlCounters, mcp.MethodControlTeardown:
		return true
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return !ss.srv.opts.NoTasks
	case mcp.MethodPing, mcp.MethodLoggingSetLevel:
		return ss.has(FaultPingOn2026)
	case mcp.MethodTasksResult, mcp.MethodTasksList:
		return ss.has(FaultTasksResultOn2026) && !ss.srv.opts.NoTasks
	}
	return false
}

// gate2026 refuses a checked request before it is handled: an unknown
// method (-32601; 404 over HTTP, HTTP-81), or one that needs the tasks
// extension the request did not declare (-32021; RPC-55, TSX-5, TSX-49,
// TSX-56).
func (ss *session) gate2026(method string, params map[string]json.RawMessage, env envelope) *rpcError {
	if !ss.method2026(method) {
		return &rpcError{code: codeMethodNotFound, message: "Method not found: " + strconv.Quote(method) + " is not a 2026-07-28 method of this server",
			data: map[string]string{"method": method}}
	}
	if env.tasks || ss.srv.opts.NoTasks {
		return nil
	}
	switch method {
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		if !ss.has(FaultTaskMethodsWithoutCapability) {
			return missingTasksCapability(method)
		}
	case mcp.MethodSubscriptionsListen:
		var p struct {
			Notifications struct {
				TaskIDs json.RawMessage `json:"taskIds"`
			} `json:"notifications"`
		}
		if raw, ok := params["notifications"]; ok && json.Unmarshal(raw, &p.Notifications) == nil && p.Notifications.TaskIDs != nil {
			return missingTasksCapability("task status notifications (notifications.taskIds)")
		}
	case mcp.MethodToolsCall:
		var name string
		_ = json.Unmarshal(params["name"], &name)
		if name == ToolTaskWorker && !ss.has(FaultTaskForUndeclaredClient) {
			return missingTasksCapability("tool " + strconv.Quote(ToolTaskWorker) + ", which runs only as a task,")
		}
	}
	return nil
}

// pinVersion is FaultStickyVersion: it records version, that of a
// request being served, as the one later requests are served under.
func (ss *session) pinVersion(version string) {
	if !ss.has(FaultStickyVersion) {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.realm.stickyVersion = version
}

// pinnedVersion is the version pinVersion recorded ("" without the
// fault, or before any).
func (ss *session) pinnedVersion() string {
	if !ss.has(FaultStickyVersion) {
		return ""
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.realm.stickyVersion
}

// stickyTasks is FaultStickyCapabilities: once a request of the realm
// declared the tasks extension, later ones are taken to have declared it
// too (breaks RPC-57, RPC-58, TSX-2).
func (ss *session) stickyTasks(env *envelope) {
	if !ss.has(FaultStickyCapabilities) {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if env.tasks {
		ss.realm.stickyTasks = true
	} else if ss.realm.stickyTasks {
		env.tasks = true
	}
}

// handleRequest2026 handles a 2026-07-28 request in the reader, as
// handleRequest does for 2025-11-25: state that later requests depend on
// changes before it returns, the answer comes from the request's own
// goroutine.
func (ss *session) handleRequest2026(msg *jsonrpc.Message) {
	id := msg.ID
	fail := func(rerr *rpcError) { ss.spawnReq(id, func() { ss.answer(id, nil, rerr) }) }
	params, perr := objectParams(msg.Params)
	if perr != nil {
		fail(invalidParams("Invalid params: %v", perr))
		return
	}
	env, rerr := ss.parseEnvelope(params)
	if rerr != nil {
		fail(rerr)
		return
	}
	if msg.Method == mcp.MethodToolsList || msg.Method == mcp.MethodToolsCall {
		// As in the TypeScript SDK v2, a served tools request pins the
		// connection; server/discover (and the control extension's
		// requests, which a user's server has not) do not.
		ss.pinVersion(env.version)
	}
	ss.stickyTasks(&env)
	if rerr := ss.gate2026(msg.Method, params, env); rerr != nil {
		fail(rerr)
		return
	}
	switch msg.Method {
	case mcp.MethodServerDiscover:
		res := ss.discover()
		ss.spawnReq(id, func() { ss.reply(id, res) })
	case mcp.MethodToolsList:
		if rerr := invalidCursor(params); rerr != nil {
			fail(rerr)
			return
		}
		ss.spawnReq(id, func() {
			ss.reply(id, map[string]any{"tools": ss.tools2026(), "ttlMs": DiscoverTTL, "cacheScope": "public"})
		})
	case mcp.MethodToolsCall:
		ss.toolsCall2026(id, params, env)
	case mcp.MethodSubscriptionsListen:
		ss.listen(id, params, env)
	case mcp.MethodTasksGet:
		res, rerr := ss.extGetTask(params)
		ss.spawnReq(id, func() { ss.answer(id, res, rerr) })
	case mcp.MethodTasksUpdate:
		rerr := ss.extUpdateTask(params)
		ss.spawnReq(id, func() { ss.answer(id, struct{}{}, rerr) })
	case mcp.MethodTasksCancel:
		rerr := ss.extCancelTask(params)
		ss.spawnReq(id, func() { ss.answer(id, struct{}{}, rerr) })
	case mcp.MethodControlTeardown:
		ss.teardown(id, params)
	default:
		if ss.controlRequest(id, msg.Method, params) {
			return
		}
		// Only a fault admits the methods 2026-07-28 removed: it serves
		// them the 2025-11-25 way.
		ss.logf("removed method %s served on a 2026-07-28 request (fault)", strconv.Quote(msg.Method))
		if msg.Method == mcp.MethodTasksResult || msg.Method == mcp.MethodTasksList {
			ss.taskMethod(id, msg.Method, params)
			return
		}
		ss.spawnReq(id, func() { ss.reply(id, struct{}{}) })
	}
}

// tools2026 is the 2026-07-28 tools/list: the same tools, without the
// legacy execution.taskSupport (the tasks extension is server-directed),
// task_worker with its input option.
func (ss *session) tools2026() []map[string]any {
	ss.srv.toolsOnce.Do(func() { ss.srv.tools2026 = ss.buildTools2026() })
	return ss.srv.tools2026
}

// buildTools2026 builds tools2026' list, which never changes.
func (ss *session) buildTools2026() []map[string]any {
	tools := toolList()
	if ss.srv.opts.NoTasks {
		return tools
	}
	worker := toolListWithTasks()[len(tools)]
	delete(worker, "execution")
	worker["description"] = "Runs only as a task of the " + TasksExtension + " extension (declare it in the request's clientCapabilities, or get -32021). " +
		"Its worker counts `ticks` ticks, then ends as `end` says: complete (a result), fail (a result with isError, the task completes) or error (a JSON-RPC error, the task fails). " +
		"Checkpoints KEY/start, KEY/tick/i and KEY/end; when gated, KEY/start and KEY/tick/i wait for mcpflight/release. " +
		"inputAt n moves the task to input_required at tick n until tasks/update answers the input request \"confirm\" (checkpoints KEY/input, KEY/answered). " +
		"tasks/cancel stops it at its next checkpoint; mcpflight/counters reports its counter."
	props := worker["inputSchema"].(map[string]any)["properties"].(map[string]any)
	props["inputAt"] = map[string]any{"type": "integer", "minimum": 1, "maximum": maxTicks,
		"description": "at this tick, ask for input (the input request \"confirm\") and wait for tasks/update"}
	for _, t := range tools {
		if t["name"] == ToolSlow {
			t["description"] = t["description"].(string) + " Run as a task when the request declares the " + TasksExtension + " extension."
		}
	}
	return append(tools, worker)
}

// toolsCall2026 handles a 2026-07-28 tools/call: task_worker, and slow
// when the request declares the tasks extension, answer a CreateTaskResult
// (tasksext.go); the rest are ordinary calls whose log messages follow the
// request's own logLevel. A params.task member is ignored (TSX-66).
func (ss *session) toolsCall2026(id jsonrpc.ID, params map[string]json.RawMessage, env envelope) {
	name, token, tokenKey, ok := ss.toolHead(id, params)
	if !ok {
		return
	}
	if ss.has(FaultRequestOnStdout) {
		ss.requestOnStdout()
	}
	args := params["arguments"]
	asTask := !ss.srv.opts.NoTasks && (name == ToolTaskWorker || (name == ToolSlow && (env.tasks || ss.has(FaultTaskForUndeclaredClient))))
	if asTask {
		ss.createTask(id, name, args)
		return
	}
	ss.callTool(id, name, args, token, tokenKey, logPolicy{perRequest: true, floor: env.logFloor})
}

// requestFloor is the lowest level a 2026-07-28 request's messages may
// have: its logLevel, or above every level when it set none (LOG-41,
// LOG-42). The faults log-without-level and log-below-level lower it.
func (ss *session) requestFloor(lp logPolicy) int {
	switch {
	case lp.floor < 0 && ss.has(FaultLogWithoutLevel):
		return 0
	case lp.floor < 0:
		return len(logLevels())
	case ss.has(FaultLogBelowLevel):
		return 0
	}
	return lp.floor
}

// logsAt reports whether a request may log at level: always under
// 2025-11-25, where the session's level filters each message as it is
// sent (sendLog), and per its logLevel under 2026-07-28.
func (ss *session) logsAt(lp logPolicy, level string) bool {
	return !lp.perRequest || levelIndex(level) >= ss.requestFloor(lp)
}

// cancelled2026 runs after a 2026-07-28 request's cancel was accepted.
// Servers send notifications/cancelled only to end a subscription
// (CAN-42, CAN-52); FaultServerSendsCancelled echoes the client's.
func (ss *session) cancelled2026(c *call) {
	if ss.has(FaultServerSendsCancelled) && c.kind != kindListen {
		ss.notify(mcp.NotificationCancelled, map[string]any{"requestId": c.id, "reason": "cancelled by the client"})
	}
}

// requestOnStdout writes the JSON-RPC request FaultRequestOnStdout sends:
// roots/list, which 2025-11-25 servers send to clients and which a
// 2026-07-28 server on stdio MUST NOT write (STD-43). Its answer, if the
// client sends one, is ignored like any stray response.
func (ss *session) requestOnStdout() {
	n := ss.srv.faultRequests.Add(1)
	frame, err := jsonrpc.EncodeRequest(jsonrpc.StringID("mcpflight-fault-"+strconv.FormatInt(n, 10)), mcp.MethodRootsList, nil)
	if err != nil {
		ss.logf("cannot encode roots/list: %v", err)
		return
	}
	ss.logf("writing a roots/list request to the client (fault %s)", FaultRequestOnStdout)
	ss.writeLine(frame)
}
