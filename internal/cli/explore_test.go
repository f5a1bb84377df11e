package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/explore"
	"github.com/mcpflight/mcpflight/internal/targets"
)

// TestExploreConforming: a short exploration of the built-in server, in
// process and as stdio children, finds nothing and says what it did; its
// liveness operation is counted as ping.
func TestExploreConforming(t *testing.T) {
	t.Parallel()
	exploreConforming(t, `\bping \d+`, `\bdiscover \d+`, [][]string{
		{"explore", "--ops", "300", "--seed", "11"},
		{"explore", "--transport", "stdio", "--sessions", "2", "--ops", "100", "--seed", "11"},
	}, "seed 11", "control extension: yes", "no violation of")
}

// exploreConforming runs each command line, which must find nothing and
// report every want, and whose operation counts must match liveness (the
// name the revision gives the liveness operation, and its count) and not
// other (the other revision's name).
func exploreConforming(t *testing.T, liveness, other string, lines [][]string, wants ...string) {
	t.Helper()
	counted, wrong := regexp.MustCompile(`operations: .*`+liveness), regexp.MustCompile(other)
	for _, args := range lines {
		r := runCLI(t, "", args...)
		if r.code != ExitConformant {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
		for _, want := range wants {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: the report lacks %q:\n%s", args, want, r.stdout)
			}
		}
		if !counted.MatchString(r.stdout) || wrong.MatchString(r.stdout) {
			t.Errorf("%v: the operation counts should match %s, not %s:\n%s", args, liveness, other, r.stdout)
		}
	}
}

