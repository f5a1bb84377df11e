package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Run-specific text: timings (the report's and those a summary quotes,
// "exited 1.9ms after"), chronology sequence numbers, the reference
// server's random task IDs, and how many messages the schema check saw.
var (
	durationText = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	seqText      = regexp.MustCompile(`\bseq \d+`)
	taskIDText   = regexp.MustCompile(`task-[0-9a-f]{32}`)
	checkedText  = regexp.MustCompile(`\b\d+ inbound messages checked`)
)

// timingMembers are the JSON report's timing members.
var timingMembers = map[string]bool{"started": true, "durationNs": true, "waitedNs": true, "slowestNs": true, "offsetNs": true}

// normalText masks what differs between two runs whatever --jobs.
func normalText(s string) string {
	s = durationText.ReplaceAllString(s, "<duration>")
	s = seqText.ReplaceAllString(s, "seq <n>")
	s = checkedText.ReplaceAllString(s, "<n> inbound messages checked")
	return taskIDText.ReplaceAllString(s, "task-<id>")
}

// normalReport is a JSON report without its timings and without what
// differs between two runs at --jobs 1 as much as between --jobs 1 and 8:
// the chronologies (events arrive from concurrent goroutines and pipes,
// a server's stderr between its frames; their order and so their
// sequence numbers vary, and so does the number of progress
// notifications that race a cancel, which the schema check counts), the
// sequence numbers verdicts quote, and task IDs. Every other byte must be
// the same.
func normalReport(t *testing.T, raw []byte) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch {
				case timingMembers[k], k == "events":
					delete(v, k)
				case k == "actualSeq", k == "checked", k == "unchecked":
					if x != float64(0) {
						v[k] = "<n>"
					}
				default:
					v[k] = walk(x)
				}
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		case string:
			return normalText(v)
		}
		return v
	}
	out, err := json.MarshalIndent(walk(doc), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestCheckJobsSameReport: the whole catalogue against the built-in server
// with two faults on, at --jobs 1 and --jobs 8, gives the same JSON report
// and the same text report apart from timings (and what varies between two
// runs at --jobs 1 too; see normalReport).
func TestCheckJobsSameReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runs := map[string]result{}
	reports := map[string]string{}
	for _, jobs := range []string{"1", "8"} {
		file := filepath.Join(dir, "report-"+jobs+".json")
		// progress-after-cancel, not respond-after-cancel: under the latter
		// cancel/crossing-response, the catalogue's designed race, warns
		// or passes as its race goes, at any --jobs.
		r := runCLI(t, "", loopCases("check", "--protocol", "2025-11-25", "--target-fault", "progress-after-cancel", "--target-fault", "ping-broken", "--jobs", jobs, "--json", file)...)
		if r.code != ExitNonConformant {
			t.Fatalf("--jobs %s: exit code %d, want %d\n%s\n%s", jobs, r.code, ExitNonConformant, r.stdout, r.stderr)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		runs[jobs], reports[jobs] = r, normalReport(t, raw)
	}
	if diff := cmp.Diff(reports["1"], reports["8"]); diff != "" {
		t.Errorf("JSON reports (-jobs 1 +jobs 8):\n%s", diff)
	}
	if diff := cmp.Diff(normalText(runs["1"].stdout), normalText(runs["8"].stdout)); diff != "" {
		t.Errorf("text reports (-jobs 1 +jobs 8):\n%s", diff)
	}
	// Not everything is a pass: the faults are seen, at both settings.
	var doc struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal([]byte(reports["8"]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Counts["fail"] == 0 || doc.Counts["warn"] == 0 || doc.Counts["pass"] == 0 {
		t.Errorf("counts %v: want passes, fails and warns", doc.Counts)
	}
}

// TestCheckQuiet: -q prints the summary line and nothing else.
func TestCheckQuiet(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "check", "--protocol", "2025-11-25", "-q", "--case", "ping/*", "--case", "rpc/id-zero", "--case", "rpc/string-and-integer-ids", "--case", "rpc/no-response-to-notifications")
	if r.code != ExitConformant {
		t.Fatalf("exit code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`^mcpflight: (\d+) cases — (\d+) pass, 0 fail, 0 warn, 0 info, 0 skip, 0 error \(\d+\.\d+s\) — conformant\n$`).MatchString(r.stdout) {
		t.Errorf("-q printed %q", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q", r.stderr)
	}
}
