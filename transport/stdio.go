//go:build unix

package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/proc"
)

// Defaults of StdioConfig.
const (
	// DefaultCloseGrace is how long Close waits for the server to exit
	// after closing its stdin before sending SIGTERM (STD-7).
	DefaultCloseGrace = 2 * time.Second
	// DefaultTermGrace is how long Close waits after SIGTERM before
	// sending SIGKILL (STD-7).
	DefaultTermGrace = 2 * time.Second
	// DefaultMaxStderrLine bounds the bytes kept of one stderr line.
	DefaultMaxStderrLine = 16 << 10
	// DefaultMaxStderrLines and DefaultMaxStderrBytes are the budget of
	// stderr recorded per connection: past either, lines are counted,
	// not recorded, except the last StderrTail lines, recorded when
	// stderr ends (a chatty server's last words).
	DefaultMaxStderrLines = 1000
	DefaultMaxStderrBytes = 256 << 10
	// StderrTail is how many of the unrecorded last stderr lines are kept
	// and recorded when stderr ends.
	StderrTail = 10
	// stderrTailLine bounds the bytes kept of one tail line.
	stderrTailLine = 1 << 10
)

const (
	// killWait bounds the waits after SIGKILL, which a process cannot
	// refuse; only one stuck in uninterruptible sleep outlasts it.
	killWait = 5 * time.Second
	// drainGrace bounds how long the child's stdout and stderr may stay
	// open once its process group is gone. Only a process outside the
	// group that inherited the pipes can hold them open that long.
	drainGrace = time.Second
	// procChannel names the chronology channel of process events.
	procChannel = "process"
	// stderrChannel names the chronology channel of a stdio server's
	// stderr.
	stderrChannel = "stderr"
)

// ErrExecutableNotFound is matched (errors.Is) by the error of StartStdio
// when the server's executable, or the interpreter named by its #! line,
// does not exist. The error also wraps the underlying os/exec error.
var ErrExecutableNotFound = proc.ErrExecutableNotFound

// StdioConfig configures a stdio server started as a child process
// (STD-1: newline-delimited JSON-RPC on stdin and stdout, logs on stderr).
type StdioConfig struct {
	// Argv is the command and its arguments, run directly without a shell
	// (see SplitArgs to build it from one string).
	Argv []string
	// Shell runs the command through /bin/sh -c instead; Argv is then
	// joined with spaces into the one shell command line.
	Shell bool
	// Env holds KEY=VALUE entries added to the harness's own environment;
	// a later entry overrides an earlier one with the same key.
	Env []string
	// Dir is the working directory; the harness's own if empty.
	Dir string
	// Log is the chronology that receives every frame, stderr line and
	// process event. Required.
	Log *chrono.Log
	// MaxFrame limits inbound frames; DefaultMaxFrame if zero.
	MaxFrame int
	// CloseGrace is the wait after closing stdin before SIGTERM, and
	// TermGrace the wait after SIGTERM before SIGKILL (STD-7);
	// DefaultCloseGrace and DefaultTermGrace if zero.
	CloseGrace, TermGrace time.Duration
	// MaxStderrLine bounds the bytes recorded of one stderr line; longer
	// lines are recorded truncated, with their full size.
	// DefaultMaxStderrLine if zero.
	MaxStderrLine int
	// MaxStderrLines and MaxStderrBytes are the stderr budget of the
	// connection: the lines recorded one by one. Past it one note says
	// so, later lines are only counted, and the last StderrTail of them
	// are recorded when stderr ends. DefaultMaxStderrLines and
	// DefaultMaxStderrBytes if zero.
	MaxStderrLines, MaxStderrBytes int
}

