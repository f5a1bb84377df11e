package watch

import (
	"bufio"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// blockingPipe is a pipe whose ends are in blocking mode, as a host
// hands them to the shim: os.NewFile on a blocking descriptor gives an
// *os.File that reads and writes it as os.Stdin and os.Stdout do.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// nonblocking reports whether f's descriptor is in non-blocking mode,
// without changing it (os.File.Fd would set it blocking).
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	if cerr := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); cerr != nil || err != nil {
		t.Fatalf("F_GETFL of %s: %v %v", f.Name(), cerr, err)
	}
	return flags&unix.O_NONBLOCK != 0
}

// TestHostPipesPolledWhileWatchedThenRestored: the host's pipes, handed
// to Stdio in blocking mode, are non-blocking while the conversation
// runs (so that the forwarders wait in the netpoller) and blocking again,
// still open, once Stdio has returned.
func TestHostPipesPolledWhileWatchedThenRestored(t *testing.T) {
	shimIn, hostW := blockingPipe(t)
	hostR, shimOut := blockingPipe(t)
	w, done := watchEcho(t, shimIn, shimOut)
	lines := bufio.NewReader(hostR)
	for i := range 3 {
		ping := `{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"ping"}` + "\n"
		if _, err := hostW.WriteString(ping); err != nil {
			t.Fatal(err)
		}
		if echo, err := lines.ReadString('\n'); err != nil || echo != ping {
			t.Fatalf("echo %q, %v; want %q", echo, err, ping)
		}
	}
	if !nonblocking(t, shimIn) || !nonblocking(t, shimOut) {
		t.Errorf("while watched: stdin non-blocking %v, stdout %v; want both", nonblocking(t, shimIn), nonblocking(t, shimOut))
	}
	hostW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if nonblocking(t, shimIn) || nonblocking(t, shimOut) {
		t.Errorf("after Stdio: stdin non-blocking %v, stdout %v; want neither", nonblocking(t, shimIn), nonblocking(t, shimOut))
	}
	// The host's ends are still the shim's: stdout still reaches the host.
	if _, err := shimOut.WriteString("after\n"); err != nil {
		t.Fatalf("writing stdout after Stdio: %v", err)
	}
	if line, err := lines.ReadString('\n'); err != nil || line != "after\n" {
		t.Errorf("after Stdio the host read %q, %v", line, err)
	}
	w.events(t)
}

// TestHostTerminalLeftBlocking: a terminal on stdin (a user typing to
// the server) keeps its blocking mode while watched, since every
// process on the terminal shares it; the conversation goes on as over a
// pipe.
func TestHostTerminalLeftBlocking(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptm.Close()
	pts.Close()
	// Opened raw, the terminal is in blocking mode, as a shell hands it.
	fd, err := syscall.Open(pts.Name(), syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	tty := os.NewFile(uintptr(fd), pts.Name())
	defer tty.Close()
	w := newWatched(t, RecorderConfig{})
	done := make(chan error, 1)
	go func() {
		_, err := Stdio(context.Background(), w.config("echo", tty))
		done <- err
	}()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if _, err := ptm.WriteString(ping + "\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the echo of the typed line", func() bool { return strings.Contains(string(w.stdout.Bytes()), ping) })
	if nonblocking(t, tty) {
		t.Error("the terminal was put in non-blocking mode")
	}
	if _, err := ptm.Write([]byte{4}); err != nil { // ^D: end of input
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.events(t)
}

// TestHostSocketAsStdinAndStdout: a host that hands the shim one socket
// as both stdin and stdout (two descriptors, one open file description,
// as inetd does) gets every byte back through a frame larger than the
// socket's buffers, and the socket back in blocking mode.
func TestHostSocketAsStdinAndStdout(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The host's own end polls, so that its read has a deadline.
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	host := os.NewFile(uintptr(fds[0]), "host")
	defer host.Close()
	if err := host.SetReadDeadline(time.Now().Add(safety)); err != nil {
		t.Fatal(err)
	}
	out, err := syscall.Dup(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	shimIn, shimOut := os.NewFile(uintptr(fds[1]), "stdin"), os.NewFile(uintptr(out), "stdout")
	defer shimIn.Close()
	defer shimOut.Close()
	w, done := watchEcho(t, shimIn, shimOut)
	frame := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"` + strings.Repeat("p", 4<<20) + `"}}` + "\n"
	go func() {
		_, _ = host.WriteString(frame)
	}()
	echo, err := bufio.NewReaderSize(host, 64<<10).ReadString('\n')
	if err != nil || echo != frame {
		t.Fatalf("echo of %d bytes: got %d bytes, %v", len(frame), len(echo), err)
	}
	if err := syscall.Shutdown(fds[0], syscall.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if nonblocking(t, shimIn) {
		t.Error("after Stdio the socket is still non-blocking")
	}
	w.events(t)
}

// watchEcho runs Stdio with the echo server between the host's ends in
// and out; done gets what Stdio returns once it does.
func watchEcho(t *testing.T, in, out *os.File) (w *watched, done <-chan error) {
	w = newWatched(t, RecorderConfig{})
	cfg := w.config("echo", in)
	cfg.Stdout = out
	result := make(chan error, 1)
	go func() {
		_, err := Stdio(context.Background(), cfg)
		result <- err
	}()
	return w, result
}
