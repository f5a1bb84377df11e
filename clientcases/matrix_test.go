package clientcases_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpflight/mcpflight/clientadapter"
	"github.com/mcpflight/mcpflight/clientcases"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// combo is a revision and a transport the built-in client speaks.
type combo struct{ rev, transport string }

var (
	stdio2025 = combo{spec.V20251125, clientrun.TransportStdio}
	http2025  = combo{spec.V20251125, clientrun.TransportHTTP}
	stdio2026 = combo{spec.V20260728, clientrun.TransportStdio}
	http2026  = combo{spec.V20260728, clientrun.TransportHTTP}
	combos    = []combo{stdio2025, http2025, stdio2026, http2026}
)

func (c combo) String() string { return c.rev + "/" + c.transport }

// killer is a case that must catch a fault (verdict fail or warn) under a
// revision and transport; with info, a case that must grade it info (what
// the fault does breaks no rule, but the chronology records it).
type killer struct {
	id   string
	on   []combo
	info bool
}

// clientKillers lists, for every client fault, the cases that must
// detect it and where. A case may detect more than listed; none may end
// in error under a fault.
var clientKillers = map[clientadapter.Fault][]killer{
	clientadapter.FaultCancelsInitialize:     {{id: "lifecycle/initialize-not-cancelled", on: []combo{stdio2025, http2025}}},
	clientadapter.FaultNoInitialized:         {{id: "lifecycle/initialize-first", on: []combo{stdio2025, http2025}}},
	clientadapter.FaultIgnoresPing:           {{id: "lifecycle/ping-answered", on: []combo{stdio2025, http2025}}},
	clientadapter.FaultKillsServerWithoutEOF: {{id: "stdio/shutdown-closes-stdin", on: []combo{stdio2025, stdio2026}}},
	// Not 2025-11-25 stdio, where cancelling is optional (info).
	clientadapter.FaultNoCancelOnAbort:   {{id: "cancel/abort-signals-cancel", on: []combo{http2025, stdio2026, http2026}}},
	clientadapter.FaultNoCancelOnTimeout: {{id: "cancel/timeout-signals-cancel", on: combos}},
	clientadapter.FaultCancelsCompleted:  {{id: "cancel/none-after-response", on: combos}},
	// Not over HTTP: there the late response and the next call's travel on
	// separate streams, so the mutant may read the next one first and
	// close before the late one arrives; the case then rightly passes
	// (and over 2026-07-28 HTTP no late response can come at all).
	clientadapter.FaultDeliversLateResponse:     {{id: "cancel/late-response-ignored", on: []combo{stdio2025, stdio2026}}},
	clientadapter.FaultNoMaxTimeout:             {{id: "timeout/maximum-despite-progress", on: combos}},
	clientadapter.FaultReusesID:                 {{id: "rpc/no-id-reuse", on: []combo{stdio2025, http2025}}},
	clientadapter.FaultSharesProgressToken:      {{id: "progress/tokens-unique", on: combos}},
	clientadapter.FaultTaskCancelByNotification: {{id: "tasks/cancel-with-tasks-cancel", on: combos}},
	clientadapter.FaultDropIsCancel:             {{id: "http/drop-resumed-not-cancelled", on: []combo{http2025}}},
	clientadapter.FaultReissuesSameID:           {{id: "http/reissue-after-broken-stream", on: []combo{http2026}}},
	clientadapter.FaultFallbackOnlyOn32601: {
		{id: "versioning/probe-fallback-invalid-params", on: []combo{stdio2026, http2026}},
		{id: "versioning/probe-fallback-other-error", on: []combo{stdio2026, http2026}},
		{id: "versioning/probe-fallback-silence", on: []combo{stdio2026}},
	},
	clientadapter.FaultPings2026Session:  {{id: "versioning/no-removed-methods", on: []combo{stdio2026, http2026}}},
	clientadapter.FaultSetsLevelOn2026:   {{id: "versioning/no-removed-methods", on: []combo{stdio2026, http2026}}},
	clientadapter.FaultOmitsCapabilities: {{id: "versioning/envelope-on-every-request", on: []combo{stdio2026, http2026}}},
	// CAN-5 (CAN-51): the cancel names a request that is not in flight.
	// Over 2026-07-28 HTTP the stream is closed as well, and the
	// notification that comes with it is graded by its requestId too.
	clientadapter.FaultCancelsWrongID: {
		{id: "cancel/abort-signals-cancel", on: combos},
		{id: "cancel/timeout-signals-cancel", on: combos},
	},
	// TSX-52: only over 2026-07-28 HTTP is there a header to leave out.
	clientadapter.FaultTaskCancelWithoutName: {{id: "tasks/cancel-with-tasks-cancel", on: []combo{http2026}}},
	// RPC-6 (RPC-7 under 2026-07-28): reuses-id only reuses an answered
	// ID, which 2026-07-28 allows; this reuses one still in flight.
	clientadapter.FaultReusesInFlightID: {{id: "rpc/no-id-reuse", on: combos}},
	// CAN-2: the cancel comes from a goroutine after the handshake gave
	// up; the case's linger keeps the connection open for it.
	clientadapter.FaultCancelsInitializeLate: {{id: "lifecycle/initialize-not-cancelled", on: []combo{stdio2025, http2025}}},
	// HTTP-26, LIF-16: over 2025-11-25 HTTP closing the stream is a
	// disconnection, not a cancel (HTTP-25).
	clientadapter.FaultClosesStreamOnly: {
		{id: "cancel/abort-signals-cancel", on: []combo{http2025}},
		{id: "cancel/timeout-signals-cancel", on: []combo{http2025}},
	},
	// The extra notification breaks no rule (HTTP-99): graded info.
	clientadapter.FaultNotifies2026Cancel: {
		{id: "cancel/abort-signals-cancel", on: []combo{http2026}, info: true},
		{id: "cancel/timeout-signals-cancel", on: []combo{http2026}, info: true},
	},
}