// Stdio is a stdio server running as a child process: a Conn whose frames
// go to the child's stdin and come from its stdout (STD-1). The child runs
// in a process group of its own, so that signals reach every process it
// starts and none outlives the run.
//
// The child's stderr is read continuously, so a chatty server never blocks
// on it (STD-3), and recorded line by line as chrono.KindStderr events; it
// is logging, never protocol or in itself a sign of error (STD-2, STD-3,
// STD-40). The child's exit is recorded as a chrono.KindExit event. Close
// must be called to reap and grade it.
type Stdio struct {
	*Stream
	*child

	cfg    StdioConfig
	log    *chrono.Log
	stdin  *stdinWriter
	stdout *os.File

	closeOnce     sync.Once
	exitedEarly   bool          // the leader had exited before Close
	ladderEntered chan struct{} // closed when Stream.Close hands over to the ladder
}

// child is a process running in a process group of its own, whose stderr
// is recorded line by line within a budget and whose exit is recorded and
// reaped: what Stdio and Served share, with the rungs of the shutdown
// ladder from SIGTERM on and the sweep of the group that ends it.
type child struct {
	log *chrono.Log
	cmd *exec.Cmd
	pid int // also the process group id

	// stderrChannel names the chronology channel of its stderr lines.
	stderrChannel string
	// maxStderrLine, maxStderrLines and maxStderrBytes are the stderr
	// budget (see StdioConfig).
	maxStderrLine, maxStderrLines, maxStderrBytes int
	// onStderr, when not nil, sees every stderr event as it is recorded
	// (lines, and the notes about the budget), from the stderr reader.
	onStderr func(chrono.Event)
	// onStderrLine, when not nil, sees every stderr line as it is read,
	// within the budget or past it, from the stderr reader; raw is
	// reused after it returns.
	onStderrLine func(raw []byte, size int)

	stderr     *os.File
	stderrDone chan struct{}

	exited     chan struct{} // closed once the leader has been reaped
	exitAt     time.Time
	exitCode   int
	exitSignal string
	exitSig    syscall.Signal // 0 unless a signal ended the leader
	waitErr    error
	sentKill   atomic.Bool // the harness has sent SIGKILL to the group

	closed chan struct{} // closed when the ladder has finished
	// released is set once the leader is reaped and its group is empty:
	// from then on the group id may be reused and must not be signalled.
	released atomic.Bool
}

var _ Conn = (*Stdio)(nil)

// StartStdio starts the server and returns the connection to it.
//
// ctx bounds the life of the process, as with exec.CommandContext: when it
// ends, the whole process group is killed with SIGKILL. Pass the run's root
// context (the one cancelled on SIGINT), not a start-up timeout. Close
// must still be called.
func StartStdio(ctx context.Context, cfg StdioConfig) (*Stdio, error) {
	if cfg.Log == nil {
		return nil, errors.New("transport: StdioConfig.Log is required")
	}
	display, err := commandLine(ctx, cfg.Argv, cfg.Shell, "stdio")
	if err != nil {
		return nil, err
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = DefaultCloseGrace
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = DefaultTermGrace
	}
	stderrDefaults(&cfg.MaxStderrLine, &cfg.MaxStderrLines, &cfg.MaxStderrBytes)
	cmd, err := prepareCommand(cfg.Argv, cfg.Shell, cfg.Env, cfg.Dir, display)
	if err != nil {
		return nil, err
	}

	// Plain pipes handed to the child as files: os/exec then starts no
	// copying goroutines, Wait does not touch our ends, and our ends stay
	// in the runtime poller (deadlines, Close unblocking a Read or Write).
	var fds []*os.File
	closeAll := func() {
		for _, f := range fds {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			fds = append(fds, r, w)
		}
		return r, w, err
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: stdin pipe: %w", err)
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("transport: stdout pipe: %w", err)
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("transport: stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, startError(display, err)
	}
	// The child holds its own copies now; ours would keep the pipes open.
	_, _, _ = stdinR.Close(), stdoutW.Close(), stderrW.Close()

	c := newChild(cmd, stderrR, cfg.Log, stderrChannel, cfg.MaxStderrLine, cfg.MaxStderrLines, cfg.MaxStderrBytes)
	s := &Stdio{
		child:         c,
		cfg:           cfg,
		log:           cfg.Log,
		stdin:         &stdinWriter{f: stdinW},
		stdout:        stdoutR,
		ladderEntered: make(chan struct{}),
	}
	c.logStarted(display)
	s.Stream = NewStream(&stdoutReader{f: stdoutR, log: s.log}, s.stdin, StreamConfig{
		Log:        s.log,
		InChannel:  "stdout",
		OutChannel: "stdin",
		MaxFrame:   cfg.MaxFrame,
		OnClose:    s.ladder,
	})
	c.run(ctx)
	return s, nil
}

// commandLine checks that there is a command to run and that ctx has not
// ended, and returns the command as it would be typed. what names the
// server kind in the error ("stdio", "HTTP").
func commandLine(ctx context.Context, argv []string, shell bool, what string) (string, error) {
	argv = shellArgv(argv, shell)
	if len(argv) == 0 || argv[0] == "" {
		return "", fmt.Errorf("transport: no command to start the %s server", what)
	}
	display := QuoteArgs(argv)
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("transport: not starting %s: %w", display, err)
	}
	return display, nil
}

