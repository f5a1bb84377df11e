package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/refserver"
)

// The stdio modes.
const (
	GarbageBeforeInit     Mode = "garbage-before-init"
	GarbageAfterInit      Mode = "garbage-after-init"
	HugeLine              Mode = "huge-line"
	InvalidUTF8           Mode = "invalid-utf8"
	DeepJSON              Mode = "deep-json"
	UnknownIDs            Mode = "unknown-ids"
	DuplicateResponses    Mode = "duplicate-responses"
	ProgressFlood         Mode = "progress-flood"
	NeverAnswers          Mode = "never-answers"
	IgnoreSIGTERM         Mode = "ignore-sigterm"
	GrandchildHoldsStdout Mode = "grandchild-holds-stdout"
	ExitMidCase           Mode = "exit-mid-case"
	StderrFirehose        Mode = "stderr-firehose"
)

// Sizes of the stdio attacks.
const (
	// HugeLineBytes is the length of the huge-line mode's one line.
	HugeLineBytes = 100_000_000
	// DeepJSONLevels is how deep the deep-json mode's frame nests.
	DeepJSONLevels = 1_000_000
	// FloodCount is how many progress notifications progress-flood sends
	// for each tools/call that carries a progress token.
	FloodCount = 1_000_000
	// ExitMidCaseCode is the exit code of exit-mid-case.
	ExitMidCaseCode = 3
	// PidfileEnv names the environment variable that, when set, makes a
	// hostile stdio server append its pid (and a grandchild's) to that
	// file, one per line, so that tests can inspect their process groups.
	// ignore-sigterm appends its pid a second time at the end of input.
	PidfileEnv = "MCPFLIGHT_HOSTILE_PIDFILE"
)

// chunk is the size of the writes that stream big outputs.
const chunk = 256 << 10

// stdioModes are the modes of ServeStdio.
var stdioModes = []Info{
	{GarbageBeforeInit, TransportStdio, "writes a banner, a blank line and log lines on stdout before the initialize response (STD-4)"},
	{GarbageAfterInit, TransportStdio, "writes non-JSON lines on stdout after every response (STD-4)"},
	{HugeLine, TransportStdio, "writes one 100 MB line on stdout before the first tools/call response"},
	{InvalidUTF8, TransportStdio, "sends a notifications/message with invalid UTF-8 bytes after the first response (RPC-3)"},
	{DeepJSON, TransportStdio, "writes one frame nested 1,000,000 levels deep after the first response"},
	{UnknownIDs, TransportStdio, "follows every response with a response to an id never sent (RPC-8)"},
	{DuplicateResponses, TransportStdio, "sends every response twice (RPC-8)"},
	{ProgressFlood, TransportStdio, "sends 1,000,000 valid, increasing progress notifications before a tools/call with a progress token runs"},
	{NeverAnswers, TransportStdio, "reads stdin and never writes; keeps running after stdin ends, until killed"},
	{IgnoreSIGTERM, TransportStdio, "ignores SIGTERM and does not exit when stdin ends: only SIGKILL stops it"},
	{GrandchildHoldsStdout, TransportStdio, "starts a grandchild that inherits stdout and outlives the server, which exits on stdin EOF"},
	{ExitMidCase, TransportStdio, "exits with code 3 when the first tools/call arrives (after one progress notification if asked)"},
	{StderrFirehose, TransportStdio, "writes to stderr as fast as the pipe takes it until stdin ends, while serving normally"},
}

