// Command gosdkclient is a check-client adapter (docs/check-client.md) for
// the official Go SDK's client (github.com/modelcontextprotocol/go-sdk,
// pinned in go.mod), written on its client API alone, as a Go user would
// write a host: mcp.NewClient, mcp.CommandTransport or
// mcp.StreamableClientTransport, and a context per call for its timeout
// and for the user's abort.
//
//	mcpflight check-client --command '/path/to/gosdkclient'
//
// It reads its instructions from MCP_CONFORMANCE_CONTEXT, connects, runs
// the steps and prints one report per line on stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// instructions mirror clientrun.Instructions (the adapter contract); the
// adapter is a module of its own and does not import mcpflight.
type instructions struct {
	ProtocolVersion string `json:"protocolVersion"`
	Transport       string `json:"transport"`
	Server          *struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	} `json:"server"`
	URL     string `json:"url"`
	Connect struct {
		TimeoutMs int `json:"timeoutMs"`
	} `json:"connect"`
	Steps    []step `json:"steps"`
	LingerMs int    `json:"lingerMs"`
}

type step struct {
	Op    string     `json:"op"`
	Call  *callStep  `json:"call"`
	Calls []callStep `json:"calls"`
	Level string     `json:"level"`
}

type callStep struct {
	Tool                   string         `json:"tool"`
	Arguments              map[string]any `json:"arguments"`
	Progress               bool           `json:"progress"`
	AbortAfterProgress     int            `json:"abortAfterProgress"`
	AbortAfterResponse     bool           `json:"abortAfterResponse"`
	TimeoutMs              int            `json:"timeoutMs"`
	ResetTimeoutOnProgress bool           `json:"resetTimeoutOnProgress"`
	MaxTotalTimeoutMs      int            `json:"maxTotalTimeoutMs"`
	Task                   bool           `json:"task"`
	AbortAfterTaskCreated  bool           `json:"abortAfterTaskCreated"`
}

type report struct {
	Step    int    `json:"step"`
	Call    int    `json:"call,omitempty"`
	Outcome string `json:"outcome"`
	Text    string `json:"text,omitempty"`
	Error   string `json:"error,omitempty"`
}

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(r report) {
	out.Lock()
	defer out.Unlock()
	_ = out.enc.Encode(r)
}

func main() {
	var in instructions
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &in); err != nil {
		fmt.Fprintln(os.Stderr, "gosdkclient: MCP_CONFORMANCE_CONTEXT:", err)
		os.Exit(2)
	}
	run(in)
}

// progressRoutes sends each progress notification to the call whose token
// it names.
type progressRoutes struct {
	mu     sync.Mutex
	byTok  map[string]func()
	nextID atomic.Int64
}

func (p *progressRoutes) add(f func()) string {
	tok := "gosdkclient-" + strconv.FormatInt(p.nextID.Add(1), 10)
	p.mu.Lock()
	p.byTok[tok] = f
	p.mu.Unlock()
	return tok
}

func (p *progressRoutes) remove(tok string) {
	p.mu.Lock()
	delete(p.byTok, tok)
	p.mu.Unlock()
}

