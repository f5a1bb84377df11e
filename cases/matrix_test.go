package cases_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
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
	refserver.FaultRespondAfterCancel:            {"cancel/mid-work-no-response", "cancel/before-first-progress", "cancel/interleaved-other-completes"},
	refserver.FaultProgressAfterCancel:           {"cancel/mid-work-no-progress", "cancel/before-first-progress"},
	refserver.FaultProgressAfterResponse:         {"progress/none-after-response"},
	refserver.FaultNonIncreasingProgress:         {"progress/strictly-increasing", "progress/fractional-total"},
	refserver.FaultWrongToken:                    {"progress/token-echo-string", "progress/token-echo-integer", "progress/token-zero", "progress/interleaved-tokens", "progress/token-independent-of-id"},
	refserver.FaultProgressWithoutToken:          {"progress/none-without-token"},
	refserver.FaultErrorOnNotification:           {"rpc/no-response-to-notifications", "cancel/after-completion", "cancel/unknown-id-ignored", "cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params", "cancel/extra-fields", "cancel/crossing-response"},
	refserver.FaultCrashOnMalformedCancel:        {"cancel/missing-request-id", "cancel/invalid-request-id", "cancel/no-params"},
	refserver.FaultCancelUnknownHitsOther:        {"cancel/unknown-id-ignored"},
	refserver.FaultLeakOnCancel:                  {"cancel/cleanup-exactly-once", "cancel/duplicate"},
	refserver.FaultDoubleCleanup:                 {"cancel/cleanup-exactly-once", "cancel/duplicate"},
	refserver.FaultIDTypeConfusion:               {"rpc/string-and-integer-ids", "cancel/string-vs-integer-target"},
	refserver.FaultIDZeroAbsent:                  {"rpc/id-zero", "cancel/id-zero"},
	refserver.FaultStaleToken:                    {"progress/token-reuse-after-cleanup"},
	refserver.FaultStdoutNoise:                   {"stdio/stdout-only-messages"},
	refserver.FaultPingBroken:                    {"ping/empty-result"},
	refserver.FaultIgnoreStdinEOF:                {"stdio/teardown-on-stdin-close"},
	refserver.FaultVersionMismatch:               {"lifecycle/version-echo", "lifecycle/unsupported-version"},
	refserver.FaultLogLevelIgnored:               {"logging/level-filter"},
	refserver.FaultRejectValidLevel:              {"logging/every-level-accepted"},
	refserver.FaultAcceptInvalidLevel:            {"logging/invalid-level-rejected"},
	refserver.FaultBadMessageShape:               {"logging/message-shape"},
	refserver.FaultLogAfterCancel:                {"logging/no-flood-after-cancel"},
	refserver.FaultHangAfterCancel:               {"cancel/cleanup-exactly-once", "cancel/mid-work-no-response"},
	refserver.FaultCancelDoesNotStopWorker:       {"tasks/worker-stops-after-cancel"},
	refserver.FaultStatusChangesAfterCancelled:   {"tasks/cancelled-stays-cancelled"},
	refserver.FaultCancelTerminalSucceeds:        {"tasks/second-cancel-rejected", "tasks/cancel-completed-rejected"},
	refserver.FaultResultHangsAfterCancel:        {"tasks/result-answered-after-cancel"},
	refserver.FaultNotificationCancelsTask:       {"tasks/notification-does-not-cancel"},
	refserver.FaultMissingRelatedTaskMeta:        {"tasks/result-equivalence"},
	refserver.FaultListLeaksOtherSessions:        {"tasks/list-isolation"},
	refserver.FaultPollIntervalIgnored:           {"tasks/poll-interval"},
	refserver.FaultTaskListNotObject:             {"tasks/capability-shape"},
	refserver.FaultTaskSupportMissing:            {"tasks/tool-task-support"},
	refserver.FaultRequiredTaskRunsPlain:         {"tasks/required-without-task"},
	refserver.FaultForbiddenRunsPlain:            {"tasks/forbidden-with-task"},
	refserver.FaultTaskWithoutTTL:                {"tasks/create-result-shape", "tasks/timestamps-monotonic"},
	refserver.FaultLastUpdatedBeforeCreated:      {"tasks/create-result-shape", "tasks/timestamps-monotonic"},
	refserver.FaultSequentialTaskIDs:             {"tasks/unguessable-ids"},
	refserver.FaultCompletedTaskReopens:          {"tasks/status-transitions"},
	refserver.FaultCancelAnswersBeforeTransition: {"tasks/cancel-working"},
	refserver.FaultIsErrorCompletesTask:          {"tasks/iserror-fails-task"},
	refserver.FaultFailedResultNotError:          {"tasks/result-error-equivalence"},
	refserver.FaultResultAnswersEarly:            {"tasks/result-blocks-while-working"},
	refserver.FaultUnknownTaskInternalError:      {"tasks/unknown-id"},
	refserver.FaultRelatedTaskMetaWins:           {"tasks/task-id-is-source-of-truth"},
	refserver.FaultBogusCursorAccepted:           {"tasks/list-pagination"},
	refserver.FaultStatusNotificationMeta:        {"tasks/status-notifications"},
	refserver.FaultTaskProgressOtherToken:        {"tasks/progress-token-lifetime"},
	refserver.FaultDieOnMalformedInput:           {"robust/not-json", "robust/truncated-then-valid", "robust/empty-batch", "robust/non-object", "robust/wrong-version"},
	refserver.FaultParseErrorWithID:              {"robust/not-json", "robust/truncated-then-valid"},
	refserver.FaultTruncatedSwallowsNext:         {"robust/truncated-then-valid"},
	refserver.FaultDuplicateIDDropsFirst:         {"robust/duplicate-inflight-id"},
	refserver.FaultMissingTaskIDInternalError:    {"robust/params-task-id"},
	refserver.FaultIllTypedCursorAccepted:        {"robust/params-tasks-list-cursor"},
	refserver.FaultMissingLevelInternalError:     {"robust/params-set-level"},
	refserver.FaultMuteAfterNamelessCall:         {"robust/params-tools-call"},
}

