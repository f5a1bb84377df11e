//go:build unix

package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/proc"
	"github.com/mcpflight/mcpflight/transport"
)

// StdioConfig configures Stdio.
type StdioConfig struct {
	// Argv is the server's command and arguments, run directly without
	// a shell.
	Argv []string
	// Env holds KEY=VALUE entries added to the shim's own environment.
	Env []string
	// Dir is the server's working directory; the shim's if empty.
	Dir string
	// Stdin is what the host writes (the shim's standard input), Stdout
	// and Stderr what the host reads. Required.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Recorder records the conversation. Required.
	Recorder *Recorder
	// Signals, when not nil, delivers the signals the host sends the
	// shim (the caller's signal.Notify for SIGINT, SIGTERM, SIGHUP):
	// each is forwarded to the server's process group and recorded.
	Signals <-chan os.Signal
	// CloseGrace is how long the server has to exit once its stdin is
	// closed before SIGTERM, TermGrace how long after SIGTERM before
	// SIGKILL; transport.DefaultCloseGrace and DefaultTermGrace if zero.
	CloseGrace, TermGrace time.Duration
	// Inject, when not nil, is attached to the run: its requests go to
	// the server between the host's frames and their answers are kept
	// from the host (see Injector). It is closed when the host closes
	// stdin or the server exits.
	Inject *Injector
}

// Texts of the process and stdin events of Stdio, on channel "process"
// unless said otherwise. TextStarted and TextExited read as the checker's
// own stdio transport writes them; TextSignalled names the signal as a
// shell does ("SIGKILL").
const (
	// TextStarted is KindState: "started pid N in process group N: ARGV".
	TextStarted = "started pid %d in process group %d: %s"
	// TextExited and TextSignalled are KindExit.
	TextExited    = "pid %d exited with code %d"
	TextSignalled = "pid %d ended by signal %s"
	// TextHostClosedStdin is KindState on channel "stdin": the host
	// closed its end (the host's disconnect over stdio).
	TextHostClosedStdin = "the host closed stdin: closing the server's stdin"
	// TextHostStoppedReading begins a KindError on channel "stdout": a
	// write to the host failed, the host is gone.
	TextHostStoppedReading = "the host stopped reading stdout"
)

const (
	// drainGrace is how long the server's stdout and stderr may stay
	// open and silent once its process group is gone: only a process
	// outside the group that inherited them can hold them that long.
	drainGrace = time.Second
	// killWait bounds the wait for a process group to die after SIGKILL.
	killWait = 5 * time.Second
	// copyBuffer is the size of the forwarders' buffers.
	copyBuffer = 64 << 10
	// procChannel names the channel of process events.
	procChannel = "process"
)

