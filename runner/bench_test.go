package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/profile"
)

// BenchmarkCatalogue runs the whole catalogue against the in-process
// reference server, one case at a time and at DefaultJobs; ns/op is the
// time of one full run.
func BenchmarkCatalogue(b *testing.B) {
	p, err := profile.Builtin(profile.Reference)
	if err != nil {
		b.Fatal(err)
	}
	for _, jobs := range []int{1, DefaultJobs(TransportInProcess)} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			cfg := Config{Target: reference(), Profile: p, Cases: cases.All(), Jobs: jobs}
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
		})
	}
}
