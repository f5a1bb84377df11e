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
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// Capability is the experimental capability name a server advertises.
const Capability = mcp.ControlCapability

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
type Reached = mcp.ControlReached

// Await blocks until the named checkpoint has been reached.
func (c *Client) Await(ctx context.Context, checkpoint string) (Reached, error) {
	var r Reached
	call, err := c.s.Start(ctx, mcp.MethodControlAwait, mcp.ControlCheckpoint{Checkpoint: checkpoint})
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
	if err := c.s.Request(ctx, mcp.MethodControlRelease, mcp.ControlCheckpoint{Checkpoint: checkpoint}, nil); err != nil {
		return fmt.Errorf("release %s: %w", checkpoint, err)
	}
	c.s.Log().Harness(chrono.KindCheckpoint, "control", "released "+checkpoint)
	return nil
}

// Operation is the server's view of one operation.
type Operation = mcp.ControlOperation

// Counters are the server's cleanup counters.
type Counters = mcp.ControlCounters

// TaskWorker is the server's view of one task's worker.
type TaskWorker = mcp.ControlTask

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
	err := c.s.Request(ctx, mcp.MethodControlCounters, map[string]any{}, &out)
	return out, err
}
