package cases_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestPassiveRulesJudgeEveryCase: after the cases, the rules watch
// applies judge every case's chronology. Progress after the response
// (progress-after-response) in the chronology of a case about something
// else is a passive/no-progress-after-end fail naming that case; the
// case that cites PRG-14 judges it itself, so that alone it gets no
// passive result, nor does a run in which it fails; a conforming server
// gets none.
func TestPassiveRulesJudgeEveryCase(t *testing.T) {
	t.Parallel()
	prof, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(ids ...string) []probe.Case {
		var out []probe.Case
		for _, c := range cases.All() {
			for _, id := range ids {
				if c.ID == id {
					out = append(out, c)
				}
			}
		}
		if len(out) != len(ids) {
			t.Fatalf("cases %v: found %d", ids, len(out))
		}
		return out
	}
	passive := func(faults refserver.FaultSet, ids ...string) []results.Result {
		tgt := runner.InProcessTarget("reference", refserver.New(refserver.Options{Faults: faults}).ServePipes, transport.StreamConfig{})
		rep, err := runner.Run(context.Background(), runner.Config{Target: tgt, Profile: prof, Cases: pick(ids...), Version: spec.V20251125})
		if err != nil {
			t.Fatal(err)
		}
		var out []results.Result
		for _, r := range rep.Results {
			if r.Area == results.AreaPassive {
				out = append(out, r)
			}
		}
		return out
	}
	late := refserver.FaultSet{refserver.FaultProgressAfterResponse: true}
	got := passive(late, "stdio/stdout-only-messages")
	if len(got) != 1 || got[0].ID != "passive/no-progress-after-end" || got[0].Outcome.Verdict != verdict.Fail ||
		got[0].Outcome.Requirement != "PRG-14" || !strings.Contains(got[0].Outcome.Summary, "case stdio/stdout-only-messages's chronology") ||
		strings.Contains(got[0].Outcome.Summary, "other case") || len(got[0].Events) != 0 {
		t.Errorf("passive results %+v; want one PRG-14 fail in stdio/stdout-only-messages's chronology alone, with no chronology of its own", got)
	}
	if got := passive(late, "progress/strictly-increasing"); len(got) != 0 {
		t.Errorf("passive results %+v for the case that cites PRG-14; want none (the case judges it)", got)
	}
	// A requirement a case of the run found broken is the run's: the
	// same breach in another case's chronology adds no row.
	if got := passive(late, "stdio/stdout-only-messages", "progress/strictly-increasing"); len(got) != 0 {
		t.Errorf("passive results %+v while progress/strictly-increasing fails PRG-14; want none (the run reports it)", got)
	}
	if got := passive(nil, "stdio/stdout-only-messages", "progress/strictly-increasing"); len(got) != 0 {
		t.Errorf("passive results %+v on a conforming server; want none", got)
	}
}
