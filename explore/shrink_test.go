package explore

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/refserver"
)

// TestShrinkStartsFromTheTrialsHistory: given the history of the trial
// that found the violation, the shrinker cuts the steps after it without
// running the plan again, and reaches the same minimal plan as when it
// must run the plan to find where the violation was (one run more).
func TestShrinkStartsFromTheTrialsHistory(t *testing.T) {
	t.Parallel()
	tg := target(t, TransportInProcess, refserver.FaultDoubleCleanup)
	row := faultRow{fault: refserver.FaultDoubleCleanup, transport: TransportInProcess, find: []rule{{InvCleanupOnce, []string{"CAN-8"}}}}
	cfg := faultConfig(tg, row)
	cfg.NoShrink = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Found == nil || res.Found.History == nil {
		t.Fatalf("the fault was not found in %d operations", res.Ops)
	}
	f, err := ProbeRevision(context.Background(), tg, cfg.Revision, cfg.NoControl)
	if err != nil {
		t.Fatal(err)
	}
	fromHistory, runsFromHistory, _ := Shrink(context.Background(), cfg, f, res.Found.Original, res.Found.Violation, res.Found.History)
	rerun, runsRerun, _ := Shrink(context.Background(), cfg, f, res.Found.Original, res.Found.Violation, nil)
	if diff := cmp.Diff(rerun, fromHistory); diff != "" {
		t.Errorf("the minimal plans differ (-rerun +from the history):\n%s", diff)
	}
	if runsRerun != runsFromHistory+1 {
		t.Errorf("%d runs from the trial's history, %d when the plan is run again first; want one fewer", runsFromHistory, runsRerun)
	}
	if len(fromHistory.Steps) >= len(res.Found.Original.Steps) {
		t.Errorf("nothing was shrunk: %d steps of %d", len(fromHistory.Steps), len(res.Found.Original.Steps))
	}
}
