package explore

import (
	"context"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchExplore runs explorations of the conforming reference server
// (whose server, in process or over HTTP, runs in this process too) and
// reports operations per second of wall time, the process's CPU time per
// operation, and events per operation, with the garbage collector set as
// `mcpflight explore` sets it (GCPercent). Every run must find nothing.
func benchExplore(b *testing.B, transportName string, ops, workers int) {
	benchExploreRevision(b, transportName, Revision20251125, ops, workers)
}

// benchExploreRevision is benchExplore under a protocol revision.
func benchExploreRevision(b *testing.B, transportName, revision string, ops, workers int) {
	tg := target(b, transportName)
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	var done, events int
	var wall time.Duration
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		res, err := Run(context.Background(), Config{Target: tg, Revision: revision, Seed: uint64(i + 1), Ops: ops, Workers: workers, OpTimeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if res.Found != nil {
			b.Fatalf("violation: %+v", res.Found.Violation)
		}
		done += res.Ops
		events += res.Events
		wall += res.Elapsed
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(done)/wall.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(done), "cpu-µs/op")
	b.ReportMetric(float64(events)/float64(done), "events/op")
}

func BenchmarkExploreInProcess(b *testing.B) {
	benchExplore(b, TransportInProcess, 8000, runtime.GOMAXPROCS(0))
}

// BenchmarkExplore2026InProcess explores 2026-07-28 sessions (the
// envelope on every request, server/discover for liveness, no tasks).
func BenchmarkExplore2026InProcess(b *testing.B) {
	benchExploreRevision(b, TransportInProcess, Revision20260728, 8000, runtime.GOMAXPROCS(0))
}

// BenchmarkExplore2026Stdio is BenchmarkExplore2026InProcess over stdio.
func BenchmarkExplore2026Stdio(b *testing.B) {
	benchExploreRevision(b, TransportStdio, Revision20260728, 1000, runtime.GOMAXPROCS(0))
}

// BenchmarkExplore2026HTTP is BenchmarkExplore2026InProcess over
// Streamable HTTP, where a cancel closes the request's stream.
func BenchmarkExplore2026HTTP(b *testing.B) {
	benchExploreRevision(b, TransportHTTP, Revision20260728, 2000, runtime.GOMAXPROCS(0))
}

func BenchmarkExploreHTTP(b *testing.B) { benchExplore(b, TransportHTTP, 2000, runtime.GOMAXPROCS(0)) }

func BenchmarkExploreStdio(b *testing.B) {
	benchExplore(b, TransportStdio, 1000, runtime.GOMAXPROCS(0))
}

// BenchmarkCheck is the checker's cost per event of a recorded trial.
func BenchmarkCheck(b *testing.B) { benchCheck(b, TransportInProcess, Revision20251125) }

// BenchmarkCheckHTTP is BenchmarkCheck over Streamable HTTP, where the
// stream rules judge every head, SSE event and stream end.
func BenchmarkCheckHTTP(b *testing.B) { benchCheck(b, TransportHTTP, Revision20251125) }

// BenchmarkCheck2026HTTP is BenchmarkCheckHTTP under 2026-07-28.
func BenchmarkCheck2026HTTP(b *testing.B) { benchCheck(b, TransportHTTP, Revision20260728) }

// benchCheck records one trial of 400 operations in 4 sessions and
// reports the checker's cost per event of it.
func benchCheck(b *testing.B, transportName, revision string) {
	tg := target(b, transportName)
	f, err := Probe(context.Background(), tg, false)
	if err != nil {
		b.Fatal(err)
	}
	plan := PlanFor(1, 0, GenOptions{Features: f, Revision: revision, Mix: DefaultMix(), Sessions: 4, Ops: 400})
	_, h, err := runOnce(context.Background(), Config{Target: tg, Revision: revision, OpTimeout: 30 * time.Second}, f, plan)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if vs, _ := Check(h, revision); len(vs) != 0 {
			b.Fatal(vs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(h.Events)), "ns/event")
}
