package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJudgeCheckChronologies: judge reads the chronologies check wrote
// and applies watch's rules to the server side of each: against the
// reference server they all hold (exit 0); with a fault that breaks
// PRG-4 in every session, judge fails it, citing PRG-4, in more sessions
// than the one case of check that looks for it.
func TestJudgeCheckChronologies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault []string
		code  int
		want  string
	}{
		{"conforming", nil, ExitConformant, "— conformant"},
		{"non-increasing-progress", []string{"--target-fault", "non-increasing-progress"}, ExitNonConformant, "PRG-4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			chron := filepath.Join(dir, "chronologies")
			args := append([]string{"check", "--protocol", "2025-11-25", "--jsonl-dir", chron, "-q"}, tc.fault...)
			if testing.Short() {
				// Over stdio a process serves each session: -short
				// judges the fault's area over stdio, and the whole
				// conforming catalogue over HTTP (judge finds a
				// conversation that exercises fewer than half its
				// rules incomplete). The full suite runs both whole
				// over stdio.
				if tc.fault != nil {
					args = append(args, "--case", "progress/*")
				} else {
					args = append(args, "--transport", "http")
				}
			}
			if r := runCLI(t, "", args...); r.code != ExitConformant && r.code != ExitNonConformant {
				t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			jsonFile := filepath.Join(dir, "judged.json")
			r := runCLI(t, "", "judge", chron, "--side", "server", "--json", jsonFile)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.want) {
				t.Fatalf("judge: exit %d, want %d and %q\n%s%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
			data, err := os.ReadFile(jsonFile)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Role    string `json:"role"`
				Results []struct {
					ID          string `json:"id"`
					Verdict     string `json:"verdict"`
					Requirement string `json:"requirement"`
				} `json:"results"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Role != "conversation" || len(doc.Results) == 0 {
				t.Fatalf("JSON report: role %q, %d results", doc.Role, len(doc.Results))
			}
			for _, res := range doc.Results {
				if !strings.HasPrefix(res.ID, "server/") {
					t.Errorf("%s judged with --side server", res.ID)
				}
				if tc.fault != nil && res.ID == "server/progress-increasing" && (res.Verdict != "fail" || res.Requirement != "PRG-4") {
					t.Errorf("%s: %s %s, want fail PRG-4", res.ID, res.Verdict, res.Requirement)
				}
			}
		})
	}
}
