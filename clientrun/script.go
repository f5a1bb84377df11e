package clientrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
)

// Tool is a tool the scripted server lists.
type Tool struct {
	Name string
	// TaskSupport is execution.taskSupport ("optional", "required"), or
	// empty for none (2025-11-25 tasks).
	TaskSupport string
}

// ProbeAnswer is how a legacy (2025-11-25) server answers the
// server/discover probe of a dual-era client.
type ProbeAnswer struct {
	// Code answers with this JSON-RPC error code (-32601 if zero).
	Code int
	// HTTPStatus, over Streamable HTTP, sends the error as the body of
	// this HTTP status (400, 404) instead of in a stream.
	HTTPStatus int
	// Silent never answers.
	Silent bool
}

// Script is what the server does in one case. The zero Script answers the
// handshake (initialize, or server/discover under 2026-07-28), ping,
// tools/list and tools/call (with "ok") and nothing else.
type Script struct {
	// Serve2025, when set, plays a 2025-11-25 server whatever the run's
	// revision, answering a server/discover probe as given: the server a
	// dual-era client must fall back from.
	Serve2025 *ProbeAnswer
	// HoldInitialize never answers initialize.
	HoldInitialize bool
	// Tools are listed by tools/list.
	Tools []Tool
	// Tasks declares tasks.requests.tools.call (2025-11-25), or under
	// 2026-07-28 the io.modelcontextprotocol/tasks extension in
	// server/discover's capabilities. A task-augmented tools/call
	// (2025-11-25: params.task; the extension: a request that declares
	// the extension in its own _meta, TSX-1, TSX-2) then creates a task
	// that stays working until tasks/cancel.
	Tasks bool
	// Call serves one tools/call that is not task-augmented; it runs in
	// a goroutine of its own and must return when ctx ends. Nil answers
	// "ok" at once.
	Call func(ctx context.Context, c *Call)
	// AfterInitialized runs, in a goroutine, once the client has sent
	// notifications/initialized.
	AfterInitialized func(ctx context.Context, p *Peer)
}

// ServerInfo is how the scripted server names itself.
var ServerInfo = map[string]any{"name": "mcpflight-scripted-server", "version": "1"}

// Call is one tools/call the client made.
type Call struct {
	// In is the request.
	In Inbound
	// ID, Tool, Arguments and Token are from the request.
	ID        jsonrpc.ID
	Tool      string
	Arguments map[string]any
	Token     jsonrpc.ProgressToken
	// Task is set for a task-augmented call.
	Task *Task

	p          *Peer
	cancelled  chan struct{}
	cancelOnce sync.Once
	mu         sync.Mutex
	cancelSeq  uint64
	progress   int
}

// Cancelled is closed once a notifications/cancelled naming the call
// arrived.
func (c *Call) Cancelled() <-chan struct{} { return c.cancelled }

// CancelSeq is the seq of the first notifications/cancelled that named
// the call, 0 for none.
func (c *Call) CancelSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelSeq
}

// Gone is closed when the client closed the call's stream (HTTP) or its
// connection ended.
func (c *Call) Gone() <-chan struct{} { return c.In.reply.gone }

// Progress sends the next progress notification (1, 2, …), when the call
// asked for progress; it reports whether one was sent.
func (c *Call) Progress(ctx context.Context) bool {
	if !c.Token.IsValid() {
		return false
	}
	c.mu.Lock()
	c.progress++
	n := c.progress
	c.mu.Unlock()
	raw, err := jsonrpc.EncodeNotification(mcp.NotificationProgress, map[string]any{
		"progressToken": c.Token, "progress": n, "message": "step " + strconv.Itoa(n)})
	return sendOn(ctx, c.p.log, c.In.reply, encodeOrNote(c.p.log, raw, err), false) == nil
}

// ProgressSent is how many progress notifications were sent.
func (c *Call) ProgressSent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progress
}

