package clientrun

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/transport"
)

// The stdio server the client spawns is a relay: mcpflight re-executed as
// "mcpflight client-relay --socket PATH". It connects back to the checking
// process over a Unix socket and copies its stdin there and what comes
// back to its stdout, byte for byte. The script runs in the checking
// process, so every frame of both directions is recorded there, in the
// case's one chronology with one clock, however many times the client
// spawns the server (a probing sibling is spawn 2). A second connection
// carries the relay's own events (a signal it received), so that how the
// client shut the server down is evidence too.

// relayHello is the first line a relay sends on each connection.
type relayHello struct {
	// Kind is "data" (the stdio frames) or "control" (events).
	Kind string `json:"kind"`
	// PID is the relay process's pid.
	PID int `json:"pid"`
	// Nonce pairs the data and control connections of one relay.
	Nonce string `json:"nonce"`
}

// newNonce is a random relay nonce.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// relayEvent is a line on the control connection.
type relayEvent struct {
	Event  string `json:"event"`
	Signal string `json:"signal,omitempty"`
}

// RelayArgs are the arguments after the executable that start a relay
// for socket: what the stdio client is told to spawn.
func RelayArgs(socket string) []string { return []string{"client-relay", "--socket", socket} }

// Relay is the body of "mcpflight client-relay": it connects to the
// checking process at socket and relays stdin and stdout until the
// checking process closes the connection (or ctx ends). A signal on sig
// (SIGTERM, SIGINT) is reported, then Relay returns ErrSignalled.
func Relay(ctx context.Context, socket string, stdin io.Reader, stdout io.Writer, sig <-chan os.Signal) error {
	var d net.Dialer
	data, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("client-relay: connecting to the checking process: %w", err)
	}
	defer data.Close()
	ctl, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("client-relay: connecting to the checking process: %w", err)
	}
	defer ctl.Close()
	pid, nonce := os.Getpid(), newNonce()
	for _, c := range []struct {
		conn net.Conn
		kind string
	}{{data, "data"}, {ctl, "control"}} {
		line, _ := json.Marshal(relayHello{Kind: c.kind, PID: pid, Nonce: nonce})
		if _, err := c.conn.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("client-relay: %w", err)
		}
	}
	go func() {
		_, _ = io.Copy(data, stdin)
		// The client closed our stdin: say so, then half-close.
		line, _ := json.Marshal(relayEvent{Event: "stdin-eof"})
		_, _ = ctl.Write(append(line, '\n'))
		if uc, ok := data.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdout, data)
		copied <- err
	}()
	select {
	case <-copied:
		return nil
	case s := <-sig:
		line, _ := json.Marshal(relayEvent{Event: "signal", Signal: s.String()})
		_, _ = ctl.Write(append(line, '\n'))
		return fmt.Errorf("%w: %s", ErrSignalled, s)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrSignalled is returned by Relay when a signal ended it.
var ErrSignalled = errors.New("client-relay: signalled")

// DialRelay connects to socket as a relay would, from the calling
// process: the in-process adapter's way to "spawn" the server. Closing
// the returned connection's writer (CloseWrite through Close) is the
// client closing the server's stdin.
func DialRelay(ctx context.Context, socket string) (io.Reader, io.WriteCloser, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, nil, fmt.Errorf("clientrun: connecting to the server: %w", err)
	}
	ctl, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("clientrun: connecting to the server: %w", err)
	}
	nonce := newNonce()
	for _, x := range []struct {
		conn net.Conn
		kind string
	}{{c, "data"}, {ctl, "control"}} {
		line, _ := json.Marshal(relayHello{Kind: x.kind, PID: os.Getpid(), Nonce: nonce})
		if _, err := x.conn.Write(append(line, '\n')); err != nil {
			c.Close()
			ctl.Close()
			return nil, nil, err
		}
	}
	return c, halfCloser{c: c.(*net.UnixConn), ctl: ctl}, nil
}

// halfCloser is the in-process client's end of the server's stdin.
type halfCloser struct {
	c   *net.UnixConn
	ctl net.Conn
}

func (h halfCloser) Write(p []byte) (int, error) { return h.c.Write(p) }

// Close is the client closing the server's stdin: the relay's event,
// then the half-close.
func (h halfCloser) Close() error {
	line, _ := json.Marshal(relayEvent{Event: "stdin-eof"})
	_, _ = h.ctl.Write(append(line, '\n'))
	h.ctl.Close()
	return h.c.CloseWrite()
}

// stdioServer is the checking process's end of the relays of one case.
type stdioServer struct {
	hub      *hub
	log      *chrono.Log
	maxFrame int
	dir      string
	ln       *net.UnixListener

	mu      sync.Mutex
	spawns  int
	pids    map[int]int           // relay pid -> spawn number
	spawnOf map[string]int        // relay nonce -> spawn number
	procs   map[string]*relayProc // by nonce
	conns   []net.Conn
	wg      sync.WaitGroup
}

// relayProc is what the control connection of one relay said.
type relayProc struct {
	// eof is closed when the relay reported the end of its stdin;
	// ctlDone when its control connection ended (the relay exited).
	eof, ctlDone         chan struct{}
	eofOnce, ctlDoneOnce sync.Once
}

