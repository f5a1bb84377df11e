package runner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestSchemaFindingOncePerRun checks that a violation every case's
// handshake carries is one finding of the run, counted, with the first
// case and seq, and that the cases it did not stop still pass: the run is
// non-conformant for the finding alone.
func TestSchemaFindingOncePerRun(t *testing.T) {
	init := `{"protocolVersion":"2025-11-25","capabilities":{"tools":"yes"},"serverInfo":{"name":"bare","version":"1"}}`
	rep := run(t, Config{Target: bare(init, nil), Cases: []probe.Case{pingCase("ping/a"), pingCase("ping/b"), pingCase("ping/c")}})
	for _, r := range rep.Results {
		if r.Outcome.Verdict != verdict.Pass {
			t.Errorf("%s: %s %s, want pass: ping works, the finding is the run's", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
	if len(rep.Schema.Findings) != 1 {
		t.Fatalf("findings %+v, want one", rep.Schema.Findings)
	}
	f := rep.Schema.Findings[0]
	got := []any{f.ID(), f.Requirement, f.FirstCase, f.Count, f.Cases, f.Seq, f.Message}
	want := []any{"schema/InitializeResult/result/capabilities/tools#type", "RPC-2", "ping/a", 3, 3, initResponseSeq(t, rep.Results[0].Events),
		"a string where the schema wants an object"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finding (-want +got):\n%s", diff)
	}
	if rep.ExitCode() != 1 || rep.Conformant() {
		t.Errorf("exit code %d, want 1 (non-conformant) for a schema violation", rep.ExitCode())
	}
	if rep.Schema.Checked == 0 || rep.Schema.Revision != spec.V20251125 {
		t.Errorf("schema report %+v: nothing checked, or the wrong revision", rep.Schema)
	}
}

// initResponseSeq is the seq of the initialize response in events.
func initResponseSeq(t *testing.T, events []chrono.Event) uint64 {
	t.Helper()
	for _, ev := range events {
		if ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.ID == "1" {
			return ev.Seq
		}
	}
	t.Fatal("no initialize response in the chronology")
	return 0
}

// TestUndecodableHandshakeIsTheSchemaFail checks that a handshake the
// checker cannot decode (serverInfo.name a number) makes every case the
// schema violation's fail, naming the field and the seq, never an error,
// and that Go's unmarshal wording reaches no summary.
func TestUndecodableHandshakeIsTheSchemaFail(t *testing.T) {
	init := `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":42,"version":"1"}}`
	rep := run(t, Config{Target: bare(init, nil), Cases: []probe.Case{pingCase("ping/a"), pingCase("ping/b")}})
	for _, r := range rep.Results {
		o := r.Outcome
		if o.Verdict != verdict.Fail || o.Requirement != "RPC-2" || o.ActualSeq != initResponseSeq(t, r.Events) {
			t.Errorf("%s: %s %s (seq %d), want the RPC-2 fail at the initialize response", r.ID, o.Verdict, o.Summary, o.ActualSeq)
		}
		if !strings.Contains(o.Actual, "InitializeResult at /result/serverInfo/name: a number where the schema wants a string") {
			t.Errorf("%s: actual %q does not name the field", r.ID, o.Actual)
		}
		for _, goText := range []string{"cannot unmarshal", "Go struct", "of type string"} {
			if strings.Contains(o.Summary, goText) {
				t.Errorf("%s: the summary leaks Go's wording %q: %s", r.ID, goText, o.Summary)
			}
		}
	}
	if rep.Counts[verdict.Error] != 0 || rep.Counts[verdict.Fail] != 2 {
		t.Errorf("counts %v, want 2 fail and no error", rep.Counts)
	}
	if len(rep.Schema.Findings) != 1 || rep.Schema.Findings[0].Pointer != "/result/serverInfo/name" || rep.Schema.Findings[0].Cases != 2 {
		t.Errorf("findings %+v, want one for /result/serverInfo/name in 2 cases", rep.Schema.Findings)
	}
	if rep.ExitCode() != 1 {
		t.Errorf("exit code %d, want 1", rep.ExitCode())
	}
}

// TestReferenceCatalogueSchemaClean runs the whole catalogue against the
// in-process reference server: not one frame may break the schema.
func TestReferenceCatalogueSchemaClean(t *testing.T) {
	p, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	rep := run(t, Config{Target: reference(), Profile: p, Cases: cases.All()})
	for _, f := range rep.Schema.Findings {
		t.Errorf("%s (%s, first in %s at seq %d, %d times): %s", f.ID(), f.Requirement, f.FirstCase, f.Seq, f.Count, f.String())
	}
	if rep.Schema.Checked < 100 {
		t.Errorf("only %d frames checked", rep.Schema.Checked)
	}
	t.Logf("%d inbound frames checked, %d unchecked", rep.Schema.Checked, rep.Schema.Unchecked)
}
