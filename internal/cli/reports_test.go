package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReportFiles runs a failing case and checks the JUnit and HTML
// files check writes beside the text report.
func TestCheckReportFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	r := runCLI(t, "", "check", "--protocol", "2025-11-25", "--target-fault", "non-increasing-progress", "--case", "progress/strictly-increasing",
		"--junit", junit, "--html", page)
	if r.code != ExitNonConformant {
		t.Fatalf("exit code %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Body string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit: %v", err)
	}
	if doc.Failures != 1 || len(doc.Suites) == 0 || doc.Suites[0].Name != "progress" ||
		doc.Suites[0].Cases[0].Failure == nil || !strings.Contains(doc.Suites[0].Cases[0].Failure.Body, "PRG-4 MUST") {
		t.Errorf("JUnit:\n%s", data)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table class="matrix"`, `<svg class="seq"`, "progress/strictly-increasing", `class="row in wrong"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if r := runCLI(t, "", "check", "--protocol", "2025-11-25", "--case", "ping/*", "--junit", filepath.Join(dir, "no", "such", "dir.xml")); r.code != ExitError || !strings.Contains(r.stderr, "--junit") {
		t.Errorf("unwritable --junit: code %d, stderr %s", r.code, r.stderr)
	}
}

// TestCheckBaseline walks through adopting a baseline: write it from a
// failing run, rerun (known: exit 0), fix the server (stale: exit 1), and
// a new failure (unexpected: exit 1).
func TestCheckBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.json")
	failing := []string{"check", "--protocol", "2025-11-25", "--target-fault", "non-increasing-progress", "--case", "progress/strictly-increasing", "--case", "ping/*"}

	r := runCLI(t, "", append(failing, "--write-baseline", base)...)
	if r.code != ExitNonConformant || !strings.Contains(r.stderr, "wrote a baseline of 1 known failure or warning") {
		t.Fatalf("writing: code %d\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[\n  {\"id\":\"progress/strictly-increasing\",\"verdict\":\"fail\"}\n]\n"; string(data) != want {
		t.Errorf("baseline file:\n%s", data)
	}

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"known failure", failing, ExitConformant, []string{
			"FAIL  progress/strictly-increasing", "known (1)", "exit 0, pass"}},
		{"fixed: the entry is stale", []string{"check", "--protocol", "2025-11-25", "--case", "progress/strictly-increasing"}, ExitNonConformant, []string{
			"stale (1)", "progress/strictly-increasing  listed fail, now pass", "exit 1, fail"}},
		{"a new failure", []string{"check", "--protocol", "2025-11-25", "--target-fault", "ping-broken", "--case", "ping/*"}, ExitNonConformant, []string{
			"unexpected (1)", "ping/", "unchecked (1)", "exit 1, fail"}},
	}
	// The JSON report carries the comparison, and its exit code.
	r = runCLI(t, "", append(failing, "--baseline", base, "--json", "-")...)
	var doc struct {
		ExitCode int `json:"exitCode"`
		Baseline *struct {
			File       string            `json:"file"`
			Known      []json.RawMessage `json:"known"`
			Unexpected []json.RawMessage `json:"unexpected"`
			ExitCode   int               `json:"exitCode"`
		} `json:"baseline"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--json - with --baseline: %v\n%s", err, r.stdout)
	}
	if r.code != ExitConformant || doc.ExitCode != ExitNonConformant || doc.Baseline == nil || doc.Baseline.File != base ||
		len(doc.Baseline.Known) != 1 || len(doc.Baseline.Unexpected) != 0 || doc.Baseline.ExitCode != ExitConformant {
		t.Errorf("--json - with --baseline: exit %d, report %+v\n%s", r.code, doc, r.stdout)
	}
	if !strings.Contains(r.stdout, `"id": "progress/strictly-increasing"`) {
		t.Errorf("the known finding is not named:\n%s", r.stdout)
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, "", append(tt.args, "--baseline", base)...)
			if r.code != tt.code {
				t.Errorf("exit code %d, want %d\n%s\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"id":"x","verdict":"pass"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{bad, filepath.Join(dir, "missing.json")} {
		r := runCLI(t, "", "check", "--protocol", "2025-11-25", "--baseline", b)
		if r.code != ExitError || !strings.Contains(r.stderr, "--baseline") || r.stdout != "" {
			t.Errorf("--baseline %s: code %d, stderr %s", b, r.code, r.stderr)
		}
	}
}