// stderrDefaults puts the default stderr budget in the fields left zero.
func stderrDefaults(line, lines, bytes *int) {
	for _, f := range []struct {
		v   *int
		def int
	}{{line, DefaultMaxStderrLine}, {lines, DefaultMaxStderrLines}, {bytes, DefaultMaxStderrBytes}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
}

// shellArgv is argv as run: through /bin/sh -c, joined with spaces, when
// shell is set; nil when that leaves no command.
func shellArgv(argv []string, shell bool) []string {
	if !shell {
		return argv
	}
	line := strings.Join(argv, " ")
	if strings.TrimSpace(line) == "" {
		return nil
	}
	return []string{"/bin/sh", "-c", line}
}

// prepareCommand builds the command of a child in a process group of its
// own (so that signals reach every process it starts), with env added to
// the harness's environment and dir as its working directory.
func prepareCommand(argv []string, shell bool, env []string, dir, display string) (*exec.Cmd, error) {
	cmd, err := proc.Command(shellArgv(argv, shell), env, dir, display)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	return cmd, nil
}

// newChild is the child of a started cmd whose stderr is read from
// stderr; run starts watching it.
func newChild(cmd *exec.Cmd, stderr *os.File, log *chrono.Log, channel string, maxLine, maxLines, maxBytes int) *child {
	return &child{
		log:            log,
		cmd:            cmd,
		pid:            cmd.Process.Pid,
		stderrChannel:  channel,
		maxStderrLine:  maxLine,
		maxStderrLines: maxLines,
		maxStderrBytes: maxBytes,
		stderr:         stderr,
		stderrDone:     make(chan struct{}),
		exited:         make(chan struct{}),
		exitCode:       -1,
		closed:         make(chan struct{}),
	}
}

// logStarted records the start of the child.
func (s *child) logStarted(display string) {
	s.log.Harness(chrono.KindState, procChannel,
		fmt.Sprintf("started pid %d in process group %d: %s", s.pid, s.pid, display))
}

// run starts reading stderr, reaping the leader, and killing the group
// when ctx ends before the ladder has finished.
func (s *child) run(ctx context.Context) {
	go s.drainStderr()
	go s.wait()
	go s.watch(ctx)
}

// startError explains why the command could not start, naming it.
func startError(display string, err error) error {
	return fmt.Errorf("transport: %w", proc.StartError(display, err))
}

// Pid is the server's process id, which is also its process group id.
func (s *child) Pid() int { return s.pid }

// Exited is closed once the server process has exited and been reaped.
// Processes it started may still be running until Close.
func (s *child) Exited() <-chan struct{} { return s.exited }

// ExitStatus reports, once Exited is closed, the exit code (-1 if a signal
// ended the process) and the name of that signal. ok is false before.
func (s *child) ExitStatus() (code int, signal string, ok bool) {
	select {
	case <-s.exited:
		return s.exitCode, s.exitSignal, true
	default:
		return -1, "", false
	}
}

// Kill sends SIGKILL to the server's whole process group at once and
// returns without waiting. It is meant for signal handlers and other
// emergencies; Close is still needed to reap and grade the server. Kill is
// a no-op once Close has finished.
func (s *child) Kill() {
	s.killGroup("Kill called")
}

// Close runs the stdio shutdown ladder of the spec (STD-7, STD-44, STD-45)
// and grades it: close the server's stdin; wait up to CloseGrace for it to
// exit; send SIGTERM to its process group; wait up to TermGrace; send
// SIGKILL to the group. Every rung, and every wait that expires, is
// recorded in the chronology. If ctx ends during the ladder, Close goes
// straight to SIGKILL. Teardown.ExitedAfter is the last rung needed:
// StepCloseInput for a server that exits on end of input as it should
// (STD-46), StepNone if it had exited before Close.
//
// Whatever the server did, Close ends by killing whatever is left of its
// process group, so that no descendant outlives the run, and counts the
// processes still alive after that in Teardown.Leftovers (zero unless the
// kernel could not kill them).
//
// A write to stdin blocked because the server does not read its input is
// broken off after CloseGrace (or when ctx ends), so Close cannot hang on
// it. Close is safe to call more than once and from several goroutines;
// every call returns the same Teardown.
func (s *Stdio) Close(ctx context.Context) Teardown {
	s.closeOnce.Do(func() {
		select {
		case <-s.exited:
			s.exitedEarly = true
		default:
		}
		go s.unblockStdin(ctx)
	})
	// Stream.Close closes stdin (the first rung) and then runs s.ladder.
	return s.Stream.Close(ctx)
}

// unblockStdin breaks off a Send blocked on a full stdin pipe, which would
// otherwise keep Stream.Close from taking the writer and starting the
// ladder. A write deadline in the past fails the write in flight (and any
// that follows) without closing the pipe under the Stream.
func (s *Stdio) unblockStdin(ctx context.Context) {
	t := time.NewTimer(s.cfg.CloseGrace)
	defer t.Stop()
	select {
	case <-s.ladderEntered:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	blocked := s.stdin.writing.Load() > 0
	if err := s.stdin.f.SetWriteDeadline(time.Unix(1, 0)); err != nil {
		return // already closed: Stream.Close got through
	}
	if blocked {
		s.log.Harness(chrono.KindDeadline, "stdin",
			"a write to stdin is still blocked (the server is not reading its input); breaking it off to close stdin")
	}
}

// ladder is the Stream's OnClose: stdin is already closed when it runs.
func (s *Stdio) ladder(ctx context.Context) Teardown {
	close(s.ladderEntered)
	return s.teardown(ctx, s.exitedEarly, s.escalate, func() time.Time { return s.stdin.closedAt }, s.drainOutputs)
}

// teardown climbs the ladder with escalate unless the leader had exited
// before (early), grades the exit, kills whatever is left of the group and
// waits for it to be gone, and runs drain to let the outputs run dry.
// Waited counts from firstRung's time.
func (s *child) teardown(ctx context.Context, early bool, escalate func(context.Context) (Step, error), firstRung func() time.Time, drain func()) Teardown {
	defer close(s.closed)

	td := Teardown{ExitedAfter: StepNone, ExitCode: -1}
	var errs []error
	if early {
		s.log.Harness(chrono.KindNote, procChannel, "process had already exited before close")
	} else {
		step, err := escalate(ctx)
		td.ExitedAfter = step
		if err != nil {
			errs = append(errs, err)
		}
	}
	reaped := false
	select {
	case <-s.exited:
		reaped = true
		td.ExitCode, td.Signal = s.exitCode, s.exitSignal
		if td.ExitedAfter != StepNone {
			td.Waited = max(s.exitAt.Sub(firstRung()), 0)
			if s.exitSig == syscall.SIGKILL && s.sentKill.Load() {
				// Killed by Kill or the start context during the
				// ladder: whatever rung it was on, SIGKILL ended it.
				td.ExitedAfter = StepSIGKILL
			}
		}
		if s.waitErr != nil {
			errs = append(errs, s.waitErr)
		}
	default:
	}

	// The leader is gone (or unkillable); now its descendants.
	if n, pids := GroupLeftovers(s.pid); n > 0 {
		s.signalGroup(syscall.SIGKILL, fmt.Sprintf("%d leftover process(es) still running after the server exited (pids %v)", n, pids))
	}
	td.Leftovers = s.waitGroupGone(killWait)
	if td.Leftovers > 0 {
		errs = append(errs, fmt.Errorf("transport: %d process(es) of group %d still alive after SIGKILL", td.Leftovers, s.pid))
	} else if reaped {
		s.released.Store(true)
	}

	drain()

	td.Err = errors.Join(errs...)
	s.log.Harness(chrono.KindState, procChannel, fmt.Sprintf(
		"teardown done: exited after %s, waited %v, exit code %d%s, %d leftover process(es)",
		td.ExitedAfter, td.Waited.Round(time.Millisecond), td.ExitCode, signalSuffix(td.Signal), td.Leftovers))
	return td
}

func signalSuffix(sig string) string {
	if sig == "" {
		return ""
	}
	return ", signal " + sig
}

// escalate climbs the ladder from the closed stdin up to SIGKILL and
// returns the last rung that was needed.
func (s *Stdio) escalate(ctx context.Context) (Step, error) {
	if s.waitRung(ctx, s.cfg.CloseGrace, "closing stdin") {
		return StepCloseInput, nil
	}
	return s.signalRungs(ctx, StepCloseInput, s.cfg.TermGrace)
}

// signalRungs climbs the signal rungs of the ladder: SIGTERM to the group,
// up to termGrace for the leader to exit, then SIGKILL (at once if ctx has
// ended). last is the rung climbed before, returned if the group turns
// out to be gone before a signal.
func (s *child) signalRungs(ctx context.Context, last Step, termGrace time.Duration) (Step, error) {
	if ctx.Err() == nil {
		if !s.signalRung(syscall.SIGTERM) {
			return last, s.awaitReaped()
		}
		last = StepSIGTERM
		if s.waitRung(ctx, termGrace, "SIGTERM") {
			return last, nil
		}
	}
	if !s.signalRung(syscall.SIGKILL) {
		return last, s.awaitReaped()
	}
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-s.exited:
		return StepSIGKILL, nil
	case <-t.C:
		s.log.Harness(chrono.KindDeadline, procChannel, fmt.Sprintf("pid %d still running %v after SIGKILL", s.pid, killWait))
		return StepSIGKILL, fmt.Errorf("transport: pid %d did not exit within %v of SIGKILL", s.pid, killWait)
	}
}

// waitRung waits up to d for the leader to exit, and records a deadline
// event if it does not. It reports whether the leader exited.
func (s *child) waitRung(ctx context.Context, d time.Duration, after string) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var why string
	select {
	case <-s.exited:
		return true
	case <-t.C:
		why = fmt.Sprintf("no exit within %v of %s (STD-7)", d, after)
	case <-ctx.Done():
		why = fmt.Sprintf("teardown context ended (%v) while waiting for exit after %s; escalating to SIGKILL", ctx.Err(), after)
	}
	select {
	case <-s.exited: // exited as the wait ran out: it made it
		return true
	default:
	}
	s.log.Harness(chrono.KindDeadline, procChannel, why)
	return false
}

