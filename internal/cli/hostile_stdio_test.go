//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/hostile"
	"github.com/mcpflight/mcpflight/transport"
)

// The hostile stdio zoo, end to end: each test runs the built binary's
// check against "mcpflight serve --stdio --hostile MODE" and proves, from
// the JSON report and from outside, that the run ends within its deadlines
// (the test's own timer is only a safety net), that the attacked cases get
// error or the right fail while the others pass, that the check process's
// peak memory stays bounded, and that no process of any target's group
// survives.

// zooSafety bounds a whole check run; it is a safety net, never a
// synchronisation.
const zooSafety = 3 * time.Minute

// zooReport is the part of the mcpflight.report/v1 document the tests
// read; the events are left out, so a capped chronology costs nothing.
type zooReport struct {
	Schema      string `json:"schema"`
	ExitCode    int    `json:"exitCode"`
	Interrupted bool   `json:"interrupted"`
	Teardown    struct {
		Verdict     string         `json:"verdict"`
		Requirement string         `json:"requirement"`
		Advice      string         `json:"advice"`
		Worst       string         `json:"worst"`
		Leftovers   int            `json:"leftovers"`
		Steps       map[string]int `json:"steps"`
	} `json:"teardown"`
	Results   []zooResult `json:"results"`
	NoSession *struct {
		Line string `json:"line"`
	} `json:"noSession"`
}

type zooResult struct {
	ID          string `json:"id"`
	Verdict     string `json:"verdict"`
	Summary     string `json:"summary"`
	Requirement string `json:"requirement"`
	Actual      string `json:"actual"`
	Teardown    *struct {
		ExitedAfter string `json:"exitedAfter"`
	} `json:"teardown"`
}

// zooRun is what one check run against a hostile mode produced.
type zooRun struct {
	rep    zooReport
	code   int
	maxRSS int64 // KiB: the check process, or its largest waited-for descendant
	floor  int64 // KiB: this test process's peak when check had ended
	wall   time.Duration
	pids   []int // the targets' pids (each also a group id) and grandchildren
	out    string
}

// runZoo runs check against mode with the given case timeout and case
// globs, and checks that no target process survived.
func runZoo(t *testing.T, mode hostile.Mode, caseTimeout string, extra []string, globs ...string) zooRun {
	t.Helper()
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	jsonFile := filepath.Join(dir, "report.json")
	target := transport.QuoteArgs([]string{binary, "serve", "--stdio", "--hostile", string(mode)})
	args := []string{"check", "--protocol", "2025-11-25", "--stdio", target, "--profile", "reference", "--case-timeout", caseTimeout, "--json", jsonFile}
	for _, g := range globs {
		args = append(args, "--case", g)
	}
	args = append(args, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), hostile.PidfileEnv+"="+pidfile, "NO_COLOR=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(zooSafety):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("check against %s did not end within %v\n%s", mode, zooSafety, out.String())
	}
	r := zooRun{wall: time.Since(start), out: out.String(), code: 0}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("check: %v\n%s", err, r.out)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss
	}
	// Linux keeps a process's peak RSS across exec, so the figure wait4
	// reports for check starts at this test process's size when it
	// spawned check: at or below this process's peak, read now (tests
	// beside this one may have grown it meanwhile), it is only an upper
	// bound.
	floor := selfPeakRSS()
	r.floor = floor
	raw, err := readReportWithoutEvents(jsonFile)
	if err != nil {
		t.Fatalf("reading the JSON report: %v\n%s", err, r.out)
	}
	if err := json.Unmarshal(raw, &r.rep); err != nil {
		t.Fatalf("decoding the JSON report: %v", err)
	}
	if r.rep.Schema != "mcpflight.report/v1" || r.rep.ExitCode != r.code {
		t.Errorf("report schema %q, exit code %d; the process exited %d", r.rep.Schema, r.rep.ExitCode, r.code)
	}
	r.pids = readPids(t, pidfile)
	if len(r.pids) == 0 {
		t.Fatalf("no target recorded its pid in %s\n%s", pidfile, r.out)
	}
	assertNoSurvivors(t, r.pids)
	bound := ""
	if r.maxRSS <= floor {
		bound = fmt.Sprintf(" (at most: the test's own peak of %d KiB is the floor)", floor)
	}
	t.Logf("%s: exit code %d, wall %v, peak RSS of check %d KiB%s, %d target pids",
		mode, r.code, r.wall.Round(time.Millisecond), r.maxRSS, bound, len(r.pids))
	return r
}

