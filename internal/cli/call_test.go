//go:build unix

package cli

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// TestCallNonTerminalTimeout cancels a call with --timeout and checks the
// plain-line output and the classification.
func TestCallNonTerminalTimeout(t *testing.T) {
	t.Parallel()
	// The tool needs 5 s and sends a step every 5 ms: the timeout comes
	// after the first step and long before the last, however loaded the
	// machine.
	r := runCLI(t, "", "call", "slow", `{"steps":1000,"tickMs":5}`, "--timeout", "1s", "--grace", "1s", "-v")
	if r.code != ExitTimeout {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitTimeout, r.stdout, r.stderr)
	}
	for _, want := range []string{"progress 1/1000", "cancelled; no response received"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "out stdin notification notifications/cancelled"); n != 1 {
		t.Errorf("%d cancels on the wire, want exactly 1:\n%s", n, r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Error("escape sequences in non-terminal output")
	}
}

func TestCallCompletesAndUsageErrors(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "slow", `{"steps":2,"tickMs":1}`)
	if r.code != 0 || !strings.Contains(r.stdout, "completed: done") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"call"}, {"call", "slow", "not json"}, {"call", "--timeout", "x", "slow"}} {
		if r := runCLI(t, "", args...); r.code != ExitError {
			t.Errorf("%v: exit %d, want %d", args, r.code, ExitError)
		}
	}
	r = runCLI(t, "", "call", "no-such-tool")
	if r.code != 1 || !strings.Contains(r.stdout, "failed") {
		t.Errorf("unknown tool: exit %d\n%s", r.code, r.stdout)
	}
}

// TestCallCtrlCOnTerminal drives `mcpflight call` in a pseudo-terminal: it
// waits until the progress bar has advanced, presses Ctrl-C, and checks
// that exactly one notifications/cancelled went out and that the
// classification line is right.
func TestCallCtrlCOnTerminal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // safety net
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "call", "slow", `{"steps":1000,"tickMs":20}`, "--grace", "2s", "-v")
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()

	var out bytes.Buffer
	buf := make([]byte, 4096)
	// Read until the bar shows the third step: the bar is drawn with a
	// carriage return and a percentage because total is known.
	bar := regexp.MustCompile(`\r\x1b\[K\[#*\.*\]\s+\d+%\s+3/1000`)
	for !bar.Match(out.Bytes()) {
		n, err := tty.Read(buf)
		if err != nil {
			t.Fatalf("reading the terminal: %v\n%q", err, out.String())
		}
		out.Write(buf[:n])
	}
	if _, err := tty.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	for {
		n, err := tty.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			if err != io.EOF && !strings.Contains(err.Error(), "input/output error") {
				t.Fatalf("reading the terminal: %v", err)
			}
			break
		}
	}
	werr := cmd.Wait()
	text := out.String()
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Errorf("exit code %d (%v), want %d\n%s", code, werr, ExitInterrupted, text)
	}
	if n := strings.Count(text, "out stdin notification notifications/cancelled"); n != 1 {
		t.Errorf("%d notifications/cancelled on the wire, want exactly 1:\n%s", n, text)
	}
	if !strings.Contains(text, "cancelled; no response received") {
		t.Errorf("no classification line:\n%s", text)
	}
}

