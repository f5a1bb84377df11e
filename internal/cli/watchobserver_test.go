package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// waitUntil checks cond every few milliseconds until it holds, failing
// the test past zooSafety: the condition is the synchronisation, the
// deadline a safety net.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(zooSafety)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("never saw %s", what)
		}
	}
}

// TestWatchObserver: with --observer, watch reads a server's observer
// around a host's cancelled call, over Streamable HTTP under both
// revisions, and judges whether the handler stopped. On the reference
// server a handler that hangs after its cancel (hang-after-cancel,
// 2025-11-25) is still running past the grace (CAN-8), one that runs to
// completion after its stream was closed (stream-close-not-cancel,
// 2026-07-28) ran on (CAN-56's SHOULD), and the same calls without the
// fault pass; go-sdk's server, a real one with its own pace, runs on or
// stops as its deployment says. The readings are in the chronology, so
// judge reaches the same verdict from the recording.
func TestWatchObserver(t *testing.T) {
	t.Parallel()
	// reference serves the reference server with fault (none when "")
	// over Streamable HTTP in this process.
	reference := func(fault refserver.Fault) func(*testing.T) string {
		return func(t *testing.T) string {
			faults := refserver.FaultSet{}
			if fault != "" {
				faults[fault] = true
			}
			h := refserver.New(refserver.Options{Faults: faults}).HTTPHandler(refserver.HTTPOptions{})
			ts := httptest.NewServer(h)
			t.Cleanup(func() {
				h.Close()
				ts.Close()
			})
			return ts.URL + "/mcp"
		}
	}
	// gosdk runs testdata/gosdkserver (go-sdk v1.8.0) over Streamable
	// HTTP with args: a real server, whose steps are its own (100 ms each).
	gosdk := func(args ...string) func(*testing.T) string {
		return func(t *testing.T) string {
			if testing.Short() {
				t.Skip("-short: a real target")
			}
			return targets.GoServerHTTP(t, "gosdkserver", args...)
		}
	}
	const (
		refSlow   = `{"steps":3,"tickMs":250}`
		gosdkSlow = `{"steps":10,"stepMs":100}`
	)
	// grace bounds the reads after a cancel: wide enough for a loaded
	// machine to count the handler's end within it.
	const grace = "3s"
	gosdkProfile := filepath.Join(targets.GoModule("gosdkserver"), "profile.yaml")
	for _, tc := range []struct {
		name     string
		server   func(*testing.T) string
		profile  string
		slow     string
		revision string
		want     verdict.Verdict
		req      string
		evidence string
	}{
		{"reference/hangs/2025-11-25", reference(refserver.FaultHangAfterCancel), "reference", refSlow, "2025-11-25", verdict.Warn, "CAN-8", "still runs"},
		{"reference/stops/2025-11-25", reference(""), "reference", refSlow, "2025-11-25", verdict.Pass, "", ""},
		{"reference/runs-on/2026-07-28", reference(refserver.FaultStreamCloseNotCancel), "reference", refSlow, "2026-07-28", verdict.Warn, "CAN-56", "ran to completion"},
		{"reference/stops/2026-07-28", reference(""), "reference", refSlow, "2026-07-28", verdict.Pass, "", ""},
		// go-sdk v1.8.0 stateless: the handler runs on (to completion,
		// or still running at the grace on a loaded machine) after
		// notifications/cancelled (2025-11-25) and after its stream's
		// close (2026-07-28), unless PropagateRequestCancellation ties it
		// to the HTTP request, which it does for 2026-07-28 alone.
		{"gosdk-stateless/runs-on/2025-11-25", gosdk("-stateless"), gosdkProfile, gosdkSlow, "2025-11-25", verdict.Warn, "CAN-8", ""},
		{"gosdk-stateless/runs-on/2026-07-28", gosdk("-stateless"), gosdkProfile, gosdkSlow, "2026-07-28", verdict.Warn, "CAN-56", ""},
		{"gosdk-stateless-propagate/stops/2026-07-28", gosdk("-stateless", "-propagate-cancel"), gosdkProfile, gosdkSlow, "2026-07-28", verdict.Pass, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			serverURL := tc.server(t)
			root := t.TempDir()
			w := runWatchProxy(t, "--out", root, "--target", serverURL, "--observer", tc.profile, "--grace", grace, "--protocol", tc.revision)
			proxyURL, stderr := w.url, w.stderr
			// The host's call: cancelled while its work goes on.
			r := runCLI(t, "", "call", "--url", proxyURL, "--protocol", tc.revision, "--timeout", "400ms", "--grace", "100ms", "slow", tc.slow)
			if !strings.Contains(r.stdout+r.stderr, "cancel") {
				t.Fatalf("the call was not cancelled: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			capture := filepath.Join(dirs0(t, root), captureName)
			if tc.want == verdict.Pass {
				waitUntil(t, "a reading that counts the handler cancelled", func() bool {
					raw, _ := os.ReadFile(capture)
					return bytes.Contains(raw, []byte("observer read: started 1, completed 0, cancelled 1"))
				})
			} else {
				waitUntil(t, "the live finding", func() bool { return strings.Contains(stderr.String(), "server/cancelled-handler-stops") })
			}
			w.stop(t)
			res, ok := readResult(t, dirs0(t, root), "server/cancelled-handler-stops")
			if !ok || res.Verdict != tc.want || res.Requirement != tc.req {
				raw, _ := os.ReadFile(capture)
				t.Fatalf("server/cancelled-handler-stops: %+v; want %s %s\n%s\n%s", res, tc.want, tc.req, stderr.String(), raw)
			}
			if tc.evidence != "" && !strings.Contains(stderr.String(), tc.evidence) {
				t.Errorf("the finding does not say %q:\n%s", tc.evidence, stderr.String())
			}
			again := runCLI(t, "", "judge", "--grace", grace, "--json", filepath.Join(t.TempDir(), "again.json"), capture)
			if tc.want == verdict.Warn && !strings.Contains(again.stdout, "WARN  server/cancelled-handler-stops") {
				t.Errorf("judge of the recording misses the finding: exit %d\n%s", again.code, again.stdout)
			}
			if tc.want == verdict.Pass && strings.Contains(again.stdout, "server/cancelled-handler-stops") && !strings.Contains(again.stdout, "PASS") {
				t.Errorf("judge of the recording:\n%s", again.stdout)
			}
		})
	}
}

// TestWatchObserverStdio: over stdio, where the server has one stream,
// the host's, watch --observer sends its reads inside the host's session
// between the host's frames and keeps their answers from the host. A
// host (mcpflight's own client, standing for one that stays open after
// its cancel) calls the slow tool through the shim and cancels it after
// the first progress. On the reference server a handler that hangs
// after its cancel is still running past the grace (CAN-8 under
// 2025-11-25, CAN-48 under 2026-07-28), and without the fault it passes.
// The go-sdk and mcp-go servers, real ones with their own pace, answer
// the cancel with an error (which the response rules judge) and their
// observers count the handler cancelled. No answer to a read ever
// reaches the host, nor the recording.
func TestWatchObserverStdio(t *testing.T) {
	t.Parallel()
	reference := func(fault refserver.Fault) func(*testing.T) []string {
		return func(*testing.T) []string {
			argv := []string{binary, "serve", "--stdio"}
			if fault != "" {
				argv = append(argv, "--fault", string(fault))
			}
			return argv
		}
	}
	goServer := func(name string) func(*testing.T) []string {
		return func(t *testing.T) []string {
			if testing.Short() {
				t.Skip("-short: a real target")
			}
			return []string{targets.GoBinary(t, name), "stdio"}
		}
	}
	const (
		refSlow   = `{"steps":3,"tickMs":250}`
		gosdkSlow = `{"steps":10,"stepMs":100}`
		grace     = "3s"
		cancelled = "observer read: started 1, completed 0, cancelled 1"
	)
	gosdkProfile := filepath.Join(targets.GoModule("gosdkserver"), "profile.yaml")
	for _, tc := range []struct {
		name     string
		server   func(*testing.T) []string
		profile  string
		slow     string
		revision string
		// want and req are the verdict of cancelled-handler-stops, or
		// reading (want "") a reading the observer must show.
		want     verdict.Verdict
		req      string
		evidence string
		reading  string
	}{
		{"reference/hangs/2025-11-25", reference(refserver.FaultHangAfterCancel), "reference", refSlow, "2025-11-25", verdict.Warn, "CAN-8", "still runs", ""},
		{"reference/stops/2025-11-25", reference(""), "reference", refSlow, "2025-11-25", verdict.Pass, "", "", cancelled},
		{"reference/hangs/2026-07-28", reference(refserver.FaultHangAfterCancel), "reference", refSlow, "2026-07-28", verdict.Warn, "CAN-48", "still runs", ""},
		{"reference/stops/2026-07-28", reference(""), "reference", refSlow, "2026-07-28", verdict.Pass, "", "", cancelled},
		{"gosdk/2025-11-25", goServer("gosdkserver"), gosdkProfile, gosdkSlow, "2025-11-25", "", "", "", cancelled},
		{"gosdk/2026-07-28", goServer("gosdkserver"), gosdkProfile, gosdkSlow, "2026-07-28", "", "", "", cancelled},
		{"mcpgo/2025-11-25", goServer("mcpgoserver"), gosdkProfile, gosdkSlow, "2025-11-25", "", "", "", cancelled},
		{"mcpgo/2026-07-28", goServer("mcpgoserver"), gosdkProfile, gosdkSlow, "2026-07-28", "", "", "", cancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			argv := append([]string{binary, "watch", "--out", root, "--observer", tc.profile, "--grace", grace, "--"}, tc.server(t)...)
			ctx, cancel := context.WithTimeout(context.Background(), zooSafety)
			defer cancel()
			hostLog := chrono.New()
			s, closeSession, err := dialSession(ctx, runner.StdioTarget("watch", transport.StdioConfig{Argv: argv}), hostLog)
			if err != nil {
				t.Fatal(err)
			}
			mode, _ := negotiate.ParseMode(tc.revision)
			if _, err := negotiate.Open(ctx, s, mode, negotiate.Options{}); err != nil {
				closeSession()
				t.Fatalf("opening the host's session through the shim: %v", err)
			}
			call, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow", "arguments": json.RawMessage(tc.slow)}, peer.WithProgress())
			if err != nil {
				closeSession()
				t.Fatal(err)
			}
			waitUntil(t, "the first progress", func() bool { return call.ProgressCount() > 0 })
			if err := s.Cancel(ctx, call, "the host gives up"); err != nil {
				closeSession()
				t.Fatal(err)
			}
			dir := dirs0(t, root)
			// The host stays open until the evidence is in.
			switch {
			case tc.reading != "":
				waitUntil(t, "the reading "+tc.reading, func() bool {
					raw, _ := os.ReadFile(filepath.Join(dir, captureName))
					return bytes.Contains(raw, []byte(tc.reading))
				})
			default:
				waitUntil(t, "the live finding", func() bool {
					raw, _ := os.ReadFile(filepath.Join(dir, findingsName))
					return bytes.Contains(raw, []byte("server/cancelled-handler-stops"))
				})
			}
			closeSession()

			capture, err := os.ReadFile(filepath.Join(dir, captureName))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				res, ok := readResult(t, dir, "server/cancelled-handler-stops")
				if !ok || res.Verdict != tc.want || res.Requirement != tc.req || !strings.Contains(res.Summary, tc.evidence) {
					t.Fatalf("server/cancelled-handler-stops: %+v; want %s %s %q\n%s", res, tc.want, tc.req, tc.evidence, capture)
				}
				again := runCLI(t, "", "judge", "--grace", grace, "--json", filepath.Join(t.TempDir(), "again.json"), dir)
				if line := strings.ToUpper(string(tc.want)) + "  server/cancelled-handler-stops"; !strings.Contains(again.stdout, line) {
					t.Errorf("judge of the recording does not say %q: exit %d\n%s", line, again.code, again.stdout)
				}
			}
			// The reads' requests and answers are in neither side's record
			// of the conversation: only the notes of the readings are.
			for _, e := range hostLog.Events() {
				if bytes.Contains(e.Raw, []byte("mcpflight-inject-")) {
					t.Errorf("the host received a read's answer at #%d: %s", e.Seq, e.Raw)
				}
			}
			for _, line := range bytes.Split(capture, []byte("\n")) {
				if bytes.Contains(line, []byte("mcpflight-inject-")) && !bytes.Contains(line, []byte(`"channel":"observer"`)) {
					t.Errorf("the recording holds a read's frame: %s", line)
				}
			}
			if res, ok := readResult(t, dir, "server/one-response"); ok && res.Verdict == verdict.Fail {
				t.Errorf("server/one-response: %+v", res)
			}
		})
	}
}
