//go:build unix

package watch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/transport"
)

// hostScript is what the host writes in the byte-exactness test: good
// frames, a blank line, CRLF, garbage, a frame of several MB, and a last
// frame without a newline.
func hostScript() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	b.WriteString("\n")
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n")
	b.WriteString("garbage \xc3\x28 {\n")
	b.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"pad":"` + strings.Repeat("z", 5<<20) +
		`"},"_meta":{"progressToken":"tok"}}}` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	return b.Bytes()
}

// runDirect runs the helper server of mode with input on its stdin and
// returns what it wrote on stdout and what it read.
func runDirect(t *testing.T, mode string, input []byte) (stdout, received []byte) {
	t.Helper()
	dumpPath := filepath.Join(t.TempDir(), "dump")
	cmd := exec.Command(helperArgv()[0])
	cmd.Env = append(os.Environ(), helperEnvFor(mode, dumpEnv+"="+dumpPath)...)
	cmd.Stdin = bytes.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("direct run: %v", err)
	}
	received, err := os.ReadFile(dumpPath)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), received
}

// watched is one run of Stdio in a test.
type watched struct {
	rec            *Recorder
	jsonl          *syncBuffer
	sink           *collector
	stdout, stderr *syncBuffer
	dumpPath       string
}

func newWatched(t *testing.T, cfg RecorderConfig) *watched {
	w := &watched{jsonl: &syncBuffer{}, sink: newCollector(), stdout: &syncBuffer{}, stderr: &syncBuffer{},
		dumpPath: filepath.Join(t.TempDir(), "dump")}
	cfg.JSONL = w.jsonl
	cfg.Sinks = append(cfg.Sinks, w.sink)
	w.rec = NewRecorder(cfg)
	return w
}

// config is the StdioConfig of the helper server of mode, with stdin.
func (w *watched) config(mode string, stdin io.Reader) StdioConfig {
	return StdioConfig{Argv: helperArgv(), Env: helperEnvFor(mode, dumpEnv+"="+w.dumpPath),
		Stdin: stdin, Stdout: w.stdout, Stderr: w.stderr, Recorder: w.rec}
}

// events closes the recorder and returns the chronology it wrote.
func (w *watched) events(t *testing.T) []chrono.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	if err := w.rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return readJSONL(t, w.jsonl.Bytes())
}

