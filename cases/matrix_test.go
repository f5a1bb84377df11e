package cases_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
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
	refserver.FaultRejectValidLevel:            {"logging/every-level-accepted"},
	refserver.FaultAcceptInvalidLevel:          {"logging/invalid-level-rejected"},
	refserver.FaultBadMessageShape:             {"logging/message-shape"},
	refserver.FaultLogAfterCancel:              {"logging/no-flood-after-cancel"},
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

// httpKillers lists, for every fault of the reference server's HTTP
// endpoint, the cases that must detect it over HTTP.
var httpKillers = map[refserver.Fault][]string{
	refserver.FaultCancelOnDisconnect:          {"http/disconnect-is-not-cancel"},
	refserver.FaultReplayCrossesStreams:        {"http/replay-only-disconnected-stream"},
	refserver.FaultLoseEventsOnResume:          {"http/resume-while-running", "http/resume-after-completion"},
	refserver.FaultDuplicateEventIDs:           {"http/event-ids-unique"},
	refserver.FaultNoSessionCheck:              {"http/session-id-required", "http/unknown-session-404", "http/delete-then-404-then-new-session"},
	refserver.FaultNoOriginCheck:               {"http/origin-forbidden"},
	refserver.FaultJSONBodyForNotification:     {"http/notification-202-no-body", "http/cancel-202-then-no-response"},
	refserver.FaultResponseAfterCancelOnStream: {"http/cancel-202-then-no-response"},
	refserver.FaultNoProtocolVersionCheck:      {"http/protocol-version-header-invalid"},
	refserver.FaultProgressOnGETStream:         {"http/get-stream-carries-no-call-messages"},
	refserver.FaultNoPrimingEvent:              {"http/priming-event"},
	refserver.FaultSessionIDInvisible:          {"http/session-id-visible-ascii", "http/delete-then-404-then-new-session"},
}

// lostOverHTTP lists killers ("fault case") that need not see their fault
// over HTTP, with the reason; they must still not end in error there.
// Cases of the stdio area are left out over HTTP by themselves.
var lostOverHTTP = map[string]string{
	"error-on-notification cancel/crossing-response": "over HTTP the response usually wins the race on its own stream, so no cancel is sent for the fault to answer",
}

// unkillable lists cases no fault can make fail, with the reason.
var unkillable = map[string]string{
	"http/answer-content-type":          "the reference server's answers are built by net/http with a fixed Content-Type; no fault breaks it",
	"http/batch-rejected":               "the reference server decodes one message per POST with the strict decoder; a batch-accepting fault would need a second decoder",
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

// referenceHTTPTarget serves the reference server over Streamable HTTP
// from an httptest server, closed with the test.
func referenceHTTPTarget(t *testing.T, faults refserver.FaultSet) runner.Target {
	t.Helper()
	h := refserver.New(refserver.Options{Faults: faults}).HTTPHandler(refserver.HTTPOptions{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return runner.Target{
		Name:      ts.URL,
		Transport: runner.TransportHTTP,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			return transport.DialHTTP(ctx, transport.HTTPConfig{URL: ts.URL, Log: log, StallTimeout: 10 * time.Second})
		},
	}
}

func runCatalogue(t *testing.T, faults refserver.FaultSet) *runner.Report {
	t.Helper()
	return runCatalogueOn(t, referenceTarget(faults))
}

func runCatalogueOn(t *testing.T, target runner.Target) *runner.Report {
	t.Helper()
	prof, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := runner.Run(ctx, runner.Config{
		Target:       target,
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

// needsHTTP reports whether the case with id runs only over HTTP.
func needsHTTP(id string) bool {
	for _, c := range cases.All() {
		if c.ID == id {
			return c.Needs.HTTP
		}
	}
	return false
}

func TestCatalogueAgainstReferenceServer(t *testing.T) {
	rep := runCatalogue(t, nil)
	for _, r := range rep.Results {
		switch r.Outcome.Verdict {
		case verdict.Pass, verdict.Info:
		case verdict.Skip:
			if _, ok := skippedOnReference[r.ID]; !ok && !needsHTTP(r.ID) {
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

func TestCatalogueOverHTTP(t *testing.T) {
	start := time.Now()
	rep := runCatalogueOn(t, referenceHTTPTarget(t, nil))
	t.Logf("catalogue over HTTP: %d cases in %s", len(rep.Results), time.Since(start))
	for _, r := range rep.Results {
		if r.Transport != runner.TransportHTTP {
			t.Errorf("%s: transport %q, want http", r.ID, r.Transport)
		}
		switch r.Outcome.Verdict {
		case verdict.Pass, verdict.Info, verdict.Skip:
		default:
			t.Errorf("%s: %s: %s (expected %v, actual %s at seq %d)", r.ID, r.Outcome.Verdict, r.Outcome.Summary,
				r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq)
		}
	}
}

func TestMutationMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the mutation matrix runs the catalogue once per fault")
	}
	killedBy := map[string][]refserver.Fault{}
	var mu sync.Mutex
	check := func(t *testing.T, fault refserver.Fault, want []string, rep *runner.Report) {
		got := map[string]verdict.Verdict{}
		for _, r := range rep.Results {
			got[r.ID] = r.Outcome.Verdict
			switch r.Outcome.Verdict {
			case verdict.Fail, verdict.Warn:
				mu.Lock()
				killedBy[r.ID] = append(killedBy[r.ID], fault)
				mu.Unlock()
			case verdict.Error:
				t.Errorf("%s ended in error under %s over %s: %s", r.ID, fault, r.Transport, r.Outcome.Summary)
			}
		}
		for _, id := range want {
			if v := got[id]; v != verdict.Fail && v != verdict.Warn {
				t.Errorf("%s did not detect %s over %s: verdict %q", id, fault, rep.Transport, v)
			}
		}
	}
	for _, fault := range refserver.AllFaults() {
		if slices.Contains(refserver.HTTPFaults(), fault) {
			t.Run("http/"+string(fault), func(t *testing.T) {
				want := httpKillers[fault]
				if len(want) == 0 {
					t.Fatalf("HTTP fault %s has no killer listed in httpKillers", fault)
				}
				check(t, fault, want, runCatalogueOn(t, referenceHTTPTarget(t, refserver.FaultSet{fault: true})))
			})
			continue
		}
		t.Run(string(fault), func(t *testing.T) {
			want, ok := killers[fault]
			if !ok || len(want) == 0 {
				t.Fatalf("fault %s has no killer listed: add the cases that detect it", fault)
			}
			check(t, fault, want, runCatalogue(t, refserver.FaultSet{fault: true}))
		})
		t.Run("http/"+string(fault), func(t *testing.T) {
			var want []string
			for _, id := range killers[fault] {
				if _, lost := lostOverHTTP[string(fault)+" "+id]; !lost && !strings.HasPrefix(id, "stdio/") {
					want = append(want, id)
				}
			}
			check(t, fault, want, runCatalogueOn(t, referenceHTTPTarget(t, refserver.FaultSet{fault: true})))
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
	for fault := range httpKillers {
		if !slices.Contains(refserver.HTTPFaults(), fault) {
			t.Errorf("httpKillers lists %s, which is not an HTTP fault", fault)
		}
	}
	for fault := range killers {
		if !slices.Contains(refserver.AllFaults(), fault) {
			t.Errorf("killers lists unknown fault %s", fault)
		}
	}
}
