package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// servedEvent is the part of a chronology event these tests read.
type servedEvent struct {
	Channel string `json:"channel"`
	Kind    string `json:"kind"`
	Raw     string `json:"raw"`
	Text    string `json:"text"`
}

// servedReport is the part of the JSON report these tests read.
type servedReport struct {
	Counts   map[string]int `json:"counts"`
	Teardown struct {
		Verdict string `json:"verdict"`
		Summary string `json:"summary"`
	} `json:"teardown"`
	ServedServer *struct {
		Command string        `json:"command"`
		Events  []servedEvent `json:"events"`
	} `json:"servedServer"`
	Results []struct {
		ID      string        `json:"id"`
		Verdict string        `json:"verdict"`
		Events  []servedEvent `json:"events"`
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

// sessionHeader finds the Mcp-Session-Id a request sent, in its event's
// text.
var sessionHeader = regexp.MustCompile(`Mcp-Session-Id: ([^;]+)`)

// checkServedOutput checks where the served server's output went: all of
// it in the report's servedServer, once; in a case's chronology only the
// lines that name a session the case used, and the notes counting the
// lines printed while it was connected. It returns how many cases have
// such a note, and how many lines were told to belong to a case.
func checkServedOutput(t *testing.T, rep servedReport) (noted, attributed int) {
	t.Helper()
	if rep.ServedServer == nil {
		t.Fatal("the report has no servedServer")
	}
	own := 0
	for _, ev := range rep.ServedServer.Events {
		if ev.Kind == "stderr" && ev.Channel == transport.ServedStderrChannel {
			own++
		}
	}
	if own == 0 {
		t.Errorf("servedServer has no line of the server's output: %+v", rep.ServedServer.Events)
	}
	for _, r := range rep.Results {
		var sessions []string
		for _, ev := range r.Events {
			for _, m := range sessionHeader.FindAllStringSubmatch(ev.Text, -1) {
				sessions = append(sessions, m[1])
			}
		}
		hasNote := false
		for _, ev := range r.Events {
			if ev.Channel != transport.ServedStderrChannel {
				continue
			}
			if ev.Kind == "note" && strings.HasPrefix(ev.Text, "the served server printed ") {
				hasNote = true
			}
			if ev.Kind != "stderr" {
				continue
			}
			if !slices.ContainsFunc(sessions, func(id string) bool { return strings.Contains(ev.Raw, id) }) {
				t.Errorf("%s: a server line that names none of its sessions %q: %q", r.ID, sessions, ev.Raw)
			}
			attributed++
		}
		if hasNote {
			noted++
		}
	}
	t.Logf("%d server lines in servedServer; %d cases with a note on them; %d lines told to belong to a case", own, noted, attributed)
	return noted, attributed
}

// TestServeReferenceServer runs the catalogue against the reference server
// started by check itself with --serve: conformant, the server's output in
// the report's servedServer and, as far as it names their sessions, in the
// cases' chronologies, the server stopped on SIGTERM, nothing left.
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
	jsonl := t.TempDir()
	r := runCLI(t, "", "check", "--url", "http://"+addr+"/mcp",
		"--serve", transport.QuoteArgs([]string{binary, "serve", "--http", addr}),
		"--profile", "reference", "--protocol", revision, "--json", "-", "--jsonl-dir", jsonl)
	if r.code != ExitConformant {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	rep := decodeServed(t, r.stdout)
	if rep.Counts["fail"] != 0 || rep.Counts["error"] != 0 || rep.Counts["pass"] < 50 {
		t.Errorf("counts %v, want 0 fail, 0 error, at least 50 pass", rep.Counts)
	}
	// The server prints its URL first thing, and the checkpoints the
	// cases reach as they go.
	if noted, _ := checkServedOutput(t, rep); noted == 0 {
		t.Error("no case's chronology counts the server's lines printed while it ran")
	}
	if !strings.Contains(rep.ServedServer.Command, "serve --http "+addr) {
		t.Errorf("servedServer command %q, want the --serve command", rep.ServedServer.Command)
	}
	// --jsonl-dir has the server's chronology too, next to the cases'.
	if own, err := os.ReadFile(filepath.Join(jsonl, ServedJSONLName)); err != nil {
		t.Error(err)
	} else if !strings.Contains(string(own), "http://"+addr+"/mcp") || bytes.Count(own, []byte("\n")) != len(rep.ServedServer.Events) {
		t.Errorf("%s has %d lines, want the %d events of servedServer, its URL line among them", ServedJSONLName, bytes.Count(own, []byte("\n")), len(rep.ServedServer.Events))
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
	// server-everything names the session in some lines (a session
	// ends, a stream opens); whether one arrives while its connection is
	// still open is up to the scheduler, so their count is only logged.
	checkServedOutput(t, rep)
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
