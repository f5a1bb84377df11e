package explore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// The explorer against servers we do not control: without
// the control extension a call's own pace is the evidence of what a
// cancel changed (checker.uncontrolledCancel).

// pacedProfile is the reference server's slow tool as a target without
// the control extension runs it: ungated, eight steps on its own clock.
func pacedProfile() *profile.Profile {
	return &profile.Profile{Name: "paced", SlowSteps: 8,
		Slow: &profile.Tool{Name: "slow", Arguments: map[string]any{"key": "", "steps": 8, "gated": false, "tickMs": 60}}}
}

// TestUncontrolledCancelByPace: against the reference server ignoring
// its control extension, a conforming run under 2026-07-28 finds
// nothing, and respond-after-cancel (an answer written as the cancel is
// read, steps before the call could end) is found by its pace, citing
// CAN-54.
func TestUncontrolledCancelByPace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("paced calls run in real time")
	}
	for _, tc := range []struct {
		name   string
		faults []refserver.Fault
		want   string // the invariant found, "" for none
	}{
		{"conforming", nil, ""},
		{"respond-after-cancel", []refserver.Fault{refserver.FaultRespondAfterCancel}, InvCancelNoResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Target: target(t, TransportInProcess, tc.faults...), Seed: 11, Ops: 500, NoControl: true, NoShrink: true,
				Profile: pacedProfile(), Revision: Revision20260728, OpTimeout: 20 * time.Second}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			judged := res.Figures.Races[RaceUncontrolled]
			t.Logf("%d operations, %d cancels judged by their pace; races %v", res.Ops, judged, res.Figures.Races)
			switch {
			case tc.want == "" && res.Found != nil:
				t.Fatalf("a conforming server: %+v", res.Found.Violation)
			case tc.want == "" && judged == 0:
				t.Fatalf("no cancel was judged by its pace: the path was not exercised (races %v)", res.Figures.Races)
			case tc.want != "" && (res.Found == nil || res.Found.Violation.Invariant != tc.want || res.Found.Violation.Requirement != "CAN-54"):
				t.Fatalf("want %s citing CAN-54, found %+v", tc.want, res.Found)
			}
		})
	}
}

// TestUncontrolledGoSDK: the explorer finds go-sdk's answer to a
// cancelled call over stdio under 2026-07-28 (CAN-54) and shrinks the
// plan that showed it at least fivefold.
func TestUncontrolledGoSDK(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a go-sdk server")
	}
	bin := targets.GoBinary(t, "gosdkserver")
	prof, err := profile.Load(filepath.Join(targets.GoModule("gosdkserver"), "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tgt := Remote(TargetInfo{Name: "gosdkserver stdio", Transport: TransportStdio},
		func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			return transport.StartStdio(ctx, transport.StdioConfig{Argv: []string{bin, "stdio"}, Log: log})
		})
	cfg := Config{Target: tgt, Seed: 5, Ops: 400, Profile: prof, Revision: Revision20260728, OpTimeout: 20 * time.Second, ShrinkRuns: 16}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Found == nil {
		t.Fatalf("no violation in %d operations; races %v", res.Ops, res.Figures.Races)
	}
	f := res.Found
	if f.Violation.Invariant != InvCancelNoResponse || f.Violation.Requirement != "CAN-54" {
		t.Fatalf("found %+v, want %s citing CAN-54", f.Violation, InvCancelNoResponse)
	}
	// Shrinking runs in real time against such a target: under load its
	// sixteen runs go less far, but they must cut the plan fivefold.
	if 5*len(f.Minimal.Steps) > len(f.Original.Steps) || f.Minimal.Sessions > f.Original.Sessions {
		t.Errorf("minimal plan of %d sessions and %d steps from %d and %d: not shrunk fivefold: %+v",
			f.Minimal.Sessions, len(f.Minimal.Steps), f.Original.Sessions, len(f.Original.Steps), f.Minimal)
	}
	t.Logf("minimal plan: %+v", f.Minimal)
	t.Logf("found in trial %d (%d operations, %v), shrunk to %d steps in %d runs, reproduced %v: %s",
		f.Trial, res.Ops, res.Elapsed.Round(time.Millisecond), len(f.Minimal.Steps), f.ShrinkRuns, f.Reproduced, f.Violation.Text)
}

