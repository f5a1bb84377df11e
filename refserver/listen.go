package refserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// subscriptions/listen (2026-07-28 basic/patterns/subscriptions): a
// long-lived request whose stream carries only the notification types the
// client asked for and the server agreed to (SUB-1): tools list changes
// (this server's tools never change, so none come) and, with the tasks
// extension, notifications/tasks for the listed task IDs (TSX-48..50).
// The acknowledgement comes first (SUB-2); every message carries the
// subscription ID, the listen request's JSON-RPC ID, in _meta (SUB-5).
// Request-scoped messages never go there: no progress, no log (LOG-44,
// PRG-46).
//
// The client ends a subscription by cancelling the request (closing its
// stream over HTTP, notifications/cancelled on stdio): nothing more is
// written for it (CAN-48). The server ends one on mcpflight/teardown, as a
// shutdown would, and when the HTTP endpoint it was opened on closes; what
// it sends then is
// Options.ListenTeardown. Either way the checkpoint listen/ID/end
// is reached once the subscription is over, with outcome "cancelled"
// (the client's end) or "completed" (the server's), where ID is the
// listen request's ID without JSON quoting.

// subscription is one open subscriptions/listen request.
type subscription struct {
	sess *session
	c    *call // kindListen: the request, cancellable like any other
	// tasks are the task IDs the server agreed to report.
	tasks map[string]bool
	// teardown is closed when the server ends the subscription; done when
	// the subscription is over and its last frame written.
	teardown chan struct{}
	once     sync.Once
	done     chan struct{}
}

// end asks the subscription's goroutine to tear it down.
func (sub *subscription) end() { sub.once.Do(func() { close(sub.teardown) }) }

// listenFilter is SubscriptionFilter with the tasks extension's taskIds.
type listenFilter struct {
	ToolsListChanged      *bool    `json:"toolsListChanged,omitempty"`
	PromptsListChanged    *bool    `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  *bool    `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs               []string `json:"taskIds,omitempty"`
}

// listen opens a subscription. It is registered before the next frame is
// read, so that a task status change the client causes next reaches it.
func (ss *session) listen(id jsonrpc.ID, params map[string]json.RawMessage, env envelope) {
	fail := func(rerr *rpcError) { ss.spawnReq(id, func() { ss.answer(id, nil, rerr) }) }
	var asked listenFilter
	raw, ok := params["notifications"]
	if !ok || json.Unmarshal(raw, &asked) != nil || string(raw) == "null" {
		fail(invalidParams("Invalid params: subscriptions/listen needs a notifications filter object"))
		return
	}
	// The acknowledgement reflects what the server agreed to honour:
	// tools list changes, and the tasks of the scope it knows. Prompts
	// and resources do not exist here, so they are left out.
	agreed := listenFilter{}
	if asked.ToolsListChanged != nil && *asked.ToolsListChanged {
		agreed.ToolsListChanged = asked.ToolsListChanged
	}
	sub := &subscription{sess: ss, tasks: map[string]bool{}, teardown: make(chan struct{}), done: make(chan struct{}),
		c: &call{kind: kindListen, id: id, idKey: ss.idKey(id), cancelled: make(chan struct{})}}
	if asked.TaskIDs != nil {
		agreed.TaskIDs = []string{}
		ts := ss.tasks
		ts.mu.Lock()
		for _, tid := range asked.TaskIDs {
			if t := ts.byID[tid]; t != nil && t.ext.is2026 && !sub.tasks[tid] {
				sub.tasks[tid] = true
				agreed.TaskIDs = append(agreed.TaskIDs, tid)
			}
		}
		ts.mu.Unlock()
	}
	// Registration and acknowledgement are one step under the
	// subscription's sendMu: a status change that finds the subscription
	// (publishTask) waits for it, so nothing comes before the
	// acknowledgement (SUB-2).
	c := sub.c
	c.sendMu.Lock()
	ss.mu.Lock()
	dup := ss.inflight[c.idKey] != nil
	if !dup {
		ss.inflight[c.idKey] = c
		ss.subs = append(ss.subs, sub)
	}
	ss.mu.Unlock()
	if dup {
		c.sendMu.Unlock()
		fail(&rpcError{code: codeInvalidRequest, message: "Invalid Request: request id " + id.String() + " is already in flight"})
		return
	}
	if !ss.has(FaultListenNoAck) {
		ss.notify(mcp.NotificationSubscriptionsAcknowledged, map[string]any{"notifications": agreed, mcp.MetaKey: ss.subscriptionMeta(id)})
	}
	if ss.has(FaultListenLogs) && env.logFloor >= 0 {
		ss.notify(mcp.NotificationMessage, map[string]any{"level": "info", "logger": "listen",
			"data": map[string]any{"subscription": id, "event": "opened"}, mcp.MetaKey: ss.subscriptionMeta(id)})
	}
	c.sendMu.Unlock()
	ss.logf("subscription %s opened (tools %v, %d tasks)", id, agreed.ToolsListChanged != nil, len(sub.tasks))
	ss.spawnReq(id, func() { ss.runListen(sub) })
}

// subscriptionMeta is the _meta of a message of subscription id (SUB-5).
func (ss *session) subscriptionMeta(id jsonrpc.ID) map[string]any {
	if ss.has(FaultListenNoSubscriptionID) {
		return map[string]any{}
	}
	return map[string]any{mcp.MetaSubscriptionID: id}
}

