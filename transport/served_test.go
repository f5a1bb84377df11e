//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// freeAddr returns a loopback address with a port nothing listens on
// now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServed starts testdata/httpserve in mode on a free port.
func startServed(t *testing.T, ctx context.Context, mode string, cfg ServedConfig) (*Served, *chrono.Log, error) {
	t.Helper()
	bin, err := testdataBuilds.Command("httpserve")
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfg.Argv = []string{bin, "-mode", mode, "-http", addr}
	cfg.URL = "http://" + addr + "/mcp"
	if cfg.Log == nil {
		cfg.Log = chrono.New()
	}
	s, err := StartServed(ctx, cfg)
	if s != nil {
		t.Cleanup(func() { s.Close(closeCtx(t)) })
	}
	return s, cfg.Log, err
}

func stderrLines(log *chrono.Log) []string {
	var out []string
	for _, ev := range log.Events() {
		if ev.Kind == chrono.KindStderr {
			out = append(out, string(ev.Raw))
		}
	}
	return out
}

// notes returns the texts of log's notes on the served server's stderr.
func notes(log *chrono.Log) []string {
	var out []string
	for _, ev := range log.Events() {
		if ev.Kind == chrono.KindNote && ev.Channel == ServedStderrChannel {
			out = append(out, ev.Text)
		}
	}
	return out
}