// selfPeakRSS is this process's peak RSS in KiB (VmHWM), 0 if unknown.
func selfPeakRSS() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// readReportWithoutEvents reads the indented JSON report, leaving out the
// lines of every "events" array, so that a chronology at its cap (50 000
// events, ~100 MB of JSON) costs the test neither memory nor time.
func readReportWithoutEvents(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	inEvents := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inEvents:
			if line == "      ]" || line == "      ]," {
				inEvents = false
				out = append(out, strings.TrimPrefix(line, "      ]")...)
				out = append(out, '\n')
			}
			continue
		case line == `      "events": [`:
			inEvents = true
			out = append(out, `      "events": []`...)
			continue
		}
		out = append(out, line...)
		out = append(out, '\n')
	}
	return out, sc.Err()
}

// readPids reads the pid file the hostile servers append to.
func readPids(t *testing.T, name string) []int {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file line %q", f)
		}
		pids = append(pids, pid)
	}
	return pids
}

// assertNoSurvivors checks, from outside, that none of pids and no member
// of a process group they lead is alive. A zombie awaiting reaping by init
// is not alive.
func assertNoSurvivors(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if st := procState(pid); st != "" && st != "Z" {
			t.Errorf("target process %d survived the run (state %s)", pid, st)
		}
		for _, m := range groupMembers(t, pid) {
			if st := procState(m); st != "" && st != "Z" {
				t.Errorf("process %d of target group %d survived the run (state %s)", m, pid, st)
			}
		}
	}
}

// result finds one case's result.
func (r zooRun) result(t *testing.T, id string) zooResult {
	t.Helper()
	for _, res := range r.rep.Results {
		if res.ID == id {
			return res
		}
	}
	t.Fatalf("no result for %s\n%s", id, r.out)
	return zooResult{}
}

// expect checks a case's verdict, the requirement it cites (if want.req
// is set) and words its summary or actual must contain.
func (r zooRun) expect(t *testing.T, id, verdict, req string, words ...string) {
	t.Helper()
	res := r.result(t, id)
	if res.Verdict != verdict || (req != "" && res.Requirement != req) {
		t.Errorf("%s: %s %s %q (actual %q), want %s %s", id, res.Verdict, res.Requirement, res.Summary, res.Actual, verdict, req)
		return
	}
	text := res.Summary + " " + res.Actual
	for _, w := range words {
		if !strings.Contains(text, w) {
			t.Errorf("%s: %q (actual %q) does not mention %q", id, res.Summary, res.Actual, w)
		}
	}
}

// passes checks that the unaffected cases pass.
func (r zooRun) passes(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		r.expect(t, id, "pass", "")
	}
}

// rssCap checks the check process's peak memory against a generous cap.
// A figure at or below the floor (this test process's own peak, which
// Linux carries across exec) says only that check stayed under it.
func (r zooRun) rssCap(t *testing.T, capMiB int64) {
	t.Helper()
	if r.maxRSS > capMiB<<10 && r.maxRSS > r.floor {
		t.Errorf("peak RSS %d KiB, over the cap of %d MiB", r.maxRSS, capMiB)
	}
}

const (
	caseStdout   = "stdio/stdout-only-messages"
	caseTeardown = "stdio/teardown-on-stdin-close"
	casePing     = "ping/empty-result"
	caseIDZero   = "rpc/id-zero"
	caseNoAnswer = "rpc/no-response-to-notifications"
	caseProgress = "progress/strictly-increasing"
)

func TestHostileStdioGarbageBeforeInit(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.GarbageBeforeInit, "1m", nil, casePing, caseStdout, caseProgress)
	r.expect(t, caseStdout, "fail", "STD-4", "parse-error")
	r.passes(t, casePing, caseProgress)
	r.rssCap(t, 128)
}