// signalRung records sig and sends it to the group. It reports false when
// the group was already gone, meaning the leader exited before the signal.
func (s *child) signalRung(sig syscall.Signal) bool {
	return s.signalGroup(sig, "shutdown ladder (STD-7)")
}

// signalGroup records sig and sends it to the process group. The record
// comes first so that the chronology shows the signal before the exit it
// causes. It reports false when the group was already gone.
func (s *child) signalGroup(sig syscall.Signal, reason string) bool {
	s.log.Harness(chrono.KindState, procChannel, fmt.Sprintf("%s to process group %d: %s", signalName(sig), s.pid, reason))
	if sig == syscall.SIGKILL {
		// Before the signal: the ladder may see the exit it causes
		// before this goroutine runs again.
		s.sentKill.Store(true)
	}
	err := syscall.Kill(-s.pid, sig)
	switch {
	case errors.Is(err, syscall.ESRCH):
		s.log.Harness(chrono.KindNote, procChannel, fmt.Sprintf("%s not delivered: process group %d already gone", signalName(sig), s.pid))
		return false
	case err != nil:
		s.log.Harness(chrono.KindError, procChannel, fmt.Sprintf("%s to process group %d: %v", signalName(sig), s.pid, err))
	}
	return true
}

// awaitReaped waits for the wait goroutine after the group was found gone.
func (s *child) awaitReaped() error {
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-s.exited:
		return nil
	case <-t.C:
		return fmt.Errorf("transport: process group %d is gone but pid %d was not reaped", s.pid, s.pid)
	}
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return sig.String()
}

