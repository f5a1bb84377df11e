// Command goadapter is a complete check-client adapter for a Go client
// built on mcpflight's own peer package: the example of
// docs/check-client.md. It reads the case's instructions from
// MCP_CONFORMANCE_CONTEXT, connects (stdio: spawns the server it is
// told to; HTTP: dials the URL), runs the steps, closes, and prints one
// report per line. Try it with
//
//	go build -o /tmp/goadapter ./docs/goadapter
//	mcpflight check-client --command /tmp/goadapter
//	mcpflight check-client --command /tmp/goadapter --transport http
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/transport"
)

func main() {
	in, err := clientrun.ReadInstructions(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	report := func(r clientrun.Report) {
		raw, _ := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write(append(raw, '\n'))
	}
	if in.ProtocolVersion != "2025-11-25" {
		report(clientrun.Report{Outcome: clientrun.OutcomeUnsupported, Error: "this adapter speaks 2025-11-25 only"})
		return
	}
	ctx := context.Background()
	log := chrono.New() // peer's own record; the checker keeps the evidence
	var conn transport.Conn
	if in.Transport == clientrun.TransportHTTP {
		conn, err = transport.DialHTTP(ctx, transport.HTTPConfig{URL: in.URL, Log: log})
	} else {
		conn, err = transport.StartStdio(ctx, transport.StdioConfig{Argv: append([]string{in.Server.Command}, in.Server.Args...), Log: log})
	}
	if err != nil {
		report(clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()})
		os.Exit(1)
	}
	s := peer.New(conn, peer.Options{Log: log})
	defer s.Close(ctx)

	cctx, cancel := ctx, context.CancelFunc(func() {})
	if in.Connect.TimeoutMs > 0 {
		cctx, cancel = context.WithTimeout(ctx, time.Duration(in.Connect.TimeoutMs)*time.Millisecond)
	}
	_, err = s.Initialize(cctx, peer.InitOptions{}) // peer never cancels initialize (CAN-2)
	cancel()
	switch {
	case err != nil && cctx.Err() != nil:
		report(clientrun.Report{Outcome: clientrun.OutcomeTimeout, Error: err.Error()})
		return
	case err != nil:
		report(clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()})
		return
	}
	report(clientrun.Report{Outcome: clientrun.OutcomeConnected})
	for i, st := range in.Steps {
		calls := st.Calls
		if st.Op == clientrun.OpCall && st.Call != nil {
			calls = []clientrun.CallStep{*st.Call}
		}
		var wg sync.WaitGroup
		for j, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := call(ctx, s, log, c)
				r.Step = i + 1
				if st.Op == clientrun.OpParallel {
					r.Call = j + 1
				}
				report(r)
			}()
		}
		wg.Wait()
	}
	report(clientrun.Report{Step: len(in.Steps) + 1, Outcome: clientrun.OutcomeClosed})
}

// call makes one call and gives up on it as the step says: after N
// progress notifications (abort), or on its timeout (reset by progress,
// bounded by the maximum); giving up sends notifications/cancelled.
func call(ctx context.Context, s *peer.Session, log *chrono.Log, cs clientrun.CallStep) clientrun.Report {
	if cs.Task {
		return clientrun.Report{Outcome: clientrun.OutcomeUnsupported, Error: "no task support in this adapter (see package hostcancel)"}
	}
	var opts []peer.CallOption
	if cs.Progress || cs.AbortAfterProgress > 0 {
		opts = append(opts, peer.WithProgress())
	}
	args := cs.Arguments
	if args == nil {
		args = map[string]any{}
	}
	c, err := s.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": cs.Tool, "arguments": args}, opts...)
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	progress := make(chan struct{}, 1)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		// Every progress notification for the call's token, from the
		// session's chronology.
		_, _ = log.WaitFor(wctx, c.SentSeq, func(ev chrono.Event) bool {
			if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == mcp.NotificationProgress && c.Token.IsValid() && ev.Summary.Token == c.Token.String() {
				select {
				case progress <- struct{}{}:
				case <-wctx.Done():
				}
			}
			return false
		})
	}()
	never := make(chan time.Time)
	idle, total := (<-chan time.Time)(never), (<-chan time.Time)(never)
	var idleTimer *time.Timer
	if cs.TimeoutMs > 0 {
		idleTimer = time.NewTimer(time.Duration(cs.TimeoutMs) * time.Millisecond)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	if cs.MaxTotalTimeoutMs > 0 {
		t := time.NewTimer(time.Duration(cs.MaxTotalTimeoutMs) * time.Millisecond)
		defer t.Stop()
		total = t.C
	}
	seen := 0
	for {
		select {
		case <-c.Done():
			resp, err := c.Await(ctx)
			if err != nil {
				return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
			}
			if resp.Error != nil {
				return clientrun.Report{Outcome: clientrun.OutcomeError, Error: resp.Error.Message}
			}
			// Aborting now would name a finished request: peer refuses
			// (CAN-1), so AbortAfterResponse needs nothing here.
			return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: firstText(resp)}
		case <-progress:
			seen++
			if idleTimer != nil && cs.ResetTimeoutOnProgress {
				idleTimer.Reset(time.Duration(cs.TimeoutMs) * time.Millisecond)
			}
			if cs.AbortAfterProgress > 0 && seen >= cs.AbortAfterProgress {
				_ = s.Cancel(ctx, c, "aborted by the user")
				return clientrun.Report{Outcome: clientrun.OutcomeAborted}
			}
		case <-idle:
			_ = s.Cancel(ctx, c, "timed out")
			return clientrun.Report{Outcome: clientrun.OutcomeTimeout}
		case <-total:
			_ = s.Cancel(ctx, c, "maximum timeout")
			return clientrun.Report{Outcome: clientrun.OutcomeTimeout}
		}
	}
}

func firstText(resp *jsonrpc.Message) string {
	var r struct {
		Content []struct{ Type, Text string } `json:"content"`
	}
	_ = json.Unmarshal(resp.Result, &r)
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}
