package cases_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
)

// killers lists, for every reference-server fault, the cases that must
// detect it (verdict fail or warn). A case may detect more faults than
// listed; it may never end in error under a fault.
var killers = map[refserver.Fault][]string{
	refserver.FaultRespondAfterCancel:     {"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes"},
	refserver.FaultProgressAfterCancel:    {"cancel/mid-work-no-progress", "cancel/before-first-progress"},
	refserver.FaultProgressAfterResponse:  {"progress/none-after-response"},
	refserver.FaultNonIncreasingProgress:  {"progress/strictly-increasing", "progress/fractional-total"},
	refserver.FaultWrongToken:             {"progress/token-echo-string", "progress/token-echo-integer", "progress/token-zero", "progress/interleaved-tokens", "progress/token-independent-of-id"},
	refserver.FaultProgressWithoutToken:   {"progress/none-without-token"},
	refserver.FaultErrorOnNotification:    {"rpc/no-response-to-notifications", "cancel/after-completion", "cancel/unknown-id-ignored", "cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params", "cancel/extra-fields", "cancel/crossing-response"},
	refserver.FaultCrashOnMalformedCancel: {"cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params"},
	refserver.FaultCancelUnknownHitsOther: {"cancel/unknown-id-ignored"},
	refserver.FaultLeakOnCancel:           {"cancel/cleanup-exactly-once", "cancel/duplicate"},
	refserver.FaultDoubleCleanup:          {"cancel/cleanup-exactly-once", "cancel/duplicate"},
	refserver.FaultIDTypeConfusion:        {"rpc/string-and-integer-ids", "cancel/string-vs-integer-target"},
	refserver.FaultIDZeroAbsent:           {"rpc/id-zero", "cancel/id-zero"},
	refserver.FaultStaleToken:             {"progress/token-reuse-after-cleanup"},
	refserver.FaultStdoutNoise:            {"stdio/stdout-only-messages"},
	refserver.FaultPingBroken:             {"ping/empty-result"},
	refserver.FaultIgnoreStdinEOF:         {"stdio/teardown-on-stdin-close"},
	refserver.FaultVersionMismatch:        {"lifecycle/version-echo", "lifecycle/unsupported-version"},
	refserver.FaultLogLevelIgnored:        {"logging/level-filter"},
	refserver.FaultHangAfterCancel:        {"cancel/cleanup-exactly-once", "cancel/mid-work-no-response"},
}

// unkillable lists cases no fault can make fail, with the reason.
var unkillable = map[string]string{}

func referenceTarget(faults refserver.FaultSet) runner.Target {
	return runner.Target{
		Name:      "reference",
		Transport: runner.TransportInProcess,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			conn, _ := refserver.InProcess(ctx, refserver.Options{Faults: faults}, transport.StreamConfig{Log: log})
			return conn, nil
		},
	}
}

func runCatalogue(t *testing.T, faults refserver.FaultSet) *runner.Report {
	t.Helper()
	prof, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := runner.Run(ctx, runner.Config{
		Target:       referenceTarget(faults),
		Profile:      prof,
		Cases:        cases.All(),
		CloseTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCatalogueAgainstReferenceServer(t *testing.T) {
	rep := runCatalogue(t, nil)
	for _, r := range rep.Results {
		switch r.Outcome.Verdict {
		case cases.Pass, cases.Info:
		default:
			t.Errorf("%s: %s: %s (expected %v, actual %s at seq %d)", r.ID, r.Outcome.Verdict, r.Outcome.Summary,
				r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq)
		}
	}
	if n := len(rep.Results); n < 30 {
		t.Errorf("catalogue has %d cases, want at least 30", n)
	}
}

func TestMutationMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the mutation matrix runs the catalogue once per fault")
	}
	killedBy := map[string][]refserver.Fault{}
	for _, fault := range refserver.AllFaults() {
		t.Run(string(fault), func(t *testing.T) {
			want, ok := killers[fault]
			if !ok || len(want) == 0 {
				t.Fatalf("fault %s has no killer listed: add the cases that detect it", fault)
			}
			rep := runCatalogue(t, refserver.FaultSet{fault: true})
			got := map[string]cases.Verdict{}
			for _, r := range rep.Results {
				got[r.ID] = r.Outcome.Verdict
				switch r.Outcome.Verdict {
				case cases.Fail, cases.Warn:
					killedBy[r.ID] = append(killedBy[r.ID], fault)
				case cases.Error:
					t.Errorf("%s ended in error under %s: %s", r.ID, fault, r.Outcome.Summary)
				}
			}
			for _, id := range want {
				if v := got[id]; v != cases.Fail && v != cases.Warn {
					t.Errorf("%s did not detect %s: verdict %q", id, fault, v)
				}
			}
		})
	}
	for _, c := range cases.All() {
		if _, excused := unkillable[c.ID]; excused {
			continue
		}
		if len(killedBy[c.ID]) == 0 {
			t.Errorf("no fault makes %s fail: add a fault or list it in unkillable with a reason", c.ID)
		}
	}
	for fault := range killers {
		if !slices.Contains(refserver.AllFaults(), fault) {
			t.Errorf("killers lists unknown fault %s", fault)
		}
	}
}