// killGroup sends SIGKILL to the group unless Close has released it.
func (s *child) killGroup(reason string) {
	if s.released.Load() {
		return
	}
	s.signalGroup(syscall.SIGKILL, reason)
}

// watch kills the group when the start context ends before Close is done.
func (s *child) watch(ctx context.Context) {
	select {
	case <-ctx.Done():
		s.killGroup(fmt.Sprintf("run context ended (%v)", context.Cause(ctx)))
	case <-s.closed:
	}
}

// wait reaps the leader and records its exit.
func (s *child) wait() {
	err := s.cmd.Wait()
	s.exitAt = time.Now()
	var text string
	if st := s.cmd.ProcessState; st == nil {
		s.waitErr = fmt.Errorf("transport: waiting for pid %d: %w", s.pid, err)
		text = s.waitErr.Error()
	} else {
		s.exitCode = st.ExitCode()
		ws, _ := st.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			s.exitSig = ws.Signal()
			s.exitSignal = s.exitSig.String()
			text = fmt.Sprintf("pid %d ended by signal %s", s.pid, s.exitSignal)
			if ws.CoreDump() {
				text += " (core dumped)"
			}
		default:
			text = fmt.Sprintf("pid %d exited with code %d", s.pid, s.exitCode)
		}
	}
	s.log.Harness(chrono.KindExit, procChannel, text)
	close(s.exited)
}

