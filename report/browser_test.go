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
	"slices"
	"strconv"
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

// probeScript is appended to the page the browser test opens, after the
// page's own script: it measures what a reader sees once the page has
// set itself up, and writes it on the root element for --dump-dom.
//
//	data-probe-skips-shown   skip chips and skipped cases rendered
//	data-probe-fails-shown   fail chips and failing cases rendered
//	data-probe-first-fail    top of the first failing case, and the
//	                         height of the window
//	data-probe-wrong-rows    for every open case whose diagram draws a
//	                         first wrong event: its id, "in" or "out" of
//	                         the diagram's box (below the lane heads),
//	                         the row's depth in the diagram and the box's
//	                         height
const probeScript = `<script>
(function () {
  "use strict";
  var d = document.documentElement;
  function rendered(sel) {
    return Array.prototype.filter.call(document.querySelectorAll(sel), function (el) { return el.checkVisibility(); }).length;
  }
  d.setAttribute("data-probe-skips-shown", rendered("#matrix a.chip.c-skip") + "," + rendered('details.case[data-verdict="skip"]'));
  d.setAttribute("data-probe-fails-shown", rendered("#matrix a.chip.c-fail") + "," + rendered('details.case[data-verdict="fail"]'));
  var first = document.querySelector('details.case[data-verdict="fail"]');
  d.setAttribute("data-probe-first-fail", (first ? Math.round(first.getBoundingClientRect().top) : -1) + "," + window.innerHeight);
  var rows = [];
  Array.prototype.forEach.call(document.querySelectorAll("details.case[open] .seqscroll"), function (box) {
    var row = box.querySelector("g.wrong");
    if (!row) { return; }
    var b = box.getBoundingClientRect(), r = row.getBoundingClientRect(), h = box.querySelector(".seqhead").getBoundingClientRect();
    var inside = r.top >= h.bottom && r.bottom <= b.bottom;
    rows.push(box.closest("details.case").id + ":" + (inside ? "in" : "out") + ":" + Math.round(r.top - b.top + box.scrollTop) + ":" + box.clientHeight);
  });
  d.setAttribute("data-probe-wrong-rows", rows.join(" "));
})();
</script>
`

// filterProbe is appended to the page, after its own script, to type in
// the filter as a reader would and write what each filter shows:
// data-probe-filter-TERM is the number of cases rendered, of skips
// rendered, and the page's count of cases shown.
const filterProbe = `<script>
(function () {
  "use strict";
  var d = document.documentElement, input = document.getElementById("filter");
  function rendered(sel) {
    return Array.prototype.filter.call(document.querySelectorAll(sel), function (el) { return el.checkVisibility(); }).length;
  }
  ["http/", "fail", ""].forEach(function (term) {
    input.value = term;
    input.dispatchEvent(new Event("input"));
    d.setAttribute("data-probe-filter-" + (term.replace(/[^a-z]/g, "") || "none"),
      rendered("details.case") + "," + rendered('details.case[data-verdict="skip"]') + "," + rendered("#matrix a.chip.c-skip") + "," + document.getElementById("shown").textContent);
  });
})();
</script>
`

// probed reads a data-probe- attribute of the dumped DOM's root element.
func probed(t *testing.T, dom, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<html[^>]* data-probe-` + name + `="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not write data-probe-%s", name)
	}
	return m[1]
}