// conformingVariants are client "faults" that break no rule: a client
// that does this must pass every case, under every revision and
// transport, so that a judgement that takes the wrong signal shows.
var conformingVariants = map[clientadapter.Fault]string{
	clientadapter.FaultClosesStreamThenCancels: "over 2025-11-25 HTTP the stream's close is a disconnection (HTTP-25) and the notification after it the cancel (HTTP-26, LIF-16): " +
		"cancel/abort-signals-cancel and cancel/timeout-signals-cancel must judge the notification, not the first signal",
}

// clientUnkillable lists cases no client fault makes fail, with the
// reason.
var clientUnkillable = map[string]string{
	"http/request-headers":                       "the transport sets Accept, the session, protocol-version and request metadata headers itself; no fault removes them",
	"versioning/probe-fallback-method-not-found": "-32601 is the one code fallback-only-on-32601 still falls back on; a client that never falls back is that fault's silence row",
}

func TestBuiltinClientMutationMatrix(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the client mutation matrix runs the catalogue once per fault, revision and transport")
	}
	faults := make([]clientadapter.Fault, 0, len(clientadapter.Faults()))
	for f := range clientadapter.Faults() {
		faults = append(faults, f)
	}
	slices.Sort(faults)
	type row struct {
		fault clientadapter.Fault
		on    combo
	}
	var rows []row
	for _, f := range faults {
		for _, c := range combos {
			rows = append(rows, row{f, c})
		}
	}
	// Each row's run starts as soon as its subtest is selected (before
	// t.Parallel), so that the selected rows run side by side, bounded by
	// runSlots rather than by -parallel; -run picks rows, for example
	// -run 'TestBuiltinClientMutationMatrix/cancels-wrong-id/'.
	var mu sync.Mutex
	killedBy := map[string][]string{}
	ran := 0
	for _, r := range rows {
		t.Run(fmt.Sprintf("%s/%s", r.fault, r.on), func(t *testing.T) {
			type outcome struct {
				rep *results.Report
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				rep, err := run(r.on.rev, r.on.transport, map[clientadapter.Fault]bool{r.fault: true})
				done <- outcome{rep, err}
			}()
			t.Parallel()
			o := <-done
			mu.Lock()
			ran++
			mu.Unlock()
			if o.err != nil {
				t.Fatal(o.err)
			}
			got := map[string]verdict.Verdict{}
			for _, res := range o.rep.Results {
				got[res.ID] = res.Outcome.Verdict
				_, conforming := conformingVariants[r.fault]
				switch res.Outcome.Verdict {
				case verdict.Fail, verdict.Warn:
					if conforming {
						dump(t, res)
						t.Errorf("%s graded the conforming variant %s %s under %s: %s", res.ID, r.fault, res.Outcome.Verdict, r.on, res.Outcome.Summary)
						continue
					}
					mu.Lock()
					killedBy[res.ID] = append(killedBy[res.ID], string(r.fault))
					mu.Unlock()
				case verdict.Error:
					dump(t, res)
					t.Errorf("%s ended in error under %s: %s", res.ID, r.fault, res.Outcome.Summary)
				}
			}
			for _, k := range clientKillers[r.fault] {
				if !slices.Contains(k.on, r.on) {
					continue
				}
				v := got[k.id]
				if k.info && v != verdict.Info {
					for _, res := range o.rep.Results {
						if res.ID == k.id {
							dump(t, res)
						}
					}
					t.Errorf("%s did not grade %s info under %s: verdict %q", k.id, r.fault, r.on, v)
				}
				if !k.info && v != verdict.Fail && v != verdict.Warn {
					for _, res := range o.rep.Results {
						if res.ID == k.id {
							dump(t, res)
						}
					}
					t.Errorf("%s did not detect %s under %s: verdict %q", k.id, r.fault, r.on, v)
				}
			}
		})
	}
	// The whole-matrix checks, once every row has run (not when -run
	// picked some).
	t.Cleanup(func() {
		mu.Lock()
		all := ran == len(rows)
		mu.Unlock()
		if t.Failed() || !all {
			return
		}
		wholeMatrix(t, faults, killedBy)
	})
}

// wholeMatrix checks that every fault has a killer and every case is
// killed by some fault or listed as unkillable.
func wholeMatrix(t *testing.T, faults []clientadapter.Fault, killedBy map[string][]string) {
	for _, f := range faults {
		if _, conforming := conformingVariants[f]; conforming {
			if len(clientKillers[f]) > 0 {
				t.Errorf("client fault %s is a conforming variant and lists killers", f)
			}
			continue
		}
		if len(clientKillers[f]) == 0 {
			t.Errorf("client fault %s has no killer listed: add the cases that detect it", f)
		}
	}
	for _, c := range clientcases.All() {
		if _, excused := clientUnkillable[c.ID]; excused {
			if len(killedBy[c.ID]) > 0 {
				t.Errorf("%s is listed as unkillable but %v kill it: list them instead", c.ID, killedBy[c.ID])
			}
			continue
		}
		if len(killedBy[c.ID]) == 0 {
			t.Errorf("no client fault makes %s fail: add a fault or list it in clientUnkillable with a reason", c.ID)
		}
	}
}