// drainStderr records the child's stderr line by line until it ends,
// within the connection's stderr budget, so that a firehose (STD-3 allows
// any amount of logging) neither eats memory nor fills the chronology.
func (s *child) drainStderr() {
	defer close(s.stderrDone)
	defer s.stderr.Close()
	b := stderrBudget{lines: s.maxStderrLines, bytes: s.maxStderrBytes}
	err := scanLines(s.stderr, s.maxStderrLine, func(raw []byte, size int) {
		if s.onStderrLine != nil {
			s.onStderrLine(raw, size)
		}
		if b.take(raw, size) {
			s.recordStderr(raw, size)
			return
		}
		if b.skipped == 1 {
			s.stderrNote(chrono.KindNote, fmt.Sprintf(
				"stderr budget of %d lines or %d bytes reached: later lines are counted, not recorded; the last %d are recorded when stderr ends",
				s.maxStderrLines, s.maxStderrBytes, StderrTail))
		}
	})
	if b.skipped > 0 {
		tail := b.lastLines()
		s.stderrNote(chrono.KindNote, fmt.Sprintf(
			"stderr ended: %d lines (%d bytes) past the budget were not recorded; the last %d of them follow",
			b.skipped, b.skippedBytes, len(tail)))
		for _, l := range tail {
			s.recordStderr(l.raw, l.size)
		}
	}
	switch {
	case err == nil, errors.Is(err, os.ErrClosed):
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.stderrNote(chrono.KindNote,
			"stderr still open after the process group ended (inherited by a process outside the group?); no longer reading it")
	default:
		s.stderrNote(chrono.KindError, "reading stderr: "+err.Error())
	}
}

