// Package targets starts the npm test targets of testdata/targets for the
// integration tests: the TypeScript SDK v2 dual-era server
// (testdata/targets/bothrevisions.mjs on @modelcontextprotocol/server 2.4.0),
// and builds and starts the Go test targets that are modules of their own
// (testdata/gosdkserver, testdata/mcpgoserver, testdata/gosdkclient: GoBinary,
// GoServerHTTP; testdata/otlpreceiver, the OpenTelemetry Collector's OTLP
// receiver the telemetry tests export to, is built the same way).
// The targets' node_modules is $MCPFLIGHT_TARGETS_DIR/node_modules when
// that variable is set (a scratch `npm ci` of testdata/targets), else
// testdata/targets/node_modules, which .ci/run installs. Without node or
// the SDK a test is skipped, and under CI it fails.
package targets

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvDir names the variable that points at another installation of the
// targets.
const EnvDir = "MCPFLIGHT_TARGETS_DIR"

// repoTargets is testdata/targets of the repository this file is in.
func repoTargets() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "targets")
}

// NodeModules is the node_modules the targets run against.
func NodeModules() string {
	if dir := os.Getenv(EnvDir); dir != "" {
		return filepath.Join(dir, "node_modules")
	}
	return filepath.Join(repoTargets(), "node_modules")
}

// Need returns the node binary, or skips t (fails it under CI) when node
// or the script at path is missing.
func Need(t testing.TB, path string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(path)
	if err != nil || statErr != nil {
		msg := fmt.Sprintf("needs node and %s (cd testdata/targets && npm ci, or point %s at such an install): %v %v", path, EnvDir, err, statErr)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// BothRevisions returns the command line that runs bothrevisions.mjs with
// args (for example "stdio", or "stdio", "--2026-only"). The script is
// copied into a temporary folder beside a link to NodeModules, so that Node
// resolves the SDK from whichever installation is in use.
func BothRevisions(t testing.TB, args ...string) []string {
	t.Helper()
	nm := NodeModules()
	node := Need(t, filepath.Join(nm, "@modelcontextprotocol", "server", "package.json"))
	src, err := os.ReadFile(filepath.Join(repoTargets(), "bothrevisions.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bothrevisions.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(nm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return append([]string{node, filepath.Join(dir, "bothrevisions.mjs")}, args...)
}

// BothRevisionsHTTP starts bothrevisions.mjs over Streamable HTTP (extra are
// more arguments, such as "--2026-only") and returns its URL. The server is
// stopped (its stdin closed, then killed if need be) when the test ends.
func BothRevisionsHTTP(t testing.TB, extra ...string) string {
	t.Helper()
	return startHTTP(t, "bothrevisions", BothRevisions(t, append([]string{"http"}, extra...)...))
}

// startHTTP runs argv, a server that prints its URL as its first line on
// stdout and exits when its stdin ends, and returns that URL. The server
// is stopped (its stdin closed, then killed if need be) when the test
// ends; its stderr goes to the test's log, prefixed with label.
func startHTTP(t testing.TB, label string, argv []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = &prefixWriter{t: t, label: label}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second): // a safety net: it exits on stdin's end
			cancel()
			<-exited
		}
		cancel()
	})
	lines := make(chan string, 1)
	go func() {
		rd := bufio.NewReader(stdout)
		line, _ := rd.ReadString('\n')
		lines <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, rd)
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case url := <-lines:
		if !strings.HasPrefix(url, "http://") {
			t.Fatalf("%s http printed %q, not its URL", label, url)
		}
		return url
	case <-time.After(30 * time.Second): // a safety net for the server's start
		t.Fatalf("%s http printed no URL within 30s", label)
	}
	return ""
}

// goBuilds holds GoBinary's builds, one per module for the test binary.
var goBuilds sync.Map // name -> *goBuild

type goBuild struct {
	once sync.Once
	bin  string
	err  error
}

// GoModule is the folder of testdata/NAME, a Go test target that is a
// module of its own (testdata/gosdkserver, testdata/mcpgoserver,
// testdata/gosdkclient, testdata/otlpreceiver).
func GoModule(name string) string {
	return filepath.Join(filepath.Dir(repoTargets()), name)
}

// GoBinary returns the path of testdata/NAME's binary, built with go build
// (GOWORK=off, in the module's folder, so that its own go.mod and go.sum
// decide its dependencies) once per test binary, and kept between runs
// under the content of the module (buildGo).
// The build needs the Go module proxy, or a module cache that holds the
// dependencies: when it fails the test is skipped with the build's
// output, and under CI it fails.
func GoBinary(t testing.TB, name string) string {
	t.Helper()
	v, _ := goBuilds.LoadOrStore(name, &goBuild{})
	b := v.(*goBuild)
	b.once.Do(func() { b.bin, b.err = buildGo(name) })
	if b.err != nil {
		msg := fmt.Sprintf("building testdata/%s: %v", name, b.err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return b.bin
}

func buildGo(name string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	// One binary per content of the module, kept between test runs in a
	// folder of its own: a folder per build was left behind by every run
	// (12 MB each), and a test cleanup would remove it under a later test.
	sum, err := moduleSum(GoModule(name))
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "mcpflight-testbin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name+"-"+sum)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// Built aside and renamed into place, so that two test binaries
	// building at once never run a half-written file.
	tmp, err := os.MkdirTemp(dir, name+"-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goBin, "build", "-o", filepath.Join(tmp, name), ".")
	cmd.Dir = GoModule(name)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	if err := os.Rename(filepath.Join(tmp, name), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// moduleSum is a short hash of the files of the module in dir (its
// go.mod, go.sum and Go sources): the name of the binary built from them.
func moduleSum(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !(strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// GoServerHTTP starts testdata/NAME's binary (GoBinary) as
// "NAME http -watch-stdin ARGS..." (for example "-stateless") on a free
// loopback port and returns its URL; the server is stopped when the test
// ends.
func GoServerHTTP(t testing.TB, name string, args ...string) string {
	t.Helper()
	bin := GoBinary(t, name)
	return startHTTP(t, name, append([]string{bin, "http", "-watch-stdin"}, args...))
}

// prefixWriter logs the server's stderr into the test's log.
type prefixWriter struct {
	t     testing.TB
	label string
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s stderr: %s", w.label, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// EverythingHTTP runs server-everything's script in streamableHttp mode
// on a free loopback port and returns its endpoint and pid once it says
// it listens; the process is killed and reaped when tb ends. Waiting is
// on the server's own "listening on port" line; the 2-minute bound is a
// safety net, far above a node start even on a heavily loaded machine.
func EverythingHTTP(tb testing.TB, node, script string) (url string, pid int) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				ready <- nil
				for sc.Scan() {
				}
				return
			}
		}
		ready <- fmt.Errorf("server-everything ended before listening: %v", sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			tb.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		tb.Fatal("server-everything did not start listening within 2 minutes")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), cmd.Process.Pid
}