// Result answers the call with one text content.
func (c *Call) Result(ctx context.Context, text string) error {
	return c.p.answer(ctx, c.In, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
}

// Drop ends the call's HTTP stream without its response (a no-op on
// stdio).
func (c *Call) Drop() {
	c.p.log.Harness(chrono.KindDecision, "server", "dropping the stream of request "+c.ID.String())
	c.In.reply.drop()
}

func (c *Call) markCancelled(seq uint64) {
	c.cancelOnce.Do(func() {
		c.mu.Lock()
		c.cancelSeq = seq
		c.mu.Unlock()
		close(c.cancelled)
	})
}

// Task is a durable task the server created for a task-augmented call.
type Task struct {
	ID string
	// Call is the request that created it.
	Call *Call
	mu   sync.Mutex
	// status is working until tasks/cancel.
	status  string
	created time.Time
	// CancelSeq is the seq of the tasks/cancel that cancelled it.
	cancelSeq uint64
	terminal  chan struct{}
	// is2026: the tasks extension's shape (ttlMs, pollIntervalMs).
	is2026 bool
}

// Status is the task's status and the seq of the tasks/cancel, if any.
func (t *Task) Status() (string, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.cancelSeq
}

func (t *Task) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := t.created.UTC().Format(time.RFC3339Nano)
	if t.is2026 {
		return map[string]any{"taskId": t.ID, "status": t.status, "createdAt": ts, "lastUpdatedAt": ts, "ttlMs": 60000, "pollIntervalMs": 20}
	}
	return map[string]any{"taskId": t.ID, "status": t.status, "createdAt": ts, "lastUpdatedAt": ts, "ttl": 60000, "pollInterval": 20}
}

// Peer is the scripted server's side of one case: it dispatches what the
// client sends and keeps the record.
type Peer struct {
	log      *chrono.Log
	script   Script
	is2026   bool
	revision string

	mu       sync.Mutex
	calls    []*Call
	requests []Inbound
	notes    []Inbound
	tasks    map[string]*Task
	taskList []*Task
	pending  map[string]chan Inbound
	nextReq  int
	wg       sync.WaitGroup
	inited   bool
}

func newPeer(log *chrono.Log, revision string, s Script) *Peer {
	return &Peer{log: log, script: s, revision: revision, is2026: revision == spec.V20260728 && s.Serve2025 == nil,
		tasks: map[string]*Task{}, pending: map[string]chan Inbound{}}
}

// Is2026 reports whether the server speaks 2026-07-28.
func (p *Peer) Is2026() bool { return p.is2026 }

// result adds what a 2026-07-28 result must carry (resultType).
func (p *Peer) result(r map[string]any) map[string]any {
	if p.is2026 {
		r["resultType"] = "complete"
	}
	return r
}

func (p *Peer) answer(ctx context.Context, in Inbound, result map[string]any) error {
	raw, err := jsonrpc.EncodeResult(in.Msg.ID, p.result(result))
	return sendOn(ctx, p.log, in.reply, encodeOrNote(p.log, raw, err), true)
}

func (p *Peer) fail(ctx context.Context, in Inbound, code int, msg string, data any) error {
	e := &jsonrpc.Error{Code: code, Message: msg}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	raw, err := jsonrpc.EncodeError(in.Msg.ID, e)
	return sendOn(ctx, p.log, in.reply, encodeOrNote(p.log, raw, err), true)
}

// Request sends a server-to-client request on in's reply channel (the
// connection over stdio, the stream of a request over HTTP) and waits for
// the client's response.
func (p *Peer) Request(ctx context.Context, on Inbound, method string, params any) (Inbound, error) {
	p.mu.Lock()
	p.nextReq++
	id := jsonrpc.StringID("mcpflight-" + strconv.Itoa(p.nextReq))
	ch := make(chan Inbound, 1)
	p.pending[id.Key()] = ch
	p.mu.Unlock()
	raw, err := jsonrpc.EncodeRequest(id, method, params)
	if err := sendOn(ctx, p.log, on.reply, encodeOrNote(p.log, raw, err), false); err != nil {
		return Inbound{}, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return Inbound{}, ctx.Err()
	}
}