// TestStdioForwardsEveryByte: through watch, the host receives exactly
// the bytes it receives from the server directly, and the server exactly
// the bytes the host wrote, malformed frames, blank lines, CRLF and a
// frame of several MB included; the chronology records each frame,
// summarised (the large one from its top-level members) with its full
// size.
func TestStdioForwardsEveryByte(t *testing.T) {
	input := hostScript()
	directOut, directIn := runDirect(t, "script", input)
	if !bytes.Equal(directIn, input) || !bytes.HasPrefix(directOut, serverScript()) {
		t.Fatalf("the direct run is not what the test expects: read %d bytes of %d, wrote %d", len(directIn), len(input), len(directOut))
	}

	w := newWatched(t, RecorderConfig{})
	code, err := Stdio(context.Background(), w.config("script", bytes.NewReader(input)))
	if err != nil || code != 0 {
		t.Fatalf("Stdio = %d, %v; stderr: %s", code, err, w.stderr.Bytes())
	}
	received, err := os.ReadFile(w.dumpPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.stdout.Bytes(); !bytes.Equal(got, directOut) {
		t.Errorf("the host received %d bytes through watch (sha256 %x), %d directly (sha256 %x)", len(got), sha256.Sum256(got), len(directOut), sha256.Sum256(directOut))
	}
	if !bytes.Equal(received, directIn) {
		t.Errorf("the server received %d bytes through watch, %d directly", len(received), len(directIn))
	}

	events := w.events(t)
	var out, in []chrono.Event
	for _, e := range events {
		switch {
		case e.Kind == chrono.KindFrame && e.Channel == "stdin" && e.Dir == chrono.Out:
			out = append(out, e)
		case e.Kind == chrono.KindFrame && e.Channel == "stdout" && e.Dir == chrono.In:
			in = append(in, e)
		}
	}
	if len(out) != 6 || len(in) != 12 {
		t.Fatalf("%d frames out, %d in; want 6 and 12:\n%s", len(out), len(in), dump(events))
	}
	check := func(e chrono.Event, what string, ok bool) {
		if !ok {
			t.Errorf("%s recorded as:\n%s", what, dump([]chrono.Event{e}))
		}
	}
	check(out[0], "initialize", out[0].Summary.Method == "initialize" && out[0].Summary.ID == "1" && !out[0].Truncated)
	check(out[1], "a blank line", out[1].Size == 0 && out[1].Text == "blank line" && out[1].Summary.Malformed == "parse-error")
	check(out[2], "a CRLF frame", out[2].Summary.Method == "notifications/initialized" && out[2].Text == "ends in CRLF" && !bytes.HasSuffix(out[2].Raw, []byte("\r")))
	check(out[3], "garbage", out[3].Summary.Malformed == "invalid-utf8")
	big := out[4]
	check(big, "the large frame", big.Truncated && len(big.Raw) == chrono.DefaultMaxRaw && big.Size == len(strings.SplitN(string(input), "\n", 6)[4]) &&
		big.Summary.ID == "2" && big.Summary.Method == "tools/call" && big.Summary.Token == `"tok"`)
	check(out[5], "the last frame", out[5].Summary.ID == "3" && out[5].Text == "no newline at the end of the stream")
	check(in[5], "the server's large response", in[5].Truncated && in[5].Summary.Kind == "result" && in[5].Summary.ID == "99")
	check(in[3], "the server's garbage", in[3].Summary.Malformed == "invalid-utf8")
	check(in[4], "the server's cut frame", in[4].Summary.Malformed == "parse-error")

	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^started pid (\d+) in process group (\d+): .+$`),
		regexp.MustCompile(`^pid \d+ exited with code 0$`),
		regexp.MustCompile("^" + regexp.QuoteMeta(TextHostClosedStdin) + "$"),
	} {
		found := false
		for _, e := range events {
			found = found || want.MatchString(e.Text)
		}
		if !found {
			t.Errorf("no event matching %s:\n%s", want, dump(events))
		}
	}
	if taps, _ := w.rec.Dropped(); taps != 0 {
		t.Errorf("%d pieces dropped", taps)
	}
}

// pipeHost is a host talking to Stdio over pipes: frames written one by
// one, lines read one by one.
type pipeHost struct {
	in     *io.PipeWriter // the host's writes: Stdio's stdin
	out    *io.PipeReader // Stdio's stdout
	lines  *bufio.Reader
	stdinR *io.PipeReader
	stdout *io.PipeWriter
}

// newPipeHost returns a host whose reads fail once the safety deadline
// has passed, so that a test of a shim that stalls fails instead of
// hanging.
func newPipeHost(t *testing.T) *pipeHost {
	h := &pipeHost{}
	h.stdinR, h.in = io.Pipe()
	h.out, h.stdout = io.Pipe()
	h.lines = bufio.NewReaderSize(h.out, 1<<20)
	guard := time.AfterFunc(safety, func() { h.stdout.CloseWithError(errors.New("safety deadline passed")) })
	t.Cleanup(func() { guard.Stop() })
	return h
}

func (h *pipeHost) send(t *testing.T, frame string) {
	t.Helper()
	if _, err := io.WriteString(h.in, frame+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (h *pipeHost) read(t *testing.T) string {
	t.Helper()
	line, err := h.lines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a line from the shim: %v (got %q)", err, line)
	}
	return line
}

// runStdio runs Stdio in the background; the channel yields its result.
func runStdio(cfg StdioConfig) <-chan [2]any {
	done := make(chan [2]any, 1)
	go func() {
		code, err := Stdio(context.Background(), cfg)
		if pw, ok := cfg.Stdout.(*io.PipeWriter); ok {
			pw.Close()
		}
		done <- [2]any{code, err}
	}()
	return done
}

func waitStdio(t *testing.T, done <-chan [2]any) (int, error) {
	t.Helper()
	select {
	case r := <-done:
		err, _ := r[1].(error)
		return r[0].(int), err
	case <-time.After(safety):
		t.Fatal("Stdio did not return")
		return 0, nil
	}
}

// TestStdioServerCrash: a server that dies mid-conversation while the
// host still holds stdin open: Stdio returns its exit code, the host got
// everything it wrote up to the half frame, and the chronology records
// the half frame, its stderr and its exit.
func TestStdioServerCrash(t *testing.T) {
	for _, tt := range []struct {
		mode     string
		code     int
		exitText string
	}{
		{"crash", 3, "exited with code 3"},
		{"term-self", 128 + int(syscall.SIGTERM), "ended by signal SIGTERM"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			w := newWatched(t, RecorderConfig{})
			h := newPipeHost(t)
			cfg := w.config(tt.mode, h.stdinR)
			cfg.Stdout = h.stdout
			done := runStdio(cfg)
			h.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			rest, err := io.ReadAll(h.lines)
			if err != nil {
				t.Fatal(err)
			}
			code, err := waitStdio(t, done)
			if err != nil || code != tt.code {
				t.Fatalf("Stdio = %d, %v; want %d", code, err, tt.code)
			}
			want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
			if tt.mode == "crash" {
				want += `{"jsonrpc":"2.0","id":2,"res`
			}
			if string(rest) != want {
				t.Errorf("the host read %q, want %q", rest, want)
			}
			events := w.events(t)
			var exit, pid *chrono.Event
			for i, e := range events {
				if e.Kind == chrono.KindExit {
					exit = &events[i]
				}
				if strings.HasPrefix(e.Text, "started pid ") {
					pid = &events[i]
				}
			}
			if exit == nil || !strings.HasSuffix(exit.Text, tt.exitText) || exit.Channel != "process" {
				t.Fatalf("exit recorded as %+v:\n%s", exit, dump(events))
			}
			var n int
			fmt.Sscanf(pid.Text, "started pid %d", &n)
			if left, _ := transport.GroupLeftovers(n); left != 0 {
				t.Errorf("%d processes of group %d left", left, n)
			}
			if tt.mode == "crash" {
				found := 0
				for _, e := range events {
					if e.Kind == chrono.KindStderr && string(e.Raw) == "about to crash" && e.Dir == chrono.In && e.Channel == "stderr" {
						found++
					}
					if e.Kind == chrono.KindFrame && e.Channel == "stdout" && e.Text == "no newline at the end of the stream" && e.Summary.Malformed == "parse-error" {
						found++
					}
				}
				if found != 2 {
					t.Errorf("the stderr line and the half frame not both recorded:\n%s", dump(events))
				}
			}
			h.in.Close()
		})
	}
}