// ServeStdio serves srv over in and out like refserver.Server.Serve, with
// mode's misbehaviour. exitCode is the code the process should exit with
// (non-zero for modes that crash on purpose).
//
// Everything the mode does not attack is the reference server's own
// behaviour: ServeStdio runs srv.Serve on pipes and transforms or augments
// what flows through them. Big outputs are streamed in chunks.
func ServeStdio(ctx context.Context, mode Mode, srv *refserver.Server, in io.Reader, out, errOut io.Writer) (exitCode int, err error) {
	if _, err := Lookup(string(mode), TransportStdio); err != nil {
		return 0, err
	}
	if errOut == nil {
		errOut = io.Discard
	}
	// The pids are recorded once the mode is in place (SIGTERM ignored,
	// the grandchild running), so that a test reading them knows it is.
	switch mode {
	case NeverAnswers:
		recordPid(os.Getpid())
		return 0, neverAnswer(ctx, in, errOut)
	case IgnoreSIGTERM:
		// Ignore undoes main's signal.NotifyContext for SIGTERM too: the
		// signal is then discarded by the kernel (SIG_IGN).
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(errOut, "hostile: ignoring SIGTERM")
		recordPid(os.Getpid())
	case GrandchildHoldsStdout:
		pid, err := startGrandchild(out, errOut)
		if err != nil {
			return 1, err
		}
		recordPid(os.Getpid(), pid)
	default:
		recordPid(os.Getpid())
	}
	h := &stdioServer{mode: mode, out: out, errOut: errOut, toolCalls: map[string]json.RawMessage{}, flooded: map[string]bool{}}
	code, err := h.serve(ctx, srv, in)
	if mode == IgnoreSIGTERM && code == 0 {
		fmt.Fprintln(errOut, "hostile: end of input ignored; waiting for SIGKILL")
		// Recorded again: the second line tells a test that the client
		// has closed stdin and is climbing its shutdown ladder.
		recordPid(os.Getpid())
		<-ctx.Done() // SIGINT only; SIGTERM is ignored
		return 0, ctx.Err()
	}
	return code, err
}

// recordPid appends pids, one per line and in one write, to the file
// named by PidfileEnv, if set. The file may be a FIFO a test reads.
func recordPid(pids ...int) {
	name := os.Getenv(PidfileEnv)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	var b []byte
	for _, pid := range pids {
		b = append(strconv.AppendInt(b, int64(pid), 10), '\n')
	}
	_, _ = f.Write(b)
	_ = f.Close()
}

// neverAnswer reads and discards its input, then waits to be killed.
func neverAnswer(ctx context.Context, in io.Reader, errOut io.Writer) error {
	_, _ = io.Copy(io.Discard, in)
	fmt.Fprintln(errOut, "hostile: end of input; not exiting")
	<-ctx.Done()
	return ctx.Err()
}