func TestHostileStdioGarbageAfterInit(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.GarbageAfterInit, "1m", nil, casePing, caseStdout, caseProgress)
	r.expect(t, caseStdout, "fail", "STD-4", "parse-error")
	r.passes(t, casePing, caseProgress)
	r.rssCap(t, 128)
}

// TestHostileStdioHugeLine: the 100 MB line is discarded by the frame
// limit (never held in memory), and a case whose evidence it cut is an
// error that names the limit.
func TestHostileStdioHugeLine(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.HugeLine, "1m", nil, casePing, caseStdout, caseProgress)
	r.expect(t, caseStdout, "error", "", "maximum frame size", "limit 4194304")
	r.expect(t, caseProgress, "error", "", "maximum frame size")
	r.passes(t, casePing)
	r.rssCap(t, 128)
}

func TestHostileStdioInvalidUTF8(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.InvalidUTF8, "1m", nil, casePing, caseStdout, caseProgress)
	r.expect(t, caseStdout, "fail", "STD-4", "invalid-utf8")
	r.passes(t, casePing, caseProgress)
	r.rssCap(t, 128)
}

func TestHostileStdioDeepJSON(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.DeepJSON, "1m", nil, casePing, caseStdout, caseProgress)
	r.expect(t, caseStdout, "fail", "STD-4", "parse-error")
	r.passes(t, casePing, caseProgress)
	r.rssCap(t, 128)
}

func TestHostileStdioUnknownIDs(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.UnknownIDs, "1m", nil, casePing, caseIDZero, caseStdout)
	r.expect(t, casePing, "fail", "RPC-8", "hostile-never-sent")
	r.expect(t, caseIDZero, "fail", "RPC-8", "hostile-never-sent")
	// Every frame is still a valid JSON-RPC message.
	r.passes(t, caseStdout)
	r.rssCap(t, 128)
}

func TestHostileStdioDuplicateResponses(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.DuplicateResponses, "1m", nil, casePing, caseNoAnswer, caseStdout)
	r.expect(t, casePing, "fail", "RPC-8")
	// A second response answers a request, not a notification: RPC-8,
	// not RPC-15.
	r.expect(t, caseNoAnswer, "fail", "RPC-8")
	r.passes(t, caseStdout)
	r.rssCap(t, 128)
}

// TestHostileStdioProgressFlood: a million valid, increasing progress
// notifications break no MUST (PRG-13's rate limiting is a SHOULD with no
// threshold), so the flooded case is no fail; but the chronology reached
// its cap, so the case cannot vouch for the target and is an error that
// names the cap. Memory stays bounded by the caps, not by the flood.
func TestHostileStdioProgressFlood(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: a million progress notifications through the binary are the full suite's; chrono's TestCapsBoundTheLog and runner's TestChronologyCapIsNoPass hold the cap here")
	}
	r := runZoo(t, hostile.ProgressFlood, "2m", nil, casePing, caseProgress)
	r.expect(t, caseProgress, "error", "", fmt.Sprintf("cap of %d events", chrono.DefaultMaxEvents), fmt.Sprintf("%d progress notifications", hostile.FloodCount+3))
	r.passes(t, casePing)
	r.rssCap(t, 256)
}

// TestHostileStdioNeverAnswers: a server that never answers opens no
// session, so no case can run: check ends with one line (exit 2) naming
// the unanswered initialize, and the JSON report carries that one outcome
// and no case. The server, which stays after its input ends, is stopped.
func TestHostileStdioNeverAnswers(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.NeverAnswers, "1s", nil, casePing)
	if r.code != ExitError || r.rep.NoSession == nil || len(r.rep.Results) != 0 {
		t.Fatalf("exit code %d, %d results, noSession %+v; want 2, none and the one outcome\n%s", r.code, len(r.rep.Results), r.rep.NoSession, r.out)
	}
	if !strings.Contains(r.rep.NoSession.Line, "initialize failed: no answer within 1s") {
		t.Errorf("line %q does not say initialize went unanswered", r.rep.NoSession.Line)
	}
	if lines := strings.Split(strings.TrimSpace(r.out), "\n"); len(lines) != 1 || !strings.Contains(lines[0], r.rep.NoSession.Line) {
		t.Errorf("output is not the one line:\n%s", r.out)
	}
	r.rssCap(t, 128)
}