// TestStdioShutdownLadder: when the host closes stdin, the server's stdin
// is closed; a server that stays gets SIGTERM, one that ignores SIGTERM
// gets SIGKILL, each rung recorded before the exit it causes.
func TestStdioShutdownLadder(t *testing.T) {
	for _, tt := range []struct {
		mode string
		code int
		want []string
	}{
		{"echo", 0, []string{TextHostClosedStdin, "exited with code 0"}},
		{"ignore-eof", 0, []string{TextHostClosedStdin, "no exit within", "SIGTERM to process group", "exited with code 0"}},
		{"ignore-term", 128 + int(syscall.SIGKILL), []string{TextHostClosedStdin, "no exit within", "SIGTERM to process group",
			"no exit within", "SIGKILL to process group", "ended by signal SIGKILL"}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			w := newWatched(t, RecorderConfig{})
			h := newPipeHost(t)
			cfg := w.config(tt.mode, h.stdinR)
			cfg.Stdout = h.stdout
			cfg.CloseGrace, cfg.TermGrace = 100*time.Millisecond, 100*time.Millisecond
			done := runStdio(cfg)
			h.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			for {
				if line := h.read(t); strings.Contains(line, `"id":1`) {
					break
				}
			}
			h.in.Close()
			go io.Copy(io.Discard, h.lines)
			code, err := waitStdio(t, done)
			if err != nil || code != tt.code {
				t.Fatalf("Stdio = %d, %v; want %d", code, err, tt.code)
			}
			events := w.events(t)
			i := 0
			for _, e := range events {
				if i < len(tt.want) && strings.Contains(e.Text, tt.want[i]) {
					i++
				}
			}
			if i != len(tt.want) {
				t.Errorf("missing %q in order %q:\n%s", tt.want[i], tt.want, dump(events))
			}
		})
	}
}

