//go:build unix

package cli

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"
)

// statusDrawing is one drawing of the status line: a carriage return, an
// erase, and a line that begins with the count of cases done.
var statusDrawing = regexp.MustCompile(`\r\x1b\[K(\[\d+/\d+\][^\r\n]*)`)

// TestCheckLiveOnTerminal runs check on a pseudo-terminal: it draws a
// status line no wider than the terminal, and what the terminal shows at
// the end is the text report a non-terminal gets, with no trail of status
// lines.
func TestCheckLiveOnTerminal(t *testing.T) {
	t.Parallel()
	args := []string{"check", "--protocol", "2025-11-25", "--case", "ping/*", "--case", "rpc/*", "--case", "progress/*", "--jobs", "4"}
	const width = 60
	raw := onTerminal(t, width, args...)
	drawings := statusDrawing.FindAllStringSubmatch(raw, -1)
	if len(drawings) == 0 {
		t.Fatalf("no status line in %q", raw)
	}
	for _, d := range drawings {
		if len(d[1]) > width-1 {
			t.Errorf("status line %q is %d columns on a terminal of %d", d[1], len(d[1]), width)
		}
	}
	lines, _ := screen(t, raw)
	plain := runCLI(t, "", args...)
	if plain.code != ExitConformant {
		t.Fatalf("exit code %d\n%s\n%s", plain.code, plain.stdout, plain.stderr)
	}
	want := strings.Split(strings.TrimSuffix(normalText(plain.stdout), "\n"), "\n")
	for i := range lines {
		lines[i] = normalText(lines[i])
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("terminal screen (-non-terminal output +screen):\n%s", diff)
	}
	if strings.Contains(plain.stdout, "\r") || statusDrawing.MatchString(plain.stdout) {
		t.Errorf("a non-terminal got a status line:\n%q", plain.stdout)
	}
}

// onTerminal runs the built binary with args on a pseudo-terminal of the
// given width, without colours, and returns everything it printed.
func onTerminal(t *testing.T, width uint16, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: width})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	var out bytes.Buffer
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(&out, tty)
		read <- err
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			<-read // the copy has ended once the child is gone: out is whole
			t.Fatalf("check on a terminal: %v\n%q", err, out.String())
		}
	case <-time.After(zooSafety): // safety net only
		_ = cmd.Process.Kill()
		t.Fatalf("check on a terminal did not end\n%q", out.String())
	}
	// Once the child is gone the terminal's reads end (EIO on Linux).
	if err := <-read; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the terminal: %v", err)
	}
	return out.String()
}

// TestCheckStatusBeforeAnyAnswer: on a terminal, check shows its status
// line before the target has answered anything: against a target that
// never writes, the line that says the revision is being negotiated is
// drawn while the probes wait (the screen is never blank while a slow or
// silent target is started). The run is then interrupted.
func TestCheckStatusBeforeAnyAnswer(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "check", "--stdio", "sleep 60", "--case-timeout", "30s")
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	found := make(chan string, 1)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			out.Write(buf[:n])
			if m := statusDrawing.FindStringSubmatch(out.String()); m != nil && strings.Contains(m[1], "negotiating the protocol revision") {
				found <- m[1]
				return
			}
			if err != nil {
				found <- ""
				return
			}
		}
	}()
	select {
	case line := <-found:
		if line == "" {
			t.Fatal("the terminal closed before any status line")
		}
	case err := <-exited:
		t.Fatalf("check ended (%v) before drawing the status line", err)
	case <-time.After(zooSafety): // safety net only
		t.Fatal("no status line while the target was silent")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(zooSafety): // safety net only
		_ = cmd.Process.Kill()
		t.Fatal("check did not end on SIGINT")
	}
}
