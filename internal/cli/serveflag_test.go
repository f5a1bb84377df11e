package cli

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/transport"
)

// httpServeCmd is testdata/httpserve, built once.

// freeLoopback returns a loopback address nothing listens on now.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// processesNaming lists the live processes whose command line contains
// s: a server started with a unique address must leave none.
func processesNaming(t *testing.T, s string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("needs /proc")
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), s) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				continue // a zombie is gone, only not yet reaped
			}
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// servedReport is the part of the JSON report these tests read.
type servedReport struct {
	Counts   map[string]int `json:"counts"`
	Teardown struct {
		Verdict string `json:"verdict"`
		Summary string `json:"summary"`
	} `json:"teardown"`
	Results []struct {
		ID      string `json:"id"`
		Verdict string `json:"verdict"`
		Events  []struct {
			Channel string `json:"channel"`
			Kind    string `json:"kind"`
			Raw     string `json:"raw"`
		} `json:"events"`
	} `json:"results"`
}

func decodeServed(t *testing.T, stdout string) servedReport {
	t.Helper()
	var rep servedReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, stdout)
	}
	return rep
}

// serverLines counts the cases whose chronology has stderr lines of the
// served server, and returns one of those lines.
func serverLines(rep servedReport) (cases int, sample string) {
	for _, r := range rep.Results {
		found := false
		for _, ev := range r.Events {
			if ev.Channel == transport.ServedStderrChannel && ev.Kind == "stderr" {
				found, sample = true, ev.Raw
			}
		}
		if found {
			cases++
		}
	}
	return cases, sample
}

// TestServeReferenceServer runs the catalogue against the reference server
// started by check itself with --serve: conformant, the server's stderr in
// the cases' chronologies, the server stopped on SIGTERM, nothing left.
//
// Under 2026-07-28 every case on the one shared server works in a control
// scope of its own, as it has a session of its own under 2025-11-25: the
// task cases' operation keys ("w", "a", "b") do not collide.
func TestServeReferenceServer(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			serveReference(t, rev)
		})
	}
}

