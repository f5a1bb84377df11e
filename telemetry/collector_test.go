package telemetry_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/internal/targets"
)

// record is one line of testdata/otlpreceiver: a span or a metric data
// point the OpenTelemetry Collector's OTLP receiver accepted.
type record struct {
	Signal        string         `json:"signal"`
	Resource      map[string]any `json:"resource"`
	Scope         string         `json:"scope"`
	TraceID       string         `json:"traceId"`
	SpanID        string         `json:"spanId"`
	ParentSpanID  string         `json:"parentSpanId"`
	Name          string         `json:"name"`
	StartUnixNano int64          `json:"startUnixNano"`
	EndUnixNano   int64          `json:"endUnixNano"`
	Attributes    map[string]any `json:"attributes"`
	Events        []struct {
		Name         string         `json:"name"`
		TimeUnixNano int64          `json:"timeUnixNano"`
		Attributes   map[string]any `json:"attributes"`
	} `json:"events"`
	StatusCode    string  `json:"statusCode"`
	StatusMessage string  `json:"statusMessage"`
	Type          string  `json:"type"`
	Monotonic     bool    `json:"monotonic"`
	Value         float64 `json:"value"`
}

func (r record) start() time.Time { return time.Unix(0, r.StartUnixNano).UTC() }
func (r record) end() time.Time   { return time.Unix(0, r.EndUnixNano).UTC() }

// collector is a running testdata/otlpreceiver.
type collector struct {
	URL    string
	stdin  io.WriteCloser
	done   chan struct{}
	lines  []string
	stderr *lockedBuffer
	cmd    *exec.Cmd
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startCollector builds and starts the receiver; it is stopped when the
// test ends if Stop was not called.
func startCollector(t *testing.T) *collector {
	t.Helper()
	bin := targets.GoBinary(t, "otlpreceiver")
	c := &collector{done: make(chan struct{}), stderr: &lockedBuffer{}}
	c.cmd = exec.Command(bin)
	c.cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		for sc.Scan() {
			c.lines = append(c.lines, sc.Text())
		}
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		select {
		case <-c.done:
		case <-time.After(30 * time.Second): // a safety net: it exits when stdin ends
			_ = c.cmd.Process.Kill()
		}
		_ = c.cmd.Wait()
	})
	select {
	case url, ok := <-first:
		if !ok || !strings.HasPrefix(url, "http://") {
			t.Fatalf("otlpreceiver printed %q, not its URL; stderr:\n%s", url, c.stderr)
		}
		c.URL = url
	case <-time.After(60 * time.Second): // a safety net for its start
		t.Fatalf("otlpreceiver printed no URL; stderr:\n%s", c.stderr)
	}
	return c
}

// Stop ends the receiver, which first finishes the exports in flight,
// and returns every record it wrote.
func (c *collector) Stop(t *testing.T) []record {
	t.Helper()
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second): // a safety net: it exits when stdin ends
		t.Fatalf("otlpreceiver did not stop; stderr:\n%s", c.stderr)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("otlpreceiver: %v; stderr:\n%s", err, c.stderr)
	}
	var out []record
	for _, l := range c.lines {
		var r record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("otlpreceiver wrote %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}