// startGrandchild starts "mcpflight serve --stdio --hostile never-answers"
// with stdin from /dev/null and our stdout and stderr, in our process
// group, leaves it running and returns its pid.
func startGrandchild(out, errOut io.Writer) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("hostile: locating the executable for the grandchild: %w", err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	cmd := exec.Command(exe, "serve", "--stdio", "--hostile", string(NeverAnswers))
	// Its pid is recorded by us, together with ours.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, PidfileEnv+"=") })
	cmd.Stdin = null
	// Only a real file is inherited as the pipe itself; that is the point.
	if f, ok := out.(*os.File); ok {
		cmd.Stdout = f
	} else {
		cmd.Stdout = os.Stdout
	}
	if f, ok := errOut.(*os.File); ok {
		cmd.Stderr = f
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("hostile: starting the grandchild: %w", err)
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(errOut, "hostile: grandchild pid %d holds stdout\n", pid)
	// Never waited for: it outlives us, reparented to init.
	return pid, cmd.Process.Release()
}

// stdioServer is one session of a transforming stdio mode.
type stdioServer struct {
	mode   Mode
	errOut io.Writer

	outMu  sync.Mutex
	out    io.Writer
	outErr error

	mu        sync.Mutex
	toolCalls map[string]json.RawMessage // tools/call ids (Key) -> progress token or nil
	flooded   map[string]bool            // progress tokens flooded (Key)
	responses int
	hugeSent  bool
}

// errExit stops the session for exit-mid-case.
var errExit = errors.New("hostile: exiting mid-case")

func (h *stdioServer) serve(ctx context.Context, srv *refserver.Server, in io.Reader) (int, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()

	if h.mode == GarbageBeforeInit {
		h.write([]byte("mcpflight hostile server v0 starting up\n\n[info] listening on stdio\nWARNING: this is not JSON-RPC\n"))
	}

	inputDone := make(chan error, 1)
	go func() { inputDone <- h.pumpIn(in, inW) }()
	if h.mode == StderrFirehose {
		// Stopped when the session ends; not waited for, since a write
		// may be blocked on a stderr nobody reads any more.
		stop := make(chan struct{})
		go h.firehose(stop)
		defer close(stop)
	}
	outDone := make(chan struct{})
	go func() { defer close(outDone); h.pumpOut(outR) }()

	served := make(chan error, 1)
	go func() {
		err := srv.Serve(sctx, inR, outW)
		_ = outW.Close()
		served <- err
	}()

	var inErr error
	select {
	case inErr = <-inputDone:
	case err := <-served:
		// The server ended first (a context, a crash).
		_ = inR.CloseWithError(io.ErrClosedPipe)
		<-outDone
		return 0, err
	}
	if errors.Is(inErr, errExit) {
		fmt.Fprintf(h.errOut, "hostile: a tools/call arrived; exiting with code %d\n", ExitMidCaseCode)
		cancel()
		_ = inR.CloseWithError(errExit)
		_ = outR.CloseWithError(errExit)
		return ExitMidCaseCode, nil
	}
	// End of input (or a read error) reaches the server as end of file.
	_ = inW.Close()
	err := <-served
	<-outDone
	if err == nil {
		err = h.writeErr()
	}
	return 0, err
}

// pumpIn copies the client's input to the server line by line, looking
// at each request on the way. It returns at the end of in, or errExit.
func (h *stdioServer) pumpIn(in io.Reader, w *io.PipeWriter) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	big := false // the line is over the frame limit: passed on unread
	for {
		part, err := br.ReadSlice('\n')
		switch {
		case big:
			if _, werr := w.Write(part); werr != nil {
				return werr
			}
		case len(line)+len(part) > refserver.MaxFrame:
			big = true
			if _, werr := w.Write(append(line, part...)); werr != nil {
				return werr
			}
			line = line[:0]
		default:
			line = append(line, part...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			if xerr := h.onRequest(line); xerr != nil {
				return xerr
			}
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		line, big = line[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// onRequest sees one complete input line before the server does.
func (h *stdioServer) onRequest(line []byte) error {
	msg, err := jsonrpc.Decode(bytes.TrimRight(line, "\r\n"))
	if err != nil || msg.Kind != jsonrpc.KindRequest || msg.Method != mcp.MethodToolsCall {
		return nil
	}
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	token := p.Meta.Token
	if token != nil {
		if _, err := jsonrpc.ParseToken(token); err != nil {
			token = nil
		}
	}
	h.mu.Lock()
	h.toolCalls[msg.ID.Key()] = token
	h.mu.Unlock()
	switch h.mode {
	case ExitMidCase:
		if token != nil {
			h.write(progressFrame(nil, token, 1))
		}
		return errExit
	case ProgressFlood:
		if token != nil {
			tok, _ := jsonrpc.ParseToken(token)
			h.mu.Lock()
			h.flooded[tok.Key()] = true
			h.mu.Unlock()
			h.flood(token)
		}
	}
	return nil
}

// progressFrame appends a notifications/progress frame to b.
func progressFrame(b []byte, token json.RawMessage, progress int) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, token...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendInt(b, int64(progress), 10)
	return append(b, "}}\n"...)
}

// flood writes FloodCount progress notifications for token, 1 to
// FloodCount, in chunks. The server's own progress for the token is
// shifted above them (pumpOut), so the whole sequence still increases.
func (h *stdioServer) flood(token json.RawMessage) {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	buf := make([]byte, 0, chunk+256)
	for i := 1; i <= FloodCount; i++ {
		buf = progressFrame(buf, token, i)
		if len(buf) >= chunk || i == FloodCount {
			if !h.writeLocked(buf) {
				return
			}
			buf = buf[:0]
		}
	}
}

// pumpOut passes the server's output on, line by line, through the mode.
func (h *stdioServer) pumpOut(r *io.PipeReader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			h.onOutput(line)
		}
		if err != nil {
			_ = r.CloseWithError(err)
			return
		}
	}
}

// garbage is what the garbage modes write: a banner, a blank line and log
// lines, none of them JSON-RPC.
var garbage = []byte("hostile server says hello\n\n2026-01-01T00:00:00Z INFO handled request in 3ms\n")

// onOutput writes one line of the server's output as the mode wants it.
func (h *stdioServer) onOutput(line []byte) {
	msg, err := jsonrpc.Decode(bytes.TrimRight(line, "\r\n"))
	if err != nil {
		h.write(line)
		return
	}
	if msg.Kind == jsonrpc.KindNotification {
		if h.mode == ProgressFlood && msg.Method == mcp.NotificationProgress {
			line = h.shiftProgress(msg, line)
		}
		h.write(line)
		return
	}
	if !msg.Kind.IsResponse() {
		h.write(line)
		return
	}
	h.mu.Lock()
	h.responses++
	first := h.responses == 1
	_, isToolCall := h.toolCalls[msg.ID.Key()]
	huge := h.mode == HugeLine && isToolCall && !h.hugeSent
	if huge {
		h.hugeSent = true
	}
	n := h.responses
	h.mu.Unlock()

	switch h.mode {
	case GarbageAfterInit:
		h.write(append(append([]byte(nil), line...), garbage...))
	case HugeLine:
		if huge {
			h.hugeLine()
		}
		h.write(line)
	case InvalidUTF8:
		h.write(line)
		if first {
			h.write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"bad bytes: \xff\xfe\"}}\n"))
		}
	case DeepJSON:
		h.write(line)
		if first {
			h.deepFrame()
		}
	case UnknownIDs:
		h.write(line)
		h.write([]byte(`{"jsonrpc":"2.0","id":"hostile-never-sent-` + strconv.Itoa(n) + `","result":{}}` + "\n"))
	case DuplicateResponses:
		h.write(append(append([]byte(nil), line...), line...))
	default:
		h.write(line)
	}
}

