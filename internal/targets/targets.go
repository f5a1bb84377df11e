// Package targets starts the npm test targets of testdata/targets for the
// integration tests: the TypeScript SDK v2 dual-era server
// (testdata/targets/dualera.mjs on @modelcontextprotocol/server 2.4.0).
// The targets' node_modules is $MCPFLIGHT_TARGETS_DIR/node_modules when
// that variable is set (a scratch `npm ci` of testdata/targets), else
// testdata/targets/node_modules, which .ci/run installs. Without node or
// the SDK a test is skipped, and under CI it fails.
package targets

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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

// DualEra returns the command line that runs dualera.mjs with args (for
// example "stdio", or "stdio", "--modern-only"). The script is copied into
// a temporary folder beside a link to NodeModules, so that Node resolves
// the SDK from whichever installation is in use.
func DualEra(t testing.TB, args ...string) []string {
	t.Helper()
	nm := NodeModules()
	node := Need(t, filepath.Join(nm, "@modelcontextprotocol", "server", "package.json"))
	src, err := os.ReadFile(filepath.Join(repoTargets(), "dualera.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dualera.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(nm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return append([]string{node, filepath.Join(dir, "dualera.mjs")}, args...)
}

// DualEraHTTP starts dualera.mjs over Streamable HTTP (extra are more
// arguments, such as "--modern-only") and returns its URL. The server is
// stopped (its stdin closed, then killed if need be) when the test ends.
func DualEraHTTP(t testing.TB, extra ...string) string {
	t.Helper()
	argv := DualEra(t, append([]string{"http"}, extra...)...)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = &prefixWriter{t: t}
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
			t.Fatalf("dualera.mjs http printed %q, not its URL", url)
		}
		return url
	case <-time.After(30 * time.Second): // a safety net for node's start
		t.Fatal("dualera.mjs http printed no URL within 30s")
	}
	return ""
}

// prefixWriter logs the server's stderr into the test's log.
type prefixWriter struct{ t testing.TB }

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.t.Logf("dualera stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// EverythingHTTP runs server-everything's script in streamableHttp mode
// on a free loopback port and returns its endpoint and pid once it says
// it listens; the process is killed and reaped when tb ends. Waiting is
// on the server's own "listening on port" line; the 2-minute bound is a
// safety net (under heavy load node once took more than 30 s to start).
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