// TestHTMLInChromium renders the HTML report of a real run (the in-process
// reference server with a fault, so that cases fail, and cases for
// another transport, which skip) and opens it in headless Chromium: once
// to dump the DOM after the page's script ran, with a probe (probeScript)
// measuring what a reader sees, once to take a screenshot. Without
// Chromium the test is skipped, unless CI is set, where .ci/run installs
// it. Set MCPFLIGHT_ARTIFACTS to a directory to keep the page and the
// screenshot.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: rendering in headless Chromium is the full suite's; TestHTMLGolden and TestHTMLContent check the page here")
	}
	browser := findChromium(t)
	rep := realReport(t)
	if rep.Counts[verdict.Fail] == 0 || rep.Counts[verdict.Skip] == 0 {
		t.Fatalf("the run needs a fail and a skip: %v", rep.Counts)
	}
	// In the run's order a skip comes before the first fail, so that
	// listing the cases as run would put it first.
	firstSkip := slices.IndexFunc(rep.Results, func(r results.Result) bool { return r.Outcome.Verdict == verdict.Skip })
	firstFail := slices.IndexFunc(rep.Results, func(r results.Result) bool { return r.Outcome.Verdict == verdict.Fail })
	if firstSkip > firstFail {
		t.Fatalf("the run's first skip (#%d) comes after its first fail (#%d): the order proves nothing", firstSkip, firstFail)
	}

	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	probedPage := strings.Replace(buf.String(), "</body>", probeScript+"</body>", 1)
	if err := os.WriteFile(page, []byte(probedPage), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page
	const window = "--window-size=1280,2000"

	start := time.Now()
	dom := runChromium(t, browser, dir, "--dump-dom", window, url)
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
		{"the first wrong event", regexp.MustCompile(`<g class="row in wrong" data-seq="\d+" id="case-[^"]+-wrong">`)},
	}
	for _, c := range checks {
		if !c.re.MatchString(dom) {
			t.Errorf("the DOM lacks %s (%s)", c.what, c.re)
		}
	}

	// Findings first, in the DOM: the first fail before the first skip,
	// in the matrix and in the list of cases.
	for _, where := range []struct{ what, fail, skip string }{
		{"matrix", `<a class="chip c-fail"`, `<a class="chip c-skip"`},
		{"list of cases", `<details class="case" id="case-progress_`, `data-verdict="skip"`},
	} {
		f, s := strings.Index(dom, where.fail), strings.Index(dom, where.skip)
		if f < 0 || s < 0 || f > s {
			t.Errorf("%s: the first fail is at %d, the first skip at %d: want the fail first", where.what, f, s)
		}
	}
	if m := regexp.MustCompile(`<details class="case"[^>]*data-verdict="([a-z]+)"`).FindStringSubmatch(dom); m == nil || m[1] != "fail" {
		t.Errorf("the first case listed is %v, want a fail", m)
	}
	// The skips are folded away, the fails shown, the first near the top.
	if got := probed(t, dom, "skips-shown"); got != "0,0" {
		t.Errorf("%s skip chips and skipped cases rendered, want 0,0", got)
	}
	var fails [2]int
	if _, err := fmt.Sscanf(probed(t, dom, "fails-shown"), "%d,%d", &fails[0], &fails[1]); err != nil || fails[0] != rep.Counts[verdict.Fail] || fails[1] != rep.Counts[verdict.Fail] {
		t.Errorf("fail chips and failing cases rendered %v, want %d of each", fails, rep.Counts[verdict.Fail])
	}
	var top, height int
	if _, err := fmt.Sscanf(probed(t, dom, "first-fail"), "%d,%d", &top, &height); err != nil || top < 0 || top >= height {
		t.Errorf("the first failing case is at %d px in a window %d px high: want it in the first screen", top, height)
	}
	// Every open diagram shows its first wrong event in its box, one of
	// them after scrolling to it.
	rows := strings.Fields(probed(t, dom, "wrong-rows"))
	scrolled := 0
	for _, r := range rows {
		var id, where string
		var depth, box int
		parts := strings.Split(r, ":")
		if len(parts) != 4 {
			t.Fatalf("probe row %q", r)
		}
		id, where = parts[0], parts[1]
		depth, _ = strconv.Atoi(parts[2])
		box, _ = strconv.Atoi(parts[3])
		if where != "in" {
			t.Errorf("%s: the first wrong event, %d px down its diagram, is out of its %d px box", id, depth, box)
		}
		if depth > box {
			scrolled++
		}
	}
	if len(rows) < 2 || scrolled == 0 {
		t.Errorf("%d open diagrams with a first wrong event, %d of them deeper than their box: the run proves nothing (%v)", len(rows), scrolled, rows)
	}
	t.Logf("first wrong events (case:in view:depth px:box px): %v", rows)
	if t.Failed() {
		t.Logf("DOM head:\n%s", dom[:min(len(dom), 3000)])
	}

	// The filter still finds the skips, folded away or not, and folds
	// them again when emptied.
	filtered := filepath.Join(dir, "filtered.html")
	if err := os.WriteFile(filtered, []byte(strings.Replace(buf.String(), "</body>", filterProbe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fdom := runChromium(t, browser, dir, "--dump-dom", window, "file://"+filtered)
	n, nFail := len(rep.Results), rep.Counts[verdict.Fail]
	nHTTP := 0 // every one a skip, over this transport
	for _, res := range rep.Results {
		if res.Area == "http" && res.Outcome.Verdict == verdict.Skip {
			nHTTP++
		}
	}
	for term, want := range map[string]string{
		"http": fmt.Sprintf("%d,%d,%d,%d of %d cases shown", nHTTP, nHTTP, nHTTP, nHTTP, n),
		"fail": fmt.Sprintf("%d,0,0,%d of %d cases shown", nFail, nFail, n),
		"none": fmt.Sprintf("%d,0,0,%d of %d cases shown", n-rep.Counts[verdict.Skip], n, n),
	} {
		if got := probed(t, fdom, "filter-"+term); got != want {
			t.Errorf("filter %q: %q cases, skips, skip chips rendered and count shown; want %q", term, got, want)
		}
	}

	shot := filepath.Join(dir, "report.png")
	start = time.Now()
	runChromium(t, browser, dir, "--screenshot="+shot, window, url)
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

// realReport runs the progress cases, one cancel case, the stdio cases
// and the HTTP ones (which skip over this transport) against the
// in-process reference server with the non-increasing-progress fault.
func realReport(t *testing.T) *results.Report {
	t.Helper()
	prof, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	selected, err := runner.Select(cases.All(), []string{"stdio/*", "http/*", "progress/*", "cancel/mid-work-no-response"})
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
