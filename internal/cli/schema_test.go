package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/internal/testchild"
)

// testdataBuilds builds the testdata commands these tests start, once
// each; TestMain removes them.
var testdataBuilds = &testchild.Builds{Root: filepath.Join("..", "..")}

// schemaBreakHTTP starts a testdata command (schemabreak, revisionserver) with
// -mode mode -http on a free loopback port and returns its URL; the
// process is killed when the test ends.
func schemaBreakHTTP(t *testing.T, bin, mode string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-mode", mode, "-http", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("%s -http printed no URL: %v", filepath.Base(bin), err)
	}
	return strings.TrimSpace(url)
}

// TestSchemaBreakingServers runs check against servers whose answers
// break the schema, over stdio and over HTTP: each run is non-conformant,
// names the field, and (serverInfo.name a number, which the handshake
// cannot decode) has no harness error for that reason.
func TestSchemaBreakingServers(t *testing.T) {
	t.Parallel()
	bin, err := testdataBuilds.Command("schemabreak")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode     string
		findings []string // finding IDs, in order
	}{
		{"tools-yes", []string{"schema/InitializeResult/result/capabilities/tools#type", "schema/ListToolsResult/result/tools/0/inputSchema#type"}},
		{"name-number", []string{"schema/InitializeResult/result/serverInfo/name#type"}},
	}
	for _, tt := range tests {
		for _, over := range []string{"stdio", "http"} {
			t.Run(tt.mode+"/"+over, func(t *testing.T) {
				target := []string{"--stdio", transportQuote(bin, "-mode", tt.mode)}
				if over == "http" {
					target = []string{"--url", schemaBreakHTTP(t, bin, tt.mode)}
				}
				reportPath := filepath.Join(t.TempDir(), "report.json")
				r := runCLI(t, "", append([]string{"check", "--protocol", "2025-11-25", "--json", reportPath}, target...)...)
				if r.code != ExitNonConformant || !strings.Contains(r.stdout, "non-conformant") {
					t.Errorf("exit code %d, want %d (non-conformant)\n%s\n%s", r.code, ExitNonConformant, r.stdout, r.stderr)
				}
				for _, id := range tt.findings {
					if !strings.Contains(r.stdout, id) {
						t.Errorf("the report does not name %s:\n%s", id, r.stdout)
					}
				}
				for _, goText := range []string{"cannot unmarshal", "Go struct", "Go value"} {
					if strings.Contains(r.stdout, goText) {
						t.Errorf("Go's decoding wording %q reached the report:\n%s", goText, r.stdout)
					}
				}
				var rep struct {
					SchemaCheck struct {
						Findings []struct {
							ID, Requirement string
							FirstSeq        uint64
						}
					}
					Results []struct {
						ID, Verdict, Summary string
					}
				}
				raw, err := os.ReadFile(reportPath)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &rep); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range rep.SchemaCheck.Findings {
					got = append(got, f.ID)
					if f.Requirement != "RPC-2" || f.FirstSeq == 0 {
						t.Errorf("finding %+v: want RPC-2 and the seq of the message", f)
					}
				}
				if strings.Join(got, " ") != strings.Join(tt.findings, " ") {
					t.Errorf("findings %v, want %v", got, tt.findings)
				}
				for _, res := range rep.Results {
					if res.Verdict == "error" {
						t.Errorf("%s: error: %s", res.ID, res.Summary)
					}
					if res.Verdict == "fail" {
						t.Logf("%s: fail: %s", res.ID, res.Summary)
					}
					if res.ID == "rpc/tools-list-schema" && tt.mode == "tools-yes" && res.Verdict != "fail" {
						t.Errorf("%s: %s %s, want the fail naming inputSchema", res.ID, res.Verdict, res.Summary)
					}
				}
			})
		}
	}
}

// TestReferenceSchemaClean runs the whole catalogue against the built-in
// reference server over stdio (a child process) and over HTTP (in this
// process): not one message it sends may break the schema. (The
// in-process transport is runner's TestReferenceCatalogueSchemaClean.)
func TestReferenceSchemaClean(t *testing.T) {
	t.Parallel()
	// Over stdio a process serves each session: -short checks what a
	// few areas send (loopCases), and the full suite all of it.
	for name, args := range map[string][]string{"stdio": loopCases(), "http": {"--transport", "http"}} {
		t.Run(name, func(t *testing.T) {
			reportPath := filepath.Join(t.TempDir(), "report.json")
			r := runCLI(t, "", append([]string{"check", "--protocol", "2025-11-25", "--json", reportPath}, args...)...)
			if r.code != ExitConformant {
				t.Errorf("exit code %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			var rep struct {
				SchemaCheck struct {
					Checked  int
					Findings []struct{ ID, Message string }
				}
			}
			raw, err := os.ReadFile(reportPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.SchemaCheck.Findings {
				t.Errorf("%s: %s", f.ID, f.Message)
			}
			if rep.SchemaCheck.Checked < 100 {
				t.Errorf("only %d messages checked", rep.SchemaCheck.Checked)
			}
			t.Logf("%d messages checked", rep.SchemaCheck.Checked)
		})
	}
}