// goSDKTarget is testdata/gosdkserver over stdio with args (its flags),
// one process per session, and the profile that names its slow tool and
// its observer.
func goSDKTarget(t *testing.T, args ...string) (Target, *profile.Profile) {
	t.Helper()
	bin := targets.GoBinary(t, "gosdkserver")
	prof, err := profile.Load(filepath.Join(targets.GoModule("gosdkserver"), "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{bin, "stdio"}, args...)
	tgt := Remote(TargetInfo{Name: strings.Join(append([]string{"gosdkserver stdio"}, args...), " "), Transport: TransportStdio},
		func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			return transport.StartStdio(ctx, transport.StdioConfig{Argv: argv, Log: log})
		})
	return tgt, prof
}

// TestUncontrolledGoSDKNoProgress: a go-sdk slow tool that sends no
// progress answers its cancel at once ("context canceled"): with no
// progress of the call's own, the explorer finds it by the tool's pace
// (its calls never cancelled complete in a second) and by the observer,
// under 2026-07-28 (CAN-54), from each of several seeds.
func TestUncontrolledGoSDKNoProgress(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a go-sdk server")
	}
	tgt, prof := goSDKTarget(t, "-no-progress")
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			cfg := Config{Target: tgt, Seed: seed, Ops: 400, Profile: prof, Revision: Revision20260728, OpTimeout: 20 * time.Second, NoShrink: true}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Found == nil {
				t.Fatalf("no violation in %d operations; races %v", res.Ops, res.Figures.Races)
			}
			if v := res.Found.Violation; v.Invariant != InvCancelNoResponse || v.Requirement != "CAN-54" {
				t.Fatalf("found %+v, want %s citing CAN-54", v, InvCancelNoResponse)
			}
			t.Logf("found in trial %d (%d operations, %v): %s", res.Found.Trial, res.Ops, res.Elapsed.Round(time.Millisecond), res.Found.Violation.Text)
		})
	}
}

// TestUncontrolledGoSDKIgnoresCancel: a go-sdk slow tool that ignores its
// cancel runs its steps to the end and answers then, which 2025-11-25
// allows (CAN-9): the explorer weighs those answers by the call's pace
// and the observer and finds nothing.
func TestUncontrolledGoSDKIgnoresCancel(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a go-sdk server")
	}
	tgt, prof := goSDKTarget(t, "-ignore-cancel")
	cfg := Config{Target: tgt, Seed: 1, Ops: 200, Profile: prof, Revision: Revision20251125, OpTimeout: 20 * time.Second, NoShrink: true}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	judged := res.Figures.Races[RaceUncontrolled]
	t.Logf("%d operations, %d cancels judged by their pace; races %v", res.Ops, judged, res.Figures.Races)
	if res.Found != nil {
		// go-sdk answers at once, with error 0 "context canceled", a
		// cancel that reaches a request before its handler started (on a
		// loaded machine the handler may not have run yet): the handler's
		// -ignore-cancel never ran, since once running it answers only
		// with a result, so an error answer is the cancel's, a real CAN-8
		// finding. Any other violation is the explorer's mistake.
		v := res.Found.Violation
		if v.Invariant != InvCancelNoResponse || !answeredWithError(res.Found.History, v.Seq) {
			t.Fatalf("a server ignoring cancels under 2025-11-25: %+v", v)
		}
		t.Logf("the cancel reached a request before its handler started, and go-sdk answered it at once: %s", v.Text)
		return
	}
	if judged == 0 {
		t.Fatalf("no cancel was judged by its pace: the path was not exercised (races %v)", res.Figures.Races)
	}
}

// answeredWithError reports whether the history's event seq is an error
// response.
func answeredWithError(h *History, seq uint64) bool {
	ev, ok := h.event(seq)
	if !ok {
		return false
	}
	msg, err := ev.Message()
	return err == nil && msg.Error != nil
}
