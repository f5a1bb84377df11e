//go:build unix

package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/testchild"
)

// helperEnv selects the part a child copy of the test binary plays (see
// runHelper); dumpEnv names a file where a helper server writes every
// byte it reads, so that a test sees what the server received.
const (
	helperEnv = "MCPFLIGHT_WATCH_HELPER"
	dumpEnv   = "MCPFLIGHT_WATCH_DUMP"
	// shimServerEnv and shimJSONLEnv configure the "shim" helper: the
	// helper mode of its server, and where it writes its chronology.
	shimServerEnv = "MCPFLIGHT_WATCH_SHIM_SERVER"
	shimJSONLEnv  = "MCPFLIGHT_WATCH_SHIM_JSONL"
)

// safety bounds every wait of these tests. It is a safety net against a
// hung test, never a synchronisation: nothing waits for it to pass.
const safety = 30 * time.Second

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// helperArgv runs the test binary as the helper of mode.
func helperArgv() []string { return []string{os.Args[0]} }

// helperEnvFor is the environment of a helper in mode.
func helperEnvFor(mode string, extra ...string) []string {
	return append([]string{helperEnv + "=" + mode, testchild.RaceEnv()}, extra...)
}

// serverScript is what the "script" server writes before it echoes:
// frames a host must receive as they are, good and bad.
func serverScript() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}` + "\n")
	b.WriteString("\n")                                                       // a blank line
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/crlf"}` + "\r\n") // CRLF
	b.WriteString("not json at all \xff\xfe\n")                               // garbage, invalid UTF-8
	b.WriteString(`{"jsonrpc":"2.0","id":` + "\n")                            // cut off
	b.WriteString(`{"result":{"blob":"` + strings.Repeat("y", 3<<20) + `"},"jsonrpc":"2.0","id":99}` + "\n")
	return b.Bytes()
}