func (s *child) recordStderr(raw []byte, size int) {
	ev := s.log.Append(chrono.Event{
		Dir: chrono.In, Channel: s.stderrChannel, Kind: chrono.KindStderr,
		Raw: raw, Size: size, Truncated: len(raw) < size,
	})
	if s.onStderr != nil {
		s.onStderr(ev)
	}
}

// stderrNote records a harness note about stderr.
func (s *child) stderrNote(kind chrono.Kind, text string) {
	ev := s.log.Harness(kind, s.stderrChannel, text)
	if s.onStderr != nil {
		s.onStderr(ev)
	}
}

// stderrBudget decides which stderr lines are recorded: the first ones,
// up to a number of lines and of bytes. Of the rest it counts lines and
// bytes and keeps the last StderrTail lines in a ring of reused buffers.
type stderrBudget struct {
	lines, bytes          int // what is left to record
	skipped, skippedBytes int64
	tail                  [StderrTail]tailLine
	next                  int // ring position of the next tail line
}

type tailLine struct {
	raw  []byte
	size int
}

// take reports whether the line is within budget, and if it is not,
// counts it and keeps it in the tail.
func (b *stderrBudget) take(raw []byte, size int) bool {
	if b.skipped == 0 && b.lines > 0 && len(raw) <= b.bytes {
		b.lines--
		b.bytes -= len(raw)
		return true
	}
	b.skipped++
	b.skippedBytes += int64(size)
	t := &b.tail[b.next]
	t.raw = append(t.raw[:0], raw[:min(len(raw), stderrTailLine)]...)
	t.size = size
	b.next = (b.next + 1) % StderrTail
	return false
}

// lastLines returns the kept tail, oldest first.
func (b *stderrBudget) lastLines() []tailLine {
	n := int(min(b.skipped, StderrTail))
	out := make([]tailLine, 0, n)
	for i := range n {
		out = append(out, b.tail[(b.next-n+i+StderrTail)%StderrTail])
	}
	return out
}

// drainOutputs lets the pipes run dry once the group is gone: the stderr
// reader is waited for, so every line is in the chronology when Close
// returns; stdout is read by the Stream, which is not waited for because
// its reader may be held up by a consumer that stopped reading Inbound.
func (s *Stdio) drainOutputs() {
	_ = s.stdout.SetReadDeadline(time.Now().Add(drainGrace))
	s.drainStderrOut()
}

// drainStderrOut waits, up to drainGrace, for the stderr reader to reach
// the end of stderr, once the group is gone.
func (s *child) drainStderrOut() {
	_ = s.stderr.SetReadDeadline(time.Now().Add(drainGrace))
	// The deadline ends the read; the timer only guards against a pipe
	// that does not support deadlines.
	t := time.NewTimer(2 * drainGrace)
	defer t.Stop()
	select {
	case <-s.stderrDone:
	case <-t.C:
		s.log.Harness(chrono.KindDeadline, s.stderrChannel, "stderr reader still busy; leaving it behind")
	}
}

