//go:build unix

package runner

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// BenchmarkCatalogue2026Stdio runs the catalogue under 2026-07-28
// against the reference server over stdio, a `mcpflight serve
// --stdio` child process per case, at the default --jobs; ns/op is the
// wall time of one run (the goal: under a second). The cases of
// 2025-11-25 only are skipped and cost nothing.
//
//	go test -run '^$' -bench Catalogue2026Stdio -benchtime 5x ./runner
func BenchmarkCatalogue2026Stdio(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "mcpflight")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/mcpflight/mcpflight/cmd/mcpflight")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building mcpflight: %v\n%s", err, out)
	}
	p, err := profile.Builtin(profile.Reference)
	if err != nil {
		b.Fatal(err)
	}
	target := StdioTarget("reference", transport.StdioConfig{Argv: []string{bin, "serve", "--stdio"}})
	cfg := Config{Target: target, Profile: p, Cases: cases.All(), Version: spec.V20260728,
		Jobs: DefaultJobs(TransportStdio), Starts: DefaultStarts(TransportStdio)}
	ran := 0
	for b.Loop() {
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if code := rep.ExitCode(); code != 0 {
			for _, r := range rep.Results {
				b.Logf("%s: %s: %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
			}
			b.Fatalf("exit code %d against the reference server", code)
		}
		ran = len(rep.Results) - rep.Counts[verdict.Skip]
	}
	b.ReportMetric(float64(ran), "cases-run/op")
}
