package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/internal/revisionsrv"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/verdict"
)

// revisionTarget is the target flags for testdata/revisionserver
// (internal/revisionsrv as a command, built once) in mode over stdio or
// HTTP (a process of its own, stopped when the test ends).
func revisionTarget(t *testing.T, mode revisionsrv.Mode, over string) []string {
	t.Helper()
	bin, err := testdataBuilds.Command("revisionserver")
	if err != nil {
		t.Fatal(err)
	}
	if over == "stdio" {
		return []string{"--stdio", transportQuote(bin, "-mode", string(mode))}
	}
	return []string{"--url", schemaBreakHTTP(t, bin, string(mode))}
}

// TestProtocolStrictServer: against a strict
// 2026-07-28 server (initialize answered -32022 listing only 2026-07-28;
// over HTTP with 400), auto runs under 2026-07-28 and says why, and
// --protocol 2025-11-25 ends with one line naming what the server
// offers, exit 2, and no report.
func TestProtocolStrictServer(t *testing.T) {
	t.Parallel()
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			target := revisionTarget(t, revisionsrv.Only2026, over)
			r := runCLI(t, "", append([]string{"check"}, target...)...)
			// The scripted server has no tool a profile names: most cases
			// cannot run, and the run says so (incomplete, exit 3).
			if r.code != ExitIncomplete {
				t.Errorf("auto: exit %d, want %d (incomplete)\n%s\n%s", r.code, ExitIncomplete, r.stdout, r.stderr)
			}
			for _, want := range []string{", protocol 2026-07-28", "revision 2026-07-28: server/discover listed it", "server: revisionsrv-2026-only 1"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("auto: the report lacks %q:\n%s", want, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "ERROR") {
				t.Errorf("auto: harness errors:\n%s", r.stdout)
			}
			for _, line := range strings.Split(r.stdout, "\n") {
				// A skip's reason is on its folded line ("SKIP  N
				// cases: REASON"); any other reason is indented.
				reason := ""
				if strings.HasPrefix(line, "  SKIP  ") {
					_, reason, _ = strings.Cut(line, ": ")
				} else if strings.HasPrefix(line, "        ") {
					reason = line
				}
				if strings.Contains(reason, "only") && !strings.Contains(reason, "applies to 2025-11-25 only") &&
					!strings.Contains(line, "a modern-only server agrees to nothing") && !strings.Contains(line, "stdin exists only for a process") {
					t.Errorf("auto: a skip for another reason than the revision: %q", line)
				}
			}

			r = runCLI(t, "", append([]string{"check", "--protocol", "2025-11-25"}, target...)...)
			want := "mcpflight: the server does not support 2025-11-25: it offers 2026-07-28 (initialize was answered -32022 UnsupportedProtocolVersion)\n"
			if r.code != ExitError || r.stderr != want || r.stdout != "" {
				t.Errorf("2025-11-25: exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr %q", r.code, r.stdout, r.stderr, want)
			}
		})
	}
}

// TestProtocolInconsistentServer: a server whose server/discover lists
// only 2026-07-28 while initialize agrees to 2025-11-25 is not called
// conformant silently: the header, the summary and the JSON report carry
// the contradiction, with the probes' answers.
func TestProtocolInconsistentServer(t *testing.T) {
	t.Parallel()
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	r := runCLI(t, "", append([]string{"check", "--json", jsonPath}, revisionTarget(t, revisionsrv.Inconsistent, "stdio")...)...)
	want := "INCONSISTENT initialize agreed to 2025-11-25, which server/discover does not list (it lists 2026-07-28): either the server agrees to a revision it does not list as supported (LIF-9), or its supportedVersions names only the revisions of the per-request era (the spec does not say which it must) [LIF-9, LIF-47]"
	if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "— 1 inconsistency between the server's answers —") {
		t.Errorf("the text report does not say the server contradicts itself:\n%s", r.stdout)
	}
	doc := readJSONReport(t, jsonPath)
	n := doc.Negotiation
	if n == nil || n.Mode != "auto" || len(n.Conflicts) != 1 || n.Discover == nil || n.Init == nil {
		t.Fatalf("negotiation %+v", n)
	}
	if diff := cmp.Diff([]string{"2026-07-28"}, n.Discover.SupportedVersions); diff != "" || n.Init.ProtocolVersion != "2025-11-25" {
		t.Errorf("probes: discover lists %v, initialize agreed %q", n.Discover.SupportedVersions, n.Init.ProtocolVersion)
	}
	if diff := cmp.Diff([]string{"LIF-9", "LIF-47"}, n.Conflicts[0].Requirements); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]report.JSONRevisionRun{{Revision: "2026-07-28", Reason: "server/discover listed it"}}, n.Revisions); diff != "" {
		t.Error(diff)
	}
}