// relay returns the state of the relay with nonce.
func (s *stdioServer) relay(nonce string) *relayProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.procs[nonce]
	if r == nil {
		r = &relayProc{eof: make(chan struct{}), ctlDone: make(chan struct{})}
		s.procs[nonce] = r
	}
	return r
}

// listenStdio opens the case's socket in a fresh temporary directory.
func listenStdio(h *hub, log *chrono.Log, maxFrame int) (*stdioServer, error) {
	dir, err := os.MkdirTemp("", "mcpflight-client-")
	if err != nil {
		return nil, fmt.Errorf("clientrun: %w", err)
	}
	path := filepath.Join(dir, "relay.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("clientrun: listening for the relay: %w", err)
	}
	s := &stdioServer{hub: h, log: log, maxFrame: maxFrame, dir: dir, ln: ln, pids: map[int]int{}, spawnOf: map[string]int{}, procs: map[string]*relayProc{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Socket is the relay socket's path.
func (s *stdioServer) Socket() string { return filepath.Join(s.dir, "relay.sock") }

func (s *stdioServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
		}()
	}
}

func (s *stdioServer) serveConn(c net.Conn) {
	br := bufio.NewReaderSize(c, 4096)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := br.ReadBytes('\n')
	_ = c.SetReadDeadline(time.Time{})
	var hello relayHello
	if err != nil || json.Unmarshal(line, &hello) != nil {
		s.log.Harness(chrono.KindError, "relay", "a connection to the relay socket did not introduce itself")
		c.Close()
		return
	}
	if hello.Kind == "control" {
		s.serveControl(hello.Nonce, br)
		return
	}
	s.mu.Lock()
	s.spawns++
	n := s.spawns
	s.pids[hello.PID] = n
	s.spawnOf[hello.Nonce] = n
	s.mu.Unlock()
	in, out := "stdin "+strconv.Itoa(n), "stdout "+strconv.Itoa(n)
	s.log.State("server "+strconv.Itoa(n), "", fmt.Sprintf("spawned by the client (pid %d)", hello.PID))
	var wmu sync.Mutex
	gone := make(chan struct{})
	closed := false
	send := func(raw []byte, _ bool) error {
		wmu.Lock()
		defer wmu.Unlock()
		if closed {
			return transport.ErrClosed
		}
		s.log.Frame(chrono.Out, out, raw, nil, nil)
		_, err := c.Write(append(append([]byte{}, raw...), '\n'))
		return err
	}
	fr := transport.NewFrameReader(br, s.maxFrame)
	for {
		raw, err := fr.ReadFrame()
		if errors.Is(err, transport.ErrFrameTooLarge) {
			e := s.log.Harness(chrono.KindError, in, err.Error())
			s.hub.deliver(Inbound{Err: err, Seq: e.Seq, Conn: n, Channel: in})
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.Harness(chrono.KindNote, in, "connection ended: "+err.Error())
			}
			// Was it the end of the server's stdin, or did the relay die?
			// Its control connection says which.
			rp := s.relay(hello.Nonce)
			select {
			case <-rp.eof:
			case <-rp.ctlDone:
				select {
				case <-rp.eof:
				default:
					s.log.State("server "+strconv.Itoa(n), "running", "the server process ended without end of input")
				}
			case <-s.hub.done:
			}
			break
		}
		msg, derr := jsonrpc.Decode(raw)
		e := s.log.Frame(chrono.In, in, raw, msg, derr)
		s.hub.deliver(Inbound{Msg: msg, Err: derr, Seq: e.Seq, Conn: n, Channel: in,
			reply: &reply{send: send, drop: func() {}, gone: gone}})
	}
	// The server exits once its stdin is closed (STD-46): its stdout
	// closes, and the relay process with it.
	wmu.Lock()
	closed = true
	wmu.Unlock()
	close(gone)
	c.Close()
}

func (s *stdioServer) serveControl(nonce string, br *bufio.Reader) {
	rp := s.relay(nonce)
	defer rp.ctlDoneOnce.Do(func() { close(rp.ctlDone) })
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var ev relayEvent
			if json.Unmarshal(line, &ev) == nil {
				s.mu.Lock()
				n := s.spawnOf[nonce]
				s.mu.Unlock()
				switch ev.Event {
				case "signal":
					s.log.State("server "+strconv.Itoa(n), "running", "received signal "+chrono.Sanitize(ev.Signal, false))
				case "stdin-eof":
					rp.eofOnce.Do(func() {
						s.log.State("server "+strconv.Itoa(n), "running", "stdin closed by the client")
						close(rp.eof)
					})
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// Spawns is how many times the client started the server.
func (s *stdioServer) Spawns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spawns
}

// PIDs are the relay processes that connected.
func (s *stdioServer) PIDs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.pids))
	for pid := range s.pids {
		out = append(out, pid)
	}
	return out
}

// close ends every relay connection (the relays exit) and removes the
// socket.
func (s *stdioServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	os.RemoveAll(s.dir)
}