// scanLines calls emit for each line of r, without its line ending ("\n"
// or "\r\n"), keeping at most max bytes of it; size is the line's full
// length. A final line without a newline is emitted too. It returns nil at
// the end of r, or the read error. raw is reused after emit returns.
func scanLines(r io.Reader, max int, emit func(raw []byte, size int)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		line    []byte // at most max+1 bytes, to see a "\r" at max+1
		size    int    // bytes of the line so far, without "\n"
		lastCR  bool   // the line so far ends in "\r"
		pending bool   // some bytes of an unfinished line are held
	)
	flush := func() {
		if lastCR {
			size--
		}
		emit(line[:min(len(line), size, max)], size)
		line, size, lastCR, pending = line[:0], 0, false, false
	}
	for {
		chunk, err := br.ReadSlice('\n')
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		if len(body) > 0 {
			if room := max + 1 - len(line); room > 0 {
				line = append(line, body[:min(room, len(body))]...)
			}
			size += len(body)
			lastCR = body[len(body)-1] == '\r'
			pending = true
		}
		switch {
		case err == nil:
			flush()
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			if pending {
				flush()
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// waitGroupGone waits up to d for the group to have no live member and
// returns how many are left. SIGKILL is delivered at once but acted on
// when each process is next scheduled, so a short wait is normal; there is
// no event to wait on for processes that are not our children, hence the
// polling.
func (s *child) waitGroupGone(d time.Duration) int {
	return WaitGone(func() int {
		n, _ := GroupLeftovers(s.pid)
		return n
	}, d)
}

// WaitGone polls count every 5ms until it is zero or d has passed, and
// returns the last count: for processes that are not the caller's
// children, whose end no event announces.
func WaitGone(count func() int, d time.Duration) int {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := count()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		<-tick.C
	}
}

// GroupLeftovers counts the live (not zombie) processes of group pgid and
// lists their pids when /proc can tell; without /proc, a group that still
// exists counts as one process of unknown pid.
func GroupLeftovers(pgid int) (int, []int) {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return 0, nil
	}
	pids, err := procGroupMembers(pgid)
	if err != nil {
		return 1, nil
	}
	return len(pids), pids
}

// procGroupMembers scans /proc for live processes whose group is pgid.
func procGroupMembers(pgid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, pg, ok := parseProcStat(b)
		if ok && pg == pgid && state != 'Z' && state != 'X' && state != 'x' {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// GroupCPU is the CPU time the live processes of group pgid have used,
// user and system, their own and that of the children they have waited
// for, from /proc/PID/stat; ok is false when /proc cannot tell. It says
// whether a target is busy (starting, loading) or idle: a start script
// that runs one short command after another spends its time in those
// children, not in itself.
func GroupCPU(pgid int) (cpu time.Duration, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if ticks, pg, ok := procCPU(b); ok && pg == pgid {
			cpu += time.Duration(ticks) * clockTick
		}
	}
	return cpu, true
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU extracts the process group and utime+stime+cutime+cstime
// (fields 14 to 17: the process's own CPU and that of its waited-for
// children) from the text of /proc/PID/stat.
func procCPU(b []byte) (ticks int64, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	for _, field := range f[11:15] {
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += n
	}
	return ticks, pg, true
}

// CPU is the CPU time the server's process group has used so far (see
// GroupCPU).
func (s *Stdio) CPU() (time.Duration, bool) { return GroupCPU(s.pid) }

// ProcState is the state letter of process pid in /proc/PID/stat ('R',
// 'S', 'Z' for a zombie…); ok is false when /proc cannot tell.
func ProcState(pid int) (state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	state, _, ok = parseProcStat(b)
	return state, ok
}

// parseProcStat extracts the state and the process group from the text of
// /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func parseProcStat(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}

// stdinWriter is the child's stdin as the Stream's writer. It counts the
// writes in flight so that unblockStdin can tell whether one is blocked,
// and notes when it was closed, the first rung of the ladder.
type stdinWriter struct {
	f        *os.File
	writing  atomic.Int32
	closedAt time.Time // set by Close, before the ladder runs
}

func (w *stdinWriter) Write(p []byte) (int, error) {
	w.writing.Add(1)
	defer w.writing.Add(-1)
	return w.f.Write(p)
}

func (w *stdinWriter) Close() error {
	w.closedAt = time.Now()
	return w.f.Close()
}

// stdoutReader is the child's stdout as the Stream's reader. It closes the
// pipe once reading ends, and ends reading when drainOutputs' deadline
// passes with the pipe still held open.
type stdoutReader struct {
	f    *os.File
	log  *chrono.Log
	once sync.Once
}

func (r *stdoutReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err == nil {
		return n, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.log.Harness(chrono.KindNote, "stdout",
			"stdout not at end of stream well after the process group ended (held open by a process outside the group, or Inbound not read); no longer reading it")
		err = io.EOF
	}
	r.once.Do(func() { _ = r.f.Close() })
	return n, err
}
