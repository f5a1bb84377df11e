//go:build unix

package clientrun

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
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/transport"
)

// LaunchSpec is what a launcher is given for one case.
type LaunchSpec struct {
	// Instructions are the case's instructions (also in Env).
	Instructions Instructions
	// Env holds the contract's variables, KEY=VALUE.
	Env []string
	// Arg is the server's command line (stdio) or URL (HTTP): the last
	// argument, or the {server} placeholder's value.
	Arg string
	// Socket is the relay socket (stdio), for an in-process client.
	Socket string
	// Log is the case's chronology: the adapter's reports and stderr
	// and its exit are recorded there.
	Log *chrono.Log
}

// Launcher starts the client under test for one case.
type Launcher interface {
	Launch(ctx context.Context, spec LaunchSpec) (Process, error)
}

// ClientExit is how the client process ended.
type ClientExit struct {
	// Exited is set once it has ended.
	Exited bool
	// Code is its exit code, -1 when a signal ended it.
	Code int
	// Signal names that signal.
	Signal string
}

// Process is the running client.
type Process interface {
	// Done is closed when the client has ended.
	Done() <-chan struct{}
	// Reports are what the adapter printed, in order.
	Reports() []Report
	// Exit is how it ended (Exited false while it runs).
	Exit() ClientExit
	// Stop ends what is left of the client and grades it: StepNone when
	// it had exited by itself, else the signal it needed; Leftovers are
	// its processes still alive afterwards.
	Stop(ctx context.Context) transport.Teardown
}

// Command launches the client as a child process in a process group of
// its own, with the contract's environment added to ours.
type Command struct {
	// Argv is the client's command line; an element holding {server} has
	// it replaced by the server's command line or URL, and without one
	// that is appended.
	Argv []string
	// Dir is the working directory; ours if empty.
	Dir string
}

// Argv returns the command line for arg: the placeholder replaced, or
// arg appended.
func (c Command) argv(arg string) []string {
	out := make([]string, 0, len(c.Argv)+1)
	replaced := false
	for _, a := range c.Argv {
		if strings.Contains(a, ServerPlaceholder) {
			a = strings.ReplaceAll(a, ServerPlaceholder, arg)
			replaced = true
		}
		out = append(out, a)
	}
	if !replaced {
		out = append(out, arg)
	}
	return out
}

// Bounds on what is recorded of the adapter's output.
const (
	maxOutputLines = 2000
	maxOutputLine  = 16 << 10
)

// Launch starts the command.
func (c Command) Launch(ctx context.Context, spec LaunchSpec) (Process, error) {
	argv := c.argv(spec.Arg)
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("clientrun: no client command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("clientrun: starting the client %s: %w", transport.QuoteArgs(argv), cmd.Err)
	}
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("clientrun: starting the client %s: %w", transport.QuoteArgs(argv), err)
	}
	p := &proc{log: spec.Log, cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
	spec.Log.State("client", "", fmt.Sprintf("started %s (pid %d)", chrono.Sanitize(transport.QuoteArgs(argv), false), p.pgid))
	var outputs sync.WaitGroup
	outputs.Add(2)
	go func() { defer outputs.Done(); p.readReports(stdout) }()
	go func() { defer outputs.Done(); p.readStderr(stderr) }()
	go func() {
		outputs.Wait()
		err := cmd.Wait()
		p.exited(err)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		case <-p.done:
		}
	}()
	return p, nil
}

// proc is a client child process.
type proc struct {
	log  *chrono.Log
	cmd  *exec.Cmd
	pgid int
	done chan struct{}

	mu      sync.Mutex
	reports []Report
	exit    ClientExit
	lines   int
}

// Reports implements Process.
func (p *proc) Reports() []Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Report(nil), p.reports...)
}

// Done implements Process.
func (p *proc) Done() <-chan struct{} { return p.done }

// Exit implements Process.
func (p *proc) Exit() ClientExit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// budget reports whether another line may be recorded.
func (p *proc) budget() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines++
	if p.lines == maxOutputLines+1 {
		p.log.Harness(chrono.KindNote, "client", fmt.Sprintf("more than %d lines of output: no longer recorded", maxOutputLines))
	}
	return p.lines <= maxOutputLines
}

func (p *proc) readReports(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxOutputLine)
	for sc.Scan() {
		line := sc.Bytes()
		if rep, ok := ParseReport(line); ok {
			p.mu.Lock()
			p.reports = append(p.reports, rep)
			p.mu.Unlock()
			p.log.Harness(chrono.KindNote, "adapter", "report: "+chrono.Sanitize(rep.String(), false))
			continue
		}
		if p.budget() {
			p.log.Append(chrono.Event{Dir: chrono.In, Channel: "client stdout", Kind: chrono.KindStderr, Raw: bytes.Clone(line)})
		}
	}
	// A line too long ends the scan; drain the rest so the client never
	// blocks on its stdout.
	_, _ = io.Copy(io.Discard, r)
}

func (p *proc) readStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxOutputLine)
	for sc.Scan() {
		if p.budget() {
			p.log.Append(chrono.Event{Dir: chrono.In, Channel: "client stderr", Kind: chrono.KindStderr, Raw: bytes.Clone(sc.Bytes())})
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

func (p *proc) exited(err error) {
	ex := ClientExit{Exited: true, Code: p.cmd.ProcessState.ExitCode()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ex.Code, ex.Signal = -1, ws.Signal().String()
	}
	p.mu.Lock()
	p.exit = ex
	p.mu.Unlock()
	text := "exited with code " + strconv.Itoa(ex.Code)
	if ex.Signal != "" {
		text = "ended by signal " + ex.Signal
	}
	if err != nil && ex.Code == 0 && ex.Signal == "" {
		text += " (" + err.Error() + ")"
	}
	p.log.Append(chrono.Event{Dir: chrono.Harness, Channel: "client", Kind: chrono.KindExit, Text: "client " + text})
	close(p.done)
}

// Stop implements Process: SIGTERM, then SIGKILL, to the client's group
// when it has not exited; then whatever of its group is left is killed
// and counted.
func (p *proc) Stop(ctx context.Context) transport.Teardown {
	td := transport.Teardown{ExitedAfter: transport.StepNone}
	start := time.Now()
	select {
	case <-p.done:
	default:
		td.ExitedAfter = transport.StepSIGTERM
		p.log.Harness(chrono.KindDecision, "client", "the client is still running at the end of the case: SIGTERM")
		_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
		t := time.NewTimer(2 * time.Second)
		select {
		case <-p.done:
		case <-t.C:
			td.ExitedAfter = transport.StepSIGKILL
			p.log.Harness(chrono.KindDecision, "client", "the client ignored SIGTERM: SIGKILL")
			_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
			<-p.done
		case <-ctx.Done():
			_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
			<-p.done
		}
		t.Stop()
	}
	ex := p.Exit()
	td.ExitCode, td.Signal, td.Waited = ex.Code, ex.Signal, time.Since(start)
	if n := transport.WaitGone(func() int { n, _ := transport.GroupLeftovers(p.pgid); return n }, 2*time.Second); n > 0 {
		td.Leftovers += n
		p.log.Harness(chrono.KindError, "client", fmt.Sprintf("%d processes of the client's group outlived it: killed", n))
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	}
	return td
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	state, ok := transport.ProcState(pid)
	return !ok || (state != 'Z' && state != 'X')
}

// killPID kills one process that is not our child.
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
