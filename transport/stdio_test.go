//go:build unix

package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/testchild"
)

// helperEnv selects the behaviour of TestHelperProcess in a child copy of
// the test binary.
const helperEnv = "MCPFLIGHT_TRANSPORT_HELPER"

// safety bounds every wait of these tests. It is a safety net against a
// hung test, never a synchronisation: nothing waits for it to pass.
const safety = 20 * time.Second

// TestHelperProcess is not a test: started by the tests below as a child
// process (the test binary re-executed with -test.run=^TestHelperProcess$
// and helperEnv set), it plays a stdio server.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the stdio tests")
	}
	os.Exit(runHelper(mode))
}

func helperArgv() []string {
	return []string{os.Args[0], "-test.run=^TestHelperProcess$"}
}

func runHelper(mode string) int {
	ready := func() { fmt.Println(`{"jsonrpc":"2.0","method":"ready"}`) }
	drainStdin := func() { _, _ = io.Copy(io.Discard, os.Stdin) }
	switch mode {
	case "echo": // echoes lines; exits 0 at end of stdin
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			if _, err := os.Stdout.Write(append(sc.Bytes(), '\n')); err != nil {
				return 2
			}
		}
		return 0
	case "ignore-eof": // stays after end of stdin; exits 0 on SIGTERM
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		ready()
		drainStdin()
		<-term
		return 0
	case "ignore-term": // stays after end of stdin and SIGTERM
		signal.Ignore(syscall.SIGTERM)
		ready()
		drainStdin()
		blockForever()
	case "no-read": // never reads stdin; default SIGTERM
		ready()
		blockForever()
	case "spawn", "spawn-hang": // starts a sleeper grandchild in its group
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), helperEnv+"=sleeper")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		drainStdin()
		if mode == "spawn-hang" {
			blockForever()
		}
		return 0 // without waiting for the grandchild
	case "sleeper": // tells its pid on stdout, then sleeps forever
		fmt.Printf(`{"jsonrpc":"2.0","method":"pid","params":{"pid":%d}}`+"\n", os.Getpid())
		blockForever()
	case "stderr-flood": // 1 MiB of stderr lines and one long line, then "done"
		w := bufio.NewWriter(os.Stderr)
		line := strings.Repeat("e", 63) + "\n"
		for range floodLines {
			_, _ = w.WriteString(line)
		}
		_, _ = w.WriteString(strings.Repeat("L", longLine) + "\r\n")
		if err := w.Flush(); err != nil {
			return 2
		}
		fmt.Println(`{"jsonrpc":"2.0","method":"done"}`)
		drainStdin()
		return 0
	case "big-frame": // one oversized frame, then a small one
		fmt.Println(`{"jsonrpc":"2.0","method":"big","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`)
		fmt.Println(`{"jsonrpc":"2.0","method":"after"}`)
		drainStdin()
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

const (
	floodLines = 16384 // of 64 bytes: 1 MiB
	longLine   = 10000
)

// blockForever parks the process on a pipe nobody writes to (the runtime
// does not call that a deadlock, as it would an empty select).
func blockForever() {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	_, _ = r.Read(make([]byte, 1))
	_ = w.Close()
	panic("unreachable")
}

// startHelper starts the test binary as a stdio server in the given mode.
func startHelper(t *testing.T, ctx context.Context, mode string, cfg StdioConfig) (*Stdio, *chrono.Log) {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = chrono.New()
	}
	cfg.Argv = helperArgv()
	// Under -race a program sleeps for a second as it exits; not here.
	cfg.Env = append(cfg.Env, helperEnv+"="+mode, testchild.RaceEnv())
	s, err := StartStdio(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		defer cancel()
		s.Close(ctx)
	})
	return s, cfg.Log
}

// next returns the next inbound frame.
func next(t *testing.T, c Conn) Inbound {
	t.Helper()
	timer := time.NewTimer(safety)
	defer timer.Stop()
	select {
	case in, ok := <-c.Inbound():
		if !ok {
			t.Fatalf("inbound closed early (err %v)", c.Err())
		}
		return in
	case <-timer.C:
		t.Fatal("no inbound frame within the safety deadline")
	}
	panic("unreachable")
}

// nextMethod returns the next inbound frame and checks its method.
func nextMethod(t *testing.T, c Conn, method string) Inbound {
	t.Helper()
	in := next(t, c)
	if in.Msg == nil || in.Msg.Method != method {
		t.Fatalf("got frame %q (err %v), want method %q", in.Raw, in.Err, method)
	}
	return in
}

