//go:build unix

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCtrlCLeavesNoOrphans interrupts a real `mcpflight check` while its
// target (a shell with a grandchild) hangs in the handshake, and checks
// that the whole process group of the target is gone afterwards, one
// case at a time and with --jobs 8 (the first case reaches no target, so
// it runs alone: TestHostileStdioInterruptJobs interrupts cases running
// side by side).
func TestCtrlCLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	for _, jobs := range []string{"1", "8"} {
		t.Run("jobs "+jobs, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo := filepath.Join(dir, "pid")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// The target reports its pid (its process group's id) through the
			// FIFO, then blocks in a grandchild that never answers initialize.
			target := "echo $$ > " + fifo + "; sleep 1000"
			cmd, exited, out := startCheck(t, nil, "--shell", "--stdio", target, "--case", "ping/*", "--case", "rpc/*", "--profile", "reference", "--jobs", jobs)

			f, err := os.Open(fifo) // blocks until the target has opened it for writing
			if err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(f).ReadString('\n')
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			pgid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("target pid %q: %v", line, err)
			}
			if err := syscall.Kill(-pgid, 0); err != nil {
				t.Fatalf("target group %d not running before the interrupt: %v", pgid, err)
			}

			if err := interrupt(t, cmd, exited, out, 30*time.Second); !exitedWith(err, ExitError) {
				t.Errorf("interrupted check: %v, want exit code %d\n%s", err, ExitError, out.String())
			}
			// The group was SIGKILLed before check exited; only reaping by init
			// can lag, so a zombie (or nothing) is all that may remain.
			if err := syscall.Kill(-pgid, 0); err == nil {
				for _, pid := range groupMembers(t, pgid) {
					if state := procState(pid); state != "Z" && state != "" {
						t.Errorf("process %d of the target's group survived the interrupt (state %s)", pid, state)
					}
				}
			}
		})
	}
}

// startCheck starts the built binary's check with args, its environment
// extended with env, and its output collected in out; exited delivers
// cmd.Wait's error.
func startCheck(t *testing.T, env []string, args ...string) (cmd *exec.Cmd, exited <-chan error, out *strings.Builder) {
	t.Helper()
	cmd = exec.Command(binary, append([]string{"check", "--protocol", "2025-11-25"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out = &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, done, out
}

// awaitPids waits for read, which reads pids from fifo, to deliver; it
// fails the test if check (cmd) ends first, unblocking the reader, or at
// the safety net.
func awaitPids(t *testing.T, fifo string, read func() []int, cmd *exec.Cmd, exited <-chan error, out fmt.Stringer) []int {
	t.Helper()
	got := make(chan []int, 1)
	go func() { got <- read() }()
	select {
	case pids := <-got:
		return pids
	case err := <-exited:
		// Unblock the reader, which waits for a writer.
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			w.Close()
		}
		t.Fatalf("check ended (%v) before its targets recorded their pids\n%s", err, out)
	case <-time.After(zooSafety): // safety net only
		_ = cmd.Process.Kill()
		t.Fatalf("the targets did not record their pids\n%s", out)
	}
	return nil
}

// interrupt sends SIGINT to cmd and waits for it to exit, returning what
// exited delivered (cmd.Wait's error); safety is a safety net only, after
// which cmd is killed and the test fails with its output.
func interrupt(t *testing.T, cmd *exec.Cmd, exited <-chan error, out fmt.Stringer, safety time.Duration) error {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		return err
	case <-time.After(safety):
		_ = cmd.Process.Kill()
		t.Fatalf("check did not stop after the interrupt\n%s", out)
		return nil
	}
}

// exitedWith reports whether err, from exec.Cmd.Wait, is an exit with
// code.
func exitedWith(err error, code int) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == code
}

// groupMembers lists the pids whose process group is pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to inspect")
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procState is the one-letter state of a process, or "" when it is gone.
func procState(pid int) string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}
