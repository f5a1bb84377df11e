//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/refserver"
)

// The watch benchmarks measure what "mcpflight watch" as shipped adds to
// a conversation with a real server (the built-in reference server):
// forwarding, recording, and judging with the monitor and the schema
// check, on the path a host's request takes. They assert no figure.
// Run them one at a time on a quiet machine:
//
//	go test -run '^$' -bench 'WatchStdioPing' -benchtime 5000x ./internal/cli
//	go test -run '^$' -bench 'WatchProxyPing' -benchtime 3000x ./internal/cli

// stdioPeer is a host's end of a stdio server.
type stdioPeer struct {
	in    io.WriteCloser
	lines *bufio.Reader
	cmd   *exec.Cmd
}

// startStdioPeer starts argv and opens a 2025-11-25 session with it.
func startStdioPeer(b *testing.B, argv ...string) *stdioPeer {
	cmd := exec.Command(argv[0], argv[1:]...)
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
	p := &stdioPeer{in: in, lines: bufio.NewReaderSize(out, 1<<20), cmd: cmd}
	p.roundTrip(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return p
}

func (p *stdioPeer) roundTrip(b *testing.B, frame string) {
	if _, err := io.WriteString(p.in, frame+"\n"); err != nil {
		b.Fatal(err)
	}
	if _, err := p.lines.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
}

func (p *stdioPeer) close(b *testing.B) {
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}

// reportLatencies reports the median and 99th percentile of lat.
func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkWatchStdioPing: the round trip of a ping to the reference
// server over stdio, directly, through testdata/relay (a process that
// only copies bytes: the floor under any shim) and through "mcpflight
// watch --" (which records the chronology and judges every frame).
func BenchmarkWatchStdioPing(b *testing.B) {
	relay, err := testdataBuilds.Command("relay")
	if err != nil {
		b.Fatal(err)
	}
	for _, via := range []string{"direct", "relay", "watch"} {
		b.Run(via, func(b *testing.B) {
			argv := []string{binary, "serve", "--stdio"}
			switch via {
			case "relay":
				argv = append([]string{relay}, argv...)
			case "watch":
				argv = append([]string{binary, "watch", "-q", "--out", b.TempDir(), "--"}, argv...)
			}
			p := startStdioPeer(b, argv...)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				p.roundTrip(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1))
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatencies(b, lat)
			p.close(b)
		})
	}
}

// BenchmarkWatchProxyPing: the round trip of a ping POSTed to the
// reference server's Streamable HTTP endpoint (in this process), directly
// and through "mcpflight watch --target" (in this process too).
func BenchmarkWatchProxyPing(b *testing.B) {
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	ts := httptest.NewServer(h)
	defer func() {
		h.Close()
		ts.Close()
	}()
	for _, via := range []string{"direct", "watch"} {
		b.Run(via, func(b *testing.B) {
			url := ts.URL + "/mcp"
			if via == "watch" {
				stderr := &lineWaiter{re: regexp.MustCompile(`point the host at (\S+)`), found: make(chan string, 1)}
				ctx, stop := context.WithCancel(context.Background())
				done := make(chan int, 1)
				go func() {
					env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }}
					done <- env.Run(ctx, []string{"watch", "-q", "--out", b.TempDir(), "--target", url})
				}()
				select {
				case url = <-stderr.found:
				case <-done:
					b.Fatalf("watch ended:\n%s", stderr.String())
				}
				defer func() {
					stop()
					<-done
				}()
			}
			client := &http.Client{}
			post := func(body string, session string) (string, error) {
				req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				if err != nil {
					return "", err
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
				}
				res, err := client.Do(req)
				if err != nil {
					return "", err
				}
				defer res.Body.Close()
				if _, err := io.Copy(io.Discard, res.Body); err != nil {
					return "", err
				}
				if res.StatusCode/100 != 2 {
					return "", fmt.Errorf("HTTP %d", res.StatusCode)
				}
				return res.Header.Get("Mcp-Session-Id"), nil
			}
			session, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, "")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			var ping bytes.Buffer
			b.ResetTimer()
			for i := range b.N {
				ping.Reset()
				fmt.Fprintf(&ping, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
				start := time.Now()
				if _, err := post(ping.String(), session); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatencies(b, lat)
		})
	}
}
