package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/internal/hostile"
	"github.com/mcpflight/mcpflight/refserver"
)

// The hostile HTTP tests serve one hostile mode of the reference server in
// this process and run the built check command against it as a child,
// with a short case deadline. They prove, from the JSON report and from
// outside the child, that the run ends, that the attacked cases get a
// clear error (or the right fail) and the others pass, that the child's
// memory stays bounded, and that no server handler is left running once
// the child has gone.

// hostileCaseTimeout is --case-timeout of the hostile runs: stalls are
// named after three quarters of it (httpBound). The unattacked cases must
// pass within it however loaded the machine, so it is generous.
const hostileCaseTimeout = 6 * time.Second

// hostileStall is how the attacked cases' errors name the stall bound.
var hostileStall = httpBound(hostileCaseTimeout).String()

// hostileRSSCapKiB bounds the check process's peak RSS against every
// hostile mode: 256 MiB, a quarter of the 1 GB event.
const hostileRSSCapKiB = 256 << 10

// hostileSafety is the safety net of one check run; no assertion is about
// time.
const hostileSafety = 90 * time.Second

// Cases every hostile run includes: ping and a raw Origin probe are never
// attacked; the others call the slow tool, which every tools/call mode
// attacks (cancel/id-zero among them, so that a lost answer is never
// taken for a step its operation never reached and blamed on RPC-4).
var (
	hostileUnaffected = []string{"ping/empty-result", "http/origin-forbidden"}
	hostileAttacked   = []string{"progress/token-echo-string", "cancel/id-zero"}
)

// hostileReport is what the tests read of the JSON report.
type hostileReport struct {
	Schema   string `json:"schema"`
	ExitCode int    `json:"exitCode"`
	Results  []struct {
		ID          string `json:"id"`
		Verdict     string `json:"verdict"`
		Summary     string `json:"summary"`
		Requirement string `json:"requirement"`
		Actual      string `json:"actual"`
		DurationNs  int64  `json:"durationNs"`
	} `json:"results"`
}

// handlerMeter counts the bytes the server writes and the handlers in
// flight, so that a test can wait for every handler to return.
type handlerMeter struct {
	written atomic.Int64
	mu      sync.Mutex
	active  int
	idle    chan struct{} // closed when active drops to zero
}

func newHandlerMeter() *handlerMeter {
	m := &handlerMeter{idle: make(chan struct{})}
	close(m.idle)
	return m
}

func (m *handlerMeter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		if m.active == 0 {
			m.idle = make(chan struct{})
		}
		m.active++
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.active--
			if m.active == 0 {
				close(m.idle)
			}
			m.mu.Unlock()
		}()
		next.ServeHTTP(&meteredWriter{ResponseWriter: w, m: m}, r)
	})
}

// waitIdle waits for every handler to return, or fails at the safety net.
func (m *handlerMeter) waitIdle(t *testing.T, ctx context.Context) {
	t.Helper()
	m.mu.Lock()
	idle, active := m.idle, m.active
	m.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		t.Fatalf("%d server handlers still running after the check process ended", active)
	}
}

// meteredWriter counts written bytes; it flushes like the writer it wraps.
type meteredWriter struct {
	http.ResponseWriter
	m *handlerMeter
}

func (w *meteredWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.m.written.Add(int64(n))
	return n, err
}