func serveReference(t *testing.T, revision string) {
	addr := freeLoopback(t)
	r := runCLI(t, "", "check", "--url", "http://"+addr+"/mcp",
		"--serve", transport.QuoteArgs([]string{binary, "serve", "--http", addr}),
		"--profile", "reference", "--protocol", revision, "--json", "-")
	if r.code != ExitConformant {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	rep := decodeServed(t, r.stdout)
	if rep.Counts["fail"] != 0 || rep.Counts["error"] != 0 || rep.Counts["pass"] < 50 {
		t.Errorf("counts %v, want 0 fail, 0 error, at least 50 pass", rep.Counts)
	}
	if n, sample := serverLines(rep); n == 0 {
		t.Errorf("no case's chronology has a %q line", transport.ServedStderrChannel)
	} else {
		t.Logf("%d cases have server stderr lines, e.g. %q", n, sample)
	}
	if rep.Teardown.Verdict != "pass" || !strings.Contains(rep.Teardown.Summary, "stopped on SIGTERM") {
		t.Errorf("teardown %s %q, want pass, stopped on SIGTERM", rep.Teardown.Verdict, rep.Teardown.Summary)
	}
	if left := processesNaming(t, addr); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// TestServeServerEverything starts server-everything in streamableHttp
// mode with --serve and --shell (its port comes from the environment) and
// runs the progress and cancellation cases against it.
func TestServeServerEverything(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node")
	}
	if _, err := os.Stat(serverEverything); err != nil {
		t.Skipf("needs %s", serverEverything)
	}
	addr := freeLoopback(t)
	_, port, _ := net.SplitHostPort(addr)
	r := runCLI(t, "", "check", "--url", "http://"+addr+"/mcp", "--shell",
		"--serve", "PORT="+port+" exec "+transport.QuoteArgs([]string{node, serverEverything, "streamableHttp"}),
		"--profile", "server-everything", "--case", "progress/*", "--case", "cancel/*", "--json", "-")
	if r.code == ExitError {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	rep := decodeServed(t, r.stdout)
	if rep.Counts["error"] != 0 {
		t.Errorf("counts %v, want no error", rep.Counts)
	}
	if n, sample := serverLines(rep); n == 0 {
		t.Errorf("no case's chronology has a %q line", transport.ServedStderrChannel)
	} else {
		t.Logf("%d cases have server stderr lines, e.g. %q", n, sample)
	}
	if !strings.Contains(rep.Teardown.Summary, "the HTTP server mcpflight started") {
		t.Errorf("teardown summary %q does not say how the server ended", rep.Teardown.Summary)
	}
	t.Logf("teardown: %s", rep.Teardown.Summary)
	if left := processesNaming(t, "PORT="+port); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// TestServeFailures covers servers that do not come up or do not stop:
// one error line naming the command and its last words, exit 2, no
// process left; and a server that ignores SIGTERM, killed and said so.
func TestServeFailures(t *testing.T) {
	t.Parallel()
	bin, err := testdataBuilds.Command("httpserve")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode  string
		extra []string
		want  []string // in stderr
	}{
		{"exit", nil, []string{"exited with code 3 before", "fatal: no configuration found"}},
		{"never-listen", []string{"--serve-timeout", "500ms"}, []string{"did not answer within 500ms", "connection refused", "waiting for a database"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			addr := freeLoopback(t)
			args := append([]string{"check", "--url", "http://" + addr + "/mcp",
				"--serve", bin + " -mode " + tt.mode + " -http " + addr}, tt.extra...)
			r := runCLI(t, "", args...)
			if r.code != ExitError {
				t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
			}
			line := strings.TrimSuffix(r.stderr, "\n")
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "mcpflight: --serve: ") {
				t.Errorf("stderr is not one line starting with \"mcpflight: --serve: \":\n%s", r.stderr)
			}
			for _, w := range append([]string{"httpserve -mode " + tt.mode}, tt.want...) {
				if !strings.Contains(line, w) {
					t.Errorf("stderr %q does not say %q", line, w)
				}
			}
			if left := processesNaming(t, addr); len(left) > 0 {
				t.Errorf("processes left running: %v", left)
			}
		})
	}
	t.Run("ignore-term", func(t *testing.T) {
		t.Parallel()
		addr := freeLoopback(t)
		r := runCLI(t, "", "check", "--url", "http://"+addr+"/mcp", "--case", "ping/*",
			"--serve", bin+" -mode ignore-term -http "+addr, "--json", "-")
		rep := decodeServed(t, r.stdout)
		if !strings.Contains(rep.Teardown.Summary, "ignored SIGTERM and was killed with SIGKILL") {
			t.Errorf("teardown summary %q, want the SIGKILL said", rep.Teardown.Summary)
		}
		if left := processesNaming(t, addr); len(left) > 0 {
			t.Errorf("processes left running: %v", left)
		}
	})
	t.Run("run-timeout", func(t *testing.T) {
		t.Parallel()
		// --timeout ends the run; the server is still stopped with the
		// ladder and graded, and nothing is left.
		addr := freeLoopback(t)
		r := runCLI(t, "", "check", "--url", "http://"+addr+"/mcp", "--timeout", "1ms",
			"--serve", transport.QuoteArgs([]string{binary, "serve", "--http", addr}), "--json", "-")
		if r.code != ExitError {
			t.Errorf("exit %d, want 2", r.code)
		}
		rep := decodeServed(t, r.stdout)
		// Which rung it needs depends on what the cut-off cases left
		// open: the reference server drains open requests for up to 2 s
		// on SIGTERM, as long as the ladder's TermGrace.
		if !strings.Contains(rep.Teardown.Summary, "the HTTP server mcpflight started") ||
			!strings.Contains(rep.Teardown.Summary, "SIGTERM") {
			t.Errorf("teardown summary %q, want how the server ended", rep.Teardown.Summary)
		}
		if left := processesNaming(t, addr); len(left) > 0 {
			t.Errorf("processes left running: %v", left)
		}
	})
	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, "", "check", "--serve", bin)
		if r.code != ExitError || !strings.Contains(r.stderr, "--serve starts the server of --url: pass --url too") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}
