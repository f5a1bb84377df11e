package refserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// FuzzServe feeds arbitrary bytes to a session with an arbitrary fault
// set and small limits. Serve must not panic (not even in a handler that
// recovers), must write only JSON-RPC frames, must answer a following
// ping (with an error under ping-broken, or the in-flight limit) unless
// the fault set made it crash, and must leave no goroutine behind.
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
		// 2026-07-28: the envelope, its errors, tasks and subscriptions.
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"k","logSteps":true},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_worker","arguments":{"key":"w","gated":false,"inputAt":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["x"],"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":"x","inputResponses":{"confirm":{"action":"accept"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}` + "\n" +
			`{"jsonrpc":"2.0","id":5,"method":"mcpflight/teardown","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":[]}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.mcpflight/scope":"s","io.modelcontextprotocol/logLevel":7}}}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint32(i*0x9e3779b9))
	}
	f.Fuzz(func(t *testing.T, input []byte, faultBits uint32) {
		fs := FaultSet{}
		for i, fault := range AllFaults() {
			// More faults than bits: each bit turns on every 32nd one.
			if faultBits&(1<<(i%32)) != 0 {
				fs[fault] = true
			}
		}
		// The robustness faults stop answering by design (a crash, a
		// swallowed line, a muted session, a dropped answer), which the
		// final ping would take for a broken server; the catalogue's
		// matrix holds them to their cases.
		for _, f := range RobustFaults() {
			if f != FaultParseErrorWithID && f != FaultMissingTaskIDInternalError && f != FaultIllTypedCursorAccepted && f != FaultMissingLevelInternalError {
				delete(fs, f)
			}
		}
		// Small limits, so that fuzzed input reaches the oversized-frame
		// and too-many-requests paths too.
		stderr := &syncBuffer{}
		srv := New(Options{Faults: fs, Stderr: stderr, MaxFrame: fuzzMaxFrame, MaxInFlight: fuzzMaxInFlight})
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
		answered := make(chan *jsonrpc.Message, 1)
		var bad []byte // the first output frame that is not JSON-RPC
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			defer close(answered)
			fr := transport.NewFrameReader(outR, 0)
			found, first := false, true
			for {
				raw, err := fr.ReadFrame()
				if err != nil {
					return
				}
				m, derr := jsonrpc.Decode(raw)
				if derr != nil && bad == nil && !(first && fs.Has(FaultStdoutNoise)) {
					bad = raw
				}
				first = false
				if derr == nil && m.Kind.IsResponse() && m.ID == jsonrpc.StringID(pingID) && !found {
					found = true
					answered <- m
				}
			}
		}()
		// The writes may fail once a crash closed the input.
		go func() {
			_, _ = inW.Write(input)
			_, _ = inW.Write([]byte("\n{\"jsonrpc\":\"2.0\",\"id\":\"" + pingID + "\",\"method\":\"ping\"}\n"))
		}()

		var ping *jsonrpc.Message
		select {
		case ping = <-answered:
		case err := <-served:
			served <- err
			ping = <-answered
		case <-time.After(10 * time.Second): // safety net
			t.Fatalf("no answer to the final ping; input %q", input)
		}
		inW.Close()
		cancel() // ends a session with ignore-stdin-eof
		var err error
		select {
		case err = <-served:
		case <-time.After(10 * time.Second): // safety net
			t.Fatalf("Serve did not return; input %q", input)
		}
		<-readDone
		crashed := errors.Is(err, ErrCrash)
		if crashed && !fs.Has(FaultCrashOnMalformedCancel) && !fs.Has(FaultListenBadFilterCrash) {
			t.Fatalf("crashed without the fault: %v; input %q", err, input)
		}
		if ping == nil && !crashed {
			t.Fatalf("final ping not answered (Serve: %v); input %q", err, input)
		}
		if ping != nil {
			// A healthy session answers the ping: a result, the
			// ping-broken fault's error, or the in-flight limit when the
			// input left that many requests running.
			ok := ping.Kind == jsonrpc.KindResult ||
				(ping.Kind == jsonrpc.KindError && ping.Error.Code == mcp.CodeTooManyRequests) ||
				(ping.Kind == jsonrpc.KindError && ping.Error.Code == jsonrpc.CodeInternalError && fs.Has(FaultPingBroken))
			if !ok {
				t.Fatalf("final ping answered %s; input %q", ping.Raw, input)
			}
		}
		if bad != nil {
			t.Fatalf("the server wrote a frame that is not JSON-RPC: %q; input %q", bad, input)
		}
		// Handlers recover from panics to keep the session alive; the
		// fuzzer must still see them.
		if log := stderr.String(); strings.Contains(log, "internal error: panic") {
			t.Fatalf("a handler panicked; input %q; stderr:\n%s", input, log)
		}
		if n := srv.live.Load(); n != 0 {
			t.Fatalf("%d goroutines left", n)
		}
	})
}

// Limits FuzzServe runs with.
const (
	fuzzMaxFrame    = 1024
	fuzzMaxInFlight = 8
)

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