func (w *meteredWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *meteredWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// vmHWM is the VmHWM (peak resident set) of process pid in KiB, 0 if it
// cannot be read.
func vmHWM(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// sampleHWM reads pid's VmHWM every few milliseconds until the returned
// function is called, which returns the largest value read.
func sampleHWM(pid int) func() int64 {
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := vmHWM(pid); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

// hostileRun is one check run against a hostile mode.
type hostileRun struct {
	report         hostileReport
	stdout, stderr string
	// rssKiB is the rusage peak (an upper bound, see runHostileHTTP),
	// hwmKiB the last VmHWM sampled while the child ran (a lower bound,
	// 0 if none could be read).
	rssKiB, hwmKiB int64
	wall           time.Duration
	written        int64
}

// runHostileHTTP serves mode and runs check against it with the cases
// matching globs.
func runHostileHTTP(t *testing.T, mode hostile.Mode, globs ...string) hostileRun {
	t.Helper()
	return runHostileHTTPWith(t, mode, nil, globs...)
}

// runHostileHTTPWith is runHostileHTTP with extra check flags.
func runHostileHTTPWith(t *testing.T, mode hostile.Mode, flags []string, globs ...string) hostileRun {
	t.Helper()
	if _, err := hostile.Lookup(string(mode), hostile.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	inner := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	meter := newHandlerMeter()
	ts := httptest.NewServer(meter.wrap(hostile.Handler(mode, inner)))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		inner.Close()
		ts.Close()
	})
	reportPath := filepath.Join(t.TempDir(), "report.json")
	args := []string{"check", "--protocol", "2025-11-25", "--url", ts.URL + "/mcp", "--profile", "reference",
		"--case-timeout", hostileCaseTimeout.String(), "--json", reportPath}
	for _, g := range globs {
		args = append(args, "--case", g)
	}
	args = append(args, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), hostileSafety)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting check: %v", err)
	}
	// The child's rusage peak is at least the high-water mark of this
	// (bigger) process at the spawn: Linux keeps the larger across the
	// vfork and exec. So the child's own peak is also sampled from /proc.
	parentHWM := vmHWM(os.Getpid())
	sampled := sampleHWM(cmd.Process.Pid)
	err := cmd.Wait()
	wall := time.Since(start)
	hwm := sampled()
	if ctx.Err() != nil {
		t.Fatalf("check against %s did not end before the %s safety net\nstdout:\n%s", mode, hostileSafety, stdout.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running check: %v", err)
	}
	meter.waitIdle(t, ctx)
	run := hostileRun{stdout: stdout.String(), stderr: stderr.String(), wall: wall, written: meter.written.Load(), hwmKiB: hwm}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.rssKiB = ru.Maxrss
	}
	raw, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatalf("no JSON report: %v\nstderr:\n%s", err, run.stderr)
	}
	if err := json.Unmarshal(raw, &run.report); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	if run.report.Schema != "mcpflight.report/v1" {
		t.Errorf("schema %q", run.report.Schema)
	}
	t.Logf("hostile %s: check ran %.2fs, exit %d; peak RSS %d KiB sampled (VmHWM), at most %d KiB by rusage (this test process's high-water mark at the spawn: %d KiB); server wrote %d bytes",
		mode, wall.Seconds(), run.report.ExitCode, run.hwmKiB, run.rssKiB, parentHWM, run.written)
	// The rusage figure starts at this process's own size when it spawned
	// check, which tests running beside this one may have grown since the
	// sample above: only above this process's peak afterwards is it check's.
	if run.rssKiB <= 0 || (run.rssKiB > hostileRSSCapKiB && run.rssKiB > vmHWM(os.Getpid())) {
		t.Errorf("peak RSS of check %d KiB by rusage, want within (0, %d]", run.rssKiB, hostileRSSCapKiB)
	}
	if run.hwmKiB > hostileRSSCapKiB {
		t.Errorf("peak RSS of check %d KiB sampled, want at most %d", run.hwmKiB, hostileRSSCapKiB)
	}
	if strings.ContainsAny(run.stdout+run.stderr, "\x1b\x07") {
		t.Errorf("terminal control bytes reached check's output:\n%q", run.stdout)
	}
	if len(run.report.Results) != len(globs) {
		t.Errorf("%d results for %d cases", len(run.report.Results), len(globs))
	}
	return run
}

// expect checks case id's verdict, its cited requirement (if req is not
// empty) and that its summary or actual names every one of want.
func (r hostileRun) expect(t *testing.T, id, verdict, req string, want ...string) {
	t.Helper()
	for _, res := range r.report.Results {
		if res.ID != id {
			continue
		}
		text := res.Summary + " " + res.Actual
		if res.Verdict != verdict || (req != "" && res.Requirement != req) {
			t.Errorf("%s: %s (requirement %q): %s; want %s %s", id, res.Verdict, res.Requirement, text, verdict, req)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q does not name %q", id, text, w)
			}
		}
		if strings.ContainsAny(text, "\x1b\x07") {
			t.Errorf("%s: control bytes in %q", id, text)
		}
		return
	}
	t.Errorf("no result for %s", id)
}

// runToolsCallMode runs a mode that attacks tools/call: the slow-tool
// cases get an error (the first one naming every one of want), the
// others pass.
func runToolsCallMode(t *testing.T, mode hostile.Mode, want ...string) hostileRun {
	t.Helper()
	return runToolsCallModeWith(t, mode, nil, want...)
}

// runToolsCallModeWith is runToolsCallMode with extra check flags.
func runToolsCallModeWith(t *testing.T, mode hostile.Mode, flags []string, want ...string) hostileRun {
	t.Helper()
	r := runHostileHTTPWith(t, mode, flags, append(hostileAttacked, hostileUnaffected...)...)
	r.expect(t, hostileAttacked[0], "error", "", want...)
	for _, id := range hostileAttacked[1:] {
		r.expect(t, id, "error", "")
	}
	for _, id := range hostileUnaffected {
		r.expect(t, id, "pass", "")
	}
	if r.report.ExitCode != ExitError {
		t.Errorf("exit code %d, want %d (an error, no fail)", r.report.ExitCode, ExitError)
	}
	return r
}

func TestHostileHTTPSlowHeaders(t *testing.T) {
	t.Parallel()
	runToolsCallMode(t, hostile.SlowHeaders, "no response headers within "+hostileStall, "stalled")
}

func TestHostileHTTPSilentSSE(t *testing.T) {
	t.Parallel()
	runToolsCallMode(t, hostile.SilentSSE, "stalled", "nothing for "+hostileStall)
}