// TestExploreFindShrinkReplay: against a faulty built-in server explore
// exits 1 with the violation, its requirement and the minimal chronology
// as a sequence diagram with the violating event marked, and writes a
// replay file and chronology; --replay of that file reproduces it, and
// show renders the chronology.
func TestExploreFindShrinkReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	replay, rp := exploreFinds(t, dir, nil, "VIOLATION cancel-no-response: CAN-8 (SHOULD)", "replay file:")
	if rp.Violation == nil || rp.Violation.Invariant != explore.InvCancelNoResponse || !rp.Target.BuiltIn {
		t.Fatalf("replay file: %+v", rp)
	}
	// The file names its target: no flags needed to run it again.
	again := runCLI(t, "", "explore", "--replay", replay)
	if again.code != ExitNonConformant || !strings.Contains(again.stdout, "reproduced: the recorded violation happened again") {
		t.Errorf("--replay: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	// Against the conforming server the same plan shows nothing.
	fixed := runCLI(t, "", "explore", "--replay", replay, "--transport", "inprocess")
	if fixed.code != ExitConformant || !strings.Contains(fixed.stdout, "not reproduced: no violation") {
		t.Errorf("--replay against the conforming server: exit %d\n%s\n%s", fixed.code, fixed.stdout, fixed.stderr)
	}
	shown := runCLI(t, "", "show", filepath.Join(dir, "explore-5.jsonl"), "--mark", "11")
	if shown.code != 0 || !strings.Contains(shown.stdout, "s1 stdout") {
		t.Errorf("show: exit %d\n%s\n%s", shown.code, shown.stdout, shown.stderr)
	}
}

func TestExploreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "--sessions", "0"}, "--sessions must be 1.."},
		{[]string{"explore", "--transport", "carrier-pigeon"}, "--transport must be inprocess, http or stdio"},
		{[]string{"explore", "--stdio", "x", "--target-fault", "ping-broken"}, "--target-fault applies to the built-in server only"},
		{[]string{"explore", "--target-fault", "no-such-fault"}, "unknown fault"},
		{[]string{"explore", "--seed", "minus-one"}, "--seed"},
		{[]string{"explore", "--header", "X-A: b"}, "HTTP targets only"},
	} {
		r := runCLI(t, "", tc.args...)
		if r.code != ExitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"something-else/v9","sessions":1,"steps":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "explore", "--replay", bad); r.code != ExitError || !strings.Contains(r.stderr, "not a replay file") {
		t.Errorf("--replay of a foreign file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestExplore2026: explore --protocol 2026-07-28 opens 2026-07-28 sessions
// (server/discover, the envelope on every request) and finds nothing in
// the conforming built-in server, in process and over stdio; against
// respond-after-cancel it finds the MUST NOT of stdio (CAN-54), writes a
// replay file that carries the revision, and --replay of it reproduces
// the violation without flags, and refuses another revision.
func TestExplore2026(t *testing.T) {
	t.Parallel()
	// The liveness operation is server/discover under 2026-07-28, and
	// the counts say so.
	exploreConforming(t, `\bdiscover \d+`, `\bping \d+`, [][]string{
		{"explore", "--protocol", "2026-07-28", "--ops", "300", "--seed", "11"},
		{"explore", "--revision", "2026-07-28", "--transport", "stdio", "--sessions", "2", "--ops", "100", "--seed", "11"},
		{"explore", "--protocol", "2026-07-28", "--transport", "http", "--ops", "200", "--seed", "11"},
	}, "revision 2026-07-28, seed 11", "control extension: yes; tasks: no", "no violation of")
	replay, rp := exploreFinds(t, t.TempDir(), []string{"--protocol", "2026-07-28"}, "VIOLATION cancel-no-response: CAN-54 (MUST NOT)", "request server/discover")
	if rp.Revision != explore.Revision20260728 || rp.Violation == nil || rp.Violation.Requirement != "CAN-54" {
		t.Fatalf("replay file: revision %s, violation %+v", rp.Revision, rp.Violation)
	}
	again := runCLI(t, "", "explore", "--replay", replay)
	if again.code != ExitNonConformant || !strings.Contains(again.stdout, "revision 2026-07-28") ||
		!strings.Contains(again.stdout, "reproduced: the recorded violation happened again") {
		t.Errorf("--replay: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	other := runCLI(t, "", "explore", "--replay", replay, "--protocol", "2025-11-25")
	if other.code != ExitError || !strings.Contains(other.stderr, "was found under 2026-07-28") {
		t.Errorf("--replay under another revision: exit %d, stderr %q", other.code, other.stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "--protocol", "auto"}, "not auto or both"},
		{[]string{"explore", "--protocol", "2026-07-28", "--revision", "2025-11-25"}, "disagree"},
	} {
		r := runCLI(t, "", tc.args...)
		if r.code != ExitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// exploreFinds runs explore against the built-in server with
// respond-after-cancel (seed 5, 400 operations, the flags extra added),
// requires exit 1 and a report holding the shrunk plan, the marked first
// wrong event and each of want, and returns the replay file written into
// dir and what it holds.
func exploreFinds(t *testing.T, dir string, extra []string, want ...string) (string, *explore.Replay) {
	t.Helper()
	args := append([]string{"explore"}, extra...)
	args = append(args, "--target-fault", "respond-after-cancel", "--ops", "400", "--seed", "5", "--out", dir)
	r := runCLI(t, "", args...)
	if r.code != ExitNonConformant {
		t.Fatalf("%v: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	for _, w := range append([]string{"the minimal plan reproduces it", "✗ first wrong event"}, want...) {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("%v: the report lacks %q:\n%s", args, w, r.stdout)
		}
	}
	replay := filepath.Join(dir, "explore-5.replay.json")
	f, err := os.Open(replay)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rp, err := explore.ReadReplay(f)
	if err != nil {
		t.Fatal(err)
	}
	return replay, rp
}

// TestExploreGoSDKAnswersCancel: a go-sdk server whose slow tool sends no
// progress and answers its cancel at once ("context canceled") makes
// explore --protocol 2026-07-28 exit 1 on CAN-54; the replay file carries
// the profile's slow tool and observer, and --replay of it, with no
// profile given, finds the violation again.
func TestExploreGoSDKAnswersCancel(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a go-sdk server")
	}
	bin := targets.GoBinary(t, "gosdkserver")
	prof := filepath.Join(targets.GoModule("gosdkserver"), "profile.yaml")
	dir := t.TempDir()
	args := []string{"explore", "--stdio", bin + " stdio -no-progress", "--profile", prof, "--protocol", "2026-07-28",
		"--ops", "200", "--seed", "4", "--no-shrink", "--out", dir}
	r := runCLI(t, "", args...)
	if r.code != ExitNonConformant || !strings.Contains(r.stdout, "VIOLATION cancel-no-response: CAN-54 (MUST NOT)") {
		t.Fatalf("%v: exit %d, want 1 and CAN-54\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.replay.json"))
	if len(files) != 1 {
		t.Fatalf("replay files in %s: %v", dir, files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rp, err := explore.ReadReplay(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rp.Slow == nil || rp.Slow.Name != "slow" || rp.Observer == nil || rp.Observer.Tool != "observe" {
		t.Fatalf("the replay file does not carry the profile's slow tool and observer: slow %+v, observer %+v", rp.Slow, rp.Observer)
	}
	again := runCLI(t, "", "explore", "--replay", files[0], "--stdio", bin+" stdio -no-progress")
	if again.code != ExitNonConformant || !strings.Contains(again.stdout, "reproduced: the recorded violation happened again") {
		t.Errorf("--replay: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
}