// TestStdioForwardsSignals: a signal the host sends the shim reaches the
// server, and is recorded.
func TestStdioForwardsSignals(t *testing.T) {
	w := newWatched(t, RecorderConfig{})
	h := newPipeHost(t)
	cfg := w.config("interrupt", h.stdinR)
	cfg.Stdout = h.stdout
	sigs := make(chan os.Signal, 1)
	cfg.Signals = sigs
	done := runStdio(cfg)
	if line := h.read(t); !strings.Contains(line, "ready") {
		t.Fatalf("first line %q", line)
	}
	sigs <- syscall.SIGINT
	if line := h.read(t); !strings.Contains(line, `"signal":"interrupt"`) {
		t.Errorf("the server said %q", line)
	}
	code, err := waitStdio(t, done)
	if err != nil || code != 0 {
		t.Fatalf("Stdio = %d, %v", code, err)
	}
	w.sink.waitFor(t, "the forwarded signal", func(e chrono.Event) bool {
		return e.Channel == "process" && strings.HasPrefix(e.Text, "SIGINT to process group ") && strings.HasSuffix(e.Text, "SIGINT from the host, forwarded")
	})
	h.in.Close()
}

// TestStdioStderrPassesThrough: the server's stderr reaches the host's
// stderr unchanged and is recorded line by line.
func TestStdioStderrPassesThrough(t *testing.T) {
	w := newWatched(t, RecorderConfig{})
	input := "one\ntwo \x1b[31mred\n"
	code, err := Stdio(context.Background(), w.config("stderr", strings.NewReader(input)))
	if err != nil || code != 0 {
		t.Fatal(code, err)
	}
	if got := string(w.stderr.Bytes()); got != "log: one\nlog: two \x1b[31mred\n" {
		t.Errorf("the host's stderr got %q", got)
	}
	var lines []string
	for _, e := range w.events(t) {
		if e.Kind == chrono.KindStderr {
			lines = append(lines, string(e.Raw))
			if e.Dir != chrono.In || e.Channel != "stderr" {
				t.Errorf("stderr line recorded as %s %s", e.Dir, e.Channel)
			}
		}
	}
	if strings.Join(lines, "|") != "log: one|log: two \x1b[31mred" {
		t.Errorf("stderr recorded as %q", lines)
	}
}

// TestStdioStartErrors: a server that cannot start gives the shell's
// status and an error naming it.
func TestStdioStartErrors(t *testing.T) {
	w := newWatched(t, RecorderConfig{})
	cfg := w.config("echo", strings.NewReader(""))
	cfg.Argv = []string{"/nonexistent/mcp-server"}
	code, err := Stdio(context.Background(), cfg)
	if code != 127 || err == nil || !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
		t.Errorf("missing executable: %d, %v", code, err)
	}
	cfg.Argv = []string{t.TempDir()}
	if code, err := Stdio(context.Background(), cfg); code != 126 || err == nil {
		t.Errorf("a directory as the command: %d, %v", code, err)
	}
}