// TestProtocolBothReport: --protocol both on a dual-era server runs the
// catalogue under each revision into one report: a revision on every
// result and a "what changed" section, in every format.
func TestProtocolBothReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := append([]string{"check", "--protocol", "both", "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"),
		"--html", filepath.Join(dir, "r.html")}, revisionTarget(t, revisionsrv.Dual, "stdio")...)
	r := runCLI(t, "", args...)
	if r.code != ExitIncomplete { // the scripted server has no profile's tools
		t.Errorf("exit %d, want %d (incomplete)\n%s\n%s", r.code, ExitIncomplete, r.stdout, r.stderr)
	}
	for _, want := range []string{", protocol 2025-11-25, 2026-07-28", "revision 2025-11-25: initialize agreed to 2025-11-25",
		"revision 2026-07-28: server/discover listed it", "[stdio, 2026-07-28]", "what changed between 2025-11-25 and 2026-07-28 on this server"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
	doc := readJSONReport(t, filepath.Join(dir, "r.json"))
	if diff := cmp.Diff([]string{"2025-11-25", "2026-07-28"}, doc.ProtocolVersions); diff != "" {
		t.Error(diff)
	}
	perRev := map[string]int{}
	for _, res := range doc.Results {
		perRev[res.Revision]++
	}
	if perRev["2025-11-25"] == 0 || perRev["2025-11-25"] != perRev["2026-07-28"] || len(perRev) != 2 {
		t.Errorf("results per revision %v", perRev)
	}
	for file, wants := range map[string][]string{
		"r.xml":  {`name="lifecycle/version-echo @2026-07-28"`, `<property name="revision" value="2026-07-28: server/discover listed it">`},
		"r.html": {"What changed between 2025-11-25 and 2026-07-28 on this server", "<dt>revision</dt><dd>2025-11-25: initialize agreed to 2025-11-25</dd>"},
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", file, want)
			}
		}
	}
}

// TestProtocolFlag: --protocol is parsed the same by the four commands;
// both is refused where one session is all there is, and with a
// baseline (which lists the cases of one revision).
func TestProtocolFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--protocol", "2025-06-18"}, `--protocol: unknown protocol mode "2025-06-18" (want 2025-11-25, 2026-07-28, auto, both)`},
		{[]string{"call", "--protocol", "both", "slow"}, "--protocol both runs once per revision"},
		{[]string{"shell", "--protocol", "both"}, "--protocol both runs once per revision"},
		{[]string{"tools", "--protocol", "nope"}, "unknown protocol mode"},
		{[]string{"check", "--protocol", "both", "--write-baseline", "x.json"}, "a baseline lists the cases of one revision"},
	} {
		r := runCLI(t, "", tc.args...)
		if r.code != ExitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	for _, cmd := range []string{"check", "call", "tools", "shell"} {
		r := runCLI(t, "", cmd, "-h")
		if !strings.Contains(r.stdout+r.stderr, "--protocol REV") {
			t.Errorf("%s -h does not document --protocol", cmd)
		}
	}
}