// shiftProgress moves the server's own progress for a flooded token above
// the flood, so that the token's progress still strictly increases.
func (h *stdioServer) shiftProgress(msg *jsonrpc.Message, line []byte) []byte {
	var p map[string]json.RawMessage
	if json.Unmarshal(msg.Params, &p) != nil {
		return line
	}
	tok, err := jsonrpc.ParseToken(p["progressToken"])
	if err != nil {
		return line
	}
	h.mu.Lock()
	flooded := h.flooded[tok.Key()]
	h.mu.Unlock()
	if !flooded {
		return line
	}
	for _, k := range []string{"progress", "total"} {
		var v float64
		if raw, ok := p[k]; ok && json.Unmarshal(raw, &v) == nil {
			p[k] = json.RawMessage(strconv.FormatFloat(v+FloodCount, 'g', -1, 64))
		}
	}
	params, err := json.Marshal(p)
	if err != nil {
		return line
	}
	out, err := jsonrpc.EncodeNotification(msg.Method, json.RawMessage(params))
	if err != nil {
		return line
	}
	return append(out, '\n')
}

// hugeLine streams one line of HugeLineBytes: a notifications/message
// whose data is that long.
func (h *stdioServer) hugeLine() {
	head := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"hostile","data":"`)
	tail := []byte("\"}}\n")
	h.outMu.Lock()
	defer h.outMu.Unlock()
	if !h.writeLocked(head) {
		return
	}
	fill := bytes.Repeat([]byte("x"), chunk)
	for left := HugeLineBytes - len(head) - len(tail); left > 0; left -= chunk {
		if !h.writeLocked(fill[:min(left, chunk)]) {
			return
		}
	}
	h.writeLocked(tail)
}

// deepFrame streams one frame of DeepJSONLevels nested arrays.
func (h *stdioServer) deepFrame() {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	for _, c := range []byte("[]") {
		fill := bytes.Repeat([]byte{c}, chunk)
		for left := DeepJSONLevels; left > 0; left -= chunk {
			if !h.writeLocked(fill[:min(left, chunk)]) {
				return
			}
		}
	}
	h.writeLocked([]byte("\n"))
}

// firehose writes log lines to stderr, as fast as they are taken, until
// stop is closed or stderr fails.
func (h *stdioServer) firehose(stop <-chan struct{}) {
	var buf []byte
	for i := 0; len(buf) < 64<<10; i++ {
		buf = fmt.Appendf(buf, "hostile firehose line %06d: ERROR everything is fine, this is only logging (STD-3)\n", i)
	}
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := h.errOut.Write(buf); err != nil {
			return
		}
	}
}

// write writes b to stdout as one unit.
func (h *stdioServer) write(b []byte) {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	h.writeLocked(b)
}

// writeLocked writes b unless an earlier write failed; h.outMu is held.
func (h *stdioServer) writeLocked(b []byte) bool {
	if h.outErr != nil {
		return false
	}
	if _, err := h.out.Write(b); err != nil {
		h.outErr = err
		return false
	}
	return true
}

func (h *stdioServer) writeErr() error {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	return h.outErr
}