// runHelper plays the part of mode and returns the exit code.
func runHelper(mode string) int {
	var in io.Reader = os.Stdin
	if path := os.Getenv(dumpEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer f.Close()
		in = io.TeeReader(os.Stdin, f)
	}
	echo := func() int {
		if _, err := io.Copy(os.Stdout, in); err != nil {
			fmt.Fprintln(os.Stderr, "echo:", err)
			return 2
		}
		return 0
	}
	switch mode {
	case "echo": // echoes every byte; exits 0 at the end of stdin
		return echo()
	case "script": // writes serverScript, then echoes
		if _, err := os.Stdout.Write(serverScript()); err != nil {
			return 2
		}
		return echo()
	case "crash": // answers one line, writes half a frame and exits 3
		line, err := bufio.NewReader(in).ReadBytes('\n')
		if err != nil {
			return 2
		}
		os.Stdout.Write(line)
		fmt.Fprintln(os.Stderr, "about to crash")
		os.Stdout.WriteString(`{"jsonrpc":"2.0","id":2,"res`)
		return 3
	case "term-self": // answers one line, then dies of SIGTERM
		line, err := bufio.NewReader(in).ReadBytes('\n')
		if err != nil {
			return 2
		}
		os.Stdout.Write(line)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		blockForever()
		return 0
	case "stay": // tells its pid, echoes, and stays after the end of stdin
		fmt.Printf(`{"jsonrpc":"2.0","method":"pid","params":{"pid":%d}}`+"\n", os.Getpid())
		echo()
		blockForever()
		return 0
	case "ignore-eof": // stays after the end of stdin; exits 0 on SIGTERM
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println(`{"jsonrpc":"2.0","method":"ready"}`)
		echo()
		<-term
		return 0
	case "ignore-term": // stays after the end of stdin and SIGTERM
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(`{"jsonrpc":"2.0","method":"ready"}`)
		echo()
		blockForever()
		return 0
	case "interrupt": // says which signal it got, then exits 0
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGHUP)
		fmt.Println(`{"jsonrpc":"2.0","method":"ready"}`)
		s := <-sig
		fmt.Printf(`{"jsonrpc":"2.0","method":"got","params":{"signal":%q}}`+"\n", s.String())
		return 0
	case "stderr": // writes stderr lines and one stdout frame per stdin line
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			fmt.Fprintf(os.Stderr, "log: %s\n", sc.Text())
			os.Stdout.Write(append(sc.Bytes(), '\n'))
		}
		return 0
	case "answer": // answers each request with its method, in two writes, a "later" one after the next line or the end of stdin (telling the host it came); echoes anything else
		sc := bufio.NewScanner(in)
		var later string
		defer func() { os.Stdout.Write([]byte(later)) }()
		for sc.Scan() {
			if later != "" {
				os.Stdout.Write([]byte(later))
				later = ""
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil || req.Method == "" {
				os.Stdout.Write(append(sc.Bytes(), '\n'))
				continue
			}
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`+"\n", req.ID, req.Method)
			if req.Method == "later" {
				later = answer
				os.Stdout.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"later"}}` + "\n"))
				continue
			}
			half := len(answer) / 2
			os.Stdout.Write([]byte(answer[:half]))
			os.Stdout.Write([]byte(answer[half:]))
		}
		return 0
	case "shim": // watch.Stdio between its own stdin/stdout and a server
		return runShim()
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// runShim is the "shim" helper: what "mcpflight watch" does with a stdio
// server, as a process of its own that a test can SIGKILL.
func runShim() int {
	f, err := os.Create(os.Getenv(shimJSONLEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rec := NewRecorder(RecorderConfig{JSONL: f})
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	code, err := Stdio(context.Background(), StdioConfig{
		Argv: helperArgv(), Env: helperEnvFor(os.Getenv(shimServerEnv)),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Recorder: rec, Signals: sigs,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if err := rec.Close(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}

// collector is a Sink that keeps every event, for tests to wait on.
type collector struct {
	mu      sync.Mutex
	events  []chrono.Event
	changed chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{})} }

func (c *collector) Event(e chrono.Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// all returns the events so far.
func (c *collector) all() []chrono.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]chrono.Event(nil), c.events...)
}

// waitFor waits for an event that satisfies match.
func (c *collector) waitFor(t *testing.T, what string, match func(chrono.Event) bool) chrono.Event {
	t.Helper()
	deadline := time.NewTimer(safety)
	defer deadline.Stop()
	seen := 0
	for {
		c.mu.Lock()
		events, ch := c.events[seen:], c.changed
		seen = len(c.events)
		c.mu.Unlock()
		for _, e := range events {
			if match(e) {
				return e
			}
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no event %s within %v; events:\n%s", what, safety, dump(c.all()))
		}
	}
}

// dump renders events for a failure message.
func dump(events []chrono.Event) string {
	var b strings.Builder
	for _, e := range events {
		sum := ""
		if e.Summary != nil {
			j, _ := json.Marshal(e.Summary)
			sum = string(j)
		}
		raw := string(e.Raw)
		if len(raw) > 80 {
			raw = raw[:80] + "…"
		}
		fmt.Fprintf(&b, "  #%d %s %s %s size=%d trunc=%v %s %q %q\n", e.Seq, e.Dir, e.Channel, e.Kind, e.Size, e.Truncated, sum, e.Text, raw)
	}
	return b.String()
}

// readJSONL parses a recorded chronology, failing the test on a bad line.
func readJSONL(t *testing.T, b []byte) []chrono.Event {
	t.Helper()
	events, err := chrono.ReadJSONL(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the chronology does not parse: %v", err)
	}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, e.Seq)
		}
		if i > 0 && e.Offset < events[i-1].Offset {
			t.Fatalf("offset of event %d goes back: %v < %v", e.Seq, e.Offset, events[i-1].Offset)
		}
	}
	return events
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

// blockForever blocks without the runtime taking it for a deadlock: a
// read of a pipe nobody writes.
func blockForever() {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	_, _ = r.Read(make([]byte, 1))
	_ = w.Close()
	panic("unreachable")
}
