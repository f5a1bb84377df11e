package clientcases_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpflight/mcpflight/clientadapter"
	"github.com/mcpflight/mcpflight/clientcases"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// combo is a revision and a transport the built-in client speaks.
type combo struct{ rev, transport string }

var (
	stdio25 = combo{spec.V20251125, clientrun.TransportStdio}
	http25  = combo{spec.V20251125, clientrun.TransportHTTP}
	stdio26 = combo{spec.V20260728, clientrun.TransportStdio}
	combos  = []combo{stdio25, http25, stdio26}
)

func (c combo) String() string { return c.rev + "/" + c.transport }

// killer is a case that must catch a fault (verdict fail or warn) under a
// revision and transport.
type killer struct {
	id string
	on []combo
}

// clientKillers lists, for every client fault, the cases that must
// detect it and where. A case may detect more than listed; none may end
// in error under a fault.
var clientKillers = map[clientadapter.Fault][]killer{
	clientadapter.FaultCancelsInitialize:     {{"lifecycle/initialize-not-cancelled", []combo{stdio25, http25}}},
	clientadapter.FaultNoInitialized:         {{"lifecycle/initialize-first", []combo{stdio25, http25}}},
	clientadapter.FaultIgnoresPing:           {{"lifecycle/ping-answered", []combo{stdio25, http25}}},
	clientadapter.FaultKillsServerWithoutEOF: {{"stdio/shutdown-closes-stdin", []combo{stdio25, stdio26}}},
	clientadapter.FaultNoCancelOnAbort:       {{"cancel/abort-signals-cancel", []combo{http25, stdio26}}},
	clientadapter.FaultNoCancelOnTimeout:     {{"cancel/timeout-signals-cancel", combos}},
	clientadapter.FaultCancelsCompleted:      {{"cancel/none-after-response", combos}},
	// Not over HTTP: there the late response and the next call's travel on
	// separate streams, so the mutant may read the next one first and
	// close before the late one arrives; the case then rightly passes.
	clientadapter.FaultDeliversLateResponse:     {{"cancel/late-response-ignored", []combo{stdio25, stdio26}}},
	clientadapter.FaultNoMaxTimeout:             {{"timeout/maximum-despite-progress", combos}},
	clientadapter.FaultReusesID:                 {{"rpc/no-id-reuse", []combo{stdio25, http25}}},
	clientadapter.FaultSharesProgressToken:      {{"progress/tokens-unique", combos}},
	clientadapter.FaultTaskCancelByNotification: {{"tasks/cancel-with-tasks-cancel", []combo{stdio25, http25}}},
	clientadapter.FaultDropIsCancel:             {{"http/drop-resumed-not-cancelled", []combo{http25}}},
	clientadapter.FaultFallbackOnlyOn32601: {
		{"versioning/probe-fallback-invalid-params", []combo{stdio26}},
		{"versioning/probe-fallback-other-error", []combo{stdio26}},
		{"versioning/probe-fallback-silence", []combo{stdio26}},
	},
	clientadapter.FaultPingsModernSession: {
		{"versioning/no-removed-methods", []combo{stdio26}},
		// peer's ping carries no _meta: the removed method also lacks the envelope.
		{"versioning/envelope-on-every-request", []combo{stdio26}},
	},
}

// clientUnkillable lists cases no client fault makes fail, with the
// reason.
var clientUnkillable = map[string]string{
	"http/reissue-after-broken-stream":           "the built-in client has no 2026-07-28 Streamable HTTP half until the merge with rev26c, so the case skips; the TypeScript client 2.4.0 runs it",
	"http/request-headers":                       "the transport sets Accept, the session and protocol-version headers itself; no fault removes them",
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
	reps := make([]*runner.Report, len(rows))
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	for i, r := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = run(r.on.rev, r.on.transport, map[clientadapter.Fault]bool{r.fault: true})
		}()
	}
	wg.Wait()
	killedBy := map[string][]string{}
	for i, r := range rows {
		t.Run(fmt.Sprintf("%s/%s", r.fault, r.on), func(t *testing.T) {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			got := map[string]verdict.Verdict{}
			for _, res := range reps[i].Results {
				got[res.ID] = res.Outcome.Verdict
				switch res.Outcome.Verdict {
				case verdict.Fail, verdict.Warn:
					killedBy[res.ID] = append(killedBy[res.ID], string(r.fault))
				case verdict.Error:
					dump(t, res)
					t.Errorf("%s ended in error under %s: %s", res.ID, r.fault, res.Outcome.Summary)
				}
			}
			for _, k := range clientKillers[r.fault] {
				if !slices.Contains(k.on, r.on) {
					continue
				}
				if v := got[k.id]; v != verdict.Fail && v != verdict.Warn {
					for _, res := range reps[i].Results {
						if res.ID == k.id {
							dump(t, res)
						}
					}
					t.Errorf("%s did not detect %s under %s: verdict %q", k.id, r.fault, r.on, v)
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	for _, f := range faults {
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