// Stdio runs a stdio server (cfg.Argv) between the host and itself: it
// forwards the host's stdin to the server's stdin and the server's
// stdout to the host's stdout byte for byte (never re-encoded: a
// malformed or huge frame passes as it came), passes the server's stderr
// to the host's stderr, and taps all three to cfg.Recorder, which
// records them as frames (Out from stdin, In from stdout) and stderr
// lines.
//
// The server runs in a process group of its own. The signals on
// cfg.Signals are forwarded to that group. When the host closes stdin
// (or stops reading stdout), the server's stdin is closed and the stdio
// shutdown ladder runs: the server should exit; if it has not after
// CloseGrace, the group gets SIGTERM, and after TermGrace SIGKILL. When
// the server exits, whatever is left of its group is killed, its stdout
// and stderr are forwarded to their end, and Stdio returns its exit
// status as a shell gives it: the exit code, or 128+N for a server
// killed by signal N. On Linux the server gets SIGKILL if the shim dies
// (even by SIGKILL), so that no server outlives its host; processes the
// server started itself then see their stdin end.
//
// ctx is an emergency stop: when it ends, the group gets SIGKILL.
// Stdio returns once the server has exited and its output is forwarded.
// On Linux, a host's stdin or stdout that is a pipe or a socket is put
// in non-blocking mode while Stdio runs, and back when it returns
// (pollHostEnd); a read of such a stdin in flight then ends. A read of
// any other stdin is left behind (a blocking read cannot be
// interrupted) and forwards nothing more. Stdio handles SIGPIPE while it
// runs, so that a host that closes its end of stdout is an error to
// record, not the death of the shim.
//
// The error is nil whenever the server ran; a server that cannot be
// started returns 127 (not found) or 126 (not executable), as a shell
// would, or 1, with the error.
func Stdio(ctx context.Context, cfg StdioConfig) (exit int, err error) {
	if cfg.Recorder == nil || cfg.Stdin == nil || cfg.Stdout == nil || cfg.Stderr == nil {
		return 1, errors.New("watch: StdioConfig needs Recorder, Stdin, Stdout and Stderr")
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = transport.DefaultCloseGrace
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = transport.DefaultTermGrace
	}
	hostIn, hostOut := cfg.Stdin, cfg.Stdout
	if f, ok := hostIn.(*os.File); ok {
		pf, polled, restore := pollHostEnd(f)
		defer restore()
		if polled {
			hostIn = fastIO(pf)
		}
	}
	if f, ok := hostOut.(*os.File); ok {
		pf, polled, restore := pollHostEnd(f)
		defer restore()
		if polled {
			hostOut = fastIO(pf)
		}
	}
	display := transport.QuoteArgs(cfg.Argv)
	cmd, err := proc.Command(cfg.Argv, cfg.Env, cfg.Dir, display)
	if err != nil {
		return startExit(err), fmt.Errorf("watch: %w", err)
	}
	dieWithParent(cmd.SysProcAttr)

	var fds []*os.File
	closeAll := func() {
		for _, f := range fds {
			_ = f.Close()
		}
	}
	for range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return 1, fmt.Errorf("watch: pipe: %w", err)
		}
		fds = append(fds, r, w)
	}
	stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW := fds[0], fds[1], fds[2], fds[3], fds[4], fds[5]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW

	// A host that closes its end of stdout must not kill the shim with
	// SIGPIPE; a handled signal (unlike an ignored one) is reset to its
	// default in the server.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)

	if err := cmd.Start(); err != nil {
		closeAll()
		err = proc.StartError(display, err)
		return startExit(err), fmt.Errorf("watch: %w", err)
	}
	_, _, _ = stdinR.Close(), stdoutW.Close(), stderrW.Close()

	s := &stdioRun{
		cfg:      cfg,
		rec:      cfg.Recorder,
		pid:      cmd.Process.Pid,
		hostIn:   hostIn,
		stdinW:   stdinW,
		toServer: newServerInput(fastIO(stdinW)),
		exited:   make(chan struct{}),
		hostEOF:  make(chan struct{}),
		hostGone: make(chan struct{}),
	}
	s.rec.Note(chrono.KindState, procChannel, fmt.Sprintf(TextStarted, s.pid, s.pid, display))
	var filter *outputFilter
	if cfg.Inject != nil {
		filter = &outputFilter{j: cfg.Inject, lineStart: true}
		cfg.Inject.attach(s.toServer, s.rec)
		defer cfg.Inject.close()
		injecting := make(chan struct{})
		defer close(injecting)
		go s.toServer.runInjections(injecting)
	}
	go s.wait(cmd)
	go s.forwardStdin()
	stdout := s.startOutput(stdoutR, hostOut, s.rec.newStream(chrono.In, "stdout", modeLines), true, filter)
	stderr := s.startOutput(stderrR, cfg.Stderr, s.rec.newStream(chrono.In, "stderr", modeStderr), false, nil)

	s.supervise(ctx)
	s.stopped.Store(true)
	s.closeStdin()
	s.sweepGroup()
	s.drain(stdout, stderr)
	return s.exitStatus(), nil
}

// startExit is the shell's status for a command that could not start.
func startExit(err error) int {
	switch {
	case errors.Is(err, proc.ErrExecutableNotFound):
		return 127
	case errors.Is(err, fs.ErrPermission):
		return 126
	}
	return 1
}

// stdioRun is one run of Stdio.
type stdioRun struct {
	cfg StdioConfig
	rec *Recorder
	pid int // also the process group id

	// hostIn is the host's stdin as the forwarder reads it; toServer
	// writes the server's (stdinW), for the forwarder and an Injector.
	hostIn    io.Reader
	stdinW    *os.File
	toServer  *serverInput
	stdinOnce sync.Once
	// stopped is set once the server has exited: the host's stdin is no
	// longer forwarded nor recorded.
	stopped atomic.Bool

	exited   chan struct{} // closed once the leader is reaped
	status   syscall.WaitStatus
	waitErr  error
	hostEOF  chan struct{} // closed when the host closes stdin
	hostGone chan struct{} // closed when a write to the host fails
	goneOnce sync.Once
}

