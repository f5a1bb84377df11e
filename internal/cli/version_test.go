package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionFromLdflags builds mcpflight with the -ldflags -X overrides
// a release script would use and runs "mcpflight version".
func TestVersionFromLdflags(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "mcpflight")
	const pkg = "github.com/mcpflight/mcpflight/internal/cli"
	ldflags := "-X " + pkg + ".linkVersion=v9.8.7-rc.1 -X " + pkg + ".linkCommit=0123456789abcdef0123456789abcdef01234567"
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-ldflags", ldflags, "-o", bin, "github.com/mcpflight/mcpflight/cmd/mcpflight")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("mcpflight version: %v", err)
	}
	const want = "mcpflight v9.8.7-rc.1 (commit 0123456789abcdef0123456789abcdef01234567)\n"
	if string(out) != want {
		t.Errorf("mcpflight version printed %q, want %q", out, want)
	}
}

// TestVersionFromVCS builds mcpflight inside this checkout with VCS
// stamping on (-buildvcs=true: this machine's GOFLAGS turns it off) and
// checks that "mcpflight version" names a version and the checkout's HEAD.
func TestVersionFromVCS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout (git rev-parse HEAD: %v): a build has no VCS information to stamp", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse --show-toplevel: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("a linked git worktree (.git is a file): the Go toolchain stamps no VCS information there; a clone, as in CI, runs this test")
	}
	bin := filepath.Join(t.TempDir(), "mcpflight")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-buildvcs=true", "-o", bin, "github.com/mcpflight/mcpflight/cmd/mcpflight")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("mcpflight version: %v", err)
	}
	// Since Go 1.24 the toolchain also derives a pseudo-version
	// (v0.0.0-DATE-COMMIT, +dirty for a changed tree) from the checkout.
	line := string(out)
	want := "(commit " + strings.TrimSpace(string(head))
	if !strings.HasPrefix(line, "mcpflight v") || !strings.Contains(line, want) || !strings.HasSuffix(line, ")\n") {
		t.Errorf("mcpflight version printed %q, want mcpflight vVERSION %s…, TIME)", line, want)
	}
}

func TestBuildInfoString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   BuildInfo
		want string
	}{
		{BuildInfo{Version: "dev"}, "dev"},
		{BuildInfo{Version: "v0.1.0", Commit: "abc"}, "v0.1.0 (commit abc)"},
		{BuildInfo{Version: "dev", Commit: "abc", Time: "2026-09-01T10:00:00Z", Modified: true}, "dev (commit abc+dirty, 2026-09-01T10:00:00Z)"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}