// TestHostileStdioIgnoreSIGTERM: the teardown case warns STD-7 (STD-46 is 2026-07-28's), the
// run's teardown grade is SIGKILL, and the unaffected case passes.
func TestHostileStdioIgnoreSIGTERM(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.IgnoreSIGTERM, "1m", nil, casePing, caseTeardown)
	r.expect(t, caseTeardown, "warn", "STD-7", "SIGKILL")
	r.passes(t, casePing)
	if td := r.rep.Teardown; td.Worst != "SIGKILL" || td.Leftovers != 0 {
		t.Errorf("teardown grade %+v, want SIGKILL with no leftovers", td)
	}
	// A 2025-11-25 run, whose rules have no server-side exit sentence:
	// the grade cites STD-7, the client's ladder, and STD-46 only as a
	// later revision's advice, never as the rule.
	if td := r.rep.Teardown; td.Requirement != "STD-7" || td.Advice != "STD-46" {
		t.Errorf("teardown grade %+v, want it citing STD-7 with STD-46 as advice", td)
	}
	if strings.Contains(r.out, "Requirement: STD-46") || !strings.Contains(r.out, "Requirement: STD-7 SHOULD (2025-11-25)") ||
		!strings.Contains(r.out, "Advice: STD-46 SHOULD (2026-07-28, a later revision's rule; not a rule of 2025-11-25, applied as advice)") {
		t.Errorf("the text report's teardown grade does not cite 2025-11-25's rule and STD-46 as advice:\n%s", r.out)
	}
	r.rssCap(t, 128)
}

// TestHostileStdioGrandchildHoldsStdout: the grandchild keeps stdout
// open after the server exits; teardown does not wedge on it, and it is
// killed with its group.
func TestHostileStdioGrandchildHoldsStdout(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.GrandchildHoldsStdout, "1m", nil, casePing, caseTeardown, caseStdout)
	r.passes(t, casePing, caseTeardown, caseStdout)
	// Each case, and the probe that negotiates the revision before the
	// first case (initialize, under --protocol 2025-11-25), has a server
	// and a grandchild.
	if len(r.pids) != 2*(3+1) {
		t.Errorf("pids %v, want a server and a grandchild per case and per probe", r.pids)
	}
	r.rssCap(t, 128)
}

// TestHostileStdioExitMidCase: the cases that call a tool are errors that
// name the exit code and quote the server's last words; the next cases get
// a fresh server and pass.
func TestHostileStdioExitMidCase(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.ExitMidCase, "1m", nil, casePing, caseStdout, caseProgress, caseIDZero)
	for _, id := range []string{caseStdout, caseProgress} {
		r.expect(t, id, "error", "", "exited with code 3", "hostile: a tools/call arrived")
	}
	r.passes(t, casePing, caseIDZero)
	r.rssCap(t, 128)
}

// TestHostileStdioStderrFirehose: stderr is logging (STD-3): the cases
// pass, and the per-connection stderr budget keeps memory bounded.
func TestHostileStdioStderrFirehose(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.StderrFirehose, "1m", nil, casePing, caseStdout, caseProgress)
	r.passes(t, casePing, caseStdout, caseProgress)
	r.rssCap(t, 128)
}

// TestHostileStdioRunTimeout: --timeout ends a run against a server that
// never answers; the case running and the cases not yet run are errors
// that quote the time given (not what the negotiation's probes, which
// wait on the same deadline, left of it), the exit code is 2, and no
// target survives.
func TestHostileStdioRunTimeout(t *testing.T) {
	t.Parallel()
	r := runZoo(t, hostile.NeverAnswers, "1m", []string{"--timeout", "500ms"}, casePing, caseIDZero, caseStdout)
	if r.code != ExitError || !r.rep.Interrupted {
		t.Errorf("exit code %d, interrupted %v; want %d and true", r.code, r.rep.Interrupted, ExitError)
	}
	// The negotiation's probes wait on the server until the deadline,
	// so no case starts.
	for _, id := range []string{caseStdout, casePing, caseIDZero} {
		r.expect(t, id, "error", "", "run deadline reached: the whole run was given 500ms (--timeout)")
	}
}

