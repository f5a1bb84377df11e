package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/internal/targets"
)

// badInput is testdata/badinput, built once.

// badInputTarget is the check flags that reach testdata/badinput in mode
// over stdio or HTTP.
func badInputTarget(t *testing.T, mode, over string) []string {
	t.Helper()
	bin, err := testdataBuilds.Command("badinput")
	if err != nil {
		t.Fatal(err)
	}
	if over == "http" {
		return []string{"--url", schemaBreakHTTP(t, bin, mode)}
	}
	return []string{"--stdio", transportQuote(bin, "-mode", mode)}
}

// jsonResults reads the results of a JSON report by case ID.
func jsonResults(t *testing.T, path string) map[string]struct{ Verdict, Requirement, Summary string } {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			ID, Verdict, Requirement, Summary string
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct{ Verdict, Requirement, Summary string }{}
	for _, r := range rep.Results {
		out[r.ID] = struct{ Verdict, Requirement, Summary string }{r.Verdict, r.Requirement, r.Summary}
	}
	return out
}

// TestBadInputServers: a server that dies on
// a malformed line fails robust/not-json under RPC-2, and one that
// answers -32603 to a missing taskId fails robust/params-task-id under
// TSK-68, over stdio and over HTTP.
func TestBadInputServers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode, caseID, requirement string
	}{
		{"die-on-malformed", "robust/not-json", "RPC-2"},
		{"taskid-internal", "robust/params-task-id", "TSK-68"},
	}
	for _, tt := range tests {
		for _, over := range []string{"stdio", "http"} {
			t.Run(tt.mode+"/"+over, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "report.json")
				args := append([]string{"check", "--protocol", "2025-11-25", "--case", tt.caseID, "--json", path}, badInputTarget(t, tt.mode, over)...)
				r := runCLI(t, "", args...)
				if r.code != ExitNonConformant {
					t.Errorf("exit %d, want %d\n%s\n%s", r.code, ExitNonConformant, r.stdout, r.stderr)
				}
				got := jsonResults(t, path)[tt.caseID]
				if got.Verdict != "fail" || got.Requirement != tt.requirement {
					t.Errorf("%s: %s %s (%s), want fail %s", tt.caseID, got.Verdict, got.Requirement, got.Summary, tt.requirement)
				}
			})
		}
	}
}

// TestIncompleteRun is the proof of the incomplete outcome:
// a server that has tools but no profile runs too few cases to be called
// conformant. The run ends incomplete with its own exit code, and every
// format says how many cases did not run and what would let them run.
func TestIncompleteRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonPath, junitPath, htmlPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	args := append([]string{"check", "--protocol", "2025-11-25", "--json", jsonPath, "--junit", junitPath, "--html", htmlPath},
		badInputTarget(t, "plain", "stdio")...)
	r := runCLI(t, "", args...)
	const line = "would run with a profile that names a slow tool (mcpflight profile init drafts one; pass it with --profile)"
	if r.code != ExitIncomplete || !strings.Contains(r.stdout, "— incomplete: ") || !strings.Contains(r.stdout, line) {
		t.Fatalf("exit %d, want %d with the incomplete summary\n%s\n%s", r.code, ExitIncomplete, r.stdout, r.stderr)
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ExitCode     int  `json:"exitCode"`
		Conformant   bool `json:"conformant"`
		Completeness struct {
			Incomplete          bool
			Applicable, Ran     int
			NotRun, ReasonCount int
			Reason, Line        string
		} `json:"completeness"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Completeness
	if doc.ExitCode != ExitIncomplete || doc.Conformant || !c.Incomplete || 2*c.Ran >= c.Applicable || c.NotRun != c.Applicable-c.Ran ||
		c.Reason != "profile names no slow tool; pass --profile" || !strings.Contains(c.Line, line) {
		t.Errorf("JSON: exit %d, conformant %v, completeness %+v", doc.ExitCode, doc.Conformant, c)
	}
	for path, want := range map[string]string{junitPath: `<property name="incomplete" value="incomplete: `, htmlPath: `class="summary exit-3"`} {
		out, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "would run with a profile that names a slow tool") {
			t.Errorf("%s lacks %q and the remedy", filepath.Base(path), want)
		}
	}
}