// dispatch handles one inbound message.
func (p *Peer) dispatch(ctx context.Context, in Inbound) {
	if in.Msg == nil {
		return
	}
	m := in.Msg
	switch m.Kind {
	case jsonrpc.KindRequest:
		p.mu.Lock()
		p.requests = append(p.requests, in)
		p.mu.Unlock()
		p.request(ctx, in)
	case jsonrpc.KindNotification:
		p.mu.Lock()
		p.notes = append(p.notes, in)
		p.mu.Unlock()
		p.notification(ctx, in)
	default:
		p.mu.Lock()
		ch := p.pending[m.ID.Key()]
		delete(p.pending, m.ID.Key())
		p.mu.Unlock()
		if ch != nil {
			ch <- in
		}
	}
}

func (p *Peer) request(ctx context.Context, in Inbound) {
	m := in.Msg
	switch m.Method {
	case mcp.MethodInitialize:
		switch {
		case p.is2026:
			_ = p.fail(ctx, in, mcp.CodeUnsupportedProtocolVersion, "this server speaks 2026-07-28 only",
				map[string]any{"supported": []string{spec.V20260728}})
		case p.script.HoldInitialize:
			p.log.Harness(chrono.KindDecision, "server", "holding the initialize request "+m.ID.String()+" unanswered")
		default:
			caps := map[string]any{"tools": map[string]any{}}
			if p.script.Tasks {
				caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
					"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
			}
			_ = p.answer(ctx, in, map[string]any{"protocolVersion": spec.V20251125, "capabilities": caps, "serverInfo": ServerInfo})
		}
	case mcp.MethodServerDiscover:
		if p.is2026 {
			caps := map[string]any{"tools": map[string]any{}}
			if p.script.Tasks {
				caps["extensions"] = map[string]any{mcp.ExtensionTasks: map[string]any{}}
			}
			_ = p.answer(ctx, in, map[string]any{"supportedVersions": []string{spec.V20260728},
				"capabilities": caps, "_meta": map[string]any{mcp.MetaServerInfo: ServerInfo}})
			return
		}
		pa := ProbeAnswer{}
		if p.script.Serve2025 != nil {
			pa = *p.script.Serve2025
		}
		p.probe2025(ctx, in, pa)
	case mcp.MethodPing, mcp.MethodLoggingSetLevel:
		if p.is2026 {
			_ = p.fail(ctx, in, jsonrpc.CodeMethodNotFound, "method not found: "+m.Method, nil)
			return
		}
		_ = p.answer(ctx, in, map[string]any{})
	case mcp.MethodToolsList:
		tools := []any{}
		for _, t := range p.script.Tools {
			tool := map[string]any{"name": t.Name, "inputSchema": map[string]any{"type": "object"}}
			if t.TaskSupport != "" && !p.is2026 {
				// 2026-07-28 tasks are server-directed: no taskSupport.
				tool["execution"] = map[string]any{"taskSupport": t.TaskSupport}
			}
			tools = append(tools, tool)
		}
		_ = p.answer(ctx, in, map[string]any{"tools": tools})
	case mcp.MethodToolsCall:
		p.toolsCall(ctx, in)
	case mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksResult:
		if p.is2026 {
			p.extTaskRequest(ctx, in)
			return
		}
		p.taskRequest(ctx, in)
	case mcp.MethodTasksList:
		if p.is2026 {
			_ = p.fail(ctx, in, jsonrpc.CodeMethodNotFound, "method not found: "+m.Method, nil)
			return
		}
		p.mu.Lock()
		list := []any{}
		for _, t := range p.taskList {
			list = append(list, t.wire())
		}
		p.mu.Unlock()
		_ = p.answer(ctx, in, map[string]any{"tasks": list})
	default:
		_ = p.fail(ctx, in, jsonrpc.CodeMethodNotFound, "method not found: "+m.Method, nil)
	}
}