// TestHostileStdioInterrupt sends SIGINT to check while its target
// ignores SIGTERM, during the shutdown ladder's waits, and while its
// target never answers initialize; no process of the target's group
// survives either. (A grandchild holding stdout is no candidate: its
// server does everything promptly, so there is no moment to interrupt
// that is not a race; TestHostileStdioGrandchildHoldsStdout and the zoo
// test cover its teardown.)
func TestHostileStdioInterrupt(t *testing.T) {
	t.Parallel()
	for _, mode := range []hostile.Mode{hostile.IgnoreSIGTERM, hostile.NeverAnswers} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo := filepath.Join(dir, "pids")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			target := transport.QuoteArgs([]string{binary, "serve", "--stdio", "--hostile", string(mode)})
			cmd, exited, out := startCheck(t, []string{hostile.PidfileEnv + "=" + fifo},
				"--stdio", target, "--profile", "reference", "--case", caseTeardown, "--case-timeout", "1m")

			// The target writes its pid once its misbehaviour is in
			// place; ignore-sigterm writes it again when its stdin has
			// been closed, that is during check's shutdown ladder, which
			// is when it is interrupted. Each open of the FIFO waits for
			// the next write. check may start more than one target
			// process (the revision probe comes before the case), and a
			// process killed while its second write waits for this
			// reader never makes it: so pids are read until one has come
			// twice, and that one is the process in its ladder.
			done := func(pids []int) bool { return len(pids) >= 1 }
			if mode == hostile.IgnoreSIGTERM {
				done = func(pids []int) bool { return inLadder(pids) != 0 }
			}
			pids := awaitPids(t, fifo, func() []int { return readFIFOUntil(fifo, done) }, cmd, exited, out)
			if !done(pids) {
				t.Fatalf("pid lines %v: the target did not reach the moment to interrupt", pids)
			}
			watched := pids[len(pids)-1]
			if mode == hostile.IgnoreSIGTERM {
				watched = inLadder(pids)
			}
			t.Logf("pids written: %v; interrupting while %d runs", pids, watched)
			if st := procState(watched); st == "" || st == "Z" {
				t.Fatalf("target process %d not running before the interrupt (state %q; pids %v)\n%s", watched, procState(watched), pids, out.String())
			}
			if err := interrupt(t, cmd, exited, out, zooSafety); !exitedWith(err, ExitError) {
				t.Errorf("interrupted check: %v, want exit code %d\n%s", err, ExitError, out.String())
			}
			assertNoSurvivors(t, pids)
		})
	}
}

// inLadder is the first pid that pids hold twice (a hostile
// ignore-sigterm target writes its pid again once its stdin is closed),
// or 0.
func inLadder(pids []int) int {
	for i, pid := range pids {
		if slices.Contains(pids[:i], pid) {
			return pid
		}
	}
	return 0
}

// readFIFOLines reads n pids from the FIFO, reopening it for each writer;
// it returns early, with what it has, on a malformed line or an error.
func readFIFOLines(fifo string, n int) []int {
	return readFIFOUntil(fifo, func(pids []int) bool { return len(pids) >= n })
}

// readFIFOUntil reads pids from the FIFO, reopening it for each writer,
// until done holds for those read; it returns early, with what it has, on
// a malformed line or an error.
func readFIFOUntil(fifo string, done func([]int) bool) []int {
	var pids []int
	for !done(pids) {
		f, err := os.Open(fifo) // blocks until the next writer opens it
		if err != nil {
			return pids
		}
		sc := bufio.NewScanner(f)
		lines := 0
		for sc.Scan() {
			lines++
			pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
			if err != nil {
				f.Close()
				return pids
			}
			pids = append(pids, pid)
		}
		f.Close()
		if lines == 0 {
			return pids // opened by the test itself to unblock this
		}
	}
	return pids
}

