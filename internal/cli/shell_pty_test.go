//go:build unix

package cli

import (
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptySession is the built binary running on a pseudo-terminal: what it
// prints is collected, and the test types at it.
type ptySession struct {
	t       *testing.T
	tty     interface{ Write([]byte) (int, error) }
	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{}
	exited  chan error
	// drained is closed when reading the terminal ends: after the
	// program exited, once everything it printed has been read.
	drained chan struct{}
}

func startOnTerminal(t *testing.T, width uint16, args ...string) *ptySession {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: width})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	p := &ptySession{t: t, tty: tty, changed: make(chan struct{}, 1), exited: make(chan error, 1), drained: make(chan struct{})}
	go func() {
		defer close(p.drained)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = tty.Close()
	})
	return p
}

// text is everything printed so far.
func (p *ptySession) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until s has been printed n times.
func (p *ptySession) waitFor(s string, n int) {
	p.t.Helper()
	deadline := time.After(zooSafety) // safety net only
	for strings.Count(p.text(), s) < n {
		select {
		case <-p.changed:
		case <-deadline:
			p.t.Fatalf("%q not printed %d times:\n%q", s, n, p.text())
		}
	}
}

func (p *ptySession) typeIn(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.tty, s); err != nil {
		p.t.Fatal(err)
	}
}

func (p *ptySession) wait() {
	p.t.Helper()
	select {
	case err := <-p.exited:
		if err != nil {
			p.t.Fatalf("exit: %v\n%q", err, p.text())
		}
	case <-time.After(zooSafety): // safety net only
		p.t.Fatalf("did not end:\n%q", p.text())
	}
	// The program has exited; what it printed last may still be in the
	// terminal's buffer: read it all (the read ends when it is drained).
	select {
	case <-p.drained:
	case <-time.After(zooSafety): // safety net only
		p.t.Fatalf("the terminal's output was not drained:\n%q", p.text())
	}
}

// TestShellOnTerminal: on a terminal the shell edits lines and keeps a
// history (the up arrow brings back the last command), and help lists
// the commands.
func TestShellOnTerminal(t *testing.T) {
	t.Parallel()
	p := startOnTerminal(t, 100, "shell", "--protocol", "2025-11-25")
	p.waitFor("mcpflight> ", 1)
	p.typeIn("pign\x7f\x7fng\r") // a typo, mended with two backspaces
	p.waitFor("pong", 1)
	p.waitFor("mcpflight> ", 2)
	p.typeIn("\x1b[A\r") // up arrow: ping again, from the history
	p.waitFor("pong", 2)
	p.typeIn("help\r")
	p.waitFor("call_tool NAME [JSON]", 1)
	p.typeIn("frobnicate\r")
	p.waitFor(`unknown command "frobnicate"`, 1)
	p.typeIn("quit\r")
	p.wait()
	if strings.Contains(p.text(), "peer: ") {
		t.Errorf("an error kept its package prefix:\n%q", p.text())
	}
}

// barDrawing is one drawing of call's progress line.
var barDrawing = regexp.MustCompile(`\r\x1b\[K([^\r\n]*)`)

// TestCallProgressFitsTheTerminal: on a narrow terminal every drawing of
// the progress bar fits in one line (a wrapped line cannot be redrawn in
// place and leaves a trail), and what stays on the screen is one bar and
// the outcome.
func TestCallProgressFitsTheTerminal(t *testing.T) {
	t.Parallel()
	const width = 40
	p := startOnTerminal(t, width, "call", "slow", `{"steps":8,"tickMs":1}`)
	p.wait()
	raw := p.text()
	drawings := barDrawing.FindAllStringSubmatch(raw, -1)
	if len(drawings) < 8 {
		t.Fatalf("%d drawings of the bar, want 8 or more:\n%q", len(drawings), raw)
	}
	for _, d := range drawings {
		if n := len([]rune(d[1])); n > width-1 {
			t.Errorf("progress line %q is %d columns on a terminal of %d", d[1], n, width)
		}
	}
	lines, _ := screen(t, raw)
	var kept []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) != 2 || !strings.Contains(kept[0], "100%") || kept[1] != "completed: done" {
		t.Errorf("the screen holds %q, want the last bar and the outcome", kept)
	}
}