// TestServedStderrGoesToItsSession starts a server that answers, attaches
// connections with a session ID, with one too short to tell anything by,
// and with none, and checks that a connection's chronology gets the lines
// that name its session and only those, once each, and a note counting
// every line printed while it was attached; that the server's own
// chronology has every line; and that SIGTERM stops the server.
func TestServedStderrGoesToItsSession(t *testing.T) {
	t.Parallel()
	s, own, err := startServed(t, context.Background(), "ok", ServedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// The readiness check's GET is logged by the server too: wait for its
	// line in the server's own chronology before anything attaches, so
	// that a late read of it cannot be counted. A line is shown to the
	// attached connections before the server's own chronology records it.
	awaitOwn := func(part string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		defer cancel()
		if _, err := own.WaitFor(ctx, 0, func(ev chrono.Event) bool {
			return ev.Kind == chrono.KindStderr && strings.Contains(string(ev.Raw), part)
		}); err != nil {
			t.Fatalf("the server's line with %q never came: %v\n%q", part, err, stderrLines(own))
		}
	}
	awaitOwn("GET /mcp")
	const (
		idA     = "sess-0123456789abcdef"
		idB     = "sess-fedcba9876543210"
		idShort = "sess-01" // names nothing: too short to be unique
	)
	twoConns := chrono.New() // a case with two connections
	short, none := chrono.New(), chrono.New()
	detaches := []func(){
		s.Attach(twoConns, func() string { return idA }),
		s.Attach(twoConns, func() string { return idB }),
		s.Attach(short, func() string { return idShort }),
		s.Attach(none, func() string { return "" }),
	}
	get := func(path string) {
		t.Helper()
		resp, err := http.Get(strings.TrimSuffix(s.cfg.URL, "/mcp") + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, path := range []string{"/" + idA, "/" + idB, "/other/" + idShort, "/" + idA + "/" + idB} {
		get(path)
	}
	awaitOwn("/" + idA + "/" + idB)
	for _, detach := range detaches {
		detach()
		detach() // a second call does nothing
	}
	get("/after/" + idA) // after the connections: its line is the server's alone
	awaitOwn("/after/" + idA)

	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepSIGTERM || td.ExitCode != 0 || td.Leftovers != 0 || td.Err != nil {
		t.Fatalf("teardown %+v, want exit 0 after SIGTERM, no leftovers", td)
	}
	waitGone(t, s.Pid())

	got := stderrLines(twoConns)
	want := []string{"GET /" + idA, "GET /" + idB, "GET /" + idA + "/" + idB}
	if len(got) != len(want) {
		t.Errorf("the two connections' chronology has %d stderr lines, want %d (those naming either session, once each): %q", len(got), len(want), got)
	}
	for i := range min(len(got), len(want)) {
		if !strings.HasSuffix(got[i], want[i]) {
			t.Errorf("line %d is %q, want one ending in %q", i, got[i], want[i])
		}
	}
	for _, ev := range twoConns.Events() {
		if ev.Kind == chrono.KindStderr && ev.Channel != ServedStderrChannel {
			t.Errorf("stderr event on channel %q, want %q", ev.Channel, ServedStderrChannel)
		}
	}
	for _, tt := range []struct {
		name string
		log  *chrono.Log
		want []string // each note's text contains its string
	}{
		{"two connections", twoConns, []string{"the 2 that name its session ID are recorded here", "the 2 that name its session ID are recorded here"}},
		{"a short ID", short, []string{"no session ID long enough to tell its own lines by"}},
		{"no ID", none, []string{"no session ID long enough to tell its own lines by"}},
	} {
		if lines := stderrLines(tt.log); tt.log != twoConns && len(lines) > 0 {
			t.Errorf("%s: the chronology has stderr lines, want none: %q", tt.name, lines)
		}
		ns := notes(tt.log)
		if len(ns) != len(tt.want) {
			t.Errorf("%s: %d notes, want %d: %q", tt.name, len(ns), len(tt.want), ns)
			continue
		}
		for i, n := range ns {
			if !strings.HasPrefix(n, "the served server printed 4 stderr lines while this connection was open; ") || !strings.Contains(n, tt.want[i]) {
				t.Errorf("%s: note %q, want 4 lines counted and %q", tt.name, n, tt.want[i])
			}
		}
	}
	ownLines := stderrLines(own)
	if n := strings.Count(strings.Join(ownLines, "\n"), idA); n != 3 {
		t.Errorf("the server's own chronology has %d lines naming %s, want all 3: %q", n, idA, ownLines)
	}
	if last := ownLines[len(ownLines)-1]; !strings.Contains(last, "got SIGTERM") {
		t.Errorf("the server's own chronology ends with %q, want its SIGTERM line (stderr drained before Close returned): %q", last, ownLines)
	}
}

// TestServedSessionBudget: a connection's chronology records the lines
// naming its session within a budget, counts the rest and records the
// last of them when it detaches.
func TestServedSessionBudget(t *testing.T) {
	t.Parallel()
	s, own, err := startServed(t, context.Background(), "ok", ServedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const id = "sess-0123456789abcdef"
	log := chrono.New()
	detach := s.Attach(log, func() string { return id })
	client := &http.Client{}
	defer client.CloseIdleConnections()
	over := 3
	for range servedSessionLines + over {
		resp, err := client.Get(strings.TrimSuffix(s.cfg.URL, "/mcp") + "/" + id)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// Every line is shown to the attached connections before the
	// server's own chronology records it.
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	seen := 0
	lastLine, err := own.WaitFor(ctx, 0, func(ev chrono.Event) bool {
		if ev.Kind == chrono.KindStderr && strings.HasSuffix(string(ev.Raw), "GET /"+id) {
			seen++
		}
		return seen == servedSessionLines+over
	})
	if err != nil {
		t.Fatalf("%d of the %d lines came: %v", seen, servedSessionLines+over, err)
	}
	last := string(lastLine.Raw)
	detach()
	lines := stderrLines(log)
	if len(lines) != servedSessionLines+over {
		t.Errorf("%d stderr lines recorded, want %d (the budget, then the last %d)", len(lines), servedSessionLines+over, over)
	}
	if len(lines) > 0 && lines[len(lines)-1] != last {
		t.Errorf("the last line recorded is %q, want the last one printed", lines[len(lines)-1])
	}
	ns := notes(log)
	want := fmt.Sprintf("%d name its session ID: the first %d are recorded here and the last %d follow", servedSessionLines+over, servedSessionLines, over)
	if len(ns) != 1 || !strings.Contains(ns[0], want) {
		t.Errorf("notes %q, want one saying %q", ns, want)
	}
}

// TestServedStartFailures covers servers that never come up: each start
// fails with one line naming the command, wrapping ErrServerNotReady,
// quoting the server's last words, and leaves no process behind.
func TestServedStartFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode    string
		timeout bool
		want    []string
	}{
		{"exit", false, []string{"exited with code 3 before", "fatal: no configuration found"}},
		{"never-listen", true, []string{"did not answer within", "connection refused", "waiting for a database", "got SIGTERM"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			// The timeout decides nothing for "exit", which must fail on
			// the exit itself, long before it.
			cfg := ServedConfig{StartTimeout: safety}
			if tt.timeout {
				cfg.StartTimeout = 300 * time.Millisecond // the thing tested
			}
			s, log, err := startServed(t, context.Background(), tt.mode, cfg)
			if s != nil || err == nil {
				t.Fatalf("StartServed = %v, %v; want an error", s, err)
			}
			if !errors.Is(err, ErrServerNotReady) {
				t.Errorf("error %v does not wrap ErrServerNotReady", err)
			}
			msg := err.Error()
			t.Logf("%s", msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range append([]string{"httpserve -mode " + tt.mode}, tt.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			pid := startedPid(t, log)
			waitGone(t, pid)
			if n, pids := GroupLeftovers(pid); n != 0 {
				t.Errorf("process group %d still has %v", pid, pids)
			}
		})
	}
}

// startedPid reads the pid from the chronology's start event.
func startedPid(t *testing.T, log *chrono.Log) int {
	t.Helper()
	for _, ev := range log.Events() {
		var pid int
		if _, err := fmt.Sscanf(ev.Text, "started pid %d", &pid); err == nil {
			return pid
		}
	}
	t.Fatal("no start event")
	return 0
}

// TestServedLadder checks the rungs: a server that ignores SIGTERM is
// killed with SIGKILL, a grandchild that ignores SIGTERM is swept with the
// group, and a server that exited on its own is graded StepNone.
func TestServedLadder(t *testing.T) {
	t.Parallel()
	t.Run("ignore-term", func(t *testing.T) {
		t.Parallel()
		s, log, err := startServed(t, context.Background(), "ignore-term", ServedConfig{TermGrace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		td := s.Close(closeCtx(t))
		if td.ExitedAfter != StepSIGKILL || td.Signal != "killed" || td.Leftovers != 0 {
			t.Fatalf("teardown %+v, want SIGKILL, no leftovers", td)
		}
		if !hasEvent(log, chrono.KindDeadline, "no exit within 200ms of SIGTERM") {
			t.Errorf("no deadline event for the ignored SIGTERM")
		}
		waitGone(t, s.Pid())
	})
	t.Run("spawn", func(t *testing.T) {
		t.Parallel()
		s, log, err := startServed(t, context.Background(), "spawn", ServedConfig{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		defer cancel()
		if _, err := log.WaitFor(ctx, 0, func(ev chrono.Event) bool {
			return strings.Contains(string(ev.Raw), "child: running")
		}); err != nil {
			t.Fatal(err)
		}
		td := s.Close(closeCtx(t))
		if td.ExitedAfter != StepSIGTERM || td.Leftovers != 0 || td.Err != nil {
			t.Fatalf("teardown %+v, want SIGTERM, the grandchild swept", td)
		}
		if !hasEvent(log, chrono.KindState, "leftover process(es) still running") {
			t.Errorf("the grandchild was not swept with SIGKILL")
		}
		if n, pids := GroupLeftovers(s.Pid()); n != 0 {
			t.Errorf("process group %d still has %v", s.Pid(), pids)
		}
	})
	t.Run("interrupted-start", func(t *testing.T) {
		t.Parallel()
		// Ctrl-C while waiting for the URL: the wait ends at once and
		// the server is stopped with the ladder.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := chrono.New()
		go func() {
			wctx, wcancel := context.WithTimeout(context.Background(), safety)
			defer wcancel()
			_, _ = log.WaitFor(wctx, 0, func(ev chrono.Event) bool {
				return strings.Contains(string(ev.Raw), "starting")
			})
			cancel()
		}()
		s, _, err := startServed(t, ctx, "never-listen", ServedConfig{Log: log, StartTimeout: 2 * safety})
		if s != nil || !errors.Is(err, context.Canceled) || !errors.Is(err, ErrServerNotReady) {
			t.Fatalf("StartServed = %v, %v; want ErrServerNotReady and context.Canceled", s, err)
		}
		pid := startedPid(t, log)
		if !hasEvent(log, chrono.KindState, "SIGTERM to process group") {
			t.Errorf("the server was not stopped with SIGTERM")
		}
		waitGone(t, pid)
	})
}

// TestStartServedErrors covers what fails before anything runs.
func TestStartServedErrors(t *testing.T) {
	t.Parallel()
	log := chrono.New()
	tests := []struct {
		name string
		cfg  ServedConfig
		want string
	}{
		{"no log", ServedConfig{Argv: []string{"true"}, URL: "http://127.0.0.1:1/"}, "Log is required"},
		{"bad url", ServedConfig{Argv: []string{"true"}, URL: "localhost:8080", Log: log}, "not an http:// or https:// URL"},
		{"no command", ServedConfig{URL: "http://127.0.0.1:1/", Log: log}, "no command to start the HTTP server"},
		{"not found", ServedConfig{Argv: []string{"/nonexistent/server"}, URL: "http://127.0.0.1:1/", Log: log}, "cannot start /nonexistent/server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := StartServed(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