// TestProfileInit: a profile drafted by profile init from the built-in
// server's tools/list is one check accepts, and finds the server
// conformant as the hand-written one does.
func TestProfileInit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "drafted.yaml")
	r := runCLI(t, "", "profile", "init", "-o", path)
	if r.code != 0 || !strings.Contains(r.stderr, "4 guesses to confirm") {
		t.Fatalf("profile init: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", loopCases("check", "--protocol", "2025-11-25", "--profile", path, "-q")...)
	if r.code != ExitConformant || !strings.Contains(r.stdout, "— conformant") {
		t.Errorf("check with the drafted profile: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestZeroConfigServerEverything: against server-everything, profile
// init drafts a profile check accepts, and the forbidden-tool case runs
// with the built-in profile, which names no tool for it: it takes one
// of the tools tools/list gives no taskSupport.
func TestZeroConfigServerEverything(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: server-everything (node) is the full suite's; TestProfileInit drafts a profile from the built-in server here")
	}
	node := targets.Need(t, serverEverything)
	cmdline := transportQuote(node, serverEverything, "stdio")
	path := filepath.Join(t.TempDir(), "everything.yaml")
	r := runCLI(t, "", "profile", "init", "--stdio", cmdline, "-o", path)
	if r.code != 0 {
		t.Fatalf("profile init: exit %d\n%s", r.code, r.stderr)
	}
	drafted, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name: "trigger-long-running-operation"`, `arguments: {"duration":1.5,"steps":3}`, `name: "simulate-research-query"`} {
		if !strings.Contains(string(drafted), want) {
			t.Errorf("the draft lacks %q:\n%s", want, drafted)
		}
	}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	r = runCLI(t, "", "check", "--stdio", cmdline, "--protocol", "2025-11-25", "--profile", path, "--case", "cancel/mid-work-no-response",
		"--case", "tasks/forbidden-with-task", "--case-timeout", "1m", "--json", jsonPath)
	if r.code == ExitError {
		t.Fatalf("check with the drafted profile: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := jsonResults(t, jsonPath)["cancel/mid-work-no-response"]; got.Verdict == "skip" || got.Verdict == "error" {
		t.Errorf("cancel/mid-work-no-response with the drafted profile: %s %s", got.Verdict, got.Summary)
	}
	r = runCLI(t, "", "check", "--stdio", cmdline, "--protocol", "2025-11-25", "--case", "tasks/forbidden-with-task", "--case-timeout", "1m", "--json", jsonPath)
	if !strings.Contains(r.stdout, "profile server-everything") {
		t.Errorf("not run with the built-in profile:\n%s", r.stdout)
	}
	// server-everything runs echo as a task and then fails its own
	// result check with -32602: TSK-9, a SHOULD.
	if got := jsonResults(t, jsonPath)["tasks/forbidden-with-task"]; got.Verdict != "warn" || got.Requirement != "TSK-9" {
		t.Errorf("tasks/forbidden-with-task: %s %s %s, want warn TSK-9", got.Verdict, got.Requirement, got.Summary)
	}
}

// TestToolsListCasesWithoutProfile: against a scripted server that
// declares tasks and whose tools/list gives no tool a taskSupport (so
// every tool forbids tasks), with no profile, the cases that need only
// tools/list run: the capability's shape passes,
// tool-task-support records that no tool accepts a task, and the
// forbidden-tool case calls one of the listed tools.
func TestToolsListCasesWithoutProfile(t *testing.T) {
	t.Parallel()
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"check", "--protocol", "2025-11-25", "--case", "tasks/capability-shape", "--case", "tasks/tool-task-support",
		"--case", "tasks/forbidden-with-task", "--json", jsonPath}, badInputTarget(t, "plain", "stdio")...)
	if r := runCLI(t, "", args...); r.code == ExitError {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := jsonResults(t, jsonPath)
	for id, want := range map[string]string{"tasks/capability-shape": "pass", "tasks/tool-task-support": "info", "tasks/forbidden-with-task": "warn"} {
		if got[id].Verdict != want {
			t.Errorf("%s: %s %s, want %s", id, got[id].Verdict, got[id].Summary, want)
		}
	}
	if s := got["tasks/tool-task-support"].Summary; !strings.Contains(s, "no tool of tools/list") {
		t.Errorf("tasks/tool-task-support: %q does not say that no listed tool accepts a task", s)
	}
}
