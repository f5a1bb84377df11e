package refserver

import (
	"encoding/json"
	"sync"

	"github.com/mcpflight/mcpflight/jsonrpc"
)

// ToolObserver is the reference server's observer tool (docs/observer.md):
// its result reports how the handlers of the slow and effect tools ended,
// counted across every session of the Server, so that a case can see
// what the wire cannot show (a handler still running after its stream
// closed looks, on the wire, like one that stopped).
const ToolObserver = "observer"

// observer counts handler outcomes across the sessions of one Server.
type observer struct {
	mu        sync.Mutex
	started   int
	completed int
	cancelled int
	lastStep  int
}

// Observation is the observer tool's structuredContent: started,
// completed and cancelled count handlers since the server started;
// running is started minus the handlers that ended; lastStep is the step
// most recently reached by any slow operation (0 before the first).
type Observation struct {
	Started   int `json:"started"`
	Completed int `json:"completed"`
	Cancelled int `json:"cancelled"`
	Running   int `json:"running"`
	LastStep  int `json:"lastStep"`
}

func (o *observer) start() {
	o.mu.Lock()
	o.started++
	o.mu.Unlock()
}

// ended counts a handler's end: completed when it delivered its result
// (also after a cancel, under FaultRespondAfterCancel: the work was not
// stopped), cancelled when it stopped at the cancel.
func (o *observer) ended(completed bool) {
	o.mu.Lock()
	if completed {
		o.completed++
	} else {
		o.cancelled++
	}
	o.mu.Unlock()
}

func (o *observer) step(i int) {
	o.mu.Lock()
	o.lastStep = i
	o.mu.Unlock()
}

func (o *observer) snapshot() Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Observation{Started: o.started, Completed: o.completed, Cancelled: o.cancelled,
		Running: o.started - o.completed - o.cancelled, LastStep: o.lastStep}
}

// observerTool is the observer's tools/list entry.
func observerTool() map[string]any {
	n := map[string]any{"type": "integer", "minimum": 0}
	return map[string]any{
		"name": ToolObserver,
		"description": "Reports how the slow and effect handlers ended, across every session: started, completed, cancelled, " +
			"running and the last step reached (docs/observer.md). Test-only, like the control extension.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false},
		"outputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"started": n, "completed": n, "cancelled": n, "running": n, "lastStep": n,
			},
			"required": []string{"started", "completed", "cancelled", "running", "lastStep"},
		},
	}
}

// observerCall answers the observer tool with a snapshot taken before the
// next frame is read, as the control extension's counters are.
func (ss *session) observerCall(id jsonrpc.ID, args json.RawMessage) {
	var none struct{}
	if err := strictDecode(args, &none); err != nil {
		ss.spawnReq(id, func() { ss.answer(id, nil, invalidParams("Invalid params: observer takes no arguments: %v", err)) })
		return
	}
	obs := ss.srv.observer.snapshot()
	text, _ := json.Marshal(obs)
	ss.spawnReq(id, func() {
		ss.reply(id, map[string]any{
			"content":           []textContent{{Type: "text", Text: string(text)}},
			"structuredContent": obs,
			"isError":           false,
		})
	})
}
