package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/verdict"
)

// conversationDirs are the folders watch created under root, in name
// order.
func conversationDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	return dirs
}

// watchedResult is a result of a watched conversation's report.json.
type watchedResult struct {
	ID          string            `json:"id"`
	Verdict     verdict.Verdict   `json:"verdict"`
	Requirement string            `json:"requirement"`
	Summary     string            `json:"summary"`
	Events      []json.RawMessage `json:"events"`
}

// readResult reads the result id of the report.json in dir.
func readResult(t *testing.T, dir, id string) (watchedResult, bool) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []watchedResult `json:"results"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	for _, r := range rep.Results {
		if r.ID == id {
			return r, true
		}
	}
	return watchedResult{}, false
}

// TestWatchShimJudgesWhatCheckJudges: check drives a server whose
// progress repeats a value (non-increasing-progress) through "watch --",
// as a host would; check fails it under PRG-4, and watch, seeing only
// the wire, finds the same under the same requirement, prints it as one
// line, writes its folder (a new one per server process, never one
// reused) and judges the saved capture again the same way. (A response
// after a cancel is no fit here: the control extension paces the
// reference server's steps, so its answer lands within the crossing
// window that passive evidence must allow; check knows by the
// extension, watch rightly cannot.)
func TestWatchShimJudgesWhatCheckJudges(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	shim := binary + " watch --out " + root + " -- " + binary + " serve --stdio --fault non-increasing-progress"
	r := runCLI(t, "", "check", "--stdio", shim, "--profile", "reference", "--case", "progress/strictly-increasing", "--protocol", "2025-11-25")
	if r.code != ExitNonConformant || !strings.Contains(r.stdout, "FAIL  progress/strictly-increasing") || !strings.Contains(r.stdout, "PRG-4 MUST") {
		t.Fatalf("check through watch: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var judged string
	for _, dir := range conversationDirs(t, root) {
		findings, err := os.ReadFile(filepath.Join(dir, findingsName))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(findings), "fail server/progress-increasing PRG-4 (MUST, 2025-11-25)") {
			continue
		}
		judged = dir
		res, ok := readResult(t, dir, "server/progress-increasing")
		if !ok || res.Verdict != verdict.Fail || res.Requirement != "PRG-4" || len(res.Events) == 0 {
			t.Errorf("report.json's server/progress-increasing: %+v", res)
		}
		again := runCLI(t, "", "judge", dir)
		if again.code != ExitNonConformant || !strings.Contains(again.stdout, "FAIL  server/progress-increasing") {
			t.Errorf("judge of the capture: exit %d\n%s", again.code, again.stdout)
		}
	}
	if judged == "" {
		for _, dir := range conversationDirs(t, root) {
			f, _ := os.ReadFile(filepath.Join(dir, findingsName))
			t.Logf("%s: %s", dir, f)
		}
		t.Fatalf("no conversation under %s found the repeated progress", root)
	}
}

// TestWatchStdioExitStatus: the shim exits as the server did, and as a
// shell would for a command that cannot run, with one line on stderr;
// the folder is written either way.
func TestWatchStdioExitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		argv   []string
		code   int
		stderr string
	}{
		{"exit code", []string{"sh", "-c", "exit 7"}, 7, ""},
		{"killed by a signal", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15, ""},
		{"not found", []string{"/nonexistent/mcp-server"}, 127, "mcpflight watch: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			r := runCLI(t, "", append([]string{"watch", "-q", "--out", root, "--"}, tc.argv...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || r.stdout != "" {
				t.Errorf("exit %d (want %d), stdout %q, stderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			dirs := conversationDirs(t, root)
			if len(dirs) != 1 {
				t.Fatalf("folders %v; want one", dirs)
			}
			for _, f := range []string{captureName, findingsName, "report.json", "report.html", "junit.xml"} {
				if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestWatchRedactsEnvironmentSecrets: a server that echoes the API key
// its environment gave it reaches the host unchanged, and the recording
// and the reports never show it.
func TestWatchRedactsEnvironmentSecrets(t *testing.T) {
	const secret = "tok-9f8e7d6c5b4a"
	t.Setenv("MCPFLIGHT_TEST_API_TOKEN", secret)
	root := t.TempDir()
	script := `read line; printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"key %s"}}\n' "$MCPFLIGHT_TEST_API_TOKEN"`
	r := runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", "watch", "-q", "--out", root, "--", "sh", "-c", script)
	if r.code != 0 || !strings.Contains(r.stdout, "key "+secret) {
		t.Fatalf("exit %d; the host did not get the server's bytes unchanged: %q\n%s", r.code, r.stdout, r.stderr)
	}
	dirs := conversationDirs(t, root)
	if len(dirs) != 1 {
		t.Fatalf("folders %v", dirs)
	}
	for _, f := range []string{captureName, "report.json", "report.html", "junit.xml"} {
		raw, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%s shows the secret", f)
		}
		if f == captureName && !bytes.Contains(raw, []byte("key ")) {
			t.Errorf("%s lacks the server's message", f)
		}
	}
}

