package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Link-time overrides of what "mcpflight version" prints, for builds made
// outside the module proxy and outside a git checkout (a release script,
// a distribution package):
//
//	go build -ldflags "-X github.com/mcpflight/mcpflight/internal/cli.linkVersion=v0.1.0 \
//	  -X github.com/mcpflight/mcpflight/internal/cli.linkCommit=$(git rev-parse HEAD)" ./cmd/mcpflight
//
// They are set by the linker only and never written at run time.
var (
	linkVersion string
	linkCommit  string
)

// BuildInfo is what a binary knows about its own build.
type BuildInfo struct {
	// Version is the module version (v0.1.0 for "go install …@v0.1.0"),
	// the -ldflags override, or "dev" for a build from a checkout.
	Version string
	// Commit is the VCS revision the binary was built from, "" when
	// unknown (a "go test" binary, a build with -buildvcs=false).
	Commit string
	// Time is the commit's time as the VCS reported it, "" when unknown.
	Time string
	// Modified is set when the work tree had changes at build time.
	Modified bool
}

// String is the line "mcpflight version" prints after "mcpflight ".
func (b BuildInfo) String() string {
	if b.Commit == "" {
		return b.Version
	}
	commit := b.Commit
	if b.Modified {
		commit += "+dirty"
	}
	if b.Time != "" {
		return fmt.Sprintf("%s (commit %s, %s)", b.Version, commit, b.Time)
	}
	return fmt.Sprintf("%s (commit %s)", b.Version, commit)
}

// readBuildInfo combines the linker's overrides with the build
// information the Go toolchain embeds (the module version, and the
// vcs.revision, vcs.time and vcs.modified settings of a build inside a
// git checkout). An override wins over what the toolchain recorded.
func readBuildInfo() BuildInfo {
	b := BuildInfo{Version: "dev"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if linkVersion != "" {
		b.Version = linkVersion
	}
	if linkCommit != "" {
		b.Commit, b.Time, b.Modified = strings.TrimSpace(linkCommit), "", false
	}
	return b
}

// version is the version string: Env.Version when set (tests), else the
// build's.
func (e Env) version() string {
	if e.Version != "" {
		return e.Version
	}
	return readBuildInfo().Version
}

// printVersion is "mcpflight version": the version, and the commit when
// the build knows it.
func (e Env) printVersion(rest []string) (int, error) {
	if len(rest) > 0 {
		return 0, usagef(mainUsage, "version takes no arguments")
	}
	line := readBuildInfo().String()
	if e.Version != "" {
		line = e.Version
	}
	fmt.Fprintf(e.Stdout, "mcpflight %s\n", line)
	return 0, nil
}
