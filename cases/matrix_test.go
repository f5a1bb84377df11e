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
	refserver.FaultRespondAfterCancel:          {"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes"},
	refserver.FaultProgressAfterCancel:         {"cancel/mid-work-no-progress", "cancel/before-first-progress"},
	refserver.FaultProgressAfterResponse:       {"progress/none-after-response"},
	refserver.FaultNonIncreasingProgress:       {"progress/strictly-increasing", "progress/fractional-total"},
	refserver.FaultWrongToken:                  {"progress/token-echo-string", "progress/token-echo-integer", "progress/token-zero", "progress/interleaved-tokens", "progress/token-independent-of-id"},
	refserver.FaultProgressWithoutToken:        {"progress/none-without-token"},
	refserver.FaultErrorOnNotification:         {"rpc/no-response-to-notifications", "cancel/after-completion", "cancel/unknown-id-ignored", "cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params", "cancel/extra-fields", "cancel/crossing-response"},
	refserver.FaultCrashOnMalformedCancel:      {"cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params"},
	refserver.FaultCancelUnknownHitsOther:      {"cancel/unknown-id-ignored"},
	refserver.FaultLeakOnCancel:                {"cancel/cleanup-exactly-once", "cancel/duplicate"},
	refserver.FaultDoubleCleanup:               {"cancel/cleanup-exactly-once", "cancel/duplicate"},
	refserver.FaultIDTypeConfusion:             {"rpc/string-and-integer-ids", "cancel/string-vs-integer-target"},
	refserver.FaultIDZeroAbsent:                {"rpc/id-zero", "cancel/id-zero"},
	refserver.FaultStaleToken:                  {"progress/token-reuse-after-cleanup"},
	refserver.FaultStdoutNoise:                 {"stdio/stdout-only-messages"},
	refserver.FaultPingBroken:                  {"ping/empty-result"},
	refserver.FaultIgnoreStdinEOF:              {"stdio/teardown-on-stdin-close"},
	refserver.FaultVersionMismatch:             {"lifecycle/version-echo", "lifecycle/unsupported-version"},
	refserver.FaultLogLevelIgnored:             {"logging/level-filter"},
	refserver.FaultHangAfterCancel:             {"cancel/cleanup-exactly-once", "cancel/mid-work-no-response"},
	refserver.FaultCancelDoesNotStopWorker:     {"tasks/worker-stops-after-cancel"},
	refserver.FaultStatusChangesAfterCancelled: {"tasks/cancelled-stays-cancelled"},
	refserver.FaultCancelTerminalSucceeds:      {"tasks/second-cancel-rejected", "tasks/cancel-completed-rejected"},
	refserver.FaultResultHangsAfterCancel:      {"tasks/result-answered-after-cancel"},
	refserver.FaultNotificationCancelsTask:     {"tasks/notification-does-not-cancel"},
	refserver.FaultMissingRelatedTaskMeta:      {"tasks/result-equivalence"},
	refserver.FaultListLeaksOtherSessions:      {"tasks/list-isolation"},
	refserver.FaultPollIntervalIgnored:         {"tasks/poll-interval"},
}

// unkillable lists cases no fault can make fail, with the reason.
var unkillable = map[string]string{
	"tasks/capability-shape":            "no fault removes or reshapes the tasks capability",
	"tasks/tool-task-support":           "no fault changes execution.taskSupport",
	"tasks/required-without-task":       "no fault accepts a required-task tool without a task",
	"tasks/forbidden-with-task":         "no fault accepts a forbidden-task tool as a task",
	"tasks/ignored-without-capability":  "the reference server declares tasks; the case is skipped there",
	"tasks/create-result-shape":         "no fault reshapes the CreateTaskResult",
	"tasks/durable-id":                  "no fault delays registration or reuses ids",
	"tasks/timestamps-monotonic":        "no fault breaks the timestamps",
	"tasks/status-transitions":          "no fault makes an invalid transition outside the cancel path",
	"tasks/cancel-working":              "no fault answers tasks/cancel before the transition",
	"tasks/result-error-equivalence":    "no fault changes the error tasks/result returns",
	"tasks/iserror-fails-task":          "no fault completes an isError task",
	"tasks/result-blocks-while-working": "no fault answers tasks/result early",
	"tasks/unknown-id":                  "no fault answers unknown task ids",
	"tasks/task-id-is-source-of-truth":  "no fault reads related-task metadata",
	"tasks/list-pagination":             "no fault breaks the cursor",
	"tasks/ttl-expiry":                  "deletion at ttl is a MAY: retention is info, not a violation",
	"tasks/progress-token-lifetime":     "no fault changes task progress",
	"tasks/status-notifications":        "no fault changes status notifications",
	"tasks/unguessable-ids":             "the reference server's ids are 128-bit random; TestGuessable shows the heuristic firing",
}

// referenceTarget dials sessions of one server, as a server process would
// serve them: a second session of a case (tasks/list-isolation) shares it.
func referenceTarget(faults refserver.FaultSet) runner.Target {
	srv := refserver.New(refserver.Options{Faults: faults})
	return runner.Target{
		Name:      "reference",
		Transport: runner.TransportInProcess,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
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

// skippedOnReference lists cases the reference server cannot run, with
// the reason.
var skippedOnReference = map[string]string{
	"tasks/ignored-without-capability": "the reference server declares the tasks capability (TSK-24 is for servers without it)",
}

func TestCatalogueAgainstReferenceServer(t *testing.T) {
	rep := runCatalogue(t, nil)
	for _, r := range rep.Results {
		switch r.Outcome.Verdict {
		case cases.Pass, cases.Info:
		case cases.Skip:
			if _, ok := skippedOnReference[r.ID]; !ok {
				t.Errorf("%s: skipped: %s", r.ID, r.Outcome.Summary)
			}
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