// TestHostileStdioZoo runs every stdio mode with a reduced case set (one
// case that calls a tool with progress, so that every mode's attack
// fires) and counts, afterwards, the processes of every target group:
// none remains.
func TestHostileStdioZoo(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		all []int
		ran int
	)
	modes := stdioModes()
	// The modes whose cost is a flood or a wait: under -short the zoo
	// sweeps the others.
	notInShort := map[hostile.Mode]string{
		hostile.ProgressFlood: "the flood is the full suite's (TestHostileStdioProgressFlood)",
		hostile.IgnoreSIGTERM: "TestHostileStdioIgnoreSIGTERM runs this mode",
		hostile.NeverAnswers:  "TestHostileStdioNeverAnswers runs this mode",
	}
	t.Run("modes", func(t *testing.T) {
		for _, mode := range modes {
			t.Run(string(mode), func(t *testing.T) {
				t.Parallel()
				if why := notInShort[mode]; testing.Short() && why != "" {
					t.Skip("-short: " + why + "; the full suite sweeps it here too")
				}
				r := runZoo(t, mode, "2s", nil, caseStdout)
				// The one case's outcome, and, for a mode whose responses
				// break RPC-8 in a chronology the case does not judge
				// them in, the passive rule that sees them.
				var caseResults, passive []zooResult
				for _, res := range r.rep.Results {
					if strings.HasPrefix(res.ID, "passive/") {
						passive = append(passive, res)
					} else {
						caseResults = append(caseResults, res)
					}
				}
				if want := 1; mode == hostile.NeverAnswers && r.rep.NoSession == nil || mode != hostile.NeverAnswers && len(caseResults) != want {
					t.Errorf("%s: %d case results, noSession %+v; want %d (none and the one outcome when it never answers)", mode, len(caseResults), r.rep.NoSession, want)
				}
				wantPassive := mode == hostile.UnknownIDs || mode == hostile.DuplicateResponses
				if gotPassive := len(passive) == 1 && passive[0].ID == "passive/one-response" && passive[0].Verdict == "fail" && passive[0].Requirement == "RPC-8"; gotPassive != wantPassive {
					t.Errorf("%s: passive results %+v; want passive/one-response fail RPC-8: %v", mode, passive, wantPassive)
				}
				mu.Lock()
				all = append(all, r.pids...)
				ran++
				mu.Unlock()
			})
		}
	})
	if len(modes) != 13 {
		t.Errorf("%d stdio modes, want 13", len(modes))
	}
	alive := 0
	for _, pid := range all {
		for _, m := range append(groupMembers(t, pid), pid) {
			if st := procState(m); st != "" && st != "Z" {
				alive++
			}
		}
	}
	t.Logf("%d target processes recorded across %d modes; %d alive afterwards", len(all), ran, alive)
	if alive != 0 {
		t.Errorf("%d processes of the targets' groups remain", alive)
	}
}

// zooMarkEnv names the environment variable that marks every process of
// one interrupted run (check, its targets and their children inherit it),
// so that survivors are found wherever they are, in or out of the
// target's process group.
const zooMarkEnv = "MCPFLIGHT_TEST_ZOO_MARK"

