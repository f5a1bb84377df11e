// Command gosdkserver is a test target: an ordinary MCP server written on
// the official Go SDK (github.com/modelcontextprotocol/go-sdk, pinned in
// go.mod), without mcpflight's control extension, as a user's server would
// be. Its tools:
//
//   - slow: steps of work (steps, stepMs), one notifications/progress per
//     step when the request asked for progress and one notifications/message
//     per step when logSteps is set; it returns as soon as its request is
//     cancelled, with the context's error, which go-sdk sends as the
//     call's answer ("context canceled");
//   - log: one notifications/message at each of four levels;
//   - observe: the observer of docs/observer.md, counting slow handlers
//     started, completed and cancelled, server-wide, and the last step.
//
// Deployments:
//
//	gosdkserver stdio [-no-progress] [-ignore-cancel]
//	gosdkserver http [-addr HOST:PORT] [-stateless] [-propagate-cancel] [-json] [-watch-stdin] [-no-progress] [-ignore-cancel]
//
// Two flags change the slow tool, in either deployment: with -no-progress
// it sends no notifications/progress, even when the request asked for
// them (as most tools of real servers, which report nothing while they
// work); with -ignore-cancel it runs its steps to the end whatever
// happens to its request and answers then (a cancel a server may ignore
// under 2025-11-25, CAN-9).
//
// Over HTTP it listens on -addr (default: a free 127.0.0.1 port) and
// prints its endpoint URL as its first line on stdout; with -watch-stdin it
// exits when its stdin ends (so a test that dies leaves no server behind),
// else it runs until it is killed (mcpflight check --serve stops it).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gosdkserver:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: gosdkserver stdio [-no-progress] [-ignore-cancel] | http [-stateless] [-propagate-cancel] [-json] [-no-progress] [-ignore-cancel]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	obs := &observer{}
	fs.BoolVar(&obs.noProgress, "no-progress", false, "the slow tool sends no notifications/progress")
	fs.BoolVar(&obs.ignoreCancel, "ignore-cancel", false, "the slow tool runs its steps to the end after a cancel")
	switch args[0] {
	case "stdio":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return newServer(obs).Run(context.Background(), &mcp.StdioTransport{})
	case "http":
		stateless := fs.Bool("stateless", false, "StreamableHTTPOptions.Stateless")
		propagate := fs.Bool("propagate-cancel", false, "StreamableHTTPOptions.PropagateRequestCancellation")
		jsonResp := fs.Bool("json", false, "StreamableHTTPOptions.JSONResponse")
		addr := fs.String("addr", "127.0.0.1:0", "the address to listen on")
		watchStdin := fs.Bool("watch-stdin", false, "exit when stdin ends (else run until killed)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		s := newServer(obs)
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
			Stateless: *stateless, PropagateRequestCancellation: *propagate, JSONResponse: *jsonResp,
		})
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		if !*watchStdin {
			select {}
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		return srv.Close()
	}
	return fmt.Errorf("unknown deployment %q (stdio or http)", args[0])
}

// observer counts slow handlers (docs/observer.md): server-wide, only
// ever growing, a handler counted once it has returned. It also holds
// how the deployment's flags change the slow tool.
type observer struct {
	mu                            sync.Mutex
	started, completed, cancelled int
	lastStep                      int

	noProgress, ignoreCancel bool
}

func (o *observer) add(f func(*observer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(o)
}

func (o *observer) document() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return map[string]int{"started": o.started, "completed": o.completed, "cancelled": o.cancelled,
		"running": o.started - o.completed - o.cancelled, "lastStep": o.lastStep}
}

type slowArgs struct {
	Steps    int  `json:"steps,omitempty" jsonschema:"how many steps (default 10)"`
	StepMs   int  `json:"stepMs,omitempty" jsonschema:"the work of one step in milliseconds (default 100)"`
	LogSteps bool `json:"logSteps,omitempty" jsonschema:"send notifications/message at each step"`
}

type logArgs struct {
	Message string `json:"message,omitempty" jsonschema:"the text of the messages"`
}

func newServer(obs *observer) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdkserver", Version: "v0.0.1"}, &mcp.ServerOptions{HasTools: true})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "steps of work with progress and step logs"}, obs.slow)
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "one log message at each of four levels"}, logTool)
	mcp.AddTool(s, &mcp.Tool{Name: "observe", Description: "how the slow handlers ended (test-only observer)"}, obs.observe)
	return s
}

// slow is an ordinary go-sdk tool handler; its step time is the work it
// simulates. It stops at its context's end, unless ignoreCancel has it
// work on a context no cancel reaches.
func (o *observer) slow(ctx context.Context, req *mcp.CallToolRequest, args slowArgs) (*mcp.CallToolResult, any, error) {
	if o.ignoreCancel {
		ctx = context.WithoutCancel(ctx)
	}
	steps, step := 10, 100*time.Millisecond
	if args.Steps > 0 {
		steps = args.Steps
	}
	if args.StepMs > 0 {
		step = time.Duration(args.StepMs) * time.Millisecond
	}
	o.add(func(o *observer) { o.started++ })
	token := req.Params.GetProgressToken()
	if o.noProgress {
		token = nil
	}
	for i := 1; i <= steps; i++ {
		work := time.NewTimer(step)
		select {
		case <-ctx.Done():
			work.Stop()
			o.add(func(o *observer) { o.cancelled++ })
			return nil, nil, ctx.Err()
		case <-work.C:
		}
		o.add(func(o *observer) { o.lastStep = i })
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(steps), Message: fmt.Sprintf("step %d of %d", i, steps),
			})
		}
		if args.LogSteps {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "slow", Data: fmt.Sprintf("step %d of %d", i, steps)})
		}
	}
	o.add(func(o *observer) { o.completed++ })
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
}

func logTool(ctx context.Context, req *mcp.CallToolRequest, args logArgs) (*mcp.CallToolResult, any, error) {
	msg := args.Message
	if msg == "" {
		msg = "a message"
	}
	for _, level := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "log", Data: msg})
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
}

func (o *observer) observe(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	doc := o.document()
	b, _ := json.Marshal(doc)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: doc}, nil, nil
}