// wait reaps the server and records its exit.
func (s *stdioRun) wait(cmd *exec.Cmd) {
	err := cmd.Wait()
	var text string
	if st := cmd.ProcessState; st == nil {
		s.waitErr = err
		text = fmt.Sprintf("waiting for pid %d: %v", s.pid, err)
	} else {
		s.status, _ = st.Sys().(syscall.WaitStatus)
		if s.status.Signaled() {
			text = fmt.Sprintf(TextSignalled, s.pid, signalName(s.status.Signal()))
			if s.status.CoreDump() {
				text += " (core dumped)"
			}
		} else {
			text = fmt.Sprintf(TextExited, s.pid, st.ExitCode())
		}
	}
	s.rec.Note(chrono.KindExit, procChannel, text)
	close(s.exited)
}

// exitStatus is the server's status as a shell gives it.
func (s *stdioRun) exitStatus() int {
	switch {
	case s.waitErr != nil:
		return 1
	case s.status.Signaled():
		return 128 + int(s.status.Signal())
	}
	return s.status.ExitStatus()
}

// forwardStdin copies the host's stdin to the server's, tapping each
// read before it is written, so that the record has a request before
// any answer to it.
func (s *stdioRun) forwardStdin() {
	st := s.rec.newStream(chrono.Out, "stdin", modeLines)
	buf := make([]byte, copyBuffer)
	writeFailed := false
	for {
		n, err := s.hostIn.Read(buf)
		if s.stopped.Load() {
			return
		}
		if n > 0 {
			at := time.Now()
			s.rec.data(st, buf[:n], at)
			if !writeFailed {
				if werr := s.toServer.forward(buf[:n]); werr != nil {
					writeFailed = true
					s.rec.Note(chrono.KindError, "stdin", chrono.Sanitize(fmt.Sprintf(
						"writing to the server's stdin failed (%v): what the host sends from here on is recorded, not delivered", werr), false))
				}
			}
		}
		if err != nil {
			text := TextHostClosedStdin
			if !errors.Is(err, io.EOF) {
				text = chrono.Sanitize(fmt.Sprintf("reading the host's stdin failed (%v): closing the server's stdin", err), false)
			}
			s.rec.end(st, endEOF, "", time.Now())
			s.rec.Note(chrono.KindState, "stdin", text)
			s.closeStdin()
			close(s.hostEOF)
			return
		}
	}
}

// closeStdin closes the server's stdin, once, and with it the way in
// for an Injector's requests: the Injector is closed first, so that its
// Calls end before the server can see the end of its input, and then the
// file, which ends a write waiting on a full pipe (that write holds
// toServer).
func (s *stdioRun) closeStdin() {
	s.stdinOnce.Do(func() {
		if s.cfg.Inject != nil {
			s.cfg.Inject.close()
		}
		_ = s.stdinW.Close()
		s.toServer.stop(ErrInjectorClosed)
	})
}

// output forwards one of the server's outputs to the host.
type output struct {
	f    *os.File
	done chan struct{}
	// reads counts the reads, and reading is set while one waits, so
	// that drain can tell a silent pipe from a busy host.
	reads   atomic.Int64
	reading atomic.Bool
}

// startOutput forwards r to w, tapping each piece to st before it is
// written. The stdout forwarder has a filter when an Injector is
// attached (nil otherwise, and for stderr): what it keeps from the host
// is neither forwarded nor recorded. A failed write to the host's stdout
// is the host going away; to its stderr it is ignored, and the copy goes
// on so that the server never blocks on a full pipe.
func (s *stdioRun) startOutput(r *os.File, w io.Writer, st *stream, isStdout bool, filter *outputFilter) *output {
	o := &output{f: r, done: make(chan struct{})}
	go func() {
		defer close(o.done)
		defer r.Close()
		fromServer := fastIO(r)
		buf := make([]byte, copyBuffer)
		writeFailed := false
		emit := func(p []byte) {
			s.rec.data(st, p, time.Now())
			if writeFailed {
				return
			}
			if _, werr := w.Write(p); werr != nil {
				writeFailed = true
				if isStdout {
					s.rec.Note(chrono.KindError, "stdout", chrono.Sanitize(fmt.Sprintf(
						"%s (%v): closing the server's stdin", TextHostStoppedReading, werr), false))
					s.goneOnce.Do(func() { close(s.hostGone) })
				}
			}
		}
		for {
			o.reading.Store(true)
			n, err := fromServer.Read(buf)
			o.reading.Store(false)
			o.reads.Add(1)
			switch {
			case n > 0 && filter != nil:
				filter.pass(buf[:n], emit)
			case n > 0:
				emit(buf[:n])
			}
			if err != nil && filter != nil {
				filter.flush(emit)
			}
			if err != nil {
				text := "end of stream"
				how := endEOF
				switch {
				case errors.Is(err, io.EOF):
				case errors.Is(err, os.ErrDeadlineExceeded):
					text = "still open and silent after the server's process group ended (held by a process outside the group?): no longer read"
				default:
					how, text = endFailed, chrono.Sanitize("reading failed: "+err.Error(), false)
				}
				s.rec.end(st, how, text, time.Now())
				return
			}
		}
	}()
	return o
}