// probe2025 answers server/discover as a 2025-11-25 server would.
func (p *Peer) probe2025(ctx context.Context, in Inbound, pa ProbeAnswer) {
	if pa.Silent {
		p.log.Harness(chrono.KindDecision, "server", "legacy server: leaving server/discover unanswered")
		return
	}
	code := pa.Code
	if code == 0 {
		code = jsonrpc.CodeMethodNotFound
	}
	e := &jsonrpc.Error{Code: code, Message: "legacy server: no server/discover before initialize"}
	if pa.HTTPStatus != 0 && in.reply.status != nil {
		raw, err := jsonrpc.EncodeError(in.Msg.ID, e)
		if raw = encodeOrNote(p.log, raw, err); raw != nil {
			in.reply.status(pa.HTTPStatus, raw)
		}
		return
	}
	raw, err := jsonrpc.EncodeError(in.Msg.ID, e)
	_ = sendOn(ctx, p.log, in.reply, encodeOrNote(p.log, raw, err), true)
}

func (p *Peer) toolsCall(ctx context.Context, in Inbound) {
	var params struct {
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
		Task      json.RawMessage `json:"task"`
		Meta      struct {
			Token json.RawMessage `json:"progressToken"`
			Caps  json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(in.Msg.Params, &params)
	c := &Call{In: in, ID: in.Msg.ID, Tool: params.Name, Arguments: params.Arguments, p: p, cancelled: make(chan struct{})}
	if params.Meta.Token != nil {
		c.Token, _ = jsonrpc.ParseToken(params.Meta.Token)
	}
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.mu.Unlock()
	augmented := params.Task != nil && !p.is2026 || p.is2026 && declaresTasks(params.Meta.Caps)
	if augmented && p.script.Tasks {
		p.mu.Lock()
		t := &Task{ID: fmt.Sprintf("task-%d-%s", len(p.taskList)+1, c.ID.String()), Call: c, status: mcp.TaskWorking,
			created: time.Now(), terminal: make(chan struct{}), is2026: p.is2026}
		c.Task = t
		p.tasks[t.ID] = t
		p.taskList = append(p.taskList, t)
		p.mu.Unlock()
		if p.is2026 {
			// The extension's CreateTaskResult is the task itself, flat,
			// with resultType "task" (TSX-8).
			raw, err := jsonrpc.EncodeResult(in.Msg.ID, mergeInto(t.wire(), map[string]any{"resultType": mcp.ResultTypeTask}))
			_ = sendOn(ctx, p.log, in.reply, encodeOrNote(p.log, raw, err), true)
			return
		}
		_ = p.answer(ctx, in, map[string]any{"task": t.wire()})
		return
	}
	if p.script.Call == nil {
		_ = c.Result(ctx, "ok")
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.script.Call(ctx, c)
	}()
}

// knownTask is the task with id, or nil after answering in with -32602
// (TSK-68, TSX-53: an unknown taskId is invalid params).
func (p *Peer) knownTask(ctx context.Context, in Inbound, id string) *Task {
	p.mu.Lock()
	t := p.tasks[id]
	p.mu.Unlock()
	if t == nil {
		_ = p.fail(ctx, in, jsonrpc.CodeInvalidParams, "unknown task", nil)
	}
	return t
}

func (p *Peer) taskRequest(ctx context.Context, in Inbound) {
	var params struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(in.Msg.Params, &params)
	t := p.knownTask(ctx, in, params.TaskID)
	if t == nil {
		return
	}
	switch in.Msg.Method {
	case mcp.MethodTasksGet:
		_ = p.answer(ctx, in, t.wire())
	case mcp.MethodTasksCancel:
		t.mu.Lock()
		if t.status != mcp.TaskWorking {
			t.mu.Unlock()
			_ = p.fail(ctx, in, jsonrpc.CodeInvalidParams, "task is already terminal", nil)
			return
		}
		t.status, t.cancelSeq = mcp.TaskCancelled, in.Seq
		close(t.terminal)
		t.mu.Unlock()
		_ = p.answer(ctx, in, t.wire())
	case mcp.MethodTasksResult:
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			select {
			case <-t.terminal:
				_ = p.fail(ctx, in, jsonrpc.CodeInternalError, "the task was cancelled", nil)
			case <-ctx.Done():
			}
		}()
	}
}

// declaresTasks reports whether per-request client capabilities declare
// the tasks extension (TSX-2).
func declaresTasks(caps json.RawMessage) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &c) != nil {
		return false
	}
	_, ok := c.Extensions[mcp.ExtensionTasks]
	return ok
}

