package explore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestConformingServer2026: under 2026-07-28 the sessions are opened with
// the envelope and server/discover, the mix draws no ping (server/discover
// stands in for it, PNG-40), no HTTP stream operation and no task, and
// the reference server without a fault breaks no invariant, in process
// and over stdio.
func TestConformingServer2026(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		ops       int
	}{
		{TransportInProcess, 3000},
		{TransportStdio, 300},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), Config{Target: target(t, tc.transport), Revision: Revision20260728, Seed: 42,
				Ops: tc.ops, OpTimeout: 20 * time.Second, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if res.Found != nil {
				v := res.Found.Violation
				t.Fatalf("the conforming server broke %s %s: %s", v.Invariant, v.Requirement, v.Text)
			}
			if !res.Features.Control || res.Features.Tasks {
				t.Errorf("features %+v: want the control extension and no tasks under 2026-07-28", res.Features)
			}
			for _, k := range []Kind{OpCall, OpAdvance, OpCancel, OpRecancel, OpBadCancel, OpReuse, OpPing, OpClose} {
				if res.ByKind[k] == 0 {
					t.Errorf("no %s operation ran in %d", k, res.Ops)
				}
			}
			for _, k := range []Kind{OpDrop, OpResume, OpListen, OpTask, OpTaskGet, OpTaskResult, OpTaskCancel, OpTaskList} {
				if res.ByKind[k] != 0 {
					t.Errorf("%d %s operations ran under 2026-07-28", res.ByKind[k], k)
				}
			}
			if res.Figures.Races[RaceParkedAtStart]+res.Figures.Races[RaceParkedAtStep] == 0 || res.Figures.Counts[CountCalls] == 0 {
				t.Errorf("no accepted cancel or completed call: %v", res.Figures)
			}
			t.Logf("%d trials, %d operations, %d events, %.0f ops/s; races %v", res.Trials, res.Ops, res.Events, res.OpsPerSecond(), res.Figures.Races)
		})
	}
}

// TestRevisionRefused: a revision the explorer does not implement is
// refused.
func TestRevisionRefused(t *testing.T) {
	_, err := Run(context.Background(), Config{Target: target(t, TransportInProcess), Revision: "2024-11-05", Ops: 10})
	if !errors.Is(err, ErrRevision) {
		t.Fatalf("got %v, want ErrRevision", err)
	}
}

// TestInvariantsCite2026: every invariant the 2026-07-28 history is
// checked against cites 2026-07-28 requirements only, and the
// cancellation rules cite CAN-54 (the MUST NOT of stdio).
func TestInvariantsCite2026(t *testing.T) {
	for _, inv := range Invariants() {
		for _, r := range inv.Cites[Revision20260728] {
			if lvl := level(r); lvl == "" {
				t.Errorf("%s cites %s, which the registry does not have", inv.ID, r)
			}
		}
	}
	for _, id := range []string{InvCancelNoResponse, InvCancelNoProgress} {
		if !slices.Equal(invariant(id).Cites[Revision20260728], []string{"CAN-54"}) {
			t.Errorf("%s cites %v under 2026-07-28, want CAN-54", id, invariant(id).Cites[Revision20260728])
		}
	}
}

// TestSeedReproducible2026: under 2026-07-28, as under 2025-11-25, two
// runs of one seed without racing variants, with one worker and with
// two, perform the same operations and count the same races.
func TestSeedReproducible2026(t *testing.T) {
	t.Parallel()
	sameWithOneOrTwoWorkers(t, target(t, TransportInProcess), Revision20260728)
}

// TestConformingServer2026HTTP: over 2026-07-28 Streamable HTTP a cancel
// is the closing of the request's stream (CAN-43), no
// notifications/cancelled is sent, and the conforming server ends every
// closed call as cancelled: nothing is found.
func TestConformingServer2026HTTP(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), Config{Target: target(t, TransportHTTP), Revision: Revision20260728, Seed: 42,
		Ops: 600, OpTimeout: 20 * time.Second, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found != nil {
		v := res.Found.Violation
		t.Fatalf("the conforming server broke %s %s: %s", v.Invariant, v.Requirement, v.Text)
	}
	for _, k := range []Kind{OpCall, OpAdvance, OpCancel, OpReuse, OpPing, OpClose} {
		if res.ByKind[k] == 0 {
			t.Errorf("no %s operation ran in %d", k, res.Ops)
		}
	}
	for _, k := range []Kind{OpRecancel, OpBadCancel, OpDrop, OpResume, OpListen, OpTask} {
		if res.ByKind[k] != 0 {
			t.Errorf("%d %s operations ran over 2026-07-28 HTTP", res.ByKind[k], k)
		}
	}
	if res.Figures.Races[RaceParkedAtStart]+res.Figures.Races[RaceParkedAtStep] == 0 || res.Figures.Counts[CountCalls] == 0 {
		t.Errorf("no accepted cancel or completed call: %v", res.Figures)
	}
	t.Logf("%d trials, %d operations, %d events, %.0f ops/s; races %v", res.Trials, res.Ops, res.Events, res.OpsPerSecond(), res.Figures.Races)
}