func TestHostileHTTPHugeEvent(t *testing.T) {
	t.Parallel()
	r := runToolsCallMode(t, hostile.HugeEvent, "SSE event exceeds the maximum event size", "4194304")
	// The client closed the stream at the event limit, and the server,
	// whose handlers have all returned (runHostileHTTP), stopped writing
	// long before its gigabyte.
	if r.written >= hostile.HugeEventSize/4 {
		t.Errorf("the server wrote %d bytes: the client did not close the stream at the event limit", r.written)
	}
}

func TestHostileHTTPRedirectLoop(t *testing.T) {
	t.Parallel()
	runToolsCallMode(t, hostile.RedirectLoop, "HTTP 307", `Location "/mcp"`, "not followed")
}

// TestHostileHTTPStatus500 also renders the hostile body through -v, the
// HTML and the JUnit report: no control byte and no live script tag.
func TestHostileHTTPStatus500(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	html, junit := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.xml")
	r := runToolsCallModeWith(t, hostile.Status500, []string{"-v", "--html", html, "--junit", junit},
		"HTTP 500", `\u001b[31mserver on fire`, "<script>")
	if !strings.Contains(r.stdout, `\u001b[31mserver on fire`) {
		t.Errorf("the console does not show the hostile body escaped:\n%s", r.stdout)
	}
	for _, f := range []string{html, junit} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsAny(raw, "\x1b\x07") {
			t.Errorf("%s holds control bytes", filepath.Base(f))
		}
		if f == html && bytes.Contains(raw, []byte("<script>alert")) {
			t.Errorf("the HTML report holds the server's script tag unescaped")
		}
	}
}

func TestHostileHTTPWrongContentType(t *testing.T) {
	t.Parallel()
	runToolsCallMode(t, hostile.WrongContentType, "unexpected Content-Type", "text/html", "HTTP-14")
}

func TestHostileHTTPNonJSONBody(t *testing.T) {
	t.Parallel()
	// A body that is not JSON is no JSON-RPC message: the schema check,
	// which sees every message of every session, fails it under RPC-2
	// (the case that could not get past it names it), and the run is
	// non-conformant, not inconclusive.
	r := runHostileHTTPWith(t, hostile.NonJSONBody, nil, append(hostileAttacked, hostileUnaffected...)...)
	for _, id := range hostileAttacked {
		r.expect(t, id, "fail", "RPC-2", "not JSON, so no JSON-RPC message", "this is not JSON")
	}
	for _, id := range hostileUnaffected {
		r.expect(t, id, "pass", "")
	}
	if r.report.ExitCode != ExitNonConformant {
		t.Errorf("exit code %d, want %d (a fail)", r.report.ExitCode, ExitNonConformant)
	}
}

// TestHostileHTTPBadSessionID: the session works through the mapped ID,
// so calls pass; the cases that read the session ID fail on HTTP-48.
func TestHostileHTTPBadSessionID(t *testing.T) {
	t.Parallel()
	r := runHostileHTTP(t, hostile.BadSessionID, append([]string{"http/session-id-visible-ascii", "http/delete-then-404-then-new-session"}, append(hostileAttacked, hostileUnaffected...)...)...)
	r.expect(t, "http/session-id-visible-ascii", "fail", "HTTP-48", "mcp session ", "\u00e9t\u00e9")
	r.expect(t, "http/delete-then-404-then-new-session", "fail", "HTTP-48")
	for _, id := range append(hostileAttacked, hostileUnaffected...) {
		r.expect(t, id, "pass", "")
	}
	if r.report.ExitCode != ExitNonConformant {
		t.Errorf("exit code %d, want %d", r.report.ExitCode, ExitNonConformant)
	}
}

// TestHostileHTTPServeFlag runs "serve --http 127.0.0.1:0 --hostile
// slow-headers" as a child, checks it with a held tools/call, and stops
// it with SIGINT: the flag wires the mode, and a server whose handler
// held a request still exits.
func TestHostileHTTPServeFlag(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), hostileSafety)
	defer cancel()
	serve := exec.CommandContext(ctx, binary, "serve", "--http", "127.0.0.1:0", "--hostile", string(hostile.SlowHeaders))
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = io.Discard
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			_ = serve.Process.Kill()
			_ = serve.Wait()
		}
	}()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL serve prints: %v", err)
	}
	url = strings.TrimSpace(url)
	report := filepath.Join(t.TempDir(), "report.json")
	check := exec.CommandContext(ctx, binary, "check", "--protocol", "2025-11-25", "--url", url, "--profile", "reference",
		"--case-timeout", hostileCaseTimeout.String(), "--json", report, "--case", hostileAttacked[0], "--case", hostileUnaffected[0])
	if err := check.Run(); err == nil || ctx.Err() != nil {
		t.Fatalf("check: %v (want exit %d before the safety net)", err, ExitError)
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep hostileReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	(hostileRun{report: rep}).expect(t, hostileAttacked[0], "error", "", "no response headers within "+hostileStall)
	(hostileRun{report: rep}).expect(t, hostileUnaffected[0], "pass", "")
	if err := serve.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = serve.Wait()
	exited = true
	if ctx.Err() != nil {
		t.Fatal("serve did not exit after SIGINT before the safety net")
	}
	if err != nil {
		t.Errorf("serve after SIGINT: %v", err)
	}
}
