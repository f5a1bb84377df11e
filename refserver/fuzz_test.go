package refserver

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/transport"
)

// FuzzServe feeds arbitrary lines to a session with an arbitrary fault
// set. Serve must not panic, and afterwards a ping must still be answered
// (with an error under ping-broken), unless the fault set made it crash.
func FuzzServe(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k"},"_meta":{"progressToken":0}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow","arguments":{"key":"k","gated":false,"steps":5}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"mcpflight/await","params":{"checkpoint":"x"}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","id":3,"method":"mcpflight/release","params":{"checkpoint":"k/start"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"effect","arguments":{"key":"e","gated":false}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"log","arguments":{"messages":[{"level":"info","data":{}}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
		`{"jsonrpc":"2.0","id":0,"method":"mcpflight/counters"}`,
		"\r\n\n{",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint32(i*0x9e3779b9))
	}
	f.Fuzz(func(t *testing.T, input []byte, faultBits uint32) {
		fs := FaultSet{}
		for i, fault := range AllFaults() {
			if faultBits&(1<<i) != 0 {
				fs[fault] = true
			}
		}
		srv := New(Options{Faults: fs})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		served := make(chan error, 1)
		go func() {
			err := srv.Serve(ctx, inR, outW)
			outW.Close()
			inR.Close()
			served <- err
		}()
		const pingID = "mcpflight-fuzz-final-ping"
		answered := make(chan bool, 1)
		go func() {
			fr := transport.NewFrameReader(outR, 0)
			found := false
			for {
				raw, err := fr.ReadFrame()
				if err != nil {
					answered <- found
					return
				}
				if m, err := jsonrpc.Decode(raw); err == nil && m.Kind.IsResponse() && m.ID == jsonrpc.StringID(pingID) && !found {
					found = true
					answered <- true
				}
			}
		}()
		// The writes may fail once a crash closed the input.
		go func() {
			_, _ = inW.Write(input)
			_, _ = inW.Write([]byte("\n{\"jsonrpc\":\"2.0\",\"id\":\"" + pingID + "\",\"method\":\"ping\"}\n"))
		}()

		var gotPing bool
		select {
		case gotPing = <-answered:
		case err := <-served:
			served <- err
			gotPing = <-answered
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to the final ping; input %q", input)
		}
		inW.Close()
		cancel() // ends a session with ignore-stdin-eof
		var err error
		select {
		case err = <-served:
		case <-time.After(10 * time.Second):
			t.Fatalf("Serve did not return; input %q", input)
		}
		crashed := errors.Is(err, ErrCrash)
		if crashed && !fs.Has(FaultCrashOnMalformedCancel) {
			t.Fatalf("crashed without the fault: %v; input %q", err, input)
		}
		if !gotPing && !crashed {
			t.Fatalf("final ping not answered (Serve: %v); input %q", err, input)
		}
		if n := srv.live.Load(); n != 0 {
			t.Fatalf("%d goroutines left", n)
		}
	})
}