// httpKillers lists, for every fault of the reference server's HTTP
// endpoint, the cases that must detect it over HTTP.
var httpKillers = map[refserver.Fault][]string{
	refserver.FaultCancelOnDisconnect:          {"http/disconnect-is-not-cancel"},
	refserver.FaultReplayCrossesStreams:        {"http/replay-only-disconnected-stream"},
	refserver.FaultLoseEventsOnResume:          {"http/resume-after-completion"},
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
	"error-on-notification cancel/crossing-response":      "over HTTP the response usually wins the race on its own stream, so no cancel is sent for the fault to answer",
	"truncated-swallows-next robust/truncated-then-valid": "over HTTP every message is a POST of its own: there is no next line for a truncated body to swallow",
}

// collateral lists, as "fault case requirement", a case that fails or
// warns under a fault with a requirement the fault is not documented to
// break, with the reason the evidence fits that requirement too.
var collateral = map[string]string{}

// checkSeverity holds an outcome that cites a requirement to the
// registry: its level decided the verdict, unless the outcome carries a
// written exception.
func checkSeverity(t *testing.T, id string, o verdict.Outcome) {
	t.Helper()
	if o.Level == "" {
		t.Errorf("%s: %s cites %s without the level that decided it", id, o.Verdict, o.Requirement)
		return
	}
	given, err := verdict.Severity(o.Level)
	if err != nil {
		t.Errorf("%s: level %q of %s: %v", id, o.Level, o.Requirement, err)
		return
	}
	if given != o.Verdict && o.Exception == "" {
		t.Errorf("%s: %s for %s (%s) without a written exception; the registry gives %s", id, o.Verdict, o.Requirement, o.Level, given)
	}
}

// unkillable lists cases no fault can make fail, with the reason.
var unkillable = map[string]string{
	"http/answer-content-type":         "the reference server's answers are built by net/http with a fixed Content-Type; no fault breaks it",
	"http/batch-rejected":              "the reference server decodes one message per POST with the strict decoder; a batch-accepting fault would need a second decoder",
	"tasks/ignored-without-capability": "it runs only against a server without the tasks capability, and every row of the matrix declares it (TestTaskCasesWithoutCapability runs it against serve --no-tasks)",
	"tasks/durable-id":                 "a task that tasks/get cannot find at once would break every task case that polls it, so no fault isolates TSK-44 to this case",
	"tasks/ttl-expiry":                 "deletion at ttl is a MAY (TSK-42): retention is info, never a violation",
	"rpc/tools-list-schema":            "no fault reshapes tools/list; testdata/schemabreak's tools (internal/cli TestSchemaBreakingServers) make it fail",
}