// TestStdioBlockingSinkNeverStallsForwarding: a sink that blocks for the
// whole conversation costs the capture pieces (counted, and said in the
// chronology), never the conversation: every frame is echoed.
func TestStdioBlockingSinkNeverStallsForwarding(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	first := true
	blocking := sinkFunc(func(chrono.Event) {
		if first {
			first = false
			close(held)
			<-release
		}
	})
	w := newWatched(t, RecorderConfig{Sinks: []Sink{blocking}, QueueTaps: 8})
	h := newPipeHost(t)
	cfg := w.config("echo", h.stdinR)
	cfg.Stdout = h.stdout
	done := runStdio(cfg)
	<-held // the recorder is stuck in the sink from its first event on
	const frames = 2000
	go func() {
		for i := range frames {
			fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
		h.in.Close()
	}()
	for i := range frames {
		var m struct{ ID int }
		if err := json.Unmarshal([]byte(h.read(t)), &m); err != nil || m.ID != i {
			t.Fatalf("echo %d: id %d, %v", i, m.ID, err)
		}
	}
	if code, err := waitStdio(t, done); code != 0 || err != nil {
		t.Fatal(code, err)
	}
	taps, _ := w.rec.Dropped()
	if taps == 0 {
		t.Fatal("nothing dropped with a sink blocked for the whole conversation")
	}
	close(release)
	events := w.events(t)
	last := events[len(events)-1]
	if !strings.HasPrefix(last.Text, TextCaptureIncomplete) || last.Channel != "recorder" || !strings.Contains(last.Text, fmt.Sprintf("%d pieces", taps)) {
		t.Errorf("the last event does not say the capture is incomplete:\n%s", dump(events[len(events)-3:]))
	}
}

// waitUntil polls cond until it holds, failing the test once the safety
// deadline passes: for conditions no event announces (a file another
// process writes, processes that are not the test's children).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(safety)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, safety)
		}
		<-tick.C
	}
}

// TestShimSIGKILLedLeavesNoServer: a host that SIGKILLs the shim in the
// middle of a busy conversation leaves no server behind (the server,
// which ignores the end of its stdin, dies with the shim) and a
// chronology that parses, with what was recorded up to the kill.
func TestShimSIGKILLedLeavesNoServer(t *testing.T) {
	jsonl := filepath.Join(t.TempDir(), "chronology.jsonl")
	cmd := exec.Command(helperArgv()[0])
	cmd.Env = append(os.Environ(), helperEnvFor("shim", shimServerEnv+"=stay", shimJSONLEnv+"="+jsonl)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var hello struct{ Params struct{ Pid int } }
	if err := json.Unmarshal([]byte(first), &hello); err != nil || hello.Params.Pid == 0 {
		t.Fatalf("first line %q: %v", first, err)
	}
	server := hello.Params.Pid
	// The host keeps talking until the kill.
	go func() {
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	go io.Copy(io.Discard, lines)
	recordedFrames := func() int {
		b, _ := os.ReadFile(jsonl)
		return bytes.Count(b, []byte(`"kind":"frame"`))
	}
	waitUntil(t, "1000 frames recorded", func() bool { return recordedFrames() >= 1000 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the shim survived SIGKILL")
	}
	if left := transport.WaitGone(func() int { n, _ := transport.GroupLeftovers(server); return n }, safety); left != 0 {
		syscall.Kill(-server, syscall.SIGKILL)
		t.Fatalf("%d process(es) of the server's group %d outlived the shim", left, server)
	}
	b, err := os.ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	events := readJSONL(t, b)
	if len(events) < 1000 || !strings.HasPrefix(events[0].Text, "started pid ") {
		t.Errorf("%d events recorded before the kill, first %+v", len(events), events[0])
	}
}

// vmKB reads a field of /proc/self/status in kB ("VmRSS", "VmHWM").
func vmKB(t testing.TB, field string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb
		}
	}
	t.Skip("no " + field + " in /proc/self/status")
	return 0
}

// TestStdio100MBFrame: a frame of 100 MB passes whole, both ways, and the
// record keeps its first bytes, its full size and its id; the shim's
// memory grows by a fraction of the frame (the peak RSS of the test
// process, which runs the shim, is measured from before the frame).
func TestStdio100MBFrame(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("100 MB through the shim: not in -short, nor under the race detector, which measures itself")
	}
	const pad = 100 << 20
	head := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"x","arguments":{"pad":"`
	tail := `"},"_meta":{"progressToken":7}}}` + "\n"
	w := newWatched(t, RecorderConfig{})
	h := newPipeHost(t)
	cfg := w.config("echo", h.stdinR)
	cfg.Stdout = h.stdout
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS (%v): measuring from the start of the process", err)
	}
	before := vmKB(t, "VmHWM")
	done := runStdio(cfg)
	sent := sha256.New()
	go func() {
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		out := io.MultiWriter(h.in, sent)
		io.WriteString(out, head)
		for n := 0; n < pad; n += len(chunk) {
			out.Write(chunk)
		}
		io.WriteString(out, tail)
		h.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		h.in.Close()
	}()
	got := sha256.New()
	var size int
	for {
		part, err := h.lines.ReadSlice('\n')
		got.Write(part)
		size += len(part)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			t.Fatal(err)
		}
	}
	if size != len(head)+pad+len(tail) || !bytes.Equal(got.Sum(nil), sent.Sum(nil)) {
		t.Fatalf("the host got back %d bytes, sent %d; same bytes: %v", size, len(head)+pad+len(tail), bytes.Equal(got.Sum(nil), sent.Sum(nil)))
	}
	if line := h.read(t); !strings.Contains(line, `"id":2`) {
		t.Errorf("after the large frame: %q", line)
	}
	if code, err := waitStdio(t, done); code != 0 || err != nil {
		t.Fatal(code, err)
	}
	peak := vmKB(t, "VmHWM")
	events := w.events(t)
	n := 0
	for _, e := range events {
		if e.Kind == chrono.KindFrame && e.Size == size-1 {
			n++
			if !e.Truncated || len(e.Raw) != chrono.DefaultMaxRaw || e.Summary.ID != `"big"` || e.Summary.Token != "7" {
				t.Errorf("the large frame recorded as %s", dump([]chrono.Event{e}))
			}
		}
	}
	if n != 2 {
		t.Errorf("the large frame recorded %d times, want 2 (out and back):\n%s", n, dump(events))
	}
	grew := (peak - before) << 10
	t.Logf("peak RSS grew by %d MB while 2 x %d MB went through", grew>>20, (size >> 20))
	if taps, bytes := w.rec.Dropped(); taps > 0 {
		t.Logf("the recorder dropped %d pieces (%d bytes)", taps, bytes)
	}
	if grew > size/2 {
		t.Errorf("peak RSS grew by %d MB for a frame of %d MB: the shim holds the frame", grew>>20, size>>20)
	}
}