// runListen serves one subscription until the client cancels it, the
// server tears it down, or the connection ends.
func (ss *session) runListen(sub *subscription) {
	c := sub.c
	outcome := ""
	defer func() {
		ss.mu.Lock()
		ss.subs = slices.DeleteFunc(ss.subs, func(s *subscription) bool { return s == sub })
		if ss.inflight[c.idKey] == c {
			delete(ss.inflight, c.idKey)
		}
		ss.mu.Unlock()
		close(sub.done)
		if outcome != "" {
			ss.mark(c, subscriptionCheckpoint(c.id), outcome)
		}
	}()
	select {
	case <-c.cancelled:
		outcome = mcp.OutcomeCancelled
		ss.logf("subscription %s ended by the client", c.id)
		return
	case <-sub.teardown:
	case <-ss.ctx.Done():
		return
	}
	c.sendMu.Lock()
	ss.mu.Lock()
	o := ss.status(c)
	if o == goOn {
		c.state = stateCompleted
	}
	ss.mu.Unlock()
	if o == wasCancelled {
		c.sendMu.Unlock()
		outcome = mcp.OutcomeCancelled
		return
	}
	if o == goOn {
		switch {
		case ss.has(FaultTeardownSilent):
		case ss.srv.opts.ListenTeardown == TeardownCancelled:
			// CAN-41: the notification names the listen request; no
			// response follows.
			ss.notify(mcp.NotificationCancelled, map[string]any{"requestId": c.id, "reason": "the server ended the subscription"})
		default:
			// SUB-6, SUB-7: the listen request's own result.
			ss.reply(c.id, map[string]any{mcp.MetaKey: ss.subscriptionMeta(c.id)})
		}
	}
	c.sendMu.Unlock()
	ss.endPost()
	outcome = mcp.OutcomeCompleted
	ss.logf("subscription %s ended by the server (%s)", c.id, ss.srv.opts.ListenTeardown)
}

// publishTask sends t's DetailedTask, as tasks/get would show it now
// (TSX-50), to every subscription that asked for it (TSX-48).
func (ss *session) publishTask(t *task) {
	ts := ss.tasks
	ts.mu.Lock()
	view := ss.extTaskViewLocked(t)
	ts.mu.Unlock()
	ss.mu.Lock()
	subs := slices.Clone(ss.subs)
	ss.mu.Unlock()
	for _, sub := range subs {
		if !sub.tasks[t.id] && !ss.has(FaultListenUnrequested) {
			continue
		}
		params := make(map[string]any, len(view)+1)
		for k, v := range view {
			params[k] = v
		}
		params[mcp.MetaKey] = ss.subscriptionMeta(sub.c.id)
		sub.send(mcp.NotificationTasks, params)
	}
}

// send writes a notification of the subscription unless it is over.
func (sub *subscription) send(method string, params any) {
	ss := sub.sess
	sub.c.sendMu.Lock()
	defer sub.c.sendMu.Unlock()
	ss.mu.Lock()
	o := ss.status(sub.c)
	ss.mu.Unlock()
	if o == goOn {
		ss.notify(method, params)
	}
}

// teardown handles mcpflight/teardown {subscriptionId?}: the server ends
// that subscription of the scope, or all of them, as a shutdown would,
// and answers {"ended": n} once their last frames are written.
func (ss *session) teardown(id jsonrpc.ID, params map[string]json.RawMessage) {
	var target *jsonrpc.ID
	if raw, ok := params["subscriptionId"]; ok {
		sid, err := jsonrpc.ParseID(raw)
		if err != nil {
			ss.spawnReq(id, func() { ss.answer(id, nil, invalidParams("Invalid params: subscriptionId must be a request ID")) })
			return
		}
		target = &sid
	}
	ss.mu.Lock()
	var hit []*subscription
	for _, sub := range ss.subs {
		if target == nil || sub.c.id == *target {
			hit = append(hit, sub)
		}
	}
	ss.mu.Unlock()
	for _, sub := range hit {
		sub.end()
	}
	ss.logf("teardown of %d subscription(s)", len(hit))
	ss.spawnReq(id, func() {
		for _, sub := range hit {
			select {
			case <-sub.done:
			case <-ss.ctx.Done():
				return
			}
		}
		ss.reply(id, map[string]any{"ended": len(hit)})
	})
}

// endHTTP tears down the realm's subscriptions that were opened over HTTP
// and waits until each is over: the HTTP endpoint's shutdown. Those of
// stdio connections sharing the realm go on.
func (r *realm) endHTTP() {
	r.mu.Lock()
	subs := slices.DeleteFunc(slices.Clone(r.subs), func(sub *subscription) bool { return sub.sess.post == nil })
	r.mu.Unlock()
	for _, sub := range subs {
		sub.end()
	}
	for _, sub := range subs {
		<-sub.done
	}
}

// subscriptionCheckpoint names the checkpoint reached when subscription id
// is over.
func subscriptionCheckpoint(id jsonrpc.ID) string { return "listen/" + idText(id) + "/end" }

// listenCrash is FaultListenBadFilterCrash: the error that stops the
// server when msg is a subscriptions/listen whose notifications filter
// is missing or not an object, or nil.
func (ss *session) listenCrash(msg *jsonrpc.Message) error {
	if !ss.has(FaultListenBadFilterCrash) || msg.Method != mcp.MethodSubscriptionsListen {
		return nil
	}
	var p struct {
		Notifications json.RawMessage `json:"notifications"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	if f := strings.TrimSpace(string(p.Notifications)); strings.HasPrefix(f, "{") {
		return nil
	}
	ss.logf("subscriptions/listen without a notifications object: crashing (fault %s)", FaultListenBadFilterCrash)
	return fmt.Errorf("%w: subscriptions/listen without a notifications object (fault %s)", ErrCrash, FaultListenBadFilterCrash)
}