// A target makes the server one case runs against. Every case gets a
// server of its own, so that cases running at the same time cannot see
// each other; a second session of a case (tasks/list-isolation) shares
// its server, as a server process would serve it.
type target func() (runner.Target, func())

// referenceTarget serves the reference server in process.
func referenceTarget(faults refserver.FaultSet) target {
	return func() (runner.Target, func()) {
		srv := refserver.New(refserver.Options{Faults: faults})
		return runner.Target{
			Name:      "reference",
			Transport: runner.TransportInProcess,
			Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
				conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
				return conn, nil
			},
		}, func() {}
	}
}

// referenceHTTPTarget serves the reference server over Streamable HTTP
// from an httptest server.
func referenceHTTPTarget(faults refserver.FaultSet) target {
	return func() (runner.Target, func()) {
		h := refserver.New(refserver.Options{Faults: faults}).HTTPHandler(refserver.HTTPOptions{})
		ts := httptest.NewServer(h)
		// A client of its own: closing an httptest server closes the idle
		// connections of http.DefaultTransport, which would break the
		// cases running at the same time against other servers.
		client := &http.Client{Transport: &http.Transport{}}
		return runner.Target{
				Name:      ts.URL,
				Transport: runner.TransportHTTP,
				Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
					return transport.DialHTTP(ctx, transport.HTTPConfig{URL: ts.URL, Log: log, StallTimeout: 10 * time.Second, Client: client})
				},
			}, func() {
				h.Close()
				ts.Close()
				client.CloseIdleConnections()
			}
	}
}

// runSlots bounds how many cases of this package's tests run at once.
// A case mostly waits (on a checkpoint, on the wire), so many more run
// than there are cores; each has its own server and deadline.
var runSlots = make(chan struct{}, 8)

func runCatalogue(t *testing.T, faults refserver.FaultSet) *runner.Report {
	t.Helper()
	return runCatalogueOn(t, referenceTarget(faults))
}

