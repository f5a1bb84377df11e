//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/transport"
)

// conformanceEnv names the environment variable that holds the command
// line of the official suite (@modelcontextprotocol/conformance, which
// needs Node 22), e.g. "/tmp/conformance/node_modules/.bin/node
// /tmp/conformance/node_modules/.bin/conformance"; when it is set,
// BenchmarkCheck also runs that suite against the same server-everything
// process, for the figures side by side.
const conformanceEnv = "MCPFLIGHT_CONFORMANCE"

// BenchmarkCheck runs the whole catalogue with check, as a user would,
// one case at a time (--jobs 1) and at the default --jobs: against the
// built-in reference server over stdio (a child process per case) and
// over HTTP (in this process, a server per case), and against
// server-everything over stdio (a node process per case) and over
// Streamable HTTP (one node process). ns/op is the wall time of one run;
// cpu-s/op the CPU time of this process, of the targets it waited for and
// of the HTTP server process; cases/s the catalogue's cases per second of
// wall time. (runner.BenchmarkCatalogue is the in-process figure.)
//
//	go test -run '^$' -bench Check -benchtime 1x ./internal/cli
func BenchmarkCheck(b *testing.B) {
	node, nodeErr := exec.LookPath("node")
	_, seErr := os.Stat(serverEverything)
	everything := nodeErr == nil && seErr == nil
	for _, target := range []struct {
		name  string
		needs bool // server-everything
		args  func(b *testing.B) ([]string, int)
	}{
		{"reference/stdio", false, func(*testing.B) ([]string, int) { return nil, 0 }},
		{"reference/http", false, func(*testing.B) ([]string, int) { return []string{"--transport", "http"}, 0 }},
		{"everything/stdio", true, func(*testing.B) ([]string, int) {
			return []string{"--stdio", transport.QuoteArgs([]string{node, serverEverything, "stdio"})}, 0
		}},
		{"everything/http", true, func(b *testing.B) ([]string, int) {
			url, pid := everythingHTTP(b, node)
			return []string{"--url", url, "--profile", "server-everything"}, pid
		}},
	} {
		for _, jobs := range []string{"1", "default"} {
			b.Run(target.name+"/jobs="+jobs, func(b *testing.B) {
				if target.needs && !everything {
					b.Skipf("needs node and %s", serverEverything)
				}
				args, serverPid := target.args(b)
				args = append([]string{"check", "--protocol", "2025-11-25", "-q"}, args...)
				if jobs != "default" {
					args = append(args, "--jobs", jobs)
				}
				benchRuns(b, args, serverPid)
			})
		}
		if target.name == "everything/http" {
			b.Run(target.name+"/official-suite", func(b *testing.B) {
				suite := strings.Fields(os.Getenv(conformanceEnv))
				if !everything || len(suite) == 0 {
					b.Skipf("set %s to the official suite's command line (and install server-everything)", conformanceEnv)
				}
				url, pid := everythingHTTP(b, node)
				benchCommand(b, append(suite, "server", "--url", url), pid)
			})
		}
	}
}

// benchRuns runs check with args b.N times, in this process.
func benchRuns(b *testing.B, args []string, serverPid int) {
	cpu := cpuMeter(serverPid)
	for b.Loop() {
		var out, errOut bytes.Buffer
		env := Env{Stdout: &out, Stderr: &errOut, ServeCommand: []string{binary}, Getenv: func(string) string { return "" }}
		if code := env.Run(context.Background(), args); code == ExitError {
			b.Fatalf("check %v: exit code %d\n%s%s", args, code, out.String(), errOut.String())
		}
	}
	cpu.report(b, len(cases.All()))
}

// benchCommand runs argv b.N times as a child process.
func benchCommand(b *testing.B, argv []string, serverPid int) {
	cpu := cpuMeter(serverPid)
	for b.Loop() {
		cmd := exec.Command(argv[0], argv[1:]...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil && !exitedWith(err, 1) {
			b.Fatalf("%v: %v\n%s", argv, err, out.String())
		}
	}
	cpu.report(b, 0)
}

// cpuUsage is CPU time used so far by this process, its waited-for
// children, and (when pid is not 0) one other process.
type cpuUsage struct {
	pid   int
	start time.Duration
}

func cpuMeter(pid int) *cpuUsage {
	u := &cpuUsage{pid: pid}
	u.start = u.now()
	return u
}

func (u *cpuUsage) now() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	if u.pid != 0 {
		total += processCPU(u.pid)
	}
	return total
}

// report adds cpu-s/op and, for a catalogue of n cases, cases/s.
func (u *cpuUsage) report(b *testing.B, n int) {
	b.ReportMetric((u.now()-u.start).Seconds()/float64(b.N), "cpu-s/op")
	if n > 0 {
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
	}
}

// processCPU is the user and system time of process pid so far, from
// /proc/PID/stat; 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	// After the command: state is field 3; utime and stime are 14 and 15.
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ
	return time.Duration(utime+stime) * time.Second / ticks
}

// everythingHTTP starts server-everything in streamableHttp mode on a free
// port for the benchmark and returns its URL and pid once it says it
// listens.
func everythingHTTP(b *testing.B, node string) (string, int) {
	b.Helper()
	return targets.EverythingHTTP(b, node, serverEverything)
}
