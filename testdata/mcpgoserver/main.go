// Command mcpgoserver is a test target: an ordinary MCP server written on
// mcp-go (github.com/mark3labs/mcp-go, pinned in go.mod), without
// mcpflight's control extension. Its tools are those of
// testdata/gosdkserver (slow, log, observe), so that one profile
// (testdata/gosdkserver/profile.yaml) serves both.
//
//	mcpgoserver stdio
//	mcpgoserver http [-addr HOST:PORT] [-stateless] [-watch-stdin]
//
// Over HTTP it listens on -addr (default: a free 127.0.0.1 port) and
// prints its endpoint URL as its first line on stdout; with -watch-stdin it
// exits when its stdin ends, else it runs until it is killed.
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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgoserver:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: mcpgoserver stdio | http [-addr HOST:PORT] [-stateless] [-watch-stdin]")
	}
	s := newServer(&observer{})
	switch args[0] {
	case "stdio":
		return server.ServeStdio(s)
	case "http":
		fs := flag.NewFlagSet("http", flag.ContinueOnError)
		addr := fs.String("addr", "127.0.0.1:0", "the address to listen on")
		stateless := fs.Bool("stateless", false, "WithStateLess(true)")
		watchStdin := fs.Bool("watch-stdin", false, "exit when stdin ends (else run until killed)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		h := server.NewStreamableHTTPServer(s, server.WithStateLess(*stateless))
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		srv := &http.Server{Handler: mux}
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
// ever growing, a handler counted once it has returned.
type observer struct {
	mu                            sync.Mutex
	started, completed, cancelled int
	lastStep                      int
}

func (o *observer) add(f func(*observer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(o)
}

func (o *observer) document() map[string]any {
	o.mu.Lock()
	defer o.mu.Unlock()
	return map[string]any{"started": o.started, "completed": o.completed, "cancelled": o.cancelled,
		"running": o.started - o.completed - o.cancelled, "lastStep": o.lastStep}
}

func newServer(obs *observer) *server.MCPServer {
	s := server.NewMCPServer("mcpgoserver", "v0.0.1", server.WithToolCapabilities(false), server.WithLogging())
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("steps of work with progress and step logs"),
		mcp.WithNumber("steps", mcp.Description("how many steps (default 10)")),
		mcp.WithNumber("stepMs", mcp.Description("the work of one step in milliseconds (default 100)")),
		mcp.WithBoolean("logSteps", mcp.Description("send notifications/message at each step"))), obs.slow(s))
	s.AddTool(mcp.NewTool("log", mcp.WithDescription("one log message at each of four levels"),
		mcp.WithString("message", mcp.Description("the text of the messages"))), logTool(s))
	s.AddTool(mcp.NewTool("observe", mcp.WithDescription("how the slow handlers ended (test-only observer)")), obs.observe)
	return s
}

// slow is an ordinary mcp-go tool handler; its step time is the work it
// simulates.
func (o *observer) slow(s *server.MCPServer) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		steps := req.GetInt("steps", 10)
		step := time.Duration(req.GetInt("stepMs", 100)) * time.Millisecond
		logSteps := req.GetBool("logSteps", false)
		var token mcp.ProgressToken
		if req.Params.Meta != nil {
			token = req.Params.Meta.ProgressToken
		}
		o.add(func(o *observer) { o.started++ })
		for i := 1; i <= steps; i++ {
			work := time.NewTimer(step)
			select {
			case <-ctx.Done():
				work.Stop()
				o.add(func(o *observer) { o.cancelled++ })
				return nil, ctx.Err()
			case <-work.C:
			}
			o.add(func(o *observer) { o.lastStep = i })
			if token != nil {
				_ = s.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": token, "progress": i, "total": steps, "message": fmt.Sprintf("step %d of %d", i, steps),
				})
			}
			if logSteps {
				_ = s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "slow", fmt.Sprintf("step %d of %d", i, steps)))
			}
		}
		o.add(func(o *observer) { o.completed++ })
		return mcp.NewToolResultText("done"), nil
	}
}

func logTool(s *server.MCPServer) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		msg := req.GetString("message", "a message")
		for _, level := range []mcp.LoggingLevel{mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelWarning, mcp.LoggingLevelError} {
			_ = s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, "log", msg))
		}
		return mcp.NewToolResultText("logged"), nil
	}
}

func (o *observer) observe(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	doc := o.document()
	b, _ := json.Marshal(doc)
	return mcp.NewToolResultStructured(doc, string(b)), nil
}