// runCatalogueOn runs the catalogue (see catalogue) and fails the test
// when a run could not be made.
func runCatalogueOn(t *testing.T, mk target) *runner.Report {
	t.Helper()
	rep, err := catalogue(mk)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// catalogue runs every case of the catalogue against the reference
// server (see runEach).
func catalogue(mk target) (*runner.Report, error) {
	prof, err := profile.Builtin("reference")
	if err != nil {
		return nil, err
	}
	// The case deadline is a safety net that a loaded machine cannot
	// overrun: against the reference server every wait is on a
	// checkpoint.
	return runEach(mk, runner.Config{Profile: prof, Cases: cases.All(), CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
}

// runEach runs every case of cfg.Cases in a run of its own, against a
// target mk makes for it, concurrently (within runSlots), and gathers the
// results in the order of cfg.Cases. Each run has two minutes.
func runEach(mk target, cfg runner.Config) (*runner.Report, error) {
	rep := &runner.Report{Results: make([]runner.Result, len(cfg.Cases))}
	errs := make([]error, len(cfg.Cases))
	var wg sync.WaitGroup
	for i, c := range cfg.Cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runSlots <- struct{}{}
			defer func() { <-runSlots }()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tgt, closeTarget := mk()
			defer closeTarget()
			one := cfg
			one.Target, one.Cases = tgt, []probe.Case{c}
			r, err := runner.Run(ctx, one)
			if err == nil && len(r.Results) != 1 {
				err = fmt.Errorf("%d results for one case", len(r.Results))
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.ID, err)
				return
			}
			rep.Results[i] = r.Results[0]
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(rep.Results) > 0 {
		rep.Transport = rep.Results[0].Transport
	}
	return rep, nil
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
	t.Parallel()
	rep := runCatalogue(t, nil)
	for _, r := range rep.Results {
		if r.Outcome.Requirement != "" {
			checkSeverity(t, r.ID, r.Outcome)
		}
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
	t.Parallel()
	start := time.Now()
	rep := runCatalogueOn(t, referenceHTTPTarget(nil))
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
	t.Parallel()
	if testing.Short() {
		t.Skip("the mutation matrix runs the catalogue once per fault")
	}
	killedBy := map[string][]refserver.Fault{}
	var mu sync.Mutex
	check := func(t *testing.T, fault refserver.Fault, want []string, rep *runner.Report) {
		breaks := fault.Breaks()
		got := map[string]verdict.Outcome{}
		for _, r := range rep.Results {
			got[r.ID] = r.Outcome
		}
		for _, r := range rep.Results {
			o := r.Outcome
			if o.Requirement != "" {
				checkSeverity(t, r.ID, o)
			}
			switch o.Verdict {
			case verdict.Fail, verdict.Warn:
				mu.Lock()
				killedBy[r.ID] = append(killedBy[r.ID], fault)
				mu.Unlock()
				// Blame lands on the rule that was broken: a fault is seen
				// only under the requirements it is documented to break.
				if !slices.Contains(breaks, o.Requirement) {
					if _, ok := collateral[string(fault)+" "+r.ID+" "+o.Requirement]; !ok {
						t.Errorf("%s: %s %s under %s over %s, which is documented to break %v: %s", r.ID, o.Verdict, o.Requirement, fault, r.Transport, breaks, o.Summary)
					}
				}
			case verdict.Error:
				if b := o.Blame; b != nil && slices.Contains(breaks, b.Requirement) {
					// The helper step broke the fault's rule: the owner
					// case must be the one that fails.
					if ov := got[b.Case]; (ov.Verdict != verdict.Fail && ov.Verdict != verdict.Warn) || ov.Requirement != b.Requirement {
						t.Errorf("%s blames %s for %s under %s over %s, but that case says %s %s", r.ID, b.Case, b.Requirement, fault, r.Transport, ov.Verdict, ov.Requirement)
					}
					continue
				}
				t.Errorf("%s ended in error under %s over %s: %s", r.ID, fault, r.Transport, o.Summary)
			}
		}
		for _, id := range want {
			if v := got[id].Verdict; v != verdict.Fail && v != verdict.Warn {
				t.Errorf("%s did not detect %s over %s: verdict %q", id, fault, rep.Transport, v)
			}
		}
	}
	// A row is one fault over one transport and the cases that must
	// catch it. Every row's catalogue runs at the same time (each case
	// against a server of its own, within runSlots); the checks follow.
	type row struct {
		name  string
		fault refserver.Fault
		want  []string
		mk    target
	}
	var rows []row
	for _, fault := range refserver.AllFaults() {
		if slices.Contains(refserver.Faults2026(), fault) {
			continue // killed by the 2026-07-28 catalogue (issue 12.4), not written yet
		}
		set := refserver.FaultSet{fault: true}
		if slices.Contains(refserver.HTTPFaults(), fault) {
			rows = append(rows, row{"http/" + string(fault), fault, httpKillers[fault], referenceHTTPTarget(set)})
			continue
		}
		if slices.Contains(refserver.TaskFaults(), fault) {
			// These break rules of the task methods, which no transport
			// changes: one row each.
			rows = append(rows, row{string(fault), fault, killers[fault], referenceTarget(set)})
			continue
		}
		var overHTTP []string
		for _, id := range killers[fault] {
			if _, lost := lostOverHTTP[string(fault)+" "+id]; !lost && !strings.HasPrefix(id, "stdio/") {
				overHTTP = append(overHTTP, id)
			}
		}
		rows = append(rows,
			row{string(fault), fault, killers[fault], referenceTarget(set)},
			row{"http/" + string(fault), fault, overHTTP, referenceHTTPTarget(set)})
	}
	reps := make([]*runner.Report, len(rows))
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	for i, r := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = catalogue(r.mk)
		}()
	}
	wg.Wait()
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if len(r.want) == 0 && !strings.HasPrefix(r.name, "http/") || len(r.want) == 0 && slices.Contains(refserver.HTTPFaults(), r.fault) {
				t.Fatalf("fault %s has no killer listed: add the cases that detect it", r.fault)
			}
			check(t, r.fault, r.want, reps[i])
		})
	}
	if t.Failed() {
		return
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
