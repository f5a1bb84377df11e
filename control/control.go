// Package control is the client side of the io.mcpflight/control
// extension (docs/control-extension.md): a server that advertises it lets
// the checker await and release named checkpoints and read cleanup
// counters, which makes every race interleaving reproducible.
package control

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
)

// Capability is the experimental capability name a server advertises.
const Capability = "io.mcpflight/control"

// Methods of the extension.
const (
	MethodAwait    = "mcpflight/await"
	MethodRelease  = "mcpflight/release"
	MethodCounters = "mcpflight/counters"
)

// Client talks to the extension over a session.
type Client struct {
	s *peer.Session
}

// Detect returns a client when the server advertised the extension in its
// initialize result, and nil otherwise.
func Detect(s *peer.Session) *Client {
	init := s.Server()
	if init == nil {
		return nil
	}
	if _, ok := init.Experimental(Capability); !ok {
		return nil
	}
	return &Client{s: s}
}

// Reached is the answer to an await.
type Reached struct {
	Checkpoint string          `json:"checkpoint"`
	RequestID  json.RawMessage `json:"requestId,omitempty"`
	Outcome    string          `json:"outcome,omitempty"`
}

// Await blocks until the named checkpoint has been reached.
func (c *Client) Await(ctx context.Context, checkpoint string) (Reached, error) {
	var r Reached
	call, err := c.s.Start(ctx, MethodAwait, map[string]any{"checkpoint": checkpoint})
	if err != nil {
		return r, err
	}
	resp, err := call.Await(ctx)
	if err != nil {
		// Stop the server-side wait too, so nothing stays blocked.
		cctx := context.WithoutCancel(ctx)
		_ = c.s.Cancel(cctx, call, "await abandoned")
		return r, fmt.Errorf("checkpoint %s: %w", checkpoint, err)
	}
	if resp.Error != nil {
		return r, fmt.Errorf("checkpoint %s: %w", checkpoint, resp.Error)
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return r, fmt.Errorf("checkpoint %s: %w", checkpoint, err)
	}
	c.s.Log().Harness(chrono.KindCheckpoint, "control", "reached "+checkpoint)
	return r, nil
}

// Release opens a gate now, or in advance if it has not been reached.
func (c *Client) Release(ctx context.Context, checkpoint string) error {
	if err := c.s.Request(ctx, MethodRelease, map[string]any{"checkpoint": checkpoint}, nil); err != nil {
		return fmt.Errorf("release %s: %w", checkpoint, err)
	}
	c.s.Log().Harness(chrono.KindCheckpoint, "control", "released "+checkpoint)
	return nil
}

// Operation is the server's view of one operation.
type Operation struct {
	RequestID    json.RawMessage `json:"requestId"`
	State        string          `json:"state"`
	Releases     int             `json:"releases"`
	ProgressSent int             `json:"progressSent"`
}

// Counters are the server's cleanup counters.
type Counters struct {
	OperationsStarted   int                  `json:"operationsStarted"`
	OperationsActive    int                  `json:"operationsActive"`
	OperationsCompleted int                  `json:"operationsCompleted"`
	OperationsCancelled int                  `json:"operationsCancelled"`
	ResourcesReleased   int                  `json:"resourcesReleased"`
	ProgressTokensLive  int                  `json:"progressTokensLive"`
	EffectsApplied      int                  `json:"effectsApplied"`
	Operations          map[string]Operation `json:"operations"`
	// Tasks reports each durable task's worker, by operation key.
	Tasks map[string]TaskWorker `json:"tasks,omitempty"`
}

// TaskWorker is the server's view of one task's worker: its counter
// advances once per unit of work, so a checker can tell whether the work
// really stopped after tasks/cancel.
type TaskWorker struct {
	TaskID         string          `json:"taskId"`
	RequestID      json.RawMessage `json:"requestId"`
	Status         string          `json:"status"`
	Ticks          int             `json:"ticks"`
	WorkerRunning  bool            `json:"workerRunning"`
	ProgressSent   int             `json:"progressSent"`
	CancelRequests int             `json:"cancelRequests"`
	Deleted        bool            `json:"deleted"`
}

// Worker returns the worker of the task with operation key, read now.
func (c *Client) Worker(ctx context.Context, key string) (TaskWorker, error) {
	cs, err := c.Counters(ctx)
	if err != nil {
		return TaskWorker{}, err
	}
	w, ok := cs.Tasks[key]
	if !ok {
		return w, fmt.Errorf("counters list no task %q", key)
	}
	return w, nil
}

// Counters reads the server's counters.
func (c *Client) Counters(ctx context.Context) (Counters, error) {
	var out Counters
	err := c.s.Request(ctx, MethodCounters, map[string]any{}, &out)
	return out, err
}

// RequestIDIs reports whether a raw requestId equals id exactly.
func RequestIDIs(raw json.RawMessage, id jsonrpc.ID) bool {
	got, err := jsonrpc.ParseID(raw)
	return err == nil && got == id
}
