package gosdkcontrol_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
)

// slowArgs are the arguments of the example server's slow tool.
type slowArgs struct {
	Steps   int     `json:"steps,omitempty" jsonschema:"how many steps, each with one progress notification (default 3)"`
	Unit    float64 `json:"unit,omitempty" jsonschema:"the progress increment of a step (default 1)"`
	DelayMs int     `json:"delayMs,omitempty" jsonschema:"the work of one step, in milliseconds (default 200)"`
	// LogSteps logs each step (notifications/message, info), which
	// mcpflight's logging/no-flood-after-cancel case asks of the slow tool.
	LogSteps bool `json:"logSteps,omitempty" jsonschema:"send notifications/message at each step"`
}

// slow is an ordinary go-sdk tool handler: steps of work, one progress
// notification after each when the client asked for progress, and it
// stops when its request is cancelled. Its step time is the work it
// simulates, not synchronisation.
func slow(ctx context.Context, req *mcp.CallToolRequest, args slowArgs) (*mcp.CallToolResult, any, error) {
	steps, unit, delay := 3, 1.0, 200*time.Millisecond
	if args.Steps > 0 {
		steps = args.Steps
	}
	if args.Unit > 0 {
		unit = args.Unit
	}
	if args.DelayMs > 0 {
		delay = time.Duration(args.DelayMs) * time.Millisecond
	}
	token := req.Params.GetProgressToken()
	for i := 1; i <= steps; i++ {
		work := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			work.Stop()
			return nil, nil, ctx.Err()
		case <-work.C:
		}
		if token != nil {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i) * unit, Total: float64(steps) * unit,
				Message: fmt.Sprintf("step %d of %d", i, steps),
			}); err != nil {
				return nil, nil, err
			}
		}
		if args.LogSteps {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "slow", Data: fmt.Sprintf("step %d of %d", i, steps)}); err != nil {
				return nil, nil, err
			}
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
}

// newServer is a small server built on the official Go SDK, as a server
// author would write it.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-example", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "steps of work with progress"}, slow)
	return s
}

// serve runs a server on in-process pipes (mcpflighttest.Pipes).
func serve(s *mcp.Server) transport.ServeFunc {
	return func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
		return s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	}
}

// exampleProfile names the example server's slow tool for the catalogue.
func exampleProfile() *profile.Profile {
	return &profile.Profile{
		Name:        "gosdk-example",
		Slow:        &profile.Tool{Name: "slow", Arguments: map[string]any{"steps": 3, "delayMs": 50}},
		SlowSteps:   3,
		GraceMillis: 600,
	}
}