func (p *progressRoutes) deliver(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok := fmt.Sprint(req.Params.ProgressToken)
	p.mu.Lock()
	f := p.byTok[tok]
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

func run(in instructions) {
	routes := &progressRoutes{byTok: map[string]func(){}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpflight-gosdk-adapter", Version: "1.0.0"},
		&mcp.ClientOptions{ProgressNotificationHandler: routes.deliver})
	var transport mcp.Transport
	switch in.Transport {
	case "http":
		transport = &mcp.StreamableClientTransport{Endpoint: in.URL}
	default:
		if in.Server == nil {
			emit(report{Step: 0, Outcome: "error", Error: "no server command"})
			emit(report{Step: len(in.Steps) + 1, Outcome: "closed"})
			return
		}
		cmd := exec.Command(in.Server.Command, in.Server.Args...)
		cmd.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: cmd}
	}
	ctx := context.Background()
	connectCtx, cancel := ctx, context.CancelFunc(func() {})
	if in.Connect.TimeoutMs > 0 {
		connectCtx, cancel = context.WithTimeout(ctx, time.Duration(in.Connect.TimeoutMs)*time.Millisecond)
	}
	session, err := client.Connect(connectCtx, transport, &mcp.ClientSessionOptions{ProtocolVersion: in.ProtocolVersion})
	timedOut := connectCtx.Err() != nil
	cancel()
	if err != nil {
		outcome := "error"
		if timedOut || errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
		emit(report{Step: 0, Outcome: outcome, Error: err.Error()})
		linger(in.LingerMs)
		emit(report{Step: len(in.Steps) + 1, Outcome: "closed"})
		return
	}
	emit(report{Step: 0, Outcome: "connected"})
	for i, s := range in.Steps {
		n := i + 1
		switch {
		case s.Op == "call" && s.Call != nil:
			r := call(ctx, session, routes, *s.Call)
			r.Step = n
			emit(r)
		case s.Op == "parallel":
			results := make([]report, len(s.Calls))
			var wg sync.WaitGroup
			for j, c := range s.Calls {
				wg.Go(func() { results[j] = call(ctx, session, routes, c) })
			}
			wg.Wait()
			for j, r := range results {
				r.Step, r.Call = n, j+1
				emit(r)
			}
		case s.Op == "setLogLevel":
			// The client's one way to set a log level: SetLoggingLevel,
			// which sends logging/setLevel.
			r := report{Step: n, Outcome: "result", Text: "level " + s.Level}
			if err := session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(s.Level)}); err != nil {
				r = report{Step: n, Outcome: "error", Error: err.Error()}
			}
			emit(r)
		default:
			emit(report{Step: n, Outcome: "unsupported", Error: "unknown op " + s.Op})
		}
	}
	linger(in.LingerMs)
	if err := session.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
	}
	emit(report{Step: len(in.Steps) + 1, Outcome: "closed"})
}

// linger keeps the connection open for the instructions' lingerMs before
// it is closed, as a host that goes on running would.
func linger(ms int) {
	if ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

// call runs one tool call with a context that carries its timeout and the
// user's abort: a call that asks for progress gets a token of its own.
func call(ctx context.Context, session *mcp.ClientSession, routes *progressRoutes, c callStep) report {
	if c.Task {
		return report{Outcome: "unsupported", Error: "the go-sdk v1.8.0 client has no tasks API"}
	}
	if c.MaxTotalTimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(c.MaxTotalTimeoutMs)*time.Millisecond)
		defer cancel()
	}
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	errAborted := errors.New("aborted as instructed")
	errTimeout := errors.New("request timed out")
	var timer *time.Timer
	if c.TimeoutMs > 0 {
		timer = time.AfterFunc(time.Duration(c.TimeoutMs)*time.Millisecond, func() { abort(errTimeout) })
		defer timer.Stop()
	}
	params := &mcp.CallToolParams{Name: c.Tool, Arguments: c.Arguments}
	if c.Progress || c.AbortAfterProgress > 0 || c.ResetTimeoutOnProgress {
		var seen atomic.Int64
		tok := routes.add(func() {
			n := seen.Add(1)
			if c.ResetTimeoutOnProgress && timer != nil {
				timer.Reset(time.Duration(c.TimeoutMs) * time.Millisecond)
			}
			if c.AbortAfterProgress > 0 && n >= int64(c.AbortAfterProgress) {
				abort(errAborted)
			}
		})
		defer routes.remove(tok)
		params.SetProgressToken(tok)
	}
	res, err := session.CallTool(ctx, params)
	if c.AbortAfterResponse {
		abort(errAborted)
	}
	if err != nil {
		cause := context.Cause(ctx)
		switch {
		case errors.Is(cause, errAborted):
			return report{Outcome: "aborted", Error: err.Error()}
		case errors.Is(cause, errTimeout), errors.Is(cause, context.DeadlineExceeded):
			return report{Outcome: "timeout", Error: err.Error()}
		}
		return report{Outcome: "error", Error: err.Error()}
	}
	return report{Outcome: "result", Text: firstText(res)}
}

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
