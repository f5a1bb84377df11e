package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// badInput is testdata/badinput, built once.
var badInput = testdataCommand("badinput")

// badInputTarget is the check flags that reach testdata/badinput in mode
// over stdio or HTTP.
func badInputTarget(t *testing.T, mode, over string) []string {
	t.Helper()
	bin, err := badInput()
	if err != nil {
		t.Fatalf("building testdata/badinput: %v", err)
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

// TestBadInputServers is the proof of issue 14.2: a server that dies on
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
