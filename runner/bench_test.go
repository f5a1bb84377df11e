package runner

import (
	"context"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/profile"
)

// BenchmarkCatalogue runs the whole catalogue against the in-process
// reference server; ns/op is the time of one full run.
func BenchmarkCatalogue(b *testing.B) {
	p, err := profile.Builtin(profile.Reference)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Target: reference(), Profile: p, Cases: cases.All()}
	b.ReportAllocs()
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
	}
	b.ReportMetric(float64(len(cfg.Cases)), "cases/op")
}