// readPid reads the grandchild's pid announcement.
func readPid(t *testing.T, c Conn) int {
	t.Helper()
	in := nextMethod(t, c, "pid")
	var p struct{ Pid int }
	if err := json.Unmarshal(in.Msg.Params, &p); err != nil || p.Pid <= 0 {
		t.Fatalf("bad pid frame %q: %v", in.Raw, err)
	}
	return p.Pid
}

func closeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	t.Cleanup(cancel)
	return ctx
}

// waitGone observes /proc until pid has gone or is a zombie (reaped by
// whoever inherited it, or waiting to be). The ticker is an observation
// loop bounded by the safety deadline, not synchronisation: Close has
// already waited for the process group to empty.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(safety)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err == nil {
			if state, _, ok := parseProcStat(b); ok && (state == 'Z' || state == 'X') {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive: %s", pid, b)
		}
		<-tick.C
	}
}

func findEvents(log *chrono.Log, match func(chrono.Event) bool) []chrono.Event {
	var out []chrono.Event
	for _, e := range log.Events() {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

func hasEvent(log *chrono.Log, kind chrono.Kind, text string) bool {
	return len(findEvents(log, func(e chrono.Event) bool {
		return e.Kind == kind && strings.Contains(e.Text, text)
	})) > 0
}

func TestStdioEchoExitsAfterCloseInput(t *testing.T) {
	s, log := startHelper(t, t.Context(), "echo", StdioConfig{CloseGrace: safety, TermGrace: safety})
	if s.Pid() <= 0 {
		t.Fatalf("Pid() = %d", s.Pid())
	}
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
	}
	ctx := closeCtx(t)
	for _, f := range frames {
		if err := s.Send(ctx, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range frames {
		in := next(t, s)
		if in.Err != nil || string(in.Raw) != f {
			t.Fatalf("echo: got %q (err %v), want %q", in.Raw, in.Err, f)
		}
	}

	td := s.Close(ctx)
	want := Teardown{ExitedAfter: StepCloseInput, ExitCode: 0}
	if d := cmp.Diff(want, td, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Waited" }, cmp.Ignore())); d != "" {
		t.Errorf("teardown (-want +got):\n%s", d)
	}
	if td.Waited <= 0 {
		t.Errorf("Waited = %v, want > 0", td.Waited)
	}
	if again := s.Close(ctx); again != td {
		t.Errorf("second Close = %+v, want the same %+v", again, td)
	}
	select {
	case <-s.Exited():
	default:
		t.Error("Exited not closed after Close")
	}
	if code, sig, ok := s.ExitStatus(); code != 0 || sig != "" || !ok {
		t.Errorf("ExitStatus() = %d, %q, %v", code, sig, ok)
	}
	if err := s.Send(ctx, []byte(`{}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v, want ErrClosed", err)
	}

	// Every frame is in the chronology twice: out on stdin, then in on
	// stdout.
	for _, f := range frames {
		out := findEvents(log, func(e chrono.Event) bool {
			return e.Kind == chrono.KindFrame && e.Dir == chrono.Out && e.Channel == "stdin" && string(e.Raw) == f
		})
		in := findEvents(log, func(e chrono.Event) bool {
			return e.Kind == chrono.KindFrame && e.Dir == chrono.In && e.Channel == "stdout" && string(e.Raw) == f
		})
		if len(out) != 1 || len(in) != 1 || out[0].Seq >= in[0].Seq {
			t.Errorf("frame %s: out events %v, in events %v", f, out, in)
		}
	}
	exits := findEvents(log, func(e chrono.Event) bool { return e.Kind == chrono.KindExit })
	if len(exits) != 1 || exits[0].Dir != chrono.Harness || !strings.Contains(exits[0].Text, "exited with code 0") {
		t.Errorf("exit events: %+v", exits)
	}
	if !hasEvent(log, chrono.KindState, "closing stdin") || !hasEvent(log, chrono.KindState, "started pid") {
		t.Error("missing start or close-stdin event")
	}
	if hasEvent(log, chrono.KindDeadline, "") || hasEvent(log, chrono.KindState, "SIGTERM") {
		t.Error("ladder went past closing stdin")
	}
}

func TestStdioSIGTERMRung(t *testing.T) {
	grace := 200 * time.Millisecond
	s, log := startHelper(t, t.Context(), "ignore-eof", StdioConfig{CloseGrace: grace, TermGrace: safety})
	nextMethod(t, s, "ready") // its SIGTERM handler is installed
	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepSIGTERM || td.ExitCode != 0 || td.Signal != "" || td.Leftovers != 0 || td.Err != nil {
		t.Errorf("teardown = %+v, want exit 0 after SIGTERM", td)
	}
	if td.Waited < grace {
		t.Errorf("Waited = %v, want at least the close grace %v", td.Waited, grace)
	}
	if !hasEvent(log, chrono.KindDeadline, "of closing stdin") || !hasEvent(log, chrono.KindState, "SIGTERM to process group") {
		t.Error("missing deadline or SIGTERM event")
	}
	if hasEvent(log, chrono.KindState, "SIGKILL") {
		t.Error("SIGKILL sent though SIGTERM sufficed")
	}
}

func TestStdioSIGKILLRung(t *testing.T) {
	grace := 200 * time.Millisecond
	s, log := startHelper(t, t.Context(), "ignore-term", StdioConfig{CloseGrace: grace, TermGrace: grace})
	nextMethod(t, s, "ready") // SIGTERM is ignored from here
	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepSIGKILL || td.ExitCode != -1 || td.Signal != "killed" || td.Leftovers != 0 || td.Err != nil {
		t.Errorf("teardown = %+v, want killed after SIGKILL", td)
	}
	if td.Waited < 2*grace {
		t.Errorf("Waited = %v, want at least %v", td.Waited, 2*grace)
	}
	deadlines := findEvents(log, func(e chrono.Event) bool { return e.Kind == chrono.KindDeadline })
	if len(deadlines) != 2 {
		t.Errorf("deadline events: %+v, want two", deadlines)
	}
	if !hasEvent(log, chrono.KindState, "SIGKILL to process group") || !hasEvent(log, chrono.KindExit, "signal killed") {
		t.Error("missing SIGKILL or exit event")
	}
}

func TestStdioCloseContextSkipsToSIGKILL(t *testing.T) {
	s, log := startHelper(t, t.Context(), "ignore-term", StdioConfig{CloseGrace: safety, TermGrace: safety})
	nextMethod(t, s, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	td := s.Close(ctx)
	if td.ExitedAfter != StepSIGKILL || td.Signal != "killed" || td.Leftovers != 0 {
		t.Errorf("teardown = %+v, want SIGKILL at once", td)
	}
	if hasEvent(log, chrono.KindState, "SIGTERM") || !hasEvent(log, chrono.KindDeadline, "teardown context ended") {
		t.Error("ladder did not skip SIGTERM for the ended context")
	}
	if hasEvent(log, chrono.KindDeadline, "still blocked") {
		t.Error("reported a blocked write where there was none")
	}
}

func TestStdioCloseBreaksBlockedSend(t *testing.T) {
	s, log := startHelper(t, t.Context(), "no-read", StdioConfig{CloseGrace: 200 * time.Millisecond, TermGrace: safety})
	nextMethod(t, s, "ready")
	big := []byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", 1<<20) + `"}`)
	sent := make(chan error, 1)
	go func() { sent <- s.Send(context.Background(), big) }()
	// The frame is recorded under the write lock, before the write that
	// will fill the pipe: from here Send holds the lock.
	if _, err := log.WaitFor(closeCtx(t), 0, func(e chrono.Event) bool {
		return e.Kind == chrono.KindFrame && e.Dir == chrono.Out
	}); err != nil {
		t.Fatal(err)
	}
	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepSIGTERM || td.Signal != "terminated" || td.Leftovers != 0 {
		t.Errorf("teardown = %+v", td)
	}
	select {
	case err := <-sent:
		if err == nil {
			t.Error("blocked Send returned no error")
		}
	case <-time.After(safety):
		t.Fatal("Send still blocked after Close")
	}
	if !hasEvent(log, chrono.KindDeadline, "still blocked") {
		t.Error("missing event for the broken-off write")
	}
}

func TestStdioKillsLeftoverGrandchild(t *testing.T) {
	s, log := startHelper(t, t.Context(), "spawn", StdioConfig{CloseGrace: safety, TermGrace: safety})
	gpid := readPid(t, s)
	if gpid == s.Pid() {
		t.Fatal("grandchild has the leader's pid")
	}
	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepCloseInput || td.ExitCode != 0 || td.Leftovers != 0 || td.Err != nil {
		t.Errorf("teardown = %+v, want exit 0 after close-stdin and no leftovers", td)
	}
	if !hasEvent(log, chrono.KindState, fmt.Sprintf("1 leftover process(es) still running after the server exited (pids [%d])", gpid)) {
		t.Errorf("missing leftover-kill event; events:\n%v", log.Events())
	}
	waitGone(t, gpid)
}

func TestStdioStartContextCancelKillsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, log := startHelper(t, ctx, "spawn-hang", StdioConfig{})
	gpid := readPid(t, s)
	cancel()
	select {
	case <-s.Exited():
	case <-time.After(safety):
		t.Fatal("server still running after its context was cancelled")
	}
	waitGone(t, gpid)
	if code, sig, _ := s.ExitStatus(); code != -1 || sig != "killed" {
		t.Errorf("ExitStatus() = %d, %q; want killed", code, sig)
	}
	if !hasEvent(log, chrono.KindState, "run context ended") {
		t.Error("missing kill event for the cancelled context")
	}
	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepNone || td.Signal != "killed" || td.Leftovers != 0 || td.Waited != 0 {
		t.Errorf("teardown = %+v, want already killed", td)
	}
}

func TestStdioKill(t *testing.T) {
	s, _ := startHelper(t, t.Context(), "ignore-term", StdioConfig{CloseGrace: safety, TermGrace: safety})
	nextMethod(t, s, "ready")
	s.Kill()
	select {
	case <-s.Exited():
	case <-time.After(safety):
		t.Fatal("server still running after Kill")
	}
	td := s.Close(closeCtx(t))
	if td.ExitedAfter != StepNone || td.Signal != "killed" {
		t.Errorf("teardown = %+v", td)
	}
	s.Kill() // released: a no-op that must not signal a reused group id
}

func TestStdioStderrNeverBlocks(t *testing.T) {
	const max = 1000
	s, log := startHelper(t, t.Context(), "stderr-flood", StdioConfig{MaxStderrLine: max, CloseGrace: safety,
		MaxStderrLines: floodLines + 1, MaxStderrBytes: 2 << 20})
	// "done" comes after 1 MiB of stderr, far more than a pipe holds.
	nextMethod(t, s, "done")
	if td := s.Close(closeCtx(t)); td.ExitedAfter != StepCloseInput || td.ExitCode != 0 {
		t.Errorf("teardown = %+v", td)
	}
	lines := findEvents(log, func(e chrono.Event) bool { return e.Kind == chrono.KindStderr })
	if len(lines) != floodLines+1 {
		t.Fatalf("%d stderr events, want %d", len(lines), floodLines+1)
	}
	for _, e := range lines[:floodLines] {
		if e.Dir != chrono.In || e.Channel != "stderr" || string(e.Raw) != strings.Repeat("e", 63) || e.Truncated {
			t.Fatalf("bad stderr event %+v", e)
		}
	}
	last := lines[floodLines]
	if len(last.Raw) != max || last.Size != longLine || !last.Truncated {
		t.Errorf("long line: %d raw bytes, size %d, truncated %v; want %d, %d, true", len(last.Raw), last.Size, last.Truncated, max, longLine)
	}
}

// TestStdioStderrBudget floods stderr past the default budget: the first
// lines are recorded, then one note, the rest counted, and the last
// StderrTail lines (the long line last) recorded when stderr ends (STD-3).
func TestStdioStderrBudget(t *testing.T) {
	s, log := startHelper(t, t.Context(), "stderr-flood", StdioConfig{CloseGrace: safety})
	nextMethod(t, s, "done")
	if td := s.Close(closeCtx(t)); td.ExitedAfter != StepCloseInput {
		t.Errorf("teardown = %+v", td)
	}
	lines := findEvents(log, func(e chrono.Event) bool { return e.Kind == chrono.KindStderr })
	if len(lines) != DefaultMaxStderrLines+StderrTail {
		t.Fatalf("%d stderr events, want %d recorded and %d of the tail", len(lines), DefaultMaxStderrLines, StderrTail)
	}
	notes := findEvents(log, func(e chrono.Event) bool { return e.Kind == chrono.KindNote && e.Channel == "stderr" })
	if len(notes) != 2 || !strings.Contains(notes[0].Text, "budget") ||
		!strings.Contains(notes[1].Text, fmt.Sprintf("%d lines", floodLines+1-DefaultMaxStderrLines)) {
		t.Fatalf("notes = %+v, want the budget note and the count at the end", notes)
	}
	if notes[0].Seq > lines[DefaultMaxStderrLines].Seq || notes[1].Seq > lines[DefaultMaxStderrLines].Seq {
		t.Errorf("the notes must come before the tail")
	}
	last := lines[len(lines)-1]
	if last.Size != longLine || !last.Truncated || len(last.Raw) > stderrTailLine {
		t.Errorf("last tail line: %d raw bytes, size %d, truncated %v", len(last.Raw), last.Size, last.Truncated)
	}
	if string(lines[len(lines)-2].Raw) != strings.Repeat("e", 63) {
		t.Errorf("tail before the long line = %q", lines[len(lines)-2].Raw)
	}
}

func TestStdioFrameTooLarge(t *testing.T) {
	s, _ := startHelper(t, t.Context(), "big-frame", StdioConfig{MaxFrame: 1000})
	if in := next(t, s); !errors.Is(in.Err, ErrFrameTooLarge) || in.Msg != nil {
		t.Errorf("got %+v, want ErrFrameTooLarge", in)
	}
	nextMethod(t, s, "after")
	// The hole in the stream stays visible to whoever judges it.
	if err := s.Err(); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("Err() = %v, want ErrFrameTooLarge while reading goes on", err)
	}
}

func TestStdioShell(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
	}{
		{[]string{"echo hi | cat"}, []string{"hi"}},
		{[]string{"printf", `'%s\n'`, "a", `"b c"`}, []string{"a", "b c"}},
	}
	for _, tt := range tests {
		t.Run(tt.argv[0], func(t *testing.T) {
			log := chrono.New()
			s, err := StartStdio(t.Context(), StdioConfig{Argv: tt.argv, Shell: true, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for in := range s.Inbound() {
				got = append(got, string(in.Raw))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
			td := s.Close(closeCtx(t))
			if td.ExitCode != 0 || td.Leftovers != 0 || (td.ExitedAfter != StepNone && td.ExitedAfter != StepCloseInput) {
				t.Errorf("teardown = %+v", td)
			}
			if !hasEvent(log, chrono.KindState, "/bin/sh -c") {
				t.Error("start event does not show the shell command")
			}
		})
	}
}

func TestStdioEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	s, err := StartStdio(t.Context(), StdioConfig{
		Argv: []string{"/bin/sh", "-c", `printf '%s %s\n' "$MCPFLIGHT_X" "$(pwd -P)"`},
		Env:  []string{"MCPFLIGHT_X=1", "MCPFLIGHT_X=two"},
		Dir:  dir,
		Log:  chrono.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(closeCtx(t))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in := next(t, s); string(in.Raw) != "two "+real {
		t.Errorf("got %q, want %q", in.Raw, "two "+real)
	}
}

func TestStartStdioErrors(t *testing.T) {
	log := chrono.New()
	tests := []struct {
		name     string
		cfg      StdioConfig
		notFound bool
		mention  string
	}{
		{"not in PATH", StdioConfig{Argv: []string{"mcpflight-no-such-server", "--flag"}, Log: log}, true, "mcpflight-no-such-server --flag"},
		{"no such path", StdioConfig{Argv: []string{"/nonexistent/mcpflight-server"}, Log: log}, true, "/nonexistent/mcpflight-server"},
		{"missing interpreter", StdioConfig{Argv: []string{writeScript(t, "#!/nonexistent/interpreter\n")}, Log: log}, true, "interpreter"},
		{"not executable", StdioConfig{Argv: []string{"/dev/null"}, Log: log}, false, "not executable"},
		{"no such dir", StdioConfig{Argv: []string{"true"}, Dir: "/nonexistent/dir", Log: log}, false, "working directory"},
		{"empty argv", StdioConfig{Log: log}, false, "no command"},
		{"empty shell line", StdioConfig{Argv: []string{" "}, Shell: true, Log: log}, false, "no command"},
		{"no log", StdioConfig{Argv: []string{"true"}}, false, "Log is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := StartStdio(t.Context(), tt.cfg)
			if err == nil {
				s.Close(closeCtx(t))
				t.Fatal("started")
			}
			if errors.Is(err, ErrExecutableNotFound) != tt.notFound {
				t.Errorf("errors.Is(%v, ErrExecutableNotFound) = %v", err, !tt.notFound)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
	_, err := StartStdio(t.Context(), StdioConfig{Argv: []string{"mcpflight-no-such-server"}, Log: log})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("error %v does not wrap exec.ErrNotFound", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := StartStdio(ctx, StdioConfig{Argv: []string{"true"}, Log: log}); !errors.Is(err, context.Canceled) {
		t.Errorf("start with a cancelled context: %v", err)
	}
}

func writeScript(t *testing.T, text string) string {
	path := t.TempDir() + "/server"
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScanLines(t *testing.T) {
	type line struct {
		Raw  string
		Size int
	}
	tests := []struct {
		name string
		in   string
		max  int
		want []line
	}{
		{"empty", "", 10, nil},
		{"lines", "a\nbb\n", 10, []line{{"a", 1}, {"bb", 2}}},
		{"crlf", "a\r\nb\r\n", 10, []line{{"a", 1}, {"b", 1}}},
		{"empty lines", "\n\r\n\n", 10, []line{{"", 0}, {"", 0}, {"", 0}}},
		{"no final newline", "a\nb", 10, []line{{"a", 1}, {"b", 1}}},
		{"lone cr kept", "a\rb\n", 10, []line{{"a\rb", 3}}},
		{"exact max", "12345\n", 5, []line{{"12345", 5}}},
		{"exact max crlf", "12345\r\n", 5, []line{{"12345", 5}}},
		{"over max", "123456\nok\n", 5, []line{{"12345", 6}, {"ok", 2}}},
		{"over max crlf", "123456\r\nok", 5, []line{{"12345", 6}, {"ok", 2}}},
		{"over buffer", strings.Repeat("x", 200000) + "\r\nok\n", 3, []line{{"xxx", 200000}, {"ok", 2}}},
		{"cr at buffer edge", strings.Repeat("x", 64<<10-1) + "\r\n", 2, []line{{"xx", 64<<10 - 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []line
			err := scanLines(strings.NewReader(tt.in), tt.max, func(raw []byte, size int) {
				got = append(got, line{string(raw), size})
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	state, pg, ok := parseProcStat([]byte("4242 (a (b) c) S 1 4240 4240 0 -1 4194560 ...\n"))
	if !ok || state != 'S' || pg != 4240 {
		t.Errorf("got %c %d %v", state, pg, ok)
	}
	if _, _, ok := parseProcStat([]byte("garbage")); ok {
		t.Error("parsed garbage")
	}
}

// BenchmarkStdioRoundTrip measures request-reply round trips per second to
// a child process that echoes each line.
func BenchmarkStdioRoundTrip(b *testing.B) {
	s, err := StartStdio(b.Context(), StdioConfig{
		Argv: helperArgv(),
		Env:  []string{helperEnv + "=echo", testchild.RaceEnv()},
		Log:  chrono.New(),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	ctx := b.Context()
	b.ResetTimer()
	for range b.N {
		if err := s.Send(ctx, frame); err != nil {
			b.Fatal(err)
		}
		if in := <-s.Inbound(); in.Err != nil {
			b.Fatal(in.Err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func TestStdioStartContextCancelDuringClose(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, log := startHelper(t, ctx, "ignore-term", StdioConfig{CloseGrace: safety, TermGrace: safety})
	nextMethod(t, s, "ready")
	done := make(chan Teardown, 1)
	go func() { done <- s.Close(closeCtx(t)) }()
	if _, err := log.WaitFor(closeCtx(t), 0, func(e chrono.Event) bool {
		return e.Kind == chrono.KindState && e.Text == "closing stdin"
	}); err != nil {
		t.Fatal(err)
	}
	cancel() // as on Ctrl-C, while the ladder waits on its first rung
	select {
	case td := <-done:
		if td.ExitedAfter != StepSIGKILL || td.Signal != "killed" || td.Leftovers != 0 {
			t.Errorf("teardown = %+v, want graded as ended by SIGKILL", td)
		}
	case <-time.After(safety):
		t.Fatal("Close did not return after the start context was cancelled")
	}
}

// TestProcCPUCountsWaitedChildren: a process's CPU, as the busy-start
// judgement reads it, includes the children it has waited for (cutime,
// cstime): a start script that runs one short command after another
// spends its time in them, and must not look idle.
func TestProcCPUCountsWaitedChildren(t *testing.T) {
	stat := []byte("4242 (sh (a) b) S 1 4242 4242 0 -1 4194304 100 0 0 0 3 2 40 5 20 0 1 0 100 1000 10")
	ticks, pg, ok := procCPU(stat)
	if !ok || pg != 4242 || ticks != 3+2+40+5 {
		t.Errorf("procCPU = %d ticks, group %d, %v; want 50 ticks (own 5, children 45), group 4242", ticks, pg, ok)
	}
	if _, _, ok := procCPU([]byte("4242 (sh) S 1 4242")); ok {
		t.Error("a cut stat line read as ok")
	}
}
