package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/transport"
)

// TestSlowToolAnswersAtOnce: against a real server (go-sdk) whose
// profile's slow tool answers at once with no progress, check says so in
// one line, and the cases that needed work in flight are skips with that
// reason, not errors; a finding a case could reach still stands, and the
// run is incomplete, not conformant.
func TestSlowToolAnswersAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the go-sdk server built from testdata is the full suite's; the built-in server's runs check the slow tool's use here")
	}
	bin := targets.GoBinary(t, "gosdkserver")
	dir := t.TempDir()
	prof := filepath.Join(dir, "instant.yaml")
	if err := os.WriteFile(prof, []byte("name: instant\nslow:\n  name: slow\n  arguments: {steps: 1, stepMs: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "r.json")
	r := runCLI(t, "", "check", "--protocol", "2025-11-25", "--stdio", transport.QuoteArgs([]string{bin, "stdio", "-no-progress"}),
		"--profile", prof, "--json", jsonFile, "--case", "cancel/*", "--case", "progress/*", "--case", "stdio/*")
	var doc struct {
		ExitCode int      `json:"exitCode"`
		Notes    []string `json:"notes"`
		Results  []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
			Summary string `json:"summary"`
		} `json:"results"`
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, r.stdout, r.stderr)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	const reason = `the profile's slow tool "slow" answered in `
	skipped := 0
	for _, res := range doc.Results {
		switch {
		case res.Verdict == "error":
			t.Errorf("%s: error: %s", res.ID, res.Summary)
		case res.Verdict == "skip" && strings.Contains(res.Summary, reason):
			skipped++
		}
	}
	if skipped < 10 {
		t.Errorf("%d cases skipped for the slow tool; want most of the cancel and progress cases", skipped)
	}
	var note string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "note: ") {
			note = line
		}
	}
	if !strings.Contains(note, reason) || !strings.Contains(note, "with no progress") || len(doc.Notes) != 1 {
		t.Errorf("note %q, JSON notes %q; want the one line naming the slow tool\n%s", note, doc.Notes, r.stdout)
	}
	if r.code == 2 || r.code == 1 {
		t.Errorf("exit code %d: an instant slow tool is no error and no finding", r.code)
	}
	t.Logf("%d of %d cases skipped for the slow tool (exit %d); %s", skipped, len(doc.Results), r.code, note)
}