// lineWaiter is a writer that tells when a line matching a pattern was
// written, and keeps everything.
type lineWaiter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	found chan string
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.re != nil {
		if m := w.re.FindStringSubmatch(w.buf.String()); m != nil {
			w.found <- m[1]
			w.re = nil
		}
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestWatchProxy: check drives the reference server (its progress
// repeating a value) through the proxy; the proxy says where to point
// the host, and when it is stopped (its context, Ctrl-C) writes the
// folder, prints the report with the finding check made, under the same
// requirement, and exits with the report's code.
func TestWatchProxy(t *testing.T) {
	t.Parallel()
	h := refserver.New(refserver.Options{Faults: refserver.FaultSet{refserver.FaultNonIncreasingProgress: true}}).HTTPHandler(refserver.HTTPOptions{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	root := t.TempDir()
	w := runWatchProxy(t, "--out", root, "--target", ts.URL+"/mcp")
	proxyURL, stderr := w.url, w.stderr
	r := runCLI(t, "", "check", "--url", proxyURL, "--profile", "reference", "--case", "progress/strictly-increasing", "--protocol", "2025-11-25")
	if !strings.Contains(r.stdout, "FAIL  progress/strictly-increasing") {
		t.Fatalf("check through the proxy: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	code := w.stop(t)
	out := w.stdout.String()
	if res, ok := readResult(t, dirs0(t, root), "server/progress-increasing"); !ok || res.Verdict != verdict.Fail || res.Requirement != "PRG-4" {
		t.Errorf("report.json's server/progress-increasing: %+v", res)
	}
	if want := reportExitCode(t, dirs0(t, root)); code != want || code != ExitNonConformant || !strings.Contains(out, "FAIL  server/progress-increasing") {
		t.Errorf("exit %d; report:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), "mcpflight watch: fail server/progress-increasing PRG-4") {
		t.Errorf("no live line for the finding on stderr:\n%s", stderr.String())
	}
}

// watchInProcess is a watch proxy run in this process by runWatchProxy.
type watchInProcess struct {
	url    string
	stdout *bytes.Buffer
	stderr *lineWaiter
	cancel context.CancelFunc
	done   chan int
}

// runWatchProxy runs "mcpflight watch" with args in this process and
// waits for the URL it prints; stop ends it (its context, as Ctrl-C
// does) and returns its exit code.
func runWatchProxy(t *testing.T, args ...string) *watchInProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchInProcess{stdout: &bytes.Buffer{}, stderr: &lineWaiter{re: regexp.MustCompile(`point the host at (\S+)`), found: make(chan string, 1)},
		cancel: cancel, done: make(chan int, 1)}
	t.Cleanup(cancel)
	go func() {
		env := Env{Stdin: strings.NewReader(""), Stdout: w.stdout, Stderr: w.stderr, ServeCommand: []string{binary}, Getenv: func(string) string { return "" }}
		w.done <- env.Run(ctx, append([]string{"watch"}, args...))
	}()
	select {
	case w.url = <-w.stderr.found:
	case code := <-w.done:
		t.Fatalf("watch exited %d before listening:\n%s", code, w.stderr.String())
	case <-time.After(zooSafety):
		t.Fatalf("watch never said where it listens:\n%s", w.stderr.String())
	}
	return w
}

func (w *watchInProcess) stop(t *testing.T) int {
	t.Helper()
	w.cancel()
	select {
	case code := <-w.done:
		return code
	case <-time.After(zooSafety):
		t.Fatal("watch did not end with its context")
		return 0
	}
}

// dirs0 is the one folder watch created under root.
func dirs0(t *testing.T, root string) string {
	t.Helper()
	dirs := conversationDirs(t, root)
	if len(dirs) != 1 {
		t.Fatalf("folders %v; want one", dirs)
	}
	return dirs[0]
}

// reportExitCode is the exit code the report.json in dir gives.
func reportExitCode(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		ExitCode *int `json:"exitCode"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || rep.ExitCode == nil {
		t.Fatalf("report.json: no exit code (%v)", err)
	}
	return *rep.ExitCode
}

// TestWatchUsage: the ways to call watch wrongly are one line each.
func TestWatchUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "watch needs a server"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "--", "node", "x.js"}, "name two servers"},
		{[]string{"--stdio", "node x.js", "--", "node", "x.js"}, "name two servers"},
		{[]string{"--listen", "127.0.0.1:0", "--", "node", "x.js"}, "are for the HTTP proxy"},
		{[]string{"--target", "127.0.0.1:1/mcp"}, "did you mean http://"},
		{[]string{"--side", "moon", "--", "x"}, "--side must be"},
		{[]string{"--otlp-endpoint", "localhost:4318", "--out", "@TMP", "--", "x"}, "--otlp-endpoint"},
		{[]string{"--listen", "0.0.0.0:0", "--out", "@TMP", "--target", "http://127.0.0.1:1/mcp"}, "not a loopback address"},
		{[]string{"--observer", "server-everything", "--", "x"}, "names no observer"},
		{[]string{"--observer", "server-everything", "--target", "http://127.0.0.1:1/mcp"}, "names no observer"},
		{[]string{"--observer", "no-such-profile", "--target", "http://127.0.0.1:1/mcp"}, "--observer: profile \"no-such-profile\""},
	} {
		args := append([]string{"watch"}, tc.args...)
		for i, a := range args {
			if a == "@TMP" {
				args[i] = t.TempDir()
			}
		}
		r := runCLI(t, "", args...)
		if r.code != ExitError || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
			t.Errorf("%q: exit %d, stderr %q; want %q in at most two lines", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestConversationDirs: a conversation's folder is named after the
// server the host started, and a folder that exists is never reused.
func TestConversationDirs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything@2026.1.1"}, "server-everything"},
		{[]string{"node", "/srv/mcp/dist/index.js"}, "index"},
		{[]string{"/usr/local/bin/my-server", "--port", "1"}, "my-server"},
		{[]string{"uvx", "mcp-server-fetch"}, "mcp-server-fetch"},
		{[]string{"./weird\x1b[31mname"}, "weird31mname"},
		{nil, "server"},
	} {
		if got := conversationName(tc.argv); got != tc.want {
			t.Errorf("conversationName(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
	root := t.TempDir()
	at := time.Date(2026, 12, 6, 14, 25, 1, 0, time.UTC)
	var got []string
	for range 3 {
		dir, err := newConversationDir(root, at, "srv")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(dir))
	}
	want := []string{"20261206-142501-srv", "20261206-142501-srv-2", "20261206-142501-srv-3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("folders %v, want %v", got, want)
	}
}

// TestLiveFindingsBoundedPerRule: a rule broken on every message prints
// livePerRule lines on stderr and then one that says the rest go to
// findings.txt, which has every one; another rule still prints.
func TestLiveFindingsBoundedPerRule(t *testing.T) {
	var file, stderr bytes.Buffer
	l := &liveFindings{file: &file, stderr: &stderr, prefix: "mcpflight watch: ", redact: chrono.NewRedactor()}
	const n = 3 * livePerRule
	for i := range n {
		l.finding(monitor.Finding{Rule: monitor.RuleOneResponse, Side: monitor.Server, Seq: uint64(i + 1), Verdict: verdict.Fail, Text: "a response for an ID never sent"})
	}
	l.finding(monitor.Finding{Rule: monitor.RuleProgressIncreasing, Side: monitor.Server, Seq: 99, Verdict: verdict.Fail, Text: "progress 1 after 1"})
	if got := strings.Count(file.String(), "\n"); got != n+1 {
		t.Errorf("findings.txt has %d lines; want %d", got, n+1)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != livePerRule+2 || !strings.Contains(lines[livePerRule], "server/one-response: 10 findings printed; the rest go to findings.txt alone") ||
		!strings.Contains(lines[livePerRule+1], "server/progress-increasing") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