// supervise forwards signals and climbs the shutdown ladder once the
// host is done, until the server exits.
func (s *stdioRun) supervise(ctx context.Context) {
	var rung *time.Timer
	var rungC <-chan time.Time
	next := syscall.SIGTERM
	hostEOF, hostGone, done := s.hostEOF, s.hostGone, ctx.Done()
	startLadder := func() {
		if rung == nil {
			s.closeStdin()
			rung = time.NewTimer(s.cfg.CloseGrace)
			rungC = rung.C
		}
	}
	defer func() {
		if rung != nil {
			rung.Stop()
		}
	}()
	for {
		select {
		case <-s.exited:
			return
		case <-hostEOF:
			hostEOF = nil
			startLadder()
		case <-hostGone:
			hostGone = nil
			startLadder()
		case sig := <-s.cfg.Signals:
			if ss, ok := sig.(syscall.Signal); ok {
				s.signal(ss, fmt.Sprintf("%s from the host, forwarded", signalName(ss)))
			}
		case <-done:
			done = nil
			s.signal(syscall.SIGKILL, fmt.Sprintf("run context ended (%v)", context.Cause(ctx)))
		case <-rungC:
			grace := "closing stdin"
			if next == syscall.SIGKILL {
				grace = "SIGTERM"
			}
			s.rec.Note(chrono.KindDeadline, procChannel, fmt.Sprintf("no exit within %v of %s (STD-7)", s.waitedFor(next), grace))
			s.signal(next, "shutdown ladder (STD-7)")
			if next == syscall.SIGTERM {
				next = syscall.SIGKILL
				rung.Reset(s.cfg.TermGrace)
			} else {
				rungC = nil
			}
		}
	}
}

// waitedFor is the grace period that ran out before sig.
func (s *stdioRun) waitedFor(sig syscall.Signal) time.Duration {
	if sig == syscall.SIGTERM {
		return s.cfg.CloseGrace
	}
	return s.cfg.TermGrace
}

// signal records sig, then sends it to the server's process group, so
// that the record shows the signal before the exit it causes.
func (s *stdioRun) signal(sig syscall.Signal, reason string) {
	s.rec.Note(chrono.KindState, procChannel, fmt.Sprintf("%s to process group %d: %s", signalName(sig), s.pid, reason))
	if err := syscall.Kill(-s.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.rec.Note(chrono.KindError, procChannel, fmt.Sprintf("%s to process group %d: %v", signalName(sig), s.pid, err))
	}
}

// sweepGroup kills what is left of the server's process group once the
// server has exited, and waits for it to be gone.
func (s *stdioRun) sweepGroup() {
	if n, pids := transport.GroupLeftovers(s.pid); n > 0 {
		s.signal(syscall.SIGKILL, fmt.Sprintf("%d leftover process(es) still running after the server exited (pids %v)", n, pids))
	}
	if n := transport.WaitGone(func() int { n, _ := transport.GroupLeftovers(s.pid); return n }, killWait); n > 0 {
		s.rec.Note(chrono.KindError, procChannel, fmt.Sprintf("%d process(es) of group %d still alive %v after SIGKILL", n, s.pid, killWait))
	}
}

// drain waits for the server's outputs to reach their end, forwarded to
// the host. An output that stays open, silent and unread for drainGrace
// once the group is gone is held by a process that escaped the group:
// it is no longer read. A host slow to read is waited for.
func (s *stdioRun) drain(outs ...*output) {
	for _, o := range outs {
		last := o.reads.Load()
		t := time.NewTimer(drainGrace)
	wait:
		for {
			select {
			case <-o.done:
				break wait
			case <-t.C:
				if n := o.reads.Load(); n != last || !o.reading.Load() {
					last = n
					t.Reset(drainGrace)
					continue
				}
				_ = o.f.SetReadDeadline(time.Now())
			}
		}
		t.Stop()
	}
}

// signalName names a signal as the shell does: "SIGTERM".
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return sig.String()
}