// TestShimHostStopsReading: a host that closes its end of the shim's
// stdout does not kill the shim with SIGPIPE: the shim records that the
// host stopped reading, closes the server's stdin, and exits with the
// server's status once the server has.
func TestShimHostStopsReading(t *testing.T) {
	jsonl := filepath.Join(t.TempDir(), "chronology.jsonl")
	cmd := exec.Command(helperArgv()[0])
	cmd.Env = append(os.Environ(), helperEnvFor("shim", shimServerEnv+"=echo", shimJSONLEnv+"="+jsonl)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close() // the host stops reading before the first answer
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("the shim ended with %v; want the server's status, 0", err)
		}
	case <-time.After(safety):
		cmd.Process.Kill()
		t.Fatal("the shim did not exit")
	}
	b, err := os.ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	events := readJSONL(t, b)
	want := []string{TextHostStoppedReading, "exited with code 0"}
	i := 0
	for _, e := range events {
		if i < len(want) && strings.Contains(e.Text, want[i]) {
			i++
		}
	}
	if i != len(want) {
		t.Errorf("missing %q:\n%s", want[i], dump(events))
	}
}

// TestStdioContextKillsTheGroup: ending Stdio's context is an emergency
// stop: the group gets SIGKILL at once, whatever the ladder.
func TestStdioContextKillsTheGroup(t *testing.T) {
	w := newWatched(t, RecorderConfig{})
	h := newPipeHost(t)
	cfg := w.config("ignore-term", h.stdinR)
	cfg.Stdout = h.stdout
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan [2]any, 1)
	go func() {
		code, err := Stdio(ctx, cfg)
		h.stdout.Close()
		done <- [2]any{code, err}
	}()
	if line := h.read(t); !strings.Contains(line, "ready") {
		t.Fatalf("first line %q", line)
	}
	cancel()
	code, err := waitStdio(t, done)
	if err != nil || code != 128+int(syscall.SIGKILL) {
		t.Fatalf("Stdio = %d, %v; want 137", code, err)
	}
	events := w.events(t)
	found := false
	for _, e := range events {
		found = found || strings.HasPrefix(e.Text, "SIGKILL to process group ") && strings.Contains(e.Text, "run context ended (context canceled)")
	}
	if !found {
		t.Errorf("no SIGKILL recorded for the context:\n%s", dump(events))
	}
	h.in.Close()
}
