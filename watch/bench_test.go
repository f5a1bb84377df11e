//go:build unix

package watch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// The benchmarks measure what watch adds to a conversation; none of
// them asserts a figure. Run them one at a time on a quiet machine:
//
//	go test -run '^$' -bench 'StdioPing' -benchtime 20000x ./watch/
//	go test -run '^$' -bench 'StdioFrames' ./watch/
//	go test -run '^$' -bench 'ProxyPOST' -benchtime 5000x ./watch/
//	go test -run '^$' -bench 'MillionFrames' -benchtime 1x ./watch/

// benchHost is a host talking to a stdio server (or the shim in front of
// it) over OS pipes, as a real host does.
type benchHost struct {
	in    *os.File // what the host writes
	lines *bufio.Reader
	close func() error
}

// directHost starts the echo helper with the host's pipes.
func directHost(b *testing.B) *benchHost {
	cmd := exec.Command(helperArgv()[0])
	cmd.Env = append(os.Environ(), helperEnvFor("echo")...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &benchHost{in: in.(*os.File), lines: bufio.NewReaderSize(out, 1<<20), close: func() error {
		in.Close()
		return cmd.Wait()
	}}
}

// watchedHost starts Stdio in front of the echo helper, with OS pipes
// between the host and the shim, recording to a file.
func watchedHost(b *testing.B, cfg RecorderConfig) (*benchHost, *Recorder) {
	hostW, shimIn, err := pipePair()
	if err != nil {
		b.Fatal(err)
	}
	shimOut, hostR, err := pipePair()
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(b.TempDir(), "chronology.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.JSONL = f
	rec := NewRecorder(cfg)
	done := make(chan error, 1)
	go func() {
		code, err := Stdio(context.Background(), StdioConfig{Argv: helperArgv(), Env: helperEnvFor("echo"),
			Stdin: shimIn, Stdout: shimOut, Stderr: os.Stderr, Recorder: rec})
		shimOut.Close()
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d", code)
		}
		done <- err
	}()
	return &benchHost{in: hostW, lines: bufio.NewReaderSize(hostR, 1<<20), close: func() error {
		hostW.Close()
		err := <-done
		if cerr := rec.Close(context.Background()); err == nil {
			err = cerr
		}
		f.Close()
		return err
	}}, rec
}

// pipePair returns the read end as the shim's side when called as
// (host write, shim read) and the write end likewise.
func pipePair() (w, r *os.File, err error) {
	r, w, err = os.Pipe()
	return w, r, err
}

const benchPing = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"

// pingRoundTrips sends b.N pings one at a time and reports the median
// and 99th percentile of their round trips.
func pingRoundTrips(b *testing.B, h *benchHost) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := io.WriteString(h.in, benchPing); err != nil {
			b.Fatal(err)
		}
		if _, err := h.lines.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	if err := h.close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStdioPing: the round trip of one ping to an echo server,
// directly and through watch (recording to a file).
func BenchmarkStdioPing(b *testing.B) {
	b.Run("direct", func(b *testing.B) { pingRoundTrips(b, directHost(b)) })
	b.Run("watch", func(b *testing.B) {
		h, rec := watchedHost(b, RecorderConfig{})
		pingRoundTrips(b, h)
		reportDrops(b, rec)
	})
}

func reportDrops(b *testing.B, rec *Recorder) {
	taps, _ := rec.Dropped()
	b.ReportMetric(float64(taps), "dropped")
	b.ReportMetric(float64(rec.Recorded()), "events")
}

// pumpFrames sends n frames as fast as the host can write them while
// reading their echoes, and returns once every echo is in.
func pumpFrames(b *testing.B, h *benchHost, n int) {
	go func() {
		w := bufio.NewWriterSize(h.in, 64<<10)
		for i := range n {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`+"\n", i, i)
		}
		w.Flush()
	}()
	for range n {
		if _, err := h.lines.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioFrames: frames per second pipelined through an echo
// server, directly and through watch (batched and per-event writes of
// the chronology). Each frame is recorded twice (out and back).
func BenchmarkStdioFrames(b *testing.B) {
	run := func(b *testing.B, h *benchHost) {
		b.ResetTimer()
		start := time.Now()
		pumpFrames(b, h, b.N)
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
		b.StopTimer()
		if err := h.close(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, directHost(b)) })
	b.Run("watch", func(b *testing.B) {
		h, rec := watchedHost(b, RecorderConfig{})
		run(b, h)
		reportDrops(b, rec)
	})
	b.Run("watch-write-each-event", func(b *testing.B) {
		h, rec := watchedHost(b, RecorderConfig{WriteEachEvent: true})
		run(b, h)
		reportDrops(b, rec)
	})
}

// countSink counts events and says when a count is reached.
type countSink struct {
	n      atomic.Int64
	mu     sync.Mutex
	target int64
	reach  chan struct{}
}

func (c *countSink) Event(chrono.Event) {
	n := c.n.Add(1)
	c.mu.Lock()
	if c.reach != nil && n >= c.target {
		close(c.reach)
		c.reach = nil
	}
	c.mu.Unlock()
}

// await returns once n events have been counted.
func (c *countSink) await(n int64) {
	c.mu.Lock()
	if c.n.Load() >= n {
		c.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	c.target, c.reach = n, ch
	c.mu.Unlock()
	<-ch
}

// BenchmarkStdioMillionFrames: one session of a million frames through
// watch, every one of them recorded (out and back): the host sends them
// in windows of 10 000 and waits for the recorder before the next, so
// that nothing is dropped. Reports the RSS of the process (which runs the
// shim), with the heap collected and returned to the system, after the
// first 100 000 frames and after the million: the recorder keeps nothing
// per event, so the two should be alike.
func BenchmarkStdioMillionFrames(b *testing.B) {
	const window = 10_000
	for range b.N {
		count := &countSink{}
		h, rec := watchedHost(b, RecorderConfig{Sinks: []Sink{count}})
		var at100k int
		start := time.Now()
		for sent := window; sent <= 1_000_000; sent += window {
			pumpFrames(b, h, window)
			count.await(int64(2*sent) + 1) // out and back, and the start
			if sent == 100_000 {
				debug.FreeOSMemory()
				at100k = vmKB(b, "VmRSS")
			}
		}
		elapsed := time.Since(start)
		debug.FreeOSMemory()
		at1M := vmKB(b, "VmRSS")
		b.ReportMetric(float64(at100k)/1024, "rss-100k-MB")
		b.ReportMetric(float64(at1M)/1024, "rss-1M-MB")
		b.ReportMetric(1_000_000/elapsed.Seconds(), "frames/s")
		if err := h.close(); err != nil {
			b.Fatal(err)
		}
		reportDrops(b, rec)
	}
}

// BenchmarkProxyPOST: the round trip of a POST answered with a JSON
// body, directly and through the proxy (recording to a file).
func BenchmarkProxyPOST(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer srv.Close()
	run := func(b *testing.B, base string) {
		client := testClient()
		lat := make([]time.Duration, 0, b.N)
		body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			resp, err := client.Post(base+"/mcp", "application/json", strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	}
	b.Run("direct", func(b *testing.B) { run(b, srv.URL) })
	b.Run("proxy", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "chronology.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		rec := NewRecorder(RecorderConfig{JSONL: f})
		base := startProxy(b, srv.URL, rec)
		run(b, base)
		reportDrops(b, rec)
		rec.Close(context.Background())
	})
}

// BenchmarkRecorderLines: how many frames per second the recorder
// frames, decodes and writes (to a file), fed 64 KiB pieces directly.
func BenchmarkRecorderLines(b *testing.B) {
	b.Run("batched", func(b *testing.B) { recorderLines(b, false) })
	b.Run("write-each-event", func(b *testing.B) { recorderLines(b, true) })
}

func recorderLines(b *testing.B, each bool) {
	f, err := os.Create(filepath.Join(b.TempDir(), "chronology.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var chunk []byte
	per := 0
	for len(chunk) < 60<<10 {
		chunk = fmt.Appendf(chunk, `{"jsonrpc":"2.0","id":%d,"method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`+"\n", per, per)
		per++
	}
	rec := NewRecorder(RecorderConfig{JSONL: f, QueueTaps: 1 << 20, QueueBytes: 1 << 30, WriteEachEvent: each})
	s := rec.newStream("in", "stdout", modeLines)
	b.ResetTimer()
	start := time.Now()
	frames := 0
	for frames < b.N {
		rec.data(s, chunk, time.Now())
		frames += per
	}
	if err := rec.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(frames)/time.Since(start).Seconds(), "frames/s")
	reportDrops(b, rec)
}
