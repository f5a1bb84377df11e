package hostile

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/refserver"
)

func TestStdioModesListed(t *testing.T) {
	n := 0
	for _, in := range All() {
		if in.Transport != TransportStdio {
			continue
		}
		n++
		if in.Description == "" {
			t.Errorf("%s has no description", in.Mode)
		}
		if got, err := Lookup(string(in.Mode), TransportStdio); err != nil || got != in {
			t.Errorf("Lookup(%s) = %+v, %v", in.Mode, got, err)
		}
	}
	if n != 13 {
		t.Errorf("%d stdio modes, want 13", n)
	}
}

const (
	initReq = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	pingReq = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	callReq = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2,"gated":false,"key":"k"},"_meta":{"progressToken":"p"}}}`
)

// serveInProcess runs ServeStdio on pipes, writes input, ends it and
// returns every output line and the exit code.
func serveInProcess(t *testing.T, mode Mode, input ...string) (lines []string, code int) {
	return serveUntil(t, mode, nil, input...)
}

// serveUntil is serveInProcess ending the input only once until accepts
// an output line (nil: at once).
func serveUntil(t *testing.T, mode Mode, until func(line string) bool, input ...string) (lines []string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // safety net only
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := ServeStdio(ctx, mode, refserver.New(refserver.Options{}), inR, outW, io.Discard)
		outW.Close()
		done <- result{code, err}
	}()
	written := make(chan struct{})
	go func() {
		defer close(written)
		for _, l := range input {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				return
			}
		}
		if until == nil {
			inW.Close()
		}
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if until != nil && until(sc.Text()) {
			<-written
			inW.Close()
			until = nil
		}
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("ServeStdio(%s): %v", mode, r.err)
	}
	return lines, r.code
}

func TestStdioDuplicateResponses(t *testing.T) {
	lines, _ := serveInProcess(t, DuplicateResponses, initReq, pingReq)
	seen := map[string]int{}
	for _, l := range lines {
		if m, err := jsonrpc.Decode([]byte(l)); err == nil && m.Kind.IsResponse() {
			seen[m.ID.Key()]++
		}
	}
	if seen[jsonrpc.IntID(1).Key()] != 2 || seen[jsonrpc.IntID(2).Key()] != 2 {
		t.Errorf("responses by id %v, want each twice\n%s", seen, strings.Join(lines, "\n"))
	}
}

func TestStdioGarbageAndBadBytes(t *testing.T) {
	for _, mode := range []Mode{GarbageBeforeInit, GarbageAfterInit, InvalidUTF8, UnknownIDs} {
		lines, code := serveInProcess(t, mode, initReq, pingReq)
		bad, unknown := 0, 0
		for _, l := range lines {
			m, err := jsonrpc.Decode([]byte(l))
			switch {
			case err != nil:
				bad++
				if mode == InvalidUTF8 && utf8.ValidString(l) {
					t.Errorf("%s: malformed line %q is valid UTF-8", mode, l)
				}
			case m.Kind.IsResponse() && m.ID.IsString():
				unknown++
			}
		}
		if code != 0 || (mode == UnknownIDs) != (unknown == 2) || (mode == UnknownIDs) != (bad == 0) {
			t.Errorf("%s: exit %d, %d malformed and %d unknown-id lines\n%s", mode, code, bad, unknown, strings.Join(lines, "\n"))
		}
	}
}

func TestStdioExitMidCase(t *testing.T) {
	lines, code := serveInProcess(t, ExitMidCase, initReq, callReq)
	if code != ExitMidCaseCode {
		t.Errorf("exit code %d, want %d", code, ExitMidCaseCode)
	}
	// The one progress notification, and no answer to the call. Its place
	// among the earlier lines is not fixed: the input writes the call
	// without waiting for the initialize response, which the server may
	// still be writing when the call is seen.
	progress, answered := 0, false
	for _, l := range lines {
		m, err := jsonrpc.Decode([]byte(l))
		switch {
		case err != nil:
			t.Errorf("line %q: %v", l, err)
		case m.Method == "notifications/progress":
			progress++
		case m.Kind.IsResponse() && m.ID == jsonrpc.IntID(3):
			answered = true
		}
	}
	if progress != 1 || answered {
		t.Errorf("%d progress notifications, call answered %v; want 1 and no answer\n%s", progress, answered, strings.Join(lines, "\n"))
	}
}

// TestStdioProgressFloodIncreases: the flood and the server's own progress
// for the token form one strictly increasing sequence before the response.
func TestStdioProgressFloodIncreases(t *testing.T) {
	lines, _ := serveUntil(t, ProgressFlood, func(l string) bool { return strings.HasPrefix(l, `{"jsonrpc":"2.0","id":3,`) }, initReq, callReq)
	var n int
	last := 0.0
	answered := false
	for _, l := range lines {
		// Read cheaply: a million lines through the strict decoder would
		// take a minute under -race.
		if strings.HasPrefix(l, `{"jsonrpc":"2.0","method":"notifications/progress"`) {
			if answered {
				t.Fatalf("progress after the response: %s", l)
			}
			i := strings.Index(l, `"progress":`)
			rest := l[i+len(`"progress":`):]
			v, err := strconv.ParseFloat(rest[:strings.IndexAny(rest, ",}")], 64)
			if i < 0 || err != nil || v <= last {
				t.Fatalf("progress %v after %v (%v) in %s", v, last, err, l)
			}
			last = v
			n++
			continue
		}
		if m, err := jsonrpc.Decode([]byte(l)); err == nil && m.Kind.IsResponse() && m.ID.Key() == jsonrpc.IntID(3).Key() {
			answered = true
		}
	}
	if n != FloodCount+2 || !answered {
		t.Errorf("%d progress notifications, answered %v; want %d and the response", n, answered, FloodCount+2)
	}
}