// TestSessionCommandsNegotiate: call, tools and shell negotiate like
// check: a strict 2026-07-28 server is spoken to in its revision under
// auto, and refused in one line under --protocol 2025-11-25.
func TestSessionCommandsNegotiate(t *testing.T) {
	t.Parallel()
	target := revisionTarget(t, revisionsrv.Only2026, "stdio")
	r := runCLI(t, "", append([]string{"tools"}, target...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "echo") || !strings.Contains(r.stderr, "mcpflight: speaking 2026-07-28: server/discover listed it") {
		t.Errorf("tools: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", append([]string{"call", "echo"}, target...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "completed: echo echo") {
		t.Errorf("call: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "list_tools\nexpect outcome completed\n", append([]string{"shell"}, target...)...)
	if r.code != 0 || !strings.Contains(r.stderr, "speaking 2026-07-28") {
		t.Errorf("shell: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", append([]string{"tools", "--protocol", "2025-11-25"}, target...)...)
	if r.code != ExitError || !strings.Contains(r.stderr, "the server does not support 2025-11-25: it offers 2026-07-28") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("tools --protocol 2025-11-25: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCheckReference2026: a --protocol 2026-07-28 run against the
// built-in server errors and fails on none, over stdio and HTTP; a case
// it skips either applies to 2025-11-25 only or says why it cannot run
// there (a stdio rule over HTTP, a rule for modern-only servers).
func TestCheckReference2026(t *testing.T) {
	t.Parallel()
	// Over stdio a process serves each session: -short checks a few
	// areas there (loopCases) and the whole catalogue over HTTP.
	for _, extra := range [][]string{loopCases(), {"--transport", "http"}} {
		// -v lists each skip in its area, its reason on the next line.
		r := runCLI(t, "", append([]string{"check", "--protocol", "2026-07-28", "-v"}, extra...)...)
		if r.code != ExitConformant || !strings.Contains(r.stdout, " 0 error ") {
			t.Errorf("%v: exit %d\n%s\n%s", extra, r.code, r.stdout, r.stderr)
		}
		lines := strings.Split(r.stdout, "\n")
		for i, line := range lines {
			if strings.HasPrefix(strings.TrimSpace(line), "SKIP") && strings.HasSuffix(line, "]") && (i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "applies to 2025-11-25 only" && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "needs the Streamable HTTP transport") &&
				!strings.HasPrefix(strings.TrimSpace(lines[i+1]), "needs the stdio transport") && !skippedElsewhere2026(line)) {
				t.Errorf("%v: %s is skipped for another reason: %q", extra, strings.TrimSpace(line), lines[i+1])
			}
		}
		if !strings.Contains(r.stdout, "revision 2026-07-28: as asked; ") {
			t.Errorf("%v: the header does not say why 2026-07-28:\n%s", extra, r.stdout)
		}
	}
}

// skippedElsewhere2026 reports whether a SKIP line of a 2026-07-28 run
// against the built-in server is a case that cannot run there for a
// reason of its own: LIF-49 is for modern-only servers, and over HTTP the
// stdio cases and the stdio cancellation cases skip.
func skippedElsewhere2026(line string) bool {
	for _, id := range []string{"lifecycle/initialize-error-names-versions", "stdio/teardown-on-stdin-close",
		"cancel/no-further-message-after-progress", "cancel/no-further-message-before-progress", "cancel/server-sends-no-cancelled",
		"cancel/handler-stops"} {
		if strings.Contains(line, " "+id+" ") {
			return true
		}
	}
	return false
}

// TestProtocolAutoSilent2025Server: against a legacy server that never
// answers server/discover, auto falls back to 2025-11-25 and no case
// waits out its deadline on the same silence: the run has no harness
// error, and lifecycle/initialize-agrees-to-listed-revision is a skip
// that says the server serves no server/discover (from the negotiation
// under auto; from its own bounded wait under --protocol 2025-11-25,
// where no probe was made): the case's LIF-9 cannot be judged against
// a server/discover the server never answered.
func TestProtocolAutoSilent2025Server(t *testing.T) {
	t.Parallel()
	const id = "lifecycle/initialize-agrees-to-listed-revision"
	for _, tc := range []struct {
		name, over string
		flags      []string
		why        string
	}{
		{"auto/stdio", "stdio", nil, "the run's negotiation probe failed: no answer within 5s"},
		{"auto/http", "http", nil, "the run's negotiation probe failed: no answer within 5s"},
		{"2025-11-25/stdio", "stdio", []string{"--protocol", "2025-11-25", "--case", id}, "no answer within "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each waits out the silence (5 s of probe, or the case's own
			// bounded wait): side by side, not one after another.
			t.Parallel()
			if testing.Short() && tc.over == "http" {
				t.Skip("-short: auto/stdio waits out the same silence; negotiate's TestOpen falls back over HTTP from a silent probe here, and the full suite runs this one too")
			}
			jsonPath := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"check", "--json", jsonPath}, tc.flags...)
			r := runCLI(t, "", append(args, revisionTarget(t, revisionsrv.Silent2025, tc.over)...)...)
			if _, err := os.Stat(jsonPath); err != nil {
				t.Fatalf("no JSON report (exit %d): %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
			}
			doc := readJSONReport(t, jsonPath)
			if doc.Counts[verdict.Error] != 0 {
				t.Errorf("%d harness errors, want 0:\n%s", doc.Counts[verdict.Error], r.stdout)
			}
			if r.code == ExitError {
				t.Errorf("exit %d (inconclusive):\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			found := false
			for _, res := range doc.Results {
				if res.ID != id {
					continue
				}
				found = true
				if res.Verdict != "skip" || !strings.Contains(res.Summary, "the server serves no server/discover") || !strings.Contains(res.Summary, tc.why) {
					t.Errorf("%s: %s %q; want a skip saying the server serves no server/discover (%s)", id, res.Verdict, res.Summary, tc.why)
				}
			}
			if !found {
				t.Errorf("the report has no result for %s", id)
			}
		})
	}
}

// readJSONReport reads the JSON report check wrote at path.
func readJSONReport(t *testing.T, path string) report.JSONReport {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.JSONReport
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}
