package ciaction

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// script is the action's logic, from this package's directory.
const script = "../../.github/action/run.sh"

// TestMain builds the command once for the package's tests, as the
// action's install step does.
func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

// built is the command TestMain built, or why it could not.
var built struct {
	bin string
	err error
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpflight-action-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	built.bin = filepath.Join(dir, "mcpflight")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", built.bin, "github.com/mcpflight/mcpflight/cmd/mcpflight")
	if out, err := build.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("go build: %v\n%s", err, out)
	}
	return m.Run()
}

// buildMcpflight returns the command TestMain built.
func buildMcpflight(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the action's script needs bash")
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// runAction runs the script with the inputs in env, in a fresh working
// directory, and returns its exit code, its output and what it wrote to
// GITHUB_OUTPUT.
func runAction(t *testing.T, bin string, env map[string]string) (code int, out, outputs string, dir string) {
	t.Helper()
	dir = t.TempDir()
	ghOut := filepath.Join(dir, "github-output")
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", abs)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCPFLIGHT="+bin, "GITHUB_OUTPUT="+ghOut, "NO_COLOR=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	code = 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running the script: %v", err)
	}
	o, _ := os.ReadFile(ghOut)
	return code, buf.String(), string(o), dir
}

// checkReports fails the test unless both reports exist, are not empty,
// and are what they claim to be.
func checkReports(t *testing.T, html, junit string, wantFailures bool) {
	t.Helper()
	page, err := os.ReadFile(html)
	if err != nil || len(page) == 0 {
		t.Fatalf("HTML report %s missing or empty (%v)", html, err)
	}
	if !bytes.Contains(page, []byte("<html")) || !bytes.Contains(page, []byte("ping/empty-result")) {
		t.Errorf("the HTML report is not a report of the run: %.200s", page)
	}
	x, err := os.ReadFile(junit)
	if err != nil || len(x) == 0 {
		t.Fatalf("JUnit report %s missing or empty (%v)", junit, err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(x, &suites); err != nil {
		t.Fatalf("the JUnit report is not XML: %v", err)
	}
	if suites.Tests == 0 || (suites.Failures > 0) != wantFailures {
		t.Errorf("JUnit report: %d tests, %d failures; want failures %v", suites.Tests, suites.Failures, wantFailures)
	}
}

func TestActionAgainstReferenceServer(t *testing.T) {
	bin := buildMcpflight(t)
	t.Run("conformant", func(t *testing.T) {
		inputs := map[string]string{
			"INPUT_COMMAND": bin + " serve --stdio",
			"INPUT_PROFILE": "reference",
			"INPUT_STRICT":  "true",
			"INPUT_HTML":    "reports/mcpflight.html",
			"INPUT_JUNIT":   "reports/junit.xml",
		}
		if testing.Short() {
			// Three areas, not a process per session of the whole
			// catalogue: the script's handling is the same; the full
			// suite runs every case.
			inputs["INPUT_ARGS"] = "--case ping/* --case cancel/* --case progress/*"
		}
		code, out, outputs, dir := runAction(t, bin, inputs)
		if code != 0 {
			t.Fatalf("exit code %d, want 0:\n%s", code, out)
		}
		checkReports(t, filepath.Join(dir, "reports/mcpflight.html"), filepath.Join(dir, "reports/junit.xml"), false)
		checkOutputs(t, outputs, 0)
	})
	t.Run("a broken server fails the step and still leaves both reports", func(t *testing.T) {
		code, out, outputs, dir := runAction(t, bin, map[string]string{
			"INPUT_COMMAND":  bin + " serve --stdio --fault ping-broken",
			"INPUT_PROFILE":  "reference",
			"INPUT_REVISION": "2025-11-25", // ping is 2025-11-25's (2026-07-28 removed it)
			"INPUT_ARGS":     "--case ping/*",
		})
		if code != 1 {
			t.Fatalf("exit code %d, want 1:\n%s", code, out)
		}
		checkReports(t, filepath.Join(dir, "mcpflight-report.html"), filepath.Join(dir, "mcpflight-junit.xml"), true)
		checkOutputs(t, outputs, 1)
	})
	t.Run("a check that mostly did not run fails the step with exit 3 and leaves both reports", func(t *testing.T) {
		// No profile: the cases that need the server's tools are skipped,
		// and fewer than half of the applicable ones run (incomplete).
		code, out, outputs, dir := runAction(t, bin, map[string]string{
			"INPUT_COMMAND":  bin + " serve --stdio",
			"INPUT_REVISION": "2025-11-25",
		})
		if code != 3 {
			t.Fatalf("exit code %d, want 3 (incomplete):\n%s", code, out)
		}
		checkReports(t, filepath.Join(dir, "mcpflight-report.html"), filepath.Join(dir, "mcpflight-junit.xml"), false)
		checkOutputs(t, outputs, 3)
	})
}

func TestActionRefusesBadInputs(t *testing.T) {
	bin := buildMcpflight(t)
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no target", map[string]string{}, "give the input command"},
		{"two targets", map[string]string{"INPUT_COMMAND": "x", "INPUT_URL": "http://127.0.0.1:1/mcp"}, "not both"},
		{"serve without url", map[string]string{"INPUT_COMMAND": bin + " serve --stdio", "INPUT_SERVE": bin + " serve --http 127.0.0.1:1"}, "give url too"},
		{"strict not a boolean", map[string]string{"INPUT_COMMAND": bin + " serve --stdio", "INPUT_STRICT": "yes"}, "strict must be true or false"},
		// check refuses the profile before it writes anything: the script
		// names the reports that are missing.
		{"no report written", map[string]string{"INPUT_COMMAND": bin + " serve --stdio", "INPUT_PROFILE": "no-such-profile"}, "without writing mcpflight-report.html mcpflight-junit.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, outputs, _ := runAction(t, bin, tt.env)
			if code != 2 || !strings.Contains(out, tt.want) {
				t.Errorf("exit code %d, output %q; want 2 and %q", code, out, tt.want)
			}
			if strings.Contains(outputs, "reports=true") {
				t.Errorf("GITHUB_OUTPUT says reports=true: %q", outputs)
			}
		})
	}
}

// checkOutputs requires the step's GITHUB_OUTPUT to give its exit code
// and say that the reports were written.
func checkOutputs(t *testing.T, outputs string, code int) {
	t.Helper()
	if want := fmt.Sprintf("exit-code=%d\n", code); !strings.Contains(outputs, want) || !strings.Contains(outputs, "reports=true\n") {
		t.Errorf("GITHUB_OUTPUT %q lacks %q and reports=true", outputs, strings.TrimSpace(want))
	}
}