// TestHostileStdioZooInterrupted sends SIGINT to check while each stdio
// mode's target is running: the target records its pid through a FIFO
// before it serves, so the interrupt lands in the handshake of the case.
// Afterwards no process carrying the run's mark may be alive, whatever
// its process group (found through /proc/PID/environ, from outside).
func TestHostileStdioZooInterrupted(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc to inspect")
	}
	// The scan itself must be able to find a survivor. The probe is
	// scanned for once it has recorded its pid: right after exec its
	// environment may not be readable yet (a loaded full run found it
	// empty).
	probeMark := fmt.Sprintf("probe-%d", os.Getpid())
	probeFIFO := filepath.Join(t.TempDir(), "probe-pid")
	if err := syscall.Mkfifo(probeFIFO, 0o600); err != nil {
		t.Fatal(err)
	}
	probe := exec.Command(binary, "serve", "--stdio", "--hostile", string(hostile.NeverAnswers))
	probe.Env = append(os.Environ(), zooMarkEnv+"="+probeMark, hostile.PidfileEnv+"="+probeFIFO)
	stdin, err := probe.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	probeExited := make(chan error, 1)
	go func() { probeExited <- probe.Wait() }()
	awaitPids(t, probeFIFO, func() []int { return readFIFOLines(probeFIFO, 1) }, probe, probeExited, &strings.Builder{})
	if got := markedProcesses(probeMark); len(got) != 1 || got[0] != probe.Process.Pid {
		t.Errorf("scan for a live marked process found %v, want [%d]", got, probe.Process.Pid)
	}
	_ = probe.Process.Kill()
	<-probeExited
	stdin.Close()

	modes := stdioModes()
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			mark := fmt.Sprintf("%d-%s", os.Getpid(), mode)
			fifo := filepath.Join(t.TempDir(), "pids")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			target := transport.QuoteArgs([]string{binary, "serve", "--stdio", "--hostile", string(mode)})
			cmd, exited, out := startCheck(t, []string{hostile.PidfileEnv + "=" + fifo, zooMarkEnv + "=" + mark},
				"--stdio", target, "--profile", "reference", "--case", caseStdout, "--case-timeout", "1m")
			if pids := awaitPids(t, fifo, func() []int { return readFIFOLines(fifo, 1) }, cmd, exited, out); len(pids) == 0 {
				t.Fatalf("no pid recorded\n%s", out.String())
			}
			// Interrupted mid-case: exit 2 (ExitError). Only a case that
			// finished in the instant before the signal could make it
			// exit otherwise; what is asserted below holds either way.
			if err := interrupt(t, cmd, exited, out, zooSafety); !exitedWith(err, ExitError) {
				t.Logf("check exited with %v (not interrupted mid-case?)", err)
			}
			if left := markedProcesses(mark); len(left) > 0 {
				t.Errorf("processes %v of the interrupted run survived\n%s", left, out.String())
			}
		})
	}
	if len(modes) != 13 {
		t.Errorf("%d stdio modes, want 13", len(modes))
	}
}

// markedProcesses lists the live (not zombie) processes whose environment
// holds zooMarkEnv=mark.
func markedProcesses(mark string) []int {
	want := []byte(zooMarkEnv + "=" + mark + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if st := procState(pid); st != "" && st != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestHostileStdioInterruptJobs sends SIGINT to a check running cases side
// by side (--jobs 4) against servers that ignore SIGTERM: once three
// target processes have recorded their pids (so several cases run, and the
// first case's teardown is under way beside them), the interrupt ends the
// run, and no process of the run survives, whether it was serving a case,
// in a teardown no case waits for, or still starting.
func TestHostileStdioInterruptJobs(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc to inspect")
	}
	mark := fmt.Sprintf("%d-jobs", os.Getpid())
	fifo := filepath.Join(t.TempDir(), "pids")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	target := transport.QuoteArgs([]string{binary, "serve", "--stdio", "--hostile", string(hostile.IgnoreSIGTERM)})
	cmd, exited, out := startCheck(t, []string{hostile.PidfileEnv + "=" + fifo, zooMarkEnv + "=" + mark},
		"--stdio", target, "--profile", "reference", "--case", "progress/*", "--jobs", "4", "--case-timeout", "1m")
	pids := awaitPids(t, fifo, func() []int { return readDistinctPids(fifo, 3) }, cmd, exited, out)
	if len(pids) < 3 {
		t.Fatalf("pids %v, want 3", pids)
	}
	if err := interrupt(t, cmd, exited, out, zooSafety); !exitedWith(err, ExitError) {
		t.Errorf("interrupted check: %v, want exit code %d\n%s", err, ExitError, out.String())
	}
	assertNoSurvivors(t, pids)
	if left := markedProcesses(mark); len(left) > 0 {
		t.Errorf("processes %v of the interrupted run survived\n%s", left, out.String())
	}
}

// stdioModes lists the hostile stdio modes.
func stdioModes() []hostile.Mode {
	var modes []hostile.Mode
	for _, in := range hostile.All() {
		if in.Transport == hostile.TransportStdio {
			modes = append(modes, in.Mode)
		}
	}
	return modes
}

// readDistinctPids reads pid lines from the FIFO, reopening it for each
// writer, until it has n distinct pids; it returns early, with what it
// has, on a malformed line or an error.
func readDistinctPids(fifo string, n int) []int {
	seen := map[int]bool{}
	var pids []int
	for len(pids) < n {
		lines := readFIFOLines(fifo, 1)
		if len(lines) == 0 {
			return pids
		}
		for _, pid := range lines {
			if !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
