package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// chromiumTimeout bounds one Chromium run; a safety net, not a
// synchronisation: the run ends when Chromium exits.
const chromiumTimeout = 90 * time.Second

// TestHTMLInChromium renders the HTML report of a real run (the in-process
// reference server with a fault, so that a case fails) and opens it in
// headless Chromium: once to dump the DOM after the page's script ran,
// once to take a screenshot. Without Chromium the test is skipped, unless
// CI is set, where .ci/run installs it. Set MCPFLIGHT_ARTIFACTS to a
// directory to keep the page and the screenshot.
func TestHTMLInChromium(t *testing.T) {
	browser := findChromium(t)
	rep := realReport(t)
	if rep.Counts[verdict.Fail] == 0 {
		t.Fatalf("the run has no fail: %v", rep.Counts)
	}

	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	start := time.Now()
	dom := runChromium(t, browser, dir, "--dump-dom", url)
	t.Logf("chromium --dump-dom: %d bytes of DOM in %v (page %d bytes, %d cases)", len(dom), time.Since(start).Round(time.Millisecond), buf.Len(), len(rep.Results))
	checks := []struct {
		what string
		re   *regexp.Regexp
	}{
		{"the script ran", regexp.MustCompile(`<html[^>]* data-js="ready"`)},
		{"the filter's count, written by the script", regexp.MustCompile(fmt.Sprintf(`id="shown">%d of %d cases shown<`, len(rep.Results), len(rep.Results)))},
		{"the matrix", regexp.MustCompile(`<table class="matrix" id="matrix">`)},
		{"a failing case in the matrix", regexp.MustCompile(`<a class="chip c-fail" href="#case-progress_strictly-increasing"`)},
		{"a sequence diagram", regexp.MustCompile(`<svg class="seq"[^>]*>`)},
		{"an arrow of the diagram", regexp.MustCompile(`<g class="row (in|out)[^"]*" data-seq="\d+">`)},
		{"the first wrong event", regexp.MustCompile(`<g class="row in wrong" data-seq="\d+">`)},
	}
	for _, c := range checks {
		if !c.re.MatchString(dom) {
			t.Errorf("the DOM lacks %s (%s)", c.what, c.re)
		}
	}
	if t.Failed() {
		t.Logf("DOM head:\n%s", dom[:min(len(dom), 3000)])
	}

	shot := filepath.Join(dir, "report.png")
	start = time.Now()
	runChromium(t, browser, dir, "--screenshot="+shot, "--window-size=1280,2000", url)
	fi, err := os.Stat(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot %s is not a PNG (%d bytes)", shot, fi.Size())
	}
	t.Logf("screenshot: %s (%d bytes, %v)", shot, fi.Size(), time.Since(start).Round(time.Millisecond))

	if keep := os.Getenv("MCPFLIGHT_ARTIFACTS"); keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"report.html": buf.Bytes(), "report.png": png} {
			if err := os.WriteFile(filepath.Join(keep, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("kept report.html and report.png in %s", keep)
	}
}

// findChromium returns the Chromium binary, or skips the test when there
// is none outside CI.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal("CI is set but chromium is not installed (.ci/run installs Debian's chromium package)")
	}
	t.Skip("chromium is not installed and CI is unset; install Debian's chromium package to run this test")
	return ""
}

// realReport runs the progress cases and one cancel case against the
// in-process reference server with the non-increasing-progress fault.
func realReport(t *testing.T) *results.Report {
	t.Helper()
	prof, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	selected, err := runner.Select(cases.All(), []string{"progress/*", "cancel/mid-work-no-response"})
	if err != nil {
		t.Fatal(err)
	}
	faults := refserver.FaultSet{refserver.FaultNonIncreasingProgress: true}
	rep, err := runner.Run(t.Context(), runner.Config{
		Target: runner.InProcessTarget("in-process reference server with fault non-increasing-progress",
			refserver.New(refserver.Options{Faults: faults}).ServePipes, transport.StreamConfig{}),
		Profile: prof,
		Cases:   selected,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// runChromium runs headless Chromium with a fresh profile directory and
// the given arguments, bounded by chromiumTimeout, in a process group of
// its own that is killed afterwards (Chromium's helpers included). It
// returns standard output.
func runChromium(t *testing.T, browser, dir string, args ...string) string {
	t.Helper()
	profileDir, err := os.MkdirTemp(dir, "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), chromiumTimeout)
	defer cancel()
	argv := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profileDir,
	}, args...)
	cmd := exec.CommandContext(ctx, browser, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A helper that keeps the output pipes open must not hold Wait.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.Process != nil {
		// Whatever Chromium left behind in its group goes too.
		if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			t.Logf("killing chromium's process group: %v", kerr)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium did not finish within %v: %v\nstderr:\n%s", chromiumTimeout, err, tail(stderr.String(), 2000))
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