func mergeInto(dst, src map[string]any) map[string]any {
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// extTaskRequest serves tasks/get and tasks/cancel of the tasks extension
// (2026-07-28): the task flat (TSX-23), an empty acknowledgement for a
// cancel (TSX-44), -32601 for the removed tasks/result (TSX-65), and
// -32021 for a request that does not declare the extension (TSX-56).
func (p *Peer) extTaskRequest(ctx context.Context, in Inbound) {
	var params struct {
		TaskID string `json:"taskId"`
		Meta   struct {
			Caps json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(in.Msg.Params, &params)
	switch {
	case in.Msg.Method == mcp.MethodTasksResult:
		_ = p.fail(ctx, in, jsonrpc.CodeMethodNotFound, "method not found: tasks/result is removed by the tasks extension", nil)
		return
	case !declaresTasks(params.Meta.Caps):
		_ = p.fail(ctx, in, mcp.CodeMissingRequiredClientCapability, "Missing required client capability",
			map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}})
		return
	}
	t := p.knownTask(ctx, in, params.TaskID)
	if t == nil {
		return
	}
	if in.Msg.Method == mcp.MethodTasksGet {
		_ = p.answer(ctx, in, t.wire())
		return
	}
	t.mu.Lock()
	if t.status == mcp.TaskWorking {
		t.status, t.cancelSeq = mcp.TaskCancelled, in.Seq
		close(t.terminal)
	}
	t.mu.Unlock()
	_ = p.answer(ctx, in, map[string]any{})
}

func (p *Peer) notification(ctx context.Context, in Inbound) {
	switch in.Msg.Method {
	case mcp.NotificationInitialized:
		p.mu.Lock()
		first := !p.inited
		p.inited = true
		p.mu.Unlock()
		if first && p.script.AfterInitialized != nil {
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.script.AfterInitialized(ctx, p)
			}()
		}
	case mcp.NotificationCancelled:
		var params struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(in.Msg.Params, &params) != nil || params.RequestID == nil {
			return
		}
		id, err := jsonrpc.ParseID(params.RequestID)
		if err != nil {
			return
		}
		p.mu.Lock()
		var hit *Call
		for _, c := range p.calls {
			// Over stdio a request is named within its own connection.
			if c.ID.Key() == id.Key() && c.In.Conn == in.Conn {
				hit = c
			}
		}
		p.mu.Unlock()
		if hit != nil {
			hit.markCancelled(in.Seq)
		}
	}
}

// LastRequest is the latest request the client sent on the connection of
// on: a request for a server-to-client message to ride on.
func (p *Peer) LastRequest(conn int) (Inbound, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.requests) - 1; i >= 0; i-- {
		if p.requests[i].Conn == conn {
			return p.requests[i], true
		}
	}
	return Inbound{}, false
}

// record is what the peer saw, once every handler has stopped.
func (p *Peer) record() (calls []*Call, requests, notes []Inbound, tasks []*Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Call(nil), p.calls...), append([]Inbound(nil), p.requests...),
		append([]Inbound(nil), p.notes...), append([]*Task(nil), p.taskList...)
}

// Ping sends a ping to the client on the call's channel (its stream over
// HTTP) and waits for the answer.
func (c *Call) Ping(ctx context.Context) (Inbound, error) {
	return c.p.Request(ctx, c.In, mcp.MethodPing, nil)
}