func TestToolsListsTaskSupportAndProfileUse(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "tools")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^TOOL\s+TASK SUPPORT\s+PROFILE USE`),
		regexp.MustCompile(`(?m)^slow\s+\S+\s+slow\s`),
		regexp.MustCompile(`(?m)^log\s+\S+\s+log\s`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("output does not match %s:\n%s", want, r.stdout)
		}
	}
}

// TestShellScriptTimeoutPattern runs a script with the
// "timeout 500 call_tool …" pattern against the reference server.
func TestShellScriptTimeoutPattern(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "shell", "--protocol", "2025-11-25", "--script", "testdata/timeout.mcpf") // a 2025-11-25 script: ping, and request IDs counted after initialize
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"pong", "cancelled request 5 after 500ms", "completed request 6: done", "started request 8", "cancelled request 8"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "expect failed") {
		t.Errorf("an expectation failed:\n%s", r.stdout)
	}
}

// TestShellFailedExpectExitsNonZero proves a script's expect can fail.
func TestShellFailedExpectExitsNonZero(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "fail.mcpf")
	if err := os.WriteFile(script, []byte("call_tool slow {\"key\":\"a\",\"steps\":1,\"tickMs\":1}\nexpect outcome cancelled\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "shell", "--script", script)
	if r.code != 1 || !strings.Contains(r.stdout, "expect failed: outcome completed, want cancelled") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCallHelpTaskBothRevisions: call -h documents --task for both
// revisions, not as 2025-11-25 only: it runs the same controller under
// the tasks extension.
func TestCallHelpTaskBothRevisions(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "-h")
	help := r.stdout + r.stderr
	i := strings.Index(help, "--task")
	if i < 0 {
		t.Fatalf("call -h does not document --task:\n%s", help)
	}
	task := help[i:]
	if j := strings.Index(task, "\n  -v"); j >= 0 {
		task = task[:j]
	}
	for _, want := range []string{"2025-11-25", "2026-07-28", "io.modelcontextprotocol/tasks", "decision trail"} {
		if !strings.Contains(task, want) {
			t.Errorf("--task help lacks %q:\n%s", want, task)
		}
	}
	if strings.Contains(task, "durable task (2025-11-25)") {
		t.Errorf("--task help still says 2025-11-25 only:\n%s", task)
	}
}

// TestCallTaskTimeoutRunsTheController: with --task a timeout stops the
// local wait, then exactly one tasks/cancel goes out and is verified.
func TestCallTaskTimeoutRunsTheController(t *testing.T) {
	t.Parallel()
	// The task needs 5 s: the timeout comes once it is created and long
	// before it ends, however loaded the machine.
	r := runCLI(t, "", "call", "--task", "task_worker", `{"key":"w","ticks":1000,"tickMs":5}`, "--timeout", "1s", "-v")
	if r.code != ExitTimeout {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitTimeout, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "task cancelled and verified") {
		t.Errorf("no verified cancel:\n%s", r.stdout)
	}
	if n := strings.Count(r.stdout, "out stdin request tasks/cancel"); n != 1 {
		t.Errorf("%d tasks/cancel on the wire, want exactly 1:\n%s", n, r.stdout)
	}
	// The tools/call that created the task is request 1; under
	// 2026-07-28 the status subscription (subscriptions/listen, request
	// 2) is ended with notifications/cancelled, as SUB-6 has it.
	if strings.Contains(r.stdout, "notification notifications/cancelled requestId=1 ") {
		t.Errorf("a task must not be cancelled with notifications/cancelled (CAN-4):\n%s", r.stdout)
	}
	// The decision trail: what the controller kept, sent and verified,
	// before the last line, which says what happened.
	for _, want := range []string{"decision trail:", "kept     local abort", "decided  cancel the task", "sent     tasks/cancel (request",
		"verified task cancellation verified: status cancelled", "decided  cancelled-verified"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in the decision trail:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "repeated-cancel-request") {
		t.Errorf("one timeout is one cancellation request:\n%s", r.stdout)
	}
	r = runCLI(t, "", "call", "--task", "slow", `{"steps":2,"tickMs":1}`)
	if r.code != 0 || !strings.Contains(r.stdout, "completed: done") {
		t.Errorf("task completion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCallMarksProgressThatCrossedTheCancel: progress that arrives once
// the cancel is on its way crossed it in flight, and call says so. The
// call is gated at its first checkpoint (KEY/start), so it sends no
// progress until the cancel comes (whenever --timeout fires); the fault
// progress-after-cancel then sends exactly one notification, which the
// server can only write after it has read the cancel: it must be marked.
func TestCallMarksProgressThatCrossedTheCancel(t *testing.T) {
	t.Parallel()
	server := transport.QuoteArgs([]string{binary, "serve", "--stdio", "--fault", "progress-after-cancel"})
	r := runCLI(t, "", "call", "--stdio", server, "--protocol", "2025-11-25", "slow", `{"key":"k","steps":3}`, "--timeout", "50ms")
	if r.code != ExitTimeout {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitTimeout, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^progress 1/3 \(crossed the cancel in flight\)  step 1 of 3$`).MatchString(r.stdout) {
		t.Errorf("the progress sent after the cancel is not marked as having crossed it:\n%s", r.stdout)
	}
	if n := strings.Count(r.stdout, "progress "); n != 1 {
		t.Errorf("%d progress lines, want 1 (the one after the cancel):\n%s", n, r.stdout)
	}
}

// TestCallSlowOverURLCompletes: the reference server's slow tool is an
// ordinary tool for a client that does not use the control extension:
// "call --url URL slow", with no arguments at all (no key, no tickMs),
// completes with its three steps of progress instead of waiting at a
// gate for a release no one sends. The --timeout is only a bound: a
// gated call would end there with exit 124 instead of hanging the test.
func TestCallSlowOverURLCompletes(t *testing.T) {
	t.Parallel()
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	r := runCLI(t, "", "call", "--url", ts.URL, "slow", "--timeout", "60s")
	if r.code != 0 || !strings.Contains(r.stdout, "completed: done") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "progress "); n != 3 {
		t.Errorf("%d progress lines, want the 3 steps of the default slow call:\n%s", n, r.stdout)
	}
}
