package clientcases_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/clientadapter"
	"github.com/mcpflight/mcpflight/clientcases"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// runSlots bounds how many cases run at once. A case mostly waits (on
// the client's timeouts and the observation windows), not computes, so
// the bound is set well above the cores: a tight one turns waiting into
// wall time without saving CPU.
var runSlots = make(chan struct{}, 96)

// run runs every case of the catalogue against the built-in client with
// faults, each case on its own (concurrently, within runSlots), and
// gathers the results in catalogue order.
func run(revision, transport string, faults map[clientadapter.Fault]bool) (*results.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	all := clientcases.All()
	rep := &results.Report{Results: make([]results.Result, len(all)), Version: revision, Transport: transport, Role: results.RoleClient}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runSlots <- struct{}{}
			defer func() { <-runSlots }()
			r, err := clientrun.Run(ctx, clientrun.Config{
				Client: clientadapter.InProcess{Faults: faults}, ClientName: "built-in",
				Transport: transport, Revision: revision, BothRevisions: true, Cases: []clientrun.Case{c},
			})
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
	return rep, errors.Join(errs...)
}

// builtinUnsupported lists, per revision and transport, why the built-in
// client skips there.
func dump(t *testing.T, r results.Result) {
	t.Helper()
	var b stringsBuilder
	_ = report.Sequence(&b, r.Events, report.SequenceOptions{Mark: r.Outcome.ActualSeq})
	t.Logf("%s: %s: %s\nexpected %v\nactual %s (seq %d)\n%s", r.ID, r.Outcome.Verdict, r.Outcome.Summary, r.Outcome.Expected, r.Outcome.Actual, r.Outcome.ActualSeq, b.String())
}

func TestBuiltinClientPasses(t *testing.T) {
	t.Parallel()
	for _, combo := range []struct{ rev, tr string }{
		{spec.V20251125, clientrun.TransportStdio},
		{spec.V20251125, clientrun.TransportHTTP},
		{spec.V20260728, clientrun.TransportStdio},
		{spec.V20260728, clientrun.TransportHTTP},
	} {
		t.Run(combo.rev+"/"+combo.tr, func(t *testing.T) {
			t.Parallel()
			rep, err := run(combo.rev, combo.tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			ran := 0
			for _, r := range rep.Results {
				switch r.Outcome.Verdict {
				case verdict.Pass, verdict.Info:
					ran++
				case verdict.Skip:
				default:
					dump(t, r)
					t.Errorf("%s: %s: %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
				}
			}
			t.Logf("%d cases ran", ran)
		})
	}
}
